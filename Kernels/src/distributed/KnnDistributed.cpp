// kNN over several ranks: z-order decomposition, the sources within each
// rank's proven K-th neighbour radius as ghosts, the single-process search,
// and the results back to where each query came from.
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "../KnnBackends.h"
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

enum : std::uint8_t
{
  kIsSource = 1,
  kIsQuery = 2
};

struct KnnPayload
{
  GlobalId id;
  double mass;
  std::int32_t originRank;
  Index originIndex;
  std::uint8_t role;
};

template <class T>
std::string localProblemError(const KnnProblem<T>& pr)
{
  if (pr.k < 1)
    return "the number of neighbours K must be at least 1 (got " + std::to_string(pr.k) + ")";
  std::string e = periodicBoxError(pr.periodic, pr.boxLo, pr.boxHi);
  if (e.empty())
    e = nonFiniteError(pr.sources, pr.numSources, "source point");
  if (e.empty() && pr.queries)
    e = nonFiniteError(pr.queries, pr.numQueries, "query point");
  if (e.empty() && pr.sourceMasses)
  {
    for (std::size_t i = 0; i < pr.numSources; ++i)
      if (!std::isfinite(pr.sourceMasses[i]))
        return "the mass of source point " + std::to_string(i) + " is not finite";
  }
  if (e.empty() && pr.numSources > 0 && !pr.sourceIds)
    return "distributed kNN needs global source ids";
  return e;
}

template <class T>
void append(std::vector<char>& buf, const T& v)
{
  const std::size_t at = buf.size();
  buf.resize(at + sizeof(T));
  std::memcpy(buf.data() + at, &v, sizeof(T));
}

template <class T>
T read(const char*& p)
{
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}
} // namespace

