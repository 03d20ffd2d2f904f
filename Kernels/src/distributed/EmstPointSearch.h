// Single-point searches on one rank's tree for the distributed EMST: the
// lightest edge from a point (local or sent by another rank) to a point of
// another component, and the k smallest squared distances from a point (the
// core distance of mutual reachability). Depth first over the planes, the
// nearest child first; a node is skipped when no point of it can beat the
// bound, or, in the edge search, when it lies wholly in the query's component.
// Weights are the serial EMST's: distance2 of the tree coordinates in double,
// max'ed with both core distances under mutual reachability.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "../cpu/EmstEdgeOrder.h"
#include "../cpu/FloatBounds.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

namespace jz
{
constexpr Index kMixedNode = Index(-1);
constexpr Index kEmptyTreeNode = Index(-2);

// A query for the lightest edge into another component.
template <class T>
struct EdgeQuery
{
  T p[3];
  GlobalId id;
  GlobalId label;      // the query's component
  double core2 = 0;    // mutual reachability, else 0
};

// What the edge search found: the sorted index of the other end, or none.
struct EdgeFound
{
  Index point = Index(-1);
  double weight2 = 0;
  GlobalId id = -1;
  bool found() const { return point != Index(-1); }
};

// Planes above the tree's coarsest, each grouping kFan consecutive nodes of
// the one below, up to one of at most kFan nodes: a single-point search then
// starts from a few boxes instead of the coarsest plane's ~1000.
template <class T>
struct CoarsePlane
{
  static constexpr Index kFan = 8;
  std::vector<Index> split; // children in the plane below
  std::vector<Box<T>> box;
};

template <class T>
std::vector<CoarsePlane<T>> coarsePlanes(std::vector<Box<T>> below)
{
  std::vector<CoarsePlane<T>> out;
  while (Index(below.size()) > CoarsePlane<T>::kFan)
  {
    const Index count = Index(below.size());
    CoarsePlane<T> c;
    for (Index j = 0; j < count; j += CoarsePlane<T>::kFan)
    {
      c.split.push_back(j);
      Box<T> b;
      boxSetEmpty(b);
      for (Index k = j; k < std::min(count, j + CoarsePlane<T>::kFan); ++k)
        boxMerge(b, below[k]);
      c.box.push_back(b);
    }
    c.split.push_back(count);
    below = c.box;
    out.push_back(std::move(c));
  }
  return out;
}

template <class T>
std::vector<CoarsePlane<T>> coarsePlanes(const ZTree<T>& tree)
{
  return tree.planes.empty() ? std::vector<CoarsePlane<T>>()
                             : coarsePlanes(tree.planes.back().sourceBox);
}

// The tree with the per-round state the edge search reads.
template <class T>
struct EmstSearchTree
{
  const ZTree<T>& tree;
  const std::vector<CoarsePlane<T>>& coarse;
  const GlobalId* ids = nullptr;      // per sorted point
  const double* core2 = nullptr;      // per sorted point; nullptr = Euclidean
  const Index* comp = nullptr;        // per sorted point: local component
  const GlobalId* label = nullptr;    // per local component: its global label
  const std::vector<std::vector<Index>>* nodeComp = nullptr; // per plane (tree, then coarse)

  int numPlanes() const { return int(tree.planes.size() + coarse.size()); }
  Index numNodes(int p) const
  {
    const int t = int(tree.planes.size());
    return p < t ? tree.planes[p].numNodes() : Index(coarse[p - t].box.size());
  }
  const Box<T>& box(int p, Index j) const
  {
    const int t = int(tree.planes.size());
    return p < t ? tree.planes[p].sourceBox[j] : coarse[p - t].box[j];
  }
  double low2(const T* q, int p, Index j) const
  {
    return pointBoxDistance2(q, box(p, j), tree.periodicity);
  }

