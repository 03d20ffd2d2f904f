// Phase "core distances" of the distributed EMST (mutual reachability):
// every point's k-th smallest squared distance among this rank's points is
// an upper bound of its global one; a point whose bound reaches another
// rank's cover is sent there, and that rank answers its k smallest squared
// distances within the bound. The k smallest of all lists is the value the
// serial kNN walk finds (a multiset of distances: ids do not matter).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "EmstPhases.h"
#include "EmstPointSearch.h"
#include "jz/Knn.h"

namespace jz
{
namespace
{
using SearchStack = std::vector<std::pair<double, std::pair<int, Index>>>;

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

// Answers the queries of every rank: per query its index and k squared
// distances (kInfinity where fewer are within its radius).
template <class T>
std::vector<std::vector<char>> answerCoreQueries(const EmstSearchTree<T>& st,
  const std::vector<std::vector<char>>& asked, int k, std::size_t answerBytes)
{
  std::vector<std::vector<char>> answers(asked.size());
  for (std::size_t r = 0; r < asked.size(); ++r)
  {
    const std::vector<CoreQuery<T>> qs = fromBytes<CoreQuery<T>>(asked[r]);
    answers[r].resize(qs.size() * answerBytes);
    char* out = answers[r].data();
#pragma omp parallel
    {
      SearchStack stack;
      std::vector<double> vals;
#pragma omp for schedule(dynamic, 64)
      for (long long j = 0; j < (long long)qs.size(); ++j)
      {
        searchSmallestDistances(st, qs[j].p, k, qs[j].radius2, vals, stack);
        vals.resize(k, kInfinity);
        char* a = out + std::size_t(j) * answerBytes;
        std::memcpy(a, &qs[j].point, sizeof(Index));
        std::memcpy(a + sizeof(Index), vals.data(), k * sizeof(double));
      }
    }
  }
  return answers;
}


// The k-th smallest squared distance among this rank's points, per sorted
// point, by the single-process kNN walk (the serial EMST's own): its k-th
// neighbour's squared distance, recomputed exactly (ties in distance do not
// change the value). kInfinity when the rank has fewer than k points.
template <class T>
std::vector<double> localCoreDistances(const EmstRankPoints<T>& points, int k, int threads)
{
  const Index n = Index(points.size());
  std::vector<double> core2(n, kInfinity);
  if (n < Index(k))
    return core2;
  std::vector<GlobalId> routeIds(n);
  std::iota(routeIds.begin(), routeIds.end(), GlobalId(0));
  std::vector<Index> sortedOf(n);
  for (Index i = 0; i < n; ++i)
    sortedOf[points.routeIndex(i)] = i;
  const Periodicity& per = points.tree.periodicity;
  KnnProblem<T> problem;
  problem.sources = points.raw.data();
  problem.numSources = n;
  problem.sourceIds = routeIds.data();
  problem.k = k;
  problem.periodic = per.enabled();
  std::copy_n(points.boxLo, 3, problem.boxLo);
  std::copy_n(points.boxHi, 3, problem.boxHi);
  std::vector<GlobalId> neighbors(std::size_t(n) * std::size_t(k));
  KnnResults<T> results;
  results.neighborIds = neighbors.data();
  RunControl control;
  control.numThreads = threads;
  computeKnn(problem, results, Backend::CPU, control);
  for (Index r = 0; r < n; ++r)
  {
    const Index i = sortedOf[r], j = sortedOf[neighbors[std::size_t(r) * k + (k - 1)]];
    T p[3], q[3];
    points.tree.sources.point(i, p);
    points.tree.sources.point(j, q);
    core2[i] = distance2(p, q, per);
  }
  return core2;
}
} // namespace

template <class T>
std::vector<double> emstCoreDistances(const EmstRankPoints<T>& points, int k, int threads,
  Communicator& comm, EmstTraffic& traffic)
{
  const Index n = points.tree.sources.size();
  const int me = comm.rank(), ranks = comm.size();
  const EmstSearchTree<T> st{ points.tree, points.coarse };
  std::vector<double> core2 = localCoreDistances(points, k, threads);
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
  const std::size_t answerBytes = sizeof(Index) + std::size_t(k) * sizeof(double);
  const std::vector<std::vector<char>> answers =
    comm.allToAll(answerCoreQueries(st, asked, k, answerBytes));
  for (int r = 0; r < ranks; ++r)
    traffic.bytesReceived += double(asked[r].size() + answers[r].size());

  // Per asking point: its local k smallest and every answer, merged.
  std::vector<std::vector<double>> lists(n);
  for (const std::vector<char>& block : answers)
    for (std::size_t at = 0; at < block.size(); at += answerBytes)
    {
      Index i;
      std::memcpy(&i, block.data() + at, sizeof(Index));
      const std::size_t old = lists[i].size();
      lists[i].resize(old + k);
      std::memcpy(lists[i].data() + old, block.data() + at + sizeof(Index), k * sizeof(double));
    }
  SearchStack stack;
  std::vector<double> vals;
  for (Index i = 0; i < n; ++i)
  {
    if (lists[i].empty())
      continue;
    T p[3];
    points.tree.sources.point(i, p);
    searchSmallestDistances(st, p, k, kInfinity, vals, stack);
    lists[i].insert(lists[i].end(), vals.begin(), vals.end());
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
