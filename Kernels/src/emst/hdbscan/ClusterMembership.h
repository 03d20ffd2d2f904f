// Points' clusters and membership probabilities from the selected clusters
// (hdbscan 0.8.33's do_labelling and get_probabilities): a point belongs to
// the nearest selected cluster above it; the root, when it is the one
// selected cluster (allowSingleCluster), keeps only points whose lambda
// reaches the largest lambda of its rows. Probability = min(lambda, death) /
// death with death the cluster's largest row lambda (1 when death is 0 or
// the point's lambda infinite).
#pragma once

#include <vector>

#include "emst/hdbscan/CondensedTree.h"

namespace jz
{
// Per point: the selected cluster (index c - n) or -1, and the probability.
void clusterMembership(const std::vector<CondensedRow>& tree, std::size_t n,
  const std::vector<char>& selected, std::vector<long long>& cluster,
  std::vector<double>& probability);

// The largest lambda among each cluster's rows (hdbscan's max_lambdas).
std::vector<double> clusterDeaths(const std::vector<CondensedRow>& tree, std::size_t n);
} // namespace jz
