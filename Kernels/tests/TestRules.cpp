// The rules with one home each: the periodic wrap and nearest-image offset
// (Geometry.h), input validation (Validate.h), the relative linking length
// (LinkingLength.h) and the catalogue's mergeable per-group sums
// (GroupMoments.h), against independent references.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fof/GroupMoments.h"
#include "TestHarness.h"
#include "jz/Fof.h"
#include "jz/Geometry.h"
#include "jz/LinkingLength.h"
#include "jz/Validate.h"

#include <omp.h>

namespace
{
bool contains(const std::string& text, const std::string& word)
{
  return text.find(word) != std::string::npos;
}

template <class T>
bool isPositiveZero(T x)
{
  return x == T(0) && !std::signbit(x);
}
} // namespace

// --- Geometry.h -------------------------------------------------------------

JZ_TEST(WrapIntoBoxMovesByWholePeriods)
{
  // Exact binary fractions: x = lo + r + k L must come back as lo + r.
  const double lo = -2.5, L = 4.0;
  for (int k = -5; k <= 5; ++k)
    for (double r : { 0.0, 0.125, 1.5, 3.875 })
    {
      JZ_CHECK_EQ(jz::wrapIntoBox(lo + r + k * L, lo, L), lo + r);
      JZ_CHECK_EQ(jz::wrapIntoBox(float(lo + r + k * L), lo, L), float(lo + r));
    }
  // The upper face is outside: lo + L wraps to lo.
  JZ_CHECK_EQ(jz::wrapIntoBox(lo + L, lo, L), lo);
  // A float that wraps to just below the face rounds onto it: it becomes lo.
  JZ_CHECK_EQ(jz::wrapIntoBox(-1e-9f, 0.0, 1.0), 0.0f);    // 1 - 1e-9 rounds to 1.0f
  JZ_CHECK_EQ(jz::wrapIntoBox(-1e-9, 0.0, 1.0), 1 - 1e-9); // representable in double
  // -0 becomes +0, inside and outside a box.
  JZ_CHECK(isPositiveZero(jz::wrapIntoBox(-0.0, -1.0, 2.0)));
  JZ_CHECK(isPositiveZero(jz::wrapIntoBox(-0.0f, -1.0, 2.0)));
  // Far outside: a million periods away.
  JZ_CHECK_EQ(jz::wrapIntoBox(0.25 + 1e6, 0.0, 1.0), 0.25);
  // Result always inside [lo, lo + L) for random doubles and floats.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e4, 1e4);
  for (int i = 0; i < 20000; ++i)
  {
    const double x = u(rng), l0 = 0.1 * u(rng), len = 1e-3 + std::fabs(u(rng)) * 1e-2;
    const double wd = jz::wrapIntoBox(x, l0, len);
    const float wf = jz::wrapIntoBox(float(x), l0, len);
    JZ_CHECK(wd >= l0 && wd < l0 + len);
    JZ_CHECK(double(wf) >= l0 && double(wf) < l0 + len);
  }
}

JZ_TEST(NearestImageOffsetIsTheSmallestImage)
{
  // Reference: try every image shift in [-50, 50] periods.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-10, 10);
  for (int i = 0; i < 20000; ++i)
  {
    const double period = 0.5 + std::fabs(u(rng));
    const double d = u(rng) * 2;
    const double got = jz::nearestImageOffset(d, period);
    double best = d;
    for (int k = -50; k <= 50; ++k)
      if (std::fabs(d + k * period) < std::fabs(best))
        best = d + k * period;
    JZ_CHECK_MSG(std::fabs(got) <= std::fabs(best) + 1e-12 * period, d << " " << period);
    JZ_CHECK(std::fabs(got) <= 0.5 * period * (1 + 1e-15));
  }
  JZ_CHECK_EQ(jz::nearestImageOffset(0.75, 0.0), 0.75); // not periodic
  JZ_CHECK_EQ(jz::nearestImageOffset(0.75, 1.0), -0.25);
  JZ_CHECK_EQ(jz::nearestImageOffset(-3.25, 1.0), -0.25);
}

// --- Validate.h -------------------------------------------------------------

