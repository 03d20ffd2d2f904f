// The friends-of-friends walk's node planes as a policy of the dual-walk
// engine (§IV-A), visiting each unordered node pair once.
//
// Per plane every node carries a group pointer grp[i] <= i into its own plane
// and a flag linked[i] meaning "all points of the node are known to be in one
// group". Node-level groups only join linked nodes, so nodes of one
// node-level group hold points of one FoF group.
//  - beginPlane, ParentToNode (eq. 19): a child of a linked parent points at
//    the first child of its parent's root and is linked; other children are
//    their own root and linked when their box diagonal is at most l.
//  - testPair, NodeToNode: prune (same group, or d_low > l), accept = link
//    whole (d_up <= l) with a lock-free union, or keep for the plane below.
//  - endPlane: contraction of the plane's pointers.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "fof/FofContraction.h"
#include "fof/FofPairVerdict.h"
#include "jz/FofLinking.h"
#include "jz/Tree.h"
#include "walk/WalkPolicy.h"

namespace jz
{
// Node-level state of one plane.
struct FofPlaneGroups
{
  std::vector<Index> grp;
  std::vector<std::uint8_t> linked;
};

template <class T>
class FofNodePolicy : public WalkPolicyDefaults
{
public:
  static constexpr bool kUnorderedPairs = true;

  // Per entry (P, Q): the nearest-image modes of the parent pair, which hold
  // for its children's pairs, and Q's box for a first test of each child.
  struct EntryContext
  {
    int mode[3] = { kFofMixed, kFofMixed, kFofMixed };
    const Box<T>* sourceParentBox = nullptr; // none at the super nodes
    bool sameParent = false;
  };

  // planeDone(p) runs after each plane below the top (progress; may throw).
  FofNodePolicy(
    const ZTree<T>& tree, double linkingLength, int numThreads, std::function<void(int)> planeDone)
    : tree_(tree)
    , per_(tree.periodicity)
    , l2_(linkingLength * linkingLength)
    , numThreads_(numThreads)
    , top_(int(tree.planes.size()) - 1)
    , planeDone_(std::move(planeDone))
  {
  }

  void beginPlane(int p)
  {
    if (p == top_)
    {
      initPlaneRoots(tree_.planes[p], current_);
      return;
    }
    std::swap(parent_, current_);
    parentToNode(tree_.planes[p + 1], tree_.planes[p]);
  }

  void endPlane(int p, std::size_t)
  {
    const Index n = Index(current_.grp.size());
    contractGroups(current_.grp.data(), n, n > kSerialBelow ? numThreads_ : 1);
    if (p < top_ && planeDone_)
      planeDone_(p);
  }

  bool enterEntry(int p, Index P, Index Q, EntryContext& context) const
  {
    if (p == top_)
      return true; // the super nodes: no parent state, general image logic
    // The parent plane's contraction may have decided the pair since it was
    // kept.
    const std::uint8_t lp = parent_.linked[P];
    if (P == Q ? lp : (lp && parent_.linked[Q] && parent_.grp[P] == parent_.grp[Q]))
      return false;
    const TreePlane<T>& up = tree_.planes[p + 1];
    for (int d = 0; d < 3; ++d)
      context.mode[d] = fofImageMode(up.sourceBox[P], up.sourceBox[Q], d, per_.length[d]);
    context.sourceParentBox = &up.sourceBox[Q];
    context.sameParent = P == Q;
    return true;
  }

  // Child c against the whole source parent first.
  bool childMeetsEntry(int p, Index c, Index, double, const EntryContext& context) const
  {
    return !context.sourceParentBox || context.sameParent ||
      classifyFofPairModes(tree_.planes[p].sourceBox[c], *context.sourceParentBox, context.mode,
        l2_, per_) != FofPairAction::Discard;
  }

  PairVerdict testPair(int p, Index c, Index d, const EntryContext& context, double&)
  {
    Index* grp = current_.grp.data();
    const std::uint8_t* linked = current_.linked.data();
    if (c == d)
      return loadFlag(linked, c) ? PairVerdict::Prune : PairVerdict::Keep;
    if (loadFlag(linked, c) && loadFlag(linked, d) && fofFind(grp, c) == fofFind(grp, d))
      return PairVerdict::Prune;
    const TreePlane<T>& plane = tree_.planes[p];
    return fofPairVerdict(
      classifyFofPairModes(plane.sourceBox[c], plane.sourceBox[d], context.mode, l2_, per_));
  }

  // Every point pair of (c, d) is within l: one group.
  void accept(int, Index c, Index d, const EntryContext&)
  {
    std::uint8_t* linked = current_.linked.data();
    fofUnion(current_.grp.data(), c, d);
    if (!loadFlag(linked, c))
      setFlag(linked, c);
    if (!loadFlag(linked, d))
      setFlag(linked, d);
  }

  // The groups of the last plane walked (the leaves after walkDownTo(0)).
  FofPlaneGroups& groups() { return current_; }

private:
  // Node loops shorter than this run on the calling thread.
  static constexpr Index kSerialBelow = 16384;

  static std::uint8_t loadFlag(const std::uint8_t* f, Index i)
  {
    return __atomic_load_n(f + i, __ATOMIC_RELAXED);
  }
  static void setFlag(std::uint8_t* f, Index i)
  {
    __atomic_store_n(f + i, std::uint8_t(1), __ATOMIC_RELAXED);
  }

  bool selfLinked(const TreePlane<T>& plane, Index i) const
  {
    return plane.numSources(i) > 0 && fofSelfLinked(plane.sourceBox[i], l2_, per_);
  }

  void initPlaneRoots(const TreePlane<T>& plane, FofPlaneGroups& out) const
  {
    const Index n = plane.numNodes();
    out.grp.resize(n);
    out.linked.resize(n);
#pragma omp parallel for num_threads(numThreads_) schedule(static) if (n > kSerialBelow)
    for (long long i = 0; i < (long long)n; ++i)
    {
      out.grp[i] = Index(i);
      out.linked[i] = selfLinked(plane, Index(i));
    }
  }

  // Eq. 19, from parent_ (plane p + 1) into current_ (plane p).
  void parentToNode(const TreePlane<T>& up, const TreePlane<T>& plane)
  {
    const Index n = plane.numNodes();
    const Index np = up.numNodes();
    current_.grp.resize(n);
    current_.linked.resize(n);
#pragma omp parallel for num_threads(numThreads_) schedule(static) if (n > kSerialBelow)
    for (long long P = 0; P < (long long)np; ++P)
    {
      const Index c0 = up.childSplit[P], c1 = up.childSplit[P + 1];
      const bool linked = parent_.linked[P];
      const Index root = linked ? up.childSplit[parent_.grp[P]] : 0;
      for (Index i = c0; i < c1; ++i)
      {
        current_.grp[i] = linked ? root : i;
        current_.linked[i] = linked || selfLinked(plane, i);
      }
    }
  }

  const ZTree<T>& tree_;
  Periodicity per_;
  double l2_;
  int numThreads_;
  int top_;
  std::function<void(int)> planeDone_;
  FofPlaneGroups parent_, current_;
};
} // namespace jz
