// Interaction lists of the dual tree walk (§III-A): receiving node i of a
// plane interacts with source nodes source[split[i] .. split[i+1]) of the same
// plane, sorted by the lower bound low2 of their squared distance (III-D).
#pragma once

#include <cmath>
#include <vector>

#include "jz/Config.h"

namespace jz
{
struct InteractionList
{
  std::vector<std::size_t> split;
  std::vector<Index> source;
  // Single precision halves the list's memory; rounded down, so it stays a
  // lower bound.
  std::vector<float> low2;

  static float lowerBound(double x)
  {
    float f = float(x);
    if (double(f) > x)
      f = std::nextafter(f, 0.0f);
    return f;
  }

  std::size_t size() const { return source.size(); }

  // Every node of `nodes` interacts with every other, lower bounds zero.
  static InteractionList dense(Index nodes)
  {
    InteractionList list;
    list.split.resize(std::size_t(nodes) + 1);
    list.source.resize(std::size_t(nodes) * nodes);
    list.low2.assign(std::size_t(nodes) * nodes, 0.0f);
    for (Index i = 0; i <= nodes; ++i)
      list.split[i] = std::size_t(i) * nodes;
    for (std::size_t j = 0; j < list.source.size(); ++j)
      list.source[j] = Index(j % nodes);
    return list;
  }
};

// The virtual plane above the coarsest one: consecutive groups of `group`
// top nodes ("super nodes", NGR of Algorithm 1), so that an interaction
// between two entries always means "all their children with all their children".
inline std::vector<Index> superNodeSplit(Index topNodes, Index group)
{
  std::vector<Index> split;
  for (Index i = 0; i < topNodes; i += group)
    split.push_back(i);
  split.push_back(topNodes);
  return split;
}
} // namespace jz
