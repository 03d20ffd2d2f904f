// The component state of the Borůvka EMST rounds on the tree (ArborX EMST
// paper §3): per sorted point its component label, per node of every plane
// the label when all its points share one component ("pure") or kMixed, and
// per component the upper bound of its lightest outgoing edge found so far,
// shared by the worker threads (atomic minimum). Per point, the other end of
// its lightest edge leaving its component (kNoPoint: none).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include <omp.h>

#include "common/AtomicMin.h"
#include "emst/FloatBounds.h"
#include "jz/Tree.h"
#include "jz/UnionFind.h"

namespace jz
{
constexpr Index kMixed = Index(-1);
constexpr Index kNoPoint = Index(-1);
// A point's choice when its component has no edge up to the maximum weight:
// the component is final (no other can join it either) and never searches.
constexpr Index kFinished = Index(-3);
constexpr Index kEmptyNode = Index(-2); // no points: neither pure nor mixed
// Loops over points are shared out in chunks of kChunk points (over nodes:
// of kNodeChunk nodes), taken as threads come free: the work per point
// varies along the z-order of clustered points, and a thread the system
// holds up stalls no one. Planes above the leaves with fewer than
// kParallelNodes nodes are labelled and marked on the calling thread: a
// parallel region costs more than they do.
constexpr int kChunk = 8192;
constexpr int kNodeChunk = 64;
constexpr Index kParallelNodes = 8192;

// The shared bounds, stored as floats rounded up (AtomicMin.h).
inline double loadBound(const float* slot) { return atomicLoadRelaxed(slot); }
inline void lowerBound(float* slot, double value) { atomicMin(slot, roundUpToFloat(value)); }

template <class T>
struct BoruvkaComponents
{
  const ZTree<T>& tree;
  // Per sorted point: its component's root after relabel(); between the
  // unions of a round and the next relabel, the union-find forest (parent
  // links) itself, so the labels cost no second array.
  std::vector<Index> point;
  std::vector<std::vector<Index>> node; // per plane and node: label or kMixed
  std::vector<float> bound2;            // per root: lightest outgoing edge so far
  // Per sorted point: the other end of its lightest edge leaving its
  // component. One that is set when a round begins is the edge of the last
  // round that still leaves the component, so it is still the lightest (the
  // candidates only shrank): the point is settled and does not search.
  std::vector<Index> choice;
  // Per sorted point: a lower bound of its lightest edge to another
  // component (rounded down), from its last search; it only grows, as the
  // other components only shrink, so a point whose bound exceeds its
  // component's best edge skips its search. Euclidean only (empty under
  // mutual reachability, whose core distances already cost 8 B per point).
  std::vector<float> low2;
  // Per plane and node: whether a point below it searches this round (set
  // by markSearching; a node without one is no receiver of the walk).
  std::vector<std::vector<unsigned char>> searching;
  Index count = 0;               // number of components
  double maxWeight2 = kInfinity; // heavier edges are left out (a forest)

  explicit BoruvkaComponents(const ZTree<T>& t)
    : tree(t)
    , point(t.sources.size())
    , node(t.planes.size())
    , choice(t.sources.size(), kNoPoint)
  {
    std::iota(point.begin(), point.end(), Index(0));
  }

  // Joins the components of a and b (the smaller root stays the root); false
  // when they were one already.
  bool unite(Index a, Index b) { return uniteBySmallestRoot(point, a, b); }

  // After the unions of a round: labels of points and nodes, bounds reset
  // (to the maximum weight).
  void relabel()
  {
    const Index n = Index(point.size());
    Index roots = 0;
    // Each point's link set to its root in parallel: a link read while
    // another thread replaces it is the old parent or the root, an ancestor
    // either way, and roots are never written.
    Index* link = point.data();
#pragma omp parallel for schedule(dynamic, kChunk) reduction(+ : roots)
    for (long long i = 0; i < (long long)n; ++i)
    {
      Index r = Index(i), up;
      while ((up = __atomic_load_n(&link[r], __ATOMIC_RELAXED)) != r)
        r = up;
      __atomic_store_n(&link[i], r, __ATOMIC_RELAXED);
      roots += r == Index(i);
    }
    count = roots;
    for (std::size_t p = 0; p < tree.planes.size(); ++p)
      labelPlane(int(p));
    bound2.assign(n, roundUpToFloat(maxWeight2));
  }

  // After the bounds are seeded: a point searches unless it is settled
  // (choice set) or no edge of it to another component can be lighter than
  // its component's bound (which only shrinks during the round); bottom-up
  // per node. Returns the number of searching points.
  Index markSearching(const double* core2)
  {
    searching.resize(tree.planes.size());
    Index total = 0;
    for (std::size_t p = 0; p < tree.planes.size(); ++p)
    {
      const TreePlane<T>& plane = tree.planes[p];
      const Index nodes = plane.numNodes();
      searching[p].resize(nodes);
      const Index* split = p == 0 ? plane.sourceSplit.data() : plane.childSplit.data();
      const unsigned char* below = p == 0 ? nullptr : searching[p - 1].data();
#pragma omp parallel for schedule(dynamic, kNodeChunk) reduction(+ : total) \
  if (p == 0 || nodes > kParallelNodes)
      for (long long j = 0; j < (long long)nodes; ++j)
      {
        unsigned char any = 0;
        for (Index i = split[j]; i < split[j + 1]; ++i)
        {
          const bool s = below ? below[i] != 0 : pointSearches(i, core2);
          any |= s;
          if (!below)
            total += s;
          else if (any)
            break;
        }
        searching[p][j] = any;
      }
    }
    return total;
  }

  bool pointSearches(Index q, const double* core2) const
  {
    if (choice[q] != kNoPoint)
      return false;
    const double b = bound2[point[q]];
    return !((core2 && core2[q] > b) || (!low2.empty() && low2[q] > b));
  }

  // The bounds are not needed between a round's walk and the next relabel.
  void releaseBounds() { std::vector<float>().swap(bound2); }

  bool pureAs(int p, Index j, Index label) const { return node[p][j] == label; }

private:
  void labelPlane(int p)
  {
    const TreePlane<T>& plane = tree.planes[p];
    const Index nodes = plane.numNodes();
    node[p].resize(nodes);
    const Index* split = p == 0 ? plane.sourceSplit.data() : plane.childSplit.data();
    const Index* below = p == 0 ? point.data() : node[p - 1].data();
#pragma omp parallel for schedule(dynamic, kNodeChunk) if (p == 0 || nodes > kParallelNodes)
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
