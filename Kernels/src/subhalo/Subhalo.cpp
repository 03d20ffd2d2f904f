// computeSubhalos: validation, the density order over all points, the groups
// (one per thread when small, all threads inside when large), each ending
// with its subhalos' catalogue rows, and the catalogue, numbered by
// (GroupId, SubhaloRank).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>

#include <omp.h>

#include "SubhaloCatalogue.h"
#include "SubhaloGroup.h"
#include "SubhaloProperties.h"
#include "jz/Geometry.h"
#include "jz/HugePages.h"
#include "jz/Knn.h"
#include "jz/StageTimer.h"
#include "jz/Subhalo.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
// Groups of at least this many members use every thread inside their
// neighbour searches and potentials; smaller ones run one per thread.
constexpr std::size_t kLargeGroup = 20000;

// The density search keeps this many nearest members of each grouped point
// (and one more) when SaddleNeighbors is larger: most points find their two
// denser neighbours among so few, and the lists' memory is the density
// stage's peak.
constexpr std::size_t kListedMembers = 10;

void addSeconds(std::atomic<double>& total, double seconds)
{
  double now = total.load();
  while (!total.compare_exchange_weak(now, now + seconds))
  {
  }
}

// What the density search saw of each querying point's group (in query
// order): the first min(saddleNeighbors, kListedMembers) + 1 other members
// of its group among its K nearest points, as positions within the group
// (2 bytes: the members of groups larger than kNoLocal list none), and the
// distance of the K-th (see DensityNeighbours). Empty where not collected.
// Not initialised here: the walk writes every entry.
template <class T>
struct GroupedNeighbours
{
  using Local = std::uint16_t;
  static constexpr Local kNoLocal = std::numeric_limits<Local>::max();
  std::size_t perPoint = 0;
  std::unique_ptr<Local[]> local;
  std::unique_ptr<T[]> radius;
};

// Whether the density search collects GroupedNeighbours: the CPU walk only
// reports its lists, and a K of at most saddleNeighbors cannot hold them.
template <class T>
bool collectsNeighbours(const SubhaloProblem<T>& p, Backend backend)
{
  return !p.densities && resolveBackend(backend) == Backend::CPU &&
    p.densityNeighbors > p.saddleNeighbors;
}

// The density of each of the `numQueried` points `queried` (in that order):
// only they query, in place; every point is a source. Their groups are
// runs: group r at [groupStart[r], groupStart[r + 1]) (the last to
// numQueried). Fills `seen` where collectsNeighbours; the search's stage
// times go to `info` as "density: <stage>".
template <class T>
std::vector<double> densities(const SubhaloProblem<T>& p, const Index* queried,
  std::size_t numQueried, const std::vector<std::size_t>& groupStart, Backend backend,
  const RunControl& control, GroupedNeighbours<T>& seen, RunInfo& info)
{
  if (p.densities)
  {
    std::vector<double> given(numQueried);
    for (std::size_t j = 0; j < numQueried; ++j)
      given[j] = p.densities[queried[j]];
    return given;
  }
  if (numQueried == 0)
    return {};
  KnnProblem<T> k = densityProblem(p);
  k.selfQueryIndices = queried;
  k.numSelfQueries = numQueried;
  std::vector<T> rho(numQueried);
  KnnResults<T> r;
  r.density = rho.data();
  using Seen = GroupedNeighbours<T>;
  using Local = typename Seen::Local;
  if (collectsNeighbours(p, backend))
  {
    const std::size_t per = std::min(std::size_t(p.saddleNeighbors), kListedMembers) + 1;
    seen.perPoint = per;
    seen.local = newHugeArray<Local>(numQueried * per);
    seen.radius = newHugeArray<T>(numQueried);
    r.smoothingLength = seen.radius.get();
    r.visitQueryRows = true; // a neighbour's query position tells its group and place there
    r.visitNeighbors = [&, per](std::size_t q, const Index* sources) // runs after this block
    {
      const auto g = std::upper_bound(groupStart.begin(), groupStart.end(), q) - 1;
      const std::size_t start = *g;
      const std::size_t end = g + 1 != groupStart.end() ? *(g + 1) : numQueried;
      Local* out = &seen.local[q * per];
      std::size_t kept = 0;
      for (int j = 0; j < k.k && kept < per && end - start <= Seen::kNoLocal; ++j)
      {
        const std::size_t s = sources[j];
        if (s >= start && s < end && s != q)
          out[kept++] = Local(s - start);
      }
      std::fill(out + kept, out + per, Seen::kNoLocal);
    };
  }
  const RunInfo search = computeKnn(k, r, backend, control);
  for (const auto& stage : search.stageSeconds)
    info.stageSeconds.emplace_back("density: " + stage.first, stage.second);
  return std::vector<double>(rho.begin(), rho.end());
}

