#include "emst/hdbscan/CondensedTree.h"

#include <algorithm>

namespace jz
{
namespace
{
// Breadth-first node order of the hierarchy below `root`, children left
// before right (hdbscan's bfs_from_hierarchy).
void breadthFirst(
  const std::vector<LinkageRow>& h, std::size_t n, Index root, std::vector<Index>& order)
{
  order.clear();
  order.push_back(root);
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] >= n)
    {
      const LinkageRow& r = h[order[i] - n];
      order.push_back(r.left);
      order.push_back(r.right);
    }
}
} // namespace

std::vector<CondensedRow> condenseTree(
  const std::vector<LinkageRow>& hierarchy, std::size_t n, Index minClusterSize)
{
  std::vector<CondensedRow> out;
  if (hierarchy.empty())
    return out;
  // Every point is a child once, and each split adds two rows; a split's
  // parts hold at least minClusterSize points each, so there are fewer than
  // n / minClusterSize splits. Reserved, the rows never reallocate.
  out.reserve(n + 2 * (n / std::max<Index>(minClusterSize, 1)) + 2);
  const Index root = Index(2 * hierarchy.size());
  std::vector<Index> nodes, sub;
  // Level order equals the library's level-by-level lists.
  breadthFirst(hierarchy, n, root, nodes);
  std::vector<Index> relabel(root + 1, 0);
  std::vector<char> ignore(root + 1, 0);
  relabel[root] = Index(n);
  Index next = Index(n + 1);
  auto countOf = [&](Index x) { return x >= n ? hierarchy[x - n].size : Index(1); };
  auto fallOut = [&](Index node, Index part, double lambda)
  {
    breadthFirst(hierarchy, n, part, sub);
    for (Index s : sub)
    {
      if (s < n)
        out.push_back(CondensedRow{ relabel[node], s, lambda, 1 });
      ignore[s] = 1;
    }
  };
  for (Index node : nodes)
  {
    if (ignore[node] || node < n)
      continue;
    const LinkageRow& r = hierarchy[node - n];
    const double lambda = r.distance > 0.0 ? 1.0 / r.distance : kInfinity;
    const Index lc = countOf(r.left), rc = countOf(r.right);
    if (lc >= minClusterSize && rc >= minClusterSize)
    {
      relabel[r.left] = next++;
      out.push_back(CondensedRow{ relabel[node], relabel[r.left], lambda, lc });
      relabel[r.right] = next++;
      out.push_back(CondensedRow{ relabel[node], relabel[r.right], lambda, rc });
    }
    else if (lc < minClusterSize && rc < minClusterSize)
    {
      fallOut(node, r.left, lambda);
      fallOut(node, r.right, lambda);
    }
    else if (lc < minClusterSize)
    {
      relabel[r.right] = relabel[node];
      fallOut(node, r.left, lambda);
    }
    else
    {
      relabel[r.left] = relabel[node];
      fallOut(node, r.right, lambda);
    }
  }
  return out;
}
} // namespace jz
