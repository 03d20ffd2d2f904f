// Interaction lists of the dual tree walk (jz-tree paper §III-A): receiving
// node i of a level interacts with the source nodes source[split[i] ..
// split[i+1]) of the same level. Walks that stop early keep each node's
// sources ordered by the lower bound low2 of their squared distance (§III-D);
// the others leave low2 empty.
#pragma once

#include <cmath>
#include <vector>

#include "jz/Config.h"

namespace jz
{
struct InteractionList
{
  std::vector<std::size_t> split;
  std::vector<Index> source;
  // Single precision halves the list's memory; rounded down, so it stays a
  // lower bound.
  std::vector<float> low2;

  static float lowerBound(double x)
  {
    float f = float(x);
    if (double(f) > x)
      f = std::nextafter(f, 0.0f);
    return f;
  }

  std::size_t size() const { return source.size(); }
  Index numReceivers() const { return split.empty() ? 0 : Index(split.size() - 1); }
  // The stored lower bound of entry e (zero when the list keeps none).
  double entryLow2(std::size_t e) const { return low2.empty() ? 0.0 : double(low2[e]); }
};
} // namespace jz
