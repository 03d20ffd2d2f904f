// Where every rank's points lie, known on every rank: per rank the boxes of
// its tree's coarsest plane, or a plane a few finer (about 1000 compact
// cells at the coarsest: a z-order range is not convex, so one box would
// claim much of its neighbours' space), with
// coarser planes over them so that a test visits few boxes. A point needs
// another rank's answer (EMST), and a region is sent to the other ranks
// (kNN, FoF ghosts), only when a cell of another rank lies within its radius.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"
#include "walk/SingleTreeDescent.h"

namespace jz
{
// A list of cells with planes above it, each grouping kFan consecutive
// nodes of the one below, up to one of at most kFan nodes: a test then
// starts from a few boxes instead of every cell.
template <class T>
class CellCover
{
public:
  static constexpr Index kFan = 8;

  CellCover() = default;
  explicit CellCover(std::vector<Box<T>> cells)
    : cells_(std::move(cells))
  {
    const std::vector<Box<T>>* below = &cells_;
    while (Index(below->size()) > kFan)
    {
      above_.push_back(groupOf(*below));
      below = &above_.back().box;
    }
  }

  Index numCells() const { return Index(cells_.size()); }

  // Whether some cell is not `far` (far(box): no point of the box is in
  // range; a box far must leave every box inside it far, as the distance
  // bounds of Geometry.h do) nor `skipped` (skipped(j): cell j is not of
  // interest).
  template <class Far>
  bool anyNear(Far&& far) const
  {
    return anyNear(std::forward<Far>(far), [](Index) { return false; });
  }

  template <class Far, class Skipped>
  bool anyNear(Far&& far, Skipped&& skipped) const
  {
    return !descend(
      [&](int level, Index j)
      {
        if (far(boxOf(level, j)) || (level == 0 && skipped(j)))
          return Descend::Skip;
        return level == 0 ? Descend::Stop : Descend::Open;
      });
  }

  // The least dist(box) over the cells not skipped(j), or `limit` when
  // none is nearer (dist must not exceed over a box what it is over a box
  // inside it, as the distance bounds of Geometry.h do).
  template <class Dist, class Skipped>
  double least(Dist&& dist, Skipped&& skipped, double limit) const
  {
    double best = limit;
    descend(
      [&](int level, Index j)
      {
        if ((level == 0 && skipped(j)) || dist(boxOf(level, j)) >= best)
          return Descend::Skip;
        if (level > 0)
          return Descend::Open;
        best = dist(cells_[j]);
        return Descend::Skip;
      });
    return best;
  }

private:
  const Box<T>& boxOf(int level, Index j) const
  {
    return level == 0 ? cells_[j] : above_[level - 1].box[j];
  }

  // descendPlanes from the top plane's boxes down to the cells.
  template <class Visit>
  bool descend(Visit&& visit) const
  {
    static thread_local DescentStack stack;
    const int top = int(above_.size());
    const Index count = Index(top == 0 ? cells_.size() : above_.back().box.size());
    auto children = [this](int level, Index j)
    {
      const std::vector<Index>& split = above_[level - 1].split;
      return std::make_pair(split[j], split[j + 1]);
    };
    return descendPlanes(top, 0, count, children, std::forward<Visit>(visit), stack);
  }

  struct Plane
  {
    std::vector<Index> split; // children in the plane below
    std::vector<Box<T>> box;
  };

  static Plane groupOf(const std::vector<Box<T>>& below)
  {
    const Index count = Index(below.size());
    Plane c;
    for (Index j = 0; j < count; j += kFan)
    {
      c.split.push_back(j);
      Box<T> b;
      boxSetEmpty(b);
      for (Index k = j; k < std::min(count, j + kFan); ++k)
        boxMerge(b, below[k]);
      c.box.push_back(b);
    }
    c.split.push_back(count);
    return c;
  }

  std::vector<Box<T>> cells_;
  std::vector<Plane> above_; // above_[l - 1]: plane l over the cells
};

template <class T>
class RankCover
{
public:
  RankCover() = default;

  // The plane of the tree whose nodes are the cells: the coarsest, or
  // `finer` planes below it (as far as the leaves).
  static int cellPlane(const ZTree<T>& tree, int finer)
  {
    return std::max(0, int(tree.planes.size()) - 1 - finer);
  }

  // The nodes of that plane that are the rank's cells, in the cells' order.
  static std::vector<Index> cellNodes(const ZTree<T>& tree, int finer)
  {
    std::vector<Index> nodes;
    if (!tree.planes.empty())
    {
      const TreePlane<T>& plane = tree.planes[cellPlane(tree, finer)];
      for (Index j = 0; j < plane.numNodes(); ++j)
        if (!boxIsEmpty(plane.sourceBox[j]))
          nodes.push_back(j);
    }
    return nodes;
  }

  // Collective: every rank passes its tree, and the same `finer`.
  RankCover(const ZTree<T>& tree, Communicator& comm, int finer = 0)
    : per_(tree.periodicity)
  {
    std::vector<Box<T>> mine;
    for (const Index j : cellNodes(tree, finer))
      mine.push_back(tree.planes[cellPlane(tree, finer)].sourceBox[j]);
    const std::vector<std::vector<char>> all = comm.allGather(toBytes(mine));
    std::vector<Box<T>> others;
    for (std::size_t r = 0; r < all.size(); ++r)
    {
      std::vector<Box<T>> cells = fromBytes<Box<T>>(all[r]);
      if (int(r) != comm.rank())
      {
        bytes_ += double(all[r].size());
        others.insert(others.end(), cells.begin(), cells.end());
      }
      ranks_.emplace_back(std::move(cells));
    }
    others_ = CellCover<T>(std::move(others));
  }

  // Whether some point of rank r may lie within sqrt(radius2) of p.
  bool mayReach(const T* p, int r, double radius2) const
  {
    return mayReach(p, r, radius2, [](Index) { return false; });
  }

  // The same among the cells j of rank r that are not skipped(j).
  template <class Skipped>
  bool mayReach(const T* p, int r, double radius2, Skipped&& skipped) const
  {
    return ranks_[r].anyNear(
      [&](const Box<T>& b) { return pointBoxDistance2(p, b, per_) > radius2; },
      std::forward<Skipped>(skipped));
  }

  // A lower bound of the squared distance from p to the points of rank r in
  // the cells j that are not skipped(j), or limit2 when none is nearer.
  template <class Skipped>
  double distance2(const T* p, int r, Skipped&& skipped, double limit2) const
  {
    return ranks_[r].least([&](const Box<T>& b) { return pointBoxDistance2(p, b, per_); },
      std::forward<Skipped>(skipped), limit2);
  }

  // Whether some point of another rank may lie within sqrt(radius2) of a
  // point of `box`: the ghost selection's first test (selectGhosts), so a
  // region for which this is false selects no ghosts on any rank.
  bool othersMayReach(const Box<T>& box, double radius2) const
  {
    return others_.anyNear(
      [&](const Box<T>& b) { return boxDistanceLow2(box, b, per_) > radius2; });
  }

  Index numCells(int r) const { return ranks_[r].numCells(); }

  // Bytes received from the other ranks.
  double bytes() const { return bytes_; }

private:
  Periodicity per_;
  std::vector<CellCover<T>> ranks_;
  CellCover<T> others_; // every other rank's cells, in rank order
  double bytes_ = 0;
};
} // namespace jz
