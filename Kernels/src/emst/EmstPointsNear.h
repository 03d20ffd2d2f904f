// Which of this rank's points the distributed EMST's answers to other ranks
// can involve: those within the asked radius of an asked point. The search
// that answers (the Borůvka policy for foreign queries, the kNN walk) then
// runs on a tree of these alone.
#pragma once

#include <algorithm>
#include <vector>

#include "distributed/GhostSelection.h"

namespace jz
{
// The sorted indices into tree.sources of the points within radius2[j] of
// at[3j..3j+2] for some j, ascending (a superset: consecutive points, near
// each other when they come in z-order as the asking ranks send them, share
// a region, their box with their largest radius, while the box's diagonal
// stays within twice the least radius and the radii within a factor 4 (up
// to 32 points), so the selection descends
// the tree once per region, and the superset stays close). The radii are
// widened a little, so that selection in the points' precision misses no
// point at exactly the radius; the searches decide by exact weights.
template <class T>
std::vector<Index> pointsNear(
  const ZTree<T>& tree, const T* at, std::size_t count, const double* radius2)
{
  constexpr std::size_t kRun = 32;
  std::vector<std::vector<Region<T>>> regions(1);
  std::vector<Region<T>>& out = regions[0];
  std::size_t inRun = 0;
  double least2 = 0;
  for (std::size_t j = 0; j < count; ++j)
  {
    const double r2 = radius2[j] + radius2[j] * 1e-6;
    if (inRun > 0 && inRun < kRun)
    {
      Region<T> grown = out.back();
      boxExtend(grown.box, at + 3 * j);
      grown.radius2 = std::max(grown.radius2, r2);
      double extent2 = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double side = double(grown.box.hi[d]) - double(grown.box.lo[d]);
        extent2 += side * side;
      }
      const double low2 = std::min(least2, r2);
      if (extent2 <= 4 * low2 && grown.radius2 <= 16 * low2)
      {
        out.back() = grown;
        least2 = low2;
        ++inRun;
        continue;
      }
    }
    Region<T> r;
    boxSetEmpty(r.box);
    boxExtend(r.box, at + 3 * j);
    r.radius2 = r2;
    out.push_back(r);
    least2 = r2;
    inRun = 1;
  }
  return selectGhosts(tree, regions, -1)[0];
}
} // namespace jz
