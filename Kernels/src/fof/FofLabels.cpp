// Deterministic friends-of-friends group numbering (labelFofGroups in Fof.h):
// kept groups numbered 0..G-1 by descending size, ties by the smallest global
// point id of the group; -1 for groups below the minimum size.
#include <algorithm>
#include <memory>
#include <vector>

#include <omp.h>

#include "fof/FofGroupOrder.h"
#include "fof/FofThreads.h"
#include "jz/Fof.h"
#include "jz/HugePages.h"

namespace jz
{
std::size_t labelFofGroups(const Index* groupRoot, const GlobalId* groupLabel, std::size_t n,
  GlobalId minimumGroupSize, GlobalId* groupId, GlobalId* groupSize, const RunControl& control)
{
  if (n == 0)
    return 0;
  if (!groupRoot)
    throw Error("labelFofGroups: no group roots were given");
  const int numThreads = fofThreads(control, n);
  const long long nn = (long long)n;

  // Members per root (input index of the root). Each thread counts the roots
  // of its own range over all points: plain increments (atomic ones on
  // scattered roots serialise their cache misses), no count array per thread.
  // Zeroed by the team, which first-touches the fresh pages in parallel.
  std::unique_ptr<Index[]> countStore = newHugeArray<Index>(n);
  Index* c = countStore.get();
#pragma omp parallel num_threads(numThreads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const Index lo = Index(nn * t / nt), size = Index(nn * (t + 1) / nt) - lo;
    for (Index r = lo; r < lo + size; ++r)
      c[r] = 0;
    Index elsewhere[8]; // the increments of other threads' roots, thrown away
    for (long long i = 0; i < nn; ++i)
    {
      const Index r = groupRoot[i];
      ++*(Index(r - lo) < size ? c + r : elsewhere + (i & 7));
    }
  }
  const Index* count = c;

  if (groupSize)
  {
#pragma omp parallel for num_threads(numThreads) schedule(static)
    for (long long i = 0; i < nn; ++i)
      groupSize[i] = GlobalId(count[groupRoot[i]]);
  }

  // The kept groups, collected per thread's chunk (the sort below fixes
  // their order: roots are unique), in the canonical order.
  std::vector<std::vector<FofKeptGroup>> keptOf(numThreads);
#pragma omp parallel num_threads(numThreads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<FofKeptGroup> mine;
    for (long long r = nn * t / nt; r < nn * (t + 1) / nt; ++r)
    {
      if (count[r] > 0 && GlobalId(count[r]) >= minimumGroupSize)
      {
        mine.push_back({ groupLabel ? groupLabel[r] : GlobalId(r), count[r], Index(r) });
      }
    }
    keptOf[t].swap(mine);
  }
  std::vector<FofKeptGroup> kept;
  for (const std::vector<FofKeptGroup>& k : keptOf)
    kept.insert(kept.end(), k.begin(), k.end());
  std::sort(kept.begin(), kept.end(), fofGroupBefore);

  if (groupId)
  {
    // Reuse the counts as root -> GroupId + 1 (0 = not kept).
#pragma omp parallel for num_threads(numThreads) schedule(static)
    for (long long i = 0; i < nn; ++i)
      c[i] = 0;
    for (std::size_t k = 0; k < kept.size(); ++k)
      c[kept[k].root] = Index(k + 1);
#pragma omp parallel for num_threads(numThreads) schedule(static)
    for (long long i = 0; i < nn; ++i)
      groupId[i] = GlobalId(c[groupRoot[i]]) - 1;
  }
  return kept.size();
}
} // namespace jz
