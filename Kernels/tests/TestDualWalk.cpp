// The dual-walk engine on its own, with toy policies against brute force:
// per query, the number of sources within r (query-centric lists, whole
// source nodes accepted, sorted and unsorted), and per point the number of
// neighbours within r (each unordered node pair once, through the leaf pass
// and through a stored leaf list). A pair tested twice or never would change
// a count.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "walk/BoxMetric.h"
#include "walk/DualWalk.h"
#include "PointSets.h"
#include "TestHarness.h"

namespace
{
using jz::Index;
using jz::PairVerdict;

void atomicAdd(long long* slot, long long v)
{
  __atomic_fetch_add(slot, v, __ATOMIC_RELAXED);
}

// Per sorted query point, the sources within sqrt(r2). Sorted: the engine
// must hand over lists ordered by (lower bound, node) with true lower bounds.
template <class T, class Metric, bool Sorted>
struct CountWithin : jz::WalkPolicyDefaults
{
  static constexpr bool kSortedLists = Sorted;
  const jz::ZTree<T>& tree;
  Metric metric;
  double r2;
  std::vector<long long> count; // sorted query order
  long long disorder = 0;       // list entries out of order or with a wrong bound
  std::vector<int> planesSeen;

  CountWithin(const jz::ZTree<T>& t, const Metric& m, double r)
    : tree(t)
    , metric(m)
    , r2(r * r)
    , count(t.queryPoints().size(), 0)
  {
  }

  void beginPlane(int p) { planesSeen.push_back(p); }
  void endPlane(int p, std::size_t) { planesSeen.push_back(-1 - p); }

  double beginParent(const jz::ParentView& v)
  {
    for (std::size_t e = 1; Sorted && e < v.numEntries; ++e)
      if (v.entryLow2(e) < v.entryLow2(e - 1))
        atomicAdd(&disorder, 1);
    return r2; // entries farther than r cannot hold a source within r
  }

  template <class C>
  PairVerdict testPair(int p, Index c, Index d, const C&, double& low2) const
  {
    const jz::Box<T>& qb = tree.queryBox(p, c);
    const jz::Box<T>& sb = tree.planes[p].sourceBox[d];
    low2 = metric.low2(qb, sb);
    if (low2 > r2)
      return PairVerdict::Prune;
    return metric.high2(qb, sb) <= r2 ? PairVerdict::Accept : PairVerdict::Keep;
  }

  // Every source of d is within r of every query of c: c's thread owns them.
  template <class C>
  void accept(int p, Index c, Index d, const C&)
  {
    const jz::TreePlane<T>& plane = tree.planes[p];
    for (Index q = plane.querySplit[c]; q < plane.querySplit[c + 1]; ++q)
      count[q] += plane.numSources(d);
  }

  void consumeLeaf(Index c, const jz::LeafList& list)
  {
    const jz::TreePlane<T>& leaves = tree.planes[0];
    const jz::SortedPoints<T>& qry = tree.queryPoints();
    const jz::LeafCandidate* previous = nullptr;
    for (const jz::LeafCandidate& entry : list)
    {
      if (Sorted && previous && entry < *previous)
        atomicAdd(&disorder, 1);
      if (entry.low2 != metric.low2(tree.queryBox(0, c), leaves.sourceBox[entry.node]))
        atomicAdd(&disorder, 1);
      previous = &entry;
      for (Index q = leaves.querySplit[c]; q < leaves.querySplit[c + 1]; ++q)
      {
        T p[3], s[3];
        qry.point(q, p);
        for (Index k = leaves.sourceSplit[entry.node]; k < leaves.sourceSplit[entry.node + 1]; ++k)
        {
          tree.sources.point(k, s);
          count[q] += metric.point2(p, s) <= r2;
        }
      }
    }
  }
};

// Per sorted point, its other points within sqrt(r2); each unordered node
// pair is visited once, so both ends are counted here (atomics: the other
// node belongs to any thread).
template <class T, class Metric>
struct PairsWithin : jz::WalkPolicyDefaults
{
  static constexpr bool kUnorderedPairs = true;
  const jz::ZTree<T>& tree;
  Metric metric;
  double r2;
  std::vector<long long> count;
  long long misordered = 0; // a list entry d < c

  PairsWithin(const jz::ZTree<T>& t, const Metric& m, double r)
    : tree(t)
    , metric(m)
    , r2(r * r)
    , count(t.sources.size(), 0)
  {
  }

