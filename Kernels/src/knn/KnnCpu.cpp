// The kNN dual tree walk on the CPU (§III): the walk engine
// (walk/DualWalk.h) with the kNN policies -- FindRmax and the node-pair test
// on the planes (KnnNodePolicy.h), then LeafToLeaf per parent of the leaves
// (KnnLeafSearch.h) -- reduced straight into the caller's output arrays in
// input order.
#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "jz/DensityKernels.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"
#include "jz/Tree.h"
#include "knn/CubicSplineWeights.h"
#include "knn/KnnBackends.h"
#include "knn/KnnCandidates.h"
#include "knn/KnnLeafSearch.h"
#include "knn/KnnQueryRows.h"
#include "walk/BoxMetric.h"
#include "walk/DualWalk.h"
#include "walk/OrderRunsByKey.h"

namespace jz
{
namespace
{
// Writes one query point's K nearest sources into the outputs (input order):
// smoothing length, density, neighbour ids and distances as asked.
template <class T>
struct KnnOutputWriter
{
  const KnnProblem<T>& problem;
  const KnnResults<T>& results;
  const SortedPoints<T>& sources;
  const KnnQueryRows rows;
  const SourceKeys& keys;
  const double* sortedMasses; // the sources' masses in tree order; null: unit

  void operator()(Index q, const RankedNeighbors& nb) const
  {
    const int k = problem.k;
    const std::size_t out = rows.row(q);
    const double h = std::sqrt(nb.d2(k - 1));
    if (results.smoothingLength)
      results.smoothingLength[out] = T(h);
    if (results.density)
      results.density[out] = T(density(nb, h));
    if (results.neighborIds)
      for (int j = 0; j < k; ++j)
        results.neighborIds[out * k + j] = keys[nb.src(j)];
    if (results.neighborDistances)
      for (int j = 0; j < k; ++j)
        results.neighborDistances[out * k + j] = T(std::sqrt(nb.d2(j)));
    if (results.visitNeighbors)
      visit(out, nb);
  }

  void visit(std::size_t out, const RankedNeighbors& nb) const
  {
    thread_local std::vector<Index> inputs;
    inputs.resize(std::size_t(problem.k));
    for (int j = 0; j < problem.k; ++j)
      inputs[std::size_t(j)] =
        results.visitQueryRows ? rows.row(nb.src(j)) : sources.inputIndex[nb.src(j)];
    results.visitNeighbors(out, inputs.data());
  }

  // Warms query q's output slots while its leaf is searched: they lie at
  // random in input order, and on x86 a store that misses holds up every
  // later store of the walk behind it (stores drain in order); written at
  // once, about a tenth of the leaf walk went there. Inlined: GCC takes a
  // function of prefetches alone for one without effects and drops its calls.
  __attribute__((always_inline)) void prefetch(Index q) const
  {
    const std::size_t out = rows.row(q);
    if (results.smoothingLength)
      __builtin_prefetch(results.smoothingLength + out);
    if (results.density)
      __builtin_prefetch(results.density + out);
    if (results.neighborIds)
      __builtin_prefetch(results.neighborIds + out * problem.k);
    if (results.neighborDistances)
      __builtin_prefetch(results.neighborDistances + out * problem.k);
  }

  double mass(Index sortedSource) const { return sortedMasses ? sortedMasses[sortedSource] : 1.0; }

