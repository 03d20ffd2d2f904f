#include "jz/FofFromTree.h"

#include <algorithm>
#include <vector>

#include <omp.h>

#include "FofThreads.h"

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

void buildFofTreeOrder(EmstEdges&& tree, std::size_t n, const GlobalId* ids, FofTreeOrder& out)
{
  const Index none = FofTreeOrder::noJoin;
  // Union-find whose roots hold their list's head and tail; join[i]: the
  // edge that appended the list starting at i.
  std::vector<Index> parent(n), head(n), tail(n), next(n, none), join(n, none);
  for (std::size_t i = 0; i < n; ++i)
    parent[i] = head[i] = tail[i] = Index(i);
  auto find = [&](Index x)
  {
    while (parent[x] != x)
    {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  for (std::size_t e = 0; e < tree.size(); ++e)
  {
    const Index a = find(tree.from[e]), b = find(tree.to[e]);
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
struct KeptRun
{
  Index start, size;
  GlobalId label; // smallest global id of the run
  Index ref;      // its first member in input order with that id
};
} // namespace

std::size_t labelFofCut(const FofTreeOrder& tree, double linkingLength, GlobalId minimumGroupSize,
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
  // A run starts at k where order[k] did not join order[k-1] below the cut.
  auto startsRun = [&](std::size_t k) { return k == 0 || joinEdge[k] >= cut; };
  const int numThreads = fofThreads(control, n);
  // Each thread's chunk of the order, moved forward to a run start.
  std::vector<std::size_t> bound(numThreads + 1, n);
  for (int t = 0; t < numThreads; ++t)
  {
    std::size_t k = n * std::size_t(t) / std::size_t(numThreads);
    while (k < n && !startsRun(k))
      ++k;
    bound[t] = k;
  }
  std::vector<std::vector<KeptRun>> keptOf(numThreads);
  auto runEnd = [&](std::size_t k)
  {
    ++k;
    while (k < n && !startsRun(k))
      ++k;
    return k;
  };
#pragma omp parallel num_threads(numThreads)
  {
    const int t = omp_get_thread_num();
    std::vector<KeptRun> mine;
    for (std::size_t k = bound[t]; k < bound[t + 1];)
    {
      const std::size_t end = runEnd(k);
      if (GlobalId(end - k) >= minimumGroupSize)
      {
        KeptRun run{ Index(k), Index(end - k), id[k], order[k] };
        for (std::size_t j = k + 1; j < end; ++j)
          if (id[j] < run.label || (id[j] == run.label && order[j] < run.ref))
          {
            run.label = id[j];
            run.ref = order[j];
          }
        mine.push_back(run);
      }
      k = end;
    }
    keptOf[t].swap(mine);
  }
  // Kept runs in order of the order (per thread's chunk), then numbered.
  std::vector<std::size_t> firstKept(numThreads + 1, 0);
  for (int t = 0; t < numThreads; ++t)
    firstKept[t + 1] = firstKept[t] + keptOf[t].size();
  const std::size_t G = firstKept[numThreads];
  std::vector<KeptRun> kept;
  kept.reserve(G);
  for (const std::vector<KeptRun>& k : keptOf)
    kept.insert(kept.end(), k.begin(), k.end());
  std::vector<Index> rank(G);
  for (std::size_t g = 0; g < G; ++g)
    rank[g] = Index(g);
  std::sort(rank.begin(), rank.end(),
    [&](Index a, Index b)
    {
      const KeptRun &x = kept[a], &y = kept[b];
      if (x.size != y.size)
        return x.size > y.size;
      if (x.label != y.label)
        return x.label < y.label;
      return x.ref < y.ref;
    });
  std::vector<GlobalId> gid(G);
  if (reference)
    reference->resize(G);
  for (std::size_t g = 0; g < G; ++g)
  {
    gid[rank[g]] = GlobalId(g);
    if (reference)
      (*reference)[g] = kept[rank[g]].ref;
  }
  if (groupId || groupSize)
  {
#pragma omp parallel num_threads(numThreads)
    {
      const int t = omp_get_thread_num();
      std::size_t next = firstKept[t];
      for (std::size_t k = bound[t]; k < bound[t + 1];)
      {
        const std::size_t end = runEnd(k);
        const GlobalId size = GlobalId(end - k);
        const GlobalId g = size >= minimumGroupSize ? gid[next++] : GlobalId(-1);
        for (std::size_t j = k; j < end; ++j)
        {
          if (groupId)
            groupId[order[j]] = g;
          if (groupSize)
            groupSize[order[j]] = size;
        }
        k = end;
      }
    }
  }
  return G;
}
} // namespace jz
