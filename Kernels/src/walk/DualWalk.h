// The dual tree walk on the z-order planes (jz-tree paper §III-B, Algorithm
// 1), shared by every algorithm on the tree: kNN, FoF, and what comes next.
// A policy (WalkPolicy.h) supplies the node-pair test, the leaf kernel and
// the per-node state; the engine owns the traversal:
//  - the super-node level above the top plane (SuperNodes.h);
//  - level by level, each receiver parent's list expanded to its children's
//    lists: every child pair under an entry is tested once and kept, accepted
//    or pruned (Algorithm 2, in one pass: the test may have side effects);
//  - the leaf pass: per parent of the leaves, its leaves' lists are built and
//    handed to the leaf kernel at once, never stored whole.
// Threads: one receiver parent at a time per thread, so a query-centric
// policy owns its receiver children's state without atomics.
// doc/ARCHITECTURE.md, "The walk engine", shows how a new walk plugs in.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <omp.h>

#include "InteractionList.h"
#include "SuperNodes.h"
#include "WalkPolicy.h"
#include "jz/Backend.h"
#include "jz/Tree.h"

namespace jz
{
template <class T, class Policy>
class DualWalk
{
public:
  // The interaction list of one level's nodes, and their children on the
  // plane below. Level numPlanes() is the super-node level.
  struct Level
  {
    int plane;
    InteractionList list;
    const Index* childSplit; // node i's children: [childSplit[i], childSplit[i + 1])
  };

  DualWalk(const ZTree<T>& tree, Policy& policy, int numThreads, RunInfo* info = nullptr)
    : tree_(tree)
    , policy_(policy)
    , numThreads_(std::max(1, numThreads))
    , info_(info)
  {
    const int planes = numPlanes();
    superSplit_ = superNodeSplit(planes > 0 ? tree.planes[planes - 1].numNodes() : 0);
  }

  int numPlanes() const { return int(tree_.planes.size()); }

  // Algorithm 1 lines 1-2: the super nodes and their list.
  Level top() const
  {
    const Index superNodes = Index(superSplit_.size() - 1);
    return Level{ numPlanes(),
      superNodeList(superNodes, Policy::kUnorderedPairs, Policy::kSortedLists),
      superSplit_.data() };
  }

  // Algorithm 1 line 4: the list of plane up.plane - 1 from the level above.
  Level descend(const Level& up)
  {
    const int p = up.plane - 1;
    policy_.beginPlane(p);
    Level out{ p, buildPlaneList(up), p > 0 ? tree_.planes[p].childSplit.data() : nullptr };
    if (info_)
      info_->counters.emplace_back(
        "interactions plane " + std::to_string(p), double(out.list.size()));
    policy_.endPlane(p, out.list.size());
    return out;
  }

  // From the super nodes down to `plane` (0 <= plane <= numPlanes()).
  Level walkDownTo(int plane)
  {
    Level level = top();
    while (level.plane > plane)
      level = descend(level);
    return level;
  }

  // Algorithm 1 line 6, fused per parent: for each node of `parents` (the
  // level above the leaves) its leaves' lists are built and each handed to
  // policy.consumeLeaf(leaf, list) on the same thread. `progress` (fraction
  // of leaves done; false = abort) is called from the calling thread only
  // (thread 0), at least once at the end; an abort throws Aborted after the
  // pass.
  void leafPass(const Level& parents, const std::function<bool(double)>& progress = {})
  {
    policy_.beginPlane(0);
    const Index numParents = parents.list.numReceivers();
    const Index numLeaves = tree_.planes[0].numNodes();
    std::atomic<Index> done(0);
    std::atomic<bool> aborted(false);
#pragma omp parallel num_threads(numThreads_)
    {
      Pending pending;
#pragma omp for schedule(dynamic, 1)
      for (long long P = 0; P < (long long)numParents; ++P)
      {
        if (aborted.load(std::memory_order_relaxed))
          continue;
        expandParent(parents, Index(P), pending, Policy::kLeafLists);
        consumeLeaves(pending);
        const Index count = pending.childEnd - pending.childBegin;
        const Index finished = done.fetch_add(count, std::memory_order_relaxed) + count;
        if (progress && omp_get_thread_num() == 0 && !progress(double(finished) / numLeaves))
          aborted = true;
      }
    }
    // The calling thread reports once more: it may have got no parent at all.
    if (!aborted && progress && !progress(1.0))
      aborted = true;
    if (aborted)
      throw Aborted();
    policy_.endPlane(0, 0);
  }

private:
  // The kept pairs of one receiver parent's children, per child.
  struct Pending
  {
    Index childBegin = 0, childEnd = 0;
    std::vector<std::vector<LeafCandidate>> kept;
    void reset(Index c0, Index c1)
    {
      childBegin = c0;
      childEnd = c1;
      if (kept.size() < c1 - c0)
        kept.resize(c1 - c0);
      for (Index i = 0; i < c1 - c0; ++i)
        kept[i].clear();
    }
    std::vector<LeafCandidate>& of(Index c) { return kept[c - childBegin]; }
  };

  // One thread's share of a plane's list, and where each parent's part sits.
  struct ThreadPart
  {
    std::vector<Index> source;
    std::vector<float> low2;
  };

  ParentView viewOf(const Level& up, Index P) const
  {
    const InteractionList& list = up.list;
    const std::size_t e0 = list.split[P];
    return ParentView{ up.plane - 1, P, up.childSplit[P], up.childSplit[P + 1],
      list.source.data() + e0, list.low2.empty() ? nullptr : list.low2.data() + e0,
      list.split[P + 1] - e0, up.childSplit };
  }

