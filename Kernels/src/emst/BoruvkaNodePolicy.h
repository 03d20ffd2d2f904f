// One Borůvka round of the EMST on the node planes, as a policy of the walk
// engine (doc/ARCHITECTURE.md, "The walk engine"; ArborX EMST paper §3):
// query-centric, sorted lists. Per receiver parent, each child gets an upper
// bound of the lightest edge that can still matter for it: its parent's, its
// component's best edge so far, and d_up to every source node that surely
// holds a point of another component (FindRmax of §III-B with K = 1). A pair
// is pruned when both nodes lie wholly in one component or its lower bound
// exceeds the receiver's bound. The leaf kernel is BoruvkaLeafSearch.h.
#pragma once

#include <algorithm>
#include <vector>

#include "walk/WalkPolicy.h"
#include "emst/BoruvkaComponents.h"

namespace jz
{
// Squared edge weights and their node bounds: Euclidean, or mutual
// reachability max(core_a^2, core_b^2, d^2) with per-node core extremes.
template <class T, class Metric>
struct BoruvkaWeights
{
  const ZTree<T>& tree;
  Metric metric;
  const double* core2 = nullptr;                       // per sorted point; nullptr = Euclidean
  std::vector<std::vector<double>> coreMin2, coreMax2; // per plane and node

  BoruvkaWeights(const ZTree<T>& t, const Metric& m, const double* sortedCore2)
    : tree(t)
    , metric(m)
    , core2(sortedCore2)
  {
    if (core2)
      nodeCoreExtremes();
  }

  double low2(int p, Index c, Index d) const
  {
    const double l = metric.low2(tree.planes[p].sourceBox[c], tree.planes[p].sourceBox[d]);
    return core2 ? std::max(l, std::max(coreMin2[p][c], coreMin2[p][d])) : l;
  }
  double high2(int p, Index c, Index d) const
  {
    const double h = metric.high2(tree.planes[p].sourceBox[c], tree.planes[p].sourceBox[d]);
    return core2 ? std::max(h, std::max(coreMax2[p][c], coreMax2[p][d])) : h;
  }

private:
  void nodeCoreExtremes()
  {
    const std::size_t planes = tree.planes.size();
    coreMin2.resize(planes);
    coreMax2.resize(planes);
    for (std::size_t p = 0; p < planes; ++p)
    {
      const TreePlane<T>& plane = tree.planes[p];
      const Index nodes = plane.numNodes();
      const Index* split = p == 0 ? plane.sourceSplit.data() : plane.childSplit.data();
      const double* lo = p == 0 ? core2 : coreMin2[p - 1].data();
      const double* hi = p == 0 ? core2 : coreMax2[p - 1].data();
      coreMin2[p].assign(nodes, kInfinity);
      coreMax2[p].assign(nodes, 0.0);
      for (Index j = 0; j < nodes; ++j)
        for (Index i = split[j]; i < split[j + 1]; ++i)
        {
          coreMin2[p][j] = std::min(coreMin2[p][j], lo[i]);
          coreMax2[p][j] = std::max(coreMax2[p][j], hi[i]);
        }
    }
  }
};

template <class T, class Weights>
class BoruvkaNodePolicy : public WalkPolicyDefaults
{
public:
  static constexpr bool kSortedLists = true;

  BoruvkaNodePolicy(const ZTree<T>& tree, const Weights& weights, BoruvkaComponents<T>& comps)
    : tree_(tree)
    , weights_(weights)
    , comps_(comps)
    , bound2_(tree.planes.size())
  {
  }

  void beginPlane(int p) { bound2_[p].assign(tree_.planes[p].numNodes(), kInfinity); }

  double beginParent(const ParentView& parent)
  {
    const int p = parent.plane;
    const std::vector<Index>& label = comps_.node[p];
    const bool top = p + 1 == int(tree_.planes.size());
    const double inherited = top ? comps_.maxWeight2 : bound2_[p + 1][parent.parent];
    std::vector<double>& b = bound2_[p];
    double reach2 = 0;
    for (Index c = parent.childBegin; c < parent.childEnd; ++c)
    {
      b[c] = inherited;
      if (label[c] != kMixed && label[c] != kEmptyNode)
        b[c] = std::min(b[c], loadBound(&comps_.bound2[label[c]]));
      else if (p == 0 && label[c] == kMixed)
        b[c] = std::min(b[c], leafComponentsBound2(c));
      if (!comps_.searching[p][c])
        b[c] = -1; // no point below c searches this round
      reach2 = std::max(reach2, b[c]);
    }
    for (std::size_t e = 0; e < parent.numEntries && !(parent.entryLow2(e) > reach2); ++e)
    {
      const Index q = parent.source[e];
      for (Index d = parent.firstChild(q); d < parent.endChild(q); ++d)
        if (label[d] != kEmptyNode)
          boundBySource(p, parent.childBegin, parent.childEnd, d);
      reach2 = 0;
      for (Index c = parent.childBegin; c < parent.childEnd; ++c)
        if (label[c] != kEmptyNode)
          reach2 = std::max(reach2, b[c]);
    }
    return reach2;
  }

  template <class Context>
  bool childMeetsEntry(int p, Index c, Index, double entryLow2, const Context&) const
  {
    return !(entryLow2 > bound2_[p][c]);
  }

  template <class Context>
  PairVerdict testPair(int p, Index c, Index d, const Context&, double& low2) const
  {
    const Index lc = comps_.node[p][c];
    if (lc != kMixed && lc == comps_.node[p][d])
      return PairVerdict::Prune; // one component: no edge of the round
    low2 = weights_.low2(p, c, d);
    return low2 > bound2_[p][c] ? PairVerdict::Prune : PairVerdict::Keep;
  }

  double bound2(int p, Index c) const { return bound2_[p][c]; }

protected:
  // A leaf's points need no edge heavier than the largest best edge so far
  // of the components they belong to.
  double leafComponentsBound2(Index c) const
  {
    const std::vector<Index>& split = tree_.planes[0].sourceSplit;
    double b = 0;
    for (Index q = split[c]; q < split[c + 1]; ++q)
      b = std::max(b, loadBound(&comps_.bound2[comps_.point[q]]));
    return b;
  }

  // Source node d bounds receiver c when it surely holds a point of another
  // component than each of c's points: a mixed d for any c, a pure d for a
  // pure c of another component.
  void boundBySource(int p, Index c0, Index c1, Index d)
  {
    const std::vector<Index>& label = comps_.node[p];
    std::vector<double>& b = bound2_[p];
    const Index ld = label[d];
    for (Index c = c0; c < c1; ++c)
    {
      const Index lc = label[c];
      if (lc == kEmptyNode || (ld != kMixed && (lc == kMixed || lc == ld)))
        continue;
      const double h = weights_.high2(p, c, d);
      if (h < b[c])
        b[c] = h;
    }
  }

  const ZTree<T>& tree_;
  const Weights& weights_;
  BoruvkaComponents<T>& comps_;
  std::vector<std::vector<double>> bound2_; // per plane and node, this round
};
} // namespace jz
