// The phases of friends-of-friends over several ranks (FofPhases.h).
#include "fof/FofPhases.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <string>
#include <unordered_map>

#include "common/Progress.h"
#include "distributed/Decomposition.h"
#include "distributed/GhostSelection.h"
#include "fof/FofBackends.h"
#include "fof/GroupMoments.h"
#include "jz/FofLinking.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"

namespace jz
{
template <class T>
FofRankPoints<T> decomposeFofPoints(
  const FofProblem<T>& problem, const FofDistributedOptions& options, Communicator& comm)
{
  const std::size_t n = problem.numPoints;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  // Masses and velocities travel only when some rank has them.
  const bool withMass = allSum(comm, options.masses ? 1 : 0) > 0;
  const bool withVelocity = allSum(comm, options.velocities ? 1 : 0) > 0;
  auto at = [&](std::size_t i, T* p)
  {
    for (int d = 0; d < 3; ++d)
      p[d] = treeCoordinate(problem.points[3 * i + d], problem.boxLo[d], per.length[d]);
  };
  FofRankPoints<T> points;
  points.route = routeInZOrder<T>(n, at, comm);
  const ZOrderRoute& route = points.route;

  // Each field moves straight into its array: coordinates (wrapped), ids[,
  // masses][, velocities]. Where each point came from is its place in the
  // route (no origin travels).
  const std::size_t local = route.size();
  // Room for the ghosts that exchangeFofGhosts appends: capacity that is
  // never touched costs no memory, a reallocation copies every point.
  const std::size_t room = local + local / 4 + 1024;
  reserveHugePages(points.xyz, 3 * room);
  reserveHugePages(points.ids, room);
  points.xyz.resize(3 * local);
  points.ids.resize(local);
  RouteScratch scratch;
  moveAlongRoute(route, 3, at, points.xyz.data(), scratch, comm);
  moveAlongRoute(
    route, 1, [&](std::size_t i, GlobalId* v) { *v = problem.ids[i]; }, points.ids.data(), scratch,
    comm);
  if (withMass)
  {
    resizeHugePages(points.mass, local);
    moveAlongRoute(
      route, 1, [&](std::size_t i, double* v) { *v = options.masses ? options.masses[i] : 1.0; },
      points.mass.data(), scratch, comm);
  }
  if (withVelocity)
  {
    resizeHugePages(points.velocity, 3 * local);
    moveAlongRoute(
      route, 3,
      [&](std::size_t i, double* v)
      {
        for (int d = 0; d < 3; ++d)
          v[d] = options.velocities ? options.velocities[3 * i + d] : 0.0;
      },
      points.velocity.data(), scratch, comm);
  }
  return points;
}

template <class T>
FofGhostLinks exchangeFofGhosts(
  FofRankPoints<T>& points, const FofProblem<T>& problem, Communicator& comm, RunInfo* info)
{
  const int me = comm.rank(), ranks = comm.size();
  const Index local = points.numLocal();
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  const double l2 = problem.linkingLength * problem.linkingLength;
  FofGhostLinks links;
  links.sent.resize(ranks);
  links.ghostBegin.assign(ranks + 1, local);

  // Kept for the local groups (linkFofLocally).
  StageTimer treeTimer(info, "local tree");
  ZTree<T>& tree = points.localTree;
  buildTreeCpu(points.xyz.data(), local, (const T*)nullptr, 0, per, problem.boxLo,
    TreeBuildOptions(), tree, RunControl());
  treeTimer.stop();
  StageTimer exchangeTimer(info, "ghost exchange");
  // Regions that reach no other rank's points select nothing there: not
  // sent (most leaves; the same ghosts either way).
  const RankCover<T> cover(tree, comm);
  std::vector<Region<T>> regions;
  if (local > 0)
  {
    regions = regionsFromTree(tree, std::vector<double>(tree.planes[0].numNodes(), l2));
    regions.erase(std::remove_if(regions.begin(), regions.end(),
                    [&](const Region<T>& r) { return !cover.othersMayReach(r.box, r.radius2); }),
      regions.end());
  }
  const auto allRegions = gatherRegions(regions, comm);
  const std::vector<std::vector<Index>> ghosts =
    local > 0 ? selectGhosts(tree, allRegions, me) : std::vector<std::vector<Index>>(ranks);

  // A ghost record: coordinates and id, packed and unpacked in place.
  const std::size_t recordBytes = 3 * sizeof(T) + sizeof(GlobalId);
  std::vector<std::size_t> count(ranks);
  for (int r = 0; r < ranks; ++r)
  {
    count[r] = ghosts[r].size();
    links.sent[r].reserve(count[r]);
    for (Index s : ghosts[r])
      links.sent[r].push_back(tree.sources.inputIndex[s]);
  }
  auto pack = [&](int r, std::size_t j, char* record)
  {
    const Index in = links.sent[r][j];
    for (int d = 0; d < 3; ++d)
      putField(record, points.xyz[3 * std::size_t(in) + d]);
    putField(record, points.ids[in]);
  };
  const std::vector<std::vector<char>> got = exchangeRecords(count, recordBytes, pack, comm);
  std::size_t total = local;
  for (const auto& block : got)
    total += block.size() / recordBytes;
  // Usually within the capacity the decomposition reserved: no copy.
  points.xyz.reserve(3 * total);
  points.ids.reserve(total);
  std::size_t at = local;
  for (int r = 0; r < ranks; ++r)
  {
    links.ghostBegin[r] = at;
    for (const char* record = got[r].data(); record < got[r].data() + got[r].size(); ++at)
    {
      for (int d = 0; d < 3; ++d)
        points.xyz.push_back(takeField<T>(record));
      points.ids.push_back(takeField<GlobalId>(record));
    }
  }
  links.ghostBegin[ranks] = at;
  return links;
}

namespace
{
// Cells of a little more than the linking length over a few points (one
// rank's ghosts), so that two friends' cells differ by at most one in each
// dimension despite rounding; periodic cells wrap.
template <class T>
class FriendCells
{
public:
  FriendCells(const Periodicity& per, const double* boxLo, double linkingLength)
  {
    const double side = linkingLength * (1 + 1e-6);
    for (int d = 0; d < 3; ++d)
    {
      lo_[d] = per.enabled() ? boxLo[d] : 0.0;
      count_[d] = per.enabled() ? std::max(1.0, std::floor(per.length[d] / side)) : 0.0;
      side_[d] = per.enabled() ? per.length[d] / count_[d] : side;
    }
  }

