// Flat clusters from the condensed tree (hdbscan 0.8.33's compute_stability
// and get_clusters): stability S(C) = sum over C's rows of
// (lambda - birth(C)) * childSize; excess of mass keeps a cluster unless its
// children's summed stability (rounded to float, as the library does) is
// larger, bottom-up; leaf keeps the clusters without child clusters. The
// root is a candidate only with allowSingleCluster.
#pragma once

#include <vector>

#include "emst/hdbscan/CondensedTree.h"
#include "jz/Hdbscan.h"

namespace jz
{
// selected[c - n] for clusters n .. n + numClusters - 1.
std::vector<char> selectClusters(const std::vector<CondensedRow>& tree, std::size_t n,
  ClusterSelection method, bool allowSingleCluster);
} // namespace jz