JZ_TEST(EveryRuleHasOneMessage)
{
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 }, flat[3] = { 1, 0, 1 };
  const double inf[3] = { 1, 1, std::numeric_limits<double>::infinity() };
  JZ_CHECK(jz::periodicBoxError(true, lo, hi).empty());
  JZ_CHECK(jz::periodicBoxError(false, lo, flat).empty()); // not periodic: any box
  const std::string flatMsg = jz::periodicBoxError(true, lo, flat);
  JZ_CHECK_MSG(contains(flatMsg, "periodic box") && contains(flatMsg, "y spans [0, 0]"), flatMsg);
  JZ_CHECK(contains(jz::periodicBoxError(true, lo, inf), "z spans"));
  const double huge[3] = { -1e308, 0, 0 }, hugeHi[3] = { 1e308, 1, 1 };
  JZ_CHECK(!jz::periodicBoxError(true, huge, hugeHi).empty()); // the length overflows

  JZ_CHECK(jz::neighbourCountError(5, 5).empty());
  JZ_CHECK(contains(jz::neighbourCountError(0, 5), "at least 1 (got 0)"));
  JZ_CHECK(contains(
    jz::neighbourCountError(6, 5), "K = 6 is larger than the number of source points (5)"));
  JZ_CHECK(jz::linkingLengthError(0.1).empty());
  for (double l : { 0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity() })
    JZ_CHECK(contains(jz::linkingLengthError(l), "linking length must be a finite number > 0"));
  JZ_CHECK(jz::pointCountError(std::size_t(0xFFFFFFFEu)).empty());
  JZ_CHECK(contains(jz::pointCountError(std::size_t(0xFFFFFFFFu)), "too many points"));

  // The filters' words name their properties.
  jz::InputNames names;
  names.neighbourCount = "NumberOfNeighbors (K)";
  names.sourcePoint = "Input point";
  const std::string k = jz::neighbourCountError(101, 100, names);
  JZ_CHECK_MSG(contains(k, "NumberOfNeighbors (K) = 101") && contains(k, "Input points (100)"), k);
}

// Every parameter range accepts its bounds and rejects what lies beyond
// them, NaN, infinities and (for counts) fractions, naming the parameter.
JZ_TEST(ParameterRangesAcceptTheirBoundsOnly)
{
  const double inf = std::numeric_limits<double>::infinity();
  for (const jz::ParameterRange& r : jz::ranges::kAll)
  {
    const std::string name = r.name;
    auto accepts = [&](double v) { return jz::rangeError(r, v).empty(); };
    auto rejects = [&](double v)
    {
      const std::string e = jz::rangeError(r, v);
      return contains(e, name + " must be") && contains(e, "(got ");
    };
    JZ_CHECK_MSG(accepts(r.minExclusive ? std::nextafter(r.min, inf) : r.min), name);
    JZ_CHECK_MSG(rejects(r.minExclusive ? r.min : r.min - 1), name);
    JZ_CHECK_MSG(rejects(-inf) && rejects(inf) && rejects(std::nan("")), name);
    if (r.max < inf)
    {
      JZ_CHECK_MSG(accepts(r.max), name);
      JZ_CHECK_MSG(rejects(r.integer ? r.max + 1 : std::nextafter(r.max, inf)), name);
    }
    if (r.integer)
      JZ_CHECK_MSG(rejects(r.min + 0.5), name);
  }
  JZ_CHECK_EQ(jz::rangeError(jz::ranges::MinClusterSize, 1),
    std::string("MinClusterSize must be an integer of at least 2 (got 1)"));
  JZ_CHECK_EQ(jz::rangeError(jz::ranges::OpeningAngle, 2, "the opening angle"),
    std::string("the opening angle must be a number from 0 to 1.5 (got 2)"));
  JZ_CHECK_EQ(jz::rangeError(jz::ranges::Device, 7),
    std::string("Device must be an integer from 0 to 2 (got 7)"));
}

JZ_TEST(NonFiniteCoordinatesNameTheFirstPointForAnyThreadCount)
{
  std::vector<double> xyz(3 * 100000, 0.5);
  xyz[3 * 77777 + 2] = std::nan("");
  xyz[3 * 12345 + 1] = -std::numeric_limits<double>::infinity();
  xyz[3 * 99999] = std::nan("");
  for (int threads : { 1, 2, 5, 16 })
  {
    omp_set_num_threads(threads);
    const std::string e = jz::nonFiniteCoordinateError(xyz.data(), 100000, "point");
    JZ_CHECK_MSG(e == "point 12345 has a non-finite coordinate (NaN or infinity)", e);
  }
  omp_set_num_threads(omp_get_num_procs());
  std::vector<float> f(30, 1.0f);
  JZ_CHECK(jz::nonFiniteCoordinateError(f.data(), 10, "point").empty());
  f[29] = std::numeric_limits<float>::infinity();
  JZ_CHECK(contains(jz::nonFiniteCoordinateError(f.data(), 10, "query point"), "query point 9 "));
  const double v[6] = { 1, 2, 3, 4, std::nan(""), 6 };
  JZ_CHECK_EQ(jz::nonFiniteValueError(v, 2, 3, "the velocity array"),
    std::string("the velocity array has a non-finite value at point 1"));
}

