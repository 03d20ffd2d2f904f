// The phases of friends-of-friends over several ranks (Appendix B, with
// ghost layers), each a collective that every rank calls
// in the same order, and each unit-tested on simulated ranks:
//
//   decomposeFofPoints   z-order decomposition of the points (§II-A)
//   exchangeFofGhosts    the points within one linking length of another
//                        rank's points, appended as ghosts
//   linkFofLocally       the single-process FoF over local and ghost points
//   agreeFofLabels       each group's label (its smallest global id) agreed
//                        across ranks through the ghost copies
//   reduceFofGroupSizes, numberFofGroups, reduceFofCatalogue
//                        sizes, GroupIds and catalogue rows at each label's
//                        owner rank
//   sendFofResultsHome   GroupId and GroupSize back to each point's origin
//
// computeFofDistributed (FofDistributed.cpp) runs them in this order.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "jz/Distributed.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

#include "distributed/Decomposition.h"

namespace jz
{
// One rank's points: its z-order range (local), then its ghosts.
template <class T>
struct FofRankPoints
{
  std::vector<T> xyz;        // wrapped coordinates, local points then ghosts
  std::vector<GlobalId> ids; // global ids, local points then ghosts
  // Where this rank's input points went and where the local points came
  // from (rank s's points are the block [route.begin[s], route.begin[s + 1])
  // in s's send order): the results go home along it, no origin stored.
  ZOrderRoute route;
  // Per local point, only when some rank has them (else empty): masses, and
  // velocities (3 per point).
  std::vector<double> mass, velocity;
  // The local points' tree: built for the ghost selection, reused for the
  // local groups (exchangeFofGhosts, linkFofLocally).
  ZTree<T> localTree;
  Index numLocal() const { return Index(route.size()); }
  std::size_t numTotal() const { return ids.size(); }
};

// Phase "decompose": this rank's contiguous, count-balanced range of the
// global z-order, every point wrapped into the periodic box.
template <class T>
FofRankPoints<T> decomposeFofPoints(
  const FofProblem<T>& problem, const FofDistributedOptions& options, Communicator& comm);

// Which local points went to which rank as ghosts, and where the ghosts
// received from each rank lie among this rank's points.
struct FofGhostLinks
{
  std::vector<std::vector<Index>> sent; // local indices sent to rank r, in order
  std::vector<std::size_t> ghostBegin;  // ghosts of rank r: [ghostBegin[r], ghostBegin[r + 1])
};

// Phase "exchange ghosts": every point within one linking length (nearest
// image) of a point of rank r is sent to r; received ghosts are appended to
// `points`. With `info`, the local tree's build (work a single process does
// too) and the selection and exchange are timed as two stages.
template <class T>
FofGhostLinks exchangeFofGhosts(FofRankPoints<T>& points, const FofProblem<T>& problem,
  Communicator& comm, RunInfo* info = nullptr);

// Phase "local walk": the groups of the local and ghost points. On the CPU
// the local points' groups come from the ghost selection's tree and each
// ghost is joined to its local friends (ghost-ghost links are left to the
// ghosts' own ranks and the label agreement), roots only (no groupLabel:
// agreeFofLabels finds each root's smallest id); elsewhere one run over
// local and ghost points. An error on any rank (bad GPU, abort) throws the same
// Error on every rank. The local run's backend and stage times are added to
// `info`.
template <class T>
FofGroups linkFofLocally(const FofRankPoints<T>& points, const FofGhostLinks& ghosts,
  const FofProblem<T>& problem, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info);

// A group's label: the smallest global id of its members, with that member's
// position (the catalogue's reference point).
struct FofLabel
{
  GlobalId id;
  double ref[3];
};

struct FofAgreedLabels
{
  static constexpr Index kSingle = ~Index(0);
  // Per component of the local-and-ghost graph (those with local points,
  // ghosts or points sent as ghosts): its global group's label and how many
  // local points it holds.
  std::vector<FofLabel> label;
  std::vector<Index> localMembers;
  // Per local point: its component, or kSingle for a point alone in its
  // component, hence alone globally (size 1, no further communication).
  // Single points are only marked when they are not kept groups
  // (minimumGroupSize > 1).
  std::vector<Index> component;
  int rounds = 0; // exchange rounds until no label changed

