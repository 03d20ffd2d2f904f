// The per-node state of tree gravity's fast multipole method on every plane:
// the sources' multipoles (P2M at the leaves, M2M up the planes) about their
// centres of mass with the radius that holds their points, the receivers'
// expansion centres and radii, and the local expansions the walk fills (M2L)
// and the downward pass shifts to the leaves (L2L) and evaluates (L2P).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "gravity/GravityExpansion.h"
#include "gravity/GravityMoments.h"
#include "jz/Tree.h"

namespace jz
{
struct GravityPlaneNodes
{
  std::vector<double> multipole; // size() per node, about the centre of mass
  std::vector<double> local;     // size() per node, about the receiver centre
  std::vector<double> sourceRadius;
  std::vector<double> receiverCentre; // 3 per node
  std::vector<double> receiverRadius;
};

namespace gravity_detail
{
// max(a, b) as one instruction where there is one (the compiler may
// otherwise turn a max with 0 into a branch). Ties and signed zeros aside
// (which the callers square), std::max(a, b).
inline double maxNoBranch(double a, double b)
{
#if defined(__SSE2__)
  return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(a), _mm_set_sd(b)));
#else
  return a > b ? a : b;
#endif
}

inline double distance(const double* a, const double* b)
{
  const double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return std::sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

// The farthest of points [a, b) (coordinates x, y, z) from c.
template <class C>
double farthest(const C* x, const C* y, const C* z, Index a, Index b, const double* c)
{
  double r2 = 0;
  for (Index i = a; i < b; ++i)
  {
    const double d0 = double(x[i]) - c[0], d1 = double(y[i]) - c[1], d2 = double(z[i]) - c[2];
    r2 = std::max(r2, d0 * d0 + d1 * d1 + d2 * d2);
  }
  return std::sqrt(r2);
}
} // namespace gravity_detail

// nodes[p][j]: node j of plane p >= from (the planes below stay empty: no
// M2L reaches them, and plane `from` is made from its points directly). q:
// the sorted query coordinates in double.
template <class T>
std::vector<GravityPlaneNodes> gravityPlaneNodes(const ZTree<T>& tree,
  const std::vector<std::vector<GravityMoments>>& moments, const std::vector<double>& mass,
  const double* const q[3], const GravityExpansion& e, int from, int numThreads)
{
  using namespace gravity_detail;
  const int N = e.size();
  std::vector<GravityPlaneNodes> nodes(tree.planes.size());
  const SortedPoints<T>& s = tree.sources;
  for (std::size_t p = std::size_t(std::max(0, from)); p < tree.planes.size(); ++p)
  {
    const bool fromPoints = int(p) == from;
    const TreePlane<T>& plane = tree.planes[p];
    const std::vector<GravityMoments>& mom = moments[p];
    GravityPlaneNodes& out = nodes[p];
    const Index n = plane.numNodes();
    out.multipole.assign(std::size_t(n) * N, 0.0);
    out.local.assign(std::size_t(n) * N, 0.0);
    out.sourceRadius.assign(n, 0.0);
    out.receiverCentre.assign(3 * std::size_t(n), 0.0);
    out.receiverRadius.assign(n, 0.0);
#pragma omp parallel for schedule(dynamic, 64) num_threads(numThreads)
    for (long long jj = 0; jj < (long long)n; ++jj)
    {
      const Index j = Index(jj);
      double* M = out.multipole.data() + std::size_t(j) * N;
      if (plane.numSources(j) > 0)
      {
        const double* com = mom[j].com;
        double radius = std::sqrt(mom[j].radius2); // the box's bound
        if (fromPoints)
        {
          const Index a = plane.sourceSplit[j], b = plane.sourceSplit[j + 1];
          constexpr std::size_t W = kM2LLanes;
          double w[3 * W], m[W], lanes[kMaxGravityCoefficients * W];
          std::fill(lanes, lanes + std::size_t(N) * W, 0.0);
          for (Index i0 = a; i0 < b; i0 += Index(W))
          {
            for (std::size_t l = 0; l < W; ++l)
            {
              const Index i = i0 + Index(l);
              const bool in = i < b; // padding: massless at the centre
              w[l] = in ? double(s.x[i]) - com[0] : 0.0;
              w[W + l] = in ? double(s.y[i]) - com[1] : 0.0;
              w[2 * W + l] = in ? double(s.z[i]) - com[2] : 0.0;
              m[l] = in ? mass[i] : 0.0;
            }
            e.addPointsLanes(w, m, lanes);
          }
          e.addLanes(lanes, M);
          radius = std::min(radius, farthest(s.x.data(), s.y.data(), s.z.data(), a, b, com));
        }
        else
        {
          const GravityPlaneNodes& below = nodes[p - 1];
          double bound = 0;
          for (Index c = plane.childSplit[j]; c < plane.childSplit[j + 1]; ++c)
          {
            if (tree.planes[p - 1].numSources(c) == 0)
              continue;
            const double* cc = moments[p - 1][c].com;
            const double t[3] = { cc[0] - com[0], cc[1] - com[1], cc[2] - com[2] };
            e.shiftMultipole(below.multipole.data() + std::size_t(c) * N, t, M);
            bound = std::max(bound, distance(cc, com) + below.sourceRadius[c]);
          }
          radius = std::min(radius, bound);
        }
        out.sourceRadius[j] = radius;
      }
      if (plane.numQueries(j) == 0)
        continue;
      double* centre = out.receiverCentre.data() + 3 * std::size_t(j);
      if (tree.selfQuery)
      {
        // The receivers are the sources: the same ball.
        std::copy(mom[j].com, mom[j].com + 3, centre);
        out.receiverRadius[j] = out.sourceRadius[j];
        continue;
      }
      const Box<T>& box = plane.queryBox[j];
      double half2 = 0;
      for (int k = 0; k < 3; ++k)
      {
        centre[k] = 0.5 * (double(box.lo[k]) + double(box.hi[k]));
        const double h = 0.5 * (double(box.hi[k]) - double(box.lo[k]));
        half2 += h * h;
      }
      double radius = std::sqrt(half2);
      if (fromPoints)
        radius = std::min(
          radius, farthest(q[0], q[1], q[2], plane.querySplit[j], plane.querySplit[j + 1], centre));
      else
      {
        const GravityPlaneNodes& below = nodes[p - 1];
        double bound = 0;
        for (Index c = plane.childSplit[j]; c < plane.childSplit[j + 1]; ++c)
          if (tree.planes[p - 1].numQueries(c) > 0)
            bound = std::max(bound,
              distance(below.receiverCentre.data() + 3 * std::size_t(c), centre) +
                below.receiverRadius[c]);
        radius = std::min(radius, bound);
      }
      out.receiverRadius[j] = radius;
    }
  }
  return nodes;
}
} // namespace jz
