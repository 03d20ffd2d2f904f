// The ranks' pieces of a point set, gathered on every rank: coordinates and
// global ids in rank order, and where this rank's points start. The
// distributed EMST and HDBSCAN* compute on the whole set (memory grows with
// the global count).
#pragma once

#include <cstdint>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Config.h"

namespace jz
{
template <class T>
struct GatheredPoints
{
  std::vector<T> points; // xyz, every rank's points in rank order
  std::vector<GlobalId> ids;
  std::size_t offset = 0; // of this rank's first point

  // A rank's problem (points, numPoints, ids) made the whole set's.
  template <class Problem>
  Problem whole(const Problem& piece) const
  {
    Problem w = piece;
    w.points = points.data();
    w.numPoints = ids.size();
    w.ids = ids.data();
    return w;
  }
};

// ids may be null (the piece's index is then used: callers pass global ids).
template <class T>
GatheredPoints<T> gatherPieces(
  const T* points, std::size_t n, const GlobalId* ids, Communicator& comm)
{
  GatheredPoints<T> all;
  std::vector<GlobalId> mine(n);
  for (std::size_t i = 0; i < n; ++i)
    mine[i] = ids ? ids[i] : GlobalId(i);
  all.points = allGatherConcat(comm, std::vector<T>(points, points + 3 * n));
  all.ids = allGatherConcat(comm, mine);
  const std::vector<std::int64_t> counts =
    allGatherConcat(comm, std::vector<std::int64_t>{ std::int64_t(n) });
  for (int r = 0; r < comm.rank(); ++r)
    all.offset += std::size_t(counts[r]);
  return all;
}
} // namespace jz
