// The Borůvka round's leaf kernel: for each point of a receiving leaf, its
// lightest edge to a point of another component among the leaf's list,
// ties by (weight, smaller global id, larger global id). A candidate is
// skipped when it cannot beat the point's bound: the leaf's node bound and
// its component's best edge so far, which the kernel lowers as it finds
// edges (so interior points of large components stop almost at once). A
// point skips its search when the lower bound of its lightest edge to another
// component from its last search already exceeds its bound (the other
// components only shrink).
// Source leaves are visited once for all points of the receiving leaf, in
// the list's order (by lower bound) until it passes every point's bound;
// the points near a source leaf's box, and the source points near a point,
// are picked in the points' precision (vectorized, LeafDistances.h) with
// bounds widened so that none is missed (FilterMargin), and exact weights
// decide. A point's bound is the weight of its choice once it has one, so
// only the other end is stored.
#pragma once

#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "walk/PerThread.h"
#include "emst/BoruvkaNodePolicy.h"
#include "walk/CandidateBuffer.h"
#include "emst/EmstEdgeOrder.h"
#include "walk/LeafDistances.h"

namespace jz
{
template <class T, class Weights>
class BoruvkaLeafSearch : public BoruvkaNodePolicy<T, Weights>
{
  using Base = BoruvkaNodePolicy<T, Weights>;

public:
  BoruvkaLeafSearch(const ZTree<T>& tree, const Weights& weights, BoruvkaComponents<T>& comps,
    const SourceKeys& keys, int numThreads)
    : Base(tree, weights, comps)
    , keys_(keys)
    , choice_(comps.choice)
    , margin_(FilterMargin::of(tree))
    , scratch_(numThreads)
    , candidates_(numThreads)
    , active_(numThreads)
    , filters_(numThreads)
  {
    for (int d = 0; d < 3; ++d)
      periods_[d] = T(tree.periodicity.length[d]);
  }

  void consumeLeaf(Index c, const LeafList& list)
  {
    const TreePlane<T>& leaves = this->tree_.planes[0];
    const Index q0 = leaves.sourceSplit[c], nq = leaves.sourceSplit[c + 1] - q0;
    std::vector<double>& bound = scratch_.mine();
    bound.assign(nq, 0.0);
    const double leafBound = this->bound2(0, c);
    const double* core2 = this->weights_.core2;
    const std::vector<Index>& label = this->comps_.point;
    std::vector<float>& low2 = this->comps_.low2;
    for (Index i = 0; i < nq; ++i)
    {
      const Index q = q0 + i;
      if (choice_[q] != kNoPoint)
      {
        bound[i] = -1; // settled: its edge of the last round stands
        continue;
      }
      bound[i] = std::min(leafBound, loadBound(&this->comps_.bound2[label[q]]));
      if ((core2 && core2[q] > bound[i]) || (!low2.empty() && low2[q] > bound[i]))
        bound[i] = -1; // every edge of q is heavier than its component's best
    }
    // The own leaf first: its points give tight bounds for the rest.
    if (this->comps_.node[0][c] == kMixed)
      for (Index i = 0; i < nq; ++i)
        if (bound[i] >= 0)
          searchLeaf(q0 + i, c, bound[i]);
    searchList(c, list, bound);
    // bound[i]: the weight of q's choice, or no edge of q to another
    // component is that light: either way a lower bound for later rounds.
    for (Index i = 0; i < nq; ++i)
      if (bound[i] >= 0)
      {
        const Index q = q0 + i;
        if (!low2.empty())
          low2[q] = std::max(low2[q], roundDownToFloat(bound[i]));
        if (choice_[q] != kNoPoint)
          lowerBound(&this->comps_.bound2[label[q]], bound[i]);
      }
  }

private:
  // The list's source leaves (sorted by lower bound) for the points near
  // each one's box, until the list passes every point's bound.
  void searchList(Index c, const LeafList& list, std::vector<double>& bound)
  {
    const TreePlane<T>& leaves = this->tree_.planes[0];
    const SortedPoints<T>& pts = this->tree_.sources;
    const std::vector<Index>& label = this->comps_.point;
    const Index q0 = leaves.sourceSplit[c], nq = leaves.sourceSplit[c + 1] - q0;
    std::vector<T>& filter2 = filters_.mine();
    std::vector<Index>& active = active_.mine();
    if (filter2.size() < std::size_t(nq) + kSimdPadding)
    {
      filter2.resize(std::size_t(nq) + kSimdPadding);
      active.resize(std::size_t(nq) + kSimdPadding);
    }
    for (Index i = 0; i < nq; ++i)
      filter2[i] = filterOf(bound[i]);
    double reach = -1;
    for (Index i = 0; i < nq; ++i)
      reach = std::max(reach, bound[i]);
    const T* periods = Metric::kPeriodic ? periods_ : nullptr;
    for (const LeafCandidate& entry : list)
    {
      if (entry.low2 > reach)
        break;
      const Index d = entry.node;
      if (d == c)
        continue;
      const Index ld = this->comps_.node[0][d];
      const Box<T>& box = leaves.sourceBox[d];
      const Index near = queriesNearBox(pts.x.data() + q0, pts.y.data() + q0, pts.z.data() + q0,
        nq, box.lo, box.hi, periods, filter2.data(), active.data());
      bool lowered = false;
      for (Index a = 0; a < near; ++a)
      {
        const Index i = active[a], q = q0 + i;
        if (label[q] == ld || entry.low2 > bound[i])
          continue;
        const double before = bound[i];
        searchLeaf(q, d, bound[i]);
        if (bound[i] != before)
        {
          filter2[i] = filterOf(bound[i]);
          lowered = true;
        }
      }
      if (lowered)
      {
        reach = -1;
        for (Index i = 0; i < nq; ++i)
          reach = std::max(reach, bound[i]);
      }
    }
  }

