// computeGravity: input validation and backend dispatch; and the distributed
// form, in which every rank evaluates its own points against the gathered
// sources of all ranks.
#include <cmath>
#include <string>
#include <vector>

#include "GravityBackends.h"
#include "StageTimer.h"
#include "jz/Gravity.h"
#include "jz/Validate.h"

namespace jz
{
template <class T>
std::string gravityProblemError(const GravityProblem<T>& problem, const GravityInputNames& names)
{
  std::string e = parameterError(problem.openingAngle, true, names.openingAngle);
  if (e.empty())
    e = parameterError(problem.softening, true, names.softening);
  if (e.empty() && !std::isfinite(problem.gravitationalConstant))
    e = names.gravitationalConstant + " must be finite";
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
    e = nonFiniteValueError(problem.sourceMasses, problem.numSources, 1, names.masses);
    if (!e.empty())
      return e;
    // Gravity's own rule: a negative mass would repel (and break the
    // multipoles' centre of mass).
    for (std::size_t i = 0; i < problem.numSources; ++i)
      if (problem.sourceMasses[i] < 0)
        return names.masses + " has a negative value at point " + std::to_string(i) + " (" +
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
  if (info.backend == Backend::CUDA)
  {
    // No GPU gravity yet (README, "Tree Gravity"): the CPU runs it.
    if (backend == Backend::CUDA)
      throw Error("TreeGravity has no CUDA backend yet; choose Device Auto or CPU");
    info.note = "gravity ran on the CPU: no CUDA gravity kernel in this build";
    info.backend = Backend::CPU;
  }
  gravityCpu(problem, results, info, control);
  return info;
}

template <class T>
RunInfo computeGravityDistributed(Communicator& comm, const GravityProblem<T>& problem,
  const GravityResults& results, Backend backend, const RunControl& control)
{
  agreeOnErrors(comm, gravityProblemError(problem));
  if (comm.size() == 1)
    return computeGravity(problem, results, backend, control);

  // Every rank's sources, in rank order; this rank's start among them.
  RunInfo gatherInfo;
  StageTimer timer(&gatherInfo, "gather sources");
  std::vector<T> mine(problem.sources, problem.sources + 3 * problem.numSources);
  std::vector<double> myMass(problem.numSources, 1.0);
  if (problem.sourceMasses)
    myMass.assign(problem.sourceMasses, problem.sourceMasses + problem.numSources);
  const std::vector<std::vector<char>> counts =
    comm.allGather(toBytes(std::vector<std::int64_t>{ std::int64_t(problem.numSources) }));
  std::size_t offset = 0;
  for (int r = 0; r < comm.rank(); ++r)
    offset += std::size_t(fromBytes<std::int64_t>(counts[r])[0]);
  const std::vector<T> all = allGatherConcat(comm, mine);
  const std::vector<double> allMass = allGatherConcat(comm, myMass);
  timer.stop();

  GravityProblem<T> global = problem;
  global.sources = all.data();
  global.numSources = allMass.size();
  global.sourceMasses = allMass.data();
  if (!problem.queries)
  {
    global.queries = problem.sources;
    global.numQueries = problem.numSources;
    global.queriesFromSource = offset;
  }
  RunInfo info = computeGravity(global, results, backend, control);
  info.stageSeconds.insert(
    info.stageSeconds.begin(), gatherInfo.stageSeconds.begin(), gatherInfo.stageSeconds.end());
  const std::size_t local = problem.queries ? problem.numQueries : problem.numSources;
  const double received =
    double(global.numSources - problem.numSources) * (3 * sizeof(T) + sizeof(double));
  info.counters.emplace_back("received bytes", received);
  info.counters.emplace_back("received bytes per local point", local ? received / local : 0.0);
  return info;
}

template std::string gravityProblemError<float>(
  const GravityProblem<float>&, const GravityInputNames&);
template std::string gravityProblemError<double>(
  const GravityProblem<double>&, const GravityInputNames&);
template RunInfo computeGravity<float>(
  const GravityProblem<float>&, const GravityResults&, Backend, const RunControl&);
template RunInfo computeGravity<double>(
  const GravityProblem<double>&, const GravityResults&, Backend, const RunControl&);
template RunInfo computeGravityDistributed<float>(
  Communicator&, const GravityProblem<float>&, const GravityResults&, Backend, const RunControl&);
template RunInfo computeGravityDistributed<double>(
  Communicator&, const GravityProblem<double>&, const GravityResults&, Backend, const RunControl&);
} // namespace jz
