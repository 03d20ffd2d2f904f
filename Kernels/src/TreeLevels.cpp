#include "TreeLevels.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <omp.h>

#include "jz/HugePages.h"
#include "jz/ZOrder.h"

namespace jz
{
namespace
{
// left[i] / right[i]: the nearest gap before / after gap i (0 < i < n) with a
// strictly higher level; both end gaps are kLevelInfinite. Pointer jumping
// (linear overall) within one chunk per thread first: a gap whose search
// leaves its chunk points at the chunk's neighbour for now, which still only
// skips lower-or-equal levels, and its search goes on from there once every
// chunk is done (few gaps: the chunk's running maxima). The nearest higher
// gap is unique, so the result does not depend on the chunks.
void nearestHigher(const std::vector<int>& level, Index* L, Index* R)
{
  const long long n = (long long)level.size() - 1;
  const int* lv = level.data();
#pragma omp parallel if (n > 100000)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const long long b = 1 + (n - 1) * t / nt, e = 1 + (n - 1) * (t + 1) / nt;
    for (long long i = b; i < e; ++i)
    {
      long long j = i - 1;
      while (j >= b && lv[j] <= lv[i])
        j = L[j];
      L[i] = Index(j);
    }
    for (long long i = e - 1; i >= b; --i)
    {
      long long j = i + 1;
      while (j < e && lv[j] <= lv[i])
        j = R[j];
      R[i] = Index(j);
    }
#pragma omp barrier
    for (long long i = b; i < e && t > 0; ++i)
    {
      Index j = L[i];
      if (j >= Index(b))
        continue;
      while (lv[j] <= lv[i])
        j = __atomic_load_n(L + j, __ATOMIC_RELAXED);
      __atomic_store_n(L + i, j, __ATOMIC_RELAXED);
    }
    for (long long i = e - 1; i >= b && t + 1 < nt; --i)
    {
      Index j = R[i];
      if (j < Index(e))
        continue;
      while (lv[j] <= lv[i])
        j = __atomic_load_n(R + j, __ATOMIC_RELAXED);
      __atomic_store_n(R + i, j, __ATOMIC_RELAXED);
    }
  }
}

// The gaps at(0..count-1) that pass keep, in order: counted per thread's
// chunk, then written at the chunks' offsets.
template <class At, class Keep>
std::vector<Index> keptInOrder(std::size_t count, const At& at, const Keep& keep)
{
  std::vector<Index> out;
  if (count < 100000)
  {
    for (std::size_t k = 0; k < count; ++k)
      if (keep(at(k)))
        out.push_back(at(k));
    return out;
  }
  std::vector<std::size_t> offset;
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::size_t b = count * t / nt, e = count * (t + 1) / nt;
#pragma omp single
    offset.assign(std::size_t(nt) + 1, 0);
    std::size_t kept = 0;
    for (std::size_t k = b; k < e; ++k)
      kept += keep(at(k)) ? 1 : 0;
    offset[t + 1] = kept;
#pragma omp barrier
#pragma omp single
    {
      for (int u = 0; u < nt; ++u)
        offset[u + 1] += offset[u];
      out.resize(offset[nt]);
    }
    Index* o = out.data() + offset[t];
    for (std::size_t k = b; k < e; ++k)
      if (keep(at(k)))
        *o++ = at(k);
  }
  return out;
}
} // namespace

TreeLevels::TreeLevels(const std::vector<int>& gapLevel, const std::vector<Index>& queryPrefix,
  const TreeBuildOptions& options)
  : gapLevel_(gapLevel)
  , options_(options)
{
  const Index n = Index(gapLevel.size() - 1);
  // The cell around gap i spans the points between the nearest gaps on either
  // side with a strictly higher level.
  // cellCount_ holds the left ends first (no zero-filled scratch arrays:
  // fresh pages are expensive).
  assignOnHugePages(cellCount_, std::size_t(n) + 1, Index(0));
  Index* left = cellCount_.data();
  std::unique_ptr<Index[]> right = newHugeArray<Index>(std::size_t(n) + 1);
  nearestHigher(gapLevel, left, right.get());
#pragma omp parallel for schedule(static)
  for (long long i = 1; i < (long long)n; ++i)
  {
    const Index all = right[i] - left[i];
    if (queryPrefix.empty())
    {
      cellCount_[i] = all;
    }
    else
    {
      const Index q = queryPrefix[right[i]] - queryPrefix[left[i]];
      cellCount_[i] = std::max(q, all - q);
    }
  }
  cellCount_[0] = cellCount_[n] = n;
}

