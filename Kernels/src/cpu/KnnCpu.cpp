// The kNN dual tree walk on the CPU (§III): per plane FindRmax,
// Count and Insert over interaction lists sorted by lower bound, then
// LeafToLeaf with a per-point candidate heap, reduced straight into the
// caller's output arrays in input order.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include <omp.h>

#include "../KnnBackends.h"
#include "CandidateBuffer.h"
#include "InteractionList.h"
#include "LeafDistances.h"
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

template <class T>
class KnnWalkCpu
{
public:
  KnnWalkCpu(const ZTree<T>& tree, int k, const RunControl& control, bool sortedNeighbors = true,
    Index queryLimit = Index(-1))
    : tree_(tree)
    , k_(k)
    , control_(control)
    , wantSortedNeighbors_(sortedNeighbors)
    , queryLimit_(queryLimit)
  {
  }

  // Node-to-node interactions of plane p (Algorithm 2): from the parents'
  // list to the list of plane p, and the radius bound of every node.
  InteractionList nodeToNode(int p, const std::vector<Index>& parentChildSplit,
    const InteractionList& parents, std::vector<double>& rmax2)
  {
    return tree_.periodicity.enabled() ? nodeToNodeImpl<true>(p, parentChildSplit, parents, rmax2)
                                       : nodeToNodeImpl<false>(p, parentChildSplit, parents, rmax2);
  }

private:
  template <bool Periodic>
  static double low2(const Box<T>& a, const Box<T>& b, const Periodicity& per)
  {
    return Periodic ? boxDistanceLow2(a, b, per) : boxDistanceLow2Plain(a, b);
  }
  template <bool Periodic>
  static double high2(const Box<T>& a, const Box<T>& b, const Periodicity& per)
  {
    return Periodic ? boxDistanceHigh2(a, b, per) : boxDistanceHigh2Plain(a, b);
  }

  // FindRmax (Algorithm 3) for the children of parent pi on plane p: the
  // K-th neighbour radius bound (squared) of each, into rmax2[c].
  template <bool Periodic>
  void findRmax(int p, long long pi, const std::vector<Index>& parentChildSplit,
    const InteractionList& parents, std::vector<RadiusOfCountHeap>& heaps, double* rmax2) const
  {
    const TreePlane<T>& plane = tree_.planes[p];
    const Periodicity& per = tree_.periodicity;
    const Index c0 = parentChildSplit[pi], c1 = parentChildSplit[pi + 1];
    heaps.resize(c1 - c0);
    for (Index c = c0; c < c1; ++c)
      heaps[c - c0].init(k_);
    double worst = kInfinity;
    for (std::size_t e = parents.split[pi]; e < parents.split[pi + 1]; ++e)
    {
      if (parents.low2[e] > worst)
        break; // early exit of section III-D
      const Index pj = parents.source[e];
      for (Index d = parentChildSplit[pj]; d < parentChildSplit[pj + 1]; ++d)
      {
        const Index ns = plane.numSources(d);
        if (ns == 0)
          continue;
        const Box<T>& sb = plane.sourceBox[d];
        for (Index c = c0; c < c1; ++c)
        {
          if (plane.numQueries(c) == 0)
            continue;
          RadiusOfCountHeap& h = heaps[c - c0];
          const double r2 = high2<Periodic>(tree_.queryBox(p, c), sb, per);
          if (r2 < h.radius2())
            h.insert(r2, ns);
        }
      }
      worst = 0;
      for (Index c = c0; c < c1; ++c)
        if (plane.numQueries(c) > 0)
          worst = std::max(worst, heaps[c - c0].radius2());
    }
    for (Index c = c0; c < c1; ++c)
      rmax2[c - c0] = heaps[c - c0].radius2();
  }

  // Count/Insert: visits the children d of the source parents of parent pi
  // whose lower bound to child c is within r2, in list order.
  template <bool Periodic, class Visit>
  void forCandidates(int p, long long pi, Index c, double r2,
    const std::vector<Index>& parentChildSplit, const InteractionList& parents, Visit&& visit) const
  {
    const TreePlane<T>& plane = tree_.planes[p];
    const Box<T>& qb = tree_.queryBox(p, c);
    for (std::size_t e = parents.split[pi]; e < parents.split[pi + 1]; ++e)
    {
      if (parents.low2[e] > r2)
        break;
      const Index pj = parents.source[e];
      for (Index d = parentChildSplit[pj]; d < parentChildSplit[pj + 1]; ++d)
      {
        if (plane.numSources(d) == 0)
          continue;
        const double l2 = low2<Periodic>(qb, plane.sourceBox[d], tree_.periodicity);
        if (l2 <= r2)
          visit(d, l2);
      }
    }
  }

