// Ghost selection for the distributed drivers (GhostSelection.h).
#include "distributed/GhostSelection.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <omp.h>

#include "walk/SingleTreeDescent.h"

namespace jz
{
template <class T>
std::vector<Region<T>> regionsFromTree(const ZTree<T>& tree, const std::vector<double>& leafRadius2)
{
  std::vector<Region<T>> regions;
  if (tree.planes.empty())
    return regions;
  // One region per leaf with query points: tight boxes, each with its own
  // radius (coarser regions send more ghosts than their fewer boxes save).
  const TreePlane<T>& leaves = tree.planes[0];
  for (Index l = 0; l < leaves.numNodes(); ++l)
  {
    if (leaves.numQueries(l) == 0)
      continue;
    Region<T> r;
    boxSetEmpty(r.box);
    boxMerge(r.box, tree.queryBox(0, l));
    r.radius2 = std::max(0.0, leafRadius2[l]);
    if (!boxIsEmpty(r.box))
      regions.push_back(r);
  }
  return regions;
}

namespace
{
// Regions are tested in blocks of consecutive ones (consecutive leaves of
// another rank, so close together): the top plane is scanned once per block
// against the block's box and largest radius, and each region then descends
// from the block's candidates only. A node too far from the block's box is
// too far from each of its regions, so the selection is the same.
constexpr std::size_t kRegionBlock = 64;

template <class T>
Box<T> boxOfTree(const ZTree<T>& tree)
{
  Box<T> all;
  boxSetEmpty(all);
  const TreePlane<T>& top = tree.planes.back();
  for (Index j = 0; j < top.numNodes(); ++j)
    if (top.numSources(j) > 0)
      boxMerge(all, top.sourceBox[j]);
  return all;
}
} // namespace

template <class T>
std::vector<std::vector<Index>> selectGhosts(const ZTree<T>& tree,
  const std::vector<std::vector<Region<T>>>& regionsByRank, int myRank,
  std::vector<std::vector<char>>* hits)
{
  const int ranks = int(regionsByRank.size());
  std::vector<std::vector<Index>> out(ranks);
  if (hits)
  {
    hits->assign(ranks, {});
    for (int r = 0; r < ranks; ++r)
      (*hits)[r].assign(r == myRank ? 0 : regionsByRank[r].size(), 0);
  }
  if (tree.planes.empty())
    return out;
  const Periodicity& per = tree.periodicity;
  const int top = int(tree.planes.size()) - 1;
  const TreePlane<T>& topPlane = tree.planes[top];
  const SortedPoints<T>& src = tree.sources;
  const Box<T> local = boxOfTree(tree);
  // One flag per source: regions overlap, so the same source is often found
  // many times (a list of finds would need sorting; the flags are read in
  // order, ascending, and cleared on the way).
  std::vector<std::uint8_t> selected(src.size(), 0);
  for (int r = 0; r < ranks; ++r)
  {
    if (r == myRank || regionsByRank[r].empty())
      continue;
    const std::vector<Region<T>>& regions = regionsByRank[r];
    const long long numBlocks = (long long)((regions.size() + kRegionBlock - 1) / kRegionBlock);
#pragma omp parallel
    {
      std::vector<Index> candidates;
      DescentStack stack;
#pragma omp for schedule(dynamic, 4)
      for (long long b = 0; b < numBlocks; ++b)
      {
        const std::size_t g0 = std::size_t(b) * kRegionBlock;
        const std::size_t g1 = std::min(regions.size(), g0 + kRegionBlock);
        Box<T> blockBox;
        boxSetEmpty(blockBox);
        double blockRadius2 = 0;
        for (std::size_t g = g0; g < g1; ++g)
        {
          if (boxDistanceLow2(regions[g].box, local, per) > regions[g].radius2)
            continue; // nowhere near this rank's points
          boxMerge(blockBox, regions[g].box);
          blockRadius2 = std::max(blockRadius2, regions[g].radius2);
        }
        if (boxIsEmpty(blockBox))
          continue;
        candidates.clear();
        for (Index j = 0; j < topPlane.numNodes(); ++j)
          if (topPlane.numSources(j) > 0 &&
            boxDistanceLow2(blockBox, topPlane.sourceBox[j], per) <= blockRadius2)
            candidates.push_back(j);
        for (std::size_t g = g0; g < g1; ++g)
        {
          const Region<T>& region = regions[g];
          if (boxDistanceLow2(region.box, local, per) > region.radius2)
            continue;
          // The leaves that can hold points in range: their points tested.
          bool any = false;
          auto visit = [&](int p, Index j)
          {
            const TreePlane<T>& plane = tree.planes[p];
            if (plane.numSources(j) == 0 ||
              boxDistanceLow2(region.box, plane.sourceBox[j], per) > region.radius2)
              return Descend::Skip;
            if (p > 0)
              return Descend::Open;
            for (Index s = plane.sourceSplit[j]; s < plane.sourceSplit[j + 1]; ++s)
            {
              const T pt[3] = { src.x[s], src.y[s], src.z[s] };
              if (pointBoxDistance2(pt, region.box, per) <= region.radius2)
              {
                __atomic_store_n(&selected[s], std::uint8_t(1), __ATOMIC_RELAXED);
                any = true;
              }
            }
            return Descend::Skip;
          };
          for (Index j : candidates)
            descendTree(tree, j, j + 1, visit, stack);
          if (hits && any)
            (*hits)[r][g] = 1;
        }
      }
    }
    std::vector<Index>& all = out[r];
    for (Index s = 0; s < src.size(); ++s)
      if (selected[s])
      {
        all.push_back(s);
        selected[s] = 0;
      }
  }
  return out;
}

template std::vector<Region<float>> regionsFromTree(
  const ZTree<float>&, const std::vector<double>&);
template std::vector<Region<double>> regionsFromTree(
  const ZTree<double>&, const std::vector<double>&);
template std::vector<std::vector<Index>> selectGhosts(const ZTree<float>&,
  const std::vector<std::vector<Region<float>>>&, int, std::vector<std::vector<char>>*);
template std::vector<std::vector<Index>> selectGhosts(const ZTree<double>&,
  const std::vector<std::vector<Region<double>>>&, int, std::vector<std::vector<char>>*);
} // namespace jz
