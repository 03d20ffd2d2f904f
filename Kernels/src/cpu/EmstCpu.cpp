// The EMST on the CPU: one tree, core distances from the kNN walk when the
// metric is mutual reachability, then Borůvka rounds (ArborX EMST paper §3),
// each a walk of the shared engine with the Borůvka policy
// (BoruvkaNodePolicy.h, BoruvkaLeafSearch.h): every component's lightest
// outgoing edge under the total order (weight, smaller id, larger id) joins
// the tree, until one component is left.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "../EmstBackends.h"
#include "../StageTimer.h"
#include "../walk/BoxMetric.h"
#include "../walk/DualWalk.h"
#include "BoruvkaLeafSearch.h"
#include "KnnLeafSearch.h"
#include "jz/Tree.h"

namespace jz
{
namespace
{
struct EdgeOfTree
{
  Index a, b; // sorted point indices
  double weight2;
};

// Squared distance to the k-th nearest point, the point itself counted
// first (k = minSamples + 1), per sorted point.
template <class T, class Metric>
std::vector<double> coreDistances2(
  const ZTree<T>& tree, const Metric& metric, int k, const SourceKeys& keys, int threads)
{
  std::vector<double> core2(tree.sources.size());
  auto store = [&core2, k](Index q, const CandidateBuffer& nb) { core2[q] = nb.d2(k - 1); };
  using Policy = KnnLeafSearch<T, Metric, decltype(store)>;
  Policy policy(tree, k, metric, threads, &keys, false, Index(-1), store);
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
  PointUnionFind& sets, std::vector<EdgeOfTree>& edges)
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
          edges.push_back(EdgeOfTree{ first, i, 0.0 });
    }
    b = e;
  }
}

template <class T, class Metric>
class BoruvkaRounds
{
public:
  BoruvkaRounds(const ZTree<T>& tree, const Metric& metric, const double* core2,
    const SourceKeys& keys, int threads, RunInfo& info)
    : tree_(tree)
    , weights_(tree, metric, core2)
    , keys_(keys)
    , threads_(threads)
    , info_(info)
    , comps_(tree)
    , sets_(tree.sources.size())
    , choice_(tree.sources.size())
  {
  }

  std::vector<EdgeOfTree> run(const RunControl& control)
  {
    std::vector<EdgeOfTree> edges;
    const Index n = tree_.sources.size();
    edges.reserve(n > 0 ? n - 1 : 0);
    joinDuplicates(tree_, keys_, weights_.core2, sets_, edges);
    int round = 0;
    for (;;)
    {
      comps_.relabel(sets_);
      if (comps_.count <= 1)
        break;
      if (control.progress && !control.progress(0.3 + 0.7 * double(edges.size()) / n))
        throw Aborted();
      seedBounds();
      StageTimer roundTimer(&info_, "round " + std::to_string(round));
      {
        using Policy = BoruvkaLeafSearch<T, BoruvkaWeights<T, Metric>>;
        Policy policy(tree_, weights_, comps_, keys_, choice_, threads_);
        DualWalk<T, Policy> walk(tree_, policy, threads_);
        walk.leafPass(walk.walkDownTo(1));
      }
      roundTimer.stop();
      const std::size_t before = edges.size();
      addLightestEdges(edges);
      info_.counters.emplace_back("components " + std::to_string(round), double(comps_.count));
      info_.counters.emplace_back("settled points " + std::to_string(round),
        double(std::count(comps_.settled.begin(), comps_.settled.end(), 1)));
      if (edges.size() == before)
        throw Error("EMST: a Borůvka round added no edge (internal error)");
      ++round;
    }
    info_.counters.emplace_back("boruvka rounds", double(round));
    return edges;
  }

private:
  double weight2(Index a, Index b) const
  {
    T pa[3], pb[3];
    tree_.sources.point(a, pa);
    tree_.sources.point(b, pb);
    double w = weights_.metric.point2(pa, pb);
    if (weights_.core2)
      w = std::max(w, std::max(weights_.core2[a], weights_.core2[b]));
    return w;
  }

  // Neighbours in z-order from different components give every component a
  // first upper bound before the walk, and so do the points whose edge of the
  // last round still leaves their component: that edge is still their
  // lightest (exact: a search finds a point's lightest edge or, when it is
  // heavier than the bound, none), so they are settled and do not search.
  void seedBounds()
  {
    const std::vector<Index>& label = comps_.point;
    comps_.settled.assign(label.size(), 0);
    for (Index q = 0; q < Index(label.size()); ++q)
    {
      BoruvkaChoice& ch = choice_[q];
      if (ch.other == kNoPoint || label[ch.other] == label[q])
      {
        ch = BoruvkaChoice{};
        continue;
      }
      comps_.settled[q] = 1;
      comps_.bound2[label[q]] = std::min(comps_.bound2[label[q]], ch.weight2);
    }
    for (Index i = 0; i + 1 < Index(label.size()); ++i)
    {
      if (label[i] == label[i + 1])
        continue;
      const double w = weight2(i, i + 1);
      comps_.bound2[label[i]] = std::min(comps_.bound2[label[i]], w);
      comps_.bound2[label[i + 1]] = std::min(comps_.bound2[label[i + 1]], w);
    }
  }

