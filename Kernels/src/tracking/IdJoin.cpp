#include "tracking/IdJoin.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "fof/FofPhases.h" // ownerOfLabel: the one rule of which rank owns an id

namespace jz
{
namespace
{
bool byId(const OwnedMember& x, const OwnedMember& y)
{
  return x.id < y.id || (x.id == y.id && x.group < y.group);
}

bool byPair(const GroupLink& x, const GroupLink& y)
{
  return x.a < y.a || (x.a == y.a && x.b < y.b);
}

// Sorted by (a, b), the counts of equal pairs summed.
std::vector<GroupLink> mergeEqualPairs(std::vector<GroupLink> links)
{
  std::sort(links.begin(), links.end(), byPair);
  std::vector<GroupLink> out;
  for (const GroupLink& l : links)
  {
    if (!out.empty() && out.back().a == l.a && out.back().b == l.b)
      out.back().shared += l.shared;
    else
      out.push_back(l);
  }
  return out;
}
} // namespace

std::vector<OwnedMember> routeToIdOwners(
  Communicator& comm, const GlobalId* ids, const GlobalId* groups, std::size_t n)
{
  const int ranks = comm.size();
  std::vector<OwnedMember> owned;
  if (ranks == 1)
  {
    owned.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      owned[i] = { ids[i], groups[i] };
  }
  else
  {
    std::vector<std::vector<OwnedMember>> send(ranks);
    for (std::size_t i = 0; i < n; ++i)
      send[ownerOfLabel(ids[i], ranks)].push_back({ ids[i], groups[i] });
    for (std::vector<OwnedMember>& got : allToAllTyped(comm, send))
      owned.insert(owned.end(), got.begin(), got.end());
  }
  std::sort(owned.begin(), owned.end(), byId);
  return owned;
}

// Collective. The smallest of the ranks' `local` duplicates (at most one each).
bool smallestOverRanks(Communicator& comm, const std::vector<GlobalId>& local, GlobalId& id)
{
  const std::vector<GlobalId> all = allGatherConcat(comm, local);
  if (all.empty())
    return false;
  id = *std::min_element(all.begin(), all.end());
  return true;
}

bool smallestDuplicateId(Communicator& comm, const std::vector<OwnedMember>& owned, GlobalId& id)
{
  std::vector<GlobalId> local;
  for (std::size_t i = 1; i < owned.size() && local.empty(); ++i)
    if (owned[i].id == owned[i - 1].id)
      local.push_back(owned[i].id);
  return smallestOverRanks(comm, local, id);
}

namespace
{
// The smallest id that appears twice in `ids` (reordered), if any.
std::vector<GlobalId> smallestLocalDuplicate(std::vector<GlobalId>& ids)
{
  if (ids.empty())
    return {};
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const GlobalId low = *lo;
  // The span as unsigned: exact even for ids at both ends of the 64-bit range.
  // A bitmap of up to 64 bits per id is no larger than the ids themselves.
  const std::uint64_t span = std::uint64_t(*hi) - std::uint64_t(low);
  if (span < 64 * std::uint64_t(ids.size()))
  {
    std::vector<bool> seen(std::size_t(span) + 1, false);
    GlobalId smallest = 0;
    bool found = false;
    for (const GlobalId i : ids)
    {
      const std::size_t k = std::size_t(std::uint64_t(i) - std::uint64_t(low));
      if (seen[k] && (!found || i < smallest))
      {
        smallest = i;
        found = true;
      }
      seen[k] = true;
    }
    return found ? std::vector<GlobalId>{ smallest } : std::vector<GlobalId>();
  }
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 1; i < ids.size(); ++i)
    if (ids[i] == ids[i - 1])
      return { ids[i] };
  return {};
}
} // namespace

bool smallestDuplicateId(Communicator& comm, const GlobalId* ids, std::size_t n, GlobalId& id)
{
  const int ranks = comm.size();
  std::vector<GlobalId> owned;
  if (ranks == 1)
    owned.assign(ids, ids + n);
  else
  {
    std::vector<std::vector<GlobalId>> send(ranks);
    for (std::size_t i = 0; i < n; ++i)
      send[ownerOfLabel(ids[i], ranks)].push_back(ids[i]);
    for (std::vector<GlobalId>& got : allToAllTyped(comm, send))
      owned.insert(owned.end(), got.begin(), got.end());
  }
  return smallestOverRanks(comm, smallestLocalDuplicate(owned), id);
}

std::vector<GroupLink> countSharedOwned(
  const std::vector<OwnedMember>& previous, const std::vector<OwnedMember>& next)
{
  // Few distinct pairs (about one per group): counted in a hash map, then
  // only those sorted.
  struct PairHash
  {
    std::size_t operator()(const std::pair<GlobalId, GlobalId>& p) const
    {
      return std::hash<std::uint64_t>()(
        std::uint64_t(p.first) * 0x9E3779B97F4A7C15ULL ^ std::uint64_t(p.second));
    }
  };
  std::unordered_map<std::pair<GlobalId, GlobalId>, std::int64_t, PairHash> counts;
  std::size_t i = 0, j = 0;
  while (i < previous.size() && j < next.size())
  {
    if (previous[i].id < next[j].id)
      ++i;
    else if (next[j].id < previous[i].id)
      ++j;
    else
      ++counts[{ previous[i++].group, next[j++].group }];
  }
  std::vector<GroupLink> pairs;
  pairs.reserve(counts.size());
  for (const auto& [key, n] : counts)
    pairs.push_back({ key.first, key.second, n });
  return mergeEqualPairs(std::move(pairs));
}

std::vector<GroupLink> sumLinksOverRanks(Communicator& comm, const std::vector<GroupLink>& local)
{
  if (comm.size() == 1)
    return local;
  return mergeEqualPairs(allGatherConcat(comm, local));
}
} // namespace jz
