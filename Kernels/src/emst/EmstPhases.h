// The phases of the distributed EMST, each a collective that every rank
// calls in the same order (computeEmstDistributed, EmstDistributed.cpp):
//
//   decomposeEmstPoints    the points cut into contiguous, count-balanced
//                          ranges of the global z-order (as kNN's and FoF's),
//                          and the tree of this rank's range
//   emstCoreDistances      mutual reachability: each point's k-th smallest
//                          squared distance, from the local tree and, for the
//                          points whose k-th local distance reaches another
//                          rank's box, that rank's answer
//   runDistributedBoruvka  Borůvka rounds over all ranks (EmstBoruvkaRounds.cpp)
//   sendEmstEdgesHome      every edge to the rank that owns its smaller-id
//                          endpoint in the input, as EmstRankEdges
#pragma once

#include <cstdint>
#include <vector>

#include "jz/Emst.h"
#include "jz/Tree.h"

#include "distributed/Decomposition.h"
#include "distributed/RankCover.h"

namespace jz
{
// One rank's range after the decomposition, and its tree (sorted points).
template <class T>
struct EmstRankPoints
{
  ZOrderRoute route;          // rank s's points are [route.begin[s], route.begin[s + 1])
  std::vector<T> raw;         // input coordinates (unwrapped), xyz per point, route order
  std::vector<Index> input;   // per point: its index on the rank it came from
  ZTree<T> tree;              // of raw (wrapped when periodic)
  std::vector<GlobalId> ids;  // per sorted point
  RankCover<T> cover;         // where every rank's points lie
  double boxLo[3] = { 0, 0, 0 };     // the input's periodic box
  double boxHi[3] = { 1, 1, 1 };
  std::size_t size() const { return input.size(); }
  // Where sorted point i lives in route order.
  Index routeIndex(Index i) const { return tree.sources.inputIndex[i]; }
};

// The EMST's rank covers are a plane finer than kNN's and FoF's: a point
// whose bound reaches a cover box asks that rank (EmstBoruvkaRounds.cpp),
// so tighter boxes spare more asks than their bytes cost.
constexpr int kEmstCoverFiner = 1;

// Counts of the exchange, for the report (bytes received by this rank).
struct EmstTraffic
{
  double bytesReceived = 0;
  double boundaryQueries = 0;
  // Points that arrive from other ranks: moved here by the decomposition, or
  // carried by the searches (another rank's query to answer, or an answer
  // naming one of its points).
  double pointsMoved = 0;
  double pointsSearched = 0;
};

template <class T>
EmstRankPoints<T> decomposeEmstPoints(
  const EmstProblem<T>& piece, Communicator& comm, EmstTraffic& traffic);

// Squared core distances per sorted point: the k-th smallest squared
// distance to any point, the point itself counted (k = minSamples + 1).
template <class T>
std::vector<double> emstCoreDistances(const EmstRankPoints<T>& points, int k, int threads,
  Communicator& comm, EmstTraffic& traffic);

// An edge this rank outputs: its smaller-id endpoint is sorted point `from`
// of this rank.
template <class T>
struct EmstEmitted
{
  Index from;
  GlobalId fromId, toId;
  double weight2;
  T toRaw[3];
};

// The rounds: the edges of the tree (forest up to maxBound2) whose
// smaller-id endpoint lies on this rank. core2: per sorted point, or null
// (Euclidean); piece: the box and maxLength. Progress from 0.2 to 0.9 of
// control's (agreeOnProgress at every round).
template <class T>
std::vector<EmstEmitted<T>> runDistributedBoruvka(const EmstRankPoints<T>& points,
  const EmstProblem<T>& piece, const double* core2, double maxBound2, int threads,
  const RunControl& control, Communicator& comm, EmstTraffic& traffic, RunInfo& info);

// The edges to the input ranks of their `from` points, and the core
// distances home (when core2 is not empty). Collective.
template <class T>
void sendEmstEdgesHome(const EmstRankPoints<T>& points, const std::vector<EmstEmitted<T>>& edges,
  const std::vector<double>& core2, const EmstProblem<T>& piece, Communicator& comm,
  EmstRankEdges<T>& out, EmstTraffic& traffic);
} // namespace jz
