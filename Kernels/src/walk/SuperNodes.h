// The virtual level above the coarsest plane (jz-tree paper §III-B,
// Algorithm 1 lines 1-2): consecutive groups of NGR top nodes, "super nodes",
// with an interaction list among them, so that an entry always means "all
// children of the receiver with all children of the source", as on every
// plane below.
#pragma once

#include <vector>

#include "InteractionList.h"

namespace jz
{
// NGR of Algorithm 1; the exact value is not critical.
constexpr Index kSuperNodeSize = 32;

// Super node s owns top nodes [split[s], split[s + 1]).
inline std::vector<Index> superNodeSplit(Index topNodes, Index group = kSuperNodeSize)
{
  std::vector<Index> split;
  for (Index i = 0; i < topNodes; i += group)
    split.push_back(i);
  split.push_back(topNodes);
  return split;
}

// Every super node with every super node (lower bounds zero), or with itself
// and every later one when each unordered pair is to be visited once.
inline InteractionList superNodeList(Index superNodes, bool unorderedPairs, bool withLowerBounds)
{
  InteractionList list;
  list.split.assign(std::size_t(superNodes) + 1, 0);
  for (Index s = 0; s < superNodes; ++s)
  {
    const Index first = unorderedPairs ? s : 0;
    for (Index t = first; t < superNodes; ++t)
      list.source.push_back(t);
    list.split[s + 1] = list.source.size();
  }
  if (withLowerBounds)
    list.low2.assign(list.source.size(), 0.0f);
  return list;
}
} // namespace jz
