// The pre-filter's margin (FilterMargin, cpu/LeafDistances.h) on adversarial
// wrapped pairs: two points on opposite faces of a periodic box, at wrapped
// separations of 1e-6 to 1e-3 of the box length, in unit, large and offset
// boxes, float and double. For every pair the filter in the points'
// precision must keep the partner within its exact distance, and a bound
// from the filter's distance must hold the exact one; then kNN on sets of
// such pairs against brute force.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "TestHarness.h"
#include "walk/LeafDistances.h"
#include "jz/Geometry.h"
#include "jz/Knn.h"
#include "jz/Tree.h"

namespace
{
struct BoxCase
{
  double lo, length;
};

const BoxCase kBoxes[] = {
  { 0.0, 1.0 },    // unit
  { 0.1, 0.8 },    // [0.1, 0.9)
  { -3.3, 11.0 },  // [-3.3, 7.7)
  { 100.1, 0.8 },  // offset
  { 1000.1, 0.9 }, // far offset
  { 0.0, 1e6 },    // large
  { -5e5, 7.3e5 }, // large, across zero
};

// Pairs (p, q): p just above the lower face, q just below the upper face,
// wrapped separation ~ f L in x, and small separations in y and z (wrapped
// in y too). Rounded to T and wrapped into the box as the tree does.
template <class T>
std::vector<T> adversarialPairs(const BoxCase& box, std::mt19937_64& rng, int pairsPerScale)
{
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double L = box.length;
  std::vector<T> xyz;
  for (double f = 1e-6; f <= 1.01e-3; f *= std::sqrt(10.0))
  {
    for (int i = 0; i < pairsPerScale; ++i)
    {
      const double s = f * L * (0.5 + u(rng)), a = u(rng);
      const double p[3] = { box.lo + a * s, box.lo + u(rng) * s, box.lo + 0.5 * L + u(rng) * s };
      const double q[3] = { box.lo + L - (1 - a) * s, box.lo + L - u(rng) * s,
        box.lo + 0.5 * L + u(rng) * s };
      for (const double* pt : { p, q })
        for (int d = 0; d < 3; ++d)
          xyz.push_back(jz::wrapIntoBox(T(pt[d]), box.lo, L));
    }
  }
  return xyz;
}

template <class T>
jz::ZTree<T> treeOf(const std::vector<T>& xyz, const BoxCase& box)
{
  const double lo[3] = { box.lo, box.lo, box.lo };
  const double hi[3] = { box.lo + box.length, box.lo + box.length, box.lo + box.length };
  jz::ZTree<T> tree;
  jz::buildTreeCpu(xyz.data(), jz::Index(xyz.size() / 3), (const T*)nullptr, 0,
    jz::Periodicity::of(true, lo, hi), lo, jz::TreeBuildOptions(), tree, jz::RunControl());
  return tree;
}

// Failures of the three pre-filter checks on the pairs under `margin`.
template <class T>
int filterFailures(const std::vector<T>& xyz, const BoxCase& box, const jz::FilterMargin& margin)
{
  const double L = box.length;
  const jz::Periodicity per = jz::Periodicity::of(
    true, std::vector<double>(3, box.lo).data(), std::vector<double>(3, box.lo + L).data());
  const T periods[3] = { T(L), T(L), T(L) };
  int failures = 0;
  for (std::size_t i = 0; i + 5 < xyz.size(); i += 6)
  {
    const T* p = &xyz[i];
    const T* q = &xyz[i + 3];
    const double exact2 = jz::distance2(p, q, per);
    // Arrays of one source, padded for the vector loops.
    T xs[16] = {}, ys[16] = {}, zs[16] = {};
    xs[0] = q[0];
    ys[0] = q[1];
    zs[0] = q[2];
    // 1. The filter threshold from the exact distance keeps q.
    const T filter = T(margin.widen(exact2));
    jz::Index out[16];
    failures += jz::leafCandidates(xs, ys, zs, 1, p, periods, filter, out) == 1 ? 0 : 1;
    // 2. The query p is near q's (degenerate) box.
    T px[16] = {}, py[16] = {}, pz[16] = {}, f2[16] = {};
    px[0] = p[0];
    py[0] = p[1];
    pz[0] = p[2];
    f2[0] = filter;
    failures += jz::queriesNearBox(px, py, pz, 1, q, q, periods, f2, out) == 1 ? 0 : 1;
    // 3. A bound from the filter's own distance holds the exact one.
    T d2[16];
    jz::leafDistances2(xs, ys, zs, 1, p, periods, d2);
    failures += exact2 <= margin.widen(double(d2[0])) ? 0 : 1;
  }
  return failures;
}

template <class T>
void checkPairs()
{
  const char* type = jztest::typeName<T>();
  std::mt19937_64 rng(42);
  int relativeOnlyFailures = 0;
  for (const BoxCase& box : kBoxes)
  {
    const std::vector<T> xyz = adversarialPairs<T>(box, rng, 300);
    const jz::ZTree<T> tree = treeOf(xyz, box);
    const jz::FilterMargin margin = jz::FilterMargin::of(tree);
    JZ_CHECK(margin.absolute > 0);
    const int failures = filterFailures(xyz, box, margin);
    JZ_CHECK_MSG(failures == 0,
      type << " box [" << box.lo << ", " << box.lo + box.length << "): " << failures);
    relativeOnlyFailures += filterFailures(xyz, box, jz::FilterMargin());
  }
  // The pairs are adversarial: in float the former relative margin alone
  // drops some of them.
  if (std::string(type) == "float")
    JZ_CHECK_MSG(relativeOnlyFailures > 0, "relative-only failures: " << relativeOnlyFailures);
}

// Brute-force K nearest ids, ranked by (exact distance, id).
template <class T>
std::vector<jz::GlobalId> bruteForce(const std::vector<T>& xyz, const jz::Periodicity& per, int k)
{
  const std::size_t n = xyz.size() / 3;
  std::vector<jz::GlobalId> ids(n * k);
  std::vector<std::pair<double, jz::GlobalId>> all(n);
  for (std::size_t q = 0; q < n; ++q)
  {
    for (std::size_t j = 0; j < n; ++j)
      all[j] = { jz::distance2(&xyz[3 * q], &xyz[3 * j], per), jz::GlobalId(j) };
    std::partial_sort(all.begin(), all.begin() + k, all.end());
    for (int j = 0; j < k; ++j)
      ids[q * k + j] = all[j].second;
  }
  return ids;
}

template <class T>
void checkKnn()
{
  const char* type = jztest::typeName<T>();
  std::mt19937_64 rng(7);
  for (const BoxCase& box : kBoxes)
  {
    const std::vector<T> xyz = adversarialPairs<T>(box, rng, 120);
    const std::size_t n = xyz.size() / 3;
    jz::KnnProblem<T> pr;
    pr.sources = xyz.data();
    pr.numSources = n;
    pr.k = 6;
    pr.periodic = true;
    for (int d = 0; d < 3; ++d)
    {
      pr.boxLo[d] = box.lo;
      pr.boxHi[d] = box.lo + box.length;
    }
    std::vector<jz::GlobalId> ids(n * pr.k);
    jz::KnnResults<T> res;
    res.neighborIds = ids.data();
    jz::computeKnn(pr, res, jz::Backend::CPU);
    const auto want = bruteForce(xyz, jz::Periodicity::of(true, pr.boxLo, pr.boxHi), pr.k);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < ids.size(); ++i)
      bad += ids[i] != want[i];
    JZ_CHECK_MSG(bad == 0,
      type << " box [" << box.lo << ", " << box.lo + box.length << "): " << bad
           << " neighbour ids differ");
  }
}
} // namespace