  template <class C>
  PairVerdict testPair(int p, Index c, Index d, const C&, double&) const
  {
    const jz::Box<T>& a = tree.planes[p].sourceBox[c];
    const jz::Box<T>& b = tree.planes[p].sourceBox[d];
    if (metric.low2(a, b) > r2)
      return PairVerdict::Prune;
    return metric.high2(a, b) <= r2 ? PairVerdict::Accept : PairVerdict::Keep;
  }

  template <class C>
  void accept(int p, Index c, Index d, const C&)
  {
    const jz::TreePlane<T>& plane = tree.planes[p];
    const long long nc = plane.numSources(c), nd = plane.numSources(d);
    for (Index k = plane.sourceSplit[c]; k < plane.sourceSplit[c + 1]; ++k)
      atomicAdd(&count[k], c == d ? nc - 1 : nd);
    if (c != d)
      for (Index k = plane.sourceSplit[d]; k < plane.sourceSplit[d + 1]; ++k)
        atomicAdd(&count[k], nc);
  }

  void linkLeaves(Index c, Index d)
  {
    if (d < c)
      atomicAdd(&misordered, 1);
    const jz::TreePlane<T>& leaves = tree.planes[0];
    for (Index i = leaves.sourceSplit[c]; i < leaves.sourceSplit[c + 1]; ++i)
      for (Index j = c == d ? i + 1 : leaves.sourceSplit[d]; j < leaves.sourceSplit[d + 1]; ++j)
      {
        T p[3], q[3];
        tree.sources.point(i, p);
        tree.sources.point(j, q);
        if (metric.point2(p, q) <= r2)
        {
          atomicAdd(&count[i], 1);
          atomicAdd(&count[j], 1);
        }
      }
  }

