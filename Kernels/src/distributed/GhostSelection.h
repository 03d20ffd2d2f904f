// Which local points another rank needs (§III-C, Appendix B): the
// points within a radius of that rank's regions. A region is a box around
// some of the receiving rank's points with the radius their answers depend
// on (the K-th neighbour bound for kNN, the linking length for FoF).
#pragma once

#include <vector>

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

// Where the other ranks' points lie, coarsely: grid cells marked where any
// other rank's top-plane source box reaches. A region that reaches no marked
// cell selects no ghosts anywhere, so it need not be sent. Conservative: it
// may say "may reach"
// for a region that reaches nothing, never the reverse. Collective.
template <class T>
class RemoteCover
{
public:
  RemoteCover(const ZTree<T>& tree, const double* boxLo, Communicator& comm);

  // Whether points within sqrt(radius2) of `box` may lie on another rank.
  bool mayReach(const Box<T>& box, double radius2) const;

private:
  static constexpr int kCells = 64; // per dimension
  // The cell range [first, last] (last - first < kCells, wrapped when
  // periodic) that [lo, hi] touches in dimension d, one cell wider each side.
  void cellRange(int d, double lo, double hi, long long& first, long long& last) const;

  bool periodic_ = false;
  bool anyRemote_ = false;
  double lo_[3] = { 0, 0, 0 }, side_[3] = { 1, 1, 1 };
  std::vector<char> marked_; // kCells^3, x fastest
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
