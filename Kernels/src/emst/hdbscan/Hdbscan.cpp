// computeHdbscan: the mutual-reachability EMST, then the library's steps
// (SingleLinkage, CondensedTree, ClusterSelection, ClusterMembership,
// Glosh), and ClusterIds numbered by descending size.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "emst/hdbscan/ClusterMembership.h"
#include "emst/hdbscan/ClusterSelection.h"
#include "emst/hdbscan/CondensedTree.h"
#include "emst/hdbscan/Glosh.h"
#include "emst/hdbscan/SingleLinkage.h"
#include "common/ScaleFrame.h"
#include "jz/Hdbscan.h"
#include "jz/ParameterRanges.h"

namespace jz
{
int hdbscanMinSamples(const HdbscanOptions& options, std::size_t n)
{
  long long ms = options.minSamples > 0 ? options.minSamples : options.minClusterSize;
  ms = std::min<long long>(ms, (long long)n - 1);
  return int(std::max<long long>(ms, 1));
}

std::string hdbscanOptionsError(const HdbscanOptions& options)
{
  // The library's rules (ParameterRanges.h): a cluster of one point is no
  // cluster, and MinSamples 0 stands for MinClusterSize.
  std::string e = rangeError(ranges::MinClusterSize, options.minClusterSize);
  if (e.empty())
    e = rangeError(ranges::HdbscanMinSamples, options.minSamples);
  if (e.empty())
    e = rangeError(ranges::ClusterSelectionMethod, double(options.selection));
  return e;
}

void hdbscanFromTree(EmstEdges tree, std::size_t n, const GlobalId* ids,
  const HdbscanOptions& options, HdbscanResult& result)
{
  const std::string error = hdbscanOptionsError(options);
  if (!error.empty())
    throw Error(error);
  result.numClusters = 0;
  if (n < 2)
  {
    result.clusterId.assign(n, -1);
    result.probability.assign(n, 0.0);
    result.outlierScore.assign(n, 0.0);
    return;
  }
  // The library sums stabilities (lambda = 1 / distance) in float: far
  // from unit scale they would underflow or overflow it. In a power-of-two
  // frame every lambda and sum scales exactly, and the selection, the
  // probabilities and the scores (ratios of lambdas) are those of unit scale.
  double largest2 = 0;
  for (auto w = tree.weight2.rbegin(); w != tree.weight2.rend() && largest2 == 0; ++w)
    largest2 = std::isfinite(*w) ? *w : 0;
  const ScaleFrame frame = ScaleFrame::forMagnitude(std::sqrt(largest2));
  if (!frame.identity())
    frame.valuesToFrame(tree.weight2.data(), tree.weight2.size(), 2);
  std::vector<LinkageRow> hierarchy = singleLinkage(tree, n);
  tree = EmstEdges{};
  const std::vector<CondensedRow> condensed =
    condenseTree(hierarchy, n, Index(options.minClusterSize));
  hierarchy = std::vector<LinkageRow>(); // `= {}` would keep the capacity
  const std::vector<char> selected =
    selectClusters(condensed, n, options.selection, options.allowSingleCluster);
  std::vector<long long> cluster;
  clusterMembership(condensed, n, selected, cluster, result.probability);
  result.outlierScore = gloshScores(condensed, n);

  // Descending size, ties by the smallest global id in the cluster.
  const std::size_t m = selected.size();
  std::vector<std::size_t> count(m, 0);
  std::vector<GlobalId> smallest(m, GlobalId(-1));
  for (std::size_t p = 0; p < n; ++p)
  {
    if (cluster[p] < 0)
      continue;
    const GlobalId id = ids ? ids[p] : GlobalId(p);
    const std::size_t c = std::size_t(cluster[p]);
    ++count[c];
    if (smallest[c] < 0 || id < smallest[c])
      smallest[c] = id;
  }
  std::vector<std::size_t> order;
  for (std::size_t c = 0; c < m; ++c)
    if (count[c] > 0)
      order.push_back(c);
  std::sort(order.begin(), order.end(),
    [&](std::size_t a, std::size_t b)
    { return count[a] != count[b] ? count[a] > count[b] : smallest[a] < smallest[b]; });
  std::vector<GlobalId> number(m, -1);
  for (std::size_t i = 0; i < order.size(); ++i)
    number[order[i]] = GlobalId(i);
  result.clusterId.resize(n);
  for (std::size_t p = 0; p < n; ++p)
    result.clusterId[p] = cluster[p] < 0 ? -1 : number[std::size_t(cluster[p])];
  result.numClusters = order.size();
}

template <class T>
RunInfo computeHdbscan(const EmstProblem<T>& points, const HdbscanOptions& options,
  HdbscanResult& result, Backend backend, const RunControl& control)
{
  const std::string error = hdbscanOptionsError(options);
  if (!error.empty())
    throw Error(error);
  EmstProblem<T> problem = points;
  problem.metric = EmstMetric::MutualReachability;
  problem.minSamples = hdbscanMinSamples(options, points.numPoints);
  RunInfo info;
  result = HdbscanResult{};
  if (points.numPoints < 2)
  {
    // Too few points for any tree: all noise (after the input checks).
    problem.metric = EmstMetric::Euclidean;
    EmstEdges none;
    info = computeEmst(problem, none, backend, control);
    hdbscanFromTree(std::move(none), points.numPoints, points.ids, options, result);
    result.coreDistance.assign(points.numPoints, 0.0);
    return info;
  }
  EmstEdges tree;
  info = computeEmst(problem, tree, backend, control);
  std::vector<double> core2 = std::move(tree.core2);
  hdbscanFromTree(std::move(tree), points.numPoints, points.ids, options, result);
  result.coreDistance = std::move(core2);
  for (double& c : result.coreDistance)
    c = std::sqrt(c);
  return info;
}

template RunInfo computeHdbscan<float>(
  const EmstProblem<float>&, const HdbscanOptions&, HdbscanResult&, Backend, const RunControl&);
template RunInfo computeHdbscan<double>(
  const EmstProblem<double>&, const HdbscanOptions&, HdbscanResult&, Backend, const RunControl&);
} // namespace jz