  template <bool Periodic>
  InteractionList nodeToNodeImpl(int p, const std::vector<Index>& parentChildSplit,
    const InteractionList& parents, std::vector<double>& rmax2)
  {
    const TreePlane<T>& plane = tree_.planes[p];
    const Index numParents = Index(parentChildSplit.size() - 1);
    const Index nodes = plane.numNodes();
    rmax2.assign(nodes, kInfinity);
    InteractionList list;
    list.split.assign(std::size_t(nodes) + 1, 0);
    // FindRmax and Count.
#pragma omp parallel
    {
      std::vector<RadiusOfCountHeap> heaps;
#pragma omp for schedule(dynamic, 4)
      for (long long pi = 0; pi < (long long)numParents; ++pi)
      {
        const Index c0 = parentChildSplit[pi];
        findRmax<Periodic>(p, pi, parentChildSplit, parents, heaps, &rmax2[c0]);
        for (Index c = c0; c < parentChildSplit[pi + 1]; ++c)
        {
          if (plane.numQueries(c) == 0)
            continue;
          std::size_t count = 0;
          forCandidates<Periodic>(
            p, pi, c, rmax2[c], parentChildSplit, parents, [&](Index, double) { ++count; });
          list.split[c + 1] = count;
        }
      }
    }
    // CumulativeSum, then Insert each node's list sorted by its lower bounds.
    for (Index c = 0; c < nodes; ++c)
      list.split[c + 1] += list.split[c];
    list.source.resize(list.split[nodes]);
    list.low2.resize(list.split[nodes]);
#pragma omp parallel
    {
      std::vector<std::pair<double, Index>> pending;
#pragma omp for schedule(dynamic, 4)
      for (long long pi = 0; pi < (long long)numParents; ++pi)
      {
        for (Index c = parentChildSplit[pi]; c < parentChildSplit[pi + 1]; ++c)
        {
          if (plane.numQueries(c) == 0)
            continue;
          pending.clear();
          forCandidates<Periodic>(p, pi, c, rmax2[c], parentChildSplit, parents,
            [&](Index d, double l2) { pending.emplace_back(l2, d); });
          std::sort(pending.begin(), pending.end());
          std::size_t at = list.split[c];
          for (const auto& pr : pending)
          {
            list.source[at] = pr.second;
            list.low2[at] = InteractionList::lowerBound(pr.first);
            ++at;
          }
        }
      }
    }
    return list;
  }

public:
  // The leaf plane, fused: for every parent of the leaves, FindRmax of its
  // leaves, then each leaf's interaction list (sorted by lower bound) built
  // and consumed at once by LeafToLeaf, so no leaf-level list is ever stored.
  // The exact K nearest sources of every query point are handed to
  // `reduce(queryIndex, candidates)`.
  template <class Reduce>
  void leafToLeaf(const std::vector<Index>& parentChildSplit, const InteractionList& parents,
    const SourceKeys* sourceKeys, Reduce reduce)
  {
    if (tree_.periodicity.enabled())
      leafToLeafImpl<true>(parentChildSplit, parents, sourceKeys, reduce);
    else
      leafToLeafImpl<false>(parentChildSplit, parents, sourceKeys, reduce);
  }

