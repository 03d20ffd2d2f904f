// Split points of the tree planes from the Morton levels of the gaps between
// consecutive z-sorted points (§II-C and the regularization of §II-D).
// Host code shared by the CPU backend and the host side of the CUDA backend.
#pragma once

#include <vector>

#include "jz/Tree.h"

namespace jz
{
struct PlaneSplits
{
  std::vector<Index> splits; // gap indices (point offsets), first 0, last N
  std::vector<int> levels;   // Morton level of each node
};

class TreeLevels
{
public:
  // gapLevel[i] is the level of the gap before sorted point i (N + 1 values,
  // both ends kLevelInfinite); queryPrefix counts query-type points before
  // each gap (empty for a single point type).
  TreeLevels(const std::vector<int>& gapLevel, const std::vector<Index>& queryPrefix,
    const TreeBuildOptions& options);

  std::vector<PlaneSplits> planes(int numPlanes) const;

  // Maximum level of the gaps strictly inside each node; kLevelNone if none.
  std::vector<int> nodeLevels(const std::vector<Index>& splits) const;

  // The regularization level lvl_max of eq. 10 for a plane, or kLevelInfinite
  // when the plane's nodes have no volume to speak of.
  static int regularizationLevel(const std::vector<Index>& splits, const std::vector<int>& levels,
    double quantile, double factor);

private:
  const std::vector<int>& gapLevel_;
  TreeBuildOptions options_;
  // For every gap, the larger per-type point count of the smallest z-order
  // cell holding the two points beside it (n of section II-C).
  std::vector<Index> cellCount_;
};
} // namespace jz
