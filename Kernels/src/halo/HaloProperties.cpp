// Halo catalogue additions (jz/HaloProperties.h): centres of potential from
// each group's own members, and spherical-overdensity masses over all
// particles, with the same steps for one rank and for several:
//  1. every group's members travel to the rank that owns its catalogue row,
//     which sums their potentials (directly for small groups; else only for
//     the candidates a filter over leaves, or for the largest groups a
//     branch and bound, leaves);
//  2. the centres go to every rank; each rank collects its particles within a
//     trial radius of each centre (periodic: from a grid of cells sorted once
//     for all rounds, SphericalOverdensityGrid.h, unless the particles crowd
//     its cells; else one walk of the engine, RangeCollectPolicy.h, or a scan
//     for a few centres) and sends (r^2, m) to the owner, which sorts the
//     profile and applies the discrete SO definition; centres whose profile
//     is still above the threshold at the trial radius retry with three
//     times it. One rank with the grid does the same per centre in its
//     thread's buffer (soOnGrid: no profile kept per centre).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <omp.h>

#include "halo/MostBound.h"
#include "halo/RangeCollectPolicy.h"
#include "halo/SphericalOverdensityGrid.h"
#include "jz/Geometry.h"
#include "jz/HaloProperties.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"
#include "jz/Validate.h"
#include "walk/BoxMetric.h"
#include "walk/DualWalk.h"

namespace jz
{
namespace
{
constexpr double kPi = 3.14159265358979323846;


// Where each group's row lives: owner rank and row index there.
struct RowDirectory
{
  std::vector<int> owner;
  std::vector<std::size_t> row;
};

RowDirectory directory(Communicator& comm, const std::vector<GlobalId>& rowGroupId, std::size_t G)
{
  RowDirectory dir{ std::vector<int>(G, -1), std::vector<std::size_t>(G, 0) };
  const std::vector<std::vector<char>> all = comm.allGather(toBytes(rowGroupId));
  for (std::size_t r = 0; r < all.size(); ++r)
  {
    const std::vector<GlobalId> rows = fromBytes<GlobalId>(all[r]);
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i] >= 0 && std::size_t(rows[i]) < G)
      {
        dir.owner[rows[i]] = int(r);
        dir.row[rows[i]] = i;
      }
  }
  return dir;
}


// Groups up to this many members are timed together (the benchmark's
// counters), larger ones one by one.
constexpr std::size_t kTimedCentreFrom = 512;

// Groups above this many members are solved with all threads, one at a time.
constexpr std::size_t kTeamCentreLimit = 200000;

