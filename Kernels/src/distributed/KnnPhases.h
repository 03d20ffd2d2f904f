// The phases of kNN over several ranks, each a collective that every rank
// calls in the same order, and each unit-tested on simulated ranks:
//
//   decomposeKnnPoints   sources and queries jointly cut into contiguous,
//                        count-balanced ranges of the global z-order (§II-A)
//   exchangeKnnGhosts    the sources within the proven K-th neighbour radius
//                        of another rank's queries (§III-C), appended
//   searchKnnLocally     the single-process search over local and ghost sources
//   sendKnnResultsHome   the results back to where each query came from
//
// computeKnnDistributed (KnnDistributed.cpp) runs them in this order.
#pragma once

#include <cstdint>
#include <vector>

#include "jz/Distributed.h"
#include "jz/Geometry.h"

namespace jz
{
// One rank's points after the decomposition: its sources (local, then the
// ghosts received) and its queries with their origin. In a self query the
// local sources, in order, are the queries and qryXyz stays empty.
template <class T>
struct KnnRankPoints
{
  bool self = true;
  std::vector<T> srcXyz;
  std::vector<GlobalId> srcIds;
  std::vector<double> srcMass; // only when some rank has masses (withMass)
  bool withMass = false;
  std::vector<T> qryXyz;
  std::vector<std::int32_t> qryRank; // per query: the rank it came from
  std::vector<Index> qryIndex;       // per query: its index there
  std::size_t numSources() const { return srcIds.size(); }
  std::size_t numQueries() const { return qryIndex.size(); }
};

// Phase "decompose". `self` must be the same on every rank (a self query when
// no rank has a separate query set).
template <class T>
KnnRankPoints<T> decomposeKnnPoints(const KnnProblem<T>& problem, bool self, Communicator& comm);

// Phase "exchange ghosts": every local source within the K-th neighbour
// radius bound of another rank's query regions goes to that rank, where it
// is appended to the sources. Returns the number of ghosts received. With
// `info`, the selection tree's build and the rest (radii, selection,
// exchange) are timed as two stages.
template <class T>
std::size_t exchangeKnnGhosts(KnnRankPoints<T>& points, const KnnProblem<T>& problem,
  Communicator& comm, RunInfo* info = nullptr);

// The local search's results, per local query.
template <class T>
struct KnnLocalResults
{
  std::vector<T> smoothingLength, density;
  std::vector<GlobalId> neighborIds; // k per query, when wanted
  std::vector<T> neighborDistances;  // k per query, when wanted
};

// What the caller wants back; agreed over all ranks, since a rank without
// points may pass no buffers or masses.
struct KnnWanted
{
  bool masses = false;
  bool neighborIds = false;
  bool neighborDistances = false;
  DensityEstimator estimator = DensityEstimator::SphCubicSpline;
};

// Phase "local walk": computeKnn over the local and ghost sources for the
// local queries. An error on any rank (bad GPU, abort) throws the same Error
// on every rank. The local run's backend and stage times go into `info`.
template <class T>
KnnLocalResults<T> searchKnnLocally(const KnnRankPoints<T>& points, const KnnProblem<T>& problem,
  const KnnWanted& wanted, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info);

// Phase "send home": every query's results to the rank and position it came
// from, written into `results` (null buffers are skipped).
template <class T>
void sendKnnResultsHome(const KnnRankPoints<T>& points, const KnnLocalResults<T>& local, int k,
  const KnnWanted& wanted, Communicator& comm, const KnnResults<T>& results);
} // namespace jz
