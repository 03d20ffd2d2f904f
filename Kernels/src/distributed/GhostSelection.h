// Which local points another rank needs (§III-C, Appendix B): the
// points within a radius of that rank's regions. A region is a box around
// some of the receiving rank's points with the radius their answers depend
// on (the K-th neighbour bound for kNN, the linking length for FoF).
#pragma once

#include <vector>

#include "distributed/RankCover.h"
#include "jz/Communicator.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

namespace jz
{
template <class T>
struct Region
{
  Box<T> box;
  double radius2;
};

// Regions from the leaves of a local tree: each leaf's box (of its query
// points, or of its sources for a self-query tree) with its radius.
// leafRadius2 has one value per leaf.
template <class T>
std::vector<Region<T>> regionsFromTree(
  const ZTree<T>& tree, const std::vector<double>& leafRadius2);

// For every rank, the sorted local source indices (into tree.sources) within
// the radius of any of its regions; empty for this rank itself (none when
// myRank is -1). With `hits`, (*hits)[r][g] says whether region g of rank r
// selected any point.
template <class T>
std::vector<std::vector<Index>> selectGhosts(const ZTree<T>& tree,
  const std::vector<std::vector<Region<T>>>& regionsByRank, int myRank,
  std::vector<std::vector<char>>* hits = nullptr);

// RankCover::othersMayReach under the name and arguments the distributed
// phase tests use (the periodic box's corner is not needed: distances use
// the tree's periods). Collective.
template <class T>
class RemoteCover
{
public:
  RemoteCover(const ZTree<T>& tree, const double* /* boxLo */, Communicator& comm)
    : cover_(tree, comm)
  {
  }
  bool mayReach(const Box<T>& box, double radius2) const
  {
    return cover_.othersMayReach(box, radius2);
  }

private:
  RankCover<T> cover_;
};

// Exchanges regions so that every rank knows every rank's regions.
template <class T>
std::vector<std::vector<Region<T>>> gatherRegions(
  const std::vector<Region<T>>& local, Communicator& comm)
{
  std::vector<std::vector<char>> all = comm.allGather(toBytes(local));
  std::vector<std::vector<Region<T>>> out(all.size());
  for (std::size_t r = 0; r < all.size(); ++r)
    out[r] = fromBytes<Region<T>>(all[r]);
  return out;
}
} // namespace jz