template <class T>
void potentialCentres(Communicator& comm, const HaloPropertiesInput<T>& in,
  const HaloPropertiesOptions& o, const RowDirectory& dir, HaloProperties& out, int threads,
  RunInfo& info)
{
  // Every member to its group's owner. Each row's members in one span
  // (counting sort): on one rank their point indices in input order, else
  // the members received, in arrival order; a group's members are built
  // where its thread solves it (8 bytes a member here instead of a copy).
  const std::size_t rows = in.rowGroupId.size();
  auto member = [&](std::size_t i)
  {
    return PotentialMember{ { double(in.points[3 * i]), double(in.points[3 * i + 1]),
                     double(in.points[3 * i + 2]) },
      in.masses ? in.masses[i] : 1.0, in.ids ? in.ids[i] : GlobalId(i), in.groupId[i] };
  };
  auto inGroup = [&](std::size_t i)
  { return in.groupId[i] >= 0 && std::size_t(in.groupId[i]) < in.numGroups; };
  std::vector<std::size_t> offset(rows + 1, 0);
  const bool local = comm.size() == 1;
  std::vector<std::size_t> index; // one rank
  std::vector<PotentialMember> received;   // several
  auto place = [&](auto& into, auto&& rowOf, std::size_t count, auto&& item)
  {
    for (std::size_t i = 0; i < count; ++i)
      if (rowOf(i) < rows)
        ++offset[rowOf(i) + 1];
    for (std::size_t r = 0; r < rows; ++r)
      offset[r + 1] += offset[r];
    std::decay_t<decltype(into)> sorted;
    resizeHugePages(sorted, offset[rows]); // fresh 4 KiB pages cost more than the sort
    std::vector<std::size_t> next(offset.begin(), offset.end() - 1);
    for (std::size_t i = 0; i < count; ++i)
      if (rowOf(i) < rows)
        sorted[next[rowOf(i)]++] = item(i);
    into.swap(sorted);
  };
  if (local)
    place(
      index, [&](std::size_t i) { return inGroup(i) ? dir.row[in.groupId[i]] : rows; },
      in.numPoints, [](std::size_t i) { return i; });
  else
  {
    std::vector<std::vector<PotentialMember>> send(comm.size());
    for (std::size_t i = 0; i < in.numPoints; ++i)
      if (inGroup(i))
        send[dir.owner[in.groupId[i]]].push_back(member(i));
    for (auto& part : allToAllTyped(comm, send))
      received.insert(received.end(), part.begin(), part.end());
    place(
      received, [&](std::size_t i) { return dir.row[received[i].group]; }, received.size(),
      [&](std::size_t i) { return received[i]; });
  }
  auto groupSize = [&](std::size_t r) { return offset[r + 1] - offset[r]; };

  out.centreOfPotential.assign(3 * rows, 0.0);
  out.mostBoundId.assign(rows, -1);
  double length[3] = { 0, 0, 0 };
  if (in.periodic)
    for (int k = 0; k < 3; ++k)
      length[k] = in.boxHi[k] - in.boxLo[k];
  // Small groups in parallel (one thread each), large ones with all threads.
  std::vector<double> seconds(rows, 0.0); // per group (thread CPU seconds; reported)
  std::vector<PotentialCentreStats> stats(rows);
  auto solve = [&](std::size_t r, int teamThreads)
  {
    const std::size_t n = groupSize(r);
    if (n == 0)
      return;
    const bool timed = n > kTimedCentreFrom;
    const double cpu0 = timed ? threadCpuSeconds() : 0.0;
    thread_local std::vector<PotentialMember> mem, unwrapped; // a thread's, for all its groups
    mem.resize(n);
    for (std::size_t k = 0; k < n; ++k)
      mem[k] = local ? member(index[offset[r] + k]) : received[offset[r] + k];
    auto byId = [](const PotentialMember& a, const PotentialMember& b) { return a.id < b.id; };
    if (!std::is_sorted(mem.begin(), mem.end(), byId)) // often already: ids follow the input
      std::sort(mem.begin(), mem.end(), byId);
    unwrapped = mem;
    for (PotentialMember& mb : unwrapped)
      for (int k = 0; k < 3; ++k)
        mb.x[k] = mem[0].x[k] + nearestImageOffset(mb.x[k] - mem[0].x[k], length[k]);
    const std::size_t b = mostBound(unwrapped, o.softening, o.gravitationalConstant, teamThreads, &stats[r]);
    std::copy(mem[b].x, mem[b].x + 3, &out.centreOfPotential[3 * r]);
    out.mostBoundId[r] = mem[b].id;
    if (mem.capacity() > (std::size_t(1) << 16)) // kept for groups up to 65,536 (6 MB)
      mem = unwrapped = std::vector<PotentialMember>();
    seconds[r] = timed ? threadCpuSeconds() - cpu0 : 0.0;
  };
  // One thread per group, largest first so that no thread is left with a
  // big group at the end (a group per parallel region would leave the other
  // threads waiting between regions); only a group too large to balance
  // gets all threads.
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < rows; ++r)
    if (groupSize(r) <= kTeamCentreLimit)
      order.push_back(r);
  std::sort(order.begin(), order.end(),
    [&](std::size_t a, std::size_t b) { return groupSize(a) > groupSize(b); });
  // The small groups come last in every thread's share (largest first):
  // timed per thread from its first one (a thread CPU clock per group is
  // a system call, too dear for thousands of small groups).
  double smallSeconds = 0;