std::vector<int> TreeLevels::nodeLevels(const std::vector<Index>& splits) const
{
  const Index nodes = Index(splits.size() - 1);
  std::vector<int> levels(nodes);
#pragma omp parallel for schedule(static)
  for (long long j = 0; j < (long long)nodes; ++j)
  {
    int l = kLevelNone;
    for (Index g = splits[j] + 1; g < splits[j + 1]; ++g)
      l = std::max(l, gapLevel_[g]);
    levels[j] = l;
  }
  return levels;
}

int TreeLevels::regularizationLevel(
  const std::vector<Index>& splits, const std::vector<int>& levels, double quantile, double factor)
{
  const Index nodes = Index(levels.size());
  std::vector<Index> order(nodes);
  for (Index j = 0; j < nodes; ++j)
    order[j] = j;
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return levels[a] < levels[b]; });
  const double total = double(splits.back() - splits.front());
  // The smallest nodes that together hold `quantile` (90%) of the points.
  double counted = 0;
  Index last = 0;
  for (; last < nodes; ++last)
  {
    counted += double(splits[order[last] + 1] - splits[order[last]]);
    if (counted >= quantile * total)
      break;
  }
  if (last == nodes)
    last = nodes - 1;
  const int reference = levels[order[last]];
  if (reference == kLevelNone)
    return kLevelInfinite;
  // Point-weighted mean volume 2^level, relative to 2^reference to stay finite.
  double weighted = 0, weight = 0;
  for (Index i = 0; i <= last; ++i)
  {
    const Index j = order[i];
    const double c = double(splits[j + 1] - splits[j]);
    weight += c;
    if (levels[j] != kLevelNone)
      weighted += c * std::ldexp(1.0, levels[j] - reference);
  }
  const double meanLog2 = reference + std::log2(weighted / weight);
  return int(std::floor(meanLog2 + std::log2(factor)));
}

std::vector<PlaneSplits> TreeLevels::planes(int numPlanes) const
{
  const Index n = Index(gapLevel_.size() - 1);
  std::vector<PlaneSplits> result(numPlanes);
  std::vector<Index> candidates;
  double nmax = options_.leafSize;
  for (int p = 0; p < numPlanes; ++p, nmax *= options_.coarsening)
  {
    auto select = [&](int maxLevel)
    {
      auto keep = [&](Index g)
      { return isPlaneSplit(g, n, cellCount_[g], gapLevel_[g], nmax, maxLevel); };
      if (p == 0)
        return keptInOrder(
          std::size_t(n) + 1, [&](std::size_t g) { return Index(g); }, keep);
      return keptInOrder(
        candidates.size(), [&](std::size_t k) { return candidates[k]; }, keep);
    };
    PlaneSplits& plane = result[p];
    plane.splits = select(kLevelInfinite);
    plane.levels = nodeLevels(plane.splits);
    if (options_.regularize && n > 0)
    {
      const int maxLevel = regularizationLevel(
        plane.splits, plane.levels, options_.regularizationQuantile, options_.regularizationFactor);
      if (maxLevel != kLevelInfinite)
      {
        std::vector<Index> regular = select(maxLevel);
        if (regular.size() != plane.splits.size())
        {
          plane.splits.swap(regular);
          plane.levels = nodeLevels(plane.splits);
        }
      }
    }
    candidates = plane.splits;
  }
  return result;
}
} // namespace jz
