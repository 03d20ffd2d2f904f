// The Borůvka round's leaf kernel: for each point of a receiving leaf, its
// lightest edge to a point of another component among the leaf's list,
// ties by (weight, smaller global id, larger global id). A candidate is
// skipped when it cannot beat the point's bound: the leaf's node bound and
// its component's best edge so far, which the kernel lowers as it finds
// edges (so interior points of large components stop almost at once). A
// point skips its search when the lower bound of its lightest edge to another
// component from its last search already exceeds its bound (the other
// components only shrink).
// Source leaves are visited once for all points of the receiving leaf. A
// point's bound is the weight of its choice once it has one, so only the
// other end is stored.
#pragma once

#include <vector>

#include "../walk/PerThread.h"
#include "BoruvkaNodePolicy.h"
#include "CandidateBuffer.h"

namespace jz
{
// Whether edge (w, a, b) precedes (v, c, d) in the total order of weights,
// then the smaller and the larger key of the endpoints.
inline bool edgeLess(double w, GlobalId a, GlobalId b, double v, GlobalId c, GlobalId d)
{
  if (w != v)
    return w < v;
  const GlobalId lo1 = std::min(a, b), lo2 = std::min(c, d);
  if (lo1 != lo2)
    return lo1 < lo2;
  return std::max(a, b) < std::max(c, d);
}

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
    , scratch_(numThreads)
  {
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
    for (const LeafCandidate& entry : list)
    {
      const Index d = entry.node;
      if (d == c)
        continue;
      const Index ld = this->comps_.node[0][d];
      for (Index i = 0; i < nq; ++i)
      {
        const Index q = q0 + i;
        if (entry.low2 > bound[i] || label[q] == ld || pointLow2(q, d) > bound[i])
          continue;
        searchLeaf(q, d, bound[i]);
      }
    }
    // bound[i]: the weight of q's choice, or no edge of q to another
    // component is that light: either way a lower bound for later rounds.
    for (Index i = 0; i < nq; ++i)
      if (bound[i] >= 0)
      {
        const Index q = q0 + i;
        if (!low2.empty())
          low2[q] = std::max(low2[q], roundDown(bound[i]));
        if (choice_[q] != kNoPoint)
          lowerBound(&this->comps_.bound2[label[q]], bound[i]);
      }
  }

private:
  // No edge from point q into source leaf d is lighter than this.
  double pointLow2(Index q, Index d) const
  {
    Box<T> at;
    this->tree_.sources.point(q, at.lo);
    this->tree_.sources.point(q, at.hi);
    const double l = this->weights_.metric.low2(at, this->tree_.planes[0].sourceBox[d]);
    const double* core2 = this->weights_.core2;
    return core2 ? std::max(l, std::max(core2[q], this->weights_.coreMin2[0][d])) : l;
  }

  // q's lightest edge into source leaf d, merged into choice_[q]; bound is
  // the weight of choice_[q] once it is set.
  void searchLeaf(Index q, Index d, double& bound)
  {
    const SortedPoints<T>& pts = this->tree_.sources;
    const TreePlane<T>& leaves = this->tree_.planes[0];
    const std::vector<Index>& label = this->comps_.point;
    const double* core2 = this->weights_.core2;
    const Index lq = label[q];
    T pq[3];
    pts.point(q, pq);
    const double coreQ = core2 ? core2[q] : 0.0;
    Index& best = choice_[q];
    for (Index t = leaves.sourceSplit[d]; t < leaves.sourceSplit[d + 1]; ++t)
    {
      if (label[t] == lq)
        continue;
      T pt[3];
      pts.point(t, pt);
      double w = this->weights_.metric.point2(pq, pt);
      if (core2)
        w = std::max(w, std::max(coreQ, core2[t]));
      if (w > bound)
        continue;
      if (best == kNoPoint || edgeLess(w, keys_[q], keys_[t], bound, keys_[q], keys_[best]))
      {
        best = t;
        bound = w;
      }
    }
  }

  const SourceKeys& keys_;
  std::vector<Index>& choice_;
  PerThread<std::vector<double>> scratch_;
};
} // namespace jz
