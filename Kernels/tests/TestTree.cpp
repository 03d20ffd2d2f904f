// Invariants of the z-order plane tree: sorted order, every point in exactly
// one node per plane, node sizes, nesting, boxes and levels.
#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "PointSets.h"
#include "TestHarness.h"
#include "jz/Tree.h"
#include "jz/ZOrder.h"

namespace
{
template <class T>
struct NonDeduced
{
  using type = T;
};

template <class T>
void checkPoints(const jz::SortedPoints<T>& pts, std::size_t n)
{
  JZ_CHECK_EQ(pts.size(), n);
  std::vector<char> seen(n, 0);
  for (jz::Index i = 0; i < pts.size(); ++i)
  {
    JZ_CHECK(pts.inputIndex[i] < n && !seen[pts.inputIndex[i]]);
    if (pts.inputIndex[i] < n)
      seen[pts.inputIndex[i]] = 1;
  }
}

template <class T>
void checkTree(
  const std::vector<T>& src, const std::vector<typename NonDeduced<T>::type>* qry, bool periodic)
{
  const jz::Index ns = jz::Index(src.size() / 3);
  const jz::Index nq = qry ? jz::Index(qry->size() / 3) : 0;
  jz::Periodicity per;
  double lo[3] = { 0, 0, 0 };
  if (periodic)
  {
    for (int d = 0; d < 3; ++d)
    {
      lo[d] = 0.1;
      per.length[d] = 0.7;
    }
  }
  jz::ZTree<T> tree;
  jz::buildTreeCpu(src.data(), ns, qry ? qry->data() : nullptr, nq, per, lo, jz::TreeBuildOptions(),
    tree, jz::RunControl());
  checkPoints(tree.sources, ns);
  if (qry)
    checkPoints(tree.queries, nq);

  // Joint z-order: re-merge both types and check sortedness per type.
  auto checkSorted = [&](const jz::SortedPoints<T>& pts)
  {
    for (jz::Index i = 1; i < pts.size(); ++i)
    {
      T a[3], b[3];
      pts.point(i - 1, a);
      pts.point(i, b);
      JZ_CHECK(!jz::zLess(b, a));
      if (periodic)
        for (int d = 0; d < 3; ++d)
          JZ_CHECK(b[d] >= T(lo[d]) && double(b[d]) < lo[d] + per.length[d]);
    }
  };
  checkSorted(tree.sources);
  if (qry)
    checkSorted(tree.queries);

  double nmax = jz::kLeafSize;
  for (std::size_t p = 0; p < tree.planes.size(); ++p, nmax *= jz::kCoarsening)
  {
    const jz::TreePlane<T>& plane = tree.planes[p];
    const jz::Index nodes = plane.numNodes();
    JZ_CHECK(nodes >= 1);
    JZ_CHECK_EQ(plane.sourceSplit.front(), 0u);
    JZ_CHECK_EQ(plane.sourceSplit.back(), ns);
    JZ_CHECK_EQ(plane.querySplit.back(), qry ? nq : ns);
    for (jz::Index j = 0; j < nodes; ++j)
    {
      JZ_CHECK(plane.sourceSplit[j] <= plane.sourceSplit[j + 1]);
      JZ_CHECK(plane.numSources(j) + plane.numQueries(j) > 0);
      // Only a run of duplicates, which no cell can split, may exceed nmax.
      auto pointOrEmpty = [](const jz::Box<T>& b)
      { return jz::boxIsEmpty(b) || jz::boxIsPoint(b); };
      const bool run =
        pointOrEmpty(plane.sourceBox[j]) && (!qry || pointOrEmpty(plane.queryBox[j]));
      JZ_CHECK(run || (plane.numSources(j) <= nmax && plane.numQueries(j) <= nmax));
      // Boxes hold their points, and the node's level is that of its cell.
      for (jz::Index i = plane.sourceSplit[j]; i < plane.sourceSplit[j + 1]; ++i)
      {
        T pt[3];
        tree.sources.point(i, pt);
        for (int d = 0; d < 3; ++d)
          JZ_CHECK(pt[d] >= plane.sourceBox[j].lo[d] && pt[d] <= plane.sourceBox[j].hi[d]);
      }
      if (!qry && plane.numSources(j) > 0)
      {
        T a[3], b[3];
        tree.sources.point(plane.sourceSplit[j], a);
        tree.sources.point(plane.sourceSplit[j + 1] - 1, b);
        JZ_CHECK_EQ(plane.level[j], jz::mortonLevel(a, b));
      }
    }
    if (p > 0)
    {
      const jz::TreePlane<T>& below = tree.planes[p - 1];
      JZ_CHECK_EQ(plane.childSplit.front(), 0u);
      JZ_CHECK_EQ(plane.childSplit.back(), below.numNodes());
      for (jz::Index j = 0; j <= nodes; ++j)
      {
        JZ_CHECK_EQ(below.sourceSplit[plane.childSplit[j]], plane.sourceSplit[j]);
        JZ_CHECK_EQ(below.querySplit[plane.childSplit[j]], plane.querySplit[j]);
      }
    }
  }
}
} // namespace

JZ_TEST(TreeInvariantsAllDistributions)
{
  for (const std::string& kind : jztest::allKinds())
  {
    for (std::size_t n : { 1, 2, 47, 49, 1000, 30000 })
    {
      checkTree<float>(jztest::makePoints<float>(kind, n), nullptr, false);
      checkTree<double>(jztest::makePoints<double>(kind, n, 5), nullptr, false);
    }
  }
}

