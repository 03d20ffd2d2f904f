// The merger tree from the id join (tracking/IdJoin.h): group rows per
// step, descendants, main progenitors and TrackIds, with the tie rules of
// jz/HaloTracking.h in one place each (descendantBeats, progenitorBeats).
#include "jz/HaloTracking.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "jz/Backend.h"
#include "jz/ParameterRanges.h"
#include "tracking/IdJoin.h"

namespace jz
{
namespace
{
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

struct GroupSum
{
  GlobalId group;
  std::int64_t count;
  double mass;
};

// The rows [begin, end) of one step, sorted by group.
struct StepRows
{
  std::size_t begin = 0;
  std::size_t end = 0;
};

std::size_t rowOf(const HaloTree& tree, StepRows rows, GlobalId group)
{
  const auto first = tree.rows.begin() + std::ptrdiff_t(rows.begin);
  const auto last = tree.rows.begin() + std::ptrdiff_t(rows.end);
  const auto it = std::lower_bound(
    first, last, group, [](const TrackedGroup& r, GlobalId g) { return r.group < g; });
  return it != last && it->group == group ? std::size_t(it - tree.rows.begin()) : kNone;
}

// Collective. Count and mass per group of one step over all ranks, sorted
// by group (each rank's partial sums, added in rank order).
std::vector<GroupSum> groupSums(Communicator& comm, const TrackingMembers& members)
{
  std::unordered_map<GlobalId, std::size_t> slot;
  std::vector<GroupSum> local;
  for (std::size_t i = 0; i < members.groups.size(); ++i)
  {
    const auto [it, added] = slot.emplace(members.groups[i], local.size());
    if (added)
      local.push_back({ members.groups[i], 0, 0.0 });
    GroupSum& sum = local[it->second];
    sum.count += 1;
    sum.mass += members.masses.empty() ? 1.0 : members.masses[i];
  }
  std::vector<GroupSum> all = comm.size() == 1 ? local : allGatherConcat(comm, local);
  std::stable_sort(
    all.begin(), all.end(), [](const GroupSum& x, const GroupSum& y) { return x.group < y.group; });
  std::vector<GroupSum> out;
  for (const GroupSum& s : all)
  {
    if (!out.empty() && out.back().group == s.group)
    {
      out.back().count += s.count;
      out.back().mass += s.mass;
    }
    else
      out.push_back(s);
  }
  return out;
}

// Whether link x makes a better descendant than y for the same group:
// more shared particles, then the smaller GroupId.
bool descendantBeats(const GroupLink& x, const GroupLink& y)
{
  return x.shared > y.shared || (x.shared == y.shared && x.b < y.b);
}

// Whether progenitor row x beats row y for the same descendant: more shared
// particles, then the larger group (Count), then the smaller GroupId.
bool progenitorBeats(const TrackedGroup& x, const TrackedGroup& y)
{
  if (x.shared != y.shared)
    return x.shared > y.shared;
  if (x.count != y.count)
    return x.count > y.count;
  return x.group < y.group;
}

// Descendants of the previous step's rows (links sorted by (a, b)); the
// main progenitor row of each next row (kNone: none).
std::vector<std::size_t> linkSteps(HaloTree& tree, StepRows previous, StepRows next,
  const std::vector<GroupLink>& links, std::int64_t minimumShared)
{
  for (std::size_t i = 0; i < links.size();)
  {
    GlobalId a = links[i].a;
    GroupLink best = links[i];
    for (; i < links.size() && links[i].a == a; ++i)
      if (descendantBeats(links[i], best))
        best = links[i];
    if (best.shared < minimumShared)
      continue;
    TrackedGroup& row = tree.rows[rowOf(tree, previous, a)];
    row.descendant = best.b;
    row.shared = best.shared;
  }
  std::vector<std::size_t> mainProgenitor(next.end - next.begin, kNone);
  for (std::size_t r = previous.begin; r < previous.end; ++r)
  {
    const TrackedGroup& row = tree.rows[r];
    if (row.descendant < 0)
      continue;
    std::size_t& best = mainProgenitor[rowOf(tree, next, row.descendant) - next.begin];
    if (best == kNone || progenitorBeats(row, tree.rows[best]))
      best = r;
  }
  for (const std::size_t r : mainProgenitor)
    if (r != kNone)
      tree.rows[r].isMainProgenitor = true;
  return mainProgenitor;
}

std::string duplicateMessage(GlobalId id, std::size_t step)
{
  return "particle id " + std::to_string(id) + " appears twice at time step " +
    std::to_string(step) + " (GlobalIds must be unique in each step)";
}
} // namespace

std::string trackingMembersError(const TrackingMembers& members, std::size_t step)
{
  const std::string at = " at time step " + std::to_string(step);
  if (members.groups.size() != members.ids.size())
    return "the GroupIds" + at + " do not match the particle ids in number";
  if (!members.masses.empty() && members.masses.size() != members.ids.size())
    return "the masses" + at + " do not match the particle ids in number";
  for (const GlobalId g : members.groups)
    if (g < 0)
      return "a member" + at + " has the negative GroupId " + std::to_string(g);
  for (const double m : members.masses)
    if (!std::isfinite(m) || m < 0)
      return "a member" + at + " has the mass " + std::to_string(m) +
        " (masses must be finite and non-negative)";
  return {};
}

std::string duplicateIdError(
  Communicator& comm, const GlobalId* ids, std::size_t numIds, std::size_t step)
{
  GlobalId id = 0;
  return smallestDuplicateId(comm, ids, numIds, id) ? duplicateMessage(id, step) : std::string();
}

HaloTree trackHalos(
  Communicator& comm, const std::vector<TrackingMembers>& steps, const TrackingOptions& options)
{
  const std::string badShared = rangeError(ranges::MinimumShared, double(options.minimumShared));
  if (!badShared.empty())
    throw Error(badShared);
  HaloTree tree;
  GlobalId nextTrack = 0;
  std::vector<OwnedMember> previous;
  StepRows previousRows;
  for (std::size_t s = 0; s < steps.size(); ++s)
  {
    const TrackingMembers& members = steps[s];
    agreeOnErrors(comm, trackingMembersError(members, s));
    std::vector<OwnedMember> owned =
      routeToIdOwners(comm, members.ids.data(), members.groups.data(), members.ids.size());
    GlobalId duplicate = 0;
    if (smallestDuplicateId(comm, owned, duplicate))
      throw Error(duplicateMessage(duplicate, s));

    StepRows rows{ tree.rows.size(), tree.rows.size() };
    for (const GroupSum& sum : groupSums(comm, members))
    {
      TrackedGroup row;
      row.step = std::int64_t(s);
      row.group = sum.group;
      row.count = sum.count;
      row.mass = sum.mass;
      tree.rows.push_back(row);
    }
    rows.end = tree.rows.size();

    std::vector<std::size_t> mainProgenitor(rows.end - rows.begin, kNone);
    if (s > 0)
      mainProgenitor = linkSteps(tree, previousRows, rows,
        sumLinksOverRanks(comm, countSharedOwned(previous, owned)), options.minimumShared);
    // TrackIds in order of step, then GroupId (the rows' order).
    for (std::size_t r = rows.begin; r < rows.end; ++r)
    {
      const std::size_t p = mainProgenitor[r - rows.begin];
      tree.rows[r].track = p == kNone ? nextTrack++ : tree.rows[p].track;
    }
    previous = std::move(owned);
    previousRows = rows;
  }
  return tree;
}

HaloTree trackHalos(const std::vector<TrackingMembers>& steps, const TrackingOptions& options)
{
  SerialCommunicator comm;
  return trackHalos(comm, steps, options);
}

GlobalId HaloTree::trackOf(std::int64_t step, GlobalId group) const
{
  const auto it = std::lower_bound(rows.begin(), rows.end(), std::make_pair(step, group),
    [](const TrackedGroup& r, const std::pair<std::int64_t, GlobalId>& key)
    { return r.step < key.first || (r.step == key.first && r.group < key.second); });
  return it != rows.end() && it->step == step && it->group == group ? it->track : -1;
}

std::vector<std::size_t> HaloTree::trackRows(GlobalId track) const
{
  std::vector<std::size_t> out;
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].track == track)
      out.push_back(r);
  return out;
}

GlobalId HaloTree::mostMassiveFinalTrack() const
{
  if (rows.empty())
    return -1;
  const std::int64_t last = rows.back().step;
  const TrackedGroup* best = nullptr;
  for (const TrackedGroup& r : rows)
    if (r.step == last && (!best || r.mass > best->mass))
      best = &r; // rows ascend by group: the first of equal masses stays
  return best->track;
}
} // namespace jz
