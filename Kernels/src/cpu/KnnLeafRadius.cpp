// knnLeafRadius2 (KnnBackends.h): the node planes of the kNN walk, then the
// leaf pass of KnnLeafRadius.h without leaf lists.
#include <type_traits>
#include <vector>

#include "../KnnBackends.h"
#include "../walk/BoxMetric.h"
#include "../walk/DualWalk.h"
#include "KnnLeafRadius.h"

namespace jz
{
template <class T>
std::vector<double> knnLeafRadius2(
  const ZTree<T>& tree, int k, const RunControl& control, const LeafTightening& tighten)
{
  if (tree.planes.empty() || tree.planes[0].numNodes() == 0)
    return {};
  const int threads = knnWalkThreads(control);
  return withBoxMetric(tree.periodicity,
    [&](const auto& metric)
    {
      using Policy = KnnLeafRadius<T, std::decay_t<decltype(metric)>>;
      Policy policy(tree, k, metric, threads, tighten ? &tighten : nullptr);
      DualWalk<T, Policy> walk(tree, policy, threads);
      walk.leafPass(knnWalkAboveLeaves(walk, policy, control));
      return std::move(policy.radii2());
    });
}

template std::vector<double> knnLeafRadius2(
  const ZTree<float>&, int, const RunControl&, const LeafTightening&);
template std::vector<double> knnLeafRadius2(
  const ZTree<double>&, int, const RunControl&, const LeafTightening&);
} // namespace jz
