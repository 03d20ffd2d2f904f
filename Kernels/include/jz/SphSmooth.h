// SPH smoothing of particle fields on the particles themselves, with
// gradients, divergence, curl and the local dispersion (doc/filters/SPHSmooth.md).
//
// For every particle i and its K nearest neighbours j (itself included; h_i
// the distance to the K-th, rho the "SPH Cubic Spline" density of
// computeKnn), W_ij = W(r_ij, h_i) the cubic spline of jz/DensityKernels.h:
//   smoothed_i   = sum_j (m_j / rho_j) A_j W_ij                 (any components)
//   gradient_i   = sum_j (m_j / rho_j) (A_j - A_i) grad_i W_ij  (1 component)
//   divergence_i = sum_j (m_j / rho_j) (A_j - A_i) . grad_i W_ij (3 components)
//   curl_i       = sum_j (m_j / rho_j) grad_i W_ij x (A_j - A_i) (3 components)
//   dispersion_i = sqrt(sum_j m_j |A_j - smoothed_i|^2 / sum_j m_j) (3 components)
// with grad_i W_ij = dW/dr(r_ij, h_i) (x_i - x_j) / r_ij, nearest images in a
// periodic box. A neighbour with rho_j = +inf (h_j = 0) or 0 adds nothing
// to the kernel sums. Where h_i = 0 (the K nearest coincide with i) the
// smoothed value is the mass-weighted mean of the K neighbours and the
// derivatives are 0.
#pragma once

#include <string>
#include <vector>

#include "Backend.h"
#include "Communicator.h"
#include "Config.h"

namespace jz
{
// One field to smooth: `components` doubles per particle, in input order.
struct SphField
{
  const double* values = nullptr;
  int components = 1;
  std::string name = "a smoothed field"; // for messages
};

// The outputs of one field, in input order, allocated by the caller; a null
// pointer means "not wanted". gradient only for 1-component fields,
// divergence, curl and dispersion only for 3-component ones.
struct SphFieldResults
{
  double* smoothed = nullptr;   // components per particle
  double* gradient = nullptr;   // 3 per particle
  double* divergence = nullptr; // 1 per particle
  double* curl = nullptr;       // 3 per particle
  double* dispersion = nullptr; // 1 per particle
};

template <class T>
struct SphSmoothProblem
{
  const T* points = nullptr; // interleaved xyz
  std::size_t numPoints = 0;
  const double* masses = nullptr; // nullptr = unit mass
  // Global ids, unique over all ranks (required on several ranks; nullptr
  // on one means the point index): they break the kNN's distance ties, so
  // results do not depend on the partition.
  const GlobalId* ids = nullptr;
  int k = 32;
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
  std::vector<SphField> fields;
};

template <class T>
struct SphSmoothResults
{
  T* smoothingLength = nullptr;        // required: computeKnn's h
  T* density = nullptr;                // required: computeKnn's "SPH Cubic Spline" density
  std::vector<SphFieldResults> fields; // one per problem field
};

// Validates (the kNN's rules, plus finite field values and one result entry
// per field; throws Error with a clear message) and runs over all ranks of
// `comm` (each rank passes its own particles; results are for them). The
// neighbour search runs on `backend`, the sums on the CPU's threads.
template <class T>
RunInfo computeSphSmooth(const SphSmoothProblem<T>& problem, const SphSmoothResults<T>& results,
  Communicator& comm, Backend backend = Backend::Auto, const RunControl& control = {});

extern template RunInfo computeSphSmooth<float>(const SphSmoothProblem<float>&,
  const SphSmoothResults<float>&, Communicator&, Backend, const RunControl&);
extern template RunInfo computeSphSmooth<double>(const SphSmoothProblem<double>&,
  const SphSmoothResults<double>&, Communicator&, Backend, const RunControl&);
} // namespace jz
