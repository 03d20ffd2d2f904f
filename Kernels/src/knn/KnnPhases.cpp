// The phases of kNN over several ranks (KnnPhases.h).
#include "knn/KnnPhases.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>

#include "common/Progress.h"
#include "distributed/Decomposition.h"
#include "distributed/GhostSelection.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"
#include "knn/KnnBackends.h"
#include "walk/LeafDistances.h"

namespace jz
{
namespace
{
// The source arrays of a rank's n points, sized.
template <class T>
void sizeSourceArrays(KnnRankPoints<T>& points, std::size_t n)
{
  resizeHugePages(points.srcXyz, 3 * n);
  resizeHugePages(points.srcIds, n);
  if (points.withMass)
    resizeHugePages(points.srcMass, n);
}

// decomposeKnnPoints for a self query: every point is a source and a query,
// so each field moves straight into its array (routeInZOrder), and the
// route, kept, is the queries' origin (nothing more travels).
template <class T, class At>
KnnRankPoints<T> decomposeSelfQuery(
  const KnnProblem<T>& problem, bool withMass, const At& at, Communicator& comm)
{
  KnnRankPoints<T> points;
  points.route = routeInZOrder<T>(problem.numSources, at, comm);
  const ZOrderRoute& route = points.route;
  points.self = true;
  points.withMass = withMass;
  sizeSourceArrays(points, route.size());
  RouteScratch scratch;
  moveAlongRoute(route, 3, at, points.srcXyz.data(), scratch, comm);
  moveAlongRoute(
    route, 1, [&](std::size_t i, GlobalId* v) { *v = problem.sourceIds[i]; }, points.srcIds.data(),
    scratch, comm);
  if (withMass)
    moveAlongRoute(
      route, 1,
      [&](std::size_t i, double* v) { *v = problem.sourceMasses ? problem.sourceMasses[i] : 1.0; },
      points.srcMass.data(), scratch, comm);
  return points;
}
} // namespace

template <class T>
KnnRankPoints<T> decomposeKnnPoints(const KnnProblem<T>& problem, bool self, Communicator& comm)
{
  const std::size_t ns = problem.numSources;
  const std::size_t nq = self ? 0 : (problem.queries ? problem.numQueries : 0);
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  // Masses travel only when some rank has them.
  const bool withMass = allSum(comm, problem.sourceMasses ? 1 : 0) > 0;
  // A record: coordinates (wrapped), id, origin rank and index, role[, mass].
  const std::size_t recordBytes = 3 * sizeof(T) + sizeof(GlobalId) + sizeof(std::int32_t) +
    sizeof(Index) + 1 + (withMass ? sizeof(double) : 0);
  auto at = [&](std::size_t i, T* p)
  {
    const T* xyz = i < ns ? problem.sources + 3 * i : problem.queries + 3 * (i - ns);
    for (int d = 0; d < 3; ++d)
      p[d] = treeCoordinate(xyz[d], problem.boxLo[d], per.length[d]);
  };
  const std::int32_t me = comm.rank();
  if (self)
    return decomposeSelfQuery<T>(problem, withMass, at, comm);
  auto pack = [&](std::size_t i, char* record)
  {
    T p[3];
    at(i, p);
    for (int d = 0; d < 3; ++d)
      putField(record, p[d]);
    putField(record, i < ns ? problem.sourceIds[i] : GlobalId(-1));
    putOriginRoleMass(record, me, i, ns, self, withMass, problem.sourceMasses);
  };
  const ZOrderShare share = exchangeInZOrder<T>(ns + nq, recordBytes, at, pack, comm);

  // Sizes first (from the roles), then one pass straight into the arrays.
  const std::size_t roleAt =
    3 * sizeof(T) + sizeof(GlobalId) + sizeof(std::int32_t) + sizeof(Index);
  std::size_t sources = 0, queries = 0;
  for (Index i : share.own)
  {
    sources += i < ns;
    queries += self || i >= ns;
  }
  for (const auto& block : share.blocks)
    for (std::size_t off = roleAt; off < block.size(); off += recordBytes)
    {
      sources += (block[off] & kIsSource) != 0;
      queries += (block[off] & kIsQuery) != 0;
    }
  KnnRankPoints<T> points;
  points.self = self;
  points.withMass = withMass;
  sizeSourceArrays(points, sources);
  if (!self)
    resizeHugePages(points.qryXyz, 3 * queries);
  resizeHugePages(points.qryRank, queries);
  resizeHugePages(points.qryIndex, queries);
  std::size_t s = 0, q = 0;
  forEachRecord(share, recordBytes, pack,
    [&](const char* record)
    {
      T p[3];
      for (int d = 0; d < 3; ++d)
        p[d] = takeField<T>(record);
      const GlobalId id = takeField<GlobalId>(record);
      const std::int32_t rank = takeField<std::int32_t>(record);
      const Index index = takeField<Index>(record);
      const std::uint8_t role = takeField<std::uint8_t>(record);
      const double mass = withMass ? takeField<double>(record) : 1.0;
      if (role & kIsSource)
      {
        std::copy(p, p + 3, &points.srcXyz[3 * s]);
        points.srcIds[s] = id;
        if (withMass)
          points.srcMass[s] = mass;
        ++s;
      }
      if (role & kIsQuery)
      {
        // A self query keeps one copy of each point: the local sources, in
        // the same order, are the queries.
        if (!self)
          std::copy(p, p + 3, &points.qryXyz[3 * q]);
        points.qryRank[q] = rank;
        points.qryIndex[q] = index;
        ++q;
      }
    });
  return points;
}

namespace
{
// The local problem of a rank: its sources (and separate queries), its ids
// and masses, the caller's K and box.
template <class T>
KnnProblem<T> localProblem(
  const KnnRankPoints<T>& points, const KnnProblem<T>& problem, const KnnWanted& wanted)
{
  KnnProblem<T> local;
  local.sources = points.srcXyz.data();
  local.numSources = points.numSources();
  if (!points.self)
  {
    local.queries = points.qryXyz.data();
    local.numQueries = points.numQueries();
  }
  local.sourceIds = points.srcIds.data();
  local.sourceMasses = wanted.masses && points.withMass ? points.srcMass.data() : nullptr;
  local.k = problem.k;
  local.periodic = problem.periodic;
  std::copy_n(problem.boxLo, 3, local.boxLo);
  std::copy_n(problem.boxHi, 3, local.boxHi);
  return local;
}

// Result buffers for n queries, and the KnnResults that write into them.
template <class T>
KnnResults<T> sizeResults(KnnLocalResults<T>& out, std::size_t n, int k, const KnnWanted& wanted)
{
  resizeHugePages(out.smoothingLength, n);
  resizeHugePages(out.density, n);
  resizeHugePages(out.neighborDistances, wanted.neighborDistances ? n * k : 0);
  resizeHugePages(out.neighborIds, wanted.neighborIds ? n * k : 0);
  KnnResults<T> res;
  res.estimator = wanted.estimator;
  res.smoothingLength = out.smoothingLength.data();
  res.density = out.density.data();
  res.neighborIds = wanted.neighborIds ? out.neighborIds.data() : nullptr;
  res.neighborDistances = wanted.neighborDistances ? out.neighborDistances.data() : nullptr;
  return res;
}

// Queries per ghost region: a leaf's queries in runs of this many, each with
// its box and largest K-th distance (smaller runs select fewer ghosts and
// mark fewer queries as boundary, for more regions to exchange and test).
constexpr Index kRegionQueries = 32;

// The regions of a rank's queries that may reach another rank's points, and
// the range of sorted query positions each covers.
template <class T>
void boundaryRegions(const KnnLocalSearch<T>& local, const RankCover<T>& cover,
  std::vector<Region<T>>& regions, std::vector<std::pair<Index, Index>>& spans)
{
  const ZTree<T>& tree = local.tree;
  const SortedPoints<T>& qry = tree.queryPoints();
  const T* h = local.results.smoothingLength.data();
  // The exact K-th distance rounded to T, widened by the pre-filter's margin
  // (relative, and absolute in a periodic box): a point at exactly that
  // distance, which may win the tie by id, is still selected.
  const FilterMargin margin = FilterMargin::of(tree);
  const TreePlane<T>& leaves = tree.planes[0];
  for (Index l = 0; l < leaves.numNodes(); ++l)
  {
    // A run of duplicate queries (one answer for all): one region, its
    // radius from its first query.
    const bool run = boxIsPoint(tree.queryBox(0, l));
    const Index end = leaves.querySplit[l + 1];
    for (Index a = leaves.querySplit[l]; a < end; a += run ? end - a : kRegionQueries)
    {
      const Index b = run ? std::min(a + 1, end) : std::min(a + kRegionQueries, end);
      Region<T> r;
      boxSetEmpty(r.box);
      double h2 = 0;
      for (Index q = a; q < b; ++q)
      {
        const T p[3] = { qry.x[q], qry.y[q], qry.z[q] };
        boxExtend(r.box, p);
        const double hq = double(h[qry.inputIndex[q]]);
        h2 = std::max(h2, hq * hq);
      }
      r.radius2 = margin.widen(h2) * (1 + kBoundSlack);
      if (cover.othersMayReach(r.box, r.radius2))
      {
        regions.push_back(r);
        spans.emplace_back(a, run ? end : b);
      }
    }
  }
}
} // namespace

template <class T>
KnnLocalSearch<T> searchKnnLocally(const KnnRankPoints<T>& points, const KnnProblem<T>& problem,
  const KnnWanted& wanted, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info)
{
  KnnLocalSearch<T> out;
  const KnnProblem<T> local = localProblem(points, problem, wanted);
  StageTimer treeTimer(&info, "local tree");
  buildKnnTreeCpu(local, out.tree, control);
  treeTimer.stop();
  StageTimer searchTimer(&info, "local search");
  const std::size_t nq = points.numQueries();
  const KnnResults<T> res = sizeResults(out.results, nq, problem.k, wanted);
  out.bounded = points.numSources() >= std::size_t(problem.k);
  RunInfo localInfo;
  localInfo.backend = backend;
  agreeOnRunErrors(comm,
    [&]
    {
      if (nq == 0 || !out.bounded)
        return;
      if (backend == Backend::CPU)
        knnCpuOnTree(out.tree, local, res, localInfo, control);
      else
        localInfo = computeKnn(local, res, backend, control);
    });
  for (auto& s : localInfo.stageSeconds)
    info.stageSeconds.push_back(s);
  if (nq > 0)
    info.backend = localInfo.backend;
  return out;
}

template <class T>
KnnBoundary<T> exchangeKnnGhosts(const KnnRankPoints<T>& points, const KnnLocalSearch<T>& local,
  const KnnProblem<T>& /* problem: its periodic box is the tree's */, Communicator& comm,
  RunInfo* info)
{
  const int me = comm.rank(), ranks = comm.size();
  const ZTree<T>& tree = local.tree;
  const Index ns = Index(points.numSources()), nq = Index(points.numQueries());
  // Regions are sent only where their radius reaches towards another rank's
  // points: elsewhere they select no ghosts.
  const RankCover<T> cover(tree, comm);
  std::vector<Region<T>> regions;
  std::vector<std::pair<Index, Index>> spans; // sorted query positions
  if (nq > 0 && local.bounded)
  {
    boundaryRegions(local, cover, regions, spans);
  }
  else if (nq > 0)
  {
    // Fewer than K local sources: every source anywhere may be needed.
    Region<T> all;
    boxSetEmpty(all.box);
    const SortedPoints<T>& qry = tree.queryPoints();
    for (Index q = 0; q < nq; ++q)
    {
      const T p[3] = { qry.x[q], qry.y[q], qry.z[q] };
      boxExtend(all.box, p);
    }
    all.radius2 = kInfinity;
    regions.push_back(all);
    spans.emplace_back(0, nq);
  }
  if (info)
    info->counters.emplace_back("ghost regions sent", double(regions.size()));
  const std::vector<std::vector<Region<T>>> allRegions = gatherRegions(regions, comm);
  std::vector<std::vector<char>> hits;
  const std::vector<std::vector<Index>> ghosts =
    ns > 0 ? selectGhosts(tree, allRegions, me, &hits) : std::vector<std::vector<Index>>(ranks);
  if (ns == 0)
    for (int r = 0; r < ranks; ++r)
      hits.emplace_back(r == me ? 0 : allRegions[r].size(), char(0));
  // Which of this rank's regions found points elsewhere: its boundary.
  const std::vector<std::vector<char>> found = comm.allToAll(hits);
  std::vector<Region<T>> reached;
  KnnBoundary<T> boundary;
  const SortedPoints<T>& qry = tree.queryPoints();
  for (std::size_t g = 0; g < regions.size(); ++g)
  {
    bool hit = false;
    for (int r = 0; r < ranks; ++r)
      hit = hit || (r != me && g < found[r].size() && found[r][g]);
    if (!hit)
      continue;
    reached.push_back(regions[g]);
    for (Index q = spans[g].first; q < spans[g].second; ++q)
      boundary.queries.push_back(qry.inputIndex[q]);
  }
  std::sort(boundary.queries.begin(), boundary.queries.end());
  // The local sources the boundary queries may need: those within the same
  // regions, selected from the local tree as for another rank.
  if (ns > 0 && !reached.empty())
  {
    const std::vector<std::vector<Index>> near =
      selectGhosts(tree, std::vector<std::vector<Region<T>>>{ reached }, -1);
    boundary.sources.reserve(near[0].size());
    for (const Index s : near[0])
      boundary.sources.push_back(tree.sources.inputIndex[s]);
    std::sort(boundary.sources.begin(), boundary.sources.end());
  }
  // A ghost record: coordinates, id[, mass], packed and unpacked in place.
  const bool withMass = points.withMass;
  const std::size_t recordBytes =
    3 * sizeof(T) + sizeof(GlobalId) + (withMass ? sizeof(double) : 0);
  std::vector<std::size_t> count(ranks);
  for (int r = 0; r < ranks; ++r)
    count[r] = ghosts[r].size();
  auto pack = [&](int r, std::size_t j, char* record)
  {
    const Index s = ghosts[r][j];
    putField(record, tree.sources.x[s]);
    putField(record, tree.sources.y[s]);
    putField(record, tree.sources.z[s]);
    const Index in = tree.sources.inputIndex[s];
    putField(record, points.srcIds[in]);
    if (withMass)
      putField(record, points.srcMass[in]);
  };
  const std::vector<std::vector<char>> got = exchangeRecords(count, recordBytes, pack, comm);
  std::size_t received = 0;
  for (const auto& block : got)
    received += block.size() / recordBytes;
  boundary.ghostXyz.resize(3 * received);
  boundary.ghostIds.resize(received);
  if (withMass)
    boundary.ghostMass.resize(received);
  std::size_t at = 0;
  for (const auto& block : got)
    for (const char* record = block.data(); record < block.data() + block.size(); ++at)
    {
      for (int d = 0; d < 3; ++d)
        boundary.ghostXyz[3 * at + d] = takeField<T>(record);
      boundary.ghostIds[at] = takeField<GlobalId>(record);
      if (withMass)
        boundary.ghostMass[at] = takeField<double>(record);
    }
  return boundary;
}

template <class T>
void searchKnnBoundary(const KnnRankPoints<T>& points, const KnnBoundary<T>& boundary,
  const KnnProblem<T>& problem, const KnnWanted& wanted, Backend backend, const RunControl& control,
  Communicator& comm, KnnLocalResults<T>& results)
{
  // The sources: the local ones near the boundary queries, then the ghosts.
  // A self query keeps one copy of each point, as computeKnn's self query
  // with a query subset: the boundary queries first, then the other local
  // sources (a smaller tree than for a separate query set).
  const std::size_t nb = boundary.queries.size();
  std::vector<Index> local;
  if (points.self)
  {
    local.reserve(boundary.sources.size());
    local.assign(boundary.queries.begin(), boundary.queries.end());
    std::set_difference(boundary.sources.begin(), boundary.sources.end(), boundary.queries.begin(),
      boundary.queries.end(), std::back_inserter(local));
  }
  const std::vector<Index>& near = points.self ? local : boundary.sources;
  const std::size_t nl = near.size(), ns = nl + boundary.numGhosts();
  const bool withMass = wanted.masses && points.withMass;
  std::vector<T> queries(points.self ? 0 : 3 * nb), sources(3 * ns);
  std::vector<GlobalId> ids(ns);
  std::vector<double> masses(withMass ? ns : 0);
  for (std::size_t j = 0; !points.self && j < nb; ++j)
    std::copy_n(&points.qryXyz[3 * std::size_t(boundary.queries[j])], 3, &queries[3 * j]);
  for (std::size_t j = 0; j < nl; ++j)
  {
    const std::size_t s = near[j];
    std::copy_n(&points.srcXyz[3 * s], 3, &sources[3 * j]);
    ids[j] = points.srcIds[s];
    if (withMass)
      masses[j] = points.srcMass[s];
  }
  std::copy(boundary.ghostXyz.begin(), boundary.ghostXyz.end(), sources.begin() + 3 * nl);
  std::copy(boundary.ghostIds.begin(), boundary.ghostIds.end(), ids.begin() + nl);
  if (withMass)
    std::copy(boundary.ghostMass.begin(), boundary.ghostMass.end(), masses.begin() + nl);

  KnnProblem<T> fix = localProblem(points, problem, wanted);
  fix.sources = sources.data();
  fix.numSources = ns;
  fix.sourceIds = ids.data();
  fix.sourceMasses = withMass ? masses.data() : nullptr;
  if (points.self)
  {
    fix.numSelfQueries = nb;
  }
  else
  {
    fix.queries = queries.data();
    fix.numQueries = nb;
  }
  KnnLocalResults<T> out;
  const KnnResults<T> res = sizeResults(out, nb, problem.k, wanted);
  RunControl quiet;
  quiet.numThreads = control.numThreads;
  agreeOnRunErrors(comm,
    [&]
    {
      if (nb > 0)
        computeKnn(fix, res, backend, quiet);
    });
  const std::size_t k = std::size_t(problem.k);
  for (std::size_t j = 0; j < nb; ++j)
  {
    const std::size_t q = boundary.queries[j];
    results.smoothingLength[q] = out.smoothingLength[j];
    results.density[q] = out.density[j];
    if (wanted.neighborIds)
      std::copy_n(&out.neighborIds[j * k], k, &results.neighborIds[q * k]);
    if (wanted.neighborDistances)
      std::copy_n(&out.neighborDistances[j * k], k, &results.neighborDistances[q * k]);
  }
}

namespace
{
// sendKnnResultsHome for a self query: local query q is route position q
// (the local results are indexed by query, not by the tree's order), so the
// results go back along the route, per origin rank one block of its h, then
// rho[, then K ids][, then K distances] per query, in the order it sent
// them, and are written straight into the caller's arrays.
template <class T>
void sendSelfResultsHome(const ZOrderRoute& route, const KnnLocalResults<T>& local, int k,
  const KnnWanted& wanted, Communicator& comm, const KnnResults<T>& results)
{
  const std::size_t kk = std::size_t(k);
  const std::size_t idBytes = wanted.neighborIds ? kk * sizeof(GlobalId) : 0;
  const std::size_t distanceBytes = wanted.neighborDistances ? kk * sizeof(T) : 0;
  // Query q of a received piece of n queries (its blocks side by side at
  // `in`), to input position i.
  auto store = [&](const char* in, std::size_t n, std::size_t q, Index i)
  {
    const char* ids = in + 2 * n * sizeof(T);
    const char* distances = ids + n * idBytes;
    if (results.smoothingLength)
      std::memcpy(&results.smoothingLength[i], in + q * sizeof(T), sizeof(T));
    if (results.density)
      std::memcpy(&results.density[i], in + (n + q) * sizeof(T), sizeof(T));
    if (idBytes && results.neighborIds)
      std::memcpy(&results.neighborIds[std::size_t(i) * kk], ids + q * idBytes, idBytes);
    if (distanceBytes && results.neighborDistances)
      std::memcpy(&results.neighborDistances[std::size_t(i) * kk], distances + q * distanceBytes,
        distanceBytes);
  };
  // This rank's own queries in place.
  const std::vector<Index>& own = route.own();
  const std::size_t ownBegin = route.begin[route.rank];
  for (std::size_t j = 0; j < own.size(); ++j)
  {
    const std::size_t q = ownBegin + j;
    if (results.smoothingLength)
      results.smoothingLength[own[j]] = local.smoothingLength[q];
    if (results.density)
      results.density[own[j]] = local.density[q];
    if (idBytes && results.neighborIds)
      std::copy_n(&local.neighborIds[q * kk], kk, &results.neighborIds[std::size_t(own[j]) * kk]);
    if (distanceBytes && results.neighborDistances)
      std::copy_n(
        &local.neighborDistances[q * kk], kk, &results.neighborDistances[std::size_t(own[j]) * kk]);
  }
  sendHomeAlongRoute(
    route, 2 * sizeof(T) + idBytes + distanceBytes,
    [&](std::size_t begin, std::size_t count, char* out)
    {
      auto put = [&](const void* from, std::size_t bytes)
      {
        if (bytes > 0)
          std::memcpy(out, from, bytes);
        out += bytes;
      };
      put(local.smoothingLength.data() + begin, count * sizeof(T));
      put(local.density.data() + begin, count * sizeof(T));
      if (idBytes)
        put(local.neighborIds.data() + begin * kk, count * idBytes);
      if (distanceBytes)
        put(local.neighborDistances.data() + begin * kk, count * distanceBytes);
    },
    [&](const std::vector<Index>& list, const char* in)
    {
      for (std::size_t j = 0; j < list.size(); ++j)
        store(in, list.size(), j, list[j]);
    },
    comm);
}
} // namespace

template <class T>
void sendKnnResultsHome(const KnnRankPoints<T>& points, const KnnLocalResults<T>& local, int k,
  const KnnWanted& wanted, Communicator& comm, const KnnResults<T>& results)
{
  if (points.self)
  {
    sendSelfResultsHome(points.route, local, k, wanted, comm, results);
    return;
  }
  // Records (query index, h, rho[, ids][, distances]) packed in place; this
  // rank's own queries are written in place.
  const int ranks = comm.size(), me = comm.rank();
  const std::size_t recordBytes = sizeof(Index) + 2 * sizeof(T) +
    (wanted.neighborIds ? k * sizeof(GlobalId) : 0) +
    (wanted.neighborDistances ? k * sizeof(T) : 0);
  auto store = [&](Index q, T hq, T rq, const GlobalId* ids, const T* distances)
  {
    if (results.smoothingLength)
      results.smoothingLength[q] = hq;
    if (results.density)
      results.density[q] = rq;
    for (int j = 0; ids && results.neighborIds && j < k; ++j)
      results.neighborIds[std::size_t(q) * k + j] = ids[j];
    for (int j = 0; distances && results.neighborDistances && j < k; ++j)
      results.neighborDistances[std::size_t(q) * k + j] = distances[j];
  };
  RecordsHome back(countByOrigin(points.qryRank, ranks), me, recordBytes);
  for (std::size_t q = 0; q < points.numQueries(); ++q)
  {
    const GlobalId* ids = wanted.neighborIds ? &local.neighborIds[q * k] : nullptr;
    const T* distances = wanted.neighborDistances ? &local.neighborDistances[q * k] : nullptr;
    if (points.qryRank[q] == me)
    {
      store(points.qryIndex[q], local.smoothingLength[q], local.density[q], ids, distances);
      continue;
    }
    char*& b = back.cursor[points.qryRank[q]];
    putField(b, points.qryIndex[q]);
    putField(b, local.smoothingLength[q]);
    putField(b, local.density[q]);
    for (int j = 0; ids && j < k; ++j)
      putField(b, ids[j]);
    for (int j = 0; distances && j < k; ++j)
      putField(b, distances[j]);
  }
  const auto got = comm.allToAll(back.send);
  std::vector<GlobalId> ids(wanted.neighborIds ? k : 0);
  std::vector<T> distances(wanted.neighborDistances ? k : 0);
  for (const auto& part : got)
  {
    const char* p = part.data();
    const char* end = p + part.size();
    while (p < end)
    {
      const Index q = takeField<Index>(p);
      const T hq = takeField<T>(p);
      const T rq = takeField<T>(p);
      for (GlobalId& id : ids)
        id = takeField<GlobalId>(p);
      for (T& d : distances)
        d = takeField<T>(p);
      store(q, hq, rq, ids.empty() ? nullptr : ids.data(),
        distances.empty() ? nullptr : distances.data());
    }
  }
}

#define JZ_KNN_PHASES(T)                                                                           \
  template KnnRankPoints<T> decomposeKnnPoints(const KnnProblem<T>&, bool, Communicator&);         \
  template KnnLocalSearch<T> searchKnnLocally(const KnnRankPoints<T>&, const KnnProblem<T>&,       \
    const KnnWanted&, Backend, const RunControl&, Communicator&, RunInfo&);                        \
  template KnnBoundary<T> exchangeKnnGhosts(const KnnRankPoints<T>&, const KnnLocalSearch<T>&,     \
    const KnnProblem<T>&, Communicator&, RunInfo*);                                                \
  template void searchKnnBoundary(const KnnRankPoints<T>&, const KnnBoundary<T>&,                  \
    const KnnProblem<T>&, const KnnWanted&, Backend, const RunControl&, Communicator&,             \
    KnnLocalResults<T>&);                                                                          \
  template void sendKnnResultsHome(const KnnRankPoints<T>&, const KnnLocalResults<T>&, int,        \
    const KnnWanted&, Communicator&, const KnnResults<T>&);
JZ_KNN_PHASES(float)
JZ_KNN_PHASES(double)
#undef JZ_KNN_PHASES
} // namespace jz
