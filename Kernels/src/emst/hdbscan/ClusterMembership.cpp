#include "emst/hdbscan/ClusterMembership.h"

#include <algorithm>
#include <cmath>

namespace jz
{
std::vector<double> clusterDeaths(const std::vector<CondensedRow>& tree, std::size_t n)
{
  Index top = Index(n);
  for (const CondensedRow& r : tree)
    top = std::max(top, r.parent);
  std::vector<double> death(top - n + 1, 0.0);
  for (const CondensedRow& r : tree)
    death[r.parent - n] = std::max(death[r.parent - n], r.lambda);
  return death;
}

void clusterMembership(const std::vector<CondensedRow>& tree, std::size_t n,
  const std::vector<char>& selected, std::vector<long long>& cluster,
  std::vector<double>& probability)
{
  cluster.assign(n, -1);
  probability.assign(n, 0.0);
  if (tree.empty())
    return;
  const std::size_t m = selected.size();
  std::vector<Index> up(m, 0); // parent cluster of each cluster
  std::vector<double> pointLambda(n, 0.0);
  std::vector<Index> pointParent(n, 0);
  for (const CondensedRow& r : tree)
  {
    if (r.child >= n)
      up[r.child - n] = r.parent - Index(n);
    else
    {
      pointLambda[r.child] = r.lambda;
      pointParent[r.child] = r.parent - Index(n);
    }
  }
  // Nearest selected cluster at or above each cluster (parents come first).
  std::vector<long long> owner(m, -1);
  for (std::size_t c = 0; c < m; ++c)
    owner[c] = selected[c] ? (long long)c : (c == 0 ? -1 : owner[up[c]]);
  const std::vector<double> death = clusterDeaths(tree, n);
  const bool singleRoot = selected[0] != 0;
  for (std::size_t p = 0; p < n; ++p)
  {
    long long c = owner[pointParent[p]];
    if (c == 0 && !(singleRoot && pointLambda[p] >= death[0]))
      c = -1;
    cluster[p] = c;
    if (c < 0)
      continue;
    const double d = death[c];
    probability[p] =
      d == 0.0 || !std::isfinite(pointLambda[p]) ? 1.0 : std::min(pointLambda[p], d) / d;
  }
}
} // namespace jz
