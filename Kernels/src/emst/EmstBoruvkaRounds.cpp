// The distributed Borůvka rounds (phase "rounds" of EmstPhases.h). Each
// round:
//  1. each component's lightest edge to this rank's other points: under the
//     Euclidean metric the lightest edge of the rank's own tree that leaves
//     it (EmstLocalTree.h); under mutual reachability every point searches
//     this rank's tree under its component's bound (the lightest edge found
//     so far: first a z-order neighbour's, then the search's own);
//  2. a point whose bound reaches another rank's cover (its cells that hold
//     other components' points) asks that rank, which searches its tree for
//     the same (the boundary queries), unless what it learnt from that rank
//     before still holds (ForeignMemo: the other end of its last answer
//     still lies in another component, whose labels the answering rank keeps
//     telling it; or a lower bound past the bound: answers search beyond it
//     and name the lightest edge there by weight alone). Per component and
//     rank the point nearest to the cover asks first; its answer tightens
//     the bound for the others;
//  3. each component's lightest edge: on its rank, or, for a component that
//     spans ranks, the lightest of the ranks' (reduced on the component's
//     owner rank, label modulo ranks, as its bound before step 2);
//  4. merges: an edge between two components that both lie on this rank only
//     is united here; every other chosen edge goes to the ranks of its two
//     ends, and its two labels to every rank (16 bytes per merge), where the
//     same union-find over labels runs, told by each rank which of its local
//     merges those edges touch. New labels are the smallest global id of
//     each component, so every rank agrees.
// Borůvka under the strict edge order (weight, smaller id, larger id) adds
// only edges of the unique minimum tree: the result is the serial edge set.
// Both searches are policies of the walk engine: step 1's is the serial
// Borůvka round's (BoruvkaLeafSearch.h) on this rank's tree, step 2's
// the foreign queries' (BoruvkaForeignSearch.h, EmstBoundarySearch.h).
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/Progress.h"
#include "emst/BoruvkaLeafSearch.h"
#include "emst/EmstBoruvkaEdge.h"
#include "emst/EmstBoundarySearch.h"
#include "emst/EmstLabelUnion.h"
#include "emst/EmstLocalTree.h"
#include "emst/EmstPhases.h"
#include "jz/StageTimer.h"
#include "jz/UnionFind.h"
#include "walk/BoxMetric.h"
#include "walk/DualWalk.h"

