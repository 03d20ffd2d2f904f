// Halo tracking: FoF groups linked through the time steps of a particle
// series by the particles they share, a merger tree, and a TrackId along
// each main branch (doc/filters/HaloTracking.md has the rules).
//
// Group a at step s and group b at step s+1 share n_ab particles. The
// descendant of a is the b with the largest n_ab (ties: smaller GroupId),
// when n_ab >= minimumShared. The main progenitor of b is, among the a whose
// descendant is b, the one with the largest n_ab (ties: the larger Count of
// a, then the smaller GroupId). b inherits its main progenitor's TrackId; a
// group without one starts a new track, numbered in order of time step, then
// GroupId.
//
// Distributed: every rank passes its own members of every step; each
// member goes to the owner rank of its id (an exchange by id, no gather of
// members), the owners join consecutive steps and count the shared
// particles per group pair, and only those counts (one per linked pair of
// groups) and the per-group partial sums are gathered. The tree is the same
// for any number of ranks and any partition (Mass up to summation order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "Communicator.h"
#include "Config.h"

namespace jz
{
// One rank's group members at one time step (particles with GroupId >= 0).
struct TrackingMembers
{
  std::vector<GlobalId> ids;    // particle ids, persistent through time, unique per step
  std::vector<GlobalId> groups; // their GroupIds, >= 0
  std::vector<double> masses;   // their masses; empty: unit masses
};

struct TrackingOptions
{
  std::int64_t minimumShared = 1; // a link needs at least this many shared particles
};

// One (time step, group) of the merger tree.
struct TrackedGroup
{
  std::int64_t step = 0;         // index of the time step
  GlobalId group = -1;           // GroupId at that step
  GlobalId track = -1;           // TrackId
  std::int64_t count = 0;        // members
  double mass = 0;               // sum of the members' masses
  GlobalId descendant = -1;      // GroupId at step + 1, -1: none
  std::int64_t shared = 0;       // particles shared with the descendant (0: none)
  bool isMainProgenitor = false; // whether this is its descendant's main progenitor
};

struct HaloTree
{
  std::vector<TrackedGroup> rows; // sorted by (step, group)

  // The TrackId of `group` at `step`, or -1 when there is no such row.
  GlobalId trackOf(std::int64_t step, GlobalId group) const;
  // The rows of `track` (its main branch), in time order.
  std::vector<std::size_t> trackRows(GlobalId track) const;
  // The track of the most massive group at the last step that has groups
  // (ties: the smaller GroupId); -1 when there are no groups.
  GlobalId mostMassiveFinalTrack() const;
};

// Why one rank's members of one step are not usable (sizes, a negative
// GroupId, a non-finite or negative mass), naming the step; "" when they are.
std::string trackingMembersError(const TrackingMembers& members, std::size_t step);

// Collective. The first id that appears twice among all ranks' `ids` (a
// message naming it and the step), the same on every rank; "" when none does.
std::string duplicateIdError(
  Communicator& comm, const GlobalId* ids, std::size_t numIds, std::size_t step);

// Collective. The merger tree of all ranks' members of steps 0 .. S-1 (every
// rank passes the same number of steps), complete on every rank. Throws
// Error (on every rank) for bad input: trackingMembersError, an id twice in
// one step, minimumShared below 1.
HaloTree trackHalos(
  Communicator& comm, const std::vector<TrackingMembers>& steps, const TrackingOptions& options);

// The same on one process.
HaloTree trackHalos(const std::vector<TrackingMembers>& steps, const TrackingOptions& options);
} // namespace jz
