// Friends-of-friends over several ranks: the phases of FofPhases.h in order,
// each timed as one stage of RunInfo. With one rank, the single-process
// groups, labels and catalogue.
#include "fof/OutputArray.h"
#include "jz/StageTimer.h"
#include "distributed/BackendOnAllRanks.h"
#include "fof/FofPhases.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
// One rank: computeFofHalos (on the GPU end to end, else computeFofGroups,
// labelFofGroups and computeFofCatalogue; the same results bit for bit).
template <class T>
RunInfo computeFofOneRank(const FofProblem<T>& problem, const FofDistributedOptions& options,
  FofDistributedResult& result, Backend backend, const RunControl& control)
{
  FofHaloOptions haloOptions;
  haloOptions.minimumGroupSize = options.minimumGroupSize;
  haloOptions.masses = options.masses;
  haloOptions.velocities = options.velocities;
  haloOptions.groupIdOut = options.groupIdOut;
  haloOptions.groupSizeOut = options.groupSizeOut;
  FofHalos halos;
  const RunInfo info = computeFofHalos(problem, haloOptions, halos, backend, control);
  result.groupId = std::move(halos.groupId);
  result.groupSize = std::move(halos.groupSize);
  result.numGroups = halos.numGroups;
  result.catalogue = std::move(halos.catalogue);
  for (std::size_t g = 0; g < result.numGroups; ++g)
    result.catalogueGroupId.push_back(GlobalId(g));
  return info;
}
} // namespace

template <class T>
RunInfo computeFofDistributed(const FofProblem<T>& problem, const FofDistributedOptions& options,
  FofDistributedResult& result, Communicator& comm, Backend backend, const RunControl& control)
{
  result = FofDistributedResult();
  if (comm.size() == 1)
    return computeFofOneRank(problem, options, result, backend, control);

  RunInfo info;
  agreeOnErrors(comm, distributedInputError(problem, options));
  info.backend = resolveBackendOnAllRanks(comm, backend);
  const bool withVelocity = allSum(comm, options.velocities ? 1 : 0) > 0;

  StageTimer decompose(&info, "decomposition");
  FofRankPoints<T> points = decomposeFofPoints(problem, options, comm);
  decompose.stop();

  // Stages "local tree" and "ghost exchange".
  const FofGhostLinks ghosts = exchangeFofGhosts(points, problem, comm, &info);
  info.counters.emplace_back("local points", double(points.numLocal()));
  info.counters.emplace_back(
    "ghost points received", double(points.numTotal() - points.numLocal()));

  StageTimer walk(&info, "local linking");
  const FofGroups groups =
    linkFofLocally(points, ghosts, problem, info.backend, control, comm, info);
  points.localTree = ZTree<T>();
  walk.stop();

  StageTimer agree(&info, "label agreement");
  const FofAgreedLabels labels =
    agreeFofLabels(points, groups, ghosts, options.minimumGroupSize, comm);
  info.counters.emplace_back("label rounds", double(labels.rounds + 1));
  agree.stop();

  StageTimer reduce(&info, "sizes and numbering");
  const FofGroupSizes sizes = reduceFofGroupSizes(labels, comm);
  const FofGroupNumbers numbers = numberFofGroups(sizes, options.minimumGroupSize, comm);
  result.numGroups = numbers.numGroups;
  reduce.stop();

  StageTimer catalogue(&info, "catalogue");
  reduceFofCatalogue(points, labels, sizes, numbers, problem, withVelocity, comm, result.catalogue,
    result.catalogueGroupId);
  catalogue.stop();

  StageTimer home(&info, "results home");
  sendFofResultsHome(points.route, labels, sizes, numbers, comm,
    outputOf(options.groupIdOut, result.groupId, problem.numPoints),
    outputOf(options.groupSizeOut, result.groupSize, problem.numPoints));
  home.stop();
  return info;
}

template RunInfo computeFofDistributed<float>(const FofProblem<float>&,
  const FofDistributedOptions&, FofDistributedResult&, Communicator&, Backend, const RunControl&);
template RunInfo computeFofDistributed<double>(const FofProblem<double>&,
  const FofDistributedOptions&, FofDistributedResult&, Communicator&, Backend, const RunControl&);
} // namespace jz
