// Tree gravity on the CPU: the z-order tree over sources and queries, the
// multipoles bottom-up (GravityMoments.h, GravityNodes.h), one walk of the
// engine with the gravity policy (GravityPolicy.h: M2L into the receivers'
// local expansions, direct sums at the leaves), the local expansions shifted
// down the planes and evaluated at the points, and the sums written in query
// input order with G applied.
#include <algorithm>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "gravity/GravityBackends.h"
#include "gravity/GravityExpansion.h"
#include "gravity/GravityMoments.h"
#include "gravity/GravityNodes.h"
#include "gravity/GravityPolicy.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"
#include "walk/DualWalk.h"

namespace jz
{
namespace
{
int gravityThreads(const RunControl& control)
{
  return control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
}

// Per sorted query, the sorted source it is (queriesFromSource), else empty.
template <class T>
std::vector<Index> ownSources(const GravityProblem<T>& problem, const ZTree<T>& tree)
{
  if (problem.queries == nullptr || problem.queriesFromSource == std::size_t(-1))
    return {};
  std::vector<Index> sortedOf(tree.sources.size());
  for (Index i = 0; i < tree.sources.size(); ++i)
    sortedOf[tree.sources.inputIndex[i]] = i;
  std::vector<Index> own(tree.queries.size());
  for (Index q = 0; q < tree.queries.size(); ++q)
    own[q] = sortedOf[problem.queriesFromSource + tree.queries.inputIndex[q]];
  return own;
}

// The float terms' units: the sources' extent and the largest mass.
template <class T>
FloatUnits floatUnits(const ZTree<T>& tree, const std::vector<double>& mass, double eps)
{
  double extent = 0;
  if (!tree.planes.empty())
  {
    const TreePlane<T>& top = tree.planes.back();
    for (int k = 0; k < 3; ++k)
    {
      double lo = kInfinity, hi = -kInfinity;
      for (Index j = 0; j < top.numNodes(); ++j)
        if (top.numSources(j) > 0)
        {
          lo = std::min(lo, double(top.sourceBox[j].lo[k]));
          hi = std::max(hi, double(top.sourceBox[j].hi[k]));
        }
      extent = std::max(extent, hi - lo);
    }
  }
  const double maxMass = mass.empty() ? 1.0 : *std::max_element(mass.begin(), mass.end());
  return FloatUnits(extent, maxMass, eps * eps);
}

// After the walk: every local expansion shifted to its children (L2L), plane
// by plane down to plane `from`, and evaluated at its nodes' points (L2P).
template <class T>
void gravityDownward(const ZTree<T>& tree, std::vector<GravityPlaneNodes>& nodes,
  const GravityExpansion& e, int from, const double* const q[3], bool field, double* const sum[4],
  int threads)
{
  const std::size_t N = std::size_t(e.size());
  if (from < 0 || from >= int(tree.planes.size()))
    return; // no plane expands
  for (std::size_t p = tree.planes.size() - 1; p > std::size_t(from); --p)
  {
    const TreePlane<T>& plane = tree.planes[p];
    const GravityPlaneNodes& up = nodes[p];
    GravityPlaneNodes& down = nodes[p - 1];
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
    for (long long jj = 0; jj < (long long)plane.numNodes(); ++jj)
    {
      const Index j = Index(jj);
      if (plane.numQueries(j) == 0)
        continue;
      const double* from = up.receiverCentre.data() + 3 * std::size_t(j);
      for (Index c = plane.childSplit[j]; c < plane.childSplit[j + 1]; ++c)
      {
        if (tree.planes[p - 1].numQueries(c) == 0)
          continue;
        const double* to = down.receiverCentre.data() + 3 * std::size_t(c);
        const double t[3] = { to[0] - from[0], to[1] - from[1], to[2] - from[2] };
        e.shiftLocal(
          up.local.data() + std::size_t(j) * N, t, down.local.data() + std::size_t(c) * N);
      }
    }
  }
  const TreePlane<T>& bottom = tree.planes[std::size_t(from)];
  const GravityPlaneNodes& last = nodes[std::size_t(from)];
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
  for (long long jj = 0; jj < (long long)bottom.numNodes(); ++jj)
  {
    const Index j = Index(jj);
    const double* centre = last.receiverCentre.data() + 3 * std::size_t(j);
    const double* L = last.local.data() + std::size_t(j) * N;
    constexpr std::size_t W = kM2LLanes;
    double y[3 * W], lu[W], lg[3 * W];
    for (Index i0 = bottom.querySplit[j]; i0 < bottom.querySplit[j + 1]; i0 += Index(W))
    {
      const std::size_t n = std::min<std::size_t>(W, bottom.querySplit[j + 1] - i0);
      for (std::size_t l = 0; l < W; ++l)
        for (int k = 0; k < 3; ++k)
          y[k * W + l] = l < n ? q[k][i0 + l] - centre[k] : 0.0;
      e.evaluateLocalLanes(L, y, field, lu, lg);
      for (std::size_t l = 0; l < n; ++l)
      {
        sum[0][i0 + l] += lu[l];
        if (field)
          for (int k = 0; k < 3; ++k)
            sum[1 + k][i0 + l] += lg[k * W + l];
      }
    }
  }
}
} // namespace

template <class T>
void gravityCpu(const GravityProblem<T>& problem, const GravityResults& results, RunInfo& info,
  const RunControl& control)
{
  const int threads = gravityThreads(control);
  const int threadsBefore = omp_get_max_threads();
  omp_set_num_threads(threads); // the tree build runs on OpenMP's default team
  struct RestoreThreads
  {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{ threadsBefore };

  const bool self = problem.queries == nullptr;
  ZTree<T> tree;
  {
    StageTimer timer(&info, "sort+tree");
    const double lo[3] = { 0, 0, 0 };
    RunControl buildControl;
    buildControl.progress = progressSpan(control, 0, 0.2);
    buildTreeCpu(problem.sources, Index(problem.numSources), problem.queries,
      Index(self ? 0 : problem.numQueries), Periodicity{}, lo, TreeBuildOptions(), tree,
      buildControl);
  }

  std::vector<double> mass;
  resizeHugePages(mass, tree.sources.size()); // fresh 4 KiB pages: one fault each
  std::vector<std::vector<GravityMoments>> moments;
  {
    StageTimer timer(&info, "multipoles");
    // Parallel: a gather through the sort order, one cache miss per point.
#pragma omp parallel for num_threads(threads)
    for (long long ii = 0; ii < (long long)tree.sources.size(); ++ii)
    {
      const Index i = Index(ii);
      mass[i] = problem.sourceMasses ? problem.sourceMasses[tree.sources.inputIndex[i]] : 1.0;
    }
    moments = gravityMoments(tree, mass, threads);
  }

  const SortedPoints<T>& qp = tree.queryPoints();
  const std::size_t nq = qp.size();
  // Query coordinates in double (the tree's own arrays when T is double).
  UninitialisedVector<double> qcopy; // first touched by the threads that fill it
  const double* q[3];
  if (std::is_same<T, double>::value)
  {
    q[0] = reinterpret_cast<const double*>(qp.x.data());
    q[1] = reinterpret_cast<const double*>(qp.y.data());
    q[2] = reinterpret_cast<const double*>(qp.z.data());
  }
  else
  {
    resizeHugePages(qcopy, 3 * nq);
#pragma omp parallel for num_threads(threads)
    for (long long ii = 0; ii < (long long)nq; ++ii)
    {
      const std::size_t i = std::size_t(ii);
      qcopy[i] = double(qp.x[i]);
      qcopy[nq + i] = double(qp.y[i]);
      qcopy[2 * nq + i] = double(qp.z[i]);
    }
    for (int k = 0; k < 3; ++k)
      q[k] = qcopy.data() + k * nq;
  }
  const GravityExpansion& expansion = gravityExpansion(kGravityLocalOrder);
  std::vector<GravityPlaneNodes> nodes;
  {
    StageTimer timer(&info, "expansions");
    nodes = gravityPlaneNodes(tree, moments, mass, q, expansion, kGravityLocalFromPlane, threads);
  }
  UninitialisedVector<double> sumStore; // U, grad U per sorted query,
  resizeHugePages(sumStore, 4 * nq);    // first touched by the threads
#pragma omp parallel for num_threads(threads)
  for (long long i = 0; i < (long long)(4 * nq); ++i)
    sumStore[std::size_t(i)] = 0;
  double* const sum[4] = { sumStore.data(), sumStore.data() + nq, sumStore.data() + 2 * nq,
    sumStore.data() + 3 * nq };
  const std::vector<Index> own = ownSources(problem, tree);
  const bool field = results.acceleration != nullptr;
  {
    StageTimer timer(&info, "walk");
    GravityPolicy<T> policy(tree, moments, nodes, expansion, mass, own, problem.openingAngle,
      problem.softening, floatUnits(tree, mass, problem.softening), field, q, sum, threads);
    DualWalk<T, GravityPolicy<T>> walk(tree, policy, threads, &info);
    walk.leafPass(walk.walkDownTo(1), progressSpan(control, 0.25, 0.7));
    double m2l = 0, multipoles = 0, direct = 0;
    for (int t = 0; t < threads; ++t)
    {
      m2l += policy.scratch.at(t).m2l;
      multipoles += policy.scratch.at(t).multipoles;
      direct += policy.scratch.at(t).direct;
    }
    info.counters.emplace_back("M2L interactions per query", m2l / double(nq));
    info.counters.emplace_back("multipole interactions per query", multipoles / double(nq));
    info.counters.emplace_back("direct interactions per query", direct / double(nq));
  }
  {
    StageTimer timer(&info, "downward");
    gravityDownward(tree, nodes, expansion, kGravityLocalFromPlane, q, field, sum, threads);
  }

  const double G = problem.gravitationalConstant;
#pragma omp parallel for num_threads(threads)
  for (long long qq = 0; qq < (long long)qp.size(); ++qq)
  {
    const std::size_t out = qp.inputIndex[qq];
    if (results.potential)
      results.potential[out] = -G * sum[0][qq];
    if (results.acceleration)
      for (int k = 0; k < 3; ++k)
        results.acceleration[3 * out + k] = G * sum[1 + k][qq];
  }
}

template void gravityCpu<float>(
  const GravityProblem<float>&, const GravityResults&, RunInfo&, const RunControl&);
template void gravityCpu<double>(
  const GravityProblem<double>&, const GravityResults&, RunInfo&, const RunControl&);
} // namespace jz