JZ_TEST(ProblemValidationUsesTheRules)
{
  std::vector<double> pts(30, 0.25);
  jz::KnnProblem<double> knn;
  knn.sources = pts.data();
  knn.numSources = 10;
  knn.k = 4;
  JZ_CHECK(jz::problemError(knn).empty());
  knn.k = 11;
  JZ_CHECK_EQ(jz::problemError(knn), jz::neighbourCountError(11, 10));
  // One rank's piece: K against all sources is the caller's check.
  JZ_CHECK(jz::problemError(knn, jz::ProblemExtent::RankPiece).empty());
  knn.k = 4;
  knn.periodic = true;
  knn.boxHi[1] = 0;
  JZ_CHECK_EQ(jz::problemError(knn), jz::periodicBoxError(true, knn.boxLo, knn.boxHi));
  knn.boxHi[1] = 1;
  const double mass[10] = { 1, 1, 1, std::nan(""), 1, 1, 1, 1, 1, 1 };
  knn.sourceMasses = mass;
  JZ_CHECK(contains(jz::problemError(knn), "mass array has a non-finite value at point 3"));
  knn.sourceMasses = nullptr;
  pts[3 * 6] = std::nan("");
  JZ_CHECK_EQ(jz::problemError(knn), jz::nonFiniteCoordinateError(pts.data(), 10, "source point"));
  JZ_CHECK_THROWS(jz::validate(knn));
  pts[3 * 6] = 0.25;
  std::vector<double> q(6, 0.5);
  q[4] = std::numeric_limits<double>::infinity();
  knn.queries = q.data();
  knn.numQueries = 2;
  JZ_CHECK(contains(jz::problemError(knn), "query point 1 "));

  jz::FofProblem<double> fof;
  fof.points = pts.data();
  fof.numPoints = 10;
  fof.linkingLength = 0.1;
  JZ_CHECK(jz::problemError(fof).empty());
  fof.linkingLength = -2;
  JZ_CHECK_EQ(jz::problemError(fof), jz::linkingLengthError(-2));
  // The distributed inputs: global ids and finite masses and velocities.
  fof.linkingLength = 0.1;
  jz::FofDistributedOptions options;
  JZ_CHECK(contains(jz::distributedInputError(fof, options), "global point ids"));
  std::vector<jz::GlobalId> ids(10);
  fof.ids = ids.data();
  JZ_CHECK(jz::distributedInputError(fof, options).empty());
  std::vector<double> vel(30, 0.0);
  vel[3 * 8 + 1] = std::nan("");
  options.velocities = vel.data();
  JZ_CHECK(contains(
    jz::distributedInputError(fof, options), "velocity array has a non-finite value at point 8"));
  // The kernels throw what the rule says.
  fof.linkingLength = 0;
  jz::FofGroups groups;
  try
  {
    jz::computeFofGroups(fof, groups, jz::Backend::CPU);
    JZ_CHECK(false);
  }
  catch (const jz::Error& e)
  {
    JZ_CHECK_EQ(std::string(e.what()), jz::linkingLengthError(0));
  }
}

// --- LinkingLength.h --------------------------------------------------------

JZ_TEST(RelativeLinkingLengthIsExactOnLattices)
{
  // (1 / n^3)^(1/3) = 1/n exactly: std::cbrt alone misses 1/32, 1/64, 1/128.
  for (std::size_t n : { 16, 32, 64, 128, 256, 1024 })
  {
    const double l = jz::relativeLinkingLength(1.0, 1.0, n * n * n);
    JZ_CHECK_MSG(l == 1.0 / double(n), n << ": " << l);
  }
  // Other boxes and exact roots: V = 27 L^3 over 27 points, 12^3 in a box of side 3.
  JZ_CHECK_EQ(jz::relativeLinkingLength(1.0, 27.0, 1), 3.0);
  JZ_CHECK_EQ(jz::relativeLinkingLength(1.0, 27.0, 1728), 0.25);
  JZ_CHECK_EQ(jz::relativeLinkingLength(1.0, 1000.0, 8), 5.0);
  JZ_CHECK_EQ(jz::relativeLinkingLength(0.5, 64.0, 1), 2.0);
  JZ_CHECK_EQ(jz::relativeLinkingLength(1.0, 0.0, 10), 0.0);
  JZ_CHECK_EQ(jz::relativeLinkingLength(1.0, 1.0, 0), 0.0);
  // Inexact cases: within half an ulp of the root, per an independent
  // long-double reference (64-bit mantissa on x86, 113 on aarch64).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-30, 30);
  for (int i = 0; i < 20000; ++i)
  {
    const double v = std::exp2(u(rng));
    const std::size_t n = 1 + std::size_t(rng() % 100000000);
    const double c = jz::cubeRootOfRatio(v, n);
    const long double root = cbrtl((long double)v / (long double)n);
    const long double err = std::fabs((long double)c - root);
    const long double halfUlp = 0.5L * ((long double)std::nextafter(c, HUGE_VAL) - c);
    JZ_CHECK_MSG(err <= halfUlp * (1 + 1e-6L), v << " / " << n << ": " << c);
  }
}