  std::size_t numLocal() const { return component.size(); }
  bool isSingle(std::size_t i) const { return component[i] == kSingle; }
  const FofLabel& labelOf(std::size_t i) const { return label[component[i]]; }
  // Appends a local point in a component of its own (or single).
  void addPoint(const FofLabel& l, bool single)
  {
    component.push_back(single ? kSingle : Index(label.size()));
    if (!single)
    {
      label.push_back(l);
      localMembers.push_back(1);
    }
  }
};

// Phase "agree labels": ghost holders and owners exchange labels until no
// rank lowers one; then every component holds its global group's label.
// Per-point work and memory stay small: labels live per component.
template <class T>
FofAgreedLabels agreeFofLabels(const FofRankPoints<T>& points, const FofGroups& groups,
  const FofGhostLinks& ghosts, GlobalId minimumGroupSize, Communicator& comm);

// The rank that owns a label: reduces its size and catalogue row.
inline int ownerOfLabel(GlobalId label, int ranks)
{
  return int(((label % ranks) + ranks) % ranks);
}

struct FofGroupSizes
{
  std::vector<GlobalId> labels;        // sorted distinct labels of this rank's non-single points
  std::vector<GlobalId> sizes;         // the global size of each
  std::vector<GlobalId> componentSize; // per component with local points (else 0)
  std::vector<std::pair<GlobalId, GlobalId>>
    owned; // (label, size) of the groups owned here, sorted

  // Index of `label` in labels (which must hold it).
  std::size_t slot(GlobalId label) const;
};

// Phase "reduce" (sizes): the global member count of every group that has
// local non-single points, summed at the owner rank of its label.
FofGroupSizes reduceFofGroupSizes(const FofAgreedLabels& labels, Communicator& comm);

struct FofGroupNumbers
{
  std::size_t numGroups = 0;                            // G, over all ranks
  std::vector<std::pair<GlobalId, GlobalId>> idOfLabel; // (label, GroupId), sorted by label
  std::vector<GlobalId> sizeOfGroup;                    // per GroupId

  // The GroupId of a label; -1 for a group below the minimum size.
  GlobalId groupIdOf(GlobalId label) const;
};

// Phase "reduce" (numbering): GroupIds 0..G-1 for the groups of at least
// minimumGroupSize members, by descending size, ties by the smaller label;
// the same on every rank.
FofGroupNumbers numberFofGroups(
  const FofGroupSizes& sizes, GlobalId minimumGroupSize, Communicator& comm);

// Phase "reduce" (catalogue): per-rank GroupMoments of every kept group,
// merged in rank order at the label's owner, which appends the group's row to
// `catalogue` and its GroupId to `catalogueGroupId` (rows by GroupId).
template <class T>
void reduceFofCatalogue(const FofRankPoints<T>& points, const FofAgreedLabels& labels,
  const FofGroupSizes& sizes, const FofGroupNumbers& numbers, const FofProblem<T>& problem,
  bool withVelocity, Communicator& comm, FofCatalogue& catalogue,
  std::vector<GlobalId>& catalogueGroupId);

// Phase "send home": GroupId and GroupSize of every local point back to the
// rank and input position it came from, along the decomposition's route,
// into `groupId` and `groupSize` (one per input point of this rank).
void sendFofResultsHome(const ZOrderRoute& route, const FofAgreedLabels& labels,
  const FofGroupSizes& sizes, const FofGroupNumbers& numbers, Communicator& comm, GlobalId* groupId,
  GlobalId* groupSize);
} // namespace jz
