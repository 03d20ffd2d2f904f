#include "jz/FofFromTree.h"

#include <algorithm>

namespace jz
{
void fofGroupsFromTree(
  const EmstEdges& tree, std::size_t n, const GlobalId* ids, double linkingLength, FofGroups& out)
{
  const double l2 = linkingLength * linkingLength;
  // Edges are sorted by weight: the cut is a prefix.
  const std::size_t cut = std::size_t(
    std::upper_bound(tree.weight2.begin(), tree.weight2.end(), l2) - tree.weight2.begin());
  std::vector<Index> parent(n);
  for (std::size_t i = 0; i < n; ++i)
    parent[i] = Index(i);
  auto find = [&](Index x)
  {
    while (parent[x] != x)
    {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  auto key = [&](Index i) { return ids ? ids[i] : GlobalId(i); };
  for (std::size_t e = 0; e < cut; ++e)
  {
    Index a = find(tree.from[e]), b = find(tree.to[e]);
    if (a == b)
      continue;
    // The root is the member with the smallest global id.
    if (key(b) < key(a))
      std::swap(a, b);
    parent[b] = a;
  }
  if (out.wantRoot)
    out.groupRoot.resize(n);
  if (out.wantLabel)
    out.groupLabel.resize(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const Index r = find(Index(i));
    if (out.wantRoot)
      out.groupRoot[i] = r;
    if (out.wantLabel)
      out.groupLabel[i] = key(r);
  }
}
} // namespace jz
