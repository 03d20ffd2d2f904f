// What a walk tells the dual-walk engine (DualWalk.h), and the defaults it
// may leave out. A policy derives from WalkPolicyDefaults and hides the hooks
// it needs; the engine calls them statically. doc/ARCHITECTURE.md, "The walk
// engine", lists the walks; Kernels/tests/TestDualWalk.cpp has a worked example.
#pragma once

#include <cstddef>

#include "jz/Config.h"

namespace jz
{
// The node-pair test's answer for receiver c and source d on one plane.
enum class PairVerdict : unsigned char
{
  Prune,  // no point pair of (c, d) matters: dropped
  Accept, // decided for the whole pair on this plane: the engine calls accept()
  Keep    // undecided: children pairs on the plane below (a leaf list at plane 0)
};

// One receiver parent of the plane being built, as the hooks see it: its
// children [childBegin, childEnd) on plane `plane`, and its interaction list
// on the level above, whose entries name source parents Q with children
// [firstChild(Q), endChild(Q)).
struct ParentView
{
  int plane;
  Index parent;
  Index childBegin, childEnd;
  const Index* source; // the parent's list entries: source parents
  const float* low2;   // their stored lower bounds, or nullptr (none kept)
  std::size_t numEntries;
  const Index* childSplit; // of the level above

  Index firstChild(Index q) const { return childSplit[q]; }
  Index endChild(Index q) const { return childSplit[q + 1]; }
  double entryLow2(std::size_t e) const { return low2 ? double(low2[e]) : 0.0; }
};

// A kept source node of a leaf list and the lower bound of its squared
// distance to the receiver, ordered by (low2, node) in sorted walks.
struct LeafCandidate
{
  double low2;
  Index node;
  bool operator<(const LeafCandidate& o) const
  {
    return low2 < o.low2 || (low2 == o.low2 && node < o.node);
  }
};

// One receiving leaf's list in the leaf pass (valid during the call only).
struct LeafList
{
  const LeafCandidate* begin_;
  const LeafCandidate* end_;
  const LeafCandidate* begin() const { return begin_; }
  const LeafCandidate* end() const { return end_; }
  std::size_t size() const { return std::size_t(end_ - begin_); }
};

// No per-entry state.
struct NoEntryContext
{
};

struct WalkPolicyDefaults
{
  // Each unordered node pair once (receiver c lists sources d >= c, the
  // self pair included): FoF. Otherwise query-centric: c lists every source.
  static constexpr bool kUnorderedPairs = false;
  // Lists ordered by lower bound, and entries beyond beginParent()'s reach
  // skipped: walks with a shrinking search radius (kNN, EMST).
  static constexpr bool kSortedLists = false;
  // Whether the leaf pass builds leaf lists (false: only beginParent and
  // consumeLeaf run, e.g. for radius bounds alone).
  static constexpr bool kLeafLists = true;

  using EntryContext = NoEntryContext;

  // Before the first test of plane p (serial; may run its own parallel node
  // loops) and after the plane's list is complete (serial).
  void beginPlane(int /*p*/) {}
  void endPlane(int /*p*/, std::size_t /*interactions*/) {}

  // Per receiver parent, on the worker thread that then tests all pairs of
  // its children: per-child state (e.g. kNN's FindRmax radii). Returns the
  // reach: list entries whose lower bound exceeds it are not expanded.
  double beginParent(const ParentView& /*parent*/) { return kInfinity; }

  // Per entry (P, Q) of the parent's list: false skips it (e.g. decided on
  // the plane above since it was kept). May fill the context the child
  // tests of this entry receive.
  template <class Context>
  bool enterEntry(int /*p*/, Index /*P*/, Index /*Q*/, Context& /*context*/)
  {
    return true;
  }

  // Per receiver child c and entry: false drops every child of Q for c
  // (e.g. c's radius is below the entry's lower bound).
  template <class Context>
  bool childMeetsEntry(
    int /*p*/, Index /*c*/, Index /*Q*/, double /*entryLow2*/, const Context& /*context*/) const
  {
    return true;
  }

  // Required: PairVerdict testPair(int p, Index c, Index d, const EntryContext&,
  // double& low2) -- low2 (set for Keep in sorted walks) orders the lists.

  // For every Accept verdict.
  template <class Context>
  void accept(int /*p*/, Index /*c*/, Index /*d*/, const Context& /*context*/)
  {
  }

  // Per receiver parent, after every pair of its children was tested, on
  // the same thread (before the leaf pass's consumeLeaf): a policy that
  // buffers its accepted pairs per child applies them here in bulk.
  void endParent(const ParentView& /*parent*/) {}

  // Required for the leaf pass: void consumeLeaf(Index c, const LeafList&).
};
// A walk engine's levels from its super nodes down to `plane`, each built
// from the one above (DualWalk and DualWalkCuda: top(), descend()).
template <class Walk>
auto walkDown(Walk& walk, int plane)
{
  auto level = walk.top();
  while (level.plane > plane)
    level = walk.descend(level);
  return level;
}
} // namespace jz