  // The K-th neighbour radius bound (squared) of every leaf.
  // The K-th neighbour radius bound (squared) of every leaf: the smaller of
  // FindRmax's node bound and, for every query of the leaf, the K-th smallest
  // distance to the sources of its own leaf and the leaves next to it in
  // z-order (any K sources bound the K-th neighbour distance; this one is
  // much tighter than the node bound, so fewer ghosts need sending).
  std::vector<double> leafRadius2(
    const std::vector<Index>& parentChildSplit, const InteractionList& parents)
  {
    const TreePlane<T>& plane = tree_.planes[0];
    const Index numLeaves = plane.numNodes();
    std::vector<double> rmax2(numLeaves, kInfinity);
    const Index numParents = Index(parentChildSplit.size() - 1);
    const Periodicity& per = tree_.periodicity;
    const T periods[3] = { T(per.length[0]), T(per.length[1]), T(per.length[2]) };
    const T* periodsOrNull = per.enabled() ? periods : nullptr;
    const FilterMargin margin = FilterMargin::of(tree_);
    const SortedPoints<T>& src = tree_.sources;
    const SortedPoints<T>& qry = tree_.queryPoints();
    const Index k = Index(k_);
#pragma omp parallel
    {
      std::vector<RadiusOfCountHeap> heaps;
      std::vector<T> d2;
#pragma omp for schedule(dynamic, 4)
      for (long long pi = 0; pi < (long long)numParents; ++pi)
      {
        if (per.enabled())
          findRmax<true>(0, pi, parentChildSplit, parents, heaps, &rmax2[parentChildSplit[pi]]);
        else
          findRmax<false>(0, pi, parentChildSplit, parents, heaps, &rmax2[parentChildSplit[pi]]);
        for (Index c = parentChildSplit[pi]; c < parentChildSplit[pi + 1]; ++c)
        {
          const Index q0 = plane.querySplit[c], nq = plane.querySplit[c + 1] - q0;
          if (nq == 0)
            continue;
          // The leaf and its z-order neighbours, until 2K sources are pooled.
          Index lo = c, hi = c + 1, pooled = plane.numSources(c);
          while (pooled < 2 * k && (lo > 0 || hi < numLeaves))
          {
            if (hi < numLeaves)
              pooled += plane.numSources(hi++);
            if (pooled < 2 * k && lo > 0)
              pooled += plane.numSources(--lo);
          }
          if (pooled < k)
            continue;
          const Index s0 = plane.sourceSplit[lo], n = plane.sourceSplit[hi] - s0;
          if (d2.size() < n)
            d2.resize(n);
          double worst = 0;
          for (Index q = q0; q < q0 + nq; ++q)
          {
            const T p[3] = { qry.x[q], qry.y[q], qry.z[q] };
            leafDistances2(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, n, p,
              periodsOrNull, d2.data());
            std::nth_element(d2.begin(), d2.begin() + (k - 1), d2.begin() + n);
            worst = std::max(worst, margin.widen(double(d2[k - 1])));
          }
          rmax2[c] = std::min(rmax2[c], worst * (1 + kBoundSlack));
        }
      }
    }
    return rmax2;
  }

private:
  template <bool Periodic>
  static double exactDistance2(const T* p, const T* s, const Periodicity& per)
  {
    if (Periodic)
      return distance2(p, s, per);
    const double dx = double(s[0]) - double(p[0]);
    const double dy = double(s[1]) - double(p[1]);
    const double dz = double(s[2]) - double(p[2]);
    return dx * dx + dy * dy + dz * dz;
  }

