// kNN over several ranks: the phases of KnnPhases.h in order, each timed as
// one stage of RunInfo. With one rank, the single-process search.
#include "knn/KnnInFrame.h"
#include "jz/StageTimer.h"
#include "distributed/BackendOnAllRanks.h"
#include "knn/KnnPhases.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
// The phases over all ranks of a validated problem inside the frame window
// (ScaleFrame.h).
template <class T>
RunInfo knnDistributedInWindow(const KnnProblem<T>& problem, const KnnResults<T>& results,
  bool self, Communicator& comm, Backend backend, const RunControl& control)
{
  RunInfo info;
  info.backend = resolveBackendOnAllRanks(comm, backend);
  // Agreed over all ranks: a rank without points may pass no arrays.
  KnnWanted wanted;
  wanted.masses = allSum(comm, problem.sourceMasses ? 1 : 0) > 0;
  wanted.neighborIds = allSum(comm, results.neighborIds ? 1 : 0) > 0;
  wanted.neighborDistances = allSum(comm, results.neighborDistances ? 1 : 0) > 0;
  wanted.estimator = results.estimator;

  StageTimer decompose(&info, "decomposition");
  KnnRankPoints<T> points = decomposeKnnPoints(problem, self, comm);
  decompose.stop();

  // Stages "local tree" and "local search".
  KnnLocalSearch<T> local =
    searchKnnLocally(points, problem, wanted, info.backend, control, comm, info);

  StageTimer exchange(&info, "ghost exchange");
  const KnnBoundary<T> boundary = exchangeKnnGhosts(points, local, problem, comm, &info);
  exchange.stop();
  info.counters.emplace_back("local sources", double(points.numSources()));
  info.counters.emplace_back("ghost sources received", double(boundary.numGhosts()));
  info.counters.emplace_back("local queries", double(points.numQueries()));
  info.counters.emplace_back("boundary queries", double(boundary.queries.size()));
  info.counters.emplace_back("boundary local sources", double(boundary.sources.size()));

  StageTimer fix(&info, "boundary search");
  searchKnnBoundary(points, boundary, problem, wanted, info.backend, control, comm, local.results);
  fix.stop();

  StageTimer home(&info, "results home");
  sendKnnResultsHome(points, local.results, problem.k, wanted, comm, results);
  home.stop();
  return info;
}
} // namespace

template <class T>
RunInfo computeKnnDistributed(const KnnProblem<T>& problem, const KnnResults<T>& results,
  Communicator& comm, Backend backend, const RunControl& control)
{
  if (comm.size() == 1)
    return computeKnn(problem, results, backend, control);
  RunInfo info;
  // A self query only when no rank has a separate query set: a rank whose
  // piece of the Query input is empty may pass no query array.
  const bool self = allSum(comm, problem.queries ? 1 : 0) == 0;
  const std::size_t numQueries =
    self ? problem.numSources : (problem.queries ? problem.numQueries : 0);

  // Every rank agrees on input errors and on the global counts.
  agreeOnErrors(comm, distributedInputError(problem));
  const std::int64_t totalSources = allSum(comm, std::int64_t(problem.numSources));
  const std::int64_t totalQueries = allSum(comm, std::int64_t(numQueries));
  if (totalQueries == 0)
    return info;
  const std::string countError = neighbourCountError(problem.k, totalSources);
  if (!countError.empty())
    throw Error(countError);
  auto run = [&](const KnnProblem<T>& p)
  { return knnDistributedInWindow(p, results, self, comm, backend, control); };
  const ScaleFrame frame = ScaleFrame::forMagnitude(largestMagnitude(problem), comm);
  info = frame.identity() ? run(problem) : runKnnInFrame(problem, results, numQueries, frame, run);
  const std::int64_t outOfRange =
    allSum(comm, std::int64_t(densitiesOutOfRange(problem, results, numQueries)));
  const std::string w = outOfRangeWarning<T>(std::size_t(outOfRange), "Density");
  if (!w.empty())
    info.warnings.push_back(w);
  return info;
}

template RunInfo computeKnnDistributed<float>(
  const KnnProblem<float>&, const KnnResults<float>&, Communicator&, Backend, const RunControl&);
template RunInfo computeKnnDistributed<double>(
  const KnnProblem<double>&, const KnnResults<double>&, Communicator&, Backend, const RunControl&);
} // namespace jz
