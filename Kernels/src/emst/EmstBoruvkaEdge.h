// A candidate edge of the distributed Borůvka rounds, as it travels between
// ranks: end A lies in the component that chose it, end B in another. Each
// end is named by its global id, its component's label (the smallest global
// id of the component), the rank and sorted index that hold it, and its
// input coordinates (for the output).
#pragma once

#include <algorithm>
#include <cstdint>

#include "emst/EmstEdgeOrder.h"
#include "jz/Config.h"

namespace jz
{
template <class T>
struct BoruvkaEdge
{
  double weight2 = kInfinity;
  GlobalId idA = -1, idB = -1;
  GlobalId labelA = -1, labelB = -1;
  std::int32_t rankA = -1, rankB = -1;
  Index pointA = 0, pointB = 0;
  T rawA[3] = { 0, 0, 0 }, rawB[3] = { 0, 0, 0 };

  bool exists() const { return idA >= 0; }
  GlobalId low() const { return std::min(idA, idB); }
  GlobalId high() const { return std::max(idA, idB); }
  // The serial order (weight, smaller id, larger id); no edge is last.
  bool lighterThan(const BoruvkaEdge& o) const
  {
    if (!o.exists())
      return exists();
    return exists() && emstEdgeLess(weight2, idA, idB, o.weight2, o.idA, o.idB);
  }
};
} // namespace jz
