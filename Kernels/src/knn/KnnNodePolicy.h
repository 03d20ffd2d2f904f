// The kNN walk's node planes as a policy of the dual-walk engine (§III-B,
// Algorithms 2 and 3): per receiver parent, FindRmax bounds
// the K-th neighbour radius of each child from the parent's list; a child
// pair is kept when its lower bound is within the receiver's radius, and
// lists are sorted by lower bound so that every scan may stop early (§III-D).
// The leaf kernel (KnnLeafSearch.h) derives from it.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "jz/NeighborHeap.h"
#include "jz/Tree.h"
#include "walk/PerThread.h"
#include "walk/WalkPolicy.h"

namespace jz
{
template <class T, class Metric>
class KnnNodePolicy : public WalkPolicyDefaults
{
public:
  static constexpr bool kSortedLists = true;

  KnnNodePolicy(const ZTree<T>& tree, int k, const Metric& metric, int numThreads)
    : tree_(tree)
    , metric_(metric)
    , k_(k)
    , heaps_(numThreads)
    , receivers_(numThreads)
  {
  }

  // planeDone(p) runs after each node plane (p >= 1): progress; may throw.
  void setPlaneDone(std::function<void(int)> planeDone) { planeDone_ = std::move(planeDone); }

  void endPlane(int p, std::size_t)
  {
    if (p > 0 && planeDone_)
      planeDone_(p);
  }

  void beginPlane(int p)
  {
    plane_ = p;
    rmax2_.assign(tree_.planes[p].numNodes(), kInfinity);
  }

  // FindRmax for the parent's children with queries; the reach is their
  // largest radius.
  double beginParent(const ParentView& parent)
  {
    const TreePlane<T>& plane = tree_.planes[parent.plane];
    return findRmax(parent, [&](Index c) { return plane.numQueries(c) > 0; });
  }

  template <class Context>
  bool childMeetsEntry(int, Index c, Index, double entryLow2, const Context&) const
  {
    return !(entryLow2 > rmax2_[c]);
  }

  template <class Context>
  PairVerdict testPair(int p, Index c, Index d, const Context&, double& low2) const
  {
    low2 = metric_.low2(tree_.queryBox(p, c), tree_.planes[p].sourceBox[d]);
    return low2 <= rmax2_[c] ? PairVerdict::Keep : PairVerdict::Prune;
  }

  // The K-th neighbour radius bound (squared) of node c of the current plane.
  double rmax2(Index c) const { return rmax2_[c]; }
  std::vector<double>& radii2() { return rmax2_; }

protected:
  // Algorithm 3: for every child c that `needs` it, the smallest radius
  // whose ball around c surely holds K sources, from the upper bounds d_up
  // to the children of the parent's source parents, nearest entries first;
  // returns the largest (0 when none needs one; the others keep theirs).
  template <class Needs>
  double findRmax(const ParentView& parent, Needs&& needs)
  {
    std::vector<Index>& receivers = receivers_.mine();
    receivers.clear();
    for (Index c = parent.childBegin; c < parent.childEnd; ++c)
      if (needs(c))
        receivers.push_back(c);
    std::vector<RadiusOfCountHeap>& heaps = heaps_.mine();
    heaps.resize(receivers.size());
    for (RadiusOfCountHeap& h : heaps)
      h.init(k_);
    double worst = kInfinity;
    for (std::size_t e = 0; e < parent.numEntries && !receivers.empty(); ++e)
    {
      if (parent.entryLow2(e) > worst)
        break; // early exit of §III-D
      const Index q = parent.source[e];
      for (Index d = parent.firstChild(q); d < parent.endChild(q); ++d)
        countSourcesOf(parent.plane, d, receivers, heaps);
      worst = 0;
      for (const RadiusOfCountHeap& h : heaps)
        worst = std::max(worst, h.radius2());
    }
    double reach2 = 0;
    for (std::size_t r = 0; r < receivers.size(); ++r)
    {
      rmax2_[receivers[r]] = heaps[r].radius2();
      reach2 = std::max(reach2, rmax2_[receivers[r]]);
    }
    return reach2;
  }

  // Source node d counts, at its upper bound, towards each receiver child.
  void countSourcesOf(int p, Index d, const std::vector<Index>& receivers,
    std::vector<RadiusOfCountHeap>& heaps) const
  {
    const TreePlane<T>& plane = tree_.planes[p];
    const Index ns = plane.numSources(d);
    if (ns == 0)
      return;
    const Box<T>& sb = plane.sourceBox[d];
    for (std::size_t r = 0; r < receivers.size(); ++r)
    {
      RadiusOfCountHeap& h = heaps[r];
      const double r2 = metric_.high2(tree_.queryBox(p, receivers[r]), sb);
      if (r2 < h.radius2())
        h.insert(r2, ns);
    }
  }

  const ZTree<T>& tree_;
  Metric metric_;
  int k_;
  int plane_ = 0;
  std::vector<double> rmax2_; // per node of the current plane
  PerThread<std::vector<RadiusOfCountHeap>> heaps_;
  PerThread<std::vector<Index>> receivers_;
  std::function<void(int)> planeDone_;
};

// Worker threads of a kNN walk: the caller's count, else OpenMP's.
inline int knnWalkThreads(const RunControl& control)
{
  return control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
}

// Algorithm 1 lines 1-5 without the leaf plane: the list of the leaves'
// parents (plane 1, or the super nodes when the tree has one plane), with
// progress from 0.3 to 0.4 of the run.
template <class Walk, class Policy>
auto knnWalkAboveLeaves(Walk& walk, Policy& policy, const RunControl& control)
{
  const int numPlanes = walk.numPlanes();
  if (control.progress)
  {
    policy.setPlaneDone([&control, numPlanes](int p)
      { reportProgress(control, 0.3 + 0.1 * (numPlanes - p) / numPlanes); });
  }
  return walk.walkDownTo(1);
}
} // namespace jz
