// Exact z-order sort of point records on the CPU (paper section II-A).
#pragma once

#include <vector>

#include "jz/Config.h"

namespace jz
{
// A point during sorting: coordinates plus its joint index (sources first,
// then queries).
template <class T>
struct Record
{
  T p[kDim];
  Index id;
};

// Sorts records into the exact z-order of jz::zLess. Records are first
// bucketed by an exact 32-bit prefix of their interleaved fixed-point bits
// (radix sort), then each bucket is ordered with the comparator itself, so
// the result is the comparator's order at full precision; the prefix only
// saves comparisons. Uses the calling OpenMP team.
template <class T>
void zSortCpu(std::vector<Record<T>>& records);
} // namespace jz
