// The phases of kNN over several ranks (KnnPhases.h).
#include "KnnPhases.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "../KnnBackends.h"
#include "../StageTimer.h"
#include "Decomposition.h"
#include "GhostSelection.h"
#include "jz/HugePages.h"

namespace jz
{
namespace
{
// The source arrays of a rank's n points, sized, with room for the ghosts
// that exchangeKnnGhosts appends: capacity that is never touched costs no
// memory, a reallocation copies every source.
template <class T>
void sizeSourceArrays(KnnRankPoints<T>& points, std::size_t n)
{
  const std::size_t room = n + n / 2 + 1024;
  reserveHugePages(points.srcXyz, 3 * room);
  reserveHugePages(points.srcIds, room);
  points.srcXyz.resize(3 * n);
  points.srcIds.resize(n);
  if (points.withMass)
  {
    reserveHugePages(points.srcMass, room);
    points.srcMass.resize(n);
  }
}

enum : std::uint8_t
{
  kIsSource = 1,
  kIsQuery = 2
};

// decomposeKnnPoints for a self query: every point is a source and a query,
// so each field moves straight into its array (routeInZOrder).
template <class T, class At>
KnnRankPoints<T> decomposeSelfQuery(
  const KnnProblem<T>& problem, bool withMass, const At& at, Communicator& comm)
{
  const ZOrderRoute route = routeInZOrder<T>(problem.numSources, at, comm);
  const std::size_t n = route.size();
  KnnRankPoints<T> points;
  points.self = true;
  points.withMass = withMass;
  sizeSourceArrays(points, n);
  resizeHugePages(points.qryRank, n);
  resizeHugePages(points.qryIndex, n);
  RouteScratch scratch;
  moveAlongRoute(route, 3, at, points.srcXyz.data(), scratch, comm);
  moveAlongRoute(
    route, 1, [&](std::size_t i, GlobalId* v) { *v = problem.sourceIds[i]; }, points.srcIds.data(),
    scratch, comm);
  // Each query's origin rank is where its block lies: nothing to send.
  for (std::size_t r = 0; r + 1 < route.begin.size(); ++r)
    std::fill(points.qryRank.begin() + std::ptrdiff_t(route.begin[r]),
      points.qryRank.begin() + std::ptrdiff_t(route.begin[r + 1]), std::int32_t(r));
  moveAlongRoute(
    route, 1, [&](std::size_t i, Index* v) { *v = Index(i); }, points.qryIndex.data(), scratch,
    comm);
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
    const bool isSource = i < ns;
    T p[3];
    at(i, p);
    for (int d = 0; d < 3; ++d)
      putField(record, p[d]);
    putField(record, isSource ? problem.sourceIds[i] : GlobalId(-1));
    putField(record, me);
    putField(record, Index(isSource ? i : i - ns));
    putField(record, std::uint8_t(isSource ? (self ? kIsSource | kIsQuery : kIsSource) : kIsQuery));
    if (withMass)
      putField(record, isSource && problem.sourceMasses ? problem.sourceMasses[i] : 1.0);
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

template <class T>
std::size_t exchangeKnnGhosts(
  KnnRankPoints<T>& points, const KnnProblem<T>& problem, Communicator& comm, RunInfo* info)
{
  const int me = comm.rank(), ranks = comm.size();
  const bool self = points.self;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  ZTree<T> tree;
  const Index ns = Index(points.numSources()), nq = Index(points.numQueries());
  const bool joint = !self && nq > 0; // a self query needs a sources-only tree
  StageTimer treeTimer(info, "ghost selection tree");
  buildTreeCpu(points.srcXyz.data(), ns, joint ? points.qryXyz.data() : (const T*)nullptr,
    joint ? nq : 0, per, problem.boxLo, TreeBuildOptions(), tree, RunControl());
  treeTimer.stop();
  StageTimer exchangeTimer(info, "ghost exchange");
  // The leaf bounds are tightened only where a leaf's node bound reaches
  // towards another rank's points: elsewhere its region selects no ghosts,
  // whatever its radius (most leaves, and most of the bound's cost).
  const RemoteCover<T> cover(tree, problem.boxLo, comm);
  std::vector<Region<T>> regions;
  if (nq > 0 && ns > 0)
  {
    const LeafTightening nearOtherRanks = [&](int plane, Index node, double bound2)
    { return cover.mayReach(tree.queryBox(plane, node), bound2); };
    regions = regionsFromTree(tree, knnLeafRadius2(tree, problem.k, RunControl(), nearOtherRanks));
    // Regions that reach no other rank's points select nothing: not sent.
    regions.erase(std::remove_if(regions.begin(), regions.end(),
                    [&](const Region<T>& r) { return !cover.mayReach(r.box, r.radius2); }),
      regions.end());
  }
  else if (nq > 0)
  {
    // No local sources: every source anywhere may be needed.
    Region<T> all;
    boxSetEmpty(all.box);
    const std::vector<T>& qxyz = self ? points.srcXyz : points.qryXyz;
    for (Index q = 0; q < nq; ++q)
      boxExtend(all.box, &qxyz[3 * q]);
    all.radius2 = kInfinity;
    regions.push_back(all);
  }
  const std::vector<std::vector<Region<T>>> allRegions = gatherRegions(regions, comm);
  // With no local queries the tree is the sources' own tree: ghosts come
  // from it all the same.
  const std::vector<std::vector<Index>> ghosts =
    ns > 0 ? selectGhosts(tree, allRegions, me) : std::vector<std::vector<Index>>(ranks);
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
  // Usually within the capacity the decomposition reserved: no copy.
  const std::size_t total = points.numSources() + received;
  points.srcXyz.reserve(3 * total);
  points.srcIds.reserve(total);
  if (withMass)
    points.srcMass.reserve(total);
  for (const auto& block : got)
  {
    for (const char* record = block.data(); record < block.data() + block.size();)
    {
      for (int d = 0; d < 3; ++d)
        points.srcXyz.push_back(takeField<T>(record));
      points.srcIds.push_back(takeField<GlobalId>(record));
      if (withMass)
        points.srcMass.push_back(takeField<double>(record));
    }
  }
  return received;
}

template <class T>
KnnLocalResults<T> searchKnnLocally(const KnnRankPoints<T>& points, const KnnProblem<T>& problem,
  const KnnWanted& wanted, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info)
{
  const std::size_t nq = points.numQueries();
  const int k = problem.k;
  KnnLocalResults<T> out;
  resizeHugePages(out.smoothingLength, nq);
  resizeHugePages(out.density, nq);
  resizeHugePages(out.neighborDistances, wanted.neighborDistances ? nq * k : 0);
  resizeHugePages(out.neighborIds, wanted.neighborIds ? nq * k : 0);
  std::string runError;
  RunInfo localInfo;
  try
  {
    if (nq > 0)
    {
      KnnProblem<T> local;
      local.sources = points.srcXyz.data();
      local.numSources = points.numSources();
      if (points.self)
      {
        // The local points come first among the sources; ghosts only source.
        local.numSelfQueries = nq;
      }
      else
      {
        local.queries = points.qryXyz.data();
        local.numQueries = nq;
      }
      local.sourceIds = points.srcIds.data();
      local.sourceMasses = wanted.masses && points.withMass ? points.srcMass.data() : nullptr;
      local.k = k;
      local.periodic = problem.periodic;
      for (int d = 0; d < 3; ++d)
      {
        local.boxLo[d] = problem.boxLo[d];
        local.boxHi[d] = problem.boxHi[d];
      }
      KnnResults<T> res;
      res.estimator = wanted.estimator;
      res.smoothingLength = out.smoothingLength.data();
      res.density = out.density.data();
      res.neighborIds = wanted.neighborIds ? out.neighborIds.data() : nullptr;
      res.neighborDistances = wanted.neighborDistances ? out.neighborDistances.data() : nullptr;
      localInfo = computeKnn(local, res, backend, control);
    }
  }
  catch (const Aborted&)
  {
    runError = "aborted by the user";
  }
  catch (const std::exception& e)
  {
    runError = e.what();
  }
  agreeOnErrors(comm, runError);
  for (auto& s : localInfo.stageSeconds)
    info.stageSeconds.push_back(s);
  if (nq > 0)
    info.backend = localInfo.backend;
  return out;
}

template <class T>
void sendKnnResultsHome(const KnnRankPoints<T>& points, const KnnLocalResults<T>& local, int k,
  const KnnWanted& wanted, Communicator& comm, const KnnResults<T>& results)
{
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
  template std::size_t exchangeKnnGhosts(                                                          \
    KnnRankPoints<T>&, const KnnProblem<T>&, Communicator&, RunInfo*);                             \
  template KnnLocalResults<T> searchKnnLocally(const KnnRankPoints<T>&, const KnnProblem<T>&,      \
    const KnnWanted&, Backend, const RunControl&, Communicator&, RunInfo&);                        \
  template void sendKnnResultsHome(const KnnRankPoints<T>&, const KnnLocalResults<T>&, int,        \
    const KnnWanted&, Communicator&, const KnnResults<T>&);
JZ_KNN_PHASES(float)
JZ_KNN_PHASES(double)
#undef JZ_KNN_PHASES
} // namespace jz