  void add(const T* p, Index i) { cells_[cellOf(p)].push_back(i); }

  // Calls f(i) for every added point in the 27 cells around p (once each).
  template <class F>
  void forNear(const T* p, const F& f) const
  {
    const std::array<long long, 3> c = cellOf(p);
    std::array<long long, 3> seen[27];
    int numSeen = 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
        {
          std::array<long long, 3> n = { c[0] + dx, c[1] + dy, c[2] + dz };
          for (int d = 0; d < 3; ++d)
            if (count_[d] > 0)
              n[d] = ((n[d] % (long long)count_[d]) + (long long)count_[d]) % (long long)count_[d];
          if (std::find(seen, seen + numSeen, n) != seen + numSeen)
            continue; // fewer than 3 periodic cells
          seen[numSeen++] = n;
          const auto it = cells_.find(n);
          if (it != cells_.end())
            for (Index i : it->second)
              f(i);
        }
  }

private:
  struct Hash
  {
    std::size_t operator()(const std::array<long long, 3>& c) const
    {
      return std::size_t(c[0] * 73856093LL ^ c[1] * 19349663LL ^ c[2] * 83492791LL);
    }
  };

  std::array<long long, 3> cellOf(const T* p) const
  {
    std::array<long long, 3> c;
    for (int d = 0; d < 3; ++d)
    {
      double x = std::floor((double(p[d]) - lo_[d]) / side_[d]);
      x = std::max(-4.6e18, std::min(4.6e18, x));
      if (count_[d] > 0)
        x = std::max(0.0, std::min(count_[d] - 1, x));
      c[d] = (long long)x;
    }
    return c;
  }

