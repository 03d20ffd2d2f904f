// kNN against brute force: identical neighbour ids and distances (ties are
// broken by the smaller id in both), across distributions, K, precision,
// periodic boxes and separate query sets; densities against direct sums.
// The same cases run on the GPU (TestKnn --backend=cuda, CTest's
// kernels.TestKnnCuda), where every run must also equal the CPU's bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "PointSets.h"
#include "TestHarness.h"
#include "jz/DensityKernels.h"
#include "jz/Knn.h"
#include "knn/CubicSplineWeights.h"

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

struct Neighbour
{
  double d2;
  jz::GlobalId id;
  std::size_t index; // of the source
  bool operator<(const Neighbour& o) const { return d2 < o.d2 || (d2 == o.d2 && id < o.id); }
};

// O(N) reference for query q, in double from the input coordinates: its K
// nearest sources, nearest first, ties by the smaller id.
template <class T>
std::vector<Neighbour> bruteForceOne(const std::vector<T>& src, const std::vector<T>& qry,
  std::size_t q, int k, const jz::KnnProblem<T>& pr)
{
  const std::size_t ns = src.size() / 3;
  auto coord = [&](const std::vector<T>& v, std::size_t i, int d)
  {
    double x = double(v[3 * i + d]);
    if (pr.periodic)
      x = wrapped<T>(x, pr.boxLo[d], pr.boxHi[d] - pr.boxLo[d]);
    return x;
  };
  std::vector<Neighbour> all(ns);
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
    all[s] = { d2, pr.sourceIds ? pr.sourceIds[s] : jz::GlobalId(s), s };
  }
  std::partial_sort(all.begin(), all.begin() + k, all.end());
  all.resize(k);
  return all;
}

// O(N M) reference.
template <class T>
BruteForce bruteForce(
  const std::vector<T>& src, const std::vector<T>& qry, int k, const jz::KnnProblem<T>& pr)
{
  const std::size_t nq = qry.size() / 3;
  BruteForce out;
  out.ids.resize(nq * k);
  out.dist.resize(nq * k);
  for (std::size_t q = 0; q < nq; ++q)
  {
    const std::vector<Neighbour> nb = bruteForceOne(src, qry, q, k, pr);
    for (int j = 0; j < k; ++j)
    {
      out.ids[q * k + j] = nb[j].id;
      out.dist[q * k + j] = std::sqrt(nb[j].d2);
    }
  }
  return out;
}

template <class T>
std::size_t numQueriesOf(const jz::KnnProblem<T>& pr)
{
  return pr.queries ? pr.numQueries : std::min(pr.numSources, pr.numSelfQueries);
}

template <class V>
bool sameBits(const V* a, const V* b, std::size_t n, std::size_t& firstDiff)
{
  for (std::size_t i = 0; i < n; ++i)
  {
    if (std::memcmp(&a[i], &b[i], sizeof(V)) != 0)
    {
      firstDiff = i;
      return false;
    }
  }
  return true;
}

