// Split points of the tree planes from the Morton levels of the gaps between
// consecutive z-sorted points (§II-C and the regularization of §II-D).
// Host code shared by the CPU backend and the host side of the CUDA backend.
#pragma once

#include <memory>
#include <vector>

#include "jz/Tree.h"
#include "jz/ZOrder.h"

namespace jz
{
// Whether gap g (before sorted point g of n) splits a plane whose nodes hold
// at most nmax points (§II-C) and whose cells are no larger than 2^maxLevel
// (§II-D). A gap between two identical points never splits: no cell can
// separate them, so a run of duplicates stays in one node on every plane,
// however long (a node over nmax points is always such a run). The one home
// of the split rule for the CPU and the CUDA tree builds.
JZ_HD bool isPlaneSplit(Index g, Index n, Index cellCount, int gapLevel, double nmax, int maxLevel)
{
  if (g == 0 || g == n)
    return true;
  if (gapLevel == kLevelNone)
    return false;
  return double(cellCount) > nmax || gapLevel > maxLevel;
}

struct PlaneSplits
{
  std::vector<Index> splits; // gap indices (point offsets), first 0, last N
  std::vector<int> levels;   // Morton level of each node
};

class TreeLevels
{
public:
  // gapLevel[i] is the level of the gap before sorted point i (n + 1 values,
  // both ends kLevelInfinite; it must outlive this object); queryPrefix
  // counts query-type points before each gap (empty for a single point type).
  TreeLevels(const int* gapLevel, Index n, const std::vector<Index>& queryPrefix,
    const TreeBuildOptions& options);

  std::vector<PlaneSplits> planes(int numPlanes) const;

  // Maximum level of the gaps strictly inside each node; kLevelNone if none.
  std::vector<int> nodeLevels(const std::vector<Index>& splits) const;

  // The regularization level lvl_max of eq. 10 for a plane, or kLevelInfinite
  // when the plane's nodes have no volume to speak of.
  static int regularizationLevel(const std::vector<Index>& splits, const std::vector<int>& levels,
    double quantile, double factor);

private:
  const int* gapLevel_;
  Index n_; // points (gaps 0..n_)
  TreeBuildOptions options_;
  // For every gap, the larger per-type point count of the smallest z-order
  // cell holding the two points beside it (n of section II-C).
  std::unique_ptr<Index[]> cellCount_;
};
} // namespace jz
