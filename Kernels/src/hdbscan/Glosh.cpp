#include "Glosh.h"

#include <cmath>

#include "ClusterMembership.h"
#include "NumpyArgsort.h"

namespace jz
{
std::vector<double> gloshScores(const std::vector<CondensedRow>& tree, std::size_t n)
{
  std::vector<double> score(n, 0.0);
  if (tree.empty())
    return score;
  std::vector<double> death = clusterDeaths(tree, n);
  std::vector<std::int64_t> parents(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i)
    parents[i] = tree[i].parent;
  for (std::int64_t i : numpyArgsort(parents))
  {
    const CondensedRow& r = tree[i];
    if (r.child < n)
      break;
    if (death[r.child - n] > death[r.parent - n])
      death[r.parent - n] = death[r.child - n];
  }
  for (const CondensedRow& r : tree)
  {
    if (r.child >= n)
      continue;
    const double d = death[r.parent - n];
    score[r.child] = d == 0.0 || !std::isfinite(r.lambda) ? 0.0 : (d - r.lambda) / d;
  }
  return score;
}
} // namespace jz
