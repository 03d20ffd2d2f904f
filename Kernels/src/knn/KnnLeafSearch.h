// The kNN leaf kernel (LeafToLeaf of §III-B) as the leaf hook of the kNN
// walk policy: for one receiving leaf and its sorted list, the exact K
// nearest sources of each of its query points, handed to
// reduce(sortedQueryIndex, RankedNeighbors).
//
// No leaf lists are built: the own leaf goes first, so each query's K-th
// candidate, and with it its filter radius, is tight from the start; then
// the parent's list, sorted by lower bound, and under each entry the source
// leaves near enough, each visited once for all queries near it (its points
// stay in cache), until the list passes every query's bound. Each
// query keeps its candidates ranked by the pre-filter distance
// (KnnCandidates.h), so every survivor past the K-th tightens its radius at
// once; exact distances are computed at the end, for about K candidates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "knn/KnnCandidates.h"
#include "knn/KnnNodePolicy.h"
#include "knn/KnnQueryRows.h"
#include "walk/LeafDistances.h"

namespace jz
{
// Whether a reducer can warm the output slots of a query (prefetch(q)).
template <class Reduce, class = void>
struct KnnReducePrefetches : std::false_type
{
};
template <class Reduce>
struct KnnReducePrefetches<Reduce,
  std::void_t<decltype(std::declval<const Reduce&>().prefetch(Index()))>> : std::true_type
{
};

template <class T, class Metric, class Reduce>
class KnnLeafSearch : public KnnNodePolicy<T, Metric>
{
  using Base = KnnNodePolicy<T, Metric>;

public:
  static constexpr bool kLeafLists = false; // the parent's list is walked

  // Query points that `rows` leaves without a row only act as sources.
  KnnLeafSearch(const ZTree<T>& tree, int k, const Metric& metric, int numThreads,
    const SourceKeys* keys, const KnnQueryRows& rows, Reduce& reduce)
    : Base(tree, k, metric, numThreads)
    , keys_(keys)
    , rows_(rows)
    , reduce_(reduce)
    , margin_(FilterMargin::of(tree))
    , scratch_(numThreads)
  {
    const Periodicity& per = tree.periodicity;
    for (int d = 0; d < 3; ++d)
      periods_[d] = T(per.length[d]);
  }

  // The engine hands a parent's view here before its leaves: kept for them.
  // FindRmax is skipped for leaves that seed themselves (consumeLeaf): their
  // seeds bound every query, and without leaf lists nothing else reads a
  // leaf's radius (it stays infinite, and so does the parent's reach); and
  // for leaves whose queries all act as sources only (nothing to search).
  double beginParent(const ParentView& parent)
  {
    scratch_.mine().parent = parent;
    if (parent.plane > 0)
      return Base::beginParent(parent);
    bool seedsItself = false;
    const double reach2 = this->findRmax(parent,
      [&](Index c)
      {
        if (!searches(c))
          return false;
        seedsItself = seedsItself || seedCount(c) >= seedSize();
        return seedCount(c) < seedSize();
      });
    return seedsItself ? kInfinity : reach2;
  }

