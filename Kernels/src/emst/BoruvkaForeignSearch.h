// The Borůvka search for queries that are not the tree's own points (the
// distributed EMST's boundary queries, distributed/EmstBoundarySearch.cpp),
// as a policy of the walk engine on a tree with separate queries and
// sources: per query, its lightest edge to a source of another component
// with weight at most the query's bound (inclusive), ties by (weight, smaller
// id, larger id). Query-centric, sorted lists. A pair is pruned when both
// nodes lie wholly in one component, or when its lower bound (box distance,
// max'ed with both nodes' smallest core distances) exceeds the largest bound
// of the receiver's queries. Weights are the serial EMST's (Metric::point2,
// max'ed with both core distances); the order is EmstEdgeOrder.h's.
#pragma once

#include <algorithm>
#include <vector>

#include "walk/WalkPolicy.h"
#include "emst/EmstEdgeOrder.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

namespace jz
{
// Per sorted point of one type of the tree (queries or sources): global id,
// component label (a global id) and squared core distance (empty: Euclidean).
struct ForeignSide
{
  std::vector<GlobalId> id, label;
  std::vector<double> core2;
};

// A query's lightest edge: the sorted source index of its other end, or none.
struct ForeignEdge
{
  Index source = Index(-1);
  double weight2 = 0;
  bool found() const { return source != Index(-1); }
};

template <class T, class Metric>
class BoruvkaForeignSearch : public WalkPolicyDefaults
{
public:
  static constexpr bool kSortedLists = true;

  // bound2: per sorted query. found: per sorted query, written by the walk.
  BoruvkaForeignSearch(const ZTree<T>& tree, const Metric& metric, const ForeignSide& queries,
    const std::vector<double>& bound2, const ForeignSide& sources, std::vector<ForeignEdge>& found)
    : tree_(tree)
    , metric_(metric)
    , queries_(queries)
    , bound2_(bound2)
    , sources_(sources)
    , found_(found)
  {
    found_.assign(bound2.size(), ForeignEdge{});
    nodeLabels(queries.label, &TreePlane<T>::querySplit, queryLabel_);
    nodeLabels(sources.label, &TreePlane<T>::sourceSplit, sourceLabel_);
    nodeExtremes(bound2, &TreePlane<T>::querySplit, -1.0, true, queryBound2_);
    if (!queries.core2.empty())
    {
      nodeExtremes(queries.core2, &TreePlane<T>::querySplit, kInfinity, false, queryCore2_);
      nodeExtremes(sources.core2, &TreePlane<T>::sourceSplit, kInfinity, false, sourceCore2_);
    }
  }

  double beginParent(const ParentView& parent) const
  {
    double reach2 = -1;
    for (Index c = parent.childBegin; c < parent.childEnd; ++c)
      reach2 = std::max(reach2, queryBound2_[parent.plane][c]);
    return reach2;
  }

  template <class Context>
  bool childMeetsEntry(int p, Index c, Index, double entryLow2, const Context&) const
  {
    return !(entryLow2 > queryBound2_[p][c]);
  }

  template <class Context>
  PairVerdict testPair(int p, Index c, Index d, const Context&, double& low2) const
  {
    const GlobalId lc = queryLabel_[p][c];
    if (lc >= 0 && lc == sourceLabel_[p][d])
      return PairVerdict::Prune; // one component: no edge
    low2 = metric_.low2(tree_.queryBox(p, c), tree_.planes[p].sourceBox[d]);
    if (!queryCore2_.empty())
      low2 = std::max(low2, std::max(queryCore2_[p][c], sourceCore2_[p][d]));
    return low2 > queryBound2_[p][c] ? PairVerdict::Prune : PairVerdict::Keep;
  }

  void consumeLeaf(Index c, const LeafList& list)
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    for (Index q = leaves.querySplit[c]; q < leaves.querySplit[c + 1]; ++q)
      searchQuery(q, list);
  }

private:
  static constexpr GlobalId kMixedLabel = -1, kNoLabel = -2;

  // Query q's lightest edge among the list's source leaves (by lower bound).
  void searchQuery(Index q, const LeafList& list)
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    const GlobalId label = queries_.label[q];
    const double core = queries_.core2.empty() ? 0.0 : queries_.core2[q];
    double bound = bound2_[q];
    if (core > bound)
      return;
    T pq[3];
    tree_.queries.point(q, pq);
    ForeignEdge& best = found_[q];
    for (const LeafCandidate& entry : list)
    {
      if (entry.low2 > bound)
        break;
      const Index d = entry.node;
      if (sourceLabel_[0][d] == label ||
        pointBoxDistance2(pq, leaves.sourceBox[d], tree_.periodicity) > bound)
        continue;
      for (Index s = leaves.sourceSplit[d]; s < leaves.sourceSplit[d + 1]; ++s)
      {
        if (sources_.label[s] == label)
          continue;
        T ps[3];
        tree_.sources.point(s, ps);
        double w = metric_.point2(pq, ps);
        if (!sources_.core2.empty())
          w = std::max(w, std::max(core, sources_.core2[s]));
        if (w > bound)
          continue;
        const GlobalId id = queries_.id[q];
        if (!best.found() ||
          emstEdgeLess(w, id, sources_.id[s], best.weight2, id, sources_.id[best.source]))
        {
          best = ForeignEdge{ s, w };
          bound = w;
        }
      }
    }
  }

  // Per plane and node, a fold over its points of one type (split: the
  // queries' or the sources'), from `none`: fold(v, i) takes point i into v
  // and says whether v is settled (the rest of the node's points are skipped).
  template <class V, class Fold>
  void perNode(std::vector<Index> TreePlane<T>::*split, V none, Fold fold,
    std::vector<std::vector<V>>& out) const
  {
    out.resize(tree_.planes.size());
    for (std::size_t p = 0; p < tree_.planes.size(); ++p)
    {
      const TreePlane<T>& plane = tree_.planes[p];
      const std::vector<Index>& s = plane.*split;
      out[p].assign(plane.numNodes(), none);
      for (Index j = 0; j < plane.numNodes(); ++j)
        for (Index i = s[j]; i < s[j + 1] && !fold(out[p][j], i); ++i)
        {
        }
    }
  }

  // Per plane and node: the one label of its points, kMixedLabel, or
  // kNoLabel (no point of that type).
  void nodeLabels(const std::vector<GlobalId>& label, std::vector<Index> TreePlane<T>::*split,
    std::vector<std::vector<GlobalId>>& out) const
  {
    perNode(
      split, kNoLabel,
      [&](GlobalId& v, Index i)
      {
        v = v == kNoLabel || v == label[i] ? label[i] : kMixedLabel;
        return v == kMixedLabel;
      },
      out);
  }

  // Per plane and node: the largest (or smallest) value of its points, or
  // `none` when it has no point of that type.
  void nodeExtremes(const std::vector<double>& value, std::vector<Index> TreePlane<T>::*split,
    double none, bool largest, std::vector<std::vector<double>>& out) const
  {
    perNode(
      split, none,
      [&](double& v, Index i)
      {
        v = largest ? std::max(v, value[i]) : std::min(v, value[i]);
        return false;
      },
      out);
  }

  const ZTree<T>& tree_;
  Metric metric_;
  const ForeignSide& queries_;
  const std::vector<double>& bound2_;
  const ForeignSide& sources_;
  std::vector<ForeignEdge>& found_;
  std::vector<std::vector<GlobalId>> queryLabel_, sourceLabel_;
  std::vector<std::vector<double>> queryBound2_, queryCore2_, sourceCore2_;
};
} // namespace jz
