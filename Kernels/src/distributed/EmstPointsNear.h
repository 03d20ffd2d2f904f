// Which of this rank's points the distributed EMST's answers to other ranks
// can involve: those within the asked radius of an asked point. The search
// that answers (the Borůvka policy for foreign queries, the kNN walk) then
// runs on a tree of these alone.
#pragma once

#include <vector>

#include "GhostSelection.h"

namespace jz
{
// The sorted indices into tree.sources of the points within radius2[j] of
// at[3j..3j+2] for some j, ascending. The radii are widened a little, so
// that selection in the points' precision misses no point at exactly the
// radius; the searches decide by exact weights.
template <class T>
std::vector<Index> pointsNear(
  const ZTree<T>& tree, const T* at, std::size_t count, const double* radius2)
{
  std::vector<std::vector<Region<T>>> regions(1);
  regions[0].resize(count);
  for (std::size_t j = 0; j < count; ++j)
  {
    Region<T>& r = regions[0][j];
    for (int d = 0; d < 3; ++d)
      r.box.lo[d] = r.box.hi[d] = at[3 * j + d];
    r.radius2 = radius2[j] + radius2[j] * 1e-6;
  }
  return selectGhosts(tree, regions, -1)[0];
}
} // namespace jz