namespace jz
{
namespace
{

template <class T>
struct EdgeAsk
{
  EdgeQuery<T> query;
  double bound2;
  Index point; // sorted index on the asking rank
};

template <class T>
struct EdgeAnswer
{
  Index point;  // the asker's
  Index found;  // sorted index on the answering rank
  double weight2;
  GlobalId id, label;
  T raw[3];
};

// An answer that names no point: every eligible point of the answering rank
// lies at least sqrt(low2) from the asking point (the lightest such edge,
// found beyond the bound, or the reach of the search).
struct EdgeLow
{
  Index point; // the asker's
  double low2;
};

// The answering rank searches this far beyond an ask's bound (squared):
// what it finds there, named by weight alone, spares the asker later asks.
constexpr double kReachBeyondBound2 = 4;

// Everything gathered by allGather from other ranks, for the traffic count.
double receivedBytes(const std::vector<std::vector<char>>& blocks, int me)
{
  double b = 0;
  for (std::size_t r = 0; r < blocks.size(); ++r)
    if (int(r) != me)
      b += double(blocks[r].size());
  return b;
}

template <class V>
std::vector<V> allGatherCounted(Communicator& comm, const std::vector<V>& mine, EmstTraffic& traffic)
{
  const std::vector<std::vector<char>> all = comm.allGather(toBytes(mine));
  traffic.bytesReceived += receivedBytes(all, comm.rank());
  std::vector<V> out;
  for (const auto& b : all)
  {
    const std::vector<V> part = fromBytes<V>(b);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

// allToAllTyped, counting the bytes received from other ranks.
template <class V>
std::vector<std::vector<V>> allToAllCounted(
  Communicator& comm, const std::vector<std::vector<V>>& send, EmstTraffic& traffic)
{
  std::vector<std::vector<V>> got = allToAllTyped(comm, send);
  for (std::size_t r = 0; r < got.size(); ++r)
    if (int(r) != comm.rank())
      traffic.bytesReceived += double(got[r].size() * sizeof(V));
  return got;
}

// What a point learnt from one other rank by asking it. The answer's other
// end, while it lies in another component than the point's, stays the
// point's lightest edge to that rank (the components only grow, so no other
// point of that rank becomes eligible). Without a valid answer, every
// eligible point of that rank lies at least `low` (squared, rounded down)
// from it: the bound asked with, or the answer's weight once its other end
// has joined the point's component.
template <class T>
struct ForeignMemo
{
  float low = 0;
  bool answered = false;
  EdgeAnswer<T> answer;
};

// Two components' labels joined by a chosen edge: all that every rank needs
// of the cross-rank merges (the edge itself goes to its two ends' ranks).
struct LabelPair
{
  GlobalId a, b;
};

template <class T>
class DistributedBoruvka
{
public:
  // localTree: this rank's own tree (Euclidean), or empty to search per point.
  DistributedBoruvka(const EmstRankPoints<T>& points, const double* core2, double maxBound2,
    std::vector<LocalTreeEdge> localTree, int threads, Communicator& comm, EmstTraffic& traffic)
    : points_(points)
    , core2_(core2)
    , maxBound2_(maxBound2)
    , threads_(std::max(1, threads))
    , comm_(comm)
    , traffic_(traffic)
    , me_(comm.rank())
    , n_(points.tree.sources.size())
    , comp_(n_)
    , label_(points.ids)
    , spanning_(n_, 0)
    , lowForeign_(n_, 0.0f)
    , memoAt_(n_, kNoPoint)
    , foreignLabel_(comm.size())
    , watched_(comm.size())
    , useLocalTree_(!core2)
    , localTree_(std::move(localTree))
  {
    std::iota(comp_.begin(), comp_.end(), Index(0));
    if (core2)
    {
      routeIds_.resize(n_);
      for (Index i = 0; i < n_; ++i)
        routeIds_[points.routeIndex(i)] = points.ids[i];
      comps_ = std::make_unique<BoruvkaComponents<T>>(points.tree);
      comps_->maxWeight2 = maxBound2;
    }
  }

  // stopped: this rank was told to stop before the rounds (its local tree).
  std::vector<EmstEmitted<T>> run(const RunControl& control, bool stopped, RunInfo& info)
  {
    const std::int64_t total = allSum(comm_, std::int64_t(n_));
    std::int64_t edges = 0;
    int round = 0;
    agreeOnProgress(control, 0.4, comm_, stopped);
    while (edges + 1 < total)
    {
      if (round > 0)
        agreeOnProgress(control, 0.4 + 0.5 * double(edges) / double(total), comm_);
      const std::int64_t added = runRound();
      info.counters.emplace_back("components " + std::to_string(round), double(total - edges));
      info.counters.emplace_back("boundary queries " + std::to_string(round), roundQueries_);
      if (added == 0)
      {
        if (maxBound2_ < kInfinity)
          break; // every component is final: the forest is complete
        throw Error("distributed EMST: a Borůvka round added no edge (internal error)");
      }
      edges += added;
      ++round;
    }
    info.counters.emplace_back("boruvka rounds", double(round));
    info.counters.emplace_back("bytes received: rounds' boundary queries", boundaryBytes_);
    return std::move(emitted_);
  }

private:
  std::size_t numComps() const { return label_.size(); }

  void raw(Index i, T* p) const
  {
    std::copy_n(points_.raw.data() + 3 * std::size_t(points_.routeIndex(i)), 3, p);
  }

  EmstLocalSide localSide() const
  {
    return EmstLocalSide{ points_.ids.data(), comp_.data(), label_.data(), core2_ };
  }

  EdgeQuery<T> queryOf(Index i) const
  {
    EdgeQuery<T> q;
    points_.tree.sources.point(i, q.p);
    q.id = points_.ids[i];
    q.label = label_[comp_[i]];
    q.core2 = core2_ ? core2_[i] : 0.0;
    return q;
  }

  // One round; returns the number of edges added over all ranks.
  std::int64_t runRound()
  {
    if (useLocalTree_)
      scanLocalTree();
    else
      searchLocally();
    boundByMemos();
    shareSpanningBounds();
    shareCellLabels();
    const double before = traffic_.bytesReceived;
    roundQueries_ = 0;
    searchBoundary();
    boundaryBytes_ += traffic_.bytesReceived - before;
    std::vector<BoruvkaEdge<T>> spanningBest = reduceSpanning();
    const std::int64_t added = merge(spanningBest);
    const double beforeLabels = traffic_.bytesReceived;
    tellWatchedLabels();
    boundaryBytes_ += traffic_.bytesReceived - beforeLabels;
    return added;
  }

  double weight2(Index a, Index b) const
  {
    T pa[3], pb[3];
    points_.tree.sources.point(a, pa);
    points_.tree.sources.point(b, pb);
    const double w = distance2(pa, pb, points_.tree.periodicity);
    return core2_ ? std::max(w, std::max(core2_[a], core2_[b])) : w;
  }

  // Mutual reachability: one round of the serial Borůvka walk on this
  // rank's tree (BoruvkaLeafSearch) under this rank's components, seeded as
  // the serial round is: each searching point's lightest local edge out of
  // its component, per component the lightest (bound_).
  void searchLocally()
  {
    BoruvkaComponents<T>& cs = *comps_;
    rootOf_.assign(numComps(), kNoPoint);
    for (Index i = 0; i < n_; ++i)
      if (rootOf_[comp_[i]] == kNoPoint)
        rootOf_[comp_[i]] = i;
    for (Index i = 0; i < n_; ++i)
      cs.point[i] = rootOf_[comp_[i]]; // a flat union-find forest
    cs.relabel();
    seedBounds();
    if (cs.markSearching(core2_) > 0)
      withBoxMetric(points_.tree.periodicity,
        [&](const auto& metric)
        {
          using Weights = BoruvkaWeights<T, std::decay_t<decltype(metric)>>;
          const Weights weights(points_.tree, metric, core2_);
          const SourceKeys keys{ routeIds_.data(), points_.tree.sources.inputIndex.data() };
          BoruvkaLeafSearch<T, Weights> policy(points_.tree, weights, cs, keys, threads_);
          DualWalk<T, BoruvkaLeafSearch<T, Weights>> walk(points_.tree, policy, threads_);
          walk.leafPass(walk.walkDownTo(1));
        });
    for (Index i = 0; i < n_; ++i)
      if (cs.choice[i] != kNoPoint)
        bound_[comp_[i]] = std::min(bound_[comp_[i]], weight2(i, cs.choice[i]));
  }

  // Neighbours in z-order from different components give first bounds, and
  // so do the points whose local edge of the last round still leaves their
  // component: that edge is still their lightest local one (the other
  // components only shrank), so they are settled and do not search.
  void seedBounds()
  {
    std::vector<Index>& choice = comps_->choice;
    bound_.assign(numComps(), maxBound2_);
    for (Index i = 0; i < n_; ++i)
    {
      if (choice[i] == kNoPoint)
        continue;
      if (comp_[choice[i]] == comp_[i])
        choice[i] = kNoPoint;
      else
        bound_[comp_[i]] = std::min(bound_[comp_[i]], weight2(i, choice[i]));
    }
    for (Index i = 0; i + 1 < n_; ++i)
    {
      const Index a = comp_[i], b = comp_[i + 1];
      if (a == b)
        continue;
      const double w = weight2(i, i + 1);
      bound_[a] = std::min(bound_[a], w);
      bound_[b] = std::min(bound_[b], w);
    }
    for (std::size_t c = 0; c < numComps(); ++c)
      lowerBound(&comps_->bound2[rootOf_[c]], bound_[c]);
  }

  // Per component the lightest edge of this rank's tree that leaves it; the
  // edges inside a component are dropped for good.
  void scanLocalTree()
  {
    bound_.assign(numComps(), maxBound2_);
    treeBest_.assign(numComps(), kNoTreeEdge);
    std::size_t kept = 0;
    for (std::size_t k = 0; k < localTree_.size(); ++k)
    {
      const LocalTreeEdge e = localTree_[k];
      const Index ca = comp_[e.a], cb = comp_[e.b];
      if (ca == cb)
        continue;
      localTree_[kept] = e;
      for (const Index c : { ca, cb })
      {
        std::size_t& best = treeBest_[c];
        if (best == kNoTreeEdge || lighterTreeEdge(e, localTree_[best]))
          best = kept;
        bound_[c] = std::min(bound_[c], e.weight2);
      }
      ++kept;
    }
    localTree_.resize(kept);
  }

  bool lighterTreeEdge(const LocalTreeEdge& x, const LocalTreeEdge& y) const
  {
    const GlobalId* id = points_.ids.data();
    return emstEdgeLess(x.weight2, id[x.a], id[x.b], y.weight2, id[y.a], id[y.b]);
  }

  // The rank that reduces a spanning component's bounds and candidates.
  int ownerOf(GlobalId label) const { return int(label % GlobalId(comm_.size())); }

  // The bounds of components on several ranks: the least of the ranks',
  // reduced on each component's owner rank and sent back to the ranks that
  // sent one.
  void shareSpanningBounds()
  {
    const int ranks = comm_.size();
    std::vector<std::vector<std::pair<GlobalId, double>>> toOwner(ranks);
    for (std::size_t c = 0; c < numComps(); ++c)
      if (spanning_[c])
        toOwner[ownerOf(label_[c])].emplace_back(label_[c], bound_[c]);
    std::vector<std::vector<std::pair<GlobalId, double>>> got =
      allToAllCounted(comm_, toOwner, traffic_);
    std::vector<std::pair<GlobalId, double>> least;
    for (const auto& list : got)
      least.insert(least.end(), list.begin(), list.end());
    std::sort(least.begin(), least.end()); // per label its least bound first
    for (auto& list : got)
      for (auto& [label, bound] : list)
        bound = std::lower_bound(least.begin(), least.end(),
          std::pair<GlobalId, double>(label, -kInfinity))->second;
    const std::vector<std::vector<std::pair<GlobalId, double>>> back =
      allToAllCounted(comm_, got, traffic_);
    std::vector<std::size_t> at(ranks, 0);
    for (std::size_t c = 0; c < numComps(); ++c)
      if (spanning_[c])
      {
        const int o = ownerOf(label_[c]);
        bound_[c] = std::min(bound_[c], back[o][at[o]++].second);
      }
  }

  // Point i's memos, one per rank, or null when it never asked.
  ForeignMemo<T>* memosOf(Index i)
  {
    return memoAt_[i] == kNoPoint ? nullptr : &memos_[std::size_t(memoAt_[i]) * comm_.size()];
  }

  ForeignMemo<T>& memoOf(Index i, int r)
  {
    if (memoAt_[i] == kNoPoint)
    {
      memoAt_[i] = Index(memoPoint_.size());
      memoPoint_.push_back(i);
      memos_.resize(memos_.size() + std::size_t(comm_.size()));
    }
    return memosOf(i)[r];
  }

  // Whether memo m of point i's (from rank r) holds an answer that still does.
  bool holds(Index i, int r, const ForeignMemo<T>& m) const
  {
    return m.answered && foreignLabel_[r].at(m.answer.found) != label_[comp_[i]];
  }

  // The answers that still hold are candidates already: they tighten their
  // components' bounds before anyone asks.
  void boundByMemos()
  {
    for (const Index i : memoPoint_)
      for (int r = 0; r < comm_.size(); ++r)
        if (holds(i, r, memosOf(i)[r]))
          bound_[comp_[i]] = std::min(bound_[comp_[i]], memosOf(i)[r].answer.weight2);
  }

  // The boundary queries in two exchanges. First the probes: per component
  // and rank, of its points that would ask that rank, the one nearest to
  // the rank's cover; their answers tighten the components' bounds (shared
  // again for the spanning ones). Then every other point that would ask,
  // if its tightened bound still reaches.
  void searchBoundary()
  {
    const int ranks = comm_.size();
    std::vector<std::vector<EdgeAsk<T>>> ask(ranks), probes;
    std::vector<std::vector<EdgeAnswer<T>>> held(ranks);
    std::vector<float> low;
    collectAsks(ask, held, low);
    probes = probeNearest(ask);
    foreignFound_ = exchangeAsks(probes);
    for (const auto& list : foreignFound_)
      for (const EdgeAnswer<T>& a : list)
        bound_[comp_[a.point]] = std::min(bound_[comp_[a.point]], a.weight2);
    shareSpanningBounds();
    for (int r = 0; r < ranks; ++r)
    {
      const std::vector<GlobalId>& cellLabel = cellLabel_[r];
      std::size_t kept = 0;
      for (EdgeAsk<T>& a : ask[r])
      {
        a.bound2 = bound_[comp_[a.point]];
        if (!(a.query.core2 > a.bound2) && points_.cover.mayReach(a.query.p, r, a.bound2,
              [&](Index cell) { return cellLabel[cell] == a.query.label; }))
          ask[r][kept++] = a;
      }
      ask[r].resize(kept);
    }
    // Every rank each point's bound reaches now asked or probed.
    for (Index i = 0; i < n_; ++i)
      if (low[i] >= 0)
        lowForeign_[i] = std::max(lowForeign_[i], std::min(low[i], roundDownToFloat(bound_[comp_[i]])));
    const std::vector<std::vector<EdgeAnswer<T>>> more = exchangeAsks(ask);
    for (int r = 0; r < ranks; ++r)
    {
      foreignFound_[r].insert(foreignFound_[r].end(), more[r].begin(), more[r].end());
      foreignFound_[r].insert(foreignFound_[r].end(), held[r].begin(), held[r].end());
    }
  }

  // Per rank the asks of the points whose bound reaches it, unless their
  // memo of it answers already (an answer that holds goes to `held`, a lower
  // bound past the bound spares the ask). low: per point, a lower bound of
  // its lightest edge to another rank once these asks are answered (-1: a
  // point settled by its lowForeign_, which exceeds its bound).
  void collectAsks(std::vector<std::vector<EdgeAsk<T>>>& ask,
    std::vector<std::vector<EdgeAnswer<T>>>& held, std::vector<float>& low)
  {
    low.assign(n_, -1.0f);
    for (Index i = 0; i < n_; ++i)
    {
      const double b = bound_[comp_[i]];
      const EdgeQuery<T> q = queryOf(i);
      if (q.core2 > b || double(lowForeign_[i]) > b)
        continue;
      low[i] = roundDownToFloat(b);
      const ForeignMemo<T>* memos = memosOf(i);
      for (int r = 0; r < comm_.size(); ++r)
      {
        if (r == me_)
          continue;
        if (memos && holds(i, r, memos[r]))
        {
          held[r].push_back(memos[r].answer);
          held[r].back().label = foreignLabel_[r].at(memos[r].answer.found);
          low[i] = std::min(low[i], roundDownToFloat(memos[r].answer.weight2));
          continue;
        }
        if (memos && double(memos[r].low) > b)
          continue;
        const std::vector<GlobalId>& cellLabel = cellLabel_[r];
        if (points_.cover.mayReach(
              q.p, r, b, [&](Index cell) { return cellLabel[cell] == q.label; }))
          ask[r].push_back(EdgeAsk<T>{ q, b, i });
      }
    }
  }

  // Takes out of `ask` per component and rank the ask whose point lies
  // nearest to that rank's cover (cells of its own component apart): the
  // probes.
  std::vector<std::vector<EdgeAsk<T>>> probeNearest(std::vector<std::vector<EdgeAsk<T>>>& ask) const
  {
    std::vector<std::vector<EdgeAsk<T>>> probes(comm_.size());
    for (int r = 0; r < comm_.size(); ++r)
    {
      const std::vector<GlobalId>& cellLabel = cellLabel_[r];
      std::unordered_map<Index, std::pair<double, std::size_t>> nearest; // per component
      for (std::size_t k = 0; k < ask[r].size(); ++k)
      {
        const EdgeAsk<T>& a = ask[r][k];
        const double d2 = points_.cover.distance2(a.query.p, r,
          [&](Index cell) { return cellLabel[cell] == a.query.label; }, kInfinity);
        auto [at, fresh] = nearest.try_emplace(comp_[a.point], d2, k);
        if (!fresh && d2 < at->second.first)
          at->second = { d2, k };
      }
      std::vector<char> isProbe(ask[r].size(), 0);
      for (const auto& entry : nearest)
        isProbe[entry.second.second] = 1;
      std::size_t kept = 0;
      for (std::size_t k = 0; k < ask[r].size(); ++k)
        if (isProbe[k])
          probes[r].push_back(ask[r][k]);
        else
          ask[r][kept++] = ask[r][k];
      ask[r].resize(kept);
    }
    return probes;
  }

  // One exchange of asks: the answers that found an edge within the bound
  // come back; the memos learn them, and the lows of the others.
  std::vector<std::vector<EdgeAnswer<T>>> exchangeAsks(
    const std::vector<std::vector<EdgeAsk<T>>>& ask)
  {
    const int ranks = comm_.size();
    double asks = 0;
    for (const auto& a : ask)
      asks += double(a.size());
    traffic_.boundaryQueries += asks;
    roundQueries_ += asks;
    const std::vector<std::vector<EdgeAsk<T>>> asked = allToAllTyped(comm_, ask);
    std::vector<std::vector<EdgeLow>> lows(ranks);
    std::vector<std::vector<EdgeAnswer<T>>> found =
      allToAllTyped(comm_, answerAsked(asked, lows));
    lows = allToAllCounted(comm_, lows, traffic_);
    for (int r = 0; r < ranks; ++r)
    {
      // No eligible point of rank r within the bound but the one answered.
      for (const EdgeAsk<T>& a : ask[r])
        memoOf(a.point, r) = ForeignMemo<T>{ roundDownToFloat(a.bound2), false, {} };
      for (const EdgeLow& l : lows[r])
        memoOf(l.point, r).low = roundDownToFloat(l.low2);
      traffic_.bytesReceived += double(found[r].size() * sizeof(EdgeAnswer<T>));
      traffic_.pointsSearched += double(found[r].size());
      for (const EdgeAnswer<T>& a : found[r])
      {
        memoOf(a.point, r) = ForeignMemo<T>{ roundDownToFloat(a.weight2), true, a };
        foreignLabel_[r][a.found] = a.label;
        lowForeign_[a.point] = std::min(lowForeign_[a.point], roundDownToFloat(a.weight2));
      }
    }
    return found;
  }

  // Per cell of this rank's cover (RankCover) the one label of its points,
  // or none, to every rank: a point does not ask a rank whose cells within
  // its bound all hold its own component alone.
  void shareCellLabels()
  {
    const ZTree<T>& tree = points_.tree;
    const TreePlane<T>& plane = tree.planes.empty() ?
      TreePlane<T>() : tree.planes[RankCover<T>::cellPlane(tree, kEmstCoverFiner)];
    const std::vector<Index> nodes = RankCover<T>::cellNodes(tree, kEmstCoverFiner);
    if (cellLabel_.empty())
      for (int r = 0; r < comm_.size(); ++r)
        cellLabel_.emplace_back(points_.cover.numCells(r), kMixedCell);
    // Only the cells whose label changed travel (cell, label).
    std::vector<std::pair<Index, GlobalId>> changed;
    for (Index c = 0; c < Index(nodes.size()); ++c)
    {
      const Index b = plane.sourceSplit[nodes[c]], e = plane.sourceSplit[nodes[c] + 1];
      GlobalId one = label_[comp_[b]];
      for (Index i = b + 1; i < e && one != kMixedCell; ++i)
        one = label_[comp_[i]] == one ? one : kMixedCell;
      if (one != cellLabel_[me_][c])
        changed.emplace_back(c, one);
      cellLabel_[me_][c] = one;
    }
    const std::vector<std::vector<char>> all = comm_.allGather(toBytes(changed));
    traffic_.bytesReceived += receivedBytes(all, me_);
    for (int r = 0; r < comm_.size(); ++r)
      if (r != me_)
        for (const auto& [c, label] : fromBytes<std::pair<Index, GlobalId>>(all[r]))
          cellLabel_[r][c] = label;
  }

  // The labels of this rank's points that its answers named, to the ranks
  // they were named to, whenever they change (after each round's merges).
  void tellWatchedLabels()
  {
    std::vector<std::vector<std::pair<Index, GlobalId>>> tell(comm_.size());
    for (int r = 0; r < comm_.size(); ++r)
      for (auto& [point, label] : watched_[r])
        if (label != label_[comp_[point]])
        {
          label = label_[comp_[point]];
          tell[r].emplace_back(point, label);
        }
    const auto told = allToAllCounted(comm_, tell, traffic_);
    for (int r = 0; r < comm_.size(); ++r)
      for (const auto& [point, label] : told[r])
        foreignLabel_[r][point] = label;
  }

  // Every rank's asks searched at once (one query tree), beyond their
  // bounds (kReachBeyondBound2, up to the longest edge allowed); per asking
  // rank the answers that found an edge within the bound, and (lows) those
  // that did not, by the weight of the lightest edge found, else the reach.
  std::vector<std::vector<EdgeAnswer<T>>> answerAsked(
    const std::vector<std::vector<EdgeAsk<T>>>& asked, std::vector<std::vector<EdgeLow>>& lows)
  {
    std::vector<EdgeQuery<T>> queries;
    std::vector<double> bound2;
    for (const std::vector<EdgeAsk<T>>& list : asked)
    {
      traffic_.bytesReceived += double(list.size() * sizeof(EdgeAsk<T>));
      traffic_.pointsSearched += double(list.size());
      for (const EdgeAsk<T>& a : list)
      {
        queries.push_back(a.query);
        bound2.push_back(std::min(kReachBeyondBound2 * a.bound2, maxBound2_));
      }
    }
    const std::vector<ForeignEdge> found =
      searchBoundaryEdges(points_, localSide(), queries, bound2, threads_);
    std::vector<std::vector<EdgeAnswer<T>>> answers(asked.size());
    std::size_t at = 0;
    for (std::size_t r = 0; r < asked.size(); ++r)
      for (const EdgeAsk<T>& a : asked[r])
      {
        const double reach2 = bound2[at];
        const ForeignEdge& f = found[at++];
        if (!f.found() || f.weight2 > a.bound2)
        {
          const double low2 = f.found() ? f.weight2 : reach2;
          if (low2 > a.bound2)
            lows[r].push_back(EdgeLow{ a.point, low2 });
          continue;
        }
        EdgeAnswer<T> out;
        out.point = a.point;
        out.found = f.source;
        out.weight2 = f.weight2;
        out.id = points_.ids[f.source];
        out.label = label_[comp_[f.source]];
        raw(f.source, out.raw);
        answers[r].push_back(out);
        watched_[r].emplace(f.source, out.label);
      }
    return answers;
  }

  // A component's lightest edge so far, compactly (40 bytes: round 0 has a
  // component per point): end B is this rank's sorted point, or the answer
  // `answer` from rank rankB.
  struct Choice
  {
    double weight2 = kInfinity;
    GlobalId idA = -1, idB = -1;
    Index pointA = 0, pointB = 0;
    std::int32_t rankB = -1;
    Index answer = 0;
    bool exists() const { return idA >= 0; }
  };

  // Per local component its lightest edge from the local and the answers.
  std::vector<Choice> bestPerComponent() const
  {
    std::vector<Choice> best(numComps());
    auto offer = [&](Index a, double w, GlobalId idB, Index b, int rankB, Index answer)
    {
      Choice& c = best[comp_[a]];
      const GlobalId idA = points_.ids[a];
      if (!c.exists() || emstEdgeLess(w, idA, idB, c.weight2, c.idA, c.idB))
        c = Choice{ w, idA, idB, a, b, rankB, answer };
    };
    for (std::size_t c = 0; c < treeBest_.size() && useLocalTree_; ++c)
    {
      if (treeBest_[c] == kNoTreeEdge)
        continue;
      const LocalTreeEdge& t = localTree_[treeBest_[c]];
      const bool aHere = comp_[t.a] == Index(c);
      const Index a = aHere ? t.a : t.b, b = aHere ? t.b : t.a;
      offer(a, t.weight2, points_.ids[b], b, me_, 0);
    }
    for (Index i = 0; i < n_ && !useLocalTree_; ++i)
    {
      const Index other = comps_->choice[i];
      if (other != kNoPoint)
        offer(i, weight2(i, other), points_.ids[other], other, me_, 0);
    }
    for (int r = 0; r < int(foreignFound_.size()); ++r)
      for (std::size_t k = 0; k < foreignFound_[r].size(); ++k)
      {
        const EdgeAnswer<T>& a = foreignFound_[r][k];
        offer(a.point, a.weight2, a.id, a.found, r, Index(k));
      }
    return best;
  }

  // A choice as it travels: labels, ranks and coordinates of both ends.
  BoruvkaEdge<T> travelling(const Choice& c) const
  {
    BoruvkaEdge<T> e;
    e.weight2 = c.weight2;
    e.idA = c.idA;
    e.idB = c.idB;
    e.labelA = label_[comp_[c.pointA]];
    e.rankA = me_;
    e.pointA = c.pointA;
    raw(c.pointA, e.rawA);
    e.rankB = c.rankB;
    e.pointB = c.pointB;
    if (c.rankB == me_)
    {
      e.labelB = label_[comp_[c.pointB]];
      raw(c.pointB, e.rawB);
    }
    else
    {
      const EdgeAnswer<T>& a = foreignFound_[c.rankB][c.answer];
      e.labelB = a.label;
      std::copy_n(a.raw, 3, e.rawB);
    }
    return e;
  }

  // Components on several ranks: the lightest of the ranks' edges, on the
  // component's owner rank (one per component, there only).
  std::vector<BoruvkaEdge<T>> reduceSpanning()
  {
    best_ = bestPerComponent();
    std::vector<std::vector<BoruvkaEdge<T>>> toOwner(comm_.size());
    for (std::size_t c = 0; c < numComps(); ++c)
      if (spanning_[c] && best_[c].exists())
        toOwner[ownerOf(label_[c])].push_back(travelling(best_[c]));
    std::vector<BoruvkaEdge<T>> all;
    for (const auto& list : allToAllCounted(comm_, toOwner, traffic_))
      all.insert(all.end(), list.begin(), list.end());
    std::sort(all.begin(), all.end(),
      [](const BoruvkaEdge<T>& a, const BoruvkaEdge<T>& b)
      { return a.labelA != b.labelA ? a.labelA < b.labelA : a.lighterThan(b); });
    std::vector<BoruvkaEdge<T>> out;
    for (std::size_t k = 0; k < all.size(); ++k)
      if (k == 0 || all[k].labelA != all[k - 1].labelA)
        out.push_back(all[k]);
    return out;
  }

  // Outputs e when its smaller-id end lies on this rank; returns whether.
  bool emit(const BoruvkaEdge<T>& e)
  {
    const bool aFirst = e.idA < e.idB;
    if ((aFirst ? e.rankA : e.rankB) != me_)
      return false;
    EmstEmitted<T> out;
    out.from = aFirst ? e.pointA : e.pointB;
    out.fromId = e.low();
    out.toId = e.high();
    out.weight2 = e.weight2;
    std::copy_n(aFirst ? e.rawB : e.rawA, 3, out.toRaw);
    emitted_.push_back(out);
    return true;
  }

  // An edge between two of this rank's points.
  void emitLocal(const Choice& c)
  {
    const bool aFirst = c.idA < c.idB;
    EmstEmitted<T> out;
    out.from = aFirst ? c.pointA : c.pointB;
    out.fromId = std::min(c.idA, c.idB);
    out.toId = std::max(c.idA, c.idB);
    out.weight2 = c.weight2;
    raw(aFirst ? c.pointB : c.pointA, out.toRaw);
    emitted_.push_back(out);
  }

  // The round's unions; returns the number of edges added over all ranks.
  std::int64_t merge(const std::vector<BoruvkaEdge<T>>& spanningBest)
  {
    const std::size_t m = numComps();
    std::vector<Index> parent(m);
    std::iota(parent.begin(), parent.end(), Index(0));
    std::vector<BoruvkaEdge<T>> proposals;
    std::int64_t localAdded = 0;
    for (std::size_t c = 0; c < m; ++c)
    {
      const Choice& e = best_[c];
      if (spanning_[c] || !e.exists())
        continue;
      if (e.rankB == me_ && !spanning_[comp_[e.pointB]])
      {
        if (!uniteBySmallestRoot(parent, Index(c), comp_[e.pointB]))
          continue;
        emitLocal(e);
        ++localAdded;
      }
      else
        proposals.push_back(travelling(e));
    }
    proposals.insert(proposals.end(), spanningBest.begin(), spanningBest.end());
    // Each chosen edge to the ranks of its ends (one copy per edge there),
    // and only its labels to every rank.
    std::vector<std::vector<BoruvkaEdge<T>>> toEnds(comm_.size());
    std::vector<LabelPair> labels;
    for (const BoruvkaEdge<T>& e : proposals)
    {
      toEnds[e.rankA].push_back(e);
      if (e.rankB != e.rankA)
        toEnds[e.rankB].push_back(e);
      labels.push_back(LabelPair{ e.labelA, e.labelB });
    }
    std::vector<BoruvkaEdge<T>> mine;
    for (const auto& list : allToAllCounted(comm_, toEnds, traffic_))
      mine.insert(mine.end(), list.begin(), list.end());
    std::sort(mine.begin(), mine.end(),
      [](const BoruvkaEdge<T>& a, const BoruvkaEdge<T>& b)
      { return a.low() != b.low() ? a.low() < b.low() : a.high() < b.high(); });
    mine.erase(std::unique(mine.begin(), mine.end(),
                 [](const BoruvkaEdge<T>& a, const BoruvkaEdge<T>& b)
                 { return a.low() == b.low() && a.high() == b.high(); }),
      mine.end());
    for (const BoruvkaEdge<T>& e : mine)
      localAdded += emit(e) ? 1 : 0;
    relabel(parent, mine, allGatherCounted(comm_, labels, traffic_));
    return allSum(comm_, localAdded);
  }

  // New labels: the local groups' smallest labels, joined over all ranks by
  // the chosen cross-rank merges (`joined`, every rank's) and each rank's
  // pairs (label of a component that one of its chosen edges, `mine`,
  // touches; smallest label of its local group).
  void relabel(std::vector<Index>& parent, const std::vector<BoruvkaEdge<T>>& mine,
    const std::vector<LabelPair>& joined)
  {
    const std::size_t m = numComps();
    std::vector<GlobalId> groupMin(m, GlobalId(-1));
    for (std::size_t c = 0; c < m; ++c)
    {
      GlobalId& g = groupMin[findRoot(parent, Index(c))];
      g = g < 0 ? label_[c] : std::min(g, label_[c]);
    }
    std::vector<char> touched(m, 0);
    for (const BoruvkaEdge<T>& e : mine)
    {
      if (e.rankA == me_)
        touched[comp_[e.pointA]] = 1;
      if (e.rankB == me_)
        touched[comp_[e.pointB]] = 1;
    }
    std::vector<std::pair<GlobalId, GlobalId>> pairs;
    for (std::size_t c = 0; c < m; ++c)
    {
      const GlobalId g = groupMin[findRoot(parent, Index(c))];
      if (touched[c] && g != label_[c])
        pairs.emplace_back(label_[c], g);
    }
    const std::vector<std::pair<GlobalId, GlobalId>> allPairs =
      allGatherCounted(comm_, pairs, traffic_);
    LabelUnion labels;
    for (const GlobalId s : spanningLabels_)
      labels.add(s);
    for (const LabelPair& j : joined)
      labels.unite(j.a, j.b);
    for (const auto& p : allPairs)
      labels.unite(p.first, p.second);

    std::vector<GlobalId> next(m);
    for (std::size_t c = 0; c < m; ++c)
    {
      const GlobalId g = groupMin[findRoot(parent, Index(c))];
      next[c] = labels.contains(g) ? labels.find(g) : g;
    }
    spanningLabels_ = labels.roots();
    renumber(next);
  }

  // Components by ascending new label; the spanning ones flagged.
  void renumber(const std::vector<GlobalId>& next)
  {
    std::vector<GlobalId> labels(next);
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    std::vector<Index> index(next.size());
    for (std::size_t c = 0; c < next.size(); ++c)
      index[c] = Index(std::lower_bound(labels.begin(), labels.end(), next[c]) - labels.begin());
    for (Index i = 0; i < n_; ++i)
      comp_[i] = index[comp_[i]];
    label_ = std::move(labels);
    spanning_.assign(label_.size(), 0);
    for (std::size_t c = 0; c < label_.size(); ++c)
      spanning_[c] =
        std::binary_search(spanningLabels_.begin(), spanningLabels_.end(), label_[c]) ? 1 : 0;
  }

  const EmstRankPoints<T>& points_;
  const double* core2_;
  double maxBound2_;
  int threads_;
  Communicator& comm_;
  EmstTraffic& traffic_;
  int me_;
  Index n_;
  std::vector<Index> comp_;      // per sorted point: local component
  std::vector<GlobalId> label_;  // per local component: smallest global id
  std::vector<char> spanning_;   // per local component: may lie on other ranks too
  std::vector<GlobalId> spanningLabels_; // the same on every rank, ascending
  std::vector<double> bound_; // per local component
  // Mutual reachability: the serial round's state on this rank's tree (per
  // sorted point its lightest local edge out of its component, kept while it
  // stays one), the ids by route index, and per component its first point.
  std::unique_ptr<BoruvkaComponents<T>> comps_;
  std::vector<GlobalId> routeIds_;
  std::vector<Index> rootOf_;
  // Per sorted point: a lower bound of its lightest foreign edge (rounded
  // down; it only grows, as the other components shrink). Per point that
  // asked (memoAt_, memoPoint_ its inverse) per rank what it learnt there
  // (memos_); per other rank the labels of its points that answers named
  // (kept current by that rank); per other rank this rank's points named to
  // it, and the label last told.
  std::vector<float> lowForeign_;
  std::vector<Index> memoAt_;
  std::vector<Index> memoPoint_;
  std::vector<ForeignMemo<T>> memos_;
  std::vector<std::unordered_map<Index, GlobalId>> foreignLabel_;
  std::vector<std::map<Index, GlobalId>> watched_;
  // Per rank, per cell of its cover: the one label of its points, or none.
  static constexpr GlobalId kMixedCell = -1;
  std::vector<std::vector<GlobalId>> cellLabel_;
  // Euclidean: this rank's own tree (edges between components only), and
  // per component the position of its lightest edge there.
  static constexpr std::size_t kNoTreeEdge = std::size_t(-1);
  bool useLocalTree_;
  std::vector<LocalTreeEdge> localTree_;
  std::vector<std::size_t> treeBest_;
  std::vector<std::vector<EdgeAnswer<T>>> foreignFound_;
  std::vector<Choice> best_;
  std::vector<EmstEmitted<T>> emitted_;
  double roundQueries_ = 0;
  double boundaryBytes_ = 0; // received by the boundary queries and answers
};
} // namespace

template <class T>
std::vector<EmstEmitted<T>> runDistributedBoruvka(const EmstRankPoints<T>& points,
  const EmstProblem<T>& piece, const double* core2, double maxBound2, int threads,
  const RunControl& control, Communicator& comm, EmstTraffic& traffic, RunInfo& info)
{
  std::vector<LocalTreeEdge> localTree;
  bool stopped = false;
  if (!core2)
  {
    StageTimer timer(&info, "local tree");
    try
    {
      localTree = localTreeEdges(points, piece, threads, progressSpan(control, 0.2, 0.2));
    }
    catch (const Aborted&)
    {
      stopped = true; // told to every rank at the rounds' first agreement
    }
  }
  return DistributedBoruvka<T>(
    points, core2, maxBound2, std::move(localTree), threads, comm, traffic)
    .run(control, stopped, info);
}

template std::vector<EmstEmitted<float>> runDistributedBoruvka<float>(const EmstRankPoints<float>&,
  const EmstProblem<float>&, const double*, double, int, const RunControl&, Communicator&,
  EmstTraffic&, RunInfo&);
template std::vector<EmstEmitted<double>> runDistributedBoruvka<double>(
  const EmstRankPoints<double>&, const EmstProblem<double>&, const double*, double, int,
  const RunControl&, Communicator&, EmstTraffic&, RunInfo&);
} // namespace jz