  template <bool Periodic, class Reduce>
  void leafToLeafImpl(const std::vector<Index>& parentChildSplit, const InteractionList& parents,
    const SourceKeys* sourceKeys, Reduce& reduce)
  {
    const TreePlane<T>& plane = tree_.planes[0];
    const Periodicity& per = tree_.periodicity;
    const SortedPoints<T>& src = tree_.sources;
    const SortedPoints<T>& qry = tree_.queryPoints();
    const Index numLeaves = plane.numNodes();
    const Index numParents = Index(parentChildSplit.size() - 1);
    const T periods[3] = { T(per.length[0]), T(per.length[1]), T(per.length[2]) };
    const T* periodsOrNull = Periodic ? periods : nullptr;
    const FilterMargin margin = FilterMargin::of(tree_);
    std::atomic<Index> done(0);
    std::atomic<bool> aborted(false);
    const int k = k_;
#pragma omp parallel
    {
      std::vector<RadiusOfCountHeap> heaps;
      std::vector<double> rmax2;
      std::vector<std::pair<double, Index>> entries;
      // One candidate buffer per query point of the leaf: the source leaves
      // of the interaction list are visited once for all of them, so their
      // points stay in cache.
      std::vector<CandidateBuffer> buffers;
      std::vector<double> bound2;
      std::vector<T> filter2;
      std::vector<Index> active;
      std::vector<T> ownD2;
      std::vector<Index> survivors;
      const bool sorted = wantSortedNeighbors_;
#pragma omp for schedule(dynamic, 1)
      for (long long pi = 0; pi < (long long)numParents; ++pi)
      {
        if (aborted.load(std::memory_order_relaxed))
          continue;
        const Index c0 = parentChildSplit[pi], c1 = parentChildSplit[pi + 1];
        rmax2.resize(c1 - c0);
        findRmax<Periodic>(0, pi, parentChildSplit, parents, heaps, rmax2.data());
        for (Index c = c0; c < c1; ++c)
        {
          const Index q0 = plane.querySplit[c], nq = plane.querySplit[c + 1] - q0;
          if (nq == 0)
            continue;
          const double leafRmax2 = rmax2[c - c0];
          entries.clear();
          forCandidates<Periodic>(0, pi, c, leafRmax2, parentChildSplit, parents,
            [&](Index d, double l2) { entries.emplace_back(l2, d); });
          std::sort(entries.begin(), entries.end());

          if (buffers.size() < nq)
          {
            buffers.resize(nq);
            bound2.resize(nq);
            filter2.resize(nq + kSimdPadding);
            active.resize(nq);
          }
          for (Index q = 0; q < nq; ++q)
          {
            buffers[q].init(k, leafRmax2, sourceKeys);
            bound2[q] = leafRmax2 * (1 + kBoundSlack);
          }
          // A radius per query that provably holds K sources: the K-th
          // smallest (filter-precision) distance to the points of its own
          // leaf, with the filter's margin. Survivors are then few.
          const Index ownCount = plane.numSources(c);
          if (ownCount >= Index(k))
          {
            const Index s0 = plane.sourceSplit[c];
            if (ownD2.size() < ownCount)
              ownD2.resize(ownCount);
            for (Index q = 0; q < nq; ++q)
            {
              if (qry.inputIndex[q0 + q] >= queryLimit_)
                continue;
              const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
              leafDistances2(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, ownCount, p,
                periodsOrNull, ownD2.data());
              std::nth_element(ownD2.begin(), ownD2.begin() + (k - 1), ownD2.begin() + ownCount);
              buffers[q].setBound2(margin.widen(double(ownD2[k - 1])));
              bound2[q] = buffers[q].bound2() * (1 + kBoundSlack);
            }
          }
          // Filter radii in the points' precision with a generous margin;
          // survivors are ranked by their exact double distance.
          double leafBound2 = 0;
          for (Index q = 0; q < nq; ++q)
          {
            const double w2 = bound2[q];
            filter2[q] = w2 < 1e30 ? T(margin.widen(w2)) : std::numeric_limits<T>::max();
            if (qry.inputIndex[q0 + q] >= queryLimit_)
              filter2[q] = T(-1); // a source only
            else
              leafBound2 = std::max(leafBound2, w2);
          }
          for (const auto& entry : entries)
          {
            if (entry.first > leafBound2)
              break; // sorted: nothing closer follows
            const Index leaf = entry.second;
            const Box<T>& box = plane.sourceBox[leaf];
            const Index s0 = plane.sourceSplit[leaf], n = plane.sourceSplit[leaf + 1] - s0;
            if (survivors.size() < n)
              survivors.resize(n);
            const Index numActive = queriesNearBox(qry.x.data() + q0, qry.y.data() + q0,
              qry.z.data() + q0, nq, box.lo, box.hi, periodsOrNull, filter2.data(), active.data());
            for (Index a = 0; a < numActive; ++a)
            {
              const Index q = active[a];
              const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
              const Index m = leafCandidates(src.x.data() + s0, src.y.data() + s0,
                src.z.data() + s0, n, p, periodsOrNull, filter2[q], survivors.data());
              CandidateBuffer& buffer = buffers[q];
              const double before = buffer.bound2();
              for (Index j = 0; j < m; ++j)
              {
                const Index s = s0 + survivors[j];
                const T sp[3] = { src.x[s], src.y[s], src.z[s] };
                buffer.push(exactDistance2<Periodic>(p, sp, per), s);
              }
              if (buffer.bound2() < before)
              {
                const double w2 = buffer.bound2() * (1 + kBoundSlack);
                filter2[q] = T(margin.widen(w2));
              }
            }
          }
          for (Index q = 0; q < nq; ++q)
          {
            if (qry.inputIndex[q0 + q] >= queryLimit_)
              continue;
            buffers[q].finish(sorted);
            reduce(q0 + q, buffers[q]);
          }
        }
        const Index finished = done.fetch_add(c1 - c0, std::memory_order_relaxed) + (c1 - c0);
        if (omp_get_thread_num() == 0 && control_.progress)
        {
          if (!control_.progress(double(finished) / numLeaves))
            aborted = true;
        }
      }
    }
    if (aborted)
      throw Aborted();
  }

  const ZTree<T>& tree_;
  int k_;
  const RunControl& control_;
  bool wantSortedNeighbors_;
  // Query points with an input index at or above this only act as sources.
  Index queryLimit_;
};
// The node-to-node walks of the planes above the leaves (Algorithm 1, lines
// 1-5 without the last plane): the parents of the leaves and their
// interaction list.
template <class T>
InteractionList nodeWalksAboveLeaves(const ZTree<T>& tree, int k, const RunControl& control,
  std::vector<Index>& leafParentSplit, RunInfo* info)
{
  KnnWalkCpu<T> walk(tree, k, control);
  const int numPlanes = int(tree.planes.size());
  const Index topNodes = tree.planes[numPlanes - 1].numNodes();
  leafParentSplit = superNodeSplit(topNodes, 32);
  InteractionList list = InteractionList::dense(Index(leafParentSplit.size() - 1));
  std::vector<double> rmax2;
  for (int p = numPlanes - 1; p >= 1; --p)
  {
    list = walk.nodeToNode(p, leafParentSplit, list, rmax2);
    if (info)
      info->counters.emplace_back("interactions plane " + std::to_string(p), double(list.size()));
    leafParentSplit = tree.planes[p].childSplit;
    if (control.progress && !control.progress(0.3 + 0.1 * (numPlanes - p) / numPlanes))
      throw Aborted();
  }
  return list;
}
} // namespace

