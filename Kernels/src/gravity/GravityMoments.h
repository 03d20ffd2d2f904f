// Tree gravity's per-node state that flows up: every node's mass, centre of
// mass, second moments and enclosing radius, on every plane (leaves from
// their points, parents from their children by the parallel-axis theorem).
#pragma once

#include <algorithm>
#include <vector>

#include "gravity/GravityTerms.h"
#include "jz/Tree.h"

namespace jz
{
namespace gravity_detail
{
// The squared distance from the centre of mass to the farthest box corner.
template <class T>
JZ_HD double enclosingRadius2(const Box<T>& box, const double* com)
{
  double r2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    const double far =
      std::max(std::abs(double(box.lo[k]) - com[k]), std::abs(double(box.hi[k]) - com[k]));
    r2 += far * far;
  }
  return r2;
}

// Centre of mass of a node with no mass: its box centre (never used by a
// force, only by the opening test).
template <class T>
JZ_HD void boxCentre(const Box<T>& box, double* c)
{
  for (int k = 0; k < 3; ++k)
    c[k] = 0.5 * (double(box.lo[k]) + double(box.hi[k]));
}

// The centre of mass from the mass-weighted sum of positions in n.com.
template <class T>
JZ_HD void divideCentre(GravityMoments& n, const Box<T>& box)
{
  if (n.mass > 0)
    for (int k = 0; k < 3; ++k)
      n.com[k] /= n.mass;
  else
    boxCentre(box, n.com);
}

// A leaf's moments from its points [a, b) (sorted order): the centre of
// mass, then the second moments about it (two passes, for accuracy).
template <class T>
JZ_HD GravityMoments leafMoments(
  Index a, Index b, const T* x, const T* y, const T* z, const double* mass, const Box<T>& box)
{
  GravityMoments n;
  for (Index i = a; i < b; ++i)
  {
    n.mass += mass[i];
    n.com[0] += mass[i] * double(x[i]);
    n.com[1] += mass[i] * double(y[i]);
    n.com[2] += mass[i] * double(z[i]);
  }
  divideCentre(n, box);
  for (Index i = a; i < b; ++i)
  {
    const double w[3] = { double(x[i]) - n.com[0], double(y[i]) - n.com[1],
      double(z[i]) - n.com[2] };
    addSecond(n.second, w, mass[i]);
  }
  return n;
}

// A parent's moments from its children [a, b) of the plane below (the
// parallel-axis theorem).
template <class T>
JZ_HD GravityMoments parentMoments(Index a, Index b, const GravityMoments* below, const Box<T>& box)
{
  GravityMoments n;
  for (Index c = a; c < b; ++c)
  {
    n.mass += below[c].mass;
    for (int k = 0; k < 3; ++k)
      n.com[k] += below[c].mass * below[c].com[k];
  }
  divideCentre(n, box);
  for (Index c = a; c < b; ++c)
  {
    const double d[3] = { below[c].com[0] - n.com[0], below[c].com[1] - n.com[1],
      below[c].com[2] - n.com[2] };
    for (int k = 0; k < 6; ++k)
      n.second[k] += below[c].second[k];
    addSecond(n.second, d, below[c].mass);
  }
  return n;
}

// The end of a node with sources (either kind): all points at one position
// (bulk duplicates) make an exact point mass there, which the walk accepts
// at any distance (GravityPolicy.h); the enclosing radius from its box.
template <class T>
JZ_HD void finishMoments(const Box<T>& box, GravityMoments& n)
{
  if (box.lo[0] == box.hi[0] && box.lo[1] == box.hi[1] && box.lo[2] == box.hi[2])
  {
    for (int k = 0; k < 3; ++k)
      n.com[k] = double(box.lo[k]);
    for (int k = 0; k < 6; ++k)
      n.second[k] = 0.0;
  }
  n.radius2 = enclosingRadius2(box, n.com);
}
} // namespace gravity_detail

// moments[p][j]: node j of plane p. `mass` is per sorted source.
template <class T>
std::vector<std::vector<GravityMoments>> gravityMoments(
  const ZTree<T>& tree, const std::vector<double>& mass, int numThreads)
{
  using namespace gravity_detail;
  std::vector<std::vector<GravityMoments>> moments(tree.planes.size());
  const SortedPoints<T>& s = tree.sources;
  for (std::size_t p = 0; p < tree.planes.size(); ++p)
  {
    const TreePlane<T>& plane = tree.planes[p];
    std::vector<GravityMoments>& out = moments[p];
    out.assign(plane.numNodes(), GravityMoments{});
#pragma omp parallel for schedule(dynamic, 64) num_threads(numThreads)
    for (long long jj = 0; jj < (long long)plane.numNodes(); ++jj)
    {
      const Index j = Index(jj);
      if (plane.numSources(j) == 0)
        continue;
      const Box<T>& box = plane.sourceBox[j];
      GravityMoments& n = out[j];
      n = p == 0 ? leafMoments(plane.sourceSplit[j], plane.sourceSplit[j + 1], s.x.data(),
                     s.y.data(), s.z.data(), mass.data(), box)
                 : parentMoments(plane.childSplit[j], plane.childSplit[j + 1],
                     moments[p - 1].data(), box);
      finishMoments(box, n);
    }
  }
  return moments;
}
} // namespace jz
