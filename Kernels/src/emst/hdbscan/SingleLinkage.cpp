#include "emst/hdbscan/SingleLinkage.h"

#include <cmath>
#include <numeric>

#include "jz/UnionFind.h"

namespace jz
{
std::vector<LinkageRow> singleLinkage(const EmstEdges& tree, std::size_t n)
{
  // Union-find whose roots are cluster labels: point i, or n + row.
  std::vector<Index> parent(2 * n > 0 ? 2 * n - 1 : 0);
  std::vector<Index> size(parent.size(), 1);
  std::iota(parent.begin(), parent.end(), Index(0));
  std::vector<LinkageRow> rows(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i)
  {
    // Both roots are linked under a new one, the row's cluster.
    const Index a = findRoot(parent, tree.from[i]), b = findRoot(parent, tree.to[i]);
    const Index merged = Index(n + i);
    rows[i] = LinkageRow{ a, b, std::sqrt(tree.weight2[i]), size[a] + size[b] };
    size[merged] = size[a] + size[b];
    parent[a] = parent[b] = merged;
  }
  return rows;
}
} // namespace jz
