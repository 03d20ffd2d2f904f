// The kNN dual tree walk on the CPU (paper section III): per plane FindRmax,
// Count and Insert over interaction lists sorted by lower bound, then
// LeafToLeaf with a per-point candidate heap, reduced straight into the
// caller's output arrays in input order.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

#include <omp.h>

#include "../KnnBackends.h"
#include "InteractionList.h"
#include "jz/DensityKernels.h"
#include "jz/Geometry.h"
#include "jz/NeighborHeap.h"
#include "jz/Tree.h"

namespace jz
{
namespace
{
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0)
{
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Collects per-node lists from OpenMP threads and stitches them into one
// interaction list in node order.
class ListBuilder
{
public:
  explicit ListBuilder(Index nodes)
    : counts_(nodes, 0)
    , begins_(nodes, 0)
    , owner_(nodes, -1)
    , threads_(omp_get_max_threads())
  {
  }

  struct ThreadBuffer
  {
    std::vector<Index> source;
    std::vector<double> low2;
  };

  ThreadBuffer& buffer() { return threads_[omp_get_thread_num()]; }

  // Records that the entries [begin, end) of this thread's buffer belong to node.
  void close(Index node, std::size_t begin)
  {
    const int t = omp_get_thread_num();
    counts_[node] = threads_[t].source.size() - begin;
    begins_[node] = begin;
    owner_[node] = t;
  }

  InteractionList finish()
  {
    InteractionList list;
    const Index nodes = Index(counts_.size());
    list.split.resize(std::size_t(nodes) + 1);
    list.split[0] = 0;
    for (Index i = 0; i < nodes; ++i) list.split[i + 1] = list.split[i] + counts_[i];
    list.source.resize(list.split[nodes]);
    list.low2.resize(list.split[nodes]);
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)nodes; ++i)
    {
      if (owner_[i] < 0) continue;
      const ThreadBuffer& b = threads_[owner_[i]];
      std::copy_n(b.source.begin() + begins_[i], counts_[i], list.source.begin() + list.split[i]);
      std::copy_n(b.low2.begin() + begins_[i], counts_[i], list.low2.begin() + list.split[i]);
    }
    return list;
  }

private:
  std::vector<std::size_t> counts_;
  std::vector<std::size_t> begins_;
  std::vector<int> owner_;
  std::vector<ThreadBuffer> threads_;
};

template <class T>
class KnnWalkCpu
{
public:
  KnnWalkCpu(const ZTree<T>& tree, int k, const RunControl& control)
    : tree_(tree)
    , k_(k)
    , control_(control)
  {
  }

  // Node-to-node interactions of plane p (Algorithm 2): from the parents'
  // list to the list of plane p, and the radius bound of every node.
  InteractionList nodeToNode(int p, const std::vector<Index>& parentChildSplit,
    const InteractionList& parents, std::vector<double>& rmax2)
  {
    const TreePlane<T>& plane = tree_.planes[p];
    const Periodicity& per = tree_.periodicity;
    const Index numParents = Index(parentChildSplit.size() - 1);
    rmax2.assign(plane.numNodes(), kInfinity);
    ListBuilder builder(plane.numNodes());
#pragma omp parallel
    {
      std::vector<RadiusOfCountHeap> heaps;
      std::vector<std::pair<double, Index>> pending;
#pragma omp for schedule(dynamic, 4)
      for (long long pi = 0; pi < (long long)numParents; ++pi)
      {
        const Index c0 = parentChildSplit[pi], c1 = parentChildSplit[pi + 1];
        heaps.resize(c1 - c0);
        for (Index c = c0; c < c1; ++c) heaps[c - c0].init(k_);
        // FindRmax (Algorithm 3).
        double worst = kInfinity;
        for (std::size_t e = parents.split[pi]; e < parents.split[pi + 1]; ++e)
        {
          if (parents.low2[e] > worst) break; // early exit of section III-D
          const Index pj = parents.source[e];
          for (Index d = parentChildSplit[pj]; d < parentChildSplit[pj + 1]; ++d)
          {
            const Index ns = plane.numSources(d);
            if (ns == 0) continue;
            const Box<T>& sb = plane.sourceBox[d];
            for (Index c = c0; c < c1; ++c)
            {
              if (plane.numQueries(c) == 0) continue;
              RadiusOfCountHeap& h = heaps[c - c0];
              const double r2 = boxDistanceHigh2(tree_.queryBox(p, c), sb, per);
              if (r2 < h.radius2()) h.insert(r2, ns);
            }
          }
          worst = 0;
          for (Index c = c0; c < c1; ++c)
            if (plane.numQueries(c) > 0) worst = std::max(worst, heaps[c - c0].radius2());
        }
        for (Index c = c0; c < c1; ++c) rmax2[c] = heaps[c - c0].radius2();

        // Count and Insert, one pass per receiving child on the CPU.
        ListBuilder::ThreadBuffer& out = builder.buffer();
        for (Index c = c0; c < c1; ++c)
        {
          if (plane.numQueries(c) == 0) continue;
          const Box<T>& qb = tree_.queryBox(p, c);
          const double r2 = rmax2[c];
          pending.clear();
          for (std::size_t e = parents.split[pi]; e < parents.split[pi + 1]; ++e)
          {
            if (parents.low2[e] > r2) break;
            const Index pj = parents.source[e];
            for (Index d = parentChildSplit[pj]; d < parentChildSplit[pj + 1]; ++d)
            {
              if (plane.numSources(d) == 0) continue;
              const double l2 = boxDistanceLow2(qb, plane.sourceBox[d], per);
              if (l2 <= r2) pending.emplace_back(l2, d);
            }
          }
          std::sort(pending.begin(), pending.end());
          const std::size_t begin = out.source.size();
          for (const auto& pr : pending)
          {
            out.source.push_back(pr.second);
            out.low2.push_back(pr.first);
          }
          builder.close(c, begin);
        }
      }
    }
    return builder.finish();
  }

