// The phases of kNN over several ranks, each a collective that every rank
// calls in the same order, and each unit-tested on simulated ranks:
//
//   decomposeKnnPoints   sources and queries jointly cut into contiguous,
//                        count-balanced ranges of the global z-order (§II-A)
//   searchKnnLocally     the single-process search over the local sources,
//                        on a tree kept for the next phase
//   exchangeKnnGhosts    the sources within the local K-th neighbour distance
//                        of another rank's queries (§III-C): its boundary
//   searchKnnBoundary    the boundary queries again, with the ghosts
//   sendKnnResultsHome   the results back to where each query came from
//
// computeKnnDistributed (KnnDistributed.cpp) runs them in this order.
#pragma once

#include <cstdint>
#include <vector>

#include "jz/Distributed.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

#include "distributed/Decomposition.h"

namespace jz
{
// One rank's points after the decomposition: its sources and its queries
// with their origin. In a self query the local sources, in order, are the
// queries, qryXyz, qryRank and qryIndex stay empty, and the origin is the
// route (rank s's points are the block [route.begin[s], route.begin[s + 1])
// in s's send order route.send[s]: the results go home along it, as FoF's).
template <class T>
struct KnnRankPoints
{
  bool self = true;
  std::vector<T> srcXyz;
  std::vector<GlobalId> srcIds;
  std::vector<double> srcMass; // only when some rank has masses (withMass)
  bool withMass = false;
  ZOrderRoute route; // a self query's decomposition (else empty)
  std::vector<T> qryXyz;
  std::vector<std::int32_t> qryRank; // separate queries: the rank each came from
  std::vector<Index> qryIndex;       // separate queries: its index there
  std::size_t numSources() const { return srcIds.size(); }
  std::size_t numQueries() const { return self ? srcIds.size() : qryIndex.size(); }
};

// Phase "decompose". `self` must be the same on every rank (a self query when
// no rank has a separate query set).
template <class T>
KnnRankPoints<T> decomposeKnnPoints(const KnnProblem<T>& problem, bool self, Communicator& comm);

// What the caller wants back; agreed over all ranks, since a rank without
// points may pass no buffers or masses.
struct KnnWanted
{
  bool masses = false;
  bool neighborIds = false;
  bool neighborDistances = false;
  DensityEstimator estimator = DensityEstimator::SphCubicSpline;
};

// The local search's results, per local query.
template <class T>
struct KnnLocalResults
{
  std::vector<T> smoothingLength, density;
  std::vector<GlobalId> neighborIds; // k per query, when wanted
  std::vector<T> neighborDistances;  // k per query, when wanted
};

// A rank's local search: the tree of its own sources (and separate queries),
// and each local query's K nearest among the local sources only.
template <class T>
struct KnnLocalSearch
{
  ZTree<T> tree;
  KnnLocalResults<T> results;
  // Whether the results hold the K nearest local sources (false when the
  // rank has fewer than K sources: then every answer waits for the ghosts).
  bool bounded = false;
};

// Phase "local search": the tree (stage "local tree") and the search of the
// local queries against the local sources (stage "local search"), on the
// CPU on that tree, on a GPU with the one-rank kNN. A query's local K-th
// distance bounds its global one, so the answers that no other rank's points
// can change are final here. An error on any rank (bad GPU, abort) throws
// the same Error on every rank.
template <class T>
KnnLocalSearch<T> searchKnnLocally(const KnnRankPoints<T>& points, const KnnProblem<T>& problem,
  const KnnWanted& wanted, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info);

// The part of a rank's search that other ranks' points may change: its
// boundary queries, the local sources near them and the ghosts received.
template <class T>
struct KnnBoundary
{
  std::vector<Index> queries; // local query indices, ascending
  std::vector<Index> sources; // local source indices within their reach, ascending
  std::vector<T> ghostXyz;
  std::vector<GlobalId> ghostIds;
  std::vector<double> ghostMass; // when points.withMass
  std::size_t numGhosts() const { return ghostIds.size(); }
};

// Phase "exchange ghosts" (§III-C): the local queries' regions (runs of a
// leaf's queries: their box and largest local K-th distance) that may reach
// another rank's points go to every rank; each rank sends back its sources
// within them, and which regions it found any in. The queries of those
// regions are the boundary; the local sources within the same regions join
// them. Collective.
template <class T>
KnnBoundary<T> exchangeKnnGhosts(const KnnRankPoints<T>& points, const KnnLocalSearch<T>& local,
  const KnnProblem<T>& problem, Communicator& comm, RunInfo* info = nullptr);

// Phase "boundary search": the boundary queries against the local sources
// near them and the ghosts; their answers replace the local ones in
// `results`. Errors as in searchKnnLocally.
template <class T>
void searchKnnBoundary(const KnnRankPoints<T>& points, const KnnBoundary<T>& boundary,
  const KnnProblem<T>& problem, const KnnWanted& wanted, Backend backend, const RunControl& control,
  Communicator& comm, KnnLocalResults<T>& results);

// Phase "send home": every query's results to the rank and position it came
// from, written into `results` (null buffers are skipped). A self query's
// go back along the route, per origin rank one block of h, rho[, K ids][, K
// distances] in its send order; separate queries' as records with their
// index.
template <class T>
void sendKnnResultsHome(const KnnRankPoints<T>& points, const KnnLocalResults<T>& local, int k,
  const KnnWanted& wanted, Communicator& comm, const KnnResults<T>& results);
} // namespace jz
