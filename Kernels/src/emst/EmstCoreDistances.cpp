// Phase "core distances" of the distributed EMST (mutual reachability):
// every point's k-th smallest squared distance among this rank's points is
// an upper bound of its global one; a point whose bound reaches another
// rank's cover is sent there, and that rank answers its k smallest squared
// distances. The k smallest of all lists is the value the serial kNN walk
// finds (a multiset of distances: ids do not matter). Both searches are the
// single-process kNN walk (computeKnn): the rank's points query themselves,
// and the points sent by other ranks are the queries of one tree whose
// sources are the rank's points within their radii (pointsNear). Every
// answered value is the distance to a distinct real point, and each rank's
// share of the k smallest overall lies within the radius, so it is answered:
// the k-th smallest of the merged lists is the global one.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "emst/EmstPhases.h"
#include "emst/EmstPointsNear.h"
#include "jz/Knn.h"

namespace jz
{
namespace
{
template <class T>
struct CoreQuery
{
  T p[3];
  double radius2;
  Index point; // sorted index on the asking rank
};

// Per other rank, the local points whose k-th local distance may reach it.
template <class T>
std::vector<std::vector<Index>> boundaryPoints(
  const EmstRankPoints<T>& points, const std::vector<double>& core2, int me)
{
  const int ranks = int(points.route.send.size());
  std::vector<std::vector<Index>> to(ranks);
  for (Index i = 0; i < Index(core2.size()); ++i)
  {
    T p[3];
    points.tree.sources.point(i, p);
    for (int r = 0; r < ranks; ++r)
      if (r != me && points.cover.mayReach(p, r, core2[i]))
        to[r].push_back(i);
  }
  return to;
}

// The k nearest of this rank's points, or of its sorted points `among`, to
// each of `queries` (xyz; nullptr: the rank's points themselves), by the
// single-process kNN walk: per query k sorted indices, nearest first
// (Index(-1) where there are fewer than k points).
template <class T>
std::vector<Index> nearestOnRank(const EmstRankPoints<T>& points, const std::vector<Index>* among,
  const T* queries, std::size_t numQueries, int k, int threads)
{
  const Index n = among ? Index(among->size()) : Index(points.size());
  const std::size_t kk = std::size_t(k);
  std::vector<Index> out(numQueries * kk, Index(-1));
  const int found = std::min(k, int(n));
  if (found == 0 || numQueries == 0)
    return out;
  std::vector<GlobalId> sourceIds(n); // source positions: no tie is left to ids
  std::iota(sourceIds.begin(), sourceIds.end(), GlobalId(0));
  std::vector<Index> sortedOf(n);
  std::vector<T> subset(among ? 3 * std::size_t(n) : 0);
  for (Index i = 0; i < n; ++i)
    if (among)
    {
      sortedOf[i] = (*among)[i];
      points.tree.sources.point(sortedOf[i], &subset[3 * std::size_t(i)]);
    }
    else
      sortedOf[points.routeIndex(i)] = i;
  KnnProblem<T> problem;
  problem.sources = among ? subset.data() : points.raw.data();
  problem.numSources = n;
  problem.sourceIds = sourceIds.data();
  problem.queries = queries;
  problem.numQueries = queries ? numQueries : 0;
  problem.k = found;
  problem.periodic = points.tree.periodicity.enabled();
  std::copy_n(points.boxLo, 3, problem.boxLo);
  std::copy_n(points.boxHi, 3, problem.boxHi);
  std::vector<GlobalId> neighbors(numQueries * std::size_t(found));
  KnnResults<T> results;
  results.neighborIds = neighbors.data();
  RunControl control;
  control.numThreads = threads;
  computeKnn(problem, results, Backend::CPU, control);
  for (std::size_t q = 0; q < numQueries; ++q)
    for (int j = 0; j < found; ++j)
      out[q * kk + j] = sortedOf[neighbors[q * std::size_t(found) + j]];
  return out;
}

// The squared distances from p to the rank's sorted points `near` (k of
// them), exactly as the serial EMST computes them; kInfinity for none.
template <class T>
void distancesTo(const EmstRankPoints<T>& points, const T* p, const Index* near, int k, double* out)
{
  for (int j = 0; j < k; ++j)
  {
    out[j] = kInfinity;
    if (near[j] == Index(-1))
      continue;
    T q[3];
    points.tree.sources.point(near[j], q);
    out[j] = distance2(p, q, points.tree.periodicity);
  }
}

// Answers the queries of every rank: per query its index and k squared
// distances (kInfinity where the rank has fewer than k points).
template <class T>
std::vector<std::vector<char>> answerCoreQueries(const EmstRankPoints<T>& points,
  const std::vector<std::vector<char>>& asked, int k, int threads, std::size_t answerBytes)
{
  std::vector<CoreQuery<T>> all;
  for (const std::vector<char>& block : asked)
  {
    const std::vector<CoreQuery<T>> qs = fromBytes<CoreQuery<T>>(block);
    all.insert(all.end(), qs.begin(), qs.end());
  }
  std::vector<T> xyz(3 * all.size());
  std::vector<double> radius2(all.size());
  for (std::size_t j = 0; j < all.size(); ++j)
  {
    std::copy_n(all[j].p, 3, &xyz[3 * j]);
    radius2[j] = all[j].radius2;
  }
  // Only the points within a query's radius can be among its k smallest.
  const std::vector<Index> within = pointsNear(points.tree, xyz.data(), all.size(), radius2.data());
  const std::vector<Index> near = nearestOnRank(points, &within, xyz.data(), all.size(), k, threads);
  std::vector<std::vector<char>> answers(asked.size());
  std::vector<double> vals(k);
  std::size_t at = 0;
  for (std::size_t r = 0; r < asked.size(); ++r)
  {
    const std::size_t count = asked[r].size() / sizeof(CoreQuery<T>);
    answers[r].resize(count * answerBytes);
    for (std::size_t j = 0; j < count; ++j, ++at)
    {
      distancesTo(points, all[at].p, &near[at * std::size_t(k)], k, vals.data());
      char* a = answers[r].data() + j * answerBytes;
      std::memcpy(a, &all[at].point, sizeof(Index));
      std::memcpy(a + sizeof(Index), vals.data(), std::size_t(k) * sizeof(double));
    }
  }
  return answers;
}
} // namespace

template <class T>
std::vector<double> emstCoreDistances(const EmstRankPoints<T>& points, int k, int threads,
  Communicator& comm, EmstTraffic& traffic)
{
  const Index n = points.tree.sources.size();
  const int me = comm.rank(), ranks = comm.size();
  const std::size_t kk = std::size_t(k);
  // The rank's own k nearest per route position, and so per sorted point.
  const std::vector<Index> local =
    nearestOnRank(points, nullptr, static_cast<const T*>(nullptr), n, k, threads);
  std::vector<double> core2(n, kInfinity);
  if (n >= Index(k))
    for (Index i = 0; i < n; ++i)
    {
      T p[3];
      points.tree.sources.point(i, p);
      distancesTo(points, p, &local[std::size_t(points.routeIndex(i)) * kk + (kk - 1)], 1, &core2[i]);
    }
  if (ranks == 1)
    return core2;

  const std::vector<std::vector<Index>> to = boundaryPoints(points, core2, me);
  std::vector<std::vector<char>> ask(ranks);
  for (int r = 0; r < ranks; ++r)
  {
    std::vector<CoreQuery<T>> qs(to[r].size());
    for (std::size_t j = 0; j < qs.size(); ++j)
    {
      points.tree.sources.point(to[r][j], qs[j].p);
      qs[j].radius2 = core2[to[r][j]];
      qs[j].point = to[r][j];
    }
    ask[r] = toBytes(qs);
    traffic.boundaryQueries += double(qs.size());
  }
  const std::vector<std::vector<char>> asked = comm.allToAll(ask);
  const std::size_t answerBytes = sizeof(Index) + kk * sizeof(double);
  const std::vector<std::vector<char>> answers =
    comm.allToAll(answerCoreQueries(points, asked, k, threads, answerBytes));
  for (int r = 0; r < ranks; ++r)
  {
    traffic.bytesReceived += double(asked[r].size() + answers[r].size());
    traffic.pointsSearched += double(asked[r].size() / sizeof(CoreQuery<T>));
  }

  // Per asking point: its local k smallest and every answer, merged.
  std::vector<std::vector<double>> lists(n);
  for (const std::vector<char>& block : answers)
    for (std::size_t at = 0; at < block.size(); at += answerBytes)
    {
      Index i;
      std::memcpy(&i, block.data() + at, sizeof(Index));
      const std::size_t old = lists[i].size();
      lists[i].resize(old + kk);
      std::memcpy(lists[i].data() + old, block.data() + at + sizeof(Index), kk * sizeof(double));
    }
  for (Index i = 0; i < n; ++i)
  {
    if (lists[i].empty())
      continue;
    T p[3];
    points.tree.sources.point(i, p);
    const std::size_t old = lists[i].size();
    lists[i].resize(old + kk);
    distancesTo(points, p, &local[std::size_t(points.routeIndex(i)) * kk], k, &lists[i][old]);
    std::nth_element(lists[i].begin(), lists[i].begin() + (k - 1), lists[i].end());
    core2[i] = lists[i][k - 1];
  }
  return core2;
}

template std::vector<double> emstCoreDistances<float>(
  const EmstRankPoints<float>&, int, int, Communicator&, EmstTraffic&);
template std::vector<double> emstCoreDistances<double>(
  const EmstRankPoints<double>&, int, int, Communicator&, EmstTraffic&);
} // namespace jz
