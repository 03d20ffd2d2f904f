// Ghost selection for the distributed drivers (GhostSelection.h).
#include "GhostSelection.h"

#include <algorithm>

#include <omp.h>

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

template <class T>
std::vector<std::vector<Index>> selectGhosts(
  const ZTree<T>& tree, const std::vector<std::vector<Region<T>>>& regionsByRank, int myRank)
{
  const int ranks = int(regionsByRank.size());
  std::vector<std::vector<Index>> out(ranks);
  if (tree.planes.empty())
    return out;
  const Periodicity& per = tree.periodicity;
  const int top = int(tree.planes.size()) - 1;
  const SortedPoints<T>& src = tree.sources;
  for (int r = 0; r < ranks; ++r)
  {
    if (r == myRank || regionsByRank[r].empty())
      continue;
    const std::vector<Region<T>>& regions = regionsByRank[r];
    std::vector<std::vector<Index>> found(omp_get_max_threads());
#pragma omp parallel
    {
      std::vector<Index>& mine = found[omp_get_thread_num()];
      std::vector<Index> nodes, next;
#pragma omp for schedule(dynamic, 16)
      for (long long g = 0; g < (long long)regions.size(); ++g)
      {
        const Region<T>& region = regions[g];
        // Descend the planes, keeping the nodes that can hold points in range.
        nodes.clear();
        for (Index j = 0; j < tree.planes[top].numNodes(); ++j)
          nodes.push_back(j);
        for (int p = top; p >= 0; --p)
        {
          const TreePlane<T>& plane = tree.planes[p];
          next.clear();
          for (Index j : nodes)
          {
            if (plane.numSources(j) == 0)
              continue;
            if (boxDistanceLow2(region.box, plane.sourceBox[j], per) > region.radius2)
              continue;
            if (p == 0)
            {
              next.push_back(j);
            }
            else
            {
              for (Index c = plane.childSplit[j]; c < plane.childSplit[j + 1]; ++c)
                next.push_back(c);
            }
          }
          nodes.swap(next);
        }
        const TreePlane<T>& leaves = tree.planes[0];
        for (Index leaf : nodes)
        {
          for (Index s = leaves.sourceSplit[leaf]; s < leaves.sourceSplit[leaf + 1]; ++s)
          {
            const T pt[3] = { src.x[s], src.y[s], src.z[s] };
            if (pointBoxDistance2(pt, region.box, per) <= region.radius2)
              mine.push_back(s);
          }
        }
      }
    }
    std::vector<Index>& all = out[r];
    for (auto& f : found)
      all.insert(all.end(), f.begin(), f.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
  }
  return out;
}

template std::vector<Region<float>> regionsFromTree(
  const ZTree<float>&, const std::vector<double>&);
template std::vector<Region<double>> regionsFromTree(
  const ZTree<double>&, const std::vector<double>&);
template std::vector<std::vector<Index>> selectGhosts(
  const ZTree<float>&, const std::vector<std::vector<Region<float>>>&, int);
template std::vector<std::vector<Index>> selectGhosts(
  const ZTree<double>&, const std::vector<std::vector<Region<double>>>&, int);
} // namespace jz
