// HDBSCAN* over several ranks: the mutual-reachability tree from the
// distributed EMST (no rank holds the points of another), then its N - 1
// edges (24 bytes each: weight and the two global ids) on one rank only (the
// root), where the library's steps run on the tree as in computeHdbscan.
// Every rank sends the root its points' global ids and gets back their rows;
// the others never hold the tree.
#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "jz/Hdbscan.h"

namespace jz
{
namespace
{
constexpr int kTreeRank = 0; // the one rank that holds the whole tree

struct TreeEdge
{
  double weight2;
  GlobalId from, to;
};

// One point's result, as it travels from the root to the point's rank.
struct PointRow
{
  GlobalId clusterId;
  double probability, outlierScore;
};

// The tree's edges (every rank's, concatenated) in the serial order,
// endpoints as indices into `ids` (the tree's points, ascending).
EmstEdges treeInOrder(std::vector<TreeEdge> all, std::vector<GlobalId>& ids)
{
  std::sort(all.begin(), all.end(),
    [](const TreeEdge& a, const TreeEdge& b)
    {
      if (a.weight2 != b.weight2)
        return a.weight2 < b.weight2;
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
  ids.clear();
  ids.reserve(2 * all.size());
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
  tree.from.reserve(all.size());
  tree.to.reserve(all.size());
  tree.weight2.reserve(all.size());
  for (const TreeEdge& e : all)
  {
    tree.from.push_back(index(e.from));
    tree.to.push_back(index(e.to));
    tree.weight2.push_back(e.weight2);
  }
  return tree;
}

// On the root: HDBSCAN* on the whole tree, and per rank the rows of the
// global ids it asked for (in its order). numClusters is set there only.
std::vector<std::vector<PointRow>> rowsFromTree(std::vector<TreeEdge> all, std::size_t total,
  const std::vector<std::vector<GlobalId>>& asked, const HdbscanOptions& options,
  std::size_t& numClusters)
{
  std::vector<GlobalId> ids;
  HdbscanResult global;
  {
    EmstEdges tree = treeInOrder(std::move(all), ids);
    if (ids.size() != total)
      throw Error("HDBSCAN: the tree does not span every point (internal error)");
    hdbscanFromTree(std::move(tree), ids.size(), ids.data(), options, global);
  }
  numClusters = global.numClusters;
  std::vector<std::vector<PointRow>> rows(asked.size());
  for (std::size_t r = 0; r < asked.size(); ++r)
    for (const GlobalId id : asked[r])
    {
      const std::size_t k = std::size_t(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
      if (k >= ids.size() || ids[k] != id)
        throw Error("HDBSCAN: a point missing from the tree (internal error)");
      rows[r].push_back(PointRow{ global.clusterId[k], global.probability[k], global.outlierScore[k] });
    }
  return rows;
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
  const int ranks = comm.size();
  std::vector<std::vector<TreeEdge>> edgesOut(ranks);
  std::vector<std::vector<GlobalId>> idsOut(ranks);
  edgesOut[kTreeRank].resize(mine.weight2.size());
  for (std::size_t e = 0; e < mine.weight2.size(); ++e)
    edgesOut[kTreeRank][e] = TreeEdge{ mine.weight2[e], mine.fromId[e], mine.toId[e] };
  for (std::size_t i = 0; i < piece.numPoints; ++i)
    idsOut[kTreeRank].push_back(piece.ids ? piece.ids[i] : GlobalId(i));
  std::vector<double> core2 = std::move(mine.core2);
  mine = EmstRankEdges<T>{};
  std::vector<std::vector<TreeEdge>> edgesIn = allToAllTyped(comm, edgesOut);
  edgesOut = {};
  const std::vector<std::vector<GlobalId>> asked = allToAllTyped(comm, idsOut);
  idsOut = {};

  std::vector<std::vector<PointRow>> rowsOut(ranks);
  std::int64_t numClusters = 0;
  std::size_t held = 0;
  std::string failure;
  if (comm.rank() == kTreeRank)
  {
    std::vector<TreeEdge> all;
    for (std::vector<TreeEdge>& list : edgesIn)
    {
      all.insert(all.end(), list.begin(), list.end());
      list = std::vector<TreeEdge>(); // `= {}` would keep the capacity
    }
    held = all.size();
    try
    {
      std::size_t clusters = 0;
      rowsOut = rowsFromTree(std::move(all), std::size_t(total), asked, options, clusters);
      numClusters = std::int64_t(clusters);
    }
    catch (const std::exception& e)
    {
      failure = e.what();
    }
  }
  info.counters.emplace_back("tree edges held", double(held));
  agreeOnErrors(comm, failure);
  const std::vector<std::vector<PointRow>> rowsIn = allToAllTyped(comm, rowsOut);
  numClusters = allSum(comm, numClusters);

  const std::vector<PointRow>& rows = rowsIn[kTreeRank];
  if (rows.size() != piece.numPoints)
    throw Error("HDBSCAN: the root answered the wrong number of rows (internal error)");
  result = HdbscanResult{};
  result.numClusters = std::size_t(numClusters);
  result.clusterId.resize(piece.numPoints);
  result.probability.resize(piece.numPoints);
  result.outlierScore.resize(piece.numPoints);
  result.coreDistance.resize(piece.numPoints);
  for (std::size_t i = 0; i < piece.numPoints; ++i)
  {
    result.clusterId[i] = rows[i].clusterId;
    result.probability[i] = rows[i].probability;
    result.outlierScore[i] = rows[i].outlierScore;
    result.coreDistance[i] = std::sqrt(core2[i]);
  }
  return info;
}

template RunInfo computeHdbscanDistributed<float>(const EmstProblem<float>&, const HdbscanOptions&,
  Communicator&, HdbscanResult&, Backend, const RunControl&);
template RunInfo computeHdbscanDistributed<double>(const EmstProblem<double>&,
  const HdbscanOptions&, Communicator&, HdbscanResult&, Backend, const RunControl&);
} // namespace jz