  // Leaf-to-leaf interactions: the exact K nearest sources of every query
  // point, handed to `reduce(queryIndex, heap)` in z-order of the queries.
  template <class Reduce>
  void leafToLeaf(const InteractionList& leaves, const std::vector<double>& rmax2,
    const GlobalId* sourceKeys, Reduce reduce)
  {
    const TreePlane<T>& plane = tree_.planes[0];
    const Periodicity& per = tree_.periodicity;
    const SortedPoints<T>& src = tree_.sources;
    const SortedPoints<T>& qry = tree_.queryPoints();
    const Index numLeaves = plane.numNodes();
    std::atomic<Index> done(0);
    std::atomic<bool> aborted(false);
    const int k = k_;
#pragma omp parallel
    {
      std::vector<double> d2(k);
      std::vector<Index> ids(k);
      std::vector<double> cand(kLeafSize * 4);
#pragma omp for schedule(dynamic, 8)
      for (long long c = 0; c < (long long)numLeaves; ++c)
      {
        if (aborted.load(std::memory_order_relaxed)) continue;
        const std::size_t e0 = leaves.split[c], e1 = leaves.split[c + 1];
        for (Index q = plane.querySplit[c]; q < plane.querySplit[c + 1]; ++q)
        {
          const T p[3] = { qry.x[q], qry.y[q], qry.z[q] };
          NeighborHeap heap;
          heap.init(d2.data(), ids.data(), sourceKeys, k, rmax2[c]);
          for (std::size_t e = e0; e < e1; ++e)
          {
            const double w2 = heap.worst2() * (1 + kBoundSlack);
            if (leaves.low2[e] > w2) break;
            const Index leaf = leaves.source[e];
            if (pointBoxDistance2(p, plane.sourceBox[leaf], per) > w2) continue;
            const Index s0 = plane.sourceSplit[leaf], s1 = plane.sourceSplit[leaf + 1];
            if (cand.size() < s1 - s0) cand.resize(s1 - s0);
            scanLeaf(p, src, s0, s1, per, cand.data());
            for (Index s = s0; s < s1; ++s)
            {
              if (heap.accepts(cand[s - s0], s)) heap.push(cand[s - s0], s);
            }
          }
          reduce(q, heap);
        }
        const Index finished = done.fetch_add(1, std::memory_order_relaxed) + 1;
        if (omp_get_thread_num() == 0 && control_.progress && (finished & 255) == 0)
        {
          if (!control_.progress(double(finished) / numLeaves)) aborted = true;
        }
      }
    }
    if (aborted) throw Aborted();
  }

private:
  // Squared distances from p to sorted sources [s0, s1), in double.
  static void scanLeaf(const T* p, const SortedPoints<T>& src, Index s0, Index s1,
    const Periodicity& per, double* out)
  {
    const double px = p[0], py = p[1], pz = p[2];
    const T* xs = src.x.data();
    const T* ys = src.y.data();
    const T* zs = src.z.data();
    const Index n = s1 - s0;
    if (!per.enabled())
    {
#pragma omp simd
      for (Index i = 0; i < n; ++i)
      {
        const double dx = double(xs[s0 + i]) - px;
        const double dy = double(ys[s0 + i]) - py;
        const double dz = double(zs[s0 + i]) - pz;
        out[i] = dx * dx + dy * dy + dz * dz;
      }
    }
    else
    {
      for (Index i = 0; i < n; ++i)
      {
        const T s[3] = { xs[s0 + i], ys[s0 + i], zs[s0 + i] };
        out[i] = distance2(p, s, per);
      }
    }
  }