JZ_TEST_FLOAT_AND_DOUBLE(FilterKeepsAdversarialWrappedPairs, checkPairs)
JZ_TEST_FLOAT_AND_DOUBLE(KnnOnAdversarialWrappedPairs, checkKnn)

JZ_TEST(MarginIsZeroWithoutPeriodicity)
{
  std::vector<float> xyz(300, 0.5f);
  for (std::size_t i = 0; i < xyz.size(); ++i)
    xyz[i] = float(i % 17) / 17.0f;
  jz::ZTree<float> tree;
  const double lo[3] = { 0, 0, 0 };
  jz::buildTreeCpu(xyz.data(), 100, (const float*)nullptr, 0, jz::Periodicity(), lo,
    jz::TreeBuildOptions(), tree, jz::RunControl());
  const jz::FilterMargin margin = jz::FilterMargin::of(tree);
  JZ_CHECK_EQ(margin.absolute, 0.0);
  // Then the widening is bit for bit the former relative one.
  for (double x : { 0.0, 1e-300, 1e-20, 0.3, 7.0, 1e30 })
    JZ_CHECK_EQ(margin.widen(x), x * (1 + 1e-5) + 1e-30);
}

JZ_TEST(BoundAndFilterFromOneRoot)
{
  // boundAndFilter's bound is widen(d2) (1 + kBoundSlack) bit for bit, and
  // its filter at least widen() of that bound, for margins from none to
  // the size of the distances and distances over the whole double range.
  for (const double a : { 0.0, 1e-30, 3e-12, 4.7e-8, 0.02, 1.0, 6e4 })
  {
    const jz::FilterMargin margin{ a };
    for (const double d2 : { 0.0, 1e-300, 2.5e-40, 1e-20, 3.1e-9, 0.3, 1.0, 7.0, 4e12, 1e29 })
    {
      double filter = 0;
      const double bound2 = margin.boundAndFilter(d2, filter);
      JZ_CHECK_EQ(bound2, margin.widen(d2) * (1 + jz::kBoundSlack));
      JZ_CHECK_MSG(filter >= margin.widen(bound2),
        "a " << a << ", d2 " << d2 << ": filter " << filter << " below " << margin.widen(bound2));
    }
  }
}

JZ_TEST_MAIN()
