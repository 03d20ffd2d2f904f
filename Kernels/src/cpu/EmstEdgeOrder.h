// The EMST's total edge order, the one tie rule of every Borůvka (serial,
// threads, ranks): by weight, then the smaller and then the larger global id
// of the endpoints. Under it the tree is unique, so every backend and every
// partition outputs the same edge set.
#pragma once

#include <algorithm>

#include "jz/Tree.h"

namespace jz
{
// Whether edge (w, a, b) precedes (v, c, d).
inline bool emstEdgeLess(double w, GlobalId a, GlobalId b, double v, GlobalId c, GlobalId d)
{
  if (w != v)
    return w < v;
  const GlobalId lo1 = std::min(a, b), lo2 = std::min(c, d);
  if (lo1 != lo2)
    return lo1 < lo2;
  return std::max(a, b) < std::max(c, d);
}
} // namespace jz
