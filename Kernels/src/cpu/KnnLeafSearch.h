// The kNN leaf kernel (LeafToLeaf of §III-B) as the leaf
// hook of the kNN walk policy: for one receiving leaf and its sorted list,
// the exact K nearest sources of each of its query points, handed to
// reduce(sortedQueryIndex, candidates).
//
// Each query first gets a radius that provably holds K sources (the K-th
// distance to its own leaf's points), so survivors of the distance filter
// are few; the source leaves of the list are visited once for all queries of
// the leaf, so their points stay in cache.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "CandidateBuffer.h"
#include "KnnNodePolicy.h"
#include "LeafDistances.h"

namespace jz
{
template <class T, class Metric, class Reduce>
class KnnLeafSearch : public KnnNodePolicy<T, Metric>
{
  using Base = KnnNodePolicy<T, Metric>;

public:
  // Query points with an input index at or above queryLimit only act as
  // sources; sortedNeighbors asks for each result list in order.
  KnnLeafSearch(const ZTree<T>& tree, int k, const Metric& metric, int numThreads,
    const SourceKeys* keys, bool sortedNeighbors, Index queryLimit, Reduce& reduce)
    : Base(tree, k, metric, numThreads)
    , keys_(keys)
    , sorted_(sortedNeighbors)
    , queryLimit_(queryLimit)
    , reduce_(reduce)
    , margin_(FilterMargin::of(tree))
    , scratch_(numThreads)
  {
    const Periodicity& per = tree.periodicity;
    for (int d = 0; d < 3; ++d)
      periods_[d] = T(per.length[d]);
  }

  void consumeLeaf(Index c, const LeafList& list)
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    const Index q0 = plane.querySplit[c], nq = plane.querySplit[c + 1] - q0;
    Scratch& s = scratch_.mine();
    s.reserve(nq);
    initBuffers(c, q0, nq, s);
    const double leafBound2 = initFilters(q0, nq, s);
    for (const LeafCandidate& entry : list)
    {
      if (entry.low2 > leafBound2)
        break; // sorted: nothing closer follows
      searchSourceLeaf(entry.node, q0, nq, s);
    }
    for (Index q = 0; q < nq; ++q)
    {
      if (isSourceOnly(q0 + q))
        continue;
      s.buffers[q].finish(sorted_);
      reduce_(q0 + q, s.buffers[q]);
    }
  }

private:
  struct Scratch
  {
    std::vector<CandidateBuffer> buffers; // one per query point of the leaf
    std::vector<double> bound2;
    std::vector<T> filter2;
    std::vector<Index> active;
    std::vector<T> ownD2;
    std::vector<Index> survivors;
    void reserve(Index nq)
    {
      if (buffers.size() < nq)
      {
        buffers.resize(nq);
        bound2.resize(nq);
        filter2.resize(nq + kSimdPadding);
        active.resize(nq);
      }
    }
  };

  const T* periodsOrNull() const { return Metric::kPeriodic ? periods_ : nullptr; }
  bool isSourceOnly(Index sortedQuery) const
  {
    return this->tree_.queryPoints().inputIndex[sortedQuery] >= queryLimit_;
  }

  // The node bound, tightened per query by the K-th smallest
  // (filter-precision) distance to the points of its own leaf, with the
  // filter's margin.
  void initBuffers(Index c, Index q0, Index nq, Scratch& s)
  {
    const int k = this->k_;
    const double leafRmax2 = this->rmax2_[c];
    for (Index q = 0; q < nq; ++q)
    {
      s.buffers[q].init(k, leafRmax2, keys_);
      s.bound2[q] = leafRmax2 * (1 + kBoundSlack);
    }
    const TreePlane<T>& plane = this->tree_.planes[0];
    const Index ownCount = plane.numSources(c);
    if (ownCount < Index(k))
      return;
    const SortedPoints<T>& src = this->tree_.sources;
    const SortedPoints<T>& qry = this->tree_.queryPoints();
    const Index s0 = plane.sourceSplit[c];
    if (s.ownD2.size() < ownCount)
      s.ownD2.resize(ownCount);
    for (Index q = 0; q < nq; ++q)
    {
      if (isSourceOnly(q0 + q))
        continue;
      const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
      leafDistances2(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, ownCount, p,
        periodsOrNull(), s.ownD2.data());
      std::nth_element(s.ownD2.begin(), s.ownD2.begin() + (k - 1), s.ownD2.begin() + ownCount);
      s.buffers[q].setBound2(margin_.widen(double(s.ownD2[k - 1])));
      s.bound2[q] = s.buffers[q].bound2() * (1 + kBoundSlack);
    }
  }

  // Filter radii in the points' precision with a generous margin (survivors
  // are ranked by their exact double distance). Returns the largest bound.
  double initFilters(Index q0, Index nq, Scratch& s) const
  {
    double leafBound2 = 0;
    for (Index q = 0; q < nq; ++q)
    {
      const double w2 = s.bound2[q];
      s.filter2[q] = w2 < 1e30 ? T(margin_.widen(w2)) : std::numeric_limits<T>::max();
      if (isSourceOnly(q0 + q))
        s.filter2[q] = T(-1); // a source only
      else
        leafBound2 = std::max(leafBound2, w2);
    }
    return leafBound2;
  }

  // The points of one source leaf against the queries near its box.
  void searchSourceLeaf(Index leaf, Index q0, Index nq, Scratch& s)
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    const SortedPoints<T>& src = this->tree_.sources;
    const SortedPoints<T>& qry = this->tree_.queryPoints();
    const Box<T>& box = plane.sourceBox[leaf];
    const Index s0 = plane.sourceSplit[leaf], n = plane.sourceSplit[leaf + 1] - s0;
    if (s.survivors.size() < n)
      s.survivors.resize(n);
    const Index numActive = queriesNearBox(qry.x.data() + q0, qry.y.data() + q0, qry.z.data() + q0,
      nq, box.lo, box.hi, periodsOrNull(), s.filter2.data(), s.active.data());
    for (Index a = 0; a < numActive; ++a)
    {
      const Index q = s.active[a];
      const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
      const Index m = leafCandidates(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, n, p,
        periodsOrNull(), s.filter2[q], s.survivors.data());
      CandidateBuffer& buffer = s.buffers[q];
      const double before = buffer.bound2();
      for (Index j = 0; j < m; ++j)
      {
        const Index si = s0 + s.survivors[j];
        const T sp[3] = { src.x[si], src.y[si], src.z[si] };
        buffer.push(this->metric_.point2(p, sp), si);
      }
      if (buffer.bound2() < before)
      {
        const double w2 = buffer.bound2() * (1 + kBoundSlack);
        s.filter2[q] = T(margin_.widen(w2));
      }
    }
  }

  const SourceKeys* keys_;
  bool sorted_;
  Index queryLimit_;
  Reduce& reduce_;
  FilterMargin margin_; // pre-filter vs exact distances, periodic wrap included
  T periods_[3];
  PerThread<Scratch> scratch_;
};
} // namespace jz