  void consumeLeaf(Index c, const LeafList&)
  {
    if (!searches(c))
      return;
    const TreePlane<T>& plane = this->tree_.planes[0];
    Index q0 = plane.querySplit[c], nq = plane.querySplit[c + 1] - q0;
    const Index leafQ0 = q0, leafNq = nq;
    // A run of duplicate queries: all share one result, searched once.
    const bool run = nq > 1 && boxIsPoint(this->tree_.queryBox(0, c));
    if (run)
    {
      while (nq > 0 && isSourceOnly(q0))
        ++q0, --nq;
      nq = std::min<Index>(nq, 1);
    }
    if constexpr (KnnReducePrefetches<Reduce>::value)
      for (Index q = leafQ0; q < leafQ0 + leafNq; ++q)
        reduce_.prefetch(q);
    Scratch& s = scratch_.mine();
    s.reserve(nq);
    initQueries(c, q0, nq, s);
    std::size_t next = 0;
    if (seedCount(c) >= seedSize())
    {
      // The own leaf is the whole seed: seeded first, its bound (far below
      // FindRmax's) then picks the visits.
      s.seed.assign(1, c);
      seedQueries(q0, nq, s);
      collectVisits(c, nq, s);
    }
    else
    {
      collectVisits(c, nq, s);
      next = chooseSeed(c, s);
      seedQueries(q0, nq, s);
    }
    double leafBound2 = s.maxBound2(nq);
    orderVisitsWithin(next, leafBound2, s);
    for (const std::uint64_t packed : s.visitOrder)
    {
      const Visit& v = s.visits[std::uint32_t(packed)];
      if (v.low2 <= leafBound2)
        leafBound2 = searchSourceLeaf(v.leaf, q0, nq, s);
    }
    for (Index q = 0; q < nq; ++q)
    {
      if (isSourceOnly(q0 + q))
        continue;
      const RankedNeighbors nb = rankExactly(q0, q, s);
      if (!run)
        reduce_(q0 + q, nb);
      else
        for (Index r = leafQ0; r < leafQ0 + leafNq; ++r)
          if (!isSourceOnly(r))
            reduce_(r, nb);
    }
  }

private:
  struct Visit
  {
    double key, low2;
    Index leaf;
    bool operator<(const Visit& o) const { return key < o.key || (key == o.key && leaf < o.leaf); }
  };
  struct Scratch
  {
    std::vector<Visit> visits;
    std::vector<std::uint64_t> visitOrder; // (float key bits, visit) after the seed
    std::vector<Index> seed;
    std::vector<T> seedD2, cutD2;
    std::vector<Index> seedSrc, seedOrder, cutSrc;
    ParentView parent;               // of the leaves being consumed
    FilterRankedCandidates<T> lists; // of the query points of the leaf
    std::vector<double> bound2;      // exact K-th radius bounds (slack included)
    std::vector<T> filter2;          // their pre-filter thresholds
    std::vector<Index> active;
    std::vector<Index> survivors;
    std::vector<T> survivorD2;
    std::vector<Index> survivorOrder;
    std::vector<double> rankedD2;
    std::vector<Index> rankedSrc;
    // The last seeded query's K-th pre-filter distance: the next query's
    // first guess (rankSeed), across leaves too (the next leaf is near).
    T guess = std::numeric_limits<T>::max();
    void reserve(Index nq)
    {
      if (bound2.size() < nq)
      {
        bound2.resize(nq);
        filter2.resize(nq + kSimdPadding);
        active.resize(nq);
      }
    }
    double maxBound2(Index nq) const
    {
      double m = 0;
      for (Index q = 0; q < nq; ++q)
        m = std::max(m, bound2[q]);
      return m;
    }
  };

  const T* periodsOrNull() const { return Metric::kPeriodic ? periods_ : nullptr; }
  bool isSourceOnly(Index sortedQuery) const { return !rows_.searches(sortedQuery); }

  // Whether leaf c has a query that searches (not a source only).
  bool searches(Index c) const
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    for (Index q = plane.querySplit[c]; q < plane.querySplit[c + 1]; ++q)
      if (!isSourceOnly(q))
        return true;
    return false;
  }

  // Sources in a leaf's seed: twice K gives a K-th bound close to the final
  // one (measured: K and 3K were slower at K = 16 and 64).
  Index seedSize() const { return 2 * Index(this->k_); }

