// The component state of the Borůvka EMST rounds on the tree (ArborX EMST
// paper §3): per sorted point its component label, per node of every plane
// the label when all its points share one component ("pure") or kMixed, and
// per component the upper bound of its lightest outgoing edge found so far,
// shared by the worker threads (atomic minimum).
#pragma once

#include <algorithm>
#include <vector>

#include <omp.h>

#include "jz/Tree.h"

namespace jz
{
constexpr Index kMixed = Index(-1);
constexpr Index kNoPoint = Index(-1);
constexpr Index kEmptyNode = Index(-2); // no points: neither pure nor mixed

// Atomic minimum of a non-negative double shared by threads.
inline double loadBound(const double* slot)
{
  double v;
  __atomic_load(slot, &v, __ATOMIC_RELAXED);
  return v;
}
inline void lowerBound(double* slot, double value)
{
  double seen = loadBound(slot);
  while (value < seen &&
    !__atomic_compare_exchange(slot, &seen, &value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
  {
  }
}

// Union-find over sorted point indices; a set's root is its representative.
class PointUnionFind
{
public:
  explicit PointUnionFind(Index n)
    : parent_(n)
  {
    for (Index i = 0; i < n; ++i)
      parent_[i] = i;
  }
  Index find(Index i)
  {
    while (parent_[i] != i)
    {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }
  // False when a and b were already joined.
  bool unite(Index a, Index b)
  {
    a = find(a);
    b = find(b);
    if (a == b)
      return false;
    if (a > b)
      std::swap(a, b);
    parent_[b] = a;
    return true;
  }

private:
  std::vector<Index> parent_;
};

template <class T>
struct BoruvkaComponents
{
  const ZTree<T>& tree;
  std::vector<Index> point;             // per sorted point: its component's root
  std::vector<std::vector<Index>> node; // per plane and node: label or kMixed
  std::vector<double> bound2;           // per root: lightest outgoing edge so far
  // Per sorted point: its edge of the last round still leaves its component,
  // so it is still its lightest (the candidates only shrank): no search.
  std::vector<char> settled;
  Index count = 0;                      // number of components

  explicit BoruvkaComponents(const ZTree<T>& t)
    : tree(t)
    , point(t.sources.size())
    , node(t.planes.size())
  {
  }

  // After the unions of a round: labels of points and nodes, bounds reset.
  void relabel(PointUnionFind& sets)
  {
    const Index n = Index(point.size());
    count = 0;
    for (Index i = 0; i < n; ++i)
    {
      point[i] = sets.find(i);
      count += point[i] == i;
    }
    for (std::size_t p = 0; p < tree.planes.size(); ++p)
      labelPlane(int(p));
    bound2.assign(n, kInfinity);
  }

  bool pureAs(int p, Index j, Index label) const { return node[p][j] == label; }

private:
  void labelPlane(int p)
  {
    const TreePlane<T>& plane = tree.planes[p];
    const Index nodes = plane.numNodes();
    node[p].resize(nodes);
    const Index* split = p == 0 ? plane.sourceSplit.data() : plane.childSplit.data();
    const Index* below = p == 0 ? point.data() : node[p - 1].data();
#pragma omp parallel for schedule(static)
    for (long long j = 0; j < (long long)nodes; ++j)
    {
      Index label = kEmptyNode;
      for (Index i = split[j]; i < split[j + 1] && label != kMixed; ++i)
      {
        if (below[i] == kEmptyNode)
          continue;
        label = label == kEmptyNode || label == below[i] ? below[i] : kMixed;
      }
      node[p][j] = label;
    }
  }
};
} // namespace jz
