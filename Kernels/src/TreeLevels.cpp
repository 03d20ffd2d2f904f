#include "TreeLevels.h"

#include <algorithm>
#include <cmath>

#include "jz/ZOrder.h"

namespace jz
{
TreeLevels::TreeLevels(const std::vector<int>& gapLevel, const std::vector<Index>& queryPrefix,
  const TreeBuildOptions& options)
  : gapLevel_(gapLevel)
  , options_(options)
{
  const Index n = Index(gapLevel.size() - 1);
  // The cell around gap i spans the points between the nearest gaps on either
  // side with a strictly higher level. Nearest-greater by pointer jumping is
  // linear overall.
  std::vector<Index> left(std::size_t(n) + 1, 0), right(std::size_t(n) + 1, n);
  for (Index i = 1; i < n; ++i)
  {
    Index j = i - 1;
    while (gapLevel[j] <= gapLevel[i])
      j = left[j];
    left[i] = j;
  }
  for (long long i = (long long)n - 1; i >= 1; --i)
  {
    Index j = i + 1;
    while (gapLevel[j] <= gapLevel[i])
      j = right[j];
    right[i] = j;
  }
  cellCount_.assign(std::size_t(n) + 1, n);
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
      std::vector<Index> s;
      auto keep = [&](Index g)
      { return g == 0 || g == n || double(cellCount_[g]) > nmax || gapLevel_[g] > maxLevel; };
      if (p == 0)
      {
        for (Index g = 0; g <= n; ++g)
          if (keep(g))
            s.push_back(g);
      }
      else
      {
        for (Index g : candidates)
          if (keep(g))
            s.push_back(g);
      }
      return s;
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
