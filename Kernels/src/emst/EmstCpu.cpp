// The EMST on the CPU: one tree, core distances from the kNN walk when the
// metric is mutual reachability, then Borůvka rounds (ArborX EMST paper §3),
// each a walk of the shared engine with the Borůvka policy
// (BoruvkaNodePolicy.h, BoruvkaLeafSearch.h): every component's lightest
// outgoing edge under the total order (weight, smaller id, larger id) joins
// the tree, until one component is left.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "emst/BoruvkaLeafSearch.h"
#include "emst/EmstBackends.h"
#include "jz/StageTimer.h"
#include "jz/Tree.h"
#include "knn/KnnLeafSearch.h"
#include "walk/BoxMetric.h"
#include "walk/DualWalk.h"
#include "walk/OrderRunsByKey.h"

namespace jz
{
namespace
{
struct EdgeOfTree
{
  Index a, b; // point indices
  double weight2;
};

// An edge found by the rounds: point indices; its weight is recomputed once
// at the end (exactly the value the search compared).
struct EdgeEnds
{
  Index a, b;
};

// The tree's edges before publishing: endpoints as input indices, weights.
struct FoundEdges
{
  std::vector<EdgeEnds> ends;
  std::vector<double> weight2;
};

// The squared weight of edge (a, b) of sorted points: the one formula the
// searches (BoruvkaLeafSearch.h) use, in the same operand order (a = query).
template <class T, class Metric>
double edgeWeight2(const BoruvkaWeights<T, Metric>& weights, Index a, Index b)
{
  T pa[3], pb[3];
  weights.tree.sources.point(a, pa);
  weights.tree.sources.point(b, pb);
  const double w = weights.metric.point2(pa, pb);
  return weights.core2 ? std::max(w, std::max(weights.core2[a], weights.core2[b])) : w;
}

// Per sorted point, of its k nearest other than itself, the two with the
// smallest keys, smallest first (kNoPoint where there are fewer).
constexpr int kCoreNeighbours = 2;

// Squared distance to the k-th nearest point, the point itself counted
// first (k = minSamples + 1), per sorted point; and its core neighbours.
template <class T, class Metric>
std::vector<double> coreDistances2(const ZTree<T>& tree, const Metric& metric, int k,
  const SourceKeys& keys, int threads, std::vector<Index>& neighbours)
{
  std::vector<double> core2(tree.sources.size());
  neighbours.assign(kCoreNeighbours * tree.sources.size(), kNoPoint);
  auto store = [&](Index q, const RankedNeighbors& nb)
  {
    core2[q] = nb.d2(k - 1);
    Index* low = &neighbours[kCoreNeighbours * std::size_t(q)];
    for (int i = 0; i < k; ++i)
    {
      Index s = nb.src(i);
      if (s == q)
        continue;
      for (int j = 0; j < kCoreNeighbours && s != kNoPoint; ++j)
        if (low[j] == kNoPoint || keys[s] < keys[low[j]])
          std::swap(s, low[j]);
    }
  };
  using Policy = KnnLeafSearch<T, Metric, decltype(store)>;
  Policy policy(
    tree, k, metric, threads, &keys, KnnQueryRows{ tree.queryPoints().inputIndex.data() }, store);
  DualWalk<T, Policy> walk(tree, policy, threads);
  walk.leafPass(walk.walkDownTo(1));
  return core2;
}

// Identical points are joined by weight-0 edges to the one with the smallest
// key: weight 0 occurs only between identical points, so in Kruskal's order
// (weight, smaller key, larger key) these star edges come first and span the
// run: they belong to the tree. Under mutual reachability this holds for a
// run whose core distance is 0 (at least minSamples + 1 copies); a shorter
// run's weights equal its core distance and tie with edges to its neighbours,
// whose ids decide, so it is left to the rounds (it has at most minSamples
// points). Without this a blob of m identical points costs O(m^2) per round.
// Identical points are consecutive in the exact z-order.
template <class T>
void joinDuplicates(const ZTree<T>& tree, const SourceKeys& keys, const double* core2,
  BoruvkaComponents<T>& sets, std::vector<EdgeEnds>& edges)
{
  const SortedPoints<T>& s = tree.sources;
  const Index n = s.size();
  for (Index b = 0; b < n;)
  {
    Index e = b + 1;
    while (e < n && s.x[e] == s.x[b] && s.y[e] == s.y[b] && s.z[e] == s.z[b])
      ++e;
    if (e - b > 1 && (!core2 || core2[b] == 0))
    {
      Index first = b;
      for (Index i = b + 1; i < e; ++i)
        if (keys[i] < keys[first])
          first = i;
      for (Index i = b; i < e; ++i)
        if (i != first && sets.unite(first, i))
          edges.push_back(EdgeEnds{ first, i });
    }
    b = e;
  }
}

template <class T, class Metric>
class BoruvkaRounds
{
public:
  // coreNeighbours: mutual reachability's (coreDistances2), freed after the
  // first round.
  BoruvkaRounds(const BoruvkaWeights<T, Metric>& weights, double maxWeight2, const SourceKeys& keys,
    int threads, RunInfo& info, std::vector<Index>* coreNeighbours = nullptr)
    : tree_(weights.tree)
    , weights_(weights)
    , keys_(keys)
    , threads_(threads)
    , info_(info)
    , comps_(weights.tree)
    , coreNeighbours_(coreNeighbours)
  {
    comps_.maxWeight2 = maxWeight2;
    if (!weights.core2)
      comps_.low2.assign(weights.tree.sources.size(), 0.0f);
  }

