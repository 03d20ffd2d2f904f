// Where every rank's points lie, known on every rank: per rank the boxes of
// its tree's coarsest plane (about 1000 compact cells: a z-order range is
// not convex, so one box would claim much of its neighbours' space), with
// coarser planes over them (CoarsePlane) so that a test visits few
// boxes. A point needs another rank's answer only when one of that rank's
// cells lies within its search radius.
#pragma once

#include <algorithm>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

namespace jz
{
// Planes above the tree's coarsest, each grouping kFan consecutive nodes of
// the one below, up to one of at most kFan nodes: a test (mayReach) then
// starts from a few boxes instead of the coarsest plane's ~1000.
template <class T>
struct CoarsePlane
{
  static constexpr Index kFan = 8;
  std::vector<Index> split; // children in the plane below
  std::vector<Box<T>> box;
};

template <class T>
std::vector<CoarsePlane<T>> coarsePlanes(std::vector<Box<T>> below)
{
  std::vector<CoarsePlane<T>> out;
  while (Index(below.size()) > CoarsePlane<T>::kFan)
  {
    const Index count = Index(below.size());
    CoarsePlane<T> c;
    for (Index j = 0; j < count; j += CoarsePlane<T>::kFan)
    {
      c.split.push_back(j);
      Box<T> b;
      boxSetEmpty(b);
      for (Index k = j; k < std::min(count, j + CoarsePlane<T>::kFan); ++k)
        boxMerge(b, below[k]);
      c.box.push_back(b);
    }
    c.split.push_back(count);
    below = c.box;
    out.push_back(std::move(c));
  }
  return out;
}

template <class T>
class EmstRankCover
{
public:
  EmstRankCover() = default;

  // Collective: every rank passes its tree.
  EmstRankCover(const ZTree<T>& tree, Communicator& comm)
    : per_(tree.periodicity)
  {
    std::vector<Box<T>> mine;
    if (!tree.planes.empty())
      for (const Box<T>& b : tree.planes.back().sourceBox)
        if (!boxIsEmpty(b))
          mine.push_back(b);
    const std::vector<std::vector<char>> all = comm.allGather(toBytes(mine));
    cells_.resize(all.size());
    above_.resize(all.size());
    for (std::size_t r = 0; r < all.size(); ++r)
    {
      cells_[r] = fromBytes<Box<T>>(all[r]);
      above_[r] = coarsePlanes(cells_[r]);
      if (int(r) != comm.rank())
        bytes_ += double(all[r].size());
    }
  }

  // Whether some point of rank r may lie within sqrt(radius2) of p.
  bool mayReach(const T* p, int r, double radius2) const
  {
    const std::vector<CoarsePlane<T>>& above = above_[r];
    std::vector<std::pair<int, Index>>& stack = stack_();
    stack.clear();
    const int top = int(above.size());
    const Index topCount = top == 0 ? Index(cells_[r].size()) : Index(above.back().box.size());
    for (Index j = 0; j < topCount; ++j)
      stack.emplace_back(top, j);
    while (!stack.empty())
    {
      const auto [level, j] = stack.back();
      stack.pop_back();
      const Box<T>& b = level == 0 ? cells_[r][j] : above[level - 1].box[j];
      if (pointBoxDistance2(p, b, per_) > radius2)
        continue;
      if (level == 0)
        return true;
      const std::vector<Index>& split = above[level - 1].split;
      for (Index k = split[j]; k < split[j + 1]; ++k)
        stack.emplace_back(level - 1, k);
    }
    return false;
  }

  double bytes() const { return bytes_; }

private:
  static std::vector<std::pair<int, Index>>& stack_()
  {
    static thread_local std::vector<std::pair<int, Index>> s;
    return s;
  }

  Periodicity per_;
  std::vector<std::vector<Box<T>>> cells_;               // per rank
  std::vector<std::vector<CoarsePlane<T>>> above_;       // per rank
  double bytes_ = 0;
};
} // namespace jz