JZ_TEST(RelativeLinkingLengthLinksWholeLattices)
{
  // Relative b = 1 on an n^3 lattice in the unit periodic box links every
  // point (d = l exactly), as Absolute l = 1/n does.
  for (int n : { 16, 32, 64 })
  {
    std::vector<float> xyz;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k)
          for (int c : { i, j, k })
            xyz.push_back(float(c) / float(n));
    jz::FofProblem<float> pr;
    pr.points = xyz.data();
    pr.numPoints = xyz.size() / 3;
    pr.periodic = true;
    pr.linkingLength = jz::relativeLinkingLength(1.0, 1.0, pr.numPoints);
    jz::FofGroups groups;
    jz::computeFofGroups(pr, groups, jz::Backend::CPU);
    std::size_t inGroupOfZero = 0;
    for (jz::GlobalId label : groups.groupLabel)
      inGroupOfZero += label == 0;
    JZ_CHECK_MSG(inGroupOfZero == pr.numPoints, n << "^3: " << inGroupOfZero);
  }
}

// --- GroupMoments.h ---------------------------------------------------------

JZ_TEST(GroupMomentsMergeLikeOneSum)
{
  // A group across the periodic corner of the box [2, 3)^3, split into parts
  // with different references: merged, the catalogue row equals the direct
  // computation on unwrapped positions.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 0.03);
  const double lo[3] = { 2, 2, 2 }, period[3] = { 1, 1, 1 };
  const int n = 3000;
  std::vector<double> x(3 * n), v(3 * n), m(n);
  for (int i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
    {
      x[3 * i + d] = 3.0 + g(rng); // around the corner (3, 3, 3) == (2, 2, 2)
      v[3 * i + d] = 10 + 5 * g(rng);
    }
    m[i] = 1 + (i % 3);
  }
  // Direct: centre, inertia radius and dispersion from unwrapped positions.
  double M = 0, c[3] = { 0, 0, 0 }, vm[3] = { 0, 0, 0 };
  for (int i = 0; i < n; ++i)
  {
    M += m[i];
    for (int d = 0; d < 3; ++d)
    {
      c[d] += m[i] * x[3 * i + d];
      vm[d] += m[i] * v[3 * i + d];
    }
  }
  for (int d = 0; d < 3; ++d)
  {
    c[d] /= M;
    vm[d] /= M;
  }
  double r2 = 0, s2 = 0;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
    {
      r2 += m[i] * (x[3 * i + d] - c[d]) * (x[3 * i + d] - c[d]);
      s2 += m[i] * (v[3 * i + d] - vm[d]) * (v[3 * i + d] - vm[d]);
    }
  // Wrapped positions go into three partial sums with different references.
  std::vector<double> w(3 * n);
  for (int i = 0; i < 3 * n; ++i)
    w[i] = jz::wrapIntoBox(x[i], lo[i % 3], period[i % 3]);
  jz::GroupMoments parts[3] = { jz::GroupMoments::around(7, &w[0], &v[0]),
    jz::GroupMoments::around(7, &w[3 * 1000], &v[3 * 1000]),
    jz::GroupMoments::around(7, &w[3 * 2999], &v[3 * 2999]) };
  for (int i = 0; i < n; ++i)
    parts[i * 3 / n].add(&w[3 * i], m[i], &v[3 * i], period);
  jz::GroupMoments sum = jz::GroupMoments::around(7, &w[3 * 500], nullptr);
  for (const auto& p : parts)
    sum.merge(p, period);
  jz::FofCatalogue cat;
  sum.appendRow(lo, period, true, cat);
  JZ_CHECK_EQ(cat.count[0], jz::GlobalId(n));
  JZ_CHECK(std::fabs(cat.mass[0] - M) < 1e-12 * M);
  for (int d = 0; d < 3; ++d)
  {
    const double want = jz::wrapIntoBox(c[d], lo[d], period[d]);
    JZ_CHECK_MSG(std::fabs(jz::nearestImageOffset(cat.centerOfMass[d] - want, 1.0)) < 1e-12,
      cat.centerOfMass[d] << " vs " << want);
    JZ_CHECK(cat.centerOfMass[d] >= 2 && cat.centerOfMass[d] < 3);
    JZ_CHECK(std::fabs(cat.meanVelocity[d] - vm[d]) < 1e-12 * std::fabs(vm[d]));
  }
  JZ_CHECK(std::fabs(cat.inertiaRadius[0] - std::sqrt(r2 / M)) < 1e-10 * std::sqrt(r2 / M));
  JZ_CHECK(std::fabs(cat.velocityDispersion[0] - std::sqrt(s2 / (3 * M))) < 1e-10);
}

JZ_TEST_MAIN()
