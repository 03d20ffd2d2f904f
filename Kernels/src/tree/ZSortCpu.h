// Exact z-order sort on the CPU (§II-A).
#pragma once

#include <cmath>
#include <vector>

#include "jz/Config.h"
#include "jz/Geometry.h"

namespace jz
{
// The points being sorted, read straight from the caller's interleaved xyz
// arrays (sources first, then queries) and wrapped into the periodic box on
// the fly, so no copy of the coordinates is made.
template <class T>
struct JointPoints
{
  const T* sources;
  Index numSources;
  const T* queries; // may be null
  Index numQueries;
  Periodicity periodicity;
  double boxLo[kDim];

  Index size() const { return numSources + numQueries; }

  // Coordinates of joint point i as the tree sees them (wrapped, -0 -> +0).
  void get(Index i, T* p) const
  {
    const T* s =
      i < numSources ? sources + 3 * std::size_t(i) : queries + 3 * std::size_t(i - numSources);
    for (int d = 0; d < kDim; ++d)
      p[d] = treeCoordinate(s[d], boxLo[d], periodicity.length[d]);
  }
};

// The joint indices of the points in the exact z-order of jz::zLess. Points
// are first bucketed by an exact prefix (up to 63 bits) of their interleaved
// fixed-point bits (radix sort), then each bucket is ordered with the
// comparator itself, so the result is the comparator's order at full
// precision; the prefix only saves comparisons. Uses the calling OpenMP team.
template <class T>
std::vector<Index> zSortOrder(const JointPoints<T>& points);
} // namespace jz