#pragma omp parallel num_threads(threads) reduction(+ : smallSeconds)
  {
    double smallFrom = -1;
#pragma omp for schedule(dynamic, 1) nowait
    for (long long i = 0; i < (long long)order.size(); ++i)
    {
      if (smallFrom < 0 && groupSize(order[i]) <= kTimedCentreFrom)
        smallFrom = threadCpuSeconds();
      solve(order[i], 1);
    }
    if (smallFrom >= 0)
      smallSeconds += threadCpuSeconds() - smallFrom;
  }
  for (std::size_t r = 0; r < rows; ++r)
    if (groupSize(r) > kTeamCentreLimit)
      solve(r, threads);
  // Where the time goes: the groups summed directly and the bounded ones.
  double direct = smallSeconds, bounded = 0;
  PotentialCentreStats sum;
  for (std::size_t r = 0; r < rows; ++r)
  {
    (groupSize(r) <= kDirectCentreLimit ? direct : bounded) += seconds[r];
    sum.nodes += stats[r].nodes;
    sum.leaves += stats[r].leaves;
    sum.nearPairs += stats[r].nearPairs;
    sum.exactNear += stats[r].exactNear;
    sum.exact += stats[r].exact;
    sum.fallbacks += stats[r].fallbacks;
    sum.refinements += stats[r].refinements;
  }
  info.counters.emplace_back("centre CPU ms direct groups", 1e3 * direct);
  info.counters.emplace_back("centre CPU ms bounded groups", 1e3 * bounded);
  info.counters.emplace_back("centre bound nodes", sum.nodes);
  info.counters.emplace_back("centre bound leaves", sum.leaves);
  info.counters.emplace_back("centre bound refinements", sum.refinements);
  info.counters.emplace_back("centre near sums", sum.exactNear);
  info.counters.emplace_back("centre near pairs", sum.nearPairs);
  info.counters.emplace_back("centre exact sums", sum.exact);
  info.counters.emplace_back("centre tree-ranked groups", sum.fallbacks);
}

// A few centres (the later SO rounds) scan every particle: cheaper than
// building a tree over all of them again.
constexpr std::size_t kScanCentres = 64;

// A periodic grid search may visit this many particles per particle (plus a
// constant) before the tree takes over.
constexpr std::size_t kGridWorkPerPoint = 16;

// The centres wrapped into the periodic box, in double: distances are taken
// from them exactly, whatever the particles' precision.
std::vector<double> wrappedCentres(
  std::vector<double> centres, const Periodicity& per, const double* boxLo)
{
  if (per.enabled())
    for (std::size_t i = 0; i < centres.size(); ++i)
      centres[i] = wrapIntoBox(centres[i], boxLo[i % 3], per.length[i % 3]);
  return centres;
}