// The group at query positions [at, at + n) as DensityNeighbours, given
// each position's member index.
template <class T>
DensityNeighbours groupNeighbours(const GroupedNeighbours<T>& seen, std::size_t at, std::size_t n,
  const std::vector<Index>& memberOf, const double* period)
{
  const std::size_t per = seen.perPoint;
  DensityNeighbours v;
  v.listed = per - 1;
  v.members.resize(n * per);
  v.radius.resize(n);
  v.period = std::max({ period[0], period[1], period[2] });
  for (std::size_t local = 0; local < n; ++local)
  {
    const std::size_t m = memberOf[local];
    v.radius[m] = double(seen.radius[at + local]);
    for (std::size_t c = 0; c < per; ++c)
    {
      const auto e = seen.local[(at + local) * per + c];
      v.members[m * per + c] =
        e == GroupedNeighbours<T>::kNoLocal ? DensityNeighbours::kNoMember : memberOf[e];
    }
  }
  return v;
}

// The group of the n input points `inputs` with densities `rho` (both in
// the same order, ascending input index; null: by global id alone);
// memberOf[j] is the member index of inputs[j]. The input rows are read in
// that order and scattered into the group's (small) arrays.
template <class T>
GroupMembers gatherGroup(const SubhaloProblem<T>& p, const Index* inputs, const double* rho,
  std::size_t n, const double* period, std::vector<Index>& memberOf)
{
  // Input rows lie anywhere in the input: fetched ahead.
  constexpr std::size_t kAhead = 16;
  std::vector<GlobalId> id(n);
  for (std::size_t j = 0; j < n; ++j)
  {
    if (p.ids && j + kAhead < n)
      __builtin_prefetch(p.ids + inputs[j + kAhead]);
    id[j] = p.ids ? p.ids[inputs[j]] : GlobalId(inputs[j]);
  }
  std::vector<Index> byDensity(n);
  std::iota(byDensity.begin(), byDensity.end(), Index(0));
  std::sort(byDensity.begin(), byDensity.end(),
    [&](Index a, Index b) { return rho && rho[a] != rho[b] ? rho[a] > rho[b] : id[a] < id[b]; });
  GroupMembers g;
  g.input.resize(n);
  g.id.resize(n);
  memberOf.resize(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    g.input[i] = inputs[byDensity[i]];
    g.id[i] = id[byDensity[i]];
    memberOf[byDensity[i]] = Index(i);
  }
  // The unwrapping's reference: the member of smallest global id.
  const std::size_t first = std::size_t(std::min_element(id.begin(), id.end()) - id.begin());
  const T* ref = p.points + 3 * std::size_t(inputs[first]);
  g.xyz.resize(3 * n);
  g.given.resize(3 * n);
  g.vel.resize(3 * n);
  g.mass.resize(n);
  for (std::size_t j = 0; j < n; ++j)
  {
    if (j + kAhead < n)
    {
      const std::size_t ahead = inputs[j + kAhead];
      __builtin_prefetch(p.velocities + 3 * ahead);
      __builtin_prefetch(p.points + 3 * ahead);
      if (p.masses)
        __builtin_prefetch(p.masses + ahead);
    }
    const std::size_t r = inputs[j], i = memberOf[j];
    g.mass[i] = p.masses ? p.masses[r] : 1.0;
    for (int d = 0; d < 3; ++d)
    {
      const double r0 = double(ref[d]), x = double(p.points[3 * r + d]);
      g.given[3 * i + d] = x;
      g.xyz[3 * i + d] = r0 + nearestImageOffset(x - r0, period[d]);
      g.vel[3 * i + d] = p.velocities[3 * r + d];
    }
  }
  return g;
}

