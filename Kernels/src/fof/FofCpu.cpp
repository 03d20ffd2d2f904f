// Friends-of-friends on the CPU (§IV-A), multi-threaded with
// OpenMP: the walk engine (walk/DualWalk.h) with the FoF node policy
// (FofNodePolicy.h) from the super nodes down to the leaves, then the kept
// leaf pairs point by point (FofLeafLinks.h): first every unlinked leaf with
// itself (private to one thread), then the leaf pairs with the
// compare-and-swap union. A final contraction makes every point point at its
// group's root, the group's smallest sorted index.
//
// Unlike kNN's, FoF's leaf list is stored whole: the self pass must finish
// for every leaf before any pair touches its points, since it links them
// without atomics and tells the pair pass which leaves are one group.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <omp.h>

#include "common/AtomicMin.h"
#include "common/Progress.h"
#include "fof/FofBackends.h"
#include "fof/FofContraction.h"
#include "fof/FofLeafLinks.h"
#include "fof/FofNodePolicy.h"
#include "fof/FofThreads.h"
#include "jz/FofLinking.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"
#include "jz/Tree.h"
#include "walk/DualWalk.h"

namespace jz
{
namespace
{
// The point phase over the leaves' list (receiver a, sources b >= a).
template <class T>
class FofPointPhase
{
public:
  FofPointPhase(const ZTree<T>& tree, const InteractionList& leafPairs, FofPlaneGroups& groups,
    double linkingLength, int numThreads)
    : tree_(tree)
    , pairs_(leafPairs)
    , groups_(groups)
    , links_(tree, linkingLength)
    , nt_(numThreads)
  {
  }

  // Fills pointGroup (sorted order) with each point's root.
  void run(std::unique_ptr<Index[]>& pointGroup, RunInfo& info, const RunControl& control)
  {
    info.counters.push_back({ "fof leaf pairs", double(pairs_.size()) });
    Index* g = nullptr;
    {
      StageTimer timer(&info, "fof leaf self");
      initPoints(pointGroup);
      g = pointGroup.get();
      const std::vector<Index> selfLeaves = unlinkedSelfLeaves();
      info.counters.push_back({ "fof leaf self pairs", double(selfLeaves.size()) });
      linkWithinLeaves(selfLeaves, g);
    }
    reportProgress(control, 0.6);
    {
      StageTimer timer(&info, "fof leaf cross");
      info.counters.push_back({ "fof leaf cross pairs", double(linkBetweenLeaves(g)) });
    }
    reportProgress(control, 0.85);
    StageTimer timer(&info, "fof contraction");
    contractGroups(g, tree_.sources.size(), nt_);
  }

private:
  // ParentToNode from the leaves: points of a linked leaf point at the first
  // point of the leaf's root, the others at themselves.
  void initPoints(std::unique_ptr<Index[]>& pointGroup) const
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    // Not zero-filled: every entry is written below, by the team.
    pointGroup = newHugeArray<Index>(tree_.sources.size());
    Index* g = pointGroup.get();
#pragma omp parallel for num_threads(nt_) schedule(static)
    for (long long i = 0; i < (long long)leaves.numNodes(); ++i)
    {
      const bool linked = groups_.linked[i];
      const Index r = linked ? leaves.sourceSplit[groups_.grp[i]] : 0;
      for (Index k = leaves.sourceSplit[i]; k < leaves.sourceSplit[i + 1]; ++k)
        g[k] = linked ? r : k;
    }
  }

  // Leaves whose self pair was kept and that no link has made one group.
  std::vector<Index> unlinkedSelfLeaves() const
  {
    std::vector<Index> self;
    for (Index a = 0; a < pairs_.numReceivers(); ++a)
    {
      const InteractionList::Entries entries = pairs_.of(a);
      for (std::size_t e = 0; e < entries.count; ++e)
        if (entries.source[e] == a && !groups_.linked[a])
          self.push_back(a);
    }
    return self;
  }

  // "linked" becomes "connected": all points of the leaf are in one group.
  void linkWithinLeaves(const std::vector<Index>& selfLeaves, Index* g)
  {
    std::vector<std::uint8_t>& connected = groups_.linked;
    const long long numSelf = (long long)selfLeaves.size();
#pragma omp parallel num_threads(nt_)
    {
      FofLocalPoints lp;
#pragma omp for schedule(dynamic, 8)
      for (long long k = 0; k < numSelf; ++k)
        if (links_.linkWithin(selfLeaves[k], g, lp))
          connected[selfLeaves[k]] = 1;
    }
  }

  // Every pair of distinct leaves the last contraction left undecided;
  // returns how many.
  std::size_t linkBetweenLeaves(Index* g) const
  {
    const std::vector<std::uint8_t>& connected = groups_.linked;
    const std::vector<Index>& grp = groups_.grp;
    const long long numLeaves = (long long)pairs_.numReceivers();
    std::size_t count = 0;
#pragma omp parallel num_threads(nt_) reduction(+ : count)
    {
      FofLocalPoints candA, candB;
#pragma omp for schedule(dynamic, 16)
      for (long long a = 0; a < numLeaves; ++a)
      {
        const InteractionList::Entries entries = pairs_.of(Index(a));
        for (std::size_t e = 0; e < entries.count; ++e)
        {
          const Index b = entries.source[e];
          if (b == Index(a) || (connected[a] && connected[b] && grp[a] == grp[b]))
            continue;
          ++count;
          links_.linkBetween(Index(a), b, connected, g, candA, candB);
        }
      }
    }
    return count;
  }