template <class T>
std::vector<double> knnLeafRadius2(const ZTree<T>& tree, int k, const RunControl& control)
{
  if (tree.planes.empty() || tree.planes[0].numNodes() == 0)
    return {};
  std::vector<Index> leafParentSplit;
  const InteractionList parents = nodeWalksAboveLeaves(tree, k, control, leafParentSplit, nullptr);
  KnnWalkCpu<T> walk(tree, k, control);
  return walk.leafRadius2(leafParentSplit, parents);
}

template std::vector<double> knnLeafRadius2(const ZTree<float>&, int, const RunControl&);
template std::vector<double> knnLeafRadius2(const ZTree<double>&, int, const RunControl&);

template <class T>
void knnCpu(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control)
{
  const int threadsBefore = omp_get_max_threads();
  if (control.numThreads > 0)
    omp_set_num_threads(control.numThreads);
  struct RestoreThreads
  {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{ threadsBefore };

  const bool self = problem.queries == nullptr;
  const std::size_t numQueries =
    self ? std::min(problem.numSources, problem.numSelfQueries) : problem.numQueries;
  if (numQueries == 0)
    return;

  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  auto t0 = Clock::now();
  ZTree<T> tree;
  RunControl buildControl;
  if (control.progress)
  {
    buildControl.progress = [&](double f) { return control.progress(0.3 * f); };
  }
  buildTreeCpu(problem.sources, Index(problem.numSources), problem.queries, Index(numQueries), per,
    problem.boxLo, TreeBuildOptions(), tree, buildControl);
  info.stageSeconds.emplace_back("sort+tree", secondsSince(t0));

  // Keys that break distance ties: global ids when given, else input indices.
  const SortedPoints<T>& src = tree.sources;
  const SourceKeys keys{ problem.sourceIds, src.inputIndex.data() };

  t0 = Clock::now();
  std::vector<Index> leafParentSplit;
  const InteractionList parents =
    nodeWalksAboveLeaves(tree, problem.k, control, leafParentSplit, &info);
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
  // Neighbours in rank order when lists or densities are wanted: densities
  // are summed in rank order on every backend, so they do not depend on
  // whether lists were asked for, or on the backend.
  const bool lists = results.neighborIds || results.neighborDistances || results.density;
  const Index queryLimit = self ? Index(numQueries) : Index(-1);
  KnnWalkCpu<T> leafWalk(tree, k, leafControl, lists, queryLimit);
  leafWalk.leafToLeaf(leafParentSplit, parents, &keys,
    [&](Index q, const CandidateBuffer& nb)
    {
      const std::size_t out = qry.inputIndex[q];
      const double h2 = nb.d2(k - 1);
      const double h = std::sqrt(h2);
      if (results.smoothingLength)
        results.smoothingLength[out] = T(h);
      if (results.density)
      {
        double rho = 0;
        if (results.estimator == DensityEstimator::TopHat)
        {
          double mass = 0;
          for (int j = 0; j < k; ++j)
            mass += problem.sourceMasses ? problem.sourceMasses[src.inputIndex[nb.src(j)]] : 1.0;
          rho = h > 0 ? topHatDensity(mass, h) : kInfinity;
        }
        else if (h > 0)
        {
          for (int j = 0; j < k; ++j)
          {
            const double m =
              problem.sourceMasses ? problem.sourceMasses[src.inputIndex[nb.src(j)]] : 1.0;
            rho += m * cubicSplineW(std::sqrt(nb.d2(j)), h);
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
        for (int j = 0; j < k; ++j)
          results.neighborIds[out * k + j] = keys[nb.src(j)];
      }
      if (results.neighborDistances)
      {
        for (int j = 0; j < k; ++j)
          results.neighborDistances[out * k + j] = T(std::sqrt(nb.d2(j)));
      }
    });
  info.stageSeconds.emplace_back("leaf walk", secondsSince(t0));
}

template void knnCpu<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCpu<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
