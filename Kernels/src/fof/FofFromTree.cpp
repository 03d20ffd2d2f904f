#include "jz/FofFromTree.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include <omp.h>

#include "fof/FofGroupOrder.h"
#include "fof/FofThreads.h"
#include "jz/HugePages.h"
#include "jz/UnionFind.h"

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
  std::iota(parent.begin(), parent.end(), Index(0));
  auto key = [&](Index i) { return ids ? ids[i] : GlobalId(i); };
  // The root is the member with the smallest global id.
  for (std::size_t e = 0; e < cut; ++e)
    uniteBySmallestKey(parent, tree.from[e], tree.to[e], key);
  if (out.wantRoot)
    out.groupRoot.resize(n);
  if (out.wantLabel)
    out.groupLabel.resize(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const Index r = findRoot(parent, Index(i));
    if (out.wantRoot)
      out.groupRoot[i] = r;
    if (out.wantLabel)
      out.groupLabel[i] = key(r);
  }
}

void buildFofTreeOrder(EmstEdges&& tree, std::size_t n, const GlobalId* ids, FofTreeOrder& out)
{
  const Index none = FofTreeOrder::noJoin;
  // Union-find whose roots hold their list's head and tail; join[i]: the
  // edge that appended the list starting at i.
  std::vector<Index> parent(n), head(n), tail(n), next(n, none), join(n, none);
  for (std::size_t i = 0; i < n; ++i)
    parent[i] = head[i] = tail[i] = Index(i);
  for (std::size_t e = 0; e < tree.size(); ++e)
  {
    // b's list is appended to a's: the root is the edge's first end's.
    const Index a = findRoot(parent, tree.from[e]), b = findRoot(parent, tree.to[e]);
    if (a == b)
      continue;
    next[tail[a]] = head[b];
    join[head[b]] = Index(e);
    tail[a] = tail[b];
    parent[b] = a;
  }
  std::vector<Index>().swap(tree.from);
  std::vector<Index>().swap(tree.to);
  out.weight2 = std::move(tree.weight2);
  out.order.resize(n);
  out.joinEdge.resize(n);
  out.idInOrder.resize(n);
  std::size_t k = 0;
  for (std::size_t r = 0; r < n; ++r)
  {
    if (parent[r] != Index(r))
      continue;
    for (Index i = head[r]; i != none; i = next[i], ++k)
    {
      out.order[k] = i;
      out.joinEdge[k] = join[i];
      out.idInOrder[k] = ids ? ids[i] : GlobalId(i);
    }
  }
}

namespace
{
constexpr std::size_t kAhead = 16;                // output writes prefetched this far ahead
constexpr std::uint64_t kStartMask = 0xffffffffu; // FofTreeOrder::runs: start | (GroupId + 1) << 32

struct KeptRun
{
  Index run, size; // run index in its thread's chunk, members
  GlobalId label;  // smallest global id of the run
  Index ref;       // its first member in input order with that id
};
} // namespace