  double lo_[3], side_[3], count_[3];
  std::unordered_map<std::array<long long, 3>, std::vector<Index>, Hash> cells_;
};

// Joins the local groups (root pointers in `root`, extended by one singleton
// per ghost) with the ghosts: a local point with a friend among rank r's
// ghosts lies within l of rank r's regions, so it is among the points sent
// to r; only those pairs are tested (jz::fofFriends, the walk's predicate).
template <class T>
void linkGhosts(const FofRankPoints<T>& points, const FofGhostLinks& ghosts,
  const FofProblem<T>& problem, std::vector<Index>& root)
{
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  const double l2 = problem.linkingLength * problem.linkingLength;
  const T* xyz = points.xyz.data();
  for (std::size_t r = 0; r + 1 < ghosts.ghostBegin.size(); ++r)
  {
    if (ghosts.ghostBegin[r] == ghosts.ghostBegin[r + 1] || ghosts.sent[r].empty())
      continue;
    FriendCells<T> cells(per, problem.boxLo, problem.linkingLength);
    for (std::size_t g = ghosts.ghostBegin[r]; g < ghosts.ghostBegin[r + 1]; ++g)
      cells.add(xyz + 3 * g, Index(g));
    for (Index a : ghosts.sent[r])
      cells.forNear(xyz + 3 * std::size_t(a),
        [&](Index g)
        {
          if (fofFriends(xyz + 3 * std::size_t(a), xyz + 3 * std::size_t(g), l2, per))
            fofUnion(root.data(), a, g);
        });
  }
}
} // namespace

template <class T>
FofGroups linkFofLocally(const FofRankPoints<T>& points, const FofGhostLinks& ghosts,
  const FofProblem<T>& problem, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info)
{
  FofGroups groups;
  agreeOnRunErrors(comm,
    [&]
    {
      FofProblem<T> lp = problem;
      lp.points = points.xyz.data();
      lp.ids = points.ids.data();
      RunInfo localInfo;
      if (backend == Backend::CPU && points.numLocal() > 0 && !points.localTree.planes.empty())
      {
        // The ghost selection's tree of the local points: their groups, then
        // the ghosts joined to them.
        lp.numPoints = points.numLocal();
        const std::size_t total = points.numTotal();
        FofGroups local;
        local.wantLabel = false; // agreeFofLabels finds each root's smallest id
        // Room for the ghosts' roots too (the walk keeps a large enough
        // buffer): no reallocation.
        reserveHugePages(local.groupRoot, total);
        fofCpuOnTree(points.localTree, lp, local, localInfo, control);
        localInfo.backend = Backend::CPU;
        groups.groupRoot = std::move(local.groupRoot);
        groups.groupRoot.resize(total);
        for (std::size_t g = points.numLocal(); g < total; ++g)
          groups.groupRoot[g] = Index(g);
        linkGhosts(points, ghosts, problem, groups.groupRoot);
        Index* root = groups.groupRoot.data();
        for (std::size_t i = 0; i < total; ++i)
          fofContract(root, Index(i));
      }
      else if (points.numTotal() > 0)
      {
        lp.numPoints = points.numTotal();
        localInfo = computeFofGroups(lp, groups, backend, control);
      }
      info.backend = localInfo.backend;
      for (auto& s : localInfo.stageSeconds)
        info.stageSeconds.push_back(s);
    });
  return groups;
}

template <class T>
FofAgreedLabels agreeFofLabels(const FofRankPoints<T>& points, const FofGroups& groups,
  const FofGhostLinks& ghosts, GlobalId minimumGroupSize, Communicator& comm)
{
  const int ranks = comm.size();
  const std::size_t total = points.numTotal();
  const Index local = points.numLocal();
  constexpr Index kNone = ~Index(0);
  const Index* root = groups.groupRoot.data();
  // Per root (one cache line for the three): its member count, its member
  // with the smallest id (the local label: ids are unique) and its component.
  struct RootInfo
  {
    Index members, labelMember, component;
  };
  std::vector<RootInfo> rootInfo;
  assignOnHugePages(rootInfo, total, RootInfo{ 0, 0, kNone });
  RootInfo* info = rootInfo.data();
  const GlobalId* ids = points.ids.data();
  for (std::size_t i = 0; i < total; ++i)
  {
    RootInfo& r = info[root[i]];
    if (r.members++ == 0 || ids[i] < ids[r.labelMember])
      r.labelMember = Index(i);
  }
  FofAgreedLabels out;
  // At most one component per root that is not a single point, per ghost and
  // per point sent (all of them when single points are kept groups).
  std::size_t components = total - local;
  for (const auto& sent : ghosts.sent)
    components += sent.size();
  for (Index i = 0; i < local; ++i)
    components += root[i] == i && (info[i].members > 1 || minimumGroupSize <= 1);
  out.label.reserve(components);
  out.localMembers.reserve(components);
  auto componentFor = [&](std::size_t i) -> Index
  {
    Index& c = info[root[i]].component;
    if (c == kNone)
    {
      const Index m = info[root[i]].labelMember;
      FofLabel l;
      l.id = points.ids[m];
      for (int d = 0; d < 3; ++d)
        l.ref[d] = double(points.xyz[3 * std::size_t(m) + d]);
      c = Index(out.label.size());
      out.label.push_back(l);
      out.localMembers.push_back(0);
    }
    return c;
  };
  // Components with ghosts or sent points first: only they can learn a
  // smaller label from another rank.
  for (std::size_t i = local; i < total; ++i)
    componentFor(i);
  for (const auto& sent : ghosts.sent)
    for (Index i : sent)
      componentFor(i);
  // Points alone in their component of the local-and-ghost graph are alone
  // in their global group too: size 1, no communication needed (most points
  // of uniform data). Only when single points are kept groups themselves do
  // they go through the numbering.
  resizeHugePages(out.component, local);
  for (Index i = 0; i < local; ++i)
  {
    const RootInfo& r = info[root[i]];
    if (minimumGroupSize > 1 && r.members == 1 && r.component == kNone)
    {
      out.component[i] = FofAgreedLabels::kSingle;
      continue;
    }
    const Index c = componentFor(i);
    out.component[i] = c;
    ++out.localMembers[c];
  }
  auto labelOf = [&](std::size_t i) -> FofLabel& { return out.label[info[root[i]].component]; };
  auto lower = [](FofLabel& mine, const FofLabel& other)
  {
    if (other.id >= mine.id)
      return false;
    mine = other;
    return true;
  };
  for (;; ++out.rounds)
  {
    std::int64_t changed = 0;
    // Ghost holders tell owners.
    std::vector<std::vector<FofLabel>> up(ranks);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t j = ghosts.ghostBegin[r]; j < ghosts.ghostBegin[r + 1]; ++j)
        up[r].push_back(labelOf(j));
    const auto gotUp = allToAllTyped(comm, up);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t t = 0; t < gotUp[r].size() && t < ghosts.sent[r].size(); ++t)
        if (lower(labelOf(ghosts.sent[r][t]), gotUp[r][t]))
          changed = 1;
    // Owners tell ghost holders.
    std::vector<std::vector<FofLabel>> down(ranks);
    for (int r = 0; r < ranks; ++r)
      for (Index i : ghosts.sent[r])
        down[r].push_back(labelOf(i));
    const auto gotDown = allToAllTyped(comm, down);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t t = 0; t < gotDown[r].size(); ++t)
        if (lower(labelOf(ghosts.ghostBegin[r] + t), gotDown[r][t]))
          changed = 1;
    if (allSum(comm, changed) == 0)
      break;
  }
  return out;
}