// The grouped points (GroupId >= 0), group by group: first the groups whose
// density order can matter (only their members query the density), then the
// others, each part in GroupId order and each group in input order.
struct GroupLayout
{
  std::vector<Index> points;
  // Group g: its GroupId, and points[start[g], start[g] + size[g]).
  std::vector<GlobalId> ids;
  std::vector<std::size_t> start, size;
  std::vector<char> ordered;             // densityOrderMatters
  std::vector<std::size_t> queriedStart; // the ordered groups' starts
  std::size_t numQueried = 0;            // their points, the first ones
};

// GroupLayout, counted into place: the ids index the counts directly when
// below the point count (as FriendsOfFriends numbers them), else their ranks
// among the distinct ids do.
GroupLayout groupLayout(const GlobalId* groupId, std::size_t n, GlobalId minimumSize)
{
  GroupLayout out;
  GlobalId top = -1;
  for (std::size_t i = 0; i < n; ++i)
    top = std::max(top, groupId[i]);
  if (top < 0)
    return out;
  std::vector<GlobalId> distinct; // sparse ids only
  if (std::size_t(top) >= n)
  {
    for (std::size_t i = 0; i < n; ++i)
      if (groupId[i] >= 0)
        distinct.push_back(groupId[i]);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  }
  auto key = [&](std::size_t i)
  {
    return distinct.empty()
      ? std::size_t(groupId[i])
      : std::size_t(
          std::lower_bound(distinct.begin(), distinct.end(), groupId[i]) - distinct.begin());
  };
  const std::size_t numKeys = distinct.empty() ? std::size_t(top) + 1 : distinct.size();
  std::vector<std::size_t> count(numKeys, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (groupId[i] >= 0)
      ++count[key(i)];
  // Groups in key (GroupId) order; each key's next place, ordered groups first.
  std::vector<std::size_t> next(numKeys), groupOf(numKeys);
  for (std::size_t k = 0; k < numKeys; ++k)
    if (count[k] > 0)
    {
      groupOf[k] = out.ids.size();
      out.ids.push_back(distinct.empty() ? GlobalId(k) : distinct[k]);
      out.size.push_back(count[k]);
      out.ordered.push_back(densityOrderMatters(count[k], minimumSize));
      out.numQueried += out.ordered.back() ? count[k] : 0;
    }
  out.start.resize(out.ids.size());
  std::size_t queried = 0, other = out.numQueried;
  for (std::size_t g = 0; g < out.ids.size(); ++g)
  {
    out.start[g] = out.ordered[g] ? queried : other;
    (out.ordered[g] ? queried : other) += out.size[g];
    if (out.ordered[g])
      out.queriedStart.push_back(out.start[g]);
  }
  for (std::size_t k = 0; k < numKeys; ++k)
    if (count[k] > 0)
      next[k] = out.start[groupOf[k]];
  out.points.resize(other);
  for (std::size_t i = 0; i < n; ++i)
    if (groupId[i] >= 0)
      out.points[next[key(i)]++] = Index(i);
  return out;
}

// Runs `work(group, backend, control)` on every group: large ones one after
// the other with all threads, then the small ones one per thread. The first
// error is rethrown.
template <class Work>
void forEachGroup(const std::vector<std::size_t>& groupSize, Backend backend,
  const RunControl& control, Work&& work)
{
  std::vector<std::size_t> large, small;
  for (std::size_t g = 0; g < groupSize.size(); ++g)
    (groupSize[g] >= kLargeGroup ? large : small).push_back(g);
  for (std::size_t g : large)
    work(g, backend, control);
  // Largest first, for the dynamic schedule's balance.
  std::stable_sort(small.begin(), small.end(),
    [&](std::size_t a, std::size_t b) { return groupSize[a] > groupSize[b]; });
  RunControl single;
  single.numThreads = 1;
  std::exception_ptr error;
  std::mutex errorLock;
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::ptrdiff_t s = 0; s < std::ptrdiff_t(small.size()); ++s)
  {
    try
    {
      work(small[std::size_t(s)], Backend::CPU, single);
    }
    catch (...)
    {
      std::lock_guard<std::mutex> lock(errorLock);
      if (!error)
        error = std::current_exception();
    }
  }
  if (error)
    std::rethrow_exception(error);
}
} // namespace

