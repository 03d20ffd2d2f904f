// kNN against brute force: identical neighbour ids and distances (ties are
// broken by the smaller id in both), across distributions, K, precision,
// periodic boxes and separate query sets; densities against direct sums.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "PointSets.h"
#include "TestHarness.h"
#include "jz/Knn.h"

namespace
{
template <class T>
struct NonDeduced
{
  using type = T;
};

struct BruteForce
{
  std::vector<jz::GlobalId> ids;
  std::vector<double> dist;
};

template <class T>
double wrapped(double x, double lo, double len)
{
  double w = x - len * std::floor((x - lo) / len);
  T t = T(w);
  if (double(t) >= lo + len || double(t) < lo)
    t = T(lo);
  return double(t);
}

// O(N M) reference, in double from the input coordinates.
template <class T>
BruteForce bruteForce(
  const std::vector<T>& src, const std::vector<T>& qry, int k, const jz::KnnProblem<T>& pr)
{
  const std::size_t ns = src.size() / 3, nq = qry.size() / 3;
  auto coord = [&](const std::vector<T>& v, std::size_t i, int d)
  {
    double x = double(v[3 * i + d]);
    if (pr.periodic)
      x = wrapped<T>(x, pr.boxLo[d], pr.boxHi[d] - pr.boxLo[d]);
    return x;
  };
  BruteForce out;
  out.ids.resize(nq * k);
  out.dist.resize(nq * k);
  std::vector<std::pair<double, jz::GlobalId>> all(ns);
  for (std::size_t q = 0; q < nq; ++q)
  {
    for (std::size_t s = 0; s < ns; ++s)
    {
      double d2 = 0;
      for (int d = 0; d < 3; ++d)
      {
        double x = std::fabs(coord(src, s, d) - coord(qry, q, d));
        if (pr.periodic)
        {
          const double len = pr.boxHi[d] - pr.boxLo[d];
          if (x > 0.5 * len)
            x = len - x;
        }
        d2 += x * x;
      }
      all[s] = { d2, pr.sourceIds ? pr.sourceIds[s] : jz::GlobalId(s) };
    }
    std::partial_sort(all.begin(), all.begin() + k, all.end());
    for (int j = 0; j < k; ++j)
    {
      out.ids[q * k + j] = all[j].second;
      out.dist[q * k + j] = std::sqrt(all[j].first);
    }
  }
  return out;
}

template <class T>
int compare(const std::vector<T>& src, const std::vector<typename NonDeduced<T>::type>* qry, int k,
  bool periodic, const char* what, bool withIds = false)
{
  jz::KnnProblem<T> pr;
  pr.sources = src.data();
  pr.numSources = src.size() / 3;
  if (qry)
  {
    pr.queries = qry->data();
    pr.numQueries = qry->size() / 3;
  }
  pr.k = k;
  std::vector<jz::GlobalId> ids;
  if (withIds)
  {
    ids.resize(pr.numSources);
    for (std::size_t i = 0; i < ids.size(); ++i)
      ids[i] = jz::GlobalId(1000000 - 3 * i);
    pr.sourceIds = ids.data();
  }
  if (periodic)
  {
    pr.periodic = true;
    for (int d = 0; d < 3; ++d)
    {
      pr.boxLo[d] = -0.2 + 0.1 * d;
      pr.boxHi[d] = pr.boxLo[d] + 0.9;
    }
  }
  const std::size_t nq = qry ? qry->size() / 3 : src.size() / 3;
  std::vector<jz::GlobalId> gotIds(nq * k, -7);
  std::vector<T> gotDist(nq * k, T(-1)), h(nq, T(-1)), rho(nq, T(-1));
  jz::KnnResults<T> res;
  res.neighborIds = gotIds.data();
  res.neighborDistances = gotDist.data();
  res.smoothingLength = h.data();
  res.density = rho.data();
  jz::computeKnn(pr, res, jz::Backend::CPU);
  const BruteForce ref = bruteForce(src, qry ? *qry : src, k, pr);
  int bad = 0;
  for (std::size_t q = 0; q < nq; ++q)
  {
    for (int j = 0; j < k; ++j)
    {
      const std::size_t i = q * k + j;
      if (gotIds[i] != ref.ids[i] || gotDist[i] != T(ref.dist[i]))
      {
        if (++bad <= 3)
        {
          JZ_CHECK_MSG(false,
            what << " n=" << src.size() / 3 << " k=" << k << " query " << q << " neighbour " << j
                 << ": got id " << gotIds[i] << " d " << gotDist[i] << ", want id " << ref.ids[i]
                 << " d " << ref.dist[i]);
        }
      }
    }
    if (h[q] != T(ref.dist[q * k + k - 1]))
      ++bad;
    // SPH density from the reference neighbours.
    const double hh = ref.dist[q * k + k - 1];
    double want = 0;
    for (int j = 0; j < k && hh > 0; ++j)
    {
      const double x = ref.dist[q * k + j] / hh;
      const double w =
        x <= 0.5 ? 1 - 6 * x * x + 6 * x * x * x : (x <= 1 ? 2 * std::pow(1 - x, 3) : 0);
      want += 8 / (M_PI * hh * hh * hh) * w;
    }
    if (hh > 0 && std::fabs(double(rho[q]) - want) > 1e-5 * want + 1e-300)
    {
      if (++bad <= 3)
        JZ_CHECK_MSG(false, what << " density " << rho[q] << " want " << want);
    }
  }
  JZ_CHECK_MSG(bad == 0, what << ": " << bad << " mismatches");
  return bad;
}
} // namespace

