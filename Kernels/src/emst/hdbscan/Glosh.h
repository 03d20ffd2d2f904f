// GLOSH outlier scores (Campello et al. 2015, §4) as hdbscan 0.8.33's
// outlier_scores computes them: score = (death - lambda) / death with death
// the largest lambda of the point's parent cluster, raised once from its
// child clusters in the library's order (numpy's argsort of the parents,
// stopping at the first point row); 0 when death is 0 or lambda infinite.
#pragma once

#include <vector>

#include "emst/hdbscan/CondensedTree.h"

namespace jz
{
std::vector<double> gloshScores(const std::vector<CondensedRow>& tree, std::size_t n);
} // namespace jz