// (r^2, m) of this rank's particles within each of a few centres' radii, by
// a scan over the particles, wrapped as the tree build wraps them.
template <class T>
void scanWithin(const HaloPropertiesInput<T>& in, const Periodicity& per,
  const std::vector<double>& centres, const std::vector<double>& radius2, int threads,
  std::vector<std::vector<std::pair<double, double>>>& found)
{
  const std::size_t nc = radius2.size();
  std::vector<std::vector<std::vector<std::pair<double, double>>>> part(
    std::size_t(std::max(1, threads)), std::vector<std::vector<std::pair<double, double>>>(nc));
  withBoxMetric(per,
    [&](const auto& metric)
    {
#pragma omp parallel num_threads(threads)
      {
        auto& mine = part[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(static)
        for (long long j = 0; j < (long long)in.numPoints; ++j)
        {
          double y[3];
          for (int k = 0; k < 3; ++k)
          {
            const T x = in.points[3 * j + k];
            y[k] = double(per.enabled() ? wrapIntoBox(x, in.boxLo[k], per.length[k]) : x);
          }
          for (std::size_t i = 0; i < nc; ++i)
          {
            const double r2 = metric.point2(&centres[3 * i], y);
            if (r2 <= radius2[i])
              mine[i].emplace_back(r2, in.masses ? in.masses[j] : 1.0);
          }
        }
      }
    });
  for (const auto& mine : part)
    for (std::size_t i = 0; i < nc; ++i)
      found[i].insert(found[i].end(), mine[i].begin(), mine[i].end());
}

// (r^2, m) of this rank's particles within each centre's radius, distances
// from the centres in double. The tree over particles and centres holds the
// centres rounded to T: its walk searches a radius widened by that rounding
// and the exact distance decides.
template <class T>
std::vector<std::vector<std::pair<double, double>>> collectWithin(const HaloPropertiesInput<T>& in,
  const std::vector<double>& centreList, const std::vector<double>& radius2, int threads,
  const SphericalOverdensityGrid<T>* grid)
{
  const std::size_t nc = radius2.size();
  std::vector<std::vector<std::pair<double, double>>> found(nc);
  if (nc == 0 || in.numPoints == 0)
    return found;
  const Periodicity per = Periodicity::of(in.periodic, in.boxLo, in.boxHi);
  const std::vector<double> centres = wrappedCentres(centreList, per, in.boxLo);
  // The grid unless the particles crowd into the cells scanned (a tree
  // adapts to any clustering).
  if (grid && grid->work(centres, radius2, threads) <= kGridWorkPerPoint * in.numPoints + 65536)
  {
    grid->collect(centres, radius2, threads, found);
    return found;
  }
  if (nc <= kScanCentres)
  {
    scanWithin(in, per, centres, radius2, threads, found);
    return found;
  }
  std::vector<T> q(3 * nc);
  for (std::size_t i = 0; i < 3 * nc; ++i)
    q[i] = T(centres[i]);
  ZTree<T> tree;
  buildTreeCpu(in.points, Index(in.numPoints), q.data(), Index(nc), per, in.boxLo,
    TreeBuildOptions(), tree, RunControl());
  std::vector<double> searchRadius2(nc);
  for (Index s = 0; s < tree.queries.size(); ++s)
  {
    const std::size_t c = tree.queries.inputIndex[s];
    // Twice the largest shift the rounding to T can make.
    double shift = 0;
    for (int k = 0; k < 3; ++k)
      shift += std::abs(double(q[3 * c + k]) - centres[3 * c + k]);
    const double r = std::sqrt(radius2[c]) + 2 * shift;
    searchRadius2[s] = r * r;
  }
  withBoxMetric(per,
    [&](const auto& metric)
    {
      auto sink = [&](Index sq, Index ss, double)
      {
        const std::size_t c = tree.queries.inputIndex[sq];
        T yt[3];
        tree.sources.point(ss, yt);
        const double y[3] = { double(yt[0]), double(yt[1]), double(yt[2]) };
        const double r2 = metric.point2(&centres[3 * c], y);
        if (r2 <= radius2[c])
          found[c].emplace_back(r2, in.masses ? in.masses[tree.sources.inputIndex[ss]] : 1.0);
      };
      using Policy = RangeCollectPolicy<T, std::decay_t<decltype(metric)>, decltype(sink)>;
      Policy policy(tree, metric, searchRadius2, sink);
      DualWalk<T, Policy> walk(tree, policy, threads);
      walk.leafPass(walk.walkDownTo(1));
    });
  return found;
}

SoResult soFromUnsortedProfile(
  std::vector<std::pair<double, double>>& profile, double threshold, bool* failed);

// A walk to be continued with the entries beyond the ones it has seen (all
// nearer than them): its mass and result so far, and how many it has seen.
struct SoWalkState
{
  double mass = 0;
  SoResult best;
  GlobalId base = 0;
};
SoResult soFromUnsortedProfile(std::vector<std::pair<double, double>>& profile, double threshold,
  bool* failed, SoWalkState& state);

// One rank with the grid: every centre's profile collected and decided in
// its thread's buffer (no profile per centre: fresh memory costs more than
// the search), retried there with three times the radius (the shell beyond
// the last radius only, the walk continued): the radii and
// the sets of the rounds in sphericalOverdensity, so the same results.
// False (nothing done) where the grid's cells are too crowded.
template <class T>
bool soOnGrid(const HaloPropertiesInput<T>& in, const SphericalOverdensityGrid<T>& grid,
  const std::vector<double>& centreList, const std::vector<double>& radius, double threshold,
  double rMax, double halfDiagonal2, HaloProperties& out, int threads, RunInfo& info)
{
  const Periodicity per = Periodicity::of(in.periodic, in.boxLo, in.boxHi);
  const std::vector<double> centres = wrappedCentres(centreList, per, in.boxLo);
  const std::size_t rows = radius.size();
  std::vector<double> radius2(rows);
  for (std::size_t r = 0; r < rows; ++r)
    radius2[r] = radius[r] * radius[r];
  if (grid.work(centres, radius2, threads) > kGridWorkPerPoint * in.numPoints + 65536)
    return false;
  const StageTimer timer(&info, "SO profiles on the grid");
  double retries = 0;
#pragma omp parallel num_threads(threads) reduction(+ : retries)
  {
    std::vector<std::pair<double, double>> profile;
#pragma omp for schedule(dynamic, 4)
    for (long long i = 0; i < (long long)rows; ++i)
    {
      const std::size_t r = std::size_t(i);
      // A retry collects and walks only the shell beyond the last radius,
      // continuing the walk: the sorted profile is the inner one followed by
      // the shell's, so the same sums.
      SoWalkState state;
      double inner2 = -1;
      for (double R = radius[r];; inner2 = R * R, R = std::min(3 * R, rMax), ++retries)
      {
        profile.clear();
        grid.collectOne(&centres[3 * r], R * R, profile, inner2);
        bool failed = false;
        const SoResult so = soFromUnsortedProfile(profile, threshold, &failed, state);
        // Decided as in the rounds: below inside R, or nothing beyond R can pass.
        if (failed || R >= rMax || R * R >= halfDiagonal2)
        {
          out.soRadius[r] = so.radius;
          out.soMass[r] = so.mass;
          out.soCount[r] = so.count;
          break;
        }
      }
    }
  }
  info.counters.emplace_back("SO retries", retries);
  return true;
}

struct ProfileChunk
{
  std::size_t row;
  double r2, m;
};

template <class T>
void sphericalOverdensity(Communicator& comm, const HaloPropertiesInput<T>& in,
  const HaloPropertiesOptions& o, const std::vector<double>& centres, HaloProperties& out,
  int threads, RunInfo& info)
{
  const std::size_t rows = in.rowGroupId.size();
  const double threshold = o.overdensity * o.referenceDensity;
  // Total mass: no particle beyond rMax can pass (M(<r) <= M_total).
  double localMass = 0;
  for (std::size_t i = 0; i < in.numPoints; ++i)
    localMass += in.masses ? in.masses[i] : 1.0;
  double totalMass = 0;
  for (const auto& b : comm.allGather(toBytes(std::vector<double>{ localMass })))
    totalMass += fromBytes<double>(b)[0];
  const double rMax = std::cbrt(3 * totalMass / (4 * kPi * threshold));
  double halfDiagonal2 = kInfinity; // periodic: every particle is this close
  if (in.periodic)
  {
    halfDiagonal2 = 0;
    for (int k = 0; k < 3; ++k)
      halfDiagonal2 += 0.25 * (in.boxHi[k] - in.boxLo[k]) * (in.boxHi[k] - in.boxLo[k]);
  }

  // Trial radius: twice the radius where the FoF mass would sit at the threshold.
  // The profile is decided only by a particle beyond the crossing, so with
  // several ranks (a retry costs a round of collectives) the radius is at
  // least two mean interparticle separations when periodic; on one rank a
  // retry is a second search of the same centre, cheaper there than
  // collecting more particles for every centre.
  std::int64_t total = std::int64_t(in.numPoints);
  comm.allReduceSum(&total, 1);
  const double spacing = in.periodic && comm.size() > 1
    ? std::cbrt((in.boxHi[0] - in.boxLo[0]) * (in.boxHi[1] - in.boxLo[1]) *
        (in.boxHi[2] - in.boxLo[2]) / double(std::max<std::int64_t>(total, 1)))
    : 0.0;
  std::vector<double> radius(rows);
  for (std::size_t r = 0; r < rows; ++r)
  {
    const double guess = in.rowMass.size() == rows && in.rowMass[r] > 0
      ? std::cbrt(3 * 8 * in.rowMass[r] / (4 * kPi * threshold))
      : 0.0;
    // Positive (an underflowed guess could never grow by retries), up to rMax.
    radius[r] = std::min(rMax, std::max(2 * spacing, guess > 0 ? guess : 0.125 * rMax));
  }
  out.soRadius.assign(rows, 0.0);
  out.soMass.assign(rows, 0.0);
  out.soCount.assign(rows, 0);
  std::vector<char> done(rows, 0);
  std::unique_ptr<SphericalOverdensityGrid<T>> grid;
  if (in.periodic && in.numPoints > 0)
  {
    const StageTimer timer(&info, "SO grid");
    grid = std::make_unique<SphericalOverdensityGrid<T>>(in.points, in.numPoints, in.masses,
      Periodicity::of(true, in.boxLo, in.boxHi), in.boxLo, threads);
  }
  if (comm.size() == 1 && grid &&
    soOnGrid(in, *grid, centres, radius, threshold, rMax, halfDiagonal2, out, threads, info))
    return;
  for (int round = 0;; ++round)
  {
    // Pending centres of all ranks: (owner row, centre, radius^2).
    std::vector<double> mine;
    std::vector<std::size_t> mineRows;
    for (std::size_t r = 0; r < rows; ++r)
      if (!done[r])
      {
        mine.insert(mine.end(),
          { centres[3 * r], centres[3 * r + 1], centres[3 * r + 2], radius[r] * radius[r] });
        mineRows.push_back(r);
      }
    const std::vector<std::vector<char>> allPending = comm.allGather(toBytes(mine));
    std::vector<double> c, r2;
    std::vector<std::pair<int, std::size_t>> whose; // (owner rank, index in its pending list)
    for (std::size_t rank = 0; rank < allPending.size(); ++rank)
    {
      const std::vector<double> v = fromBytes<double>(allPending[rank]);
      for (std::size_t i = 0; i + 3 < v.size(); i += 4)
      {
        c.insert(c.end(), { v[i], v[i + 1], v[i + 2] });
        r2.push_back(v[i + 3]);
        whose.emplace_back(int(rank), i / 4);
      }
    }
    if (r2.empty())
      break;
    info.counters.emplace_back("SO round " + std::to_string(round) + " centres", double(r2.size()));
    // Each centre's profile to its owner (one rank: the pending centres are
    // this rank's, in order).
    StageTimer search(&info, "SO round " + std::to_string(round) + " search");
    std::vector<std::vector<std::pair<double, double>>> profile =
      collectWithin(in, c, r2, threads, grid.get());
    if (comm.size() > 1)
    {
      std::vector<std::vector<ProfileChunk>> send(comm.size());
      for (std::size_t i = 0; i < profile.size(); ++i)
        for (const auto& e : profile[i])
          send[whose[i].first].push_back(ProfileChunk{ whose[i].second, e.first, e.second });
      profile.assign(mineRows.size(), {});
      for (const auto& part : allToAllTyped(comm, send))
        for (const ProfileChunk& e : part)
          profile[e.row].emplace_back(e.r2, e.m);
    }
    search.stop();
    const StageTimer decide(&info, "SO round " + std::to_string(round) + " profiles");
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (long long i = 0; i < (long long)mineRows.size(); ++i)
    {
      const std::size_t r = mineRows[i];
      bool failed = false;
      const SoResult so = soFromUnsortedProfile(profile[i], threshold, &failed);
      const double R = radius[r];
      // Decided: the profile fell below the threshold inside R, or nothing
      // beyond R can pass (beyond rMax, or every particle already listed).
      if (failed || R >= rMax || R * R >= halfDiagonal2)
      {
        out.soRadius[r] = so.radius;
        out.soMass[r] = so.mass;
        out.soCount[r] = so.count;
        done[r] = 1;
      }
      else
        radius[r] = std::min(3 * R, rMax);
    }
  }
}
} // namespace