template <class T>
std::string subhaloProblemError(const SubhaloProblem<T>& p, const SubhaloNames& names)
{
  if (!p.velocities && p.numPoints > 0)
    return "no " + names.velocityArray +
      ": subhalos are bound by their kinetic energy, so the particles need velocities";
  if (!p.groupId && p.numPoints > 0)
    return "no " + names.groupArray + " array: run FriendsOfFriends first";
  std::string e = rangeError(ranges::DensityNeighbors, p.densityNeighbors, names.densityNeighbors);
  if (e.empty() && p.numPoints > 0 && !p.densities)
  {
    InputNames density = names.input;
    density.neighbourCount = names.densityNeighbors;
    e = neighbourCountError(p.densityNeighbors, std::int64_t(p.numPoints), density);
  }
  if (e.empty())
    e = rangeError(ranges::SaddleNeighbors, p.saddleNeighbors, names.saddleNeighbors);
  if (e.empty())
    e = rangeError(
      ranges::MinimumSubhaloSize, double(p.minimumSubhaloSize), names.minimumSubhaloSize);
  if (e.empty())
    e = rangeError(ranges::OpeningAngle, p.openingAngle, names.input.openingAngle);
  if (e.empty())
    e = rangeError(ranges::Softening, p.softening, names.input.softening);
  if (e.empty())
    e = rangeError(
      ranges::GravitationalConstant, p.gravitationalConstant, names.input.gravitationalConstant);
  if (e.empty())
    e = periodicBoxError(p.periodic, p.boxLo, p.boxHi, names.input);
  if (e.empty())
    e = pointCountError(p.numPoints);
  if (e.empty())
    e = nonFiniteCoordinateError(p.points, p.numPoints, names.input.point);
  if (e.empty() && p.numPoints > 0)
    e = nonFiniteValueError(p.velocities, p.numPoints, 3, names.velocityArray);
  if (e.empty() && p.masses)
  {
    e = nonFiniteValueError(p.masses, p.numPoints, 1, names.input.sourceMasses);
    for (std::size_t i = 0; e.empty() && i < p.numPoints; ++i)
      if (p.masses[i] < 0)
        e = names.input.sourceMasses + " has a negative value at point " + std::to_string(i);
  }
  return e;
}

