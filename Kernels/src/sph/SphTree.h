// The particles' z-order tree with each node's largest support radius: the
// density gather finds the particles within reach of a point by descending
// its planes (walk/SingleTreeDescent.h), and the distributed gather grows
// the leaves by it to choose the ghosts.
#pragma once

#include <cmath>
#include <vector>

#include "jz/Tree.h"
#include "sph/SphImages.h"
#include "walk/SingleTreeDescent.h"

namespace jz
{
template <class T>
struct SupportTree
{
  ZTree<T> tree;
  std::vector<std::vector<double>> maxSupport; // [plane][node]
  double period[3] = { 0, 0, 0 };

  // Builds the tree over n points (wrapped into the periodic box when
  // periodic) with support[i] the radius of input point i.
  void build(const T* points, std::size_t n, const double* support, bool periodic,
    const double* boxLo, const double* boxHi, const RunControl& control)
  {
    const Periodicity per = Periodicity::of(periodic, boxLo, boxHi);
    for (int d = 0; d < 3; ++d)
      period[d] = per.length[d];
    buildTreeCpu(points, Index(n), static_cast<const T*>(nullptr), 0, per, boxLo,
      TreeBuildOptions{}, tree, control);
    maxSupport.assign(tree.planes.size(), {});
    for (std::size_t p = 0; p < tree.planes.size(); ++p)
    {
      const TreePlane<T>& plane = tree.planes[p];
      std::vector<double>& m = maxSupport[p];
      m.assign(plane.numNodes(), 0.0);
      for (Index j = 0; j < plane.numNodes(); ++j)
        if (p == 0)
          for (Index s = plane.sourceSplit[j]; s < plane.sourceSplit[j + 1]; ++s)
            m[j] = std::fmax(m[j], support[tree.sources.inputIndex[s]]);
        else
          for (Index c = plane.childSplit[j]; c < plane.childSplit[j + 1]; ++c)
            m[j] = std::fmax(m[j], maxSupport[p - 1][c]);
    }
  }

  // Calls visit(s) for every sorted point s of the leaves whose points, each
  // grown by the node's largest support on the axes with grow[d], may reach
  // [lo[d], hi[d]] on every axis (the images of `periods`, or of the tree's
  // own periods when null, included), in z-order.
  template <class Visit>
  void forPointsReaching(const double* lo, const double* hi, const bool* grow,
    DescentStack& stack, Visit&& visit, const double* periods = nullptr) const
  {
    if (!periods)
      periods = period;
    if (tree.planes.empty())
      return;
    const int top = int(tree.planes.size()) - 1;
    descendTree(tree, 0, tree.planes[top].numNodes(),
      [&](int p, Index j)
      {
        const TreePlane<T>& plane = tree.planes[p];
        if (plane.numSources(j) == 0)
          return Descend::Skip;
        const Box<T>& box = plane.sourceBox[j];
        const double h = maxSupport[p][j];
        for (int d = 0; d < 3; ++d)
          if (!reaches(box.lo[d], box.hi[d], grow[d] ? h : 0.0, lo[d], hi[d], periods[d]))
            return Descend::Skip;
        if (p > 0)
          return Descend::Open;
        for (Index s = plane.sourceSplit[j]; s < plane.sourceSplit[j + 1]; ++s)
          visit(s);
        return Descend::Skip;
      },
      stack);
  }

  // Whether [a - grow, b + grow] meets [lo, hi] on an axis of this period
  // (<= 0: none), with a relative slack that only ever keeps more.
  static bool reaches(double a, double b, double grow, double lo, double hi, double period)
  {
    const double slack = 1e-9 * (std::fabs(a) + std::fabs(b) + grow + std::fabs(lo) + std::fabs(hi));
    a -= grow + slack;
    b += grow + slack;
    if (!(period > 0))
      return b >= lo && a <= hi;
    if (b - a >= period)
      return true;
    const double k = std::ceil((lo - b) / period); // first shift that ends at or past lo
    return a + k * period <= hi;
  }
};

} // namespace jz