// Runs the problem on the backend under test. On the GPU the CPU runs it
// too, and every output must equal the CPU's bit for bit (both rank by
// (distance^2, key) in double and sum densities in rank order).
template <class T>
jz::RunInfo runKnn(
  const jz::KnnProblem<T>& pr, const jz::KnnResults<T>& res, const std::string& what)
{
  const jz::RunInfo info = jz::computeKnn(pr, res, jztest::backend());
  if (!jztest::onGpu())
    return info;
  JZ_CHECK_MSG(info.backend == jz::Backend::CUDA,
    what << ": ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  const std::size_t nq = numQueriesOf(pr), nk = nq * std::size_t(pr.k);
  std::vector<T> h(nq), rho(nq), dist(nk);
  std::vector<jz::GlobalId> ids(nk);
  jz::KnnResults<T> cpu;
  cpu.estimator = res.estimator;
  cpu.smoothingLength = res.smoothingLength ? h.data() : nullptr;
  cpu.density = res.density ? rho.data() : nullptr;
  cpu.neighborIds = res.neighborIds ? ids.data() : nullptr;
  cpu.neighborDistances = res.neighborDistances ? dist.data() : nullptr;
  jz::computeKnn(pr, cpu, jz::Backend::CPU);
  std::size_t at = 0;
  if (res.smoothingLength)
    JZ_CHECK_MSG(sameBits(res.smoothingLength, h.data(), nq, at),
      what << ": GPU smoothing length differs from the CPU at " << at << ": "
           << res.smoothingLength[at] << " vs " << h[at]);
  if (res.density)
    JZ_CHECK_MSG(sameBits(res.density, rho.data(), nq, at),
      what << ": GPU density differs from the CPU at " << at << ": " << res.density[at] << " vs "
           << rho[at]);
  if (res.neighborIds)
    JZ_CHECK_MSG(sameBits(res.neighborIds, ids.data(), nk, at),
      what << ": GPU neighbour id differs from the CPU at query " << at / pr.k << " rank "
           << at % pr.k);
  if (res.neighborDistances)
    JZ_CHECK_MSG(sameBits(res.neighborDistances, dist.data(), nk, at),
      what << ": GPU neighbour distance differs from the CPU at query " << at / pr.k << " rank "
           << at % pr.k);
  return info;
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
  runKnn(pr, res, what);
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
  for (const std::string kind : { "uniform", "clustered", "duplicates" })
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
  runKnn(pr, res, "top hat");
  jz::KnnResults<double> sph;
  sph.density = rhoSph.data();
  runKnn(pr, sph, "sph");
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

// Neighbour ids, smoothing lengths and densities of a problem's m queries.
struct ListsAndDensities
{
  std::vector<jz::GlobalId> ids;
  std::vector<float> h, rho;
};

ListsAndDensities listsAndDensities(
  const jz::KnnProblem<float>& pr, std::size_t m, const std::string& what)
{
  ListsAndDensities r{ std::vector<jz::GlobalId>(m * std::size_t(pr.k), -1),
    std::vector<float>(m, -1), std::vector<float>(m, -1) };
  jz::KnnResults<float> out;
  out.neighborIds = r.ids.data();
  out.smoothingLength = r.h.data();
  out.density = r.rho.data();
  runKnn(pr, out, what);
  return r;
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
    const ListsAndDensities a = listsAndDensities(pr, m, "prefix");
    jz::KnnProblem<float> sep = pr;
    sep.numSelfQueries = std::size_t(-1);
    sep.queries = pts.data();
    sep.numQueries = m;
    const ListsAndDensities b = listsAndDensities(sep, m, "separate");
    JZ_CHECK(a.ids == b.ids);
    JZ_CHECK(a.h == b.h);
    for (std::size_t i = 0; i < m; ++i)
      JZ_CHECK(std::fabs(a.rho[i] - b.rho[i]) <= 1e-5f * b.rho[i]);
  }
}

JZ_TEST(KnnNamedSelfQueries)
{
  // Only the sources selfQueryIndices names query (a shuffled subset, with
  // bulk duplicates among the points), results row q for the q-th named.
  // Same as querying with an explicit copy of those points, and the visit
  // reports each neighbour's row: its place in the names, or none.
  auto pts = jztest::makePoints<float>("clustered", 7000, 21);
  for (std::size_t i = 100; i < 400; ++i) // a run of one point
    std::copy_n(&pts[0], 3, &pts[3 * i]);
  std::vector<jz::Index> named(7000);
  std::iota(named.begin(), named.end(), jz::Index(0));
  std::shuffle(named.begin(), named.end(), std::mt19937(4));
  const std::size_t m = 3000, k = 20;
  named.resize(m);
  std::vector<double> mass(7000);
  for (std::size_t i = 0; i < mass.size(); ++i)
    mass[i] = 1.0 + double(i % 7);
  std::vector<jz::Index> rowOf(7000, jz::Index(-1));
  for (std::size_t q = 0; q < m; ++q)
    rowOf[named[q]] = jz::Index(q);
  for (int periodic = 0; periodic < 2; ++periodic)
  {
    jz::KnnProblem<float> pr;
    pr.sources = pts.data();
    pr.numSources = 7000;
    pr.sourceMasses = mass.data();
    pr.k = int(k);
    pr.periodic = periodic;
    pr.selfQueryIndices = named.data();
    pr.numSelfQueries = m;
    const ListsAndDensities a = listsAndDensities(pr, m, "named");
    jz::KnnProblem<float> sep = pr;
    sep.selfQueryIndices = nullptr;
    sep.numSelfQueries = std::size_t(-1);
    std::vector<float> copies(3 * m);
    for (std::size_t q = 0; q < m; ++q)
      std::copy_n(&pts[3 * std::size_t(named[q])], 3, &copies[3 * q]);
    sep.queries = copies.data();
    sep.numQueries = m;
    const ListsAndDensities b = listsAndDensities(sep, m, "separate");
    JZ_CHECK(a.ids == b.ids);
    JZ_CHECK(a.h == b.h);
    JZ_CHECK(a.rho == b.rho); // summed in rank order either way (infinite on the run)
    if (jztest::onGpu())
      continue; // the visit is the CPU walk's
    std::vector<jz::Index> rows(m * k, 7);
    jz::KnnResults<float> visit;
    visit.visitQueryRows = true;
    visit.visitNeighbors = [&](std::size_t q, const jz::Index* r)
    { std::copy_n(r, k, &rows[q * k]); };
    jz::computeKnn(pr, visit, jz::Backend::CPU);
    std::size_t wrong = 0;
    for (std::size_t e = 0; e < m * k; ++e)
      wrong += rows[e] != rowOf[std::size_t(a.ids[e])];
    JZ_CHECK_MSG(wrong == 0, wrong << " neighbour rows differ from their place in the names");
  }
  // Names out of range or twice, or with separate queries, are refused.
  jz::KnnProblem<float> bad;
  bad.sources = pts.data();
  bad.numSources = 7000;
  bad.k = 4;
  std::vector<jz::Index> twice = { 5, 9, 5 }, outside = { 5, 7000 };
  std::vector<float> h(3);
  jz::KnnResults<float> res;
  res.smoothingLength = h.data();
  bad.selfQueryIndices = twice.data();
  bad.numSelfQueries = twice.size();
  JZ_CHECK_THROWS(jz::computeKnn(bad, res, jztest::backend()));
  bad.selfQueryIndices = outside.data();
  bad.numSelfQueries = outside.size();
  JZ_CHECK_THROWS(jz::computeKnn(bad, res, jztest::backend()));
  bad.numSelfQueries = 1;
  bad.queries = pts.data();
  bad.numQueries = 1;
  JZ_CHECK_THROWS(jz::computeKnn(bad, res, jztest::backend()));
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
  const jz::Backend b = jztest::backend();
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, b));
  pr.k = 0;
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, b));
  pr.k = 4;
  pr.leafSize = -1;
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, b));
  pr.leafSize = 0;
  pts[5] = std::numeric_limits<float>::infinity();
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, b));
  pts[5] = 0.5f;
  pr.periodic = true;
  pr.boxHi[1] = pr.boxLo[1];
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, b));
#if !defined(JZ_WITH_CUDA)
  pr.periodic = false;
  JZ_CHECK_THROWS(jz::computeKnn(pr, res, jz::Backend::CUDA));