std::size_t FofGroupSizes::slot(GlobalId label) const
{
  return std::size_t(std::lower_bound(labels.begin(), labels.end(), label) - labels.begin());
}

FofGroupSizes reduceFofGroupSizes(const FofAgreedLabels& agreed, Communicator& comm)
{
  const int ranks = comm.size();
  FofGroupSizes out;
  // Distinct labels of the components with local points, with local counts
  // (several local components may share a label through other ranks).
  std::vector<std::pair<GlobalId, GlobalId>> all;
  for (std::size_t c = 0; c < agreed.label.size(); ++c)
    if (agreed.localMembers[c] > 0)
      all.emplace_back(agreed.label[c].id, GlobalId(agreed.localMembers[c]));
  std::sort(all.begin(), all.end());
  std::vector<GlobalId> counts;
  for (const auto& a : all)
  {
    if (!out.labels.empty() && out.labels.back() == a.first)
    {
      counts.back() += a.second;
      continue;
    }
    out.labels.push_back(a.first);
    counts.push_back(a.second);
  }
  // (label, count) pairs to each label's owner, which sums them.
  std::vector<std::vector<GlobalId>> ask(ranks);
  for (std::size_t u = 0; u < out.labels.size(); ++u)
  {
    ask[ownerOfLabel(out.labels[u], ranks)].push_back(out.labels[u]);
    ask[ownerOfLabel(out.labels[u], ranks)].push_back(counts[u]);
  }
  const auto asked = allToAllTyped(comm, ask);
  std::vector<std::pair<GlobalId, GlobalId>> owned;
  for (const auto& a : asked)
    for (std::size_t t = 0; t + 1 < a.size(); t += 2)
      owned.emplace_back(a[t], a[t + 1]);
  std::sort(owned.begin(), owned.end());
  for (const auto& o : owned)
  {
    if (!out.owned.empty() && out.owned.back().first == o.first)
      out.owned.back().second += o.second;
    else
      out.owned.push_back(o);
  }
  auto ownedSize = [&](GlobalId l)
  {
    auto it = std::lower_bound(out.owned.begin(), out.owned.end(), std::make_pair(l, GlobalId(-1)));
    return it != out.owned.end() && it->first == l ? it->second : GlobalId(0);
  };
  // The sums back to the askers, in the order they asked.
  std::vector<std::vector<GlobalId>> reply(ranks);
  for (int r = 0; r < ranks; ++r)
    for (std::size_t t = 0; t + 1 < asked[r].size(); t += 2)
      reply[r].push_back(ownedSize(asked[r][t]));
  const auto replies = allToAllTyped(comm, reply);
  out.sizes.resize(out.labels.size());
  std::vector<std::size_t> cursor(ranks, 0);
  for (std::size_t u = 0; u < out.labels.size(); ++u)
  {
    const int o = ownerOfLabel(out.labels[u], ranks);
    out.sizes[u] = replies[o][cursor[o]++];
  }
  out.componentSize.assign(agreed.label.size(), 0);
  for (std::size_t c = 0; c < agreed.label.size(); ++c)
    if (agreed.localMembers[c] > 0)
      out.componentSize[c] = out.sizes[out.slot(agreed.label[c].id)];
  return out;
}

