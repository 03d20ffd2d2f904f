// Bottom-up construction of the z-order plane tree on the CPU (§II-A..§II-E).
// The passes over the points, in order:
//  1. finiteness (jz/Validate.h): blocks of values tested by their exponent
//     bits, branch-free;
//  2. z-order sort (zSortOrder, ZSortCpu.h): one 64-bit word per point (the
//     top bits of the interleaved fixed-point prefix, then the point's
//     index; the largest binary exponent, which scales the prefix, is
//     guessed from a sample of 4096 points and checked by the same pass), an
//     LSD radix sort over the varying key bits only, then each run of equal
//     prefixes ordered by the exact comparator zLess: the order is the
//     comparator's at full precision;
//  3. gather and gap levels: the sorted coordinates (wrapped into the
//     periodic box) and, in the same pass, the Morton level of every gap
//     between consecutive points (mortonLevel);
//  4. cell counts (TreeLevels): for every gap the nearest gap on either side
//     with a strictly higher level, by one stack sweep per thread's chunk
//     each way;
//  5. planes: the split gaps of each plane (isPlaneSplit, with the
//     regularization of §II-D), node levels and boxes bottom-up.
// Per-thread state that changes in hot loops lives on cache lines of its
// own (shared lines made the cell counts as slow on two threads as on one).
// The large fresh arrays are not zero-filled where the type allows
// (newHugeArray): the team touches their pages first, on huge pages. With a
// RunInfo the stages 2-5 are timed ("tree: z-order sort", "tree: gather",
// "tree: cell counts", "tree: planes").
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>

#include <omp.h>

#include "common/Progress.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"
#include "jz/Tree.h"
#include "jz/Validate.h"
#include "jz/ZOrder.h"
#include "tree/TreeLevels.h"
#include "tree/ZSortCpu.h"

namespace jz
{
namespace
{
// Rejects non-finite coordinates, naming the first offending point (the
// rule of jz/Validate.h).
template <class T>
void checkFinite(const T* xyz, Index n, const char* what)
{
  const std::string error = nonFiniteCoordinateError(xyz, n, std::string(what) + " point");
  if (!error.empty())
    throw Error(error);
}

} // namespace

int numberOfPlanes(std::size_t n, const TreeBuildOptions& options)
{
  int planes = 1;
  double nmax = options.leafSize;
  while (double(n) / (0.5 * nmax) >= options.topNodesTarget && planes < 24)
  {
    nmax *= options.coarsening;
    ++planes;
  }
  return planes;
}

template <class T>
void buildTreeCpu(const T* sources, Index numSources, const T* queries, Index numQueries,
  const Periodicity& periodicity, const double* boxLo, const TreeBuildOptions& options,
  ZTree<T>& tree, const RunControl& control, RunInfo* info)
{
  tree = ZTree<T>();
  tree.periodicity = periodicity;
  tree.selfQuery = (queries == nullptr);
  if (tree.selfQuery)
    numQueries = 0;
  const std::size_t total = std::size_t(numSources) + numQueries;
  if (total >= std::size_t(0xFFFFFFFFu))
  {
    throw Error("too many points for one process: " + std::to_string(total));
  }
  const Index n = Index(total);

  // 1. z-order sort of all points jointly (section II-E), as an order of
  // joint indices over the caller's arrays: no copy of the coordinates.
  checkFinite(sources, numSources, "source");
  if (!tree.selfQuery)
    checkFinite(queries, numQueries, "query");
  JointPoints<T> points{ sources, numSources, tree.selfQuery ? nullptr : queries, numQueries,
    periodicity, { boxLo[0], boxLo[1], boxLo[2] } };
  if (!periodicity.enabled())
    points.boxLo[0] = points.boxLo[1] = points.boxLo[2] = 0;
  reportProgress(control, 0.02);
  StageTimer sortTimer(info, "tree: z-order sort");
  std::vector<Index> order = zSortOrder(points);
  sortTimer.stop();
  reportProgress(control, 0.5);
  StageTimer gatherTimer(info, "tree: gather");

  // 2. Separate the types again, keeping z-order (section II-E), as sorted
  // coordinate arrays.
  auto scatter = [&](SortedPoints<T>& out, bool wantQueries, Index count)
  {
    assignOnHugePages(out.x, count + kSimdPadding, T(0));
    assignOnHugePages(out.y, count + kSimdPadding, T(0));
    assignOnHugePages(out.z, count + kSimdPadding, T(0));
    out.inputIndex.resize(count);
    Index k = 0;
    for (Index i = 0; i < n; ++i)
    {
      const Index id = order[i];
      const bool isQuery = id >= numSources;
      if (isQuery != wantQueries)
        continue;
      T p[kDim];
      points.get(id, p);
      out.x[k] = p[0];
      out.y[k] = p[1];
      out.z[k] = p[2];
      out.inputIndex[k] = isQuery ? id - numSources : id;
      ++k;
    }
  };
  // 3. (with the gather when there is one point type) the Morton level of
  // every gap between consecutive points. Not zero-filled: every entry is
  // written below, by the team.
  std::unique_ptr<int[]> gapLevel = newHugeArray<int>(std::size_t(n) + 1);
  gapLevel[0] = kLevelInfinite;
  gapLevel[n] = kLevelInfinite;
  std::vector<Index> queryPrefix;
  if (tree.selfQuery)
  {
    // Single type: a parallel gather, each thread's chunk also leveling its
    // gaps from the point before.
    SortedPoints<T>& s = tree.sources;
    assignOnHugePages(s.x, n + kSimdPadding, T(0));
    assignOnHugePages(s.y, n + kSimdPadding, T(0));
    assignOnHugePages(s.z, n + kSimdPadding, T(0));
    s.inputIndex.swap(order);
    const Index* sorted = s.inputIndex.data();
    // The reads follow the input order, not the sorted one: fetch ahead.
    constexpr long long kAhead = 16;
#pragma omp parallel
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const long long b = (long long)n * t / nt, e = (long long)n * (t + 1) / nt;
      T prev[kDim];
      if (b > 0 && b < e)
        points.get(sorted[b - 1], prev);
      for (long long i = b; i < e; ++i)
      {
        if (i + kAhead < (long long)n)
          __builtin_prefetch(sources + 3 * std::size_t(sorted[i + kAhead]));
        T p[kDim];
        points.get(sorted[i], p);
        s.x[i] = p[0];
        s.y[i] = p[1];
        s.z[i] = p[2];
        if (i > 0)
          gapLevel[i] = mortonLevel(prev, p);
        prev[0] = p[0];
        prev[1] = p[1];
        prev[2] = p[2];
      }
    }
  }
  else
  {
    queryPrefix.resize(std::size_t(n) + 1);
    queryPrefix[0] = 0;
    for (Index i = 0; i < n; ++i)
      queryPrefix[i + 1] = queryPrefix[i] + (order[i] >= numSources ? 1 : 0);
    scatter(tree.sources, false, numSources);
    scatter(tree.queries, true, numQueries);
#pragma omp parallel for schedule(static)
    for (long long i = 1; i < (long long)n; ++i)
    {
      T a[kDim], b[kDim];
      points.get(order[i - 1], a);
      points.get(order[i], b);
      gapLevel[i] = mortonLevel(a, b);
    }
  }
  std::vector<Index>().swap(order);
  gatherTimer.stop();
  reportProgress(control, 0.6);

