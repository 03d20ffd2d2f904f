// Friends-of-friends over several ranks (paper Appendix B, with ghost layers):
// z-order decomposition, the points within one linking length of each
// rank's points as ghosts, local linking, then labels (the smallest global
// id of each group) agreed across ranks by exchanging the labels of ghost
// copies until nothing changes; sizes, GroupIds and catalogue rows are
// reduced at an owner rank per group.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <string>

#include "Decomposition.h"
#include "GhostSelection.h"
#include "InputChecks.h"
#include "jz/Distributed.h"

namespace jz
{
namespace
{
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t)
{
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct FofPayload
{
  GlobalId id;
  double mass;
  double velocity[3];
  std::int32_t originRank;
  Index originIndex;
};

struct GhostPayload
{
  GlobalId id;
};

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

int ownerOf(GlobalId label, int ranks)
{
  return int(((label % ranks) + ranks) % ranks);
}

double nearestOffset(double d, double period)
{
  if (period > 0)
    d -= period * std::nearbyint(d / period);
  return d;
}

// Per-group sums of one rank, relative to a reference member of that rank.
struct GroupPartial
{
  GlobalId label;
  double count, mass;
  double ref[3], first[3], second; // reference position, sum m dx, sum m |dx|^2
  double vref[3], vfirst[3], vsecond;
};

template <class T>
std::string localFofError(const FofProblem<T>& pr)
{
  if (!std::isfinite(pr.linkingLength) || !(pr.linkingLength > 0))
    return "the linking length must be positive and finite (got " +
      std::to_string(pr.linkingLength) + ")";
  std::string e = periodicBoxError(pr.periodic, pr.boxLo, pr.boxHi);
  if (e.empty())
    e = nonFiniteError(pr.points, pr.numPoints, "point");
  if (!e.empty())
    return e;
  if (pr.numPoints > 0 && !pr.ids)
    return "distributed friends-of-friends needs global point ids";
  return {};
}
} // namespace

template <class T>
RunInfo computeFofDistributed(const FofProblem<T>& problem, const FofDistributedOptions& options,
  FofDistributedResult& result, Communicator& comm, Backend backend, const RunControl& control)
{
  const std::size_t n = problem.numPoints;
  result = FofDistributedResult();
  if (comm.size() == 1)
  {
    FofGroups groups;
    RunInfo info = computeFofGroups(problem, groups, backend, control);
    result.groupId.resize(n);
    result.groupSize.resize(n);
    result.numGroups = labelFofGroups(groups.groupRoot.data(), groups.groupLabel.data(), n,
      options.minimumGroupSize, result.groupId.data(), result.groupSize.data(), control);
    FofCatalogueInput<T> in;
    in.points = problem.points;
    in.numPoints = n;
    in.groupId = result.groupId.data();
    in.numGroups = result.numGroups;
    in.masses = options.masses;
    in.velocities = options.velocities;
    in.ids = problem.ids;
    in.periodic = problem.periodic;
    for (int d = 0; d < 3; ++d)
    {
      in.boxLo[d] = problem.boxLo[d];
      in.boxHi[d] = problem.boxHi[d];
    }
    computeFofCatalogue(in, result.catalogue, control);
    for (std::size_t g = 0; g < result.numGroups; ++g)
      result.catalogueGroupId.push_back(GlobalId(g));
    return info;
  }

  RunInfo info;
  const int me = comm.rank(), ranks = comm.size();
  agreeOnErrors(comm, localFofError(problem));
  info.backend = resolveBackendOnAllRanks(comm, backend);
  const bool withVelocity = allSum(comm, options.velocities ? 1 : 0) > 0;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  const double l2 = problem.linkingLength * problem.linkingLength;

  // 1. Decomposition in z-order.
  auto t0 = Clock::now();
  using Item = Travelling<T, FofPayload>;
  std::vector<Item> items(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    Item& it = items[i];
    for (int d = 0; d < 3; ++d)
    {
      const T x = problem.points[3 * i + d];
      it.p[d] = per.enabled() ? wrapIntoBox(x, problem.boxLo[d], per.length[d]) : T(x + T(0));
      it.payload.velocity[d] = options.velocities ? options.velocities[3 * i + d] : 0.0;
    }
    it.payload.id = problem.ids[i];
    it.payload.mass = options.masses ? options.masses[i] : 1.0;
    it.payload.originRank = me;
    it.payload.originIndex = Index(i);
  }
  items = decomposeInZOrder(items, comm);
  const Index local = Index(items.size());
  std::vector<T> xyz(3 * std::size_t(local));
  std::vector<GlobalId> ids(local);
  for (Index i = 0; i < local; ++i)
  {
    for (int d = 0; d < 3; ++d)
      xyz[3 * i + d] = items[i].p[d];
    ids[i] = items[i].payload.id;
  }
  info.stageSeconds.emplace_back("decomposition", since(t0));

  // 2. Ghosts: the points within one linking length of another rank's points.
  t0 = Clock::now();
  std::vector<std::vector<Index>> sent(ranks); // local indices sent to each rank, in order
  std::vector<std::size_t> ghostBegin(ranks + 1, local);
  {
    ZTree<T> tree;
    buildTreeCpu(xyz.data(), local, (const T*)nullptr, 0, per, problem.boxLo, TreeBuildOptions(),
      tree, RunControl());
    std::vector<Region<T>> regions;
    if (local > 0)
      regions = regionsFromTree(tree, std::vector<double>(tree.planes[0].numNodes(), l2));
    const auto allRegions = gatherRegions(regions, comm);
    std::vector<std::vector<Index>> ghosts =
      local > 0 ? selectGhosts(tree, allRegions, me) : std::vector<std::vector<Index>>(ranks);
    std::vector<std::vector<Travelling<T, GhostPayload>>> send(ranks);
    for (int r = 0; r < ranks; ++r)
    {
      for (Index s : ghosts[r])
      {
        const Index in = tree.sources.inputIndex[s];
        sent[r].push_back(in);
        Travelling<T, GhostPayload> g;
        for (int d = 0; d < 3; ++d)
          g.p[d] = xyz[3 * in + d];
        g.payload.id = ids[in];
        send[r].push_back(g);
      }
    }
    const auto got = allToAllTyped(comm, send);
    std::size_t at = local;
    for (int r = 0; r < ranks; ++r)
    {
      ghostBegin[r] = at;
      for (const auto& g : got[r])
      {
        xyz.insert(xyz.end(), g.p, g.p + 3);
        ids.push_back(g.payload.id);
      }
      at += got[r].size();
    }
    ghostBegin[ranks] = at;
  }
  const std::size_t total = ids.size();
  info.stageSeconds.emplace_back("ghost exchange", since(t0));
  info.counters.emplace_back("local points", double(local));
  info.counters.emplace_back("ghost points received", double(total - local));

  // 3. Local linking over local and ghost points.
  t0 = Clock::now();
  FofGroups groups;
  std::string runError;
  try
  {
    if (total > 0)
    {
      FofProblem<T> lp = problem;
      lp.points = xyz.data();
      lp.numPoints = total;
      lp.ids = ids.data();
      RunInfo localInfo = computeFofGroups(lp, groups, info.backend, control);
      info.backend = localInfo.backend;
      for (auto& s : localInfo.stageSeconds)
        info.stageSeconds.push_back(s);
    }
  }
  catch (const std::exception& e)
  {
    runError = e.what();
  }
  agreeOnErrors(comm, runError);
  info.stageSeconds.emplace_back("local linking", since(t0));

  // 4. Labels agreed across ranks: a group's label is the smallest global id
  // of its members, travelling with that member's position (the catalogue's
  // reference point); ghost copies and their owners exchange labels until no
  // rank lowers one.
  t0 = Clock::now();
  struct Label
  {
    GlobalId id;
    double ref[3];
  };
  std::vector<Label> compLabel(total);
  for (std::size_t i = 0; i < total; ++i)
  {
    if (ids[i] != groups.groupLabel[i])
      continue;
    Label& l = compLabel[groups.groupRoot[i]];
    l.id = ids[i];
    for (int d = 0; d < 3; ++d)
      l.ref[d] = double(xyz[3 * i + d]);
  }
  auto labelOf = [&](std::size_t i) -> Label& { return compLabel[groups.groupRoot[i]]; };
  auto lower = [](Label& mine, const Label& other)
  {
    if (other.id >= mine.id)
      return false;
    mine = other;
    return true;
  };
  int rounds = 0;
  for (;; ++rounds)
  {
    std::int64_t changed = 0;
    // Ghost holders tell owners.
    std::vector<std::vector<Label>> up(ranks);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t j = ghostBegin[r]; j < ghostBegin[r + 1]; ++j)
        up[r].push_back(labelOf(j));
    const auto gotUp = allToAllTyped(comm, up);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t t = 0; t < gotUp[r].size() && t < sent[r].size(); ++t)
        if (lower(labelOf(sent[r][t]), gotUp[r][t]))
          changed = 1;
    // Owners tell ghost holders.
    std::vector<std::vector<Label>> down(ranks);
    for (int r = 0; r < ranks; ++r)
      for (Index i : sent[r])
        down[r].push_back(labelOf(i));
    const auto gotDown = allToAllTyped(comm, down);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t t = 0; t < gotDown[r].size(); ++t)
        if (lower(labelOf(ghostBegin[r] + t), gotDown[r][t]))
          changed = 1;
    if (allSum(comm, changed) == 0)
      break;
  }
  // Points alone in their component of the local-and-ghost graph are alone
  // in their global group too: size 1, no communication needed (most points
  // of uniform data). Only when single points are kept groups themselves do
  // they go through the numbering below.
  std::vector<char> single(local, 0);
  if (options.minimumGroupSize > 1)
  {
    std::vector<Index> members(total, 0);
    for (std::size_t i = 0; i < total; ++i)
      ++members[groups.groupRoot[i]];
    for (Index i = 0; i < local; ++i)
      single[i] = members[groups.groupRoot[i]] == 1;
  }
  std::vector<GlobalId> label(local);
  std::vector<std::array<double, 3>> reference(local);
  for (Index i = 0; i < local; ++i)
  {
    const Label& l = labelOf(i);
    label[i] = l.id;
    reference[i] = { l.ref[0], l.ref[1], l.ref[2] };
  }
  std::vector<Label>().swap(compLabel);
  info.counters.emplace_back("label rounds", double(rounds + 1));
  info.stageSeconds.emplace_back("label agreement", since(t0));

  // 5. Group sizes, reduced at the owner rank of each label.
  t0 = Clock::now();
  std::vector<GlobalId> uniq;
  uniq.reserve(local);
  for (Index i = 0; i < local; ++i)
    if (!single[i])
      uniq.push_back(label[i]);
  std::sort(uniq.begin(), uniq.end());
  std::vector<GlobalId> counts;
  {
    std::vector<GlobalId> u;
    for (std::size_t i = 0; i < uniq.size();)
    {
      std::size_t j = i;
      while (j < uniq.size() && uniq[j] == uniq[i])
        ++j;
      u.push_back(uniq[i]);
      counts.push_back(GlobalId(j - i));
      i = j;
    }
    uniq.swap(u);
  }
  auto localSlot = [&](GlobalId l)
  { return std::size_t(std::lower_bound(uniq.begin(), uniq.end(), l) - uniq.begin()); };
  std::vector<std::vector<GlobalId>> ask(ranks); // (label, count) pairs
  for (std::size_t u = 0; u < uniq.size(); ++u)
  {
    ask[ownerOf(uniq[u], ranks)].push_back(uniq[u]);
    ask[ownerOf(uniq[u], ranks)].push_back(counts[u]);
  }
  const auto asked = allToAllTyped(comm, ask);
  std::vector<std::pair<GlobalId, GlobalId>> owned; // (label, size) of the groups this rank owns
  for (const auto& a : asked)
    for (std::size_t t = 0; t + 1 < a.size(); t += 2)
      owned.emplace_back(a[t], a[t + 1]);
  std::sort(owned.begin(), owned.end());
  {
    std::vector<std::pair<GlobalId, GlobalId>> merged;
    for (const auto& o : owned)
    {
      if (!merged.empty() && merged.back().first == o.first)
        merged.back().second += o.second;
      else
        merged.push_back(o);
    }
    owned.swap(merged);
  }
  auto ownedSize = [&](GlobalId l)
  {
    auto it = std::lower_bound(owned.begin(), owned.end(), std::make_pair(l, GlobalId(-1)));
    return it != owned.end() && it->first == l ? it->second : GlobalId(0);
  };
  std::vector<std::vector<GlobalId>> reply(ranks);
  for (int r = 0; r < ranks; ++r)
    for (std::size_t t = 0; t + 1 < asked[r].size(); t += 2)
      reply[r].push_back(ownedSize(asked[r][t]));
  const auto replies = allToAllTyped(comm, reply);
  std::vector<GlobalId> sizeOfSlot(uniq.size());
  {
    std::vector<std::size_t> cursor(ranks, 0);
    for (std::size_t u = 0; u < uniq.size(); ++u)
    {
      const int o = ownerOf(uniq[u], ranks);
      sizeOfSlot[u] = replies[o][cursor[o]++];
    }
  }

  // 6. GroupIds: kept groups by descending size, ties by the smaller label.
  std::vector<KeptGroup> keptOwned;
  for (const auto& o : owned)
    if (o.second >= options.minimumGroupSize)
      keptOwned.push_back(KeptGroup{ -o.second, o.first });
  std::vector<KeptGroup> kept = allGatherConcat(comm, keptOwned);
  std::sort(kept.begin(), kept.end());
  result.numGroups = kept.size();
  std::vector<std::pair<GlobalId, GlobalId>> idOfLabel; // (label, GroupId)
  for (std::size_t g = 0; g < kept.size(); ++g)
    idOfLabel.emplace_back(kept[g].label, GlobalId(g));
  std::sort(idOfLabel.begin(), idOfLabel.end());
  auto groupIdOf = [&](GlobalId l)
  {
    auto it = std::lower_bound(idOfLabel.begin(), idOfLabel.end(), std::make_pair(l, GlobalId(-1)));
    return it != idOfLabel.end() && it->first == l ? it->second : GlobalId(-1);
  };
  info.stageSeconds.emplace_back("sizes and numbering", since(t0));

  // 7. Catalogue partial sums per kept group, combined at its owner.
  t0 = Clock::now();
  std::vector<GroupPartial> partials;
  std::vector<long long> partialOfSlot(uniq.size(), -1);
  for (Index i = 0; i < local; ++i)
  {
    if (single[i])
      continue;
    const std::size_t u = localSlot(label[i]);
    if (groupIdOf(label[i]) < 0)
      continue;
    const FofPayload& pl = items[i].payload;
    if (partialOfSlot[u] < 0)
    {
      partialOfSlot[u] = (long long)partials.size();
      GroupPartial gp{};
      gp.label = label[i];
      // The member with the smallest id is the reference point, as in the
      // single-process catalogue, so periodic unwrapping does not depend on
      // the partition.
      for (int d = 0; d < 3; ++d)
      {
        gp.ref[d] = reference[i][d];
        gp.vref[d] = pl.velocity[d];
      }
      partials.push_back(gp);
    }
    GroupPartial& gp = partials[partialOfSlot[u]];
    const double m = pl.mass;
    gp.count += 1;
    gp.mass += m;
    double s = 0, sv = 0;
    for (int d = 0; d < 3; ++d)
    {
      const double dx = nearestOffset(double(xyz[3 * i + d]) - gp.ref[d], per.length[d]);
      const double dv = pl.velocity[d] - gp.vref[d];
      gp.first[d] += m * dx;
      gp.vfirst[d] += m * dv;
      s += dx * dx;
      sv += dv * dv;
    }
    gp.second += m * s;
    gp.vsecond += m * sv;
  }
  std::vector<std::vector<GroupPartial>> toOwner(ranks);
  for (const auto& gp : partials)
    toOwner[ownerOf(gp.label, ranks)].push_back(gp);
  const auto gotPartials = allToAllTyped(comm, toOwner);
  std::vector<GroupPartial> all;
  for (const auto& part : gotPartials)
    all.insert(all.end(), part.begin(), part.end());
  std::stable_sort(all.begin(), all.end(),
    [&](const GroupPartial& a, const GroupPartial& b)
    { return groupIdOf(a.label) < groupIdOf(b.label); });
  FofCatalogue& cat = result.catalogue;
  cat.hasVelocities = withVelocity;
  for (std::size_t i = 0; i < all.size();)
  {
    std::size_t j = i;
    const GroupPartial& base = all[i];
    double count = 0, M = 0, S[3] = { 0, 0, 0 }, Q = 0, V[3] = { 0, 0, 0 }, W = 0;
    for (; j < all.size() && all[j].label == base.label; ++j)
    {
      const GroupPartial& p = all[j];
      double shift[3], vshift[3];
      for (int d = 0; d < 3; ++d)
      {
        shift[d] = nearestOffset(p.ref[d] - base.ref[d], per.length[d]);
        vshift[d] = p.vref[d] - base.vref[d];
      }
      count += p.count;
      M += p.mass;
      double sq = 0, vsq = 0, cross = 0, vcross = 0;
      for (int d = 0; d < 3; ++d)
      {
        S[d] += p.first[d] + p.mass * shift[d];
        V[d] += p.vfirst[d] + p.mass * vshift[d];
        sq += shift[d] * shift[d];
        vsq += vshift[d] * vshift[d];
        cross += shift[d] * p.first[d];
        vcross += vshift[d] * p.vfirst[d];
      }
      Q += p.second + 2 * cross + p.mass * sq;
      W += p.vsecond + 2 * vcross + p.mass * vsq;
    }
    result.catalogueGroupId.push_back(groupIdOf(base.label));
    cat.count.push_back(GlobalId(count + 0.5));
    cat.mass.push_back(M);
    double c2 = 0, v2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      const double off = M != 0 ? S[d] / M : 0.0;
      double c = base.ref[d] + off;
      if (per.enabled())
        c = double(wrapIntoBox(c, problem.boxLo[d], per.length[d]));
      cat.centerOfMass.push_back(c);
      c2 += off * off;
      const double voff = M != 0 ? V[d] / M : 0.0;
      if (withVelocity)
        cat.meanVelocity.push_back(base.vref[d] + voff);
      v2 += voff * voff;
    }
    cat.inertiaRadius.push_back(M > 0 ? std::sqrt(std::max(0.0, Q / M - c2)) : 0.0);
    if (withVelocity)
      cat.velocityDispersion.push_back(M > 0 ? std::sqrt(std::max(0.0, (W / M - v2) / 3)) : 0.0);
    i = j;
  }
  cat.numGroups = cat.count.size();
  info.stageSeconds.emplace_back("catalogue", since(t0));

  // 8. GroupId and GroupSize back to where each point came from.
  t0 = Clock::now();
  struct Home
  {
    Index index;
    GlobalId groupId, groupSize;
  };
  std::vector<std::vector<Home>> home(ranks);
  for (Index i = 0; i < local; ++i)
  {
    const FofPayload& pl = items[i].payload;
    if (single[i])
      home[pl.originRank].push_back(Home{ pl.originIndex, -1, 1 });
    else
      home[pl.originRank].push_back(
        Home{ pl.originIndex, groupIdOf(label[i]), sizeOfSlot[localSlot(label[i])] });
  }
  const auto arrived = allToAllTyped(comm, home);
  result.groupId.assign(n, -1);
  result.groupSize.assign(n, 0);
  for (const auto& part : arrived)
  {
    for (const Home& h : part)
    {
      result.groupId[h.index] = h.groupId;
      result.groupSize[h.index] = h.groupSize;
    }
  }
  info.stageSeconds.emplace_back("results home", since(t0));
  return info;
}

template RunInfo computeFofDistributed<float>(const FofProblem<float>&,
  const FofDistributedOptions&, FofDistributedResult&, Communicator&, Backend, const RunControl&);
template RunInfo computeFofDistributed<double>(const FofProblem<double>&,
  const FofDistributedOptions&, FofDistributedResult&, Communicator&, Backend, const RunControl&);
} // namespace jz
