#include "emst/hdbscan/SingleLinkage.h"

#include <cmath>

namespace jz
{
std::vector<LinkageRow> singleLinkage(const EmstEdges& tree, std::size_t n)
{
  // Union-find whose roots are cluster labels: point i, or n + row.
  std::vector<Index> parent(2 * n > 0 ? 2 * n - 1 : 0);
  std::vector<Index> size(parent.size(), 1);
  for (Index i = 0; i < Index(parent.size()); ++i)
    parent[i] = i;
  auto find = [&](Index x)
  {
    Index r = x;
    while (parent[r] != r)
      r = parent[r];
    while (parent[x] != r)
    {
      const Index next = parent[x];
      parent[x] = r;
      x = next;
    }
    return r;
  };
  std::vector<LinkageRow> rows(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i)
  {
    const Index a = find(tree.from[i]), b = find(tree.to[i]);
    const Index merged = Index(n + i);
    rows[i] = LinkageRow{ a, b, std::sqrt(tree.weight2[i]), size[a] + size[b] };
    size[merged] = size[a] + size[b];
    parent[a] = parent[b] = merged;
  }
  return rows;
}
} // namespace jz
