// The distributed Borůvka's boundary search on the answering rank: the edge
// queries that other ranks sent this round form the queries of one tree
// whose sources are this rank's points within their bounds (pointsNear),
// and the walk engine runs the Borůvka policy for foreign queries
// (BoruvkaForeignSearch.h) on it.
#pragma once

#include <algorithm>
#include <vector>

#include "emst/BoruvkaForeignSearch.h"
#include "walk/BoxMetric.h"
#include "walk/DualWalk.h"
#include "emst/EmstPhases.h"
#include "emst/EmstPointsNear.h"

namespace jz
{
// A query for the lightest edge into another component.
template <class T>
struct EdgeQuery
{
  T p[3];              // tree coordinates (wrapped when periodic)
  GlobalId id;
  GlobalId label;      // the query's component
  double core2 = 0;    // mutual reachability, else 0
};

// What this rank's points hold for the boundary search, per sorted point.
struct EmstLocalSide
{
  const GlobalId* id;
  const Index* comp;      // local component
  const GlobalId* label;  // per local component: its global label
  const double* core2;    // nullptr: Euclidean
};

// The ids, labels and core distances of the query tree's two sides, in its
// sorted orders: the queries', and this rank's points `near` (the tree's
// sources, by their index into near); per sorted query its bound.
template <class T>
void foreignSides(const ZTree<T>& tree, const std::vector<EdgeQuery<T>>& queries,
  const std::vector<double>& bound2, const std::vector<Index>& near, const EmstLocalSide& local,
  ForeignSide& q, ForeignSide& s, std::vector<double>& qBound2)
{
  const bool mutual = local.core2 != nullptr;
  auto sized = [mutual](ForeignSide& side, Index n)
  {
    side.id.resize(n);
    side.label.resize(n);
    side.core2.resize(mutual ? n : 0);
  };
  sized(q, tree.queries.size());
  sized(s, tree.sources.size());
  qBound2.resize(tree.queries.size());
  for (Index i = 0; i < tree.queries.size(); ++i)
  {
    const EdgeQuery<T>& e = queries[tree.queries.inputIndex[i]];
    q.id[i] = e.id;
    q.label[i] = e.label;
    if (mutual)
      q.core2[i] = e.core2;
    qBound2[i] = bound2[tree.queries.inputIndex[i]];
  }
  for (Index i = 0; i < tree.sources.size(); ++i)
  {
    const Index t = near[tree.sources.inputIndex[i]];
    s.id[i] = local.id[t];
    s.label[i] = local.label[local.comp[t]];
    if (mutual)
      s.core2[i] = local.core2[t];
  }
}

// Per query (bound2: its bound, inclusive) the sorted index on this rank of
// the other end of its lightest edge, and the weight; none when no edge to
// another component is that light.
template <class T>
std::vector<ForeignEdge> searchBoundaryEdges(const EmstRankPoints<T>& points,
  const EmstLocalSide& local, const std::vector<EdgeQuery<T>>& queries,
  const std::vector<double>& bound2, int threads)
{
  std::vector<ForeignEdge> out(queries.size());
  if (queries.empty() || points.size() == 0)
    return out;
  std::vector<T> qry(3 * queries.size());
  for (std::size_t j = 0; j < queries.size(); ++j)
    std::copy_n(queries[j].p, 3, &qry[3 * j]);
  const std::vector<Index> near = pointsNear(points.tree, qry.data(), queries.size(), bound2.data());
  if (near.empty())
    return out;
  std::vector<T> src(3 * near.size());
  for (std::size_t k = 0; k < near.size(); ++k)
    points.tree.sources.point(near[k], &src[3 * k]);
  ZTree<T> tree;
  RunControl control;
  control.numThreads = threads;
  buildTreeCpu(src.data(), Index(near.size()), qry.data(), Index(queries.size()),
    points.tree.periodicity, points.boxLo, TreeBuildOptions(), tree, control);
  tree.periodicity = points.tree.periodicity;
  ForeignSide q, s;
  std::vector<double> qBound2;
  foreignSides(tree, queries, bound2, near, local, q, s, qBound2);
  std::vector<ForeignEdge> found;
  withBoxMetric(tree.periodicity,
    [&](const auto& metric)
    {
      using Policy = BoruvkaForeignSearch<T, std::decay_t<decltype(metric)>>;
      Policy policy(tree, metric, q, qBound2, s, found);
      DualWalk<T, Policy> walk(tree, policy, threads);
      walk.leafPass(walk.walkDownTo(1));
    });
  for (Index i = 0; i < tree.queries.size(); ++i)
    if (found[i].found())
      out[tree.queries.inputIndex[i]] =
        ForeignEdge{ near[tree.sources.inputIndex[found[i].source]], found[i].weight2 };
  return out;
}
} // namespace jz