  // Children of node j of plane p > 0 in plane p - 1, or points of leaf j.
  std::pair<Index, Index> range(int p, Index j) const
  {
    const int t = int(tree.planes.size());
    const std::vector<Index>& s = p == 0 ? tree.planes[0].sourceSplit
      : p < t                           ? tree.planes[p].childSplit
                                        : coarse[p - t].split;
    return { s[j], s[j + 1] };
  }
};

// Depth-first visit of the nodes whose lower bound passes keep(low2),
// nearest child first: leaf(j) is called for each such leaf. keep is
// re-evaluated when a node is popped, so bounds that shrink prune more.
template <class T, class Keep, class Leaf, class Skip>
void visitNearestFirst(const EmstSearchTree<T>& st, const T* q, const Keep& keep,
  const Skip& skip, const Leaf& leaf, std::vector<std::pair<double, std::pair<int, Index>>>& stack)
{
  stack.clear();
  const int top = st.numPlanes() - 1;
  if (top < 0)
    return;
  auto push = [&](int p, Index b, Index e)
  {
    const std::size_t first = stack.size();
    for (Index j = b; j < e; ++j)
    {
      if (skip(p, j))
        continue;
      const double l = st.low2(q, p, j);
      if (keep(l))
        stack.push_back({ l, { p, j } });
    }
    // Farthest first in the stack, so the nearest is popped first.
    std::sort(stack.begin() + first, stack.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  };
  push(top, 0, st.numNodes(top));
  while (!stack.empty())
  {
    const auto [l, at] = stack.back();
    stack.pop_back();
    if (!keep(l))
      continue;
    const auto [p, j] = at;
    if (p == 0)
      leaf(j);
    else
    {
      const auto [b, e] = st.range(p, j);
      push(p - 1, b, e);
    }
  }
}

// q's lightest edge into leaf j (points of other components only, weight at
// most bound2, ties by ids), merged into best; bound2 shrinks to its weight.
template <class T>
void scanLeafForEdge(
  const EmstSearchTree<T>& st, const EdgeQuery<T>& q, Index j, double& bound2, EdgeFound& best)
{
  const SortedPoints<T>& pts = st.tree.sources;
  const auto [b, e] = st.range(0, j);
  for (Index t = b; t < e; ++t)
  {
    if (st.label[st.comp[t]] == q.label)
      continue;
    T pt[3];
    pts.point(t, pt);
    double w = distance2(q.p, pt, st.tree.periodicity);
    if (st.core2)
      w = std::max(w, std::max(q.core2, st.core2[t]));
    if (w > bound2)
      continue;
    if (!best.found() || emstEdgeLess(w, q.id, st.ids[t], best.weight2, q.id, best.id))
    {
      best = EdgeFound{ t, w, st.ids[t] };
      bound2 = w;
    }
  }
}

// Whether node j of plane p holds no point or only points of component `label`.
template <class T>
bool nodeSkipped(const EmstSearchTree<T>& st, int p, Index j, GlobalId label)
{
  const Index c = (*st.nodeComp)[p][j];
  return c == kEmptyTreeNode || (c != kMixedNode && st.label[c] == label);
}

// The lightest edge from q to a point of another component with weight at
// most bound2 (ties by ids); bound2 shrinks to the weight found.
template <class T>
EdgeFound searchLightestEdge(const EmstSearchTree<T>& st, const EdgeQuery<T>& q, double& bound2,
  std::vector<std::pair<double, std::pair<int, Index>>>& stack)
{
  EdgeFound best;
  auto keep = [&](double l) { return !(std::max(l, q.core2) > bound2); };
  auto skip = [&](int p, Index j) { return nodeSkipped(st, p, j, q.label); };
  auto leaf = [&](Index j) { scanLeafForEdge(st, q, j, bound2, best); };
  visitNearestFirst(st, q.p, keep, skip, leaf, stack);
  return best;
}

// The leaves within bound2 of box `near` (box to box), ascending by that
// distance, without those wholly in component `label` (-1: none skipped):
// the candidates of every point of a leaf, found once for all of them.
template <class T>
void leavesNear(const EmstSearchTree<T>& st, const Box<T>& near, double bound2, GlobalId label,
  std::vector<std::pair<double, Index>>& out, std::vector<std::pair<int, Index>>& stack)
{
  out.clear();
  stack.clear();
  const int top = st.numPlanes() - 1;
  for (Index j = 0; top >= 0 && j < st.numNodes(top); ++j)
    stack.emplace_back(top, j);
  while (!stack.empty())
  {
    const auto [p, j] = stack.back();
    stack.pop_back();
    if (nodeSkipped(st, p, j, label))
      continue;
    const double l = boxDistanceLow2(near, st.box(p, j), st.tree.periodicity);
    if (l > bound2)
      continue;
    if (p == 0)
    {
      out.emplace_back(l, j);
      continue;
    }
    const auto [b, e] = st.range(p, j);
    for (Index k = b; k < e; ++k)
      stack.emplace_back(p - 1, k);
  }
  std::sort(out.begin(), out.end());
}

// searchLightestEdge over the leaves of leavesNear (for a point of `near`).
template <class T>
EdgeFound searchLightestEdgeIn(const EmstSearchTree<T>& st, const EdgeQuery<T>& q,
  const std::vector<std::pair<double, Index>>& leaves, double& bound2)
{
  EdgeFound best;
  for (const auto& [l, j] : leaves)
  {
    if (std::max(l, q.core2) > bound2)
      break;
    if (nodeSkipped(st, 0, j, q.label) || std::max(st.low2(q.p, 0, j), q.core2) > bound2)
      continue;
    scanLeafForEdge(st, q, j, bound2, best);
  }
  return best;
}

// The k smallest squared distances from q to the tree's points that are at
// most bound2, ascending, in `out` (fewer when fewer are that close).
template <class T>
void searchSmallestDistances(const EmstSearchTree<T>& st, const T* q, int k, double bound2,
  std::vector<double>& out, std::vector<std::pair<double, std::pair<int, Index>>>& stack)
{
  out.clear(); // a max-heap of at most k values
  const SortedPoints<T>& pts = st.tree.sources;
  auto limit = [&]() { return int(out.size()) < k ? bound2 : std::min(bound2, out.front()); };
  auto keep = [&](double l) { return !(l > limit()); };
  auto skip = [](int, Index) { return false; };
  auto leaf = [&](Index j)
  {
    const auto [b, e] = st.range(0, j);
    for (Index t = b; t < e; ++t)
    {
      T pt[3];
      pts.point(t, pt);
      const double d2 = distance2(q, pt, st.tree.periodicity);
      if (d2 > bound2)
        continue;
      if (int(out.size()) < k)
      {
        out.push_back(d2);
        std::push_heap(out.begin(), out.end());
      }
      else if (d2 < out.front())
      {
        std::pop_heap(out.begin(), out.end());
        out.back() = d2;
        std::push_heap(out.begin(), out.end());
      }
    }
  };
  visitNearestFirst(st, q, keep, skip, leaf, stack);
  std::sort_heap(out.begin(), out.end());
}
} // namespace jz