  // The source leaves of the parent's list that may hold a neighbour of leaf
  // c's queries, in list order (chooseSeed and orderVisitsWithin rank them).
  void collectVisits(Index c, Index nq, Scratch& s) const
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    const ParentView& parent = s.parent;
    const Box<T>& queryBox = this->tree_.queryBox(0, c);
    const double bound2 = s.maxBound2(nq);
    s.visits.clear();
    Box<T> centre;
    for (int k = 0; k < 3; ++k)
      centre.lo[k] = centre.hi[k] = queryBox.lo[k] + (queryBox.hi[k] - queryBox.lo[k]) / 2;
    for (std::size_t e = 0; e < parent.numEntries; ++e)
    {
      if (parent.entryLow2(e) > bound2)
        break; // sorted: nothing closer follows (§III-D)
      const Index Q = parent.source[e];
      for (Index d = parent.firstChild(Q); d < parent.endChild(Q); ++d)
      {
        if (d == c || plane.numSources(d) == 0)
          continue;
        const double low2 = this->metric_.low2(queryBox, plane.sourceBox[d]);
        if (low2 <= bound2)
          s.visits.push_back(Visit{ this->metric_.low2(centre, plane.sourceBox[d]), low2, d });
      }
    }
  }

  // The seed: the own leaf, then the nearest leaves (selected to the front
  // of the visits, a few scans) until they hold seedSize() sources; returns
  // the first visit left out.
  std::size_t chooseSeed(Index c, Scratch& s) const
  {
    s.seed.clear();
    Index seeded = 0;
    if (this->tree_.planes[0].numSources(c) > 0)
    {
      s.seed.push_back(c);
      seeded += seedCount(c);
    }
    std::size_t next = 0;
    for (; next < s.visits.size() && seeded < seedSize(); ++next)
    {
      std::iter_swap(
        s.visits.begin() + next, std::min_element(s.visits.begin() + next, s.visits.end()));
      s.seed.push_back(s.visits[next].leaf);
      seeded += seedCount(s.visits[next].leaf);
    }
    return next;
  }

  // visitOrder: the visits from `first` on that the seeded bound still
  // admits, nearest to the leaf's centre first: the bounds only shrink, so
  // the others would be skipped anyway, and far fewer are left to sort
  // (about a quarter). The order only paces the bounds, so the keys are
  // rounded to float and packed with the visit's position into one integer
  // (the bits of a non-negative float order like it).
  static void orderVisitsWithin(std::size_t first, double bound2, Scratch& s)
  {
    s.visitOrder.clear();
    for (std::size_t v = first; v < s.visits.size(); ++v)
      if (s.visits[v].low2 <= bound2)
      {
        const float key = float(s.visits[v].key);
        std::uint32_t bits;
        std::memcpy(&bits, &key, sizeof bits);
        s.visitOrder.push_back(std::uint64_t(bits) << 32 | std::uint32_t(v));
      }
    std::sort(s.visitOrder.begin(), s.visitOrder.end());
  }

  // Every query against all sources of the seed leaves at once: their K-th
  // pre-filter distance bounds the exact K-th (widened), then the sources
  // within that bound are offered nearest first (appends, no shifting).
  void seedQueries(Index q0, Index nq, Scratch& s)
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    const SortedPoints<T>& src = this->tree_.sources;
    const SortedPoints<T>& qry = this->tree_.queryPoints();
    const std::size_t k = std::size_t(this->k_);
    Index total = 0;
    for (Index leaf : s.seed)
      total += seedCount(leaf) + kSimdPadding;
    if (s.seedD2.size() < std::size_t(total))
    {
      s.seedD2.resize(total);
      s.seedOrder.resize(total);
      s.cutD2.resize(total);
      s.cutSrc.resize(total);
      s.seedSrc.resize(total);
    }
    Index n = 0;
    for (Index leaf : s.seed)
    {
      const Index s0 = plane.sourceSplit[leaf];
      for (Index i = 0, m = seedCount(leaf); i < m; ++i)
        s.seedSrc[n++] = s0 + i;
    }
    T guess = s.guess;
    for (Index q = 0; q < nq; ++q)
    {
      if (isSourceOnly(q0 + q))
        continue;
      const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
      Index at = 0;
      for (Index leaf : s.seed)
      {
        const Index s0 = plane.sourceSplit[leaf], m = seedCount(leaf);
        leafDistances2(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, m, p,
          periodsOrNull(), s.seedD2.data() + at);
        at += m;
      }
      const Ranked seed = rankSeed(n, guess, s);
      if (std::size_t(n) >= k)
      {
        guess = seed.d2[seed.order[k - 1]];
        tighten(q, margin_.widen(double(guess)) * (1 + kBoundSlack), s);
      }
      // Nearest first: appends while the list has room, offers after (ties;
      // an offer after a compaction inserts at the end, as an append would).
      Index r = s.lists.appendRanked(q, seed.d2, seed.src, seed.order, seed.n, s.filter2[q]);
      for (; r < seed.n; ++r)
      {
        const Index i = seed.order[r];
        const T d2 = seed.d2[i];
        if (!(d2 <= s.filter2[q]))
          break;
        offer(q, p, d2, seed.src[i], s);
      }
    }
    s.guess = guess;
  }

  struct Ranked
  {
    const T* d2;
    const Index* src;
    const Index* order; // of d2 by (distance, position)
    Index n;
  };

  // The seed's n candidates (seedD2, seedSrc) ranked; when at least K lie
  // within `guess` (the previous query's K-th: queries of a leaf, and
  // consecutive leaves, are close; grown a little while fewer lie within
  // it, then more), only those within its
  // filter, a prefix of the ranking of all that holds every candidate the
  // query's filter can pass (filterOf is monotone). The ranking costs n^2.
  Ranked rankSeed(Index n, T guess, Scratch& s) const
  {
    T* d2 = s.seedD2.data();
    Index* src = s.seedSrc.data();
    const Index k = Index(this->k_);
    if (n >= k && guess < std::numeric_limits<T>::max())
    {
      Index within = countAtMost(d2, n, guess);
      for (int grow = 0; grow < 6 && within < k && guess > T(0); ++grow)
      {
        guess *= grow < 3 ? T(1.5) : T(4);
        within = countAtMost(d2, n, guess);
      }
      for (int shrink = 0; shrink < 2 && within > k + k / 2; ++shrink)
      {
        const T smaller = guess * T(0.7);
        const Index w = countAtMost(d2, n, smaller);
        if (w < k)
          break;
        guess = smaller, within = w;
      }
      if (within >= k && guess < std::numeric_limits<T>::max())
      {
        const T cut = filterOf(margin_.widen(double(guess)) * (1 + kBoundSlack));
        n = packAtMost(d2, src, n, cut, s.cutD2.data(), s.cutSrc.data());
        d2 = s.cutD2.data(), src = s.cutSrc.data();
      }
    }
    rankOrder(d2, n, s.seedOrder.data());
    return Ranked{ d2, src, s.seedOrder.data(), n };
  }

  // How many of a source leaf's points can be neighbours: a run of
  // duplicates (ordered by key, orderRunsByKey) offers only its K smallest
  // keys at one distance.
  Index seedCount(Index leaf) const
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    const Index n = plane.numSources(leaf);
    return n > Index(this->k_) && boxIsPoint(plane.sourceBox[leaf]) ? Index(this->k_) : n;
  }

  // The pre-filter threshold of an exact bound: every source within it
  // passes (FilterMargin).
  T filterOf(double bound2) const { return threshold(bound2, margin_.widen(bound2)); }

  // The threshold of bound2 from `widened`, at least margin_.widen(bound2):
  // none while there is no bound yet.
  static T threshold(double bound2, double widened)
  {
    return bound2 < 1e30 ? T(widened) : std::numeric_limits<T>::max();
  }

  // Every query starts from the leaf's node bound (FindRmax); a source-only
  // point searches nothing (its filter passes no distance).
  void initQueries(Index c, Index q0, Index nq, Scratch& s) const
  {
    const double leafRmax2 = this->rmax2_[c] * (1 + kBoundSlack);
    s.lists.reset(nq, this->k_);
    for (Index q = 0; q < nq; ++q)
    {
      const bool search = !isSourceOnly(q0 + q);
      s.bound2[q] = search ? leafRmax2 : 0.0;
      s.filter2[q] = search ? filterOf(leafRmax2) : T(-1);
    }
  }

  // The points of one source leaf against the queries near its box; returns
  // the largest bound of the leaf's queries afterwards.
  double searchSourceLeaf(Index leaf, Index q0, Index nq, Scratch& s)
  {
    const TreePlane<T>& plane = this->tree_.planes[0];
    const SortedPoints<T>& src = this->tree_.sources;
    const SortedPoints<T>& qry = this->tree_.queryPoints();
    const Box<T>& box = plane.sourceBox[leaf];
    const Index s0 = plane.sourceSplit[leaf];
    Index n = plane.sourceSplit[leaf + 1] - s0;
    // A run of duplicates (ordered by key, orderRunsByKey): at one distance
    // only its K smallest keys can be among the K nearest.
    if (n > Index(this->k_) && boxIsPoint(box))
      n = Index(this->k_);
    if (s.survivors.size() < n)
    {
      s.survivors.resize(n);
      s.survivorD2.resize(n + kSimdPadding); // rankOrder pads it
      s.survivorOrder.resize(n);
    }
    const Index numActive = queriesNearBox(qry.x.data() + q0, qry.y.data() + q0, qry.z.data() + q0,
      nq, box.lo, box.hi, periodsOrNull(), s.filter2.data(), s.active.data());
    for (Index a = 0; a < numActive; ++a)
    {
      const Index q = s.active[a];
      const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
      const Index m = leafCandidates(src.x.data() + s0, src.y.data() + s0, src.z.data() + s0, n, p,
        periodsOrNull(), s.filter2[q], s.survivors.data(), s.survivorD2.data());
      offerSurvivors(q, p, m, s0, s);
    }
    return s.maxBound2(nq);
  }

  // Query q (at p)'s m candidates from one source leaf (survivors, offsets
  // from s0). A batch of at least a block is offered nearest first: each
  // candidate then tightens the bound before the farther ones arrive, none
  // is inserted only to be pushed past the K-th by a nearer one of the same
  // batch, and the first one the filter rejects ends the batch. Smaller
  // batches cost more to rank than they save.
  void offerSurvivors(Index q, const T* p, Index m, Index s0, Scratch& s) const
  {
    if (m < kRankedBatch)
    {
      for (Index j = 0; j < m; ++j)
        offer(q, p, s.survivorD2[j], s0 + s.survivors[j], s);
      return;
    }
    rankOrder(s.survivorD2.data(), m, s.survivorOrder.data());
    for (Index r = 0; r < m; ++r)
    {
      const Index j = s.survivorOrder[r];
      if (!(s.survivorD2[j] <= s.filter2[q]))
        break;
      offer(q, p, s.survivorD2[j], s0 + s.survivors[j], s);
    }
  }
  static constexpr Index kRankedBatch = 8;

  // Query q (at p)'s candidate source at pre-filter distance d2: kept if it may be
  // among the K nearest. Past the K-th, the K-th pre-filter distance bounds
  // the exact K-th (widened), and that bound the filter (widened again).
  __attribute__((always_inline)) void offer(
    Index q, const T* p, T d2, Index source, Scratch& s) const
  {
    if (!(d2 <= s.filter2[q]))
      return; // the filter tightened since the leaf's scan
    const std::size_t k = std::size_t(this->k_);
    if (s.lists.full(q))
    {
      // Ties at the K-th distance: rank exactly, keep K, bound exactly.
      auto exact = [&](Index si) { return exactDistance2(p, si); };
      tighten(q, s.lists.compact(q, k, exact, *keys_) * (1 + kBoundSlack), s);
      if (!(d2 <= s.filter2[q]))
        return;
    }
    // Past rank K-1 (at or beyond the K-th) the K-th is unchanged; before K
    // candidates, no bound.
    const std::size_t n = s.lists.size(q);
    const bool tightens = n + 1 >= k && (n < k || d2 < s.lists.kthBound(q, k));
    s.lists.insert(q, d2, source);
    if (!tightens)
      return;
    double filter2;
    const double bound2 = margin_.boundAndFilter(double(s.lists.kthBound(q, k)), filter2);
    if (bound2 < s.bound2[q])
    {
      s.bound2[q] = bound2;
      s.filter2[q] = threshold(bound2, filter2);
    }
    s.lists.trim(q, k, s.filter2[q]);
  }

  __attribute__((always_inline)) void tighten(Index q, double bound2, Scratch& s) const
  {
    if (bound2 < s.bound2[q])
    {
      s.bound2[q] = bound2;
      s.filter2[q] = filterOf(bound2);
    }
  }

  double exactDistance2(const T* p, Index si) const
  {
    const SortedPoints<T>& src = this->tree_.sources;
    const T sp[3] = { src.x[si], src.y[si], src.z[si] };
    return this->metric_.point2(p, sp);
  }

  // The exact K nearest of query q (sorted index q0 + q) among its candidates.
  RankedNeighbors rankExactly(Index q0, Index q, Scratch& s) const
  {
    const SortedPoints<T>& qry = this->tree_.queryPoints();
    const T p[3] = { qry.x[q0 + q], qry.y[q0 + q], qry.z[q0 + q] };
    const std::size_t n = s.lists.size(q);
    if (s.rankedD2.size() < n)
    {
      s.rankedD2.resize(n);
      s.rankedSrc.resize(n);
    }
    auto exact = [&](Index si) { return exactDistance2(p, si); };
    return s.lists.rank(q, exact, *keys_, s.rankedD2.data(), s.rankedSrc.data());
  }

  const SourceKeys* keys_;
  KnnQueryRows rows_;
  Reduce& reduce_;
  FilterMargin margin_; // pre-filter vs exact distances, periodic wrap included
  T periods_[3];
  PerThread<Scratch> scratch_;
};
} // namespace jz