GlobalId FofGroupNumbers::groupIdOf(GlobalId label) const
{
  auto it =
    std::lower_bound(idOfLabel.begin(), idOfLabel.end(), std::make_pair(label, GlobalId(-1)));
  return it != idOfLabel.end() && it->first == label ? it->second : GlobalId(-1);
}

FofGroupNumbers numberFofGroups(
  const FofGroupSizes& sizes, GlobalId minimumGroupSize, Communicator& comm)
{
  // A kept group as every rank sorts it: by descending size, then label.
  struct KeptGroup
  {
    GlobalId negativeSize;
    GlobalId label;
    bool operator<(const KeptGroup& o) const
    {
      return negativeSize < o.negativeSize || (negativeSize == o.negativeSize && label < o.label);
    }
  };
  std::vector<KeptGroup> keptOwned;
  for (const auto& o : sizes.owned)
    if (o.second >= minimumGroupSize)
      keptOwned.push_back(KeptGroup{ -o.second, o.first });
  std::vector<KeptGroup> kept = allGatherConcat(comm, keptOwned);
  std::sort(kept.begin(), kept.end());
  FofGroupNumbers out;
  out.numGroups = kept.size();
  for (std::size_t g = 0; g < kept.size(); ++g)
  {
    out.idOfLabel.emplace_back(kept[g].label, GlobalId(g));
    out.sizeOfGroup.push_back(-kept[g].negativeSize);
  }
  std::sort(out.idOfLabel.begin(), out.idOfLabel.end());
  return out;
}

