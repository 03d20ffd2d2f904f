// Which of a kNN tree's query points search, and where their results go:
// every point to the row of its input index; only the first numSelfQueries
// sources (the others are sources only); or the sources selfQueryIndices
// names, to the rows of their place in it, through a table in the tree's
// query order.
#pragma once

#include "jz/Config.h"

namespace jz
{
struct KnnQueryRows
{
  static constexpr Index kSourceOnly = Index(-1);

  const Index* inputIndex = nullptr; // the tree's query order -> input index
  Index limit = kSourceOnly;         // input indices from here on do not search
  const Index* table = nullptr;      // when given: the tree's query order -> row

  // The result row of the query at sortedQuery, kSourceOnly where it only
  // acts as a source.
  Index row(Index sortedQuery) const
  {
    if (table)
      return table[sortedQuery];
    const Index i = inputIndex[sortedQuery];
    return i < limit ? i : kSourceOnly;
  }
  bool searches(Index sortedQuery) const { return row(sortedQuery) != kSourceOnly; }
};
} // namespace jz