namespace
{
// The discrete SO definition's walk (one home): the sorted entries [i, end)
// of a profile, continuing from `mass` and `best` after `base` entries
// nearer than them; true at the first crossing. Particles at the same
// distance enter together (a group must not straddle `end`).
bool soWalk(const std::vector<std::pair<double, double>>& profile, std::size_t i, std::size_t end,
  double threshold, double& mass, SoResult& best, GlobalId base = 0)
{
  while (i < end)
  {
    const double r2 = profile[i].first;
    std::size_t j = i;
    double m = mass;
    while (j < end && profile[j].first == r2)
      m += profile[j++].second;
    if (r2 > 0)
    {
      const double r = std::sqrt(r2);
      if (m / (4.0 / 3.0 * kPi * r * r * r) < threshold)
        return true;
    }
    mass = m;
    best.radius = std::sqrt(r2);
    best.mass = m;
    best.count = base + GlobalId(j);
    i = j;
  }
  return false;
}

// soFromProfile on an unsorted profile: the entries bucketed by distance
// (bins of equal width in r: a bin's index never falls as r^2 grows, so the
// bins, each sorted on its own, concatenate to the sorted profile), then
// walked bin by bin, each sorted only when the walk reaches it. The same
// entries in the same order as a full sort, so the same sums; about 3x
// cheaper than sorting chunks of nearest entries (nth_element).
SoResult soFromUnsortedProfile(
  std::vector<std::pair<double, double>>& profile, double threshold, bool* failed)
{
  SoWalkState state;
  return soFromUnsortedProfile(profile, threshold, failed, state);
}

SoResult soFromUnsortedProfile(std::vector<std::pair<double, double>>& profile, double threshold,
  bool* failed, SoWalkState& state)
{
  SoResult& best = state.best;
  double& mass = state.mass;
  const GlobalId base = state.base;
  state.base += GlobalId(profile.size());
  *failed = false;
  const std::size_t n = profile.size();
  double r2max = 0;
  for (const auto& e : profile)
    r2max = std::max(r2max, e.first);
  if (n <= 64 || !(r2max > 0))
  {
    std::sort(profile.begin(), profile.end());
    *failed = soWalk(profile, 0, n, threshold, mass, best, base);
    return best;
  }
  // A thread's buffers, kept for its next profiles of up to 2^22 entries.
  thread_local std::vector<std::uint32_t> binOf;
  thread_local std::vector<std::size_t> start;
  thread_local std::vector<std::pair<double, double>> sorted;
  const std::size_t bins = std::min<std::size_t>(n / 4, std::uint32_t(-1));
  const double perR = double(bins) / std::sqrt(r2max);
  binOf.resize(n);
  start.assign(bins + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
  {
    const std::size_t bin = std::min(bins - 1, std::size_t(std::sqrt(profile[i].first) * perR));
    binOf[i] = std::uint32_t(bin);
    ++start[bin + 1];
  }
  for (std::size_t k = 0; k < bins; ++k)
    start[k + 1] += start[k];
  sorted.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    sorted[start[binOf[i]]++] = profile[i];
  // start[k] is now the end of bin k.
  for (std::size_t k = 0, begin = 0; k < bins && !*failed; begin = start[k++])
  {
    std::sort(sorted.begin() + std::ptrdiff_t(begin), sorted.begin() + std::ptrdiff_t(start[k]));
    *failed = soWalk(sorted, begin, start[k], threshold, mass, best, base);
  }
  if (n > (std::size_t(1) << 22))
  {
    binOf = std::vector<std::uint32_t>();
    start = std::vector<std::size_t>();
    sorted = std::vector<std::pair<double, double>>();
  }
  return best;
}
} // namespace

SoResult soFromProfile(
  const std::vector<std::pair<double, double>>& profile, double threshold, bool* failed)
{
  SoResult best;
  double mass = 0;
  *failed = soWalk(profile, 0, profile.size(), threshold, mass, best);
  return best;
}

std::string haloOptionsError(const HaloPropertiesOptions& o, const InputNames& names)
{
  std::string e;
  if (o.potentialCentres)
  {
    e = rangeError(ranges::Softening, o.softening, names.softening);
    if (e.empty())
      e = rangeError(ranges::GravitationalConstant, o.gravitationalConstant,
        names.gravitationalConstant);
  }
  if (e.empty() && o.sphericalOverdensity)
  {
    e = rangeError(ranges::Overdensity, o.overdensity, names.overdensity);
    if (e.empty())
      e = rangeError(ranges::CriticalDensity, o.referenceDensity, names.referenceDensity);
  }
  return e;
}

template <class T>
RunInfo computeHaloProperties(Communicator& comm, const HaloPropertiesInput<T>& in,
  const HaloPropertiesOptions& o, HaloProperties& out, const RunControl& control)
{
  RunInfo info;
  std::string error = haloOptionsError(o);
  agreeOnErrors(comm, error);

  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  const RowDirectory dir = directory(comm, in.rowGroupId, in.numGroups);
  if (o.potentialCentres)
  {
    StageTimer timer(&info, "potential centres");
    potentialCentres(comm, in, o, dir, out, threads, info);
  }
  if (o.sphericalOverdensity)
  {
    StageTimer timer(&info, "spherical overdensity");
    const std::vector<double>& centres =
      o.potentialCentres ? out.centreOfPotential : in.rowCenterOfMass;
    sphericalOverdensity(comm, in, o, centres, out, threads, info);
  }
  return info;
}

template RunInfo computeHaloProperties<float>(Communicator&, const HaloPropertiesInput<float>&,
  const HaloPropertiesOptions&, HaloProperties&, const RunControl&);
template RunInfo computeHaloProperties<double>(Communicator&, const HaloPropertiesInput<double>&,
  const HaloPropertiesOptions&, HaloProperties&, const RunControl&);
} // namespace jz