template <class T>
void reduceFofCatalogue(const FofRankPoints<T>& points, const FofAgreedLabels& agreed,
  const FofGroupSizes& sizes, const FofGroupNumbers& numbers, const FofProblem<T>& problem,
  bool withVelocity, Communicator& comm, FofCatalogue& catalogue,
  std::vector<GlobalId>& catalogueGroupId)
{
  const int ranks = comm.size();
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  // This rank's sums per kept group, in order of first appearance, around
  // the group's label member (the same reference on every rank, as in the
  // single-process catalogue, so unwrapping does not depend on the partition).
  std::vector<GroupMoments> partials;
  std::vector<long long> partialOfSlot(sizes.labels.size(), -1);
  // Absent velocities are zero (GroupMoments treats null as zero).
  auto velocityOf = [&](Index i)
  { return points.velocity.empty() ? nullptr : &points.velocity[3 * std::size_t(i)]; };
  // Per component: its kept group's partial sums (-1: none yet; -2: not kept).
  std::vector<long long> partialOf(agreed.label.size(), -1);
  for (std::size_t c = 0; c < agreed.label.size(); ++c)
    if (agreed.localMembers[c] > 0 && numbers.groupIdOf(agreed.label[c].id) < 0)
      partialOf[c] = -2;
  for (Index i = 0; i < points.numLocal(); ++i)
  {
    if (agreed.isSingle(i))
      continue;
    const Index c = agreed.component[i];
    if (partialOf[c] == -2)
      continue;
    const FofLabel& label = agreed.label[c];
    long long& p = partialOf[c];
    if (p < 0)
    {
      // Components of one label share its partial.
      long long& shared = partialOfSlot[sizes.slot(label.id)];
      if (shared < 0)
      {
        shared = (long long)partials.size();
        partials.push_back(GroupMoments::around(label.id, label.ref, velocityOf(i)));
      }
      p = shared;
    }
    double x[3];
    for (int d = 0; d < 3; ++d)
      x[d] = double(points.xyz[3 * i + d]);
    partials[p].add(x, points.mass.empty() ? 1.0 : points.mass[i], velocityOf(i), per.length);
  }
  std::vector<std::vector<GroupMoments>> toOwner(ranks);
  for (const auto& gp : partials)
    toOwner[ownerOfLabel(gp.label, ranks)].push_back(gp);
  const auto gotPartials = allToAllTyped(comm, toOwner);
  std::vector<GroupMoments> all;
  for (const auto& part : gotPartials)
    all.insert(all.end(), part.begin(), part.end());
  std::stable_sort(all.begin(), all.end(),
    [&](const GroupMoments& a, const GroupMoments& b)
    { return numbers.groupIdOf(a.label) < numbers.groupIdOf(b.label); });
  catalogue = FofCatalogue();
  catalogue.hasVelocities = withVelocity;
  catalogueGroupId.clear();
  for (std::size_t i = 0; i < all.size();)
  {
    const GroupMoments& base = all[i];
    GroupMoments sum = GroupMoments::around(base.label, base.ref, base.vref);
    std::size_t j = i;
    for (; j < all.size() && all[j].label == base.label; ++j)
      sum.merge(all[j], per.length);
    catalogueGroupId.push_back(numbers.groupIdOf(base.label));
    sum.appendRow(problem.boxLo, per.length, withVelocity, catalogue);
    i = j;
  }
  catalogue.numGroups = catalogue.count.size();
}