JZ_TEST(KnnMatchesBruteForceAllDistributions)
{
  for (const std::string& kind : jztest::allKinds())
  {
    for (std::size_t n : { 40, 700, 5000 })
    {
      for (int k : { 1, 16, 33 })
      {
        if (std::size_t(k) > n)
          continue;
        compare(jztest::makePoints<float>(kind, n), nullptr, k, false, kind.c_str());
        compare(jztest::makePoints<double>(kind, n, 4), nullptr, k, false, kind.c_str());
      }
    }
  }
}

JZ_TEST(KnnLargeKOnLatticeTies)
{
  // Many exact distance ties: no repeats, no drops, smallest ids win.
  for (int k : { 50, 120, 300 })
  {
    compare(jztest::makePoints<float>("lattice", 4096), nullptr, k, false, "lattice");
    compare(jztest::makePoints<double>("lattice", 3000), nullptr, k, false, "lattice", true);
  }
}

JZ_TEST(KnnPeriodic)
{
  for (const std::string& kind : { "uniform", "clustered", "duplicates" })
  {
    auto pts = jztest::makePoints<double>(kind, 6000, 8);
    for (double& x : pts)
      x = 1.4 * x - 0.3; // points outside the box too
    compare(pts, nullptr, 16, true, kind.c_str());
    auto ptsf = jztest::makePoints<float>(kind, 3000, 8);
    compare(ptsf, nullptr, 40, true, kind.c_str());
  }
}

JZ_TEST(KnnSeparateQueries)
{
  auto src = jztest::makePoints<float>("clustered", 8000, 1);
  auto qry = jztest::makePoints<float>("uniform", 3000, 2);
  compare(src, &qry, 16, false, "queries");
  compare(src, &qry, 70, true, "queries periodic");
  auto few = jztest::makePoints<double>("uniform", 60, 3);
  auto many = jztest::makePoints<double>("clustered", 9000, 4);
  compare(few, &many, 60, false, "few sources", true);
  compare(many, &few, 5, false, "few queries");
}

JZ_TEST(KnnTopHatAndMasses)
{
  auto pts = jztest::makePoints<double>("clustered", 3000, 5);
  std::vector<double> mass(3000);
  for (std::size_t i = 0; i < mass.size(); ++i)
    mass[i] = 0.5 + (i % 7);
  jz::KnnProblem<double> pr;
  pr.sources = pts.data();
  pr.numSources = 3000;
  pr.sourceMasses = mass.data();
  pr.k = 10;
  std::vector<double> rhoTop(3000), rhoSph(3000), h(3000);
  std::vector<jz::GlobalId> ids(30000);
  std::vector<double> dist(30000);
  jz::KnnResults<double> res;
  res.estimator = jz::DensityEstimator::TopHat;
  res.density = rhoTop.data();
  res.smoothingLength = h.data();
  res.neighborIds = ids.data();
  res.neighborDistances = dist.data();
  jz::computeKnn(pr, res, jz::Backend::CPU);
  jz::KnnResults<double> sph;
  sph.density = rhoSph.data();
  jz::computeKnn(pr, sph, jz::Backend::CPU);
  for (std::size_t q = 0; q < 3000; ++q)
  {
    double m = 0, s = 0;
    const double hh = h[q];
    for (int j = 0; j < 10; ++j)
    {
      m += mass[ids[q * 10 + j]];
      const double x = dist[q * 10 + j] / hh;
      const double w =
        x <= 0.5 ? 1 - 6 * x * x + 6 * x * x * x : (x <= 1 ? 2 * std::pow(1 - x, 3) : 0);
      s += mass[ids[q * 10 + j]] * 8 / (M_PI * hh * hh * hh) * w;
    }
    JZ_CHECK(std::fabs(rhoTop[q] - m / (4.0 / 3.0 * M_PI * hh * hh * hh)) <= 1e-12 * rhoTop[q]);
    JZ_CHECK(std::fabs(rhoSph[q] - s) <= 1e-12 * s);
  }
}