#endif
}

JZ_TEST(KnnEmpty)
{
  jz::KnnProblem<double> pr;
  jz::KnnResults<double> res;
  jz::RunInfo info = jz::computeKnn(pr, res, jztest::backend());
  JZ_CHECK(info.backend == jztest::backend());
}

// --- Options, sizes and outputs that also exercise the GPU's paths ----------
// (K > 32 lists in shared and global memory, leaf batches, density-only
// runs). Large sizes run on the GPU; brute force then checks a sample of the
// queries, and runKnn compares all of them with the CPU.
namespace
{
struct Case
{
  std::string kind = "uniform";
  std::size_t n = 2000;
  std::string queryKind; // empty: self query
  std::size_t nq = 0;
  int k = 16;
  bool periodic = false;
  bool lists = true;
  bool density = true;
  jz::DensityEstimator estimator = jz::DensityEstimator::SphCubicSpline;
  bool masses = false;
  bool ids = false;
  std::size_t checked = 0; // queries checked against brute force (a sample); 0 = all
};

std::string describe(const Case& c, const char* type)
{
  return std::string(type) + " " + c.kind + " n=" + std::to_string(c.n) +
    (c.queryKind.empty() ? std::string(" self")
                         : " queries=" + c.queryKind + " nq=" + std::to_string(c.nq)) +
    " k=" + std::to_string(c.k) + (c.periodic ? " periodic" : "") + (c.lists ? " lists" : "") +
    (c.density ? (c.estimator == jz::DensityEstimator::TopHat ? " tophat" : " sph") : "") +
    (c.masses ? " masses" : "") + (c.ids ? " ids" : "");
}

// Smoothing length, density and (optionally) neighbour lists against brute
// force for the checked queries.
template <class T>
void check(const Case& c)
{
  const std::string what = describe(c, jztest::typeName<T>());
  const std::vector<T> src = jztest::makePoints<T>(c.kind, c.n, 11);
  const std::vector<T> qry =
    c.queryKind.empty() ? src : jztest::makePoints<T>(c.queryKind, c.nq, 23);
  std::vector<double> masses;
  std::vector<jz::GlobalId> ids;
  jz::KnnProblem<T> pr;
  pr.sources = src.data();
  pr.numSources = c.n;
  if (!c.queryKind.empty())
  {
    pr.queries = qry.data();
    pr.numQueries = c.nq;
  }
  pr.k = c.k;
  if (c.masses)
  {
    masses.resize(c.n);
    for (std::size_t i = 0; i < c.n; ++i)
      masses[i] = 0.5 + double((i * 37) % 101) / 50.0;
    pr.sourceMasses = masses.data();
  }
  if (c.ids)
  {
    // Unique ids in reverse input order: ties break differently than by index.
    ids.resize(c.n);
    for (std::size_t i = 0; i < c.n; ++i)
      ids[i] = jz::GlobalId((c.n - 1 - i) * 3 + 5);
    pr.sourceIds = ids.data();
  }
  if (c.periodic)
  {
    // A box not at the origin; some points fall outside and are wrapped.
    pr.periodic = true;
    for (int d = 0; d < 3; ++d)
    {
      pr.boxLo[d] = 0.1;
      pr.boxHi[d] = 0.9 + 0.05 * d;
    }
  }
  const std::size_t nq = numQueriesOf(pr), k = std::size_t(c.k);
  std::vector<T> h(nq, T(-1)), rho(nq, T(-1)), dist;
  std::vector<jz::GlobalId> got;
  jz::KnnResults<T> res;
  res.estimator = c.estimator;
  res.smoothingLength = h.data();
  if (c.density)
    res.density = rho.data();
  if (c.lists)
  {
    got.assign(nq * k, -7);
    dist.assign(nq * k, T(-1));
    res.neighborIds = got.data();
    res.neighborDistances = dist.data();
  }
  runKnn(pr, res, what);

  const std::size_t stride = c.checked && c.checked < nq ? nq / c.checked : 1;
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  int bad = 0;
  for (std::size_t q = 0; q < nq && bad < 3; q += stride)
  {
    const std::vector<Neighbour> ref = bruteForceOne(src, qry, q, c.k, pr);
    const double hh = std::sqrt(ref[k - 1].d2);
    bool ok = h[q] == T(hh);
    for (std::size_t j = 0; c.lists && j < k; ++j)
      ok = ok && got[q * k + j] == ref[j].id && dist[q * k + j] == T(std::sqrt(ref[j].d2));
    if (c.density && hh > 0)
    {
      double sum = 0;
      for (std::size_t j = 0; j < k; ++j)
      {
        const double m = c.masses ? masses[ref[j].index] : 1.0;
        const double x = std::sqrt(ref[j].d2) / hh;
        const double w =
          x <= 0.5 ? 1 - 6 * x * x + 6 * x * x * x : (x <= 1 ? 2 * std::pow(1 - x, 3) : 0);
        sum += c.estimator == jz::DensityEstimator::TopHat ? m : m * 8 / (M_PI * hh * hh * hh) * w;
      }
      const double want =
        c.estimator == jz::DensityEstimator::TopHat ? sum / (4.0 / 3.0 * M_PI * hh * hh * hh) : sum;
      ok = ok && std::fabs(double(rho[q]) - want) <= tol * want;
    }
    else if (c.density)
    {
      ok = ok && std::isinf(double(rho[q])); // all K neighbours at the point
    }
    if (!ok)
    {
      ++bad;
      JZ_CHECK_MSG(false,
        what << ": query " << q << " differs from brute force (h " << h[q] << " want " << hh
             << ")");
    }
  }
}

void checkBothTypes(const Case& c)
{
  check<float>(c);
  check<double>(c);
}

// The case for each K of `ks`, in float and in double.
void checkEachK(Case c, std::initializer_list<int> ks)
{
  for (int k : ks)
  {
    c.k = k;
    checkBothTypes(c);
  }
}

// A case of `kind` sized for the backend; brute force checks a sample of
// its queries.
Case sampledCase(const std::string& kind, std::size_t cpuSize, std::size_t gpuSize)
{
  Case c;
  c.kind = kind;
  c.n = jztest::sized(cpuSize, gpuSize);
  c.checked = 300;
  return c;
}
} // namespace