std::size_t labelFofCut(FofTreeOrder& tree, double linkingLength, GlobalId minimumGroupSize,
  GlobalId* groupId, GlobalId* groupSize, std::vector<Index>* reference, const RunControl& control)
{
  const std::size_t n = tree.order.size();
  if (n == 0)
    return 0;
  const double l2 = linkingLength * linkingLength;
  const Index cut =
    Index(std::upper_bound(tree.weight2.begin(), tree.weight2.end(), l2) - tree.weight2.begin());
  const Index* order = tree.order.data();
  const Index* joinEdge = tree.joinEdge.data();
  const GlobalId* id = tree.idInOrder.data();
  if (tree.runs.size() != n)
    resizeHugePages(tree.runs, n);
  std::uint64_t* runs = tree.runs.data();
  // A run starts at k where order[k] did not join order[k-1] below the cut
  // (joinEdge[0] is noJoin). Branch-free tests: runs are short and their
  // ends unpredictable.
  auto starts = [&](std::size_t k) { return std::size_t(joinEdge[k] >= cut); };
  const int numThreads = fofThreads(control, n);
  // Each thread's chunk of the order, moved forward to a run start; its runs'
  // starts are stored from runs[bound[t]] on (there are fewer than members).
  std::vector<std::size_t> bound(numThreads + 1, n), numRuns(numThreads, 0);
  for (int t = 0; t < numThreads; ++t)
  {
    std::size_t k = n * std::size_t(t) / std::size_t(numThreads);
    while (k < n && !starts(k))
      ++k;
    bound[t] = k;
  }
  std::vector<std::vector<KeptRun>> keptOf(numThreads);
#pragma omp parallel num_threads(numThreads)
  {
    const int t = omp_get_thread_num();
    const std::size_t lo = bound[t], hi = bound[t + 1];
    std::uint64_t* mine = runs + lo;
    std::size_t m = 0;
    for (std::size_t k = lo; k < hi; ++k)
    {
      mine[m] = k;
      m += starts(k);
    }
    numRuns[t] = m;
    std::vector<KeptRun> kept;
    for (std::size_t r = 0; r < m; ++r)
    {
      const std::size_t k = std::size_t(mine[r]), end = r + 1 < m ? std::size_t(mine[r + 1]) : hi;
      if (GlobalId(end - k) < minimumGroupSize)
        continue;
      KeptRun run{ Index(r), Index(end - k), id[k], order[k] };
      for (std::size_t j = k + 1; j < end; ++j)
        if (id[j] < run.label || (id[j] == run.label && order[j] < run.ref))
        {
          run.label = id[j];
          run.ref = order[j];
        }
      kept.push_back(run);
    }
    keptOf[t].swap(kept);
  }
  // The kept runs numbered by the groups' one order (FofGroupOrder.h).
  std::vector<std::pair<int, Index>> all; // (thread, index in keptOf[thread])
  for (int t = 0; t < numThreads; ++t)
    for (std::size_t i = 0; i < keptOf[t].size(); ++i)
      all.emplace_back(t, Index(i));
  std::sort(all.begin(), all.end(),
    [&](const std::pair<int, Index>& a, const std::pair<int, Index>& b)
    {
      const KeptRun &x = keptOf[a.first][a.second], &y = keptOf[b.first][b.second];
      return fofGroupBefore({ x.label, x.size, x.ref }, { y.label, y.size, y.ref });
    });
  const std::size_t G = all.size();
  if (reference)
    reference->resize(G);
  for (std::size_t g = 0; g < G; ++g)
  {
    const KeptRun& run = keptOf[all[g].first][all[g].second];
    runs[bound[all[g].first] + run.run] |= std::uint64_t(g + 1) << 32;
    if (reference)
      (*reference)[g] = run.ref;
  }
  if (groupId || groupSize)
  {
#pragma omp parallel num_threads(numThreads)
    {
      const int t = omp_get_thread_num();
      const std::size_t lo = bound[t], hi = bound[t + 1], m = numRuns[t];
      const std::uint64_t* mine = runs + lo;
      std::size_t r = std::size_t(-1);
      for (std::size_t k = lo; k < hi; ++k)
      {
        r += starts(k);
        const std::uint64_t v = mine[r];
        const std::size_t end = r + 1 < m ? std::size_t(mine[r + 1] & kStartMask) : hi;
        const GlobalId size = GlobalId(end - std::size_t(v & kStartMask));
        const GlobalId g = GlobalId(v >> 32) - 1;
        // The writes scatter over the outputs: their lines are asked for
        // kAhead positions early so that many misses overlap.
        const Index ahead = order[std::min(k + kAhead, n - 1)];
        if (groupId)
        {
          __builtin_prefetch(groupId + ahead, 1);
          groupId[order[k]] = g;
        }
        if (groupSize)
        {
          __builtin_prefetch(groupSize + ahead, 1);
          groupSize[order[k]] = size;
        }
      }
    }
  }
  return G;
}
} // namespace jz
