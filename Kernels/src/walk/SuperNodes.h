// The virtual level above the coarsest plane (§III-B,
// Algorithm 1 lines 1-2): consecutive groups of NGR top nodes, "super nodes",
// with an interaction list among them, so that an entry always means "all
// children of the receiver with all children of the source", as on every
// plane below.
#pragma once

#include <vector>

#include "walk/InteractionList.h"

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
  InteractionList list(superNodes, withLowerBounds);
  InteractionList::Writer writer = list.writer();
  for (Index s = 0; s < superNodes; ++s)
  {
    const Index first = unorderedPairs ? s : 0;
    const InteractionList::Run run = writer.open(s, superNodes - first);
    for (Index t = first; t < superNodes; ++t)
    {
      run.source[t - first] = t;
      if (run.low2)
        run.low2[t - first] = 0.0f;
    }
  }
  list.adopt(writer);
  return list;
}
} // namespace jz