JZ_TEST(KnnSmallSizesAndKEqualsN)
{
  Case c;
  for (std::size_t n : { 1, 2, 10, 47, 48, 49, 100, 500 })
  {
    c.n = n;
    for (int k : { 1, 8, 33, 64 })
    {
      if (std::size_t(k) > n)
        continue;
      c.k = k;
      checkBothTypes(c);
    }
    c.k = int(n);
    check<double>(c);
  }
  c.kind = "lattice";
  c.n = 1000;
  c.k = 1000;
  check<float>(c);
  c.kind = "duplicates";
  c.n = 300;
  c.k = 300;
  check<double>(c);
}

JZ_TEST(KnnAllKindsLargerK)
{
  for (const std::string& kind : jztest::allKinds())
    for (int k : { 8, 32, 64, 100 })
    {
      Case c = sampledCase(kind, 1000, 20000);
      c.k = k;
      check<float>(c);
      c.ids = true;
      check<double>(c);
    }
}

JZ_TEST(KnnPeriodicLargerK)
{
  for (const std::string kind : { "uniform", "lattice", "clustered", "mixedsign" })
  {
    Case c = sampledCase(kind, 2000, 20000);
    c.periodic = true;
    checkEachK(c, { 1, 33, 100 });
  }
}

JZ_TEST(KnnDensityOnly)
{
  for (const std::string kind : { "uniform", "clustered", "duplicates", "lattice" })
  {
    Case c = sampledCase(kind, 800, 20000);
    c.lists = false;
    for (auto est : { jz::DensityEstimator::SphCubicSpline, jz::DensityEstimator::TopHat })
    {
      c.estimator = est;
      for (int k : { 1, 16, 32, 33, 64, 100 })
      {
        c.k = k;
        c.masses = (k % 2) == 0;
        c.ids = k >= 32;
        checkBothTypes(c);
      }
    }
    c.density = false; // smoothing length only
    c.k = 50;
    check<float>(c);
  }
}