  // Tests every child pair under receiver parent P's entries; kept pairs go
  // to pending (sorted per child when the policy wants it).
  void expandParent(const Level& up, Index P, Pending& pending, bool buildLists)
  {
    const ParentView view = viewOf(up, P);
    pending.reset(view.childBegin, view.childEnd);
    const double reach2 = policy_.beginParent(view);
    if (!buildLists)
      return;
    const TreePlane<T>& plane = tree_.planes[view.plane];
    for (std::size_t e = 0; e < view.numEntries; ++e)
    {
      const double entryLow2 = view.entryLow2(e);
      if (entryLow2 > reach2)
      {
        if (Policy::kSortedLists)
          break; // sorted: nothing nearer follows (§III-D)
        continue;
      }
      expandEntry(plane, view, view.source[e], entryLow2, pending);
    }
    if (Policy::kSortedLists)
      for (Index c = view.childBegin; c < view.childEnd; ++c)
        std::sort(pending.of(c).begin(), pending.of(c).end());
  }

  // The child pairs (c, d) of one entry (P, Q).
  void expandEntry(
    const TreePlane<T>& plane, const ParentView& view, Index Q, double entryLow2, Pending& pending)
  {
    const int p = view.plane;
    typename Policy::EntryContext context{};
    if (!policy_.enterEntry(p, view.parent, Q, context))
      return;
    const Index d0 = view.firstChild(Q), d1 = view.endChild(Q);
    // Unordered pairs: under the self entry only d >= c.
    const bool sameParent = Policy::kUnorderedPairs && Q == view.parent;
    for (Index c = view.childBegin; c < view.childEnd; ++c)
    {
      if (plane.numQueries(c) == 0 || !policy_.childMeetsEntry(p, c, Q, entryLow2, context))
        continue;
      std::vector<LeafCandidate>& kept = pending.of(c);
      for (Index d = sameParent ? c : d0; d < d1; ++d)
      {
        if (plane.numSources(d) == 0)
          continue;
        double low2 = 0;
        const PairVerdict verdict = policy_.testPair(p, c, d, context, low2);
        if (verdict == PairVerdict::Keep)
          kept.push_back(LeafCandidate{ low2, d });
        else if (verdict == PairVerdict::Accept)
          policy_.accept(p, c, d, context);
      }
    }
  }

  void consumeLeaves(Pending& pending)
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    for (Index c = pending.childBegin; c < pending.childEnd; ++c)
    {
      if (leaves.numQueries(c) == 0)
        continue;
      const std::vector<LeafCandidate>& kept = pending.of(c);
      policy_.consumeLeaf(c, LeafList{ kept.data(), kept.data() + kept.size() });
    }
  }

  // Algorithm 2 in one pass: each thread expands whole receiver parents into
  // its own part; the parts are then placed by a prefix sum over the
  // children's counts.
  InteractionList buildPlaneList(const Level& up)
  {
    const TreePlane<T>& plane = tree_.planes[up.plane - 1];
    const Index numParents = up.list.numReceivers();
    InteractionList out;
    out.split.assign(std::size_t(plane.numNodes()) + 1, 0);
    // Small lists run on the calling thread: a parallel region costs more.
    const int threads = up.list.size() < 512 ? 1 : numThreads_;
    std::vector<ThreadPart> parts(threads);
    std::vector<int> owner(numParents);
    std::vector<std::size_t> offset(numParents);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int t = omp_get_thread_num();
      ThreadPart& mine = parts[t];
      Pending pending;
#pragma omp for schedule(dynamic, 4)
      for (long long P = 0; P < (long long)numParents; ++P)
      {
        expandParent(up, Index(P), pending, true);
        owner[P] = t;
        offset[P] = mine.source.size();
        appendKept(pending, mine, out.split);
      }
    }
    for (std::size_t c = 0; c + 1 < out.split.size(); ++c)
      out.split[c + 1] += out.split[c];
    placeParts(up, parts, owner, offset, out);
    return out;
  }

  // Appends the kept pairs of one parent's children; their counts go to
  // split[c + 1].
  static void appendKept(Pending& pending, ThreadPart& mine, std::vector<std::size_t>& split)
  {
    for (Index c = pending.childBegin; c < pending.childEnd; ++c)
    {
      const std::vector<LeafCandidate>& kept = pending.of(c);
      for (const LeafCandidate& k : kept)
      {
        mine.source.push_back(k.node);
        if (Policy::kSortedLists)
          mine.low2.push_back(InteractionList::lowerBound(k.low2));
      }
      split[c + 1] = kept.size();
    }
  }

  void placeParts(const Level& up, std::vector<ThreadPart>& parts, const std::vector<int>& owner,
    const std::vector<std::size_t>& offset, InteractionList& out) const
  {
    const std::size_t total = out.split.back();
    out.source.resize(total);
    if (Policy::kSortedLists)
      out.low2.resize(total);
    const long long numParents = (long long)owner.size();
    const int threads = total < 4096 ? 1 : numThreads_;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) if (threads > 1)
    for (long long P = 0; P < numParents; ++P)
    {
      const std::size_t at = out.split[up.childSplit[P]];
      const std::size_t count = out.split[up.childSplit[P + 1]] - at;
      const ThreadPart& part = parts[owner[P]];
      std::copy_n(part.source.begin() + offset[P], count, out.source.begin() + at);
      if (Policy::kSortedLists)
        std::copy_n(part.low2.begin() + offset[P], count, out.low2.begin() + at);
    }
  }

  const ZTree<T>& tree_;
  Policy& policy_;
  int numThreads_;
  RunInfo* info_;
  std::vector<Index> superSplit_;
};
} // namespace jz