  double density(const RankedNeighbors& nb, double h) const
  {
    const int k = problem.k;
    if (results.estimator == DensityEstimator::TopHat)
    {
      double m = 0;
      for (int j = 0; j < k; ++j)
        m += mass(nb.src(j));
      return h > 0 ? topHatDensity(m, h) : kInfinity;
    }
    if (!(h > 0))
      return kInfinity; // all K neighbours coincide with the point
    // The weights in chunks, summed in rank order.
    constexpr int kChunk = 32;
    double w[kChunk];
    double rho = 0;
    for (int j0 = 0; j0 < k; j0 += kChunk)
    {
      const int m = std::min(kChunk, k - j0);
      cubicSplineWeights(nb.d2s + j0, m, h, w);
      for (int j = 0; j < m; ++j)
        rho += mass(nb.src(j0 + j)) * w[j];
    }
    return rho;
  }
};

// The CPU walk's tree: the problem's leafSize, else leaves of up to 3072 / K
// points, 48 to 192 (N_max^(0) of §II-C; the results do not depend on it).
// Small K gain most from larger leaves: each source leaf is then visited once
// for more queries, and the seed is mostly the own leaf; large K lose (more
// candidates per query than the leaf saves). The seed's guess is carried
// across leaves (its full ranking is rare), so small K gain up to 192 points
// and lose beyond.
template <class T>
TreeBuildOptions knnTreeOptions(const KnnProblem<T>& problem)
{
  TreeBuildOptions options;
  options.leafSize = problem.leafSize > 0
    ? problem.leafSize
    : std::clamp(3072 / std::max(problem.k, 1), kLeafSize, 192);
  return options;
}

// The source masses in tree order where densities are asked for (each is
// read by about K queries there), else none.
template <class T>
UninitialisedVector<double> sortedMasses(
  const SortedPoints<T>& sources, const KnnProblem<T>& problem, const KnnResults<T>& results)
{
  UninitialisedVector<double> m;
  if (!problem.sourceMasses || !results.density)
    return m;
  const std::size_t n = sources.inputIndex.size();
  resizeHugePages(m, n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t t = 0; t < std::ptrdiff_t(n); ++t)
    m[std::size_t(t)] = problem.sourceMasses[sources.inputIndex[std::size_t(t)]];
  return m;
}

// KnnQueryRows' table: row q for the tree's query point of input index
// rows[q], none for the others (whose input indices are `inputIndex`, in the
// tree's query order).
UninitialisedVector<Index> queryRowTable(
  const std::vector<Index>& inputIndex, const Index* rows, std::size_t count)
{
  const std::size_t n = inputIndex.size();
  UninitialisedVector<Index> rowOfInput, table;
  assignOnHugePages(rowOfInput, n, KnnQueryRows::kSourceOnly);
  for (std::size_t q = 0; q < count; ++q)
    rowOfInput[rows[q]] = Index(q);
  resizeHugePages(table, n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t t = 0; t < std::ptrdiff_t(n); ++t)
    table[std::size_t(t)] = rowOfInput[inputIndex[std::size_t(t)]];
  return table;
}

// The node planes, then LeafToLeaf per parent of the leaves into `writer`.
template <class T, class Metric>
void knnWalk(const ZTree<T>& tree, const KnnProblem<T>& problem, const Metric& metric,
  KnnOutputWriter<T>& writer, RunInfo& info, const RunControl& control)
{
  using Policy = KnnLeafSearch<T, Metric, KnnOutputWriter<T>>;
  const int threads = knnWalkThreads(control);
  Policy policy(tree, problem.k, metric, threads, &writer.keys, writer.rows, writer);
  DualWalk<T, Policy> walk(tree, policy, threads, &info);
  StageTimer nodeTimer(&info, "node walks");
  const auto parents = knnWalkAboveLeaves(walk, policy, control);
  nodeTimer.stop();

  StageTimer leafTimer(&info, "leaf walk");
  walk.leafPass(parents, progressSpan(control, 0.4, 0.6));
}
} // namespace

template <class T>
void knnCpu(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control)
{
  const bool self = problem.queries == nullptr;
  const std::size_t numQueries =
    self ? std::min(problem.numSources, problem.numSelfQueries) : problem.numQueries;
  if (numQueries == 0)
    return;

  // The tree build runs on OpenMP's default team: give it the caller's count.
  const int threadsBefore = omp_get_max_threads();
  omp_set_num_threads(knnWalkThreads(control));
  struct RestoreThreads
  {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{ threadsBefore };

  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  ZTree<T> tree;
  {
    StageTimer timer(&info, "sort+tree");
    RunControl buildControl;
    buildControl.progress = progressSpan(control, 0, 0.3);
    buildTreeCpu(problem.sources, Index(problem.numSources), problem.queries, Index(numQueries),
      per, problem.boxLo, knnTreeOptions(problem), tree, buildControl, &info);
    orderRunsByKey(tree, problem.sourceIds);
  }

  // Keys that break distance ties: global ids when given, else input indices.
  const SourceKeys keys{ problem.sourceIds, tree.sources.inputIndex.data() };
  KnnQueryRows rows{ tree.queryPoints().inputIndex.data() };
  UninitialisedVector<Index> rowTable;
  if (self && problem.selfQueryIndices)
  {
    rowTable = queryRowTable(tree.queryPoints().inputIndex, problem.selfQueryIndices, numQueries);
    rows.table = rowTable.data();
  }
  else if (self)
  {
    rows.limit = Index(numQueries);
  }
  const UninitialisedVector<double> masses = sortedMasses(tree.sources, problem, results);
  KnnOutputWriter<T> writer{ problem, results, tree.sources, rows, keys,
    masses.empty() ? nullptr : masses.data() };
  // Neighbours come in rank order: densities are summed in rank order on
  // every backend, so they do not depend on whether lists were asked for, or
  // on the backend.
  withBoxMetric(
    per, [&](const auto& metric) { knnWalk(tree, problem, metric, writer, info, control); });
}

namespace
{
// For its lifetime, OpenMP's default team (the tree build's) has the
// caller's thread count.
class WalkThreadsScope
{
public:
  explicit WalkThreadsScope(const RunControl& control)
    : before_(omp_get_max_threads())
  {
    omp_set_num_threads(knnWalkThreads(control));
  }
  ~WalkThreadsScope() { omp_set_num_threads(before_); }

private:
  int before_;
};
} // namespace

// The distributed kNN's local search (src/knn/KnnPhases.cpp): the
// tree knnCpu would build, built once so that the caller can read its leaves
// too (the ghost regions), then searched by knnCpuOnTree.
template <class T>
void buildKnnTreeCpu(const KnnProblem<T>& problem, ZTree<T>& tree, const RunControl& control)
{
  const WalkThreadsScope threads(control);
  const bool self = problem.queries == nullptr;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  buildTreeCpu(problem.sources, Index(problem.numSources), problem.queries,
    Index(self ? 0 : problem.numQueries), per, problem.boxLo, knnTreeOptions(problem), tree,
    RunControl());
  if (!tree.planes.empty())
    orderRunsByKey(tree, problem.sourceIds);
}

template <class T>
void knnCpuOnTree(const ZTree<T>& tree, const KnnProblem<T>& problem, const KnnResults<T>& results,
  RunInfo& info, const RunControl& control)
{
  const bool self = problem.queries == nullptr;
  if ((self ? problem.numSources : problem.numQueries) == 0)
    return;
  const WalkThreadsScope threads(control);
  const SourceKeys keys{ problem.sourceIds, tree.sources.inputIndex.data() };
  const KnnQueryRows rows{ tree.queryPoints().inputIndex.data() };
  const UninitialisedVector<double> masses = sortedMasses(tree.sources, problem, results);
  KnnOutputWriter<T> writer{ problem, results, tree.sources, rows, keys,
    masses.empty() ? nullptr : masses.data() };
  withBoxMetric(tree.periodicity,
    [&](const auto& metric) { knnWalk(tree, problem, metric, writer, info, control); });
}

template void knnCpu<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCpu<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
template void buildKnnTreeCpu<float>(const KnnProblem<float>&, ZTree<float>&, const RunControl&);
template void buildKnnTreeCpu<double>(const KnnProblem<double>&, ZTree<double>&, const RunControl&);
template void knnCpuOnTree<float>(const ZTree<float>&, const KnnProblem<float>&,
  const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCpuOnTree<double>(const ZTree<double>&, const KnnProblem<double>&,
  const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
