// The K-th neighbour radius bound (squared) of every leaf, for the ghost
// selection of the distributed kNN: the leaf-pass hook of the kNN walk
// policy without leaf lists. Per leaf, the smaller of FindRmax's node bound
// and, over its queries, the K-th smallest distance to the sources of its
// own leaf and the leaves next to it in z-order (any K sources bound the
// K-th neighbour distance; this one is much tighter than the node bound, so
// fewer ghosts need sending).
#pragma once

#include <algorithm>
#include <vector>

#include "../KnnBackends.h"
#include "KnnNodePolicy.h"
#include "LeafDistances.h"

namespace jz
{
template <class T, class Metric>
class KnnLeafRadius : public KnnNodePolicy<T, Metric>
{
  using Base = KnnNodePolicy<T, Metric>;

public:
  static constexpr bool kLeafLists = false;

  // tighten (may be null): which leaves to tighten beyond the node bound.
  KnnLeafRadius(const ZTree<T>& tree, int k, const Metric& metric, int numThreads,
    const LeafTightening* tighten = nullptr)
    : Base(tree, k, metric, numThreads)
    , tighten_(tighten)
    , margin_(FilterMargin::of(tree))
    , scratch_(numThreads)
    , skipped_(numThreads)
  {
    const Periodicity& per = tree.periodicity;
    for (int d = 0; d < 3; ++d)
      periods_[d] = T(per.length[d]);
  }

  void beginPlane(int p)
  {
    // The leaves' parents' bounds (plane 1), kept for beginParent.
    if (p == 0 && this->plane_ == 1)
      parentRmax2_.swap(this->rmax2_);
    Base::beginPlane(p);
  }

  // A parent that tighten_ turns down gives its leaves its own bound (valid
  // for all its queries) without their FindRmax.
  double beginParent(const ParentView& parent)
  {
    if (tighten_ && parent.plane == 0 && parent.parent < parentRmax2_.size())
    {
      const double bound2 = parentRmax2_[parent.parent];
      if (!(*tighten_)(1, parent.parent, bound2))
      {
        for (Index c = parent.childBegin; c < parent.childEnd; ++c)
          this->rmax2_[c] = bound2;
        skipped_.mine() = true;
        return 0;
      }
    }
    skipped_.mine() = false;
    return Base::beginParent(parent);
  }

  void consumeLeaf(Index c, const LeafList&)
  {
    if (tighten_ && (skipped_.mine() || !(*tighten_)(0, c, this->rmax2_[c])))
      return;
    const TreePlane<T>& plane = this->tree_.planes[0];
    const Index k = Index(this->k_);
    Index lo = c, hi = c + 1;
    if (poolNeighbours(plane, lo, hi) < k)
      return;
    const SortedPoints<T>& src = this->tree_.sources;
    const SortedPoints<T>& qry = this->tree_.queryPoints();
    const Index s0 = plane.sourceSplit[lo], n = plane.sourceSplit[hi] - s0;
    std::vector<T>& d2 = scratch_.mine();
    if (d2.size() < n)
      d2.resize(n);
    double worst = 0;
    Index qEnd = plane.querySplit[c + 1];
    if (boxIsPoint(this->tree_.queryBox(0, c)))
      qEnd = std::min(qEnd, plane.querySplit[c] + 1); // a run of duplicates: one query
    for (Index q = plane.querySplit[c]; q < qEnd; ++q)
    {
      const T p[3] = { qry.x[q], qry.y[q], qry.z[q] };
      leafDistances2(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, n, p,
        Metric::kPeriodic ? periods_ : nullptr, d2.data());
      std::nth_element(d2.begin(), d2.begin() + (k - 1), d2.begin() + n);
      worst = std::max(worst, margin_.widen(double(d2[k - 1])));
    }
    this->rmax2_[c] = std::min(this->rmax2_[c], worst * (1 + kBoundSlack));
  }

private:
  // Widens [lo, hi) over the z-order neighbours until 2K sources are pooled
  // or the plane is exhausted; returns the count.
  Index poolNeighbours(const TreePlane<T>& plane, Index& lo, Index& hi) const
  {
    const Index numLeaves = plane.numNodes();
    const Index k = Index(this->k_);
    Index pooled = plane.numSources(lo);
    while (pooled < 2 * k && (lo > 0 || hi < numLeaves))
    {
      if (hi < numLeaves)
        pooled += plane.numSources(hi++);
      if (pooled < 2 * k && lo > 0)
        pooled += plane.numSources(--lo);
    }
    return pooled;
  }

  const LeafTightening* tighten_;
  FilterMargin margin_; // pre-filter vs exact distances, periodic wrap included
  T periods_[3];
  PerThread<std::vector<T>> scratch_;
  PerThread<char> skipped_;         // the current parent was turned down
  std::vector<double> parentRmax2_; // plane 1's bounds, during the leaf pass
};
} // namespace jz
