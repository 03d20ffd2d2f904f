// Exact k-nearest-neighbour search with the jz-tree dual walk (§III),
// reduced on the fly to SPH or top-hat densities.
#pragma once

#include <functional>

#include "Backend.h"
#include "Config.h"

namespace jz
{
enum class DensityEstimator
{
  SphCubicSpline, // rho_i = sum_j m_j W(r_ij, h_i), W the M4 spline with support h
  TopHat          // rho_i = sum_j m_j / (4/3 pi h_i^3)
};

// Input, all in caller memory. Coordinates are interleaved xyz (VTK layout).
template <class T>
struct KnnProblem
{
  const T* sources = nullptr;
  std::size_t numSources = 0;
  // Separate query points; nullptr means the sources query themselves, and
  // each point is then its own first neighbour at distance 0.
  const T* queries = nullptr;
  std::size_t numQueries = 0;
  // Per-source mass (input order); nullptr means unit mass.
  const double* sourceMasses = nullptr;
  // Per-source identifiers reported in neighbour lists and used to break
  // distance ties (smaller first); nullptr means the source index.
  const GlobalId* sourceIds = nullptr;
  int k = 32;
  // Self query only: when smaller than numSources, only the first
  // numSelfQueries sources query (results are for those); the others are
  // sources only, e.g. ghost points received from other ranks.
  std::size_t numSelfQueries = std::size_t(-1);
  // Self query only: when given, the numSelfQueries distinct sources it
  // names query instead, results row q for source selfQueryIndices[q] (a
  // subset searched in place, with no copy of the points).
  const Index* selfQueryIndices = nullptr;
  // Periodic box [boxLo, boxHi); points outside are wrapped in.
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
  // Points per leaf of the CPU walk's tree; 0 = the engine's choice for k,
  // tuned for every point querying. A caller whose queries are a subset may
  // want larger leaves. The results do not depend on it.
  int leafSize = 0;
};

// Output buffers in query input order, allocated by the caller; a null
// pointer means "not wanted". When only smoothing length and density are
// wanted no numQueries x k array is ever allocated.
template <class T>
struct KnnResults
{
  DensityEstimator estimator = DensityEstimator::SphCubicSpline;
  T* smoothingLength = nullptr; // distance to the k-th neighbour
  T* density = nullptr;
  GlobalId* neighborIds = nullptr; // numQueries * k, nearest first
  T* neighborDistances = nullptr;  // numQueries * k, nearest first
  // Called once per query, from any thread, with its k neighbours' source
  // input indices, nearest first: for a caller that reduces the lists itself
  // rather than store numQueries x k ids. The CPU walk of one process only
  // (computeKnn on Backend::CPU); other backends do not call it.
  std::function<void(std::size_t query, const Index* sources)> visitNeighbors;
  // When set, visitNeighbors gets each neighbour's result row instead of its
  // input index (with selfQueryIndices its place there; Index(-1) for a
  // source that does not query), looked up in the walk's order rather than
  // at random.
  bool visitQueryRows = false;
};

// Validates the problem (throws Error with a clear message: non-finite
// coordinates, k < 1, k > numSources, bad box) and runs it.
template <class T>
RunInfo computeKnn(const KnnProblem<T>& problem, const KnnResults<T>& results,
  Backend backend = Backend::Auto, const RunControl& control = {});

extern template RunInfo computeKnn<float>(
  const KnnProblem<float>&, const KnnResults<float>&, Backend, const RunControl&);
extern template RunInfo computeKnn<double>(
  const KnnProblem<double>&, const KnnResults<double>&, Backend, const RunControl&);
} // namespace jz
