// A kNN problem run in a power-of-two frame (ScaleFrame.h), and the range
// check of its densities.
//
// In the frame the points and box are scaled by 2^-e and the masses by
// 2^-3e, so the frame's densities (mass / length^3) are the user's exactly
// and only the lengths (smoothing lengths, neighbour distances) come back
// times 2^e. Whatever the frame, a density that the output precision T
// cannot hold (its exact value, computed in double, overflows or
// underflows T) is counted and reported in RunInfo::warnings.
#pragma once

#include <algorithm>
#include <limits>

#include "common/ScaleFrame.h"
#include "jz/Knn.h"

namespace jz
{
// The largest magnitude of the problem's coordinates and periodic box.
template <class T>
double largestMagnitude(const KnnProblem<T>& problem)
{
  double m = largestMagnitude(problem.sources, 3 * problem.numSources);
  if (problem.queries)
    m = std::max(m, largestMagnitude(problem.queries, 3 * problem.numQueries));
  return std::max(m, boxMagnitude(problem.periodic, problem.boxLo, problem.boxHi));
}

// Runs run(scaledProblem) and scales its lengths back into `results`.
template <class T, class Run>
RunInfo runKnnInFrame(const KnnProblem<T>& problem, const KnnResults<T>& results,
  std::size_t numQueries, const ScaleFrame& frame, Run&& run)
{
  KnnProblem<T> scaled = problem;
  const std::vector<T> sources = frame.pointsToFrame(problem.sources, problem.numSources);
  scaled.sources = sources.data();
  std::vector<T> queries;
  if (problem.queries)
  {
    queries = frame.pointsToFrame(problem.queries, problem.numQueries);
    // A rank without queries still passes a non-null pointer (a Query search).
    scaled.queries = queries.empty() ? problem.queries : queries.data();
  }
  frame.boxToFrame(scaled.boxLo, scaled.boxHi);
  // Always given (every rank of a distributed search the same way).
  std::vector<double> masses(problem.numSources, 1.0);
  if (problem.sourceMasses)
    std::copy(problem.sourceMasses, problem.sourceMasses + problem.numSources, masses.begin());
  frame.valuesToFrame(masses.data(), masses.size(), 3);
  scaled.sourceMasses = masses.data();
  RunInfo info = run(scaled);
  const std::size_t k = std::size_t(problem.k);
  const std::size_t lost = frame.valuesFromFrame(results.smoothingLength, numQueries, 1) +
    frame.valuesFromFrame(results.neighborDistances, numQueries * k, 1);
  const std::string w = outOfRangeWarning<T>(lost, "SmoothingLength or NeighborDistances");
  if (!w.empty())
    info.warnings.push_back(w);
  return info;
}

// How many densities lie outside T's range: infinite where h > 0 (h = 0
// gives +inf by definition), or 0 or subnormal where h > 0 and every mass
// is positive.
template <class T>
std::size_t densitiesOutOfRange(const KnnProblem<T>& problem, const KnnResults<T>& results,
  std::size_t numQueries)
{
  if (!results.density || !results.smoothingLength)
    return 0;
  bool positiveMasses = true;
  if (problem.sourceMasses)
    for (std::size_t i = 0; i < problem.numSources && positiveMasses; ++i)
      positiveMasses = problem.sourceMasses[i] > 0;
  const T tiny = std::numeric_limits<T>::min();
  std::size_t count = 0;
  for (std::size_t q = 0; q < numQueries; ++q)
  {
    const T rho = results.density[q];
    if (results.smoothingLength[q] > 0 &&
      (std::isinf(rho) || (rho < tiny && (rho != 0 || positiveMasses))))
      ++count;
  }
  return count;
}
} // namespace jz
