// The condensed cluster tree of HDBSCAN* (Campello et al. 2015, §2.3), as
// hdbscan 0.8.33's condense_tree builds it: walking the single-linkage
// hierarchy breadth-first from the root, a split into two parts of at least
// minClusterSize points creates two child clusters; smaller parts fall out
// of their parent as single points at lambda = 1 / distance. Clusters are
// numbered n (the root), n + 1, ... in creation order; rows keep the
// library's order (its sums and sorts depend on it).
#pragma once

#include <vector>

#include "emst/hdbscan/SingleLinkage.h"

namespace jz
{
struct CondensedRow
{
  Index parent, child; // child < n: a point; else a cluster
  double lambda;
  Index childSize;
};

std::vector<CondensedRow> condenseTree(
  const std::vector<LinkageRow>& hierarchy, std::size_t n, Index minClusterSize);
} // namespace jz