JZ_TEST(KnnSeparateQuerySets)
{
  Case c;
  c.kind = "clustered";
  c.n = jztest::sized(2000, 20000);
  for (const std::string qk : { "uniform", "clustered", "lattice", "outliers" })
  {
    c.queryKind = qk;
    for (std::size_t nq : { jztest::sized(300, 3000), jztest::sized(2500, 50000) })
    {
      c.nq = nq;
      c.checked = 300;
      checkEachK(c, { 1, 16, 40 });
    }
  }
  c.periodic = true;
  c.queryKind = "uniform";
  c.nq = 2000;
  c.k = 33;
  check<double>(c);
}

JZ_TEST(KnnLarge)
{
  Case c;
  c.n = jztest::sized(50000, 1000000);
  c.checked = 200;
  for (const std::string kind : { "uniform", "clustered" })
  {
    c.kind = kind;
    c.lists = false;
    c.k = 16;
    check<float>(c);
    c.lists = true;
    c.k = 32;
    check<float>(c);
    c.k = 64;
    c.masses = true;
    check<double>(c);
    c.masses = false;
  }
  c.kind = "lattice";
  c.k = 33;
  check<float>(c);
}

// On the GPU the leaf plane's lists are walked in batches that fit a budget
// (JZ_CUDA_LEAF_BATCH_ENTRIES, for tests and tuning); a small one makes many.
void leafBatchesCase(std::size_t n, const char* budget, std::initializer_list<int> ks)
{
  setenv("JZ_CUDA_LEAF_BATCH_ENTRIES", budget, 1);
  Case c;
  c.n = n;
  c.checked = 300;
  for (int k : ks)
  {
    c.k = k;
    c.kind = "clustered";
    check<float>(c);
    c.kind = "outliers";
    c.periodic = true;
    check<double>(c);
    c.periodic = false;
  }
  unsetenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
}

