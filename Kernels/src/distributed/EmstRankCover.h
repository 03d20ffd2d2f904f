// Where every rank's points lie, known on every rank: per rank its bounding
// box and the boxes of kParts runs of its points in z-order (a z-order range
// is not convex, so its box alone would claim much of its neighbours'
// space). A point needs another rank's answer only when one of that rank's
// boxes lies within its search radius.
#pragma once

#include <algorithm>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Geometry.h"
#include "jz/Tree.h"

namespace jz
{
template <class T>
class EmstRankCover
{
public:
  static constexpr Index kParts = 64;

  EmstRankCover() = default;

  // Collective: every rank passes its tree (sorted points in z-order).
  EmstRankCover(const ZTree<T>& tree, Communicator& comm)
    : per_(tree.periodicity)
  {
    const SortedPoints<T>& s = tree.sources;
    const Index n = s.size();
    std::vector<Box<T>> mine;
    for (Index k = 0; k < std::min(kParts, n); ++k)
    {
      Box<T> b;
      boxSetEmpty(b);
      for (Index i = Index(std::size_t(n) * k / std::min(kParts, n));
           i < Index(std::size_t(n) * (k + 1) / std::min(kParts, n)); ++i)
      {
        T p[3];
        s.point(i, p);
        boxExtend(b, p);
      }
      mine.push_back(b);
    }
    const std::vector<std::vector<char>> all = comm.allGather(toBytes(mine));
    parts_.resize(all.size());
    whole_.resize(all.size());
    for (std::size_t r = 0; r < all.size(); ++r)
    {
      parts_[r] = fromBytes<Box<T>>(all[r]);
      bytes_ += double(all[r].size());
      boxSetEmpty(whole_[r]);
      for (const Box<T>& b : parts_[r])
        boxMerge(whole_[r], b);
    }
  }

  // No point of rank r is nearer to p than this (kInfinity: r has none).
  double low2(const T* p, int r) const
  {
    if (boxIsEmpty(whole_[r]))
      return kInfinity;
    double best = pointBoxDistance2(p, whole_[r], per_);
    if (best > 0)
      return best;
    best = kInfinity;
    for (const Box<T>& b : parts_[r])
      best = std::min(best, pointBoxDistance2(p, b, per_));
    return best;
  }

  // Whether some point of rank r may lie within sqrt(radius2) of p.
  bool mayReach(const T* p, int r, double radius2) const
  {
    if (boxIsEmpty(whole_[r]) || pointBoxDistance2(p, whole_[r], per_) > radius2)
      return false;
    for (const Box<T>& b : parts_[r])
      if (!(pointBoxDistance2(p, b, per_) > radius2))
        return true;
    return false;
  }

  double bytes() const { return bytes_; }

private:
  Periodicity per_;
  std::vector<Box<T>> whole_;
  std::vector<std::vector<Box<T>>> parts_;
  double bytes_ = 0;
};
} // namespace jz
