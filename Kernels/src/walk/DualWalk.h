// The dual tree walk on the z-order planes (§III-B, Algorithm
// 1), shared by every algorithm on the tree: kNN, FoF, and what comes next.
// A policy (WalkPolicy.h) supplies the node-pair test, the leaf kernel and
// the per-node state; the engine owns the traversal:
//  - the super-node level above the top plane (SuperNodes.h);
//  - level by level, each receiver parent's list expanded to its children's
//    lists: every child pair under an entry is tested once and kept, accepted
//    or pruned (Algorithm 2, in one pass: the test may have side effects);
//  - the leaf pass: per parent of the leaves, its leaves' lists are built and
//    handed to the leaf kernel at once, never stored whole.
// doc/ARCHITECTURE.md, "The walk engine", shows how a new walk plugs in.
//
// What the engine guarantees:
//  - Coverage, exactly once: for every receiving leaf c (with queries) and
//    source leaf d (with sources) exactly one of these happens: one ancestor
//    pair (on one plane, the super nodes' children included) is pruned or
//    accepted (by testPair, or dropped by enterEntry, childMeetsEntry or the
//    reach), or d appears once in c's leaf list. Query-centric walks see
//    ordered pairs ((c, d) and (d, c) apart, (c, c) included); unordered
//    walks see each pair once with d >= c.
//  - Threads: beginPlane and endPlane run serially; every other hook runs on
//    a worker thread, one receiver parent P at a time: every pair whose
//    receiver is a child of P is tested, accepted and (in the leaf pass)
//    consumed on the thread that ran beginParent(P), before it starts
//    another parent. A query-centric policy may write its receivers' state
//    without atomics; source-side state is read-only during a plane (or
//    atomic); unordered walks touch both ends and need atomics. Hooks on
//    worker threads must not throw (PerThread.h for scratch).
//  - Order: sorted lists by (lower bound, node index); stored plane lists
//    keep the bound rounded down to float, leaf lists the exact double.
//    Results must not depend on the order of unsorted lists or the thread
//    count.
//  - Memory: two levels' lists at a time (the one being built and the one
//    above), never copied; leaf lists exist per parent only.
//  - Progress: leafPass calls progress(fraction) from the calling thread
//    only, at least once at the end; false ends the pass with jz::Aborted.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <omp.h>

#include "walk/InteractionList.h"
#include "walk/SuperNodes.h"
#include "walk/WalkPolicy.h"
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
  Level walkDownTo(int plane) { return walkDown(*this, plane); }

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
    const std::vector<LeafCandidate>& of(Index c) const { return kept[c - childBegin]; }
  };

  ParentView viewOf(const Level& up, Index P) const
  {
    const InteractionList::Entries entries = up.list.of(P);
    return ParentView{ up.plane - 1, P, up.childSplit[P], up.childSplit[P + 1], entries.source,
      entries.low2, entries.count, up.childSplit };
  }

  // Tests every child pair under receiver parent P's entries; kept pairs go
  // to pending (sorted per child when the policy wants it).
  void expandParent(const Level& up, Index P, Pending& pending, bool buildLists)
  {
    const ParentView view = viewOf(up, P);
    pending.reset(view.childBegin, view.childEnd);
    const double reach2 = policy_.beginParent(view);
    if (!buildLists)
      return policy_.endParent(view);
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
    policy_.endParent(view);
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

  // Algorithm 2 in one pass: each thread expands whole receiver parents and
  // writes their children's runs to blocks of its own, which the list then
  // adopts (no copy).
  InteractionList buildPlaneList(const Level& up)
  {
    const Index numParents = up.list.numReceivers();
    // Small lists run on the calling thread: a parallel region costs more.
    const int threads = up.list.size() < 512 ? 1 : numThreads_;
    InteractionList out(tree_.planes[up.plane - 1].numNodes(), Policy::kSortedLists);
    std::vector<InteractionList::Writer> writers;
    for (int t = 0; t < threads; ++t)
      writers.push_back(out.writer());
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      InteractionList::Writer& mine = writers[omp_get_thread_num()];
      Pending pending;
#pragma omp for schedule(dynamic, 4)
      for (long long P = 0; P < (long long)numParents; ++P)
      {
        expandParent(up, Index(P), pending, true);
        writeKept(pending, mine);
      }
    }
    for (InteractionList::Writer& w : writers)
      out.adopt(w);
    return out;
  }

  static void writeKept(const Pending& pending, InteractionList::Writer& writer)
  {
    for (Index c = pending.childBegin; c < pending.childEnd; ++c)
    {
      const std::vector<LeafCandidate>& kept = pending.of(c);
      const InteractionList::Run run = writer.open(c, kept.size());
      for (std::size_t i = 0; i < kept.size(); ++i)
      {
        run.source[i] = kept[i].node;
        if (run.low2)
          run.low2[i] = InteractionList::lowerBound(kept[i].low2);
      }
    }
  }

  const ZTree<T>& tree_;
  Policy& policy_;
  int numThreads_;
  RunInfo* info_;
  std::vector<Index> superSplit_;
};
} // namespace jz