  // The tree's edges (sorted point indices), in no particular order.
  std::vector<EdgeEnds> run(const RunControl& control)
  {
    std::vector<EdgeEnds> edges;
    const Index n = tree_.sources.size();
    edges.reserve(n > 0 ? n - 1 : 0);
    joinDuplicates(tree_, keys_, weights_.core2, comps_, edges);
    int round = 0;
    for (;;)
    {
      comps_.relabel();
      if (comps_.count <= 1)
        break;
      reportProgress(control, 0.3 + 0.7 * double(edges.size()) / n);
      if (round == 0 && !weights_.core2 && n > kNearestRound)
        chooseFromNearest();
      if (round == 0 && weights_.core2 && coreNeighbours_)
        chooseFromCoreNeighbours();
      const Index settled = seedBounds();
      const Index searching = comps_.markSearching(weights_.core2);
      StageTimer roundTimer(&info_, "round " + std::to_string(round));
      if (searching > 0) // none: the round needs no walk
      {
        using Policy = BoruvkaLeafSearch<T, BoruvkaWeights<T, Metric>>;
        Policy policy(tree_, weights_, comps_, keys_, threads_);
        DualWalk<T, Policy> walk(tree_, policy, threads_);
        walk.leafPass(walk.walkDownTo(1));
      }
      roundTimer.stop();
      comps_.releaseBounds();
      const std::size_t before = edges.size();
      addLightestEdges(edges);
      info_.counters.emplace_back("components " + std::to_string(round), double(comps_.count));
      info_.counters.emplace_back("settled points " + std::to_string(round), double(settled));
      info_.counters.emplace_back("searching points " + std::to_string(round), double(searching));
      if (edges.size() == before)
      {
        if (comps_.maxWeight2 < kInfinity)
          break; // every component is final: the forest is complete
        throw Error("EMST: a Borůvka round added no edge (internal error)");
      }
      ++round;
    }
    info_.counters.emplace_back("boruvka rounds", double(round));
    return edges;
  }

private:
  // Neighbours of the first round's search (the point itself counted): the
  // first in another component is the point's choice, and the next
  // kSpareNeighbours after it are kept for later rounds (spareChoice).
  static constexpr int kSpareNeighbours = 2;
  static constexpr int kNearestRound = 2 + kSpareNeighbours;

  double weight2(Index a, Index b) const { return edgeWeight2(weights_, a, b); }

