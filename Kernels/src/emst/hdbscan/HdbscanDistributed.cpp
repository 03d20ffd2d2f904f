// HDBSCAN* over several ranks: the mutual-reachability tree from the
// distributed EMST (no rank holds the points of another), then its N - 1
// edges (24 bytes each: weight and the two global ids) on every rank, where
// the library's steps run on the tree as in computeHdbscan; each rank keeps
// its own points' rows, found by global id.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "jz/Hdbscan.h"

namespace jz
{
namespace
{
struct TreeEdge
{
  double weight2;
  GlobalId from, to;
};

// Every rank's edges in the serial order, endpoints as indices into `ids`
// (the tree's points, ascending).
EmstEdges gatherTree(const std::vector<TreeEdge>& mine, Communicator& comm,
  std::vector<GlobalId>& ids)
{
  std::vector<TreeEdge> all = allGatherConcat(comm, mine);
  std::sort(all.begin(), all.end(),
    [](const TreeEdge& a, const TreeEdge& b)
    {
      if (a.weight2 != b.weight2)
        return a.weight2 < b.weight2;
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
  ids.clear();
  for (const TreeEdge& e : all)
  {
    ids.push_back(e.from);
    ids.push_back(e.to);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto index = [&](GlobalId id)
  { return Index(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin()); };
  EmstEdges tree;
  for (const TreeEdge& e : all)
  {
    tree.from.push_back(index(e.from));
    tree.to.push_back(index(e.to));
    tree.weight2.push_back(e.weight2);
  }
  return tree;
}

void allNoise(std::size_t n, HdbscanResult& result)
{
  result = HdbscanResult{};
  result.clusterId.assign(n, -1);
  result.probability.assign(n, 0.0);
  result.outlierScore.assign(n, 0.0);
  result.coreDistance.assign(n, 0.0);
}
} // namespace

template <class T>
RunInfo computeHdbscanDistributed(const EmstProblem<T>& piece, const HdbscanOptions& options,
  Communicator& comm, HdbscanResult& result, Backend backend, const RunControl& control)
{
  const std::string error = hdbscanOptionsError(options);
  if (!error.empty())
    throw Error(error);
  const std::int64_t total = allSum(comm, std::int64_t(piece.numPoints));
  EmstProblem<T> problem = piece;
  problem.metric = EmstMetric::MutualReachability;
  problem.minSamples = hdbscanMinSamples(options, std::size_t(total));
  EmstRankEdges<T> mine;
  if (total < 2)
  {
    // Too few points for any tree: all noise (after the input checks).
    problem.metric = EmstMetric::Euclidean;
    const RunInfo info = computeEmstDistributed(problem, comm, mine, backend, control);
    allNoise(piece.numPoints, result);
    return info;
  }
  RunInfo info = computeEmstDistributed(problem, comm, mine, backend, control);
  std::vector<TreeEdge> edges(mine.weight2.size());
  for (std::size_t e = 0; e < edges.size(); ++e)
    edges[e] = TreeEdge{ mine.weight2[e], mine.fromId[e], mine.toId[e] };
  std::vector<GlobalId> ids;
  const EmstEdges tree = gatherTree(edges, comm, ids);
  if (ids.size() != std::size_t(total))
    throw Error("HDBSCAN: the tree does not span every point (internal error)");
  HdbscanResult global;
  hdbscanFromTree(tree, ids.size(), ids.data(), options, global);

  result = HdbscanResult{};
  result.numClusters = global.numClusters;
  for (std::size_t i = 0; i < piece.numPoints; ++i)
  {
    const GlobalId id = piece.ids ? piece.ids[i] : GlobalId(i);
    const std::size_t k = std::size_t(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
    result.clusterId.push_back(global.clusterId[k]);
    result.probability.push_back(global.probability[k]);
    result.outlierScore.push_back(global.outlierScore[k]);
    result.coreDistance.push_back(std::sqrt(mine.core2[i]));
  }
  return info;
}

template RunInfo computeHdbscanDistributed<float>(const EmstProblem<float>&, const HdbscanOptions&,
  Communicator&, HdbscanResult&, Backend, const RunControl&);
template RunInfo computeHdbscanDistributed<double>(const EmstProblem<double>&,
  const HdbscanOptions&, Communicator&, HdbscanResult&, Backend, const RunControl&);
} // namespace jz