  // The pre-filter threshold of a bound (negative: the point searches not).
  T filterOf(double b) const
  {
    if (b < 0)
      return T(-1);
    return b < 1e30 ? T(margin_.widen(b)) : std::numeric_limits<T>::max();
  }

  // q's lightest edge into source leaf d, merged into choice_[q]; bound is
  // the weight of choice_[q] once it is set. Only the leaf's points within
  // the widened bound are looked at (label, exact weight).
  void searchLeaf(Index q, Index d, double& bound)
  {
    const SortedPoints<T>& pts = this->tree_.sources;
    const TreePlane<T>& leaves = this->tree_.planes[0];
    const std::vector<Index>& label = this->comps_.point;
    const double* core2 = this->weights_.core2;
    const Index lq = label[q];
    const Index s0 = leaves.sourceSplit[d], m = leaves.sourceSplit[d + 1] - s0;
    std::vector<Index>& cand = candidates_.mine();
    if (cand.size() < std::size_t(m) + kSimdPadding)
      cand.resize(std::size_t(m) + kSimdPadding);
    T pq[3];
    pts.point(q, pq);
    const T filter2 = filterOf(bound);
    const Index found = leafCandidates(pts.x.data() + s0, pts.y.data() + s0, pts.z.data() + s0, m,
      pq, Metric::kPeriodic ? periods_ : nullptr, filter2, cand.data());
    const double coreQ = core2 ? core2[q] : 0.0;
    Index& best = choice_[q];
    for (Index j = 0; j < found; ++j)
    {
      const Index t = s0 + cand[j];
      if (label[t] == lq)
        continue;
      T pt[3];
      pts.point(t, pt);
      double w = this->weights_.metric.point2(pq, pt);
      if (core2)
        w = std::max(w, std::max(coreQ, core2[t]));
      if (w > bound)
        continue;
      if (best == kNoPoint || emstEdgeLess(w, keys_[q], keys_[t], bound, keys_[q], keys_[best]))
      {
        best = t;
        bound = w;
      }
    }
  }

  using Metric = std::decay_t<decltype(std::declval<Weights>().metric)>;

  const SourceKeys& keys_;
  std::vector<Index>& choice_;
  FilterMargin margin_;
  T periods_[3] = {};
  PerThread<std::vector<double>> scratch_;
  PerThread<std::vector<Index>> candidates_, active_;
  PerThread<std::vector<T>> filters_;
};
} // namespace jz