  // The first round from the kNN walk (Euclidean; small K costs a fraction
  // of a general round): for one point the edge order (weight, smaller key,
  // larger key) is the kNN order (distance, key of the other end), so the
  // first of its K nearest that lies in another component is its lightest
  // edge leaving its component, exactly what its search would find: the
  // point is settled (seedBounds). A point whose K nearest all lie in its own
  // component (runs of duplicates) searches in the round as before, and no
  // edge of it to another component is lighter than its K-th distance.
  void chooseFromNearest()
  {
    StageTimer timer(&info_, "nearest round");
    const std::vector<Index>& label = comps_.point;
    std::vector<Index>& choice = comps_.choice;
    std::vector<float>& low2 = comps_.low2;
    const double maxWeight2 = comps_.maxWeight2;
    spare_.assign(kSpareNeighbours * label.size(), kNoPoint);
    auto store = [&](Index q, const RankedNeighbors& nb)
    {
      for (int i = 0; i < kNearestRound; ++i)
        if (label[nb.src(i)] != label[q])
        {
          if (nb.d2(i) <= maxWeight2)
          {
            choice[q] = nb.src(i);
            for (int j = 0; j < kSpareNeighbours && i + 1 + j < kNearestRound; ++j)
              spare_[kSpareNeighbours * std::size_t(q) + j] = nb.src(i + 1 + j);
          }
          low2[q] = roundDownToFloat(nb.d2(i));
          return;
        }
      low2[q] = roundDownToFloat(nb.d2(kNearestRound - 1));
    };
    using Policy = KnnLeafSearch<T, Metric, decltype(store)>;
    const KnnQueryRows rows{ tree_.queryPoints().inputIndex.data() };
    Policy policy(tree_, kNearestRound, weights_.metric, threads_, &keys_, rows, store);
    DualWalk<T, Policy> walk(tree_, policy, threads_);
    walk.leafPass(walk.walkDownTo(1));
  }

  // Once q's choice lies in its own component: the first of its spare
  // neighbours (in kNN order) in another component. All before it lie in
  // q's component (the first round's choice was the first outside it, and
  // components only grow), and every point beyond the list follows it in
  // the edge order: it is q's lightest edge leaving its component, and q is
  // settled. When none is left, no such edge of q is lighter than the last
  // spare's weight (low2), and the spares are dropped. kNoPoint: q searches.
  Index spareChoice(Index q)
  {
    const std::vector<Index>& label = comps_.point;
    Index* spare = &spare_[kSpareNeighbours * std::size_t(q)];
    Index last = kNoPoint;
    for (int j = 0; j < kSpareNeighbours && spare[j] != kNoPoint; ++j)
    {
      last = spare[j];
      if (label[last] != label[q])
        return weight2(q, last) <= comps_.maxWeight2 ? last : kNoPoint;
    }
    if (last != kNoPoint)
      comps_.low2[q] = std::max(comps_.low2[q], roundDownToFloat(weight2(q, last)));
    spare[0] = kNoPoint;
    return kNoPoint;
  }

  // The first round under mutual reachability from the core distances'
  // kNN: no edge of q is lighter than core(q), and an edge to one of its
  // minSamples nearest, all within core(q), weighs core(q) exactly when that
  // neighbour's core distance is at most q's. Of those the one with the
  // smallest key is q's lightest edge (edges of one point order by the other
  // end's key; a point tied at the K-th distance outside the list has a key
  // above the whole list's): q is settled. Otherwise q searches as before.
  void chooseFromCoreNeighbours()
  {
    StageTimer timer(&info_, "core neighbours round");
    const std::vector<Index>& label = comps_.point;
    std::vector<Index>& choice = comps_.choice;
    const double* core2 = weights_.core2;
    const double maxWeight2 = comps_.maxWeight2;
    const Index* low = coreNeighbours_->data();
    const long long n = (long long)label.size();
#pragma omp parallel for schedule(dynamic, kChunk)
    for (long long q = 0; q < n; ++q)
      for (int j = 0; j < kCoreNeighbours; ++j)
      {
        const Index c = low[kCoreNeighbours * q + j];
        if (c == kNoPoint || core2[q] > maxWeight2)
          break;
        if (label[c] != label[q] && weight2(Index(q), c) == core2[q])
        {
          choice[q] = c;
          break;
        }
      }
    std::vector<Index>().swap(*coreNeighbours_);
  }

