// Tree gravity on the CPU: the z-order tree over sources and queries, the
// multipoles bottom-up (GravityMoments.h), then one walk of the engine with
// the gravity policy (GravityPolicy.h) down to the leaves' direct sums, and
// the sums written in query input order with G applied.
#include <algorithm>
#include <vector>

#include <omp.h>

#include "../GravityBackends.h"
#include "../StageTimer.h"
#include "../walk/DualWalk.h"
#include "GravityMoments.h"
#include "GravityPolicy.h"

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
    if (control.progress)
      buildControl.progress = [&](double f) { return control.progress(0.2 * f); };
    buildTreeCpu(problem.sources, Index(problem.numSources), problem.queries,
      Index(self ? 0 : problem.numQueries), Periodicity{}, lo, TreeBuildOptions(), tree,
      buildControl);
  }

  std::vector<double> mass(tree.sources.size());
  std::vector<std::vector<GravityMoments>> moments;
  {
    StageTimer timer(&info, "multipoles");
    for (Index i = 0; i < tree.sources.size(); ++i)
      mass[i] = problem.sourceMasses ? problem.sourceMasses[tree.sources.inputIndex[i]] : 1.0;
    moments = gravityMoments(tree, mass, threads);
  }

  const SortedPoints<T>& qp = tree.queryPoints();
  std::vector<GravitySum> sums(qp.size());
  const std::vector<Index> own = ownSources(problem, tree);
  {
    StageTimer timer(&info, "walk");
    GravityPolicy<T> policy(
      tree, moments, mass, own, problem.openingAngle, problem.softening, sums, threads);
    DualWalk<T, GravityPolicy<T>> walk(tree, policy, threads, &info);
    std::function<bool(double)> progress;
    if (control.progress)
      progress = [&control](double f) { return control.progress(0.25 + 0.75 * f); };
    walk.leafPass(walk.walkDownTo(1), progress);
  }

  const double G = problem.gravitationalConstant;
#pragma omp parallel for num_threads(threads)
  for (long long qq = 0; qq < (long long)qp.size(); ++qq)
  {
    const std::size_t out = qp.inputIndex[qq];
    const GravitySum& s = sums[qq];
    if (results.potential)
      results.potential[out] = -G * s.u;
    if (results.acceleration)
      for (int k = 0; k < 3; ++k)
        results.acceleration[3 * out + k] = G * s.g[k];
  }
}

template void gravityCpu<float>(
  const GravityProblem<float>&, const GravityResults&, RunInfo&, const RunControl&);
template void gravityCpu<double>(
  const GravityProblem<double>&, const GravityResults&, RunInfo&, const RunControl&);
} // namespace jz
