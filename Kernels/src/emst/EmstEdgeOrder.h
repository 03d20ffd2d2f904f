// The EMST's total edge order, the one tie rule of every Borůvka (serial,
// threads, ranks, the GPU's rounds): by weight, then the smaller and then the
// larger global id of the endpoints. Under it the tree is unique, so every
// backend and every partition outputs the same edge set.
#pragma once

#include "jz/Tree.h"

namespace jz
{
// Whether edge (w, a, b) precedes (v, c, d). Host and device (cuda/Boruvka*).
JZ_HD bool emstEdgeLess(double w, GlobalId a, GlobalId b, double v, GlobalId c, GlobalId d)
{
  if (w != v)
    return w < v;
  const GlobalId lo1 = a < b ? a : b, lo2 = c < d ? c : d;
  if (lo1 != lo2)
    return lo1 < lo2;
  const GlobalId hi1 = a < b ? b : a, hi2 = c < d ? d : c;
  return hi1 < hi2;
}
} // namespace jz