JZ_TEST(KnnSelfQueryPrefix)
{
  // Only the first m sources query; the rest are sources only. Same results
  // as querying with an explicit copy of those m points.
  auto pts = jztest::makePoints<float>("clustered", 7000, 12);
  const std::size_t m = 4000;
  for (int periodic = 0; periodic < 2; ++periodic)
  {
    jz::KnnProblem<float> pr;
    pr.sources = pts.data();
    pr.numSources = 7000;
    pr.k = 20;
    pr.periodic = periodic;
    pr.numSelfQueries = m;
    std::vector<jz::GlobalId> a(m * 20, -1), b(m * 20, -2);
    std::vector<float> ha(m, -1), hb(m, -2), ra(m), rb(m);
    jz::KnnResults<float> outA;
    outA.neighborIds = a.data();
    outA.smoothingLength = ha.data();
    outA.density = ra.data();
    jz::computeKnn(pr, outA, jz::Backend::CPU);
    jz::KnnProblem<float> sep = pr;
    sep.numSelfQueries = std::size_t(-1);
    sep.queries = pts.data();
    sep.numQueries = m;
    jz::KnnResults<float> outB;
    outB.neighborIds = b.data();
    outB.smoothingLength = hb.data();
    outB.density = rb.data();
    jz::computeKnn(sep, outB, jz::Backend::CPU);
    JZ_CHECK(a == b);
    JZ_CHECK(ha == hb);
    for (std::size_t i = 0; i < m; ++i)
      JZ_CHECK(std::fabs(ra[i] - rb[i]) <= 1e-5f * rb[i]);
  }
}

JZ_TEST(KnnBadInput)
{
  auto pts = jztest::makePoints<float>("uniform", 100);
  jz::KnnProblem<float> pr;
  pr.sources = pts.data();
  pr.numSources = 100;
  pr.k = 101;
  std::vector<float> h(100);
  jz::KnnResults<float> res;
  res.smoothingLength = h.data();
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, jz::Backend::CPU));
  pr.k = 0;
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, jz::Backend::CPU));
  pr.k = 4;
  pts[5] = std::numeric_limits<float>::infinity();
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, jz::Backend::CPU));
  pts[5] = 0.5f;
  pr.periodic = true;
  pr.boxHi[1] = pr.boxLo[1];
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, jz::Backend::CPU));
#if !defined(JZ_WITH_CUDA)
  pr.periodic = false;
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, jz::Backend::CUDA));
#endif
}

JZ_TEST(KnnEmpty)
{
  jz::KnnProblem<double> pr;
  jz::KnnResults<double> res;
  jz::RunInfo info = jz::computeKnn(pr, res, jz::Backend::CPU);
  JZ_CHECK(info.backend == jz::Backend::CPU);
}

// Runs of duplicates far longer than K and than a leaf (each one tree node,
// searched as one weighted point): tied neighbours are the smallest ids, with
// and without global ids, open and periodic.
JZ_TEST(KnnRunsOfDuplicates)
{
  for (int k : { 8, 33 })
    for (bool periodic : { false, true })
    {
      compare(jztest::makePoints<double>("runs", 4000, 3), nullptr, k, periodic, "runs");
      compare(jztest::makePoints<float>("runs", 4000, 5), nullptr, k, periodic, "runs ids", true);
    }
  const std::vector<double> same(3 * 3000, 0.25);
  compare(same, nullptr, 32, false, "all identical", true);
  compare(same, nullptr, 1, true, "all identical K=1");
}

JZ_TEST_MAIN()
