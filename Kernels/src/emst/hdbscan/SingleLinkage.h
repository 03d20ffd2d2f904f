// The single-linkage hierarchy of a spanning tree (scipy's linkage format,
// as hdbscan's label()): row i merges clusters left and right at `distance`
// into cluster n + i of `size` points; points are clusters 0..n-1.
#pragma once

#include <vector>

#include "jz/Config.h"
#include "jz/Emst.h"

namespace jz
{
struct LinkageRow
{
  Index left, right;
  double distance;
  Index size;
};

// Edges in merge order (sorted by weight); distances are sqrt(weight2).
std::vector<LinkageRow> singleLinkage(const EmstEdges& tree, std::size_t n);
} // namespace jz
