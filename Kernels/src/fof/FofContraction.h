// The contraction of the union-find on group pointers (§IV-A):
// every pointer set to its group's root, in parallel.
#pragma once

#include <cassert>

#include "jz/FofLinking.h"

namespace jz
{
// fofContract's stores are monotone, so racing threads cannot leave a
// pointer at a non-root; debug builds check that post-condition.
inline void contractGroups(Index* g, Index n, int numThreads)
{
#pragma omp parallel for num_threads(numThreads) schedule(static) if (numThreads > 1)
  for (long long i = 0; i < (long long)n; ++i)
    fofContract(g, Index(i));
#ifndef NDEBUG
  for (Index i = 0; i < n; ++i)
    assert(fofIsRoot(g, g[i]) && "every group pointer names a root after a contraction");
#endif
}
} // namespace jz