  // Neighbours in z-order from different components give every component a
  // first upper bound before the walk, and so do the points whose edge of the
  // last round still leaves their component: that edge is still their
  // lightest (exact: a search finds a point's lightest edge or, when it is
  // heavier than the bound, none), so they are settled and do not search;
  // so are the points with a spare neighbour outside (spareChoice).
  // Returns the number of settled points.
  Index seedBounds()
  {
    const std::vector<Index>& label = comps_.point;
    std::vector<Index>& choice = comps_.choice;
    float* bound2 = comps_.bound2.data();
    const long long n = (long long)label.size();
    const bool spares = !spare_.empty();
    Index settled = 0, fromSpares = 0, asked = 0;
#pragma omp parallel reduction(+ : settled, fromSpares, asked)
    {
#pragma omp for schedule(dynamic, kChunk) nowait
      for (long long q = 0; q < n; ++q)
      {
        if (choice[q] == kFinished)
          continue;
        if (choice[q] == kNoPoint || label[choice[q]] == label[q])
        {
          asked += spares;
          choice[q] = spares ? spareChoice(Index(q)) : kNoPoint;
          if (choice[q] == kNoPoint)
            continue;
          ++fromSpares;
        }
        ++settled;
        lowerBound(&bound2[label[q]], weight2(Index(q), choice[q]));
      }
#pragma omp for schedule(dynamic, kChunk)
      for (long long i = 0; i < n - 1; ++i)
      {
        if (label[i] == label[i + 1])
          continue;
        const double w = weight2(Index(i), Index(i + 1));
        lowerBound(&bound2[label[i]], w);
        lowerBound(&bound2[label[i + 1]], w);
      }
    }
    if (asked > 0 && fromSpares == 0)
      std::vector<Index>().swap(spare_); // they settle no one any more
    return settled;
  }