template <class T>
RunInfo computeSubhalos(const SubhaloProblem<T>& p, Subhalos& out, Backend backend,
  const RunControl& control, const SubhaloNames& names)
{
  const std::string error = subhaloProblemError(p, names);
  if (!error.empty())
    throw Error(error);
  const GroupLayout layout = groupLayout(p.groupId, p.numPoints, p.minimumSubhaloSize);
  if (layout.points.empty())
    return noSubhalos(out, p.numPoints, backend);
  // The per-point output waits until after the density stage (the peak).
  out = Subhalos();
  RunInfo info;
  info.backend = resolveBackend(backend);
  const std::vector<Index>& byGroup = layout.points;
  const std::vector<std::size_t>& groupStart = layout.start;
  const std::vector<std::size_t>& groupSize = layout.size;
  const std::vector<GlobalId>& groupIds = layout.ids;
  const std::vector<char>& ordered = layout.ordered;
  const std::size_t numQueried = layout.numQueried;
  StageTimer densityTimer(&info, "density");
  GroupedNeighbours<T> seen;
  const std::vector<double> rho =
    densities(p, byGroup.data(), numQueried, layout.queriedStart, backend, control, seen, info);
  densityTimer.stop();
  info.counters.emplace_back("density queries", double(numQueried));
  double period[3];
  for (int d = 0; d < 3; ++d)
    period[d] = p.periodic ? p.boxHi[d] - p.boxLo[d] : 0.0;
  UnbindingOptions unbinding;
  unbinding.minimumSize = p.minimumSubhaloSize;
  unbinding.softening = p.softening;
  unbinding.gravitationalConstant = p.gravitationalConstant;
  unbinding.openingAngle = p.openingAngle;
  SubhaloRowFrame frame;
  std::copy_n(p.boxLo, 3, frame.boxLo);
  std::copy_n(period, 3, frame.period);
  frame.softening = p.softening;
  frame.gravitationalConstant = p.gravitationalConstant;
  std::vector<std::vector<FoundSubhalo>> found(groupIds.size());
  std::vector<std::vector<Index>> memberInputs(groupIds.size());
  StageTimer groupTimer(&info, "candidates, unbinding and properties");
  std::atomic<double> candidateCpu{ 0 }, unbindingCpu{ 0 }, propertiesCpu{ 0 };
  std::atomic<std::size_t> searchedInGroup{ 0 };
  forEachGroup(groupSize, backend, control,
    [&](std::size_t gi, Backend b, const RunControl& c)
    {
      if (GlobalId(groupSize[gi]) < p.minimumSubhaloSize)
        return;
      const double t0 = threadCpuSeconds();
      const std::size_t at = groupStart[gi];
      std::vector<Index> memberOf;
      const GroupMembers g = gatherGroup(
        p, &byGroup[at], ordered[gi] ? &rho[at] : nullptr, groupSize[gi], period, memberOf);
      DensityNeighbours groupSeen;
      const bool listed = ordered[gi] && seen.perPoint > 0;
      if (listed)
        groupSeen = groupNeighbours(seen, at, groupSize[gi], memberOf, period);
      const GroupCandidates cands = findCandidates(g, p.saddleNeighbors, p.minimumSubhaloSize,
        listed ? &groupSeen : nullptr, b, c, names.saddleNeighbors);
      groupSeen = {};
      searchedInGroup += cands.searchedInGroup;
      const double t1 = threadCpuSeconds();
      found[gi] = unbindCandidates(g, cands, unbinding, c); // on the CPU (SubhaloGroup.h)
      const double t2 = threadCpuSeconds();
      const int threads = c.numThreads > 0 ? c.numThreads : omp_get_max_threads();
      for (FoundSubhalo& s : found[gi])
        s.row = subhaloRow(g, s, frame, threads);
      memberInputs[gi] = g.input;
      addSeconds(candidateCpu, t1 - t0);
      addSeconds(unbindingCpu, t2 - t1);
      addSeconds(propertiesCpu, threadCpuSeconds() - t2);
    });
  groupTimer.stop();
  seen = {};
  // Thread CPU of the groups' stages (the large groups' inner threads not counted).
  info.stageSeconds.emplace_back("candidates (CPU of group threads)", candidateCpu.load());
  info.stageSeconds.emplace_back("unbinding (CPU of group threads)", unbindingCpu.load());
  info.stageSeconds.emplace_back("properties (CPU of group threads)", propertiesCpu.load());
  info.counters.emplace_back("members searched within their group", double(searchedInGroup));
  const StageTimer catalogueTimer(&info, "catalogue");
  noSubhalos(out, p.numPoints, backend);
  buildSubhaloCatalogue(groupIds, found, memberInputs, out, control);
  return info;
}

template std::string subhaloProblemError<float>(const SubhaloProblem<float>&, const SubhaloNames&);
template std::string subhaloProblemError<double>(
  const SubhaloProblem<double>&, const SubhaloNames&);
template RunInfo computeSubhalos<float>(
  const SubhaloProblem<float>&, Subhalos&, Backend, const RunControl&, const SubhaloNames&);
template RunInfo computeSubhalos<double>(
  const SubhaloProblem<double>&, Subhalos&, Backend, const RunControl&, const SubhaloNames&);
} // namespace jz