  // Per component the lightest of its points' choices; each joins the tree
  // unless the component at its other end chose the same edge first.
  void addLightestEdges(std::vector<EdgeOfTree>& edges)
  {
    const std::vector<Index>& label = comps_.point;
    const Index n = Index(label.size());
    std::vector<Index>& winner = winner_;
    winner.assign(n, kNoPoint);
    for (Index q = 0; q < n; ++q)
    {
      const BoruvkaChoice& ch = choice_[q];
      if (ch.other == kNoPoint)
        continue;
      Index& w = winner[label[q]];
      if (w == kNoPoint ||
        edgeLess(ch.weight2, keys_[q], keys_[ch.other], choice_[w].weight2, keys_[w],
          keys_[choice_[w].other]))
        w = q;
    }
    for (Index r = 0; r < n; ++r)
    {
      const Index q = winner[r];
      if (q != kNoPoint && sets_.unite(q, choice_[q].other))
        edges.push_back(EdgeOfTree{ q, choice_[q].other, choice_[q].weight2 });
    }
  }

  const ZTree<T>& tree_;
  BoruvkaWeights<T, Metric> weights_;
  const SourceKeys& keys_;
  int threads_;
  RunInfo& info_;
  BoruvkaComponents<T> comps_;
  PointUnionFind sets_;
  std::vector<BoruvkaChoice> choice_;
  std::vector<Index> winner_;
};

// The edges in the public order, endpoints as input indices (the tree is
// gone by now: `found` holds input indices), smaller key first. Sorted in
// place, so the peak is `found` plus the output.
void publishEdges(std::vector<EdgeOfTree>& found, const GlobalId* ids, EmstEdges& out)
{
  auto key = [ids](Index i) { return ids ? ids[i] : GlobalId(i); };
  for (EdgeOfTree& e : found)
    if (key(e.b) < key(e.a))
      std::swap(e.a, e.b);
  std::sort(found.begin(), found.end(),
    [&](const EdgeOfTree& x, const EdgeOfTree& y)
    {
      if (x.weight2 != y.weight2)
        return x.weight2 < y.weight2;
      const GlobalId xa = key(x.a), ya = key(y.a);
      return xa != ya ? xa < ya : key(x.b) < key(y.b);
    });
  const std::size_t m = found.size();
  out.from.resize(m);
  out.to.resize(m);
  out.weight2.resize(m);
  for (std::size_t i = 0; i < m; ++i)
  {
    out.from[i] = found[i].a;
    out.to[i] = found[i].b;
    out.weight2[i] = found[i].weight2;
  }
}

template <class T, class Metric>
std::vector<EdgeOfTree> emstWalks(const ZTree<T>& tree, const EmstProblem<T>& problem,
  const Metric& metric, const SourceKeys& keys, int threads, EmstEdges& out, RunInfo& info,
  const RunControl& control)
{
  const bool mutual = problem.metric == EmstMetric::MutualReachability;
  std::vector<double> core2;
  if (mutual)
  {
    StageTimer timer(&info, "core distances");
    core2 = coreDistances2(tree, metric, problem.minSamples + 1, keys, threads);
    out.core2.resize(core2.size());
    for (Index i = 0; i < tree.sources.size(); ++i)
      out.core2[tree.sources.inputIndex[i]] = core2[i];
  }
  StageTimer timer(&info, "boruvka");
  BoruvkaRounds<T, Metric> rounds(
    tree, metric, mutual ? core2.data() : nullptr, keys, threads, info);
  std::vector<EdgeOfTree> found = rounds.run(control);
  for (EdgeOfTree& e : found)
  {
    e.a = tree.sources.inputIndex[e.a];
    e.b = tree.sources.inputIndex[e.b];
  }
  return found;
}
} // namespace

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
  std::vector<EdgeOfTree> found;
  {
    ZTree<T> tree;
    {
      StageTimer timer(&info, "sort+tree");
      RunControl buildControl;
      if (control.progress)
        buildControl.progress = [&](double f) { return control.progress(0.2 * f); };
      buildTreeCpu(problem.points, Index(problem.numPoints), static_cast<const T*>(nullptr), 0, per,
        problem.boxLo, TreeBuildOptions(), tree, buildControl);
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
