// Bottom-up construction of the z-order plane tree on the CPU (paper II-A..II-E).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <omp.h>

#include "jz/Tree.h"
#include "jz/ZOrder.h"
#include "../TreeLevels.h"
#include "ZSortCpu.h"

namespace jz
{
namespace
{
template <class T>
T wrapCoordinate(T x, double lo, double length)
{
  double w = double(x) - length * std::floor((double(x) - lo) / length);
  T t = T(w);
  if (double(t) >= lo + length || double(t) < lo) t = T(lo);
  return t;
}

// Copies the input into sort records, wrapping into the periodic box and
// rejecting non-finite coordinates.
template <class T>
void fillRecords(const T* xyz, Index n, Index idOffset, const Periodicity& per, const double* boxLo,
  const char* what, Record<T>* out)
{
  long long firstBad = (long long)n;
#pragma omp parallel for schedule(static) reduction(min : firstBad)
  for (long long i = 0; i < (long long)n; ++i)
  {
    Record<T>& r = out[i];
    for (int d = 0; d < kDim; ++d)
    {
      T x = xyz[3 * i + d];
      if (!std::isfinite(x))
      {
        firstBad = std::min(firstBad, i);
        x = T(0);
      }
      else if (per.enabled())
      {
        x = wrapCoordinate(x, boxLo[d], per.length[d]);
      }
      r.p[d] = x + T(0); // -0 -> +0
    }
    r.id = idOffset + Index(i);
  }
  if (firstBad < (long long)n)
  {
    throw Error(std::string(what) + " point " + std::to_string(firstBad) +
      " has a non-finite coordinate (NaN or infinity)");
  }
}

void reportProgress(const RunControl& control, double fraction)
{
  if (control.progress && !control.progress(fraction)) throw Aborted();
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
  ZTree<T>& tree, const RunControl& control)
{
  tree = ZTree<T>();
  tree.periodicity = periodicity;
  tree.selfQuery = (queries == nullptr);
  if (tree.selfQuery) numQueries = 0;
  const std::size_t total = std::size_t(numSources) + numQueries;
  if (total >= std::size_t(0xFFFFFFFFu))
  {
    throw Error("too many points for one process: " + std::to_string(total));
  }
  const Index n = Index(total);

  // 1. z-order sort of all points jointly (section II-E).
  std::vector<Record<T>> records(n);
  fillRecords(sources, numSources, 0, periodicity, boxLo, "source", records.data());
  if (!tree.selfQuery)
  {
    fillRecords(queries, numQueries, numSources, periodicity, boxLo, "query",
      records.data() + numSources);
  }
  reportProgress(control, 0.02);
  zSortCpu(records);
  reportProgress(control, 0.5);

  // 2. Morton level of every gap, and the per-type prefix counts.
  std::vector<int> gapLevel(std::size_t(n) + 1);
  gapLevel[0] = kLevelInfinite;
  gapLevel[n] = kLevelInfinite;
#pragma omp parallel for schedule(static)
  for (long long i = 1; i < (long long)n; ++i)
  {
    gapLevel[i] = mortonLevel(records[i - 1].p, records[i].p);
  }
  std::vector<Index> queryPrefix;
  if (!tree.selfQuery)
  {
    queryPrefix.resize(std::size_t(n) + 1);
    queryPrefix[0] = 0;
    for (Index i = 0; i < n; ++i)
    {
      queryPrefix[i + 1] = queryPrefix[i] + (records[i].id >= numSources ? 1 : 0);
    }
  }

  // 3. Separate the types again, keeping z-order (section II-E).
  auto scatter = [&](SortedPoints<T>& out, bool wantQueries, Index count) {
    out.x.resize(count + kSimdPadding);
    out.y.resize(count + kSimdPadding);
    out.z.resize(count + kSimdPadding);
    out.inputIndex.resize(count);
    Index k = 0;
    for (Index i = 0; i < n; ++i)
    {
      const Record<T>& r = records[i];
      const bool isQuery = r.id >= numSources;
      if (isQuery != wantQueries) continue;
      out.x[k] = r.p[0];
      out.y[k] = r.p[1];
      out.z[k] = r.p[2];
      out.inputIndex[k] = isQuery ? r.id - numSources : r.id;
      ++k;
    }
  };
  if (tree.selfQuery)
  {
    // Single type: a parallel copy.
    SortedPoints<T>& s = tree.sources;
    s.x.resize(n + kSimdPadding);
    s.y.resize(n + kSimdPadding);
    s.z.resize(n + kSimdPadding);
    s.inputIndex.resize(n);
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; ++i)
    {
      s.x[i] = records[i].p[0];
      s.y[i] = records[i].p[1];
      s.z[i] = records[i].p[2];
      s.inputIndex[i] = records[i].id;
    }
  }
  else
  {
    scatter(tree.sources, false, numSources);
    scatter(tree.queries, true, numQueries);
  }
  std::vector<Record<T>>().swap(records);
  reportProgress(control, 0.6);

  // 4. Split points of every plane, then the planes themselves.
  TreeLevels levels(gapLevel, queryPrefix, options);
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
    if (tree.selfQuery) plane.querySplit = plane.sourceSplit;
    plane.level = splits[p].levels;
    plane.sourceBox.resize(nodes);
    if (!tree.selfQuery) plane.queryBox.resize(nodes);

    if (p == 0)
    {
#pragma omp parallel for schedule(static)
      for (long long j = 0; j < (long long)nodes; ++j)
      {
        auto boxOf = [](const SortedPoints<T>& pts, Index b, Index e) {
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
        while (fine[c] != spl[j]) ++c;
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
          if (!tree.selfQuery) boxMerge(qb, below.queryBox[ch]);
        }
        plane.sourceBox[j] = sb;
        if (!tree.selfQuery) plane.queryBox[j] = qb;
      }
    }
  }
  reportProgress(control, 1.0);
}

template void buildTreeCpu<float>(const float*, Index, const float*, Index, const Periodicity&,
  const double*, const TreeBuildOptions&, ZTree<float>&, const RunControl&);
template void buildTreeCpu<double>(const double*, Index, const double*, Index, const Periodicity&,
  const double*, const TreeBuildOptions&, ZTree<double>&, const RunControl&);
} // namespace jz