  // Per component the lightest of its points' choices; each joins the tree
  // unless the component at its other end chose the same edge first. The
  // weights are recomputed (exactly) rather than stored per point. The
  // labels are read before the first union turns them into parent links.
  // A component without a choice has no edge up to the maximum weight (its
  // initial bound): it is final.
  void addLightestEdges(std::vector<EdgeEnds>& edges)
  {
    const std::vector<Index>& label = comps_.point;
    const std::vector<Index>& choice = comps_.choice;
    const Index n = Index(label.size());
    // Per root; lives no longer than this, filled by the threads (no serial
    // first fill).
    const std::unique_ptr<Index[]> winner(new Index[n]);
#pragma omp parallel for schedule(dynamic, kChunk)
    for (long long i = 0; i < (long long)n; ++i)
      winner[i] = kNoPoint;
    // The minimum under a total order: the same whichever thread wins a race.
#pragma omp parallel for schedule(dynamic, kChunk)
    for (long long i = 0; i < (long long)n; ++i)
    {
      const Index q = Index(i);
      if (choice[q] == kNoPoint || choice[q] == kFinished)
        continue;
      Index* slot = &winner[label[q]];
      const double wq = weight2(q, choice[q]);
      Index w = __atomic_load_n(slot, __ATOMIC_RELAXED);
      while (w == kNoPoint ||
        emstEdgeLess(
          wq, keys_[q], keys_[choice[q]], weight2(w, choice[w]), keys_[w], keys_[choice[w]]))
        if (__atomic_compare_exchange_n(slot, &w, q, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
          break;
    }
    if (comps_.maxWeight2 < kInfinity)
#pragma omp parallel for schedule(dynamic, kChunk)
      for (long long q = 0; q < (long long)n; ++q)
        if (winner[label[q]] == kNoPoint)
          comps_.choice[q] = kFinished;
    for (Index r = 0; r < n; ++r)
    {
      const Index q = winner[r];
      if (q != kNoPoint && comps_.unite(q, choice[q]))
        edges.push_back(EdgeEnds{ q, choice[q] });
    }
  }

  const ZTree<T>& tree_;
  const BoruvkaWeights<T, Metric>& weights_;
  const SourceKeys& keys_;
  int threads_;
  RunInfo& info_;
  BoruvkaComponents<T> comps_;
  std::vector<Index>* coreNeighbours_; // mutual reachability, until the first round
  // Euclidean: per sorted point its kSpareNeighbours nearest after its first
  // round's choice (kNoPoint: none), while they settle points.
  std::vector<Index> spare_;
};

// The edges in the public order, endpoints as input indices, smaller key
// first: two halves sorted at once, then merged straight into the output by
// all threads, each from its own split of the two halves (the order is
// total: one result on any thread count). `found` is freed on the way, so
// the peak is one copy plus the output.
void publishEdges(FoundEdges& found, const GlobalId* ids, EmstEdges& out)
{
  auto key = [ids](Index i) { return ids ? ids[i] : GlobalId(i); };
  const long long m = (long long)found.ends.size();
  std::vector<EdgeOfTree> edges(found.ends.size());
#pragma omp parallel for schedule(dynamic, kChunk)
  for (long long i = 0; i < m; ++i)
  {
    EdgeOfTree& e = edges[i];
    e = EdgeOfTree{ found.ends[i].a, found.ends[i].b, found.weight2[i] };
    if (key(e.b) < key(e.a))
      std::swap(e.a, e.b);
  }
  found = FoundEdges{};
  auto less = [&](const EdgeOfTree& x, const EdgeOfTree& y)
  {
    if (x.weight2 != y.weight2)
      return x.weight2 < y.weight2;
    const GlobalId xa = key(x.a), ya = key(y.a);
    return xa != ya ? xa < ya : key(x.b) < key(y.b);
  };
  const EdgeOfTree* mid = edges.data() + m / 2;
  const int halves = omp_get_max_threads() > 1 && m > 4096 ? 2 : 1;
#pragma omp parallel for num_threads(halves) schedule(static, 1)
  for (int h = 0; h < 2; ++h)
    std::sort(h == 0 ? edges.begin() : edges.begin() + m / 2,
      h == 0 ? edges.begin() + m / 2 : edges.end(), less);
  out.from.resize(std::size_t(m));
  out.to.resize(std::size_t(m));
  out.weight2.resize(std::size_t(m));
  const EdgeOfTree* first = edges.data();
  const long long n1 = m / 2, n2 = m - m / 2;
  // The first k merged edges are first[0, i) and mid[0, k - i): the smallest
  // i whose first[i] follows mid[k - i - 1].
  auto split = [&](long long k)
  {
    long long lo = std::max(0LL, k - n2), hi = std::min(k, n1);
    while (lo < hi)
    {
      const long long i = (lo + hi) / 2;
      if (less(mid[k - i - 1], first[i]))
        hi = i;
      else
        lo = i + 1;
    }
    return lo;
  };
#pragma omp parallel if (m > 4096)
  {
    const long long parts = omp_get_num_threads(), t = omp_get_thread_num();
    const long long k0 = m * t / parts, k1 = m * (t + 1) / parts;
    long long i = split(k0), j = k0 - i;
    for (long long k = k0; k < k1; ++k)
    {
      const bool fromFirst = j >= n2 || (i < n1 && !less(mid[j], first[i]));
      const EdgeOfTree& e = fromFirst ? first[i++] : mid[j++];
      out.from[k] = e.a;
      out.to[k] = e.b;
      out.weight2[k] = e.weight2;
    }
  }
}

// v[i] moved to v[input[i]] in place (a second array would add 8 B/point to
// the peak, which is here): cycle by cycle, placed values marked by their
// sign bit (the values are squares, never negative; -0.0 marks a 0).
void toInputOrder(std::vector<double>& v, const Index* input)
{
  const Index n = Index(v.size());
  for (Index start = 0; start < n; ++start)
  {
    if (std::signbit(v[start]))
      continue;
    double carry = v[start];
    for (Index j = input[start];; j = input[j])
    {
      const double next = v[j];
      v[j] = -carry;
      if (j == start)
        break;
      carry = next;
    }
  }
  for (double& x : v)
    x = -x;
}

template <class T, class Metric>
FoundEdges emstWalks(const ZTree<T>& tree, const EmstProblem<T>& problem, const Metric& metric,
  const SourceKeys& keys, int threads, EmstEdges& out, RunInfo& info, const RunControl& control)
{
  const bool mutual = problem.metric == EmstMetric::MutualReachability;
  std::vector<double> core2;
  std::vector<Index> coreNeighbours;
  if (mutual)
  {
    StageTimer timer(&info, "core distances");
    core2 = coreDistances2(tree, metric, problem.minSamples + 1, keys, threads, coreNeighbours);
  }
  StageTimer timer(&info, "boruvka");
  const BoruvkaWeights<T, Metric> weights(tree, metric, mutual ? core2.data() : nullptr);
  FoundEdges found;
  const double maxWeight2 = problem.maxLength * problem.maxLength;
  found.ends = BoruvkaRounds<T, Metric>(
    weights, maxWeight2, keys, threads, info, mutual ? &coreNeighbours : nullptr)
                 .run(control);
  // The round state is gone: now the weights, then the endpoints as input
  // indices (the tree is freed before publishing).
  found.weight2.resize(found.ends.size());
  const Index* input = tree.sources.inputIndex.data();
#pragma omp parallel for schedule(dynamic, kChunk)
  for (long long i = 0; i < (long long)found.ends.size(); ++i)
  {
    EdgeEnds& e = found.ends[i];
    found.weight2[i] = edgeWeight2(weights, e.a, e.b);
    e = EdgeEnds{ input[e.a], input[e.b] };
  }
  if (mutual)
  {
    toInputOrder(core2, input);
    out.core2 = std::move(core2);
  }
  return found;
}
} // namespace

// The EMST's tree: leaves of up to 192 points (the results do not depend on
// it). The leaf searches are vectorized, so larger leaves mostly save node
// pairs, which dominated each round; leaves larger than 192 gained nothing
// more.
inline TreeBuildOptions emstTreeOptions()
{
  TreeBuildOptions options;
  options.leafSize = 192;
  return options;
}

template <class T>
void emstCpu(
  const EmstProblem<T>& problem, EmstEdges& out, RunInfo& info, const RunControl& control)
{
  out = EmstEdges{};
  if (problem.numPoints == 0)
    return;
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  const int threadsBefore = omp_get_max_threads();
  omp_set_num_threads(threads);
  struct RestoreThreads
  {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{ threadsBefore };

  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  FoundEdges found;
  {
    ZTree<T> tree;
    {
      StageTimer timer(&info, "sort+tree");
      RunControl buildControl;
      buildControl.progress = progressSpan(control, 0, 0.2);
      buildTreeCpu(problem.points, Index(problem.numPoints), static_cast<const T*>(nullptr), 0, per,
        problem.boxLo, emstTreeOptions(), tree, buildControl);
      orderRunsByKey(tree, problem.ids); // as the kNN walk of the nearest round expects
    }
    const SourceKeys keys{ problem.ids, tree.sources.inputIndex.data() };
    found = withBoxMetric(per,
      [&](const auto& metric)
      { return emstWalks(tree, problem, metric, keys, threads, out, info, control); });
  } // the tree is freed before the output is made
  StageTimer timer(&info, "publish");
  publishEdges(found, problem.ids, out);
}

template void emstCpu<float>(const EmstProblem<float>&, EmstEdges&, RunInfo&, const RunControl&);
template void emstCpu<double>(const EmstProblem<double>&, EmstEdges&, RunInfo&, const RunControl&);
} // namespace jz
