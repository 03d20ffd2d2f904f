// The halo range search as a policy of the dual-walk engine: for every query
// point (a halo centre) with its own radius R_q, every source within R_q
// (nearest image when periodic), handed to the caller as (r^2, source)
// pairs. Query-centric, unsorted; a pair of nodes is pruned when the lower
// bound of their distance exceeds the largest radius of the receiver node's
// queries (per node and plane, from the leaves up, before the walk).
#pragma once

#include <algorithm>
#include <vector>

#include "walk/WalkPolicy.h"
#include "jz/Tree.h"

namespace jz
{
template <class T, class Metric, class Sink>
struct RangeCollectPolicy : WalkPolicyDefaults
{
  const ZTree<T>& tree;
  Metric metric;
  const std::vector<double>& radius2; // per sorted query
  Sink& sink;                         // sink(sortedQuery, sortedSource, r2) on the leaf's thread
  std::vector<std::vector<double>> nodeRadius2; // per plane and node: max over its queries

  RangeCollectPolicy(
    const ZTree<T>& tree_, const Metric& metric_, const std::vector<double>& radius2_, Sink& sink_)
    : tree(tree_)
    , metric(metric_)
    , radius2(radius2_)
    , sink(sink_)
  {
    nodeRadius2.resize(tree.planes.size());
    for (std::size_t p = 0; p < tree.planes.size(); ++p)
    {
      const TreePlane<T>& plane = tree.planes[p];
      std::vector<double>& r = nodeRadius2[p];
      r.assign(plane.numNodes(), 0.0);
      for (Index j = 0; j < plane.numNodes(); ++j)
      {
        if (p == 0)
          for (Index q = plane.querySplit[j]; q < plane.querySplit[j + 1]; ++q)
            r[j] = std::max(r[j], radius2[q]);
        else
          for (Index c = plane.childSplit[j]; c < plane.childSplit[j + 1]; ++c)
            r[j] = std::max(r[j], nodeRadius2[p - 1][c]);
      }
    }
  }

  template <class C>
  PairVerdict testPair(int p, Index c, Index d, const C&, double& low2) const
  {
    low2 = metric.low2(tree.queryBox(p, c), tree.planes[p].sourceBox[d]);
    return low2 > nodeRadius2[p][c] ? PairVerdict::Prune : PairVerdict::Keep;
  }

  void consumeLeaf(Index c, const LeafList& list)
  {
    const TreePlane<T>& leaves = tree.planes[0];
    const SortedPoints<T>& qp = tree.queryPoints();
    const SortedPoints<T>& sp = tree.sources;
    for (Index q = leaves.querySplit[c]; q < leaves.querySplit[c + 1]; ++q)
    {
      T x[3];
      qp.point(q, x);
      for (const LeafCandidate& e : list)
        for (Index j = leaves.sourceSplit[e.node]; j < leaves.sourceSplit[e.node + 1]; ++j)
        {
          T y[3];
          sp.point(j, y);
          const double r2 = metric.point2(x, y);
          if (r2 <= radius2[q])
            sink(q, j, r2);
        }
    }
  }
};
} // namespace jz