JZ_TEST(KnnLeafBatches)
{
  leafBatchesCase(jztest::sized(5000, 200000), "5000", { 8, 40 });
}

// The same at a size racecheck finishes (gpu-open-checks.sh), the budget cut
// with the points so that the lists still split into many batches.
JZ_TEST(KnnLeafBatchesSanitizerSmall)
{
  leafBatchesCase(3000, "100", { 8 });
}

// K beyond what one block's shared memory holds: the GPU keeps the lists in
// global memory (20 bytes an entry; 227 KiB per block on an H100).
JZ_TEST(KnnVeryLargeK)
{
  Case c;
  c.n = jztest::sized(3000, 12000);
  c.queryKind = "uniform";
  c.nq = 40;
  c.lists = true;
  checkEachK(c, { int(c.n), int(c.n / 2) });
}

// K near a thousand with N far beyond 2K: the CPU's candidate lists stay
// unsorted from K = 1024 on (K = 1100), are compacted many times per query
// (ties at the K-th among duplicates in bulk and on a lattice too), and
// seeds of more than 1024 candidates are ranked by a sort (K = 600 with
// sorted lists too); all against brute force.
JZ_TEST(KnnLargeKUnsortedLists)
{
  for (const char* kind : { "clustered", "duplicates", "lattice" })
  {
    Case c = sampledCase(kind, 12000, 40000);
    c.checked = 150;
    c.k = 600;
    check<float>(c);
    c.k = 1100;
    c.periodic = std::string(kind) == "clustered";
    c.ids = true;
    check<double>(c);
  }
}

// Densities are sums in rank order on every backend: asking for neighbour
// lists too must not change a bit of them.
JZ_TEST(KnnDensityIndependentOfLists)
{
  const std::size_t n = jztest::sized(20000, 200000);
  const std::vector<double> pts = jztest::makePoints<double>("clustered", n, 11);
  std::vector<double> m(n);
  for (std::size_t i = 0; i < n; ++i)
    m[i] = 0.5 + double((i * 37) % 101) / 50.0;
  for (auto est : { jz::DensityEstimator::SphCubicSpline, jz::DensityEstimator::TopHat })
  {
    for (int k : { 16, 64 })
    {
      jz::KnnProblem<double> pr;
      pr.sources = pts.data();
      pr.numSources = n;
      pr.k = k;
      pr.sourceMasses = m.data();
      std::vector<double> alone(n), withLists(n);
      std::vector<jz::GlobalId> ids(n * std::size_t(k));
      jz::KnnResults<double> a;
      a.estimator = est;
      a.density = alone.data();
      jz::KnnResults<double> b = a;
      b.density = withLists.data();
      b.neighborIds = ids.data();
      runKnn(pr, a, "density alone");
      runKnn(pr, b, "density with lists");
      std::size_t at = 0;
      JZ_CHECK_MSG(sameBits(alone.data(), withLists.data(), n, at),
        "k=" << k << ": density differs at " << at << " with lists requested");
    }
  }
}