  void consumeLeaf(Index c, const jz::LeafList& list)
  {
    for (const jz::LeafCandidate& entry : list)
      linkLeaves(c, entry.node);
  }
};

struct Case
{
  std::string kind;
  std::size_t numSources, numQueries; // numQueries 0: self query
  bool periodic;
  double radius; // in mean spacings
  int threads;
};

template <class T>
jz::ZTree<T> buildTree(const std::vector<T>& src, const std::vector<T>& qry, const Case& c)
{
  jz::Periodicity per;
  if (c.periodic)
    per.length[0] = per.length[1] = per.length[2] = 1.0;
  jz::TreeBuildOptions options;
  options.leafSize = 8; // many planes from few points
  options.coarsening = 4;
  options.topNodesTarget = 100; // several super nodes
  const double lo[3] = { 0, 0, 0 };
  jz::ZTree<T> tree;
  jz::buildTreeCpu(src.data(), Index(c.numSources), qry.empty() ? nullptr : qry.data(),
    Index(c.numQueries), per, lo, options, tree, jz::RunControl());
  return tree;
}

// Brute force per point of `a`, sorted order: points of `b` within r.
template <class T, class Metric>
std::vector<long long> bruteCounts(const jz::SortedPoints<T>& a, const jz::SortedPoints<T>& b,
  const Metric& metric, double r2, bool excludeSelf)
{
  std::vector<long long> count(a.size(), 0);
  for (Index i = 0; i < a.size(); ++i)
  {
    T p[3], q[3];
    a.point(i, p);
    for (Index j = 0; j < b.size(); ++j)
    {
      b.point(j, q);
      count[i] += (!excludeSelf || i != j) && metric.point2(p, q) <= r2;
    }
  }
  return count;
}

template <class T>
std::vector<T> pointsIn01(const std::string& kind, std::size_t n, unsigned seed)
{
  std::vector<T> xyz = jztest::makePoints<T>(kind, n, seed);
  for (T& x : xyz)
  {
    x = T(double(x) - std::floor(double(x)));
    if (x >= T(1))
      x = T(0);
  }
  return xyz;
}

std::string describe(const Case& c, const char* what)
{
  return std::string(what) + " " + c.kind + " n=" + std::to_string(c.numSources) +
    " q=" + std::to_string(c.numQueries) + (c.periodic ? " periodic" : "") +
    " threads=" + std::to_string(c.threads);
}

template <class T, bool Sorted>
void checkCountWithin(const Case& c)
{
  const std::vector<T> src = pointsIn01<T>(c.kind, c.numSources, 3);
  const std::vector<T> qry =
    c.numQueries ? pointsIn01<T>("uniform", c.numQueries, 4) : std::vector<T>();
  const jz::ZTree<T> tree = buildTree(src, qry, c);
  const double r = c.radius * std::cbrt(1.0 / double(c.numSources));
  jz::withBoxMetric(tree.periodicity,
    [&](const auto& metric)
    {
      using Policy = CountWithin<T, std::decay_t<decltype(metric)>, Sorted>;
      Policy policy(tree, metric, r);
      jz::DualWalk<T, Policy> walk(tree, policy, c.threads);
      walk.leafPass(walk.walkDownTo(1));
      const auto ref = bruteCounts(tree.queryPoints(), tree.sources, metric, r * r, false);
      JZ_CHECK_MSG(policy.count == ref, describe(c, "sources within r"));
      JZ_CHECK_MSG(policy.disorder == 0, describe(c, "list order") << ": " << policy.disorder);
      // Every plane once, top down, each begun before it ends.
      std::vector<int> expected;
      for (int p = walk.numPlanes() - 1; p >= 0; --p)
      {
        expected.push_back(p);
        expected.push_back(-1 - p);
      }
      JZ_CHECK_MSG(policy.planesSeen == expected, describe(c, "plane hooks"));
    });
}

template <class T>
void checkPairsWithin(const Case& c, bool storedLeafList)
{
  const std::vector<T> src = pointsIn01<T>(c.kind, c.numSources, 5);
  const jz::ZTree<T> tree = buildTree(src, std::vector<T>(), c);
  const double r = c.radius * std::cbrt(1.0 / double(c.numSources));
  jz::withBoxMetric(tree.periodicity,
    [&](const auto& metric)
    {
      using Policy = PairsWithin<T, std::decay_t<decltype(metric)>>;
      Policy policy(tree, metric, r);
      jz::DualWalk<T, Policy> walk(tree, policy, c.threads);
      if (storedLeafList)
      {
        const auto leaves = walk.walkDownTo(0);
        for (Index a = 0; a < leaves.list.numReceivers(); ++a)
        {
          const jz::InteractionList::Entries entries = leaves.list.of(a);
          for (std::size_t e = 0; e < entries.count; ++e)
            policy.linkLeaves(a, entries.source[e]);
        }
      }
      else
      {
        walk.leafPass(walk.walkDownTo(1));
      }
      const auto ref = bruteCounts(tree.sources, tree.sources, metric, r * r, true);
      const char* what = storedLeafList ? "pairs within r, stored leaf list" : "pairs within r";
      JZ_CHECK_MSG(policy.count == ref, describe(c, what));
      JZ_CHECK_MSG(
        policy.misordered == 0, describe(c, what) << ": a list entry below its receiver");
    });
}

const std::vector<Case>& cases()
{
  static const std::vector<Case> all = {
    { "uniform", 5000, 0, false, 1.3, 1 }, { "uniform", 5000, 0, true, 1.3, 3 },
    { "clustered", 6000, 0, true, 0.8, 3 }, { "clustered", 6000, 2000, false, 2.0, 2 },
    { "duplicates", 4000, 0, false, 0.5, 3 }, { "planar", 4000, 1500, true, 1.5, 4 },
    { "uniform", 5, 0, false, 3.0, 2 },  // one plane, one super node
    { "uniform", 300, 0, true, 40.0, 2 } // r beyond half the box
  };
  return all;
}

JZ_TEST(DualWalkCountsSourcesWithinRadius)
{
  for (const Case& c : cases())
  {
    checkCountWithin<float, false>(c);
    checkCountWithin<double, true>(c);
  }
}

JZ_TEST(DualWalkVisitsEachUnorderedPairOnce)
{
  for (const Case& c : cases())
  {
    checkPairsWithin<double>(c, false);
    checkPairsWithin<float>(c, true);
  }
}

// An abort requested from the leaf pass's progress callback ends the walk.
JZ_TEST(DualWalkLeafPassAborts)
{
  const Case c{ "uniform", 5000, 0, false, 1.0, 2 };
  const std::vector<double> src = pointsIn01<double>(c.kind, c.numSources, 6);
  const jz::ZTree<double> tree = buildTree(src, std::vector<double>(), c);
  using Policy = CountWithin<double, jz::BoxMetric<false>, true>;
  Policy policy(tree, jz::BoxMetric<false>{ tree.periodicity }, 0.01);
  jz::DualWalk<double, Policy> walk(tree, policy, 2);
  const auto parents = walk.walkDownTo(1);
  bool aborted = false;
  try
  {
    walk.leafPass(parents, [](double) { return false; });
  }
  catch (const jz::Aborted&)
  {
    aborted = true;
  }
  JZ_CHECK(aborted);
}
} // namespace

JZ_TEST_MAIN()
