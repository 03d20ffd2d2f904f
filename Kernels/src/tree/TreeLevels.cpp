#include "tree/TreeLevels.h"

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
// A chunk's sweep for the nearest gap with a strictly higher level on one
// side: a stack of the gaps still waiting to be passed (their levels
// strictly falling towards the top, so it holds at most one gap per level).
struct HigherSweep
{
  std::vector<Index> stack;
  std::vector<Index> open; // gaps whose nearest higher lies outside the chunk

  // The gap on the stack nearest to the sweep with a level above v, or
  // `none` (binary search: levels fall towards the top).
  Index above(const int* lv, int v, Index none) const
  {
    std::size_t lo = 0, hi = stack.size(); // stack[0, lo) are above v
    while (lo < hi)
    {
      const std::size_t mid = (lo + hi) / 2;
      if (lv[stack[mid]] > v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo ? stack[lo - 1] : none;
  }
};

// The nearest gap before (kLeft) or after each gap i in 0 < i < n with a
// strictly higher level (both end gaps are kLevelInfinite, so one always
// exists) is handed to found(i, j), from one stack sweep per thread's chunk;
// gaps whose nearest higher lies outside their chunk (few: the chunk's
// running maxima, or runs of equal levels at its start) are resolved after a
// barrier from the stacks the other chunks were left with. The nearest
// higher gap is unique, so the result does not depend on the chunks. Call
// inside a parallel region (every member).
template <bool kLeft, class Found>
void nearestHigherInTeam(const int* lv, long long n, std::vector<HigherSweep>& sweeps, Found found)
{
  const int t = omp_get_thread_num(), nt = omp_get_num_threads();
  const long long b = 1 + (n - 1) * t / nt, e = 1 + (n - 1) * (t + 1) / nt;
  // The sweep works on its own vectors, not on sweeps[t]: the members'
  // headers share cache lines, and every push and pop would write one.
  std::vector<Index> stack, open;
  stack.reserve(64);
  for (long long k = 0; k < e - b; ++k)
  {
    const Index i = Index(kLeft ? b + k : e - 1 - k);
    const int v = lv[i];
    while (!stack.empty() && lv[stack.back()] <= v)
      stack.pop_back();
    if (stack.empty())
      open.push_back(i);
    else
      found(i, stack.back());
    stack.push_back(i);
  }
  sweeps[t].stack.swap(stack);
  sweeps[t].open.swap(open);
#pragma omp barrier
  for (const Index i : sweeps[t].open)
  {
    Index j = kLeft ? 0 : Index(n); // the end gaps
    for (int u = kLeft ? t - 1 : t + 1; u >= 0 && u < nt; u += kLeft ? -1 : 1)
    {
      const Index k = sweeps[u].above(lv, lv[i], j);
      if (k != j)
      {
        j = k;
        break;
      }
    }
    found(i, j);
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

TreeLevels::TreeLevels(const int* gapLevel, Index numPoints, const std::vector<Index>& queryPrefix,
  const TreeBuildOptions& options)
  : gapLevel_(gapLevel)
  , n_(numPoints)
  , options_(options)
{
  const long long n = numPoints;
  // The cell around gap i spans the points between the nearest gaps on either
  // side with a strictly higher level: cellCount_ holds the left ends first.
  // Not zero-filled: fresh pages are first touched by the team.
  cellCount_ = newHugeArray<Index>(std::size_t(n) + 1);
  Index* count = cellCount_.get();
  const int* lv = gapLevel;
  const Index* prefix = queryPrefix.empty() ? nullptr : queryPrefix.data();
  std::vector<HigherSweep> sweeps(omp_get_max_threads());
#pragma omp parallel if (n > 100000)
  {
    nearestHigherInTeam<true>(lv, n, sweeps, [count](Index i, Index left) { count[i] = left; });
#pragma omp barrier
    nearestHigherInTeam<false>(lv, n, sweeps,
      [count, prefix](Index i, Index right)
      {
        const Index left = count[i], all = right - left;
        if (!prefix)
        {
          count[i] = all;
          return;
        }
        const Index q = prefix[right] - prefix[left];
        count[i] = std::max(q, all - q);
      });
  }
  count[0] = count[n] = Index(n);
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
  const Index n = n_;
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
        // select(maxLevel) keeps every present split and adds the gaps above
        // maxLevel, which lie inside the nodes above it (a node's level is
        // its gaps' largest): only those nodes' gaps are tested.
        std::vector<Index> added;
        for (std::size_t j = 0; j + 1 < plane.splits.size(); ++j)
        {
          if (!(plane.levels[j] > maxLevel))
            continue;
          const Index b = plane.splits[j], e = plane.splits[j + 1];
          auto test = [&](Index g)
          {
            if (isPlaneSplit(g, n, cellCount_[g], gapLevel_[g], nmax, maxLevel))
              added.push_back(g);
          };
          if (p == 0)
            for (Index g = b + 1; g < e; ++g)
              test(g);
          else
            for (auto c = std::upper_bound(candidates.begin(), candidates.end(), b);
                 c != candidates.end() && *c < e; ++c)
              test(*c);
        }
        if (!added.empty())
        {
          std::vector<Index> regular(plane.splits.size() + added.size());
          std::merge(
            plane.splits.begin(), plane.splits.end(), added.begin(), added.end(), regular.begin());
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
