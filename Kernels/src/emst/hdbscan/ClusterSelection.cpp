#include "emst/hdbscan/ClusterSelection.h"

#include <algorithm>

namespace jz
{
namespace
{
Index numClustersOf(const std::vector<CondensedRow>& tree, std::size_t n)
{
  Index top = Index(n);
  for (const CondensedRow& r : tree)
    top = std::max(top, r.parent);
  return top - Index(n) + 1;
}

std::vector<double> stabilities(const std::vector<CondensedRow>& tree, std::size_t n, Index m)
{
  std::vector<double> birth(m, 0.0), stability(m, 0.0);
  for (const CondensedRow& r : tree)
    if (r.child >= n)
      birth[r.child - n] = r.lambda;
  birth[0] = 0.0;
  for (const CondensedRow& r : tree)
    stability[r.parent - n] += (r.lambda - birth[r.parent - n]) * double(r.childSize);
  return stability;
}

// Every cluster below c off. The search stops at clusters kept earlier: their
// own subtrees were cleared when they were kept, so each cluster is visited
// once per kept ancestor nearest to it (linear overall).
void deselectBelow(const std::vector<std::vector<Index>>& children, Index c,
  const std::vector<char>& kept, std::vector<char>& selected)
{
  std::vector<Index> stack(children[c].begin(), children[c].end());
  while (!stack.empty())
  {
    const Index k = stack.back();
    stack.pop_back();
    selected[k] = 0;
    if (!kept[k])
      stack.insert(stack.end(), children[k].begin(), children[k].end());
  }
}
} // namespace

std::vector<char> selectClusters(const std::vector<CondensedRow>& tree, std::size_t n,
  ClusterSelection method, bool allowSingleCluster)
{
  if (tree.empty())
    return std::vector<char>(1, 0);
  const Index m = numClustersOf(tree, n);
  std::vector<std::vector<Index>> children(m);
  for (const CondensedRow& r : tree)
    if (r.childSize > 1)
      children[r.parent - n].push_back(r.child - Index(n));
  std::vector<char> selected(m, 0);
  // Candidates: every cluster, the root only with allowSingleCluster.
  const Index first = allowSingleCluster ? 0 : 1;
  if (method == ClusterSelection::Leaf)
  {
    bool anyChild = false;
    for (Index c = 0; c < m; ++c)
      anyChild = anyChild || !children[c].empty();
    if (!anyChild)
      return selected; // no cluster tree: the library selects nothing
    for (Index c = 1; c < m; ++c)
      selected[c] = children[c].empty();
    return selected;
  }
  std::vector<double> stability = stabilities(tree, n, m);
  for (Index c = first; c < m; ++c)
    selected[c] = 1;
  std::vector<char> kept(m, 0);
  // Descending cluster id: children (created later) before their parents.
  for (Index c = m; c-- > first;)
  {
    double sum = 0;
    for (Index k : children[c])
      sum += stability[k];
    const float subtree = float(sum); // the library keeps this sum in a C float
    if (double(subtree) > stability[c])
    {
      selected[c] = 0;
      stability[c] = double(subtree);
    }
    else
    {
      deselectBelow(children, c, kept, selected);
      kept[c] = 1;
    }
  }
  return selected;
}
} // namespace jz