  const ZTree<T>& tree_;
  const InteractionList& pairs_;
  FofPlaneGroups& groups_;
  FofLeafLinks<T> links_;
  int nt_;
};

// The node walk down to the leaves, then the point phase.
template <class T>
void fofWalk(const ZTree<T>& tree, double linkingLength, int numThreads,
  std::unique_ptr<Index[]>& pointGroup, RunInfo& info, const RunControl& control)
{
  const int top = int(tree.planes.size()) - 1;
  using Policy = FofNodePolicy<T>;
  Policy policy(tree, linkingLength, numThreads,
    [&control, top](int p) { reportProgress(control, 0.1 + 0.4 * double(top - p) / (top + 1)); });
  DualWalk<T, Policy> walk(tree, policy, numThreads, &info);
  StageTimer nodeTimer(&info, "fof node walk");
  const auto leaves = walk.walkDownTo(0);
  nodeTimer.stop();
  FofPointPhase<T> points(tree, leaves.list, policy.groups(), linkingLength, numThreads);
  points.run(pointGroup, info, control);
}

// The outputs in input order: each point's root (input index) and its
// group's smallest id, from the sorted-order roots g.
template <class T>
void writeFofGroups(const FofProblem<T>& problem, const std::vector<Index>& inputIndex,
  const Index* g, FofGroups& out, int numThreads)
{
  const Index n = Index(problem.numPoints);
  const Index* input = inputIndex.data();
  const GlobalId* ids = problem.ids;
  // Only the roots' entries are written and read: not zero-filled, so its
  // fresh pages are first touched by the team, not by a serial memset.
  std::unique_ptr<GlobalId[]> minId;
  if (out.wantLabel)
  {
    // The smallest id per root, in sorted order (members sit near their
    // root there, so the atomic minima stay in cache).
    minId = newHugeArray<GlobalId>(n);
    GlobalId* m = minId.get();
#pragma omp parallel num_threads(numThreads)
    {
#pragma omp for schedule(static)
      for (long long k = 0; k < (long long)n; ++k)
        if (g[k] == Index(k))
          m[k] = ids ? ids[input[k]] : GlobalId(input[k]);
#pragma omp for schedule(static)
      for (long long k = 0; k < (long long)n; ++k)
        if (g[k] != Index(k))
          atomicMin(m + g[k], ids ? ids[input[k]] : GlobalId(input[k]));
    }
  }
  // One scatter pass into input order.
  if (out.wantRoot)
    assignOnHugePages(out.groupRoot, n, Index(0));
  if (out.wantLabel)
    assignOnHugePages(out.groupLabel, n, GlobalId(0));
  Index* root = out.wantRoot ? out.groupRoot.data() : nullptr;
  GlobalId* label = out.wantLabel ? out.groupLabel.data() : nullptr;
  const GlobalId* m = minId.get();
#pragma omp parallel for num_threads(numThreads) schedule(static)
  for (long long k = 0; k < (long long)n; ++k)
  {
    const Index i = input[k];
    const Index r = g[k];
    if (root)
      root[i] = input[r];
    if (label)
      label[i] = m[r];
  }
}
} // namespace

template <class T>
void fofCpu(const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control)
{
  const int numThreads = fofThreads(control, problem.numPoints);
  const Index n = Index(problem.numPoints);
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  ZTree<T> tree;
  {
    StageTimer timer(&info, "tree build");
    RunControl treeControl = control;
    treeControl.progress = progressSpan(control, 0, 0.1);
    // The tree build runs on OpenMP's default team: give it the caller's count.
    const int saved = omp_get_max_threads();
    omp_set_num_threads(numThreads);
    try
    {
      buildTreeCpu<T>(problem.points, n, nullptr, 0, per, problem.boxLo, TreeBuildOptions(), tree,
        treeControl, &info);
    }
    catch (...)
    {
      omp_set_num_threads(saved);
      throw;
    }
    omp_set_num_threads(saved);
  }

  std::unique_ptr<Index[]> group;
  {
    StageTimer timer(&info, "fof walk");
    fofWalk(tree, problem.linkingLength, numThreads, group, info, control);
  }

  StageTimer timer(&info, "fof output");
  // Only the input order is needed from here on: free the coordinates and
  // planes before the outputs are allocated.
  std::vector<TreePlane<T>>().swap(tree.planes);
  std::vector<T>().swap(tree.sources.x);
  std::vector<T>().swap(tree.sources.y);
  std::vector<T>().swap(tree.sources.z);
  writeFofGroups(problem, tree.sources.inputIndex, group.get(), out, numThreads);
  timer.stop();
  reportProgress(control, 1.0);
}

template <class T>
void fofCpuOnTree(const ZTree<T>& tree, const FofProblem<T>& problem, FofGroups& out, RunInfo& info,
  const RunControl& control)
{
  const int numThreads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  std::unique_ptr<Index[]> group;
  {
    StageTimer timer(&info, "fof walk");
    fofWalk(tree, problem.linkingLength, numThreads, group, info, control);
  }
  StageTimer timer(&info, "fof output");
  writeFofGroups(problem, tree.sources.inputIndex, group.get(), out, numThreads);
}

template void fofCpu<float>(const FofProblem<float>&, FofGroups&, RunInfo&, const RunControl&);
template void fofCpuOnTree<float>(
  const ZTree<float>&, const FofProblem<float>&, FofGroups&, RunInfo&, const RunControl&);
template void fofCpuOnTree<double>(
  const ZTree<double>&, const FofProblem<double>&, FofGroups&, RunInfo&, const RunControl&);
template void fofCpu<double>(const FofProblem<double>&, FofGroups&, RunInfo&, const RunControl&);
} // namespace jz
