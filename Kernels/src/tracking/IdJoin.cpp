#include "tracking/IdJoin.h"

#include <algorithm>
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
      owned[i] = { ids[i], groups ? groups[i] : GlobalId(-1) };
  }
  else
  {
    std::vector<std::vector<OwnedMember>> send(ranks);
    for (std::size_t i = 0; i < n; ++i)
      send[ownerOfLabel(ids[i], ranks)].push_back({ ids[i], groups ? groups[i] : GlobalId(-1) });
    for (std::vector<OwnedMember>& got : allToAllTyped(comm, send))
      owned.insert(owned.end(), got.begin(), got.end());
  }
  std::sort(owned.begin(), owned.end(), byId);
  return owned;
}

bool smallestDuplicateId(Communicator& comm, const std::vector<OwnedMember>& owned, GlobalId& id)
{
  std::vector<GlobalId> local;
  for (std::size_t i = 1; i < owned.size() && local.empty(); ++i)
    if (owned[i].id == owned[i - 1].id)
      local.push_back(owned[i].id);
  const std::vector<GlobalId> all = allGatherConcat(comm, local);
  if (all.empty())
    return false;
  id = *std::min_element(all.begin(), all.end());
  return true;
}

std::vector<GroupLink> countSharedOwned(
  const std::vector<OwnedMember>& previous, const std::vector<OwnedMember>& next)
{
  std::vector<GroupLink> pairs;
  std::size_t i = 0, j = 0;
  while (i < previous.size() && j < next.size())
  {
    if (previous[i].id < next[j].id)
      ++i;
    else if (next[j].id < previous[i].id)
      ++j;
    else
      pairs.push_back({ previous[i++].group, next[j++].group, 1 });
  }
  return mergeEqualPairs(std::move(pairs));
}

std::vector<GroupLink> sumLinksOverRanks(Communicator& comm, const std::vector<GroupLink>& local)
{
  if (comm.size() == 1)
    return local;
  return mergeEqualPairs(allGatherConcat(comm, local));
}
} // namespace jz