// The leaf size a caller picks (KnnProblem::leafSize) paces the walk only:
// every output keeps its bits, for a query prefix too.
JZ_TEST(KnnLeafSizeChangesNothing)
{
  const std::size_t n = jztest::sized(20000, 200000), m = n / 2;
  const std::vector<float> pts = jztest::makePoints<float>("clustered", n, 5);
  const int k = 32;
  for (int periodic = 0; periodic < 2; ++periodic)
  {
    std::vector<float> firstH, firstRho, firstD;
    std::vector<jz::GlobalId> firstIds;
    for (int leaf : { 0, 48, 192, 500 })
    {
      jz::KnnProblem<float> pr;
      pr.sources = pts.data();
      pr.numSources = n;
      pr.numSelfQueries = m;
      pr.k = k;
      pr.periodic = periodic;
      pr.leafSize = leaf;
      std::vector<float> h(m), rho(m), d(m * k);
      std::vector<jz::GlobalId> ids(m * k);
      jz::KnnResults<float> r;
      r.smoothingLength = h.data();
      r.density = rho.data();
      r.neighborIds = ids.data();
      r.neighborDistances = d.data();
      runKnn(pr, r, "leaf size");
      if (leaf == 0)
      {
        firstH = h, firstRho = rho, firstD = d, firstIds = ids;
        continue;
      }
      std::size_t at = 0;
      JZ_CHECK_MSG(sameBits(firstRho.data(), rho.data(), m, at),
        "leaf " << leaf << ": density differs at " << at);
      JZ_CHECK_MSG(sameBits(firstH.data(), h.data(), m, at),
        "leaf " << leaf << ": smoothing length differs at " << at);
      JZ_CHECK_MSG(sameBits(firstD.data(), d.data(), m * k, at),
        "leaf " << leaf << ": a distance differs at " << at);
      JZ_CHECK(firstIds == ids);
    }
  }
}

JZ_TEST(KnnNamesFirstNonFinitePoint)
{
  std::vector<double> pts = jztest::makePoints<double>("uniform", 100, 3);
  pts[3 * 77] = std::numeric_limits<double>::infinity();
  pts[3 * 42 + 1] = std::nan("");
  jz::KnnProblem<double> pr;
  pr.sources = pts.data();
  pr.numSources = 100;
  pr.k = 4;
  std::vector<double> h(100);
  jz::KnnResults<double> res;
  res.smoothingLength = h.data();
  const std::string message = jztest::errorOf([&] { jz::computeKnn(pr, res, jztest::backend()); });
  JZ_CHECK_MSG(message.find("point 42 ") != std::string::npos, "message: " << message);
}

JZ_TEST(KnnAutoBackend)
{
  std::vector<float> pts = jztest::makePoints<float>("uniform", 5000, 3);
  jz::KnnProblem<float> pr;
  pr.sources = pts.data();
  pr.numSources = 5000;
  pr.k = 8;
  std::vector<float> h(5000);
  jz::KnnResults<float> res;
  res.smoothingLength = h.data();
  const jz::RunInfo info = jz::computeKnn(pr, res, jz::Backend::Auto);
  const bool gpu = jz::cudaUsable();
  JZ_CHECK_MSG(info.backend == (gpu ? jz::Backend::CUDA : jz::Backend::CPU),
    "Auto ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  bool gpuStage = false;
  for (const auto& s : info.stageSeconds)
    gpuStage = gpuStage || s.first == "gpu leaf walk";
  JZ_CHECK_EQ(gpuStage, gpu);
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

// The CPU's vectorised density weights are the kernel's own values, bit for
// bit: the GPU evaluates jz::cubicSplineW one at a time, and the two
// backends' densities must agree to the last bit. Every list length from 1
// to 37 (the four-wide, two-wide and scalar parts), both branches of the
// kernel, its edges and the support's end.
JZ_TEST(CubicSplineWeightsAreTheKernel)
{
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> q(0.0, 1.2);
  for (double h : { 1e-3, 0.37, 1.0, 3.5e4 })
    for (int n = 1; n <= 37; ++n)
    {
      std::vector<double> d2(static_cast<std::size_t>(n)), w(d2.size());
      for (int j = 0; j < n; ++j)
      {
        const double edge[5] = { 0.0, 0.5 * h, h, std::nextafter(h, 0.0), 2 * h };
        const double r = j < 5 ? edge[j] : q(rng) * h;
        d2[std::size_t(j)] = r * r;
      }
      jz::cubicSplineWeights(d2.data(), n, h, w.data());
      for (int j = 0; j < n; ++j)
      {
        const double want = jz::cubicSplineW(std::sqrt(d2[std::size_t(j)]), h);
        JZ_CHECK_MSG(std::memcmp(&want, &w[std::size_t(j)], sizeof want) == 0,
          "h=" << h << " n=" << n << " j=" << j << ": " << w[std::size_t(j)] << " vs " << want);
      }
    }
}

JZ_TEST_MAIN()