  // 4. Split points of every plane, then the planes themselves.
  StageTimer countTimer(info, "tree: cell counts");
  TreeLevels levels(gapLevel.get(), n, queryPrefix, options);
  countTimer.stop();
  StageTimer planeTimer(info, "tree: planes");
  const int numPlanes = numberOfPlanes(std::max<std::size_t>(numSources, numQueries), options);
  std::vector<PlaneSplits> splits = levels.planes(numPlanes);

  tree.planes.resize(numPlanes);
  for (int p = 0; p < numPlanes; ++p)
  {
    TreePlane<T>& plane = tree.planes[p];
    const std::vector<Index>& spl = splits[p].splits;
    const Index nodes = Index(spl.size() - 1);
    plane.sourceSplit.resize(nodes + 1);
    plane.querySplit.resize(nodes + 1);
    for (Index j = 0; j <= nodes; ++j)
    {
      const Index q = tree.selfQuery ? 0 : queryPrefix[spl[j]];
      plane.querySplit[j] = q;
      plane.sourceSplit[j] = spl[j] - q;
    }
    if (tree.selfQuery)
      plane.querySplit = plane.sourceSplit;
    plane.level = splits[p].levels;
    plane.sourceBox.resize(nodes);
    if (!tree.selfQuery)
      plane.queryBox.resize(nodes);

    if (p == 0)
    {
#pragma omp parallel for schedule(static)
      for (long long j = 0; j < (long long)nodes; ++j)
      {
        auto boxOf = [](const SortedPoints<T>& pts, Index b, Index e)
        {
          Box<T> box;
          boxSetEmpty(box);
          for (Index i = b; i < e; ++i)
          {
            const T pt[3] = { pts.x[i], pts.y[i], pts.z[i] };
            boxExtend(box, pt);
          }
          return box;
        };
        plane.sourceBox[j] = boxOf(tree.sources, plane.sourceSplit[j], plane.sourceSplit[j + 1]);
        if (!tree.selfQuery)
        {
          plane.queryBox[j] = boxOf(tree.queries, plane.querySplit[j], plane.querySplit[j + 1]);
        }
      }
    }
    else
    {
      // Children are the finer plane's nodes between this plane's splits.
      const std::vector<Index>& fine = splits[p - 1].splits;
      plane.childSplit.resize(nodes + 1);
      Index c = 0;
      for (Index j = 0; j <= nodes; ++j)
      {
        while (fine[c] != spl[j])
          ++c;
        plane.childSplit[j] = c;
      }
      const TreePlane<T>& below = tree.planes[p - 1];
#pragma omp parallel for schedule(static)
      for (long long j = 0; j < (long long)nodes; ++j)
      {
        Box<T> sb, qb;
        boxSetEmpty(sb);
        boxSetEmpty(qb);
        for (Index ch = plane.childSplit[j]; ch < plane.childSplit[j + 1]; ++ch)
        {
          boxMerge(sb, below.sourceBox[ch]);
          if (!tree.selfQuery)
            boxMerge(qb, below.queryBox[ch]);
        }
        plane.sourceBox[j] = sb;
        if (!tree.selfQuery)
          plane.queryBox[j] = qb;
      }
    }
  }
  planeTimer.stop();
  reportProgress(control, 1.0);
}

template void buildTreeCpu<float>(const float*, Index, const float*, Index, const Periodicity&,
  const double*, const TreeBuildOptions&, ZTree<float>&, const RunControl&, RunInfo*);
template void buildTreeCpu<double>(const double*, Index, const double*, Index, const Periodicity&,
  const double*, const TreeBuildOptions&, ZTree<double>&, const RunControl&, RunInfo*);
} // namespace jz