namespace
{
// The results of the local points travel home as one code each, in the
// order each home rank sent them (the route): the GroupId of a kept group,
// else minus the group's size (-1: a single point). Code is 32-bit when
// every GroupId and size fits, else 64-bit.
template <class Code, class CodeOf>
void sendCodesHome(const ZOrderRoute& route, const CodeOf& codeOf, const FofGroupNumbers& numbers,
  Communicator& comm, GlobalId* groupId, GlobalId* groupSize)
{
  auto write = [&](Index input, GlobalId c)
  {
    groupId[input] = c >= 0 ? c : GlobalId(-1);
    groupSize[input] = c >= 0 ? numbers.sizeOfGroup[std::size_t(c)] : -c;
  };
  // This rank's own points in place; the others' blocks along the route.
  const std::vector<Index>& own = route.own();
  const std::size_t ownBegin = route.begin[route.rank];
  for (std::size_t j = 0; j < own.size(); ++j)
    write(own[j], codeOf(ownBegin + j));
  sendHomeAlongRoute(
    route, sizeof(Code),
    [&](std::size_t begin, std::size_t count, char* out)
    {
      for (std::size_t j = 0; j < count; ++j)
        putField(out, Code(codeOf(begin + j)));
    },
    [&](const std::vector<Index>& list, const char* in)
    {
      for (const Index i : list)
        write(i, GlobalId(takeField<Code>(in)));
    },
    comm);
}
} // namespace

void sendFofResultsHome(const ZOrderRoute& route, const FofAgreedLabels& agreed,
  const FofGroupSizes& sizes, const FofGroupNumbers& numbers, Communicator& comm, GlobalId* groupId,
  GlobalId* groupSize)
{
  // Per component with local points: its code (looked up once).
  std::vector<GlobalId> componentCode(agreed.label.size(), -1);
  for (std::size_t c = 0; c < agreed.label.size(); ++c)
    if (agreed.localMembers[c] > 0)
    {
      const GlobalId g = numbers.groupIdOf(agreed.label[c].id);
      componentCode[c] = g >= 0 ? g : -sizes.componentSize[c];
    }
  auto codeOf = [&](std::size_t i)
  { return agreed.isSingle(i) ? GlobalId(-1) : componentCode[agreed.component[i]]; };
  // Every GroupId and size is below the global point count.
  const bool narrow =
    allSum(comm, std::int64_t(route.size())) <= std::numeric_limits<std::int32_t>::max();
  if (narrow)
    sendCodesHome<std::int32_t>(route, codeOf, numbers, comm, groupId, groupSize);
  else
    sendCodesHome<std::int64_t>(route, codeOf, numbers, comm, groupId, groupSize);
}

#define JZ_FOF_PHASES(T)                                                                           \
  template FofRankPoints<T> decomposeFofPoints(                                                    \
    const FofProblem<T>&, const FofDistributedOptions&, Communicator&);                            \
  template FofGhostLinks exchangeFofGhosts(                                                        \
    FofRankPoints<T>&, const FofProblem<T>&, Communicator&, RunInfo*);                             \
  template FofGroups linkFofLocally(const FofRankPoints<T>&, const FofGhostLinks&,                 \
    const FofProblem<T>&, Backend, const RunControl&, Communicator&, RunInfo&);                    \
  template FofAgreedLabels agreeFofLabels(                                                         \
    const FofRankPoints<T>&, const FofGroups&, const FofGhostLinks&, GlobalId, Communicator&);     \
  template void reduceFofCatalogue(const FofRankPoints<T>&, const FofAgreedLabels&,                \
    const FofGroupSizes&, const FofGroupNumbers&, const FofProblem<T>&, bool, Communicator&,       \
    FofCatalogue&, std::vector<GlobalId>&);
JZ_FOF_PHASES(float)
JZ_FOF_PHASES(double)
#undef JZ_FOF_PHASES
} // namespace jz
