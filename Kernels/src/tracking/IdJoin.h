// The id join of halo tracking: members sent to the owner rank of their
// particle id, duplicate ids found there, and the particles shared by the
// groups of two consecutive steps counted by a merge of the owners' sorted
// lists. Only the counts per pair of groups leave the owners.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Config.h"

namespace jz
{
struct OwnedMember
{
  GlobalId id;
  GlobalId group;
};

// Group a at one step and group b at the next share `shared` particles.
struct GroupLink
{
  GlobalId a;
  GlobalId b;
  std::int64_t shared;
};

// Collective. Each (id, group) to the owner rank of the id; returns those
// owned here, sorted by id.
std::vector<OwnedMember> routeToIdOwners(
  Communicator& comm, const GlobalId* ids, const GlobalId* groups, std::size_t n);

// Collective. The smallest id that some rank holds twice in its sorted
// owned list, the same on every rank; false when there is none.
bool smallestDuplicateId(Communicator& comm, const std::vector<OwnedMember>& owned, GlobalId& id);

// Collective. The smallest id that appears twice among all ranks' `ids`, the
// same on every rank; false when there is none. Each id goes to its owner
// rank, which checks its share with a bitmap when the share's ids span at
// most 64 times their number (e.g. ids 1..N), else by sorting.
bool smallestDuplicateId(Communicator& comm, const GlobalId* ids, std::size_t n, GlobalId& id);

// The particles of this rank's owned lists (both sorted by id) shared per
// pair of groups (previous step's a, next step's b), sorted by (a, b).
std::vector<GroupLink> countSharedOwned(
  const std::vector<OwnedMember>& previous, const std::vector<OwnedMember>& next);

// Collective. Every rank's counts summed per (a, b), sorted by (a, b), on
// every rank.
std::vector<GroupLink> sumLinksOverRanks(Communicator& comm, const std::vector<GroupLink>& local);
} // namespace jz
