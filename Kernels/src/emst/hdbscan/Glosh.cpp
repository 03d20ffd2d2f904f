#include "emst/hdbscan/Glosh.h"

#include <cmath>

#include "emst/hdbscan/ClusterMembership.h"
#include "emst/hdbscan/NumpyArgsort.h"

namespace jz
{
namespace
{
// The library's (death - lambda) / death, except where its cluster dies at an
// infinite lambda (a blob of identical points below it) and the point leaves
// at a finite one: the library's inf / inf is NaN there; the limit is 1.
double gloshScore(double death, double lambda)
{
  if (death == 0.0 || !std::isfinite(lambda))
    return 0.0;
  if (std::isinf(death))
    return 1.0;
  return (death - lambda) / death;
}
} // namespace

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
    score[r.child] = gloshScore(death[r.parent - n], r.lambda);
  }
  return score;
}
} // namespace jz
