// computeGravity: input validation and backend dispatch (the distributed
// form: GravityDistributed.cpp).
#include <cmath>
#include <string>
#include <vector>

#include "common/CudaFallback.h"
#include "gravity/GravityBackends.h"
#include "jz/Gravity.h"
#include "jz/Validate.h"

namespace jz
{
template <class T>
std::string gravityProblemError(const GravityProblem<T>& problem, const InputNames& names)
{
  std::string e = rangeError(ranges::OpeningAngle, problem.openingAngle, names.openingAngle);
  if (e.empty())
    e = rangeError(ranges::Softening, problem.softening, names.softening);
  if (e.empty())
    e = rangeError(
      ranges::GravitationalConstant, problem.gravitationalConstant, names.gravitationalConstant);
  if (!e.empty())
    return e;
  e = pointCountError(problem.numSources);
  if (e.empty() && problem.queries)
    e = pointCountError(problem.numQueries);
  if (!e.empty())
    return e;
  if (problem.numSources > 0 && !problem.sources)
    return "no source coordinates were given";
  if (problem.queries && problem.queriesFromSource != std::size_t(-1) &&
    problem.queriesFromSource + problem.numQueries > problem.numSources)
    return "the queries that are sources lie beyond the sources";
  if (problem.sourceMasses)
  {
    e = nonFiniteValueError(problem.sourceMasses, problem.numSources, 1, names.sourceMasses);
    if (!e.empty())
      return e;
    // Gravity's own rule: a negative mass would repel (and break the
    // multipoles' centre of mass).
    for (std::size_t i = 0; i < problem.numSources; ++i)
      if (problem.sourceMasses[i] < 0)
        return names.sourceMasses + " has a negative value at point " + std::to_string(i) + " (" +
          std::to_string(problem.sourceMasses[i]) + "); masses must be >= 0";
  }
  e = nonFiniteCoordinateError(problem.sources, problem.numSources, names.sourcePoint);
  if (e.empty() && problem.queries)
    e = nonFiniteCoordinateError(problem.queries, problem.numQueries, names.queryPoint);
  return e;
}

template <class T>
RunInfo computeGravity(const GravityProblem<T>& problem, const GravityResults& results,
  Backend backend, const RunControl& control)
{
  RunInfo info;
  const std::string error = gravityProblemError(problem);
  if (!error.empty())
    throw Error(error);
  info.backend = resolveBackend(backend);
  const std::size_t numQueries = problem.queries ? problem.numQueries : problem.numSources;
  if (numQueries == 0)
    return info;
  if (problem.numSources == 0) // nothing attracts: zero everywhere
  {
    for (std::size_t i = 0; i < numQueries; ++i)
    {
      if (results.potential)
        results.potential[i] = 0;
      if (results.acceleration)
        for (int k = 0; k < 3; ++k)
          results.acceleration[3 * i + k] = 0;
    }
    return info;
  }
  // The results are written at the end only: a failed GPU run leaves the
  // CPU nothing to undo.
  runOnBackend(
    backend, info, [&] { gravityCuda(problem, results, info, control); }, [] {},
    [&] { gravityCpu(problem, results, info, control); });
  return info;
}

template std::string gravityProblemError<float>(
  const GravityProblem<float>&, const InputNames&);
template std::string gravityProblemError<double>(
  const GravityProblem<double>&, const InputNames&);
template RunInfo computeGravity<float>(
  const GravityProblem<float>&, const GravityResults&, Backend, const RunControl&);
template RunInfo computeGravity<double>(
  const GravityProblem<double>&, const GravityResults&, Backend, const RunControl&);
} // namespace jz