JZ_TEST(RunsOfDuplicatesStayWhole)
{
  // Uniform points plus runs of 1 to 5000 copies: every run lies in one leaf
  // (the tree never splits identical points, so no run costs more than one
  // node per plane), and each leaf over the leaf size is one run.
  for (bool periodic : { false, true })
  {
    auto pts = jztest::makePoints<double>("uniform", 20000, 7);
    std::vector<std::size_t> runStart;
    for (std::size_t m : { 1, 2, 47, 48, 49, 300, 5000 })
    {
      runStart.push_back(pts.size() / 3);
      const double p[3] = { pts[3 * m], pts[3 * m + 1], pts[3 * m + 2] };
      for (std::size_t c = 0; c < m; ++c)
        pts.insert(pts.end(), p, p + 3);
    }
    checkTree<double>(pts, nullptr, periodic);
    jz::ZTree<double> tree;
    const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
    jz::buildTreeCpu(pts.data(), jz::Index(pts.size() / 3), (const double*)nullptr, 0,
      jz::Periodicity::of(periodic, lo, hi), lo, jz::TreeBuildOptions(), tree, jz::RunControl());
    const jz::TreePlane<double>& leaves = tree.planes[0];
    std::vector<jz::Index> leafOf(pts.size() / 3);
    for (jz::Index j = 0; j < leaves.numNodes(); ++j)
    {
      for (jz::Index s = leaves.sourceSplit[j]; s < leaves.sourceSplit[j + 1]; ++s)
        leafOf[tree.sources.inputIndex[s]] = j;
      if (leaves.numSources(j) > jz::Index(jz::kLeafSize))
        JZ_CHECK(jz::boxIsPoint(leaves.sourceBox[j]));
    }
    for (std::size_t r = 0; r < runStart.size(); ++r)
    {
      const std::size_t end = r + 1 < runStart.size() ? runStart[r + 1] : pts.size() / 3;
      for (std::size_t i = runStart[r]; i < end; ++i)
        JZ_CHECK_EQ(leafOf[i], leafOf[runStart[r]]);
    }
  }
}

JZ_TEST(TreeInvariantsJointQueries)
{
  for (const std::string kind : { "uniform", "clustered", "duplicates" })
  {
    auto src = jztest::makePoints<float>(kind, 20000, 3);
    auto qry = jztest::makePoints<float>("uniform", 7000, 4);
    checkTree(src, &qry, false);
    auto fewSrc = jztest::makePoints<double>(kind, 50, 5);
    auto manyQry = jztest::makePoints<double>(kind, 30000, 6);
    checkTree(fewSrc, &manyQry, false);
  }
}

JZ_TEST(TreeInvariantsPeriodicWrapping)
{
  auto pts = jztest::makePoints<double>("uniform", 20000, 9);
  for (double& x : pts)
    x = 3.0 * x - 1.0; // many points outside [0.1, 0.8)
  checkTree<double>(pts, nullptr, true);
}

JZ_TEST(TreeRejectsNonFinite)
{
  auto pts = jztest::makePoints<float>("uniform", 100);
  pts[3 * 17 + 1] = std::numeric_limits<float>::quiet_NaN();
  jz::ZTree<float> tree;
  double lo[3] = { 0, 0, 0 };
  JZ_CHECK_THROWS(jz::buildTreeCpu(pts.data(), 100, (const float*)nullptr, 0, jz::Periodicity(), lo,
    jz::TreeBuildOptions(), tree, jz::RunControl()));
}

JZ_TEST(RegularizationSplitsFarOutliers)
{
  // A dense clump plus far outliers: without regularization the outliers
  // would share huge nodes with clump points.
  auto pts = jztest::makePoints<double>("outliers", 50000, 2);
  jz::ZTree<double> tree;
  double lo[3] = { 0, 0, 0 };
  jz::buildTreeCpu(pts.data(), 50000, (const double*)nullptr, 0, jz::Periodicity(), lo,
    jz::TreeBuildOptions(), tree, jz::RunControl());
  // Most leaves are small cells.
  const auto& leaves = tree.planes[0];
  int huge = 0;
  for (jz::Index j = 0; j < leaves.numNodes(); ++j)
  {
    const auto& b = leaves.sourceBox[j];
    if (b.hi[0] - b.lo[0] > 100 && leaves.numSources(j) > 1)
      ++huge;
  }
  JZ_CHECK_MSG(huge < int(leaves.numNodes() / 10), huge << " of " << leaves.numNodes());
}

JZ_TEST(TreeSortsSpecialValues)
{
  // Signs, zeros, subnormals and values far apart: the bucketed sort must
  // still produce the comparator's order.
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float specials[] = { 0.0f, -0.0f, tiny, -tiny, 3 * tiny, 1e-30f, -1e-30f, 1e-3f, 1.0f,
    -1.0f, 1.5f, 1e6f, -1e6f, 1e30f, -1e30f, 2.5e-38f };
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> pick(0, int(sizeof(specials) / sizeof(float)) - 1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> pts(3 * 20000);
  for (std::size_t i = 0; i < pts.size(); ++i)
    pts[i] = (i % 7 == 0) ? u(rng) : specials[pick(rng)] * (1 + 1e-3f * float(i % 3));
  checkTree<float>(pts, nullptr, false);
  std::vector<double> ptsd(pts.begin(), pts.end());
  for (std::size_t i = 0; i < ptsd.size(); i += 11)
    ptsd[i] *= 1e200;
  checkTree<double>(ptsd, nullptr, false);
}

JZ_TEST_MAIN()
