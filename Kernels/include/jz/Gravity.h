// Tree gravity: Barnes-Hut with multipoles up to quadrupole on the z-order
// planes (Nakasato 2011's group walk as a policy of the dual-walk engine), or
// direct summation at opening angle 0. Isolated boundaries.
//
//   phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2)
//   a_i   = -G sum_{j != i} m_j (x_i - x_j) / (r_ij^2 + eps^2)^(3/2)
//
// A pair at distance 0 with eps = 0 is skipped (doc/filters/TreeGravity.md).
#pragma once

#include <cstddef>
#include <string>

#include "Backend.h"
#include "Communicator.h"
#include "Config.h"
#include "InputNames.h"

namespace jz
{
// Input, all in caller memory. Coordinates are interleaved xyz (VTK layout).
template <class T>
struct GravityProblem
{
  const T* sources = nullptr;
  std::size_t numSources = 0;
  // Per-source mass (input order, >= 0); nullptr means unit mass.
  const double* sourceMasses = nullptr;
  // Separate query points (e.g. a grid); nullptr means the sources query
  // themselves and each excludes itself (j != i).
  const T* queries = nullptr;
  std::size_t numQueries = 0;
  // Separate queries only: when set, query i is source queriesFromSource + i
  // and excludes it as a self query does (the distributed driver: a rank's
  // particles query the gathered sources).
  std::size_t queriesFromSource = std::size_t(-1);
  double openingAngle = 0.5; // theta; 0 = direct summation
  double softening = 0;      // Plummer eps
  double gravitationalConstant = 1;
};

// Output buffers in query input order, allocated by the caller; nullptr
// means "not wanted".
struct GravityResults
{
  double* potential = nullptr;    // one per query
  double* acceleration = nullptr; // three per query (xyz)
};

// The first broken rule of the problem (non-finite or negative masses,
// non-finite coordinates, theta < 0, eps < 0, ...), or an empty string,
// naming the inputs with `names`.
template <class T>
std::string gravityProblemError(
  const GravityProblem<T>& problem, const InputNames& names = {});

// Validates the problem (throws Error) and runs it.
template <class T>
RunInfo computeGravity(const GravityProblem<T>& problem, const GravityResults& results,
  Backend backend = Backend::Auto, const RunControl& control = {});

// The same over the ranks of `comm`: every rank passes its own particles
// (and optionally its own queries) and gets the results for them. Equal to
// the serial result within the accuracy of the opening angle. RunInfo's
// counters report the bytes received per local point.
template <class T>
RunInfo computeGravityDistributed(Communicator& comm, const GravityProblem<T>& problem,
  const GravityResults& results, Backend backend = Backend::Auto, const RunControl& control = {});

extern template std::string gravityProblemError<float>(
  const GravityProblem<float>&, const InputNames&);
extern template std::string gravityProblemError<double>(
  const GravityProblem<double>&, const InputNames&);
extern template RunInfo computeGravity<float>(
  const GravityProblem<float>&, const GravityResults&, Backend, const RunControl&);
extern template RunInfo computeGravity<double>(
  const GravityProblem<double>&, const GravityResults&, Backend, const RunControl&);
extern template RunInfo computeGravityDistributed<float>(
  Communicator&, const GravityProblem<float>&, const GravityResults&, Backend, const RunControl&);
extern template RunInfo computeGravityDistributed<double>(
  Communicator&, const GravityProblem<double>&, const GravityResults&, Backend, const RunControl&);
} // namespace jz