template <class T>
RunInfo computeKnnDistributed(const KnnProblem<T>& problem, const KnnResults<T>& results,
  Communicator& comm, Backend backend, const RunControl& control)
{
  if (comm.size() == 1)
    return computeKnn(problem, results, backend, control);
  RunInfo info;
  const int me = comm.rank(), ranks = comm.size();
  // A self query only when no rank has a separate query set: a rank whose
  // piece of the Query input is empty may pass no query array.
  const bool self = allSum(comm, problem.queries ? 1 : 0) == 0;
  const std::size_t numQueries =
    self ? problem.numSources : (problem.queries ? problem.numQueries : 0);

  // Every rank agrees on input errors and on the global counts.
  agreeOnErrors(comm, localProblemError(problem));
  const std::int64_t totalSources = allSum(comm, std::int64_t(problem.numSources));
  const std::int64_t totalQueries = allSum(comm, std::int64_t(numQueries));
  if (totalQueries == 0)
    return info;
  if (std::int64_t(problem.k) > totalSources)
  {
    throw Error("the number of neighbours K = " + std::to_string(problem.k) +
      " is larger than the number of source points (" + std::to_string(totalSources) + ")");
  }
  info.backend = resolveBackendOnAllRanks(comm, backend);

  // Agreed over all ranks, since a rank without points may pass no arrays.
  const bool withMasses = allSum(comm, problem.sourceMasses ? 1 : 0) > 0;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  // 1. Decomposition of sources and queries jointly in z-order.
  auto t0 = Clock::now();
  using Item = Travelling<T, KnnPayload>;
  std::vector<Item> items;
  items.reserve(problem.numSources + (self ? 0 : numQueries));
  auto addPoints = [&](const T* xyz, std::size_t n, std::uint8_t role, bool isSource)
  {
    for (std::size_t i = 0; i < n; ++i)
    {
      Item it;
      for (int d = 0; d < 3; ++d)
      {
        T x = xyz[3 * i + d];
        it.p[d] = per.enabled() ? wrapIntoBox(x, problem.boxLo[d], per.length[d]) : T(x + T(0));
      }
      it.payload.id = isSource ? problem.sourceIds[i] : -1;
      it.payload.mass = isSource && problem.sourceMasses ? problem.sourceMasses[i] : 1.0;
      it.payload.originRank = me;
      it.payload.originIndex = Index(i);
      it.payload.role = role;
      items.push_back(it);
    }
  };
  addPoints(problem.sources, problem.numSources, self ? (kIsSource | kIsQuery) : kIsSource, true);
  if (!self && numQueries > 0)
    addPoints(problem.queries, numQueries, kIsQuery, false);
  items = decomposeInZOrder(items, comm);

  std::vector<T> srcXyz, qryXyz;
  std::vector<GlobalId> srcIds;
  std::vector<double> srcMass;
  std::vector<std::int32_t> qryRank;
  std::vector<Index> qryIndex;
  for (const Item& it : items)
  {
    if (it.payload.role & kIsSource)
    {
      srcXyz.insert(srcXyz.end(), it.p, it.p + 3);
      srcIds.push_back(it.payload.id);
      srcMass.push_back(it.payload.mass);
    }
    if (it.payload.role & kIsQuery)
    {
      // A self query keeps one copy of each point: the local sources, in
      // the same order, are the queries.
      if (!self)
        qryXyz.insert(qryXyz.end(), it.p, it.p + 3);
      qryRank.push_back(it.payload.originRank);
      qryIndex.push_back(it.payload.originIndex);
    }
  }
  std::vector<Item>().swap(items);
  info.stageSeconds.emplace_back("decomposition", since(t0));

  // 2. Radius bounds from the local node walks; ghosts within them.
  t0 = Clock::now();
  std::int64_t ghostsReceived = 0;
  {
    ZTree<T> tree;
    const Index ns = Index(srcIds.size()), nq = Index(qryIndex.size());
    const bool joint = !self && nq > 0; // a self query needs a sources-only tree
    buildTreeCpu(srcXyz.data(), ns, joint ? qryXyz.data() : (const T*)nullptr, joint ? nq : 0, per,
      problem.boxLo, TreeBuildOptions(), tree, RunControl());
    std::vector<Region<T>> regions;
    if (nq > 0 && ns > 0)
    {
      regions = regionsFromTree(tree, knnLeafRadius2(tree, problem.k, RunControl()));
    }
    else if (nq > 0)
    {
      // No local sources: every source anywhere may be needed.
      Region<T> all;
      boxSetEmpty(all.box);
      const std::vector<T>& qxyz = self ? srcXyz : qryXyz;
      for (Index q = 0; q < nq; ++q)
        boxExtend(all.box, &qxyz[3 * q]);
      all.radius2 = kInfinity;
      regions.push_back(all);
    }
    const std::vector<std::vector<Region<T>>> allRegions = gatherRegions(regions, comm);
    // With no local queries the tree is the sources' own tree: ghosts come
    // from it all the same.
    std::vector<std::vector<Index>> ghosts =
      ns > 0 ? selectGhosts(tree, allRegions, me) : std::vector<std::vector<Index>>(ranks);
    std::vector<std::vector<Travelling<T, KnnPayload>>> send(ranks);
    for (int r = 0; r < ranks; ++r)
    {
      for (Index s : ghosts[r])
      {
        Travelling<T, KnnPayload> g;
        g.p[0] = tree.sources.x[s];
        g.p[1] = tree.sources.y[s];
        g.p[2] = tree.sources.z[s];
        const Index in = tree.sources.inputIndex[s];
        g.payload.id = srcIds[in];
        g.payload.mass = srcMass[in];
        g.payload.originRank = me;
        g.payload.originIndex = in;
        g.payload.role = kIsSource;
        send[r].push_back(g);
      }
    }
    const auto got = allToAllTyped(comm, send);
    for (const auto& part : got)
    {
      for (const auto& g : part)
      {
        srcXyz.insert(srcXyz.end(), g.p, g.p + 3);
        srcIds.push_back(g.payload.id);
        srcMass.push_back(g.payload.mass);
        ++ghostsReceived;
      }
    }
  }
  info.stageSeconds.emplace_back("ghost exchange", since(t0));
  info.counters.emplace_back("local sources", double(srcIds.size() - ghostsReceived));
  info.counters.emplace_back("ghost sources received", double(ghostsReceived));
  info.counters.emplace_back("local queries", double(qryIndex.size()));

  // 3. The single-process search over local and ghost sources.
  t0 = Clock::now();
  const std::size_t nq = qryIndex.size();
  const int k = problem.k;
  // Agreed over all ranks: a rank without points may pass no buffers.
  const bool wantIds = allSum(comm, results.neighborIds ? 1 : 0) > 0;
  const bool wantDist = allSum(comm, results.neighborDistances ? 1 : 0) > 0;
  std::vector<T> h(nq), rho(nq), dist(wantDist ? nq * k : 0);
  std::vector<GlobalId> ids(wantIds ? nq * k : 0);
  std::string runError;
  RunInfo localInfo;
  try
  {
    if (nq > 0)
    {
      KnnProblem<T> local;
      local.sources = srcXyz.data();
      local.numSources = srcIds.size();
      if (self)
      {
        // The local points come first among the sources; ghosts only source.
        local.numSelfQueries = nq;
      }
      else
      {
        local.queries = qryXyz.data();
        local.numQueries = nq;
      }
      local.sourceIds = srcIds.data();
      local.sourceMasses = withMasses ? srcMass.data() : nullptr;
      local.k = k;
      local.periodic = problem.periodic;
      for (int d = 0; d < 3; ++d)
      {
        local.boxLo[d] = problem.boxLo[d];
        local.boxHi[d] = problem.boxHi[d];
      }
      KnnResults<T> out;
      out.estimator = results.estimator;
      out.smoothingLength = h.data();
      out.density = rho.data();
      out.neighborIds = wantIds ? ids.data() : nullptr;
      out.neighborDistances = wantDist ? dist.data() : nullptr;
      localInfo = computeKnn(local, out, info.backend, control);
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
  info.backend = nq > 0 ? localInfo.backend : info.backend;
  info.stageSeconds.emplace_back("local search", since(t0));

  // 4. Results back to the rank and position each query came from.
  t0 = Clock::now();
  std::vector<std::vector<char>> back(ranks);
  for (std::size_t q = 0; q < nq; ++q)
  {
    std::vector<char>& b = back[qryRank[q]];
    append(b, qryIndex[q]);
    append(b, h[q]);
    append(b, rho[q]);
    for (int j = 0; wantIds && j < k; ++j)
      append(b, ids[q * k + j]);
    for (int j = 0; wantDist && j < k; ++j)
      append(b, dist[q * k + j]);
  }
  const auto got = comm.allToAll(back);
  for (const auto& part : got)
  {
    const char* p = part.data();
    const char* end = p + part.size();
    while (p < end)
    {
      const Index q = read<Index>(p);
      const T hq = read<T>(p);
      const T rq = read<T>(p);
      if (results.smoothingLength)
        results.smoothingLength[q] = hq;
      if (results.density)
        results.density[q] = rq;
      for (int j = 0; wantIds && j < k; ++j)
      {
        const GlobalId id = read<GlobalId>(p);
        if (results.neighborIds)
          results.neighborIds[std::size_t(q) * k + j] = id;
      }
      for (int j = 0; wantDist && j < k; ++j)
      {
        const T d = read<T>(p);
        if (results.neighborDistances)
          results.neighborDistances[std::size_t(q) * k + j] = d;
      }
    }
  }
  info.stageSeconds.emplace_back("results home", since(t0));
  return info;
}

template RunInfo computeKnnDistributed<float>(
  const KnnProblem<float>&, const KnnResults<float>&, Communicator&, Backend, const RunControl&);
template RunInfo computeKnnDistributed<double>(
  const KnnProblem<double>&, const KnnResults<double>&, Communicator&, Backend, const RunControl&);
} // namespace jz