  const ZTree<T>& tree_;
  int k_;
  const RunControl& control_;
};
} // namespace

template <class T>
void knnCpu(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control)
{
  const int threadsBefore = omp_get_max_threads();
  if (control.numThreads > 0) omp_set_num_threads(control.numThreads);
  struct RestoreThreads
  {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{ threadsBefore };

  const bool self = problem.queries == nullptr;
  const std::size_t numQueries = self ? problem.numSources : problem.numQueries;
  if (numQueries == 0) return;

  Periodicity per;
  if (problem.periodic)
  {
    for (int d = 0; d < 3; ++d) per.length[d] = problem.boxHi[d] - problem.boxLo[d];
  }
  auto t0 = Clock::now();
  ZTree<T> tree;
  RunControl buildControl;
  if (control.progress)
  {
    buildControl.progress = [&](double f) { return control.progress(0.3 * f); };
  }
  buildTreeCpu(problem.sources, Index(problem.numSources), problem.queries, Index(numQueries),
    per, problem.boxLo, TreeBuildOptions(), tree, buildControl);
  info.stageSeconds.emplace_back("sort+tree", secondsSince(t0));

  // Keys that break distance ties: global ids when given, else input indices.
  const SortedPoints<T>& src = tree.sources;
  std::vector<GlobalId> keys(src.size());
#pragma omp parallel for schedule(static)
  for (long long s = 0; s < (long long)src.size(); ++s)
  {
    const Index in = src.inputIndex[s];
    keys[s] = problem.sourceIds ? problem.sourceIds[in] : GlobalId(in);
  }

  t0 = Clock::now();
  KnnWalkCpu<T> walk(tree, problem.k, control);
  const int numPlanes = int(tree.planes.size());
  const Index topNodes = tree.planes[numPlanes - 1].numNodes();
  std::vector<Index> parentSplit = superNodeSplit(topNodes, 32);
  InteractionList list = InteractionList::dense(Index(parentSplit.size() - 1));
  std::vector<double> rmax2;
  for (int p = numPlanes - 1; p >= 0; --p)
  {
    list = walk.nodeToNode(p, parentSplit, list, rmax2);
    info.counters.emplace_back("interactions plane " + std::to_string(p), double(list.size()));
    if (p > 0) parentSplit = tree.planes[p].childSplit;
    if (control.progress && !control.progress(0.3 + 0.1 * (numPlanes - p) / numPlanes))
      throw Aborted();
  }
  info.stageSeconds.emplace_back("node walks", secondsSince(t0));

  // LeafToLeaf, reduced per query point into the outputs (input order).
  t0 = Clock::now();
  const int k = problem.k;
  const SortedPoints<T>& qry = tree.queryPoints();
  RunControl leafControl;
  if (control.progress)
  {
    leafControl.progress = [&](double f) { return control.progress(0.4 + 0.6 * f); };
  }
  KnnWalkCpu<T> leafWalk(tree, k, leafControl);
  leafWalk.leafToLeaf(list, rmax2, keys.data(), [&](Index q, const NeighborHeap& heap) {
    const std::size_t out = qry.inputIndex[q];
    const double h2 = heap.d2[k - 1];
    const double h = std::sqrt(h2);
    if (results.smoothingLength) results.smoothingLength[out] = T(h);
    if (results.density)
    {
      double rho = 0;
      if (results.estimator == DensityEstimator::TopHat)
      {
        double mass = 0;
        for (int j = 0; j < k; ++j)
          mass += problem.sourceMasses ? problem.sourceMasses[src.inputIndex[heap.src[j]]] : 1.0;
        rho = h > 0 ? topHatDensity(mass, h) : kInfinity;
      }
      else if (h > 0)
      {
        for (int j = 0; j < k; ++j)
        {
          const double m =
            problem.sourceMasses ? problem.sourceMasses[src.inputIndex[heap.src[j]]] : 1.0;
          rho += m * cubicSplineW(std::sqrt(heap.d2[j]), h);
        }
      }
      else
      {
        rho = kInfinity; // all K neighbours coincide with the point
      }
      results.density[out] = T(rho);
    }
    if (results.neighborIds)
    {
      for (int j = 0; j < k; ++j) results.neighborIds[out * k + j] = keys[heap.src[j]];
    }
    if (results.neighborDistances)
    {
      for (int j = 0; j < k; ++j) results.neighborDistances[out * k + j] = T(std::sqrt(heap.d2[j]));
    }
  });
  info.stageSeconds.emplace_back("leaf walk", secondsSince(t0));
}

template void knnCpu<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCpu<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
