// Every kernel at any scale the input precision can represent: the same
// points multiplied by 2^k (k from -300 to 300 in double, -100 to 120 in
// float, where squared distances overflow or underflow float long before the
// coordinates do) give exactly the unit-scale results scaled back: lengths
// times 2^k, densities times 2^-3k, potentials times 2^-k, the same ids,
// groups, edges and clusters. A result that the output precision cannot hold
// is inf or 0 and comes with a warning in RunInfo. Non-power-of-two scales
// (centimetres) agree to rounding.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "PointSets.h"
#include "Problems.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/Distributed.h"
#include "jz/Emst.h"
#include "jz/Fof.h"
#include "jz/Gravity.h"
#include "jz/HaloProperties.h"
#include "jz/Hdbscan.h"
#include "jz/Knn.h"

namespace
{
// Unit-scale points on a grid of 2^-20 in [0, 1): every multiple by 2^k in
// the tested range is exact in float and double (no subnormal coordinates).
template <class T>
std::vector<T> unitPoints(const std::string& kind, std::size_t n, unsigned seed = 3)
{
  std::vector<T> xyz = jztest::makePoints<T>(kind, n, seed);
  for (T& v : xyz)
  {
    const double w = double(v) - std::floor(double(v));
    v = T(std::ldexp(std::floor(std::ldexp(w, 20)), -20));
  }
  return xyz;
}

template <class T>
std::vector<T> scaled(const std::vector<T>& v, int k)
{
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = T(std::ldexp(double(v[i]), k));
  return out;
}

// x * 2^k in T, or nothing when T cannot hold it exactly as a normal number
// (then the kernel's output is inf or 0 or subnormal, with a warning).
template <class T>
bool representable(double x, int k)
{
  const double y = std::ldexp(x, k);
  const double a = std::fabs(y);
  return a == 0 || std::isinf(x) ||
    (a >= double(std::numeric_limits<T>::min()) && a <= double(std::numeric_limits<T>::max()));
}

template <class T>
bool sameScaled(T got, T unit, int k)
{
  return double(got) == std::ldexp(double(unit), k);
}

bool hasWarning(const jz::RunInfo& info)
{
  return !info.warnings.empty();
}

template <class T>
std::vector<int> exponents()
{
  if (sizeof(T) == sizeof(float))
    return { -100, -70, -40, -12, 12, 40, 70, 100, 120 };
  return { -300, -100, -40, 40, 100, 300 };
}

using jztest::typeName;

//------------------------------------------------------------------------------
template <class T>
struct KnnRun
{
  std::vector<T> h, rho, dist;
  std::vector<jz::GlobalId> ids;
  jz::RunInfo info;
};

template <class T>
KnnRun<T> runKnn(const std::vector<T>& xyz, int k, bool periodic, double box,
  jz::DensityEstimator estimator, const std::vector<double>& mass)
{
  const std::size_t n = xyz.size() / 3;
  KnnRun<T> r;
  r.h.assign(n, T(-1));
  r.rho.assign(n, T(-1));
  r.dist.assign(n * std::size_t(k), T(-1));
  r.ids.assign(n * std::size_t(k), -7);
  jz::KnnProblem<T> p;
  p.sources = xyz.data();
  p.numSources = n;
  p.k = k;
  p.sourceMasses = mass.data();
  p.periodic = periodic;
  for (int d = 0; d < 3; ++d)
    p.boxHi[d] = box;
  jz::KnnResults<T> res;
  res.estimator = estimator;
  res.smoothingLength = r.h.data();
  res.density = r.rho.data();
  res.neighborIds = r.ids.data();
  res.neighborDistances = r.dist.data();
  r.info = jz::computeKnn(p, res, jztest::backend());
  return r;
}

template <class T>
void checkKnnScaled(const std::string& kind, bool periodic, jz::DensityEstimator estimator)
{
  const std::size_t n = 3000;
  const int K = 16;
  const std::vector<T> unit = unitPoints<T>(kind, n);
  std::vector<double> mass(n);
  for (std::size_t i = 0; i < n; ++i)
    mass[i] = 1.0 + double(i % 4);
  const KnnRun<T> ref = runKnn(unit, K, periodic, 1.0, estimator, mass);
  for (int k : exponents<T>())
  {
    const KnnRun<T> got =
      runKnn(scaled(unit, k), K, periodic, std::ldexp(1.0, k), estimator, mass);
    // Every output written (runKnn starts them at -1 and -7).
    JZ_CHECK(std::count(got.ids.begin(), got.ids.end(), jz::GlobalId(-7)) == 0 &&
      std::count(got.h.begin(), got.h.end(), T(-1)) == 0 &&
      std::count(got.rho.begin(), got.rho.end(), T(-1)) == 0 &&
      std::count(got.dist.begin(), got.dist.end(), T(-1)) == 0);
    std::size_t badH = 0, badRho = 0, badIds = 0, unrepresentable = 0;
    for (std::size_t i = 0; i < n; ++i)
    {
      badH += !sameScaled(got.h[i], ref.h[i], k);
      if (representable<T>(double(ref.rho[i]), -3 * k))
        badRho += !sameScaled(got.rho[i], ref.rho[i], -3 * k);
      else
      {
        ++unrepresentable;
        const double a = std::fabs(double(got.rho[i]));
        badRho += !(a == 0 || std::isinf(a) || a < double(std::numeric_limits<T>::min()));
      }
    }
    for (std::size_t j = 0; j < n * std::size_t(K); ++j)
    {
      badIds += got.ids[j] != ref.ids[j];
      badH += !sameScaled(got.dist[j], ref.dist[j], k);
    }
    JZ_CHECK_MSG(badH == 0 && badRho == 0 && badIds == 0,
      typeName<T>() << " " << kind << (periodic ? " periodic" : "") << " 2^" << k << ": " << badH
                    << " lengths, " << badRho << " densities, " << badIds << " ids differ");
    JZ_CHECK_MSG(hasWarning(got.info) == (unrepresentable > 0),
      typeName<T>() << " " << kind << " 2^" << k << ": " << unrepresentable
                    << " densities out of range, warnings " << got.info.warnings.size());
  }
}

JZ_TEST(KnnAtAnyScale)
{
  for (const char* kind : { "uniform", "clustered", "duplicates" })
    for (bool periodic : { false, true })
    {
      checkKnnScaled<float>(kind, periodic, jz::DensityEstimator::SphCubicSpline);
      checkKnnScaled<double>(kind, periodic, jz::DensityEstimator::SphCubicSpline);
    }
  checkKnnScaled<float>("clustered", false, jz::DensityEstimator::TopHat);
}

// Centimetres: 1 Mpc = 3.0857e24 cm, not a power of two. The smoothing
// lengths agree to float rounding of the points.
JZ_TEST(KnnInCentimetres)
{
  const std::size_t n = 4000;
  const double mpc = 3.0857e24;
  const std::vector<float> unit = unitPoints<float>("clustered", n);
  std::vector<float> cgs(unit.size());
  for (std::size_t i = 0; i < unit.size(); ++i)
    cgs[i] = float(double(unit[i]) * mpc);
  // 1e10 solar masses in grams: the density in g/cm^3 (~1e-26) fits float;
  // the unit-scale run takes unit masses.
  const double msun10 = 1.989e43;
  const std::vector<double> unitMass(n, 1.0), cgsMass(n, msun10);
  const KnnRun<float> ref = runKnn(unit, 32, false, 1.0, jz::DensityEstimator::TopHat, unitMass);
  const KnnRun<float> got = runKnn(cgs, 32, false, 1.0, jz::DensityEstimator::TopHat, cgsMass);
  // The points themselves round to float differently at the two scales:
  // by up to an ulp of the largest coordinate, 2^-24, so h (about 1/50 of
  // it) by about 1e-6 relative, 1e-4 at most.
  std::size_t bad = 0;
  double worstH = 0, worstRho = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const double eh = std::fabs(double(got.h[i]) / (double(ref.h[i]) * mpc) - 1);
    const double er =
      std::fabs(double(got.rho[i]) / msun10 * mpc * mpc * mpc / double(ref.rho[i]) - 1);
    bad += !(eh < 1e-4) + !(er < 3e-4);
    worstH = std::max(worstH, eh);
    worstRho = std::max(worstRho, er);
  }
  JZ_CHECK_MSG(bad == 0, bad << " values off; worst h " << worstH << ", density " << worstRho);
}

// A rank-partitioned run at an extreme scale equals the serial unit run.
JZ_TEST(KnnDistributedAtAnyScale)
{
  const std::size_t n = 2400;
  const int K = 12, k = 100;
  const std::vector<float> unit = unitPoints<float>("clustered", n);
  std::vector<double> mass(n, 1.0);
  const KnnRun<float> ref = runKnn(unit, K, true, 1.0, jz::DensityEstimator::SphCubicSpline, mass);
  const std::vector<float> big = scaled(unit, k);
  for (int ranks : { 2, 3 })
  {
    std::vector<float> h(n, -1);
    std::vector<jz::GlobalId> ids(n * K, -7);
    jztest::ThreadWorld world(ranks);
    world.run(
      [&](jz::Communicator& comm)
      {
        const std::size_t lo = n * std::size_t(comm.rank()) / std::size_t(ranks);
        const std::size_t hi = n * std::size_t(comm.rank() + 1) / std::size_t(ranks);
        std::vector<jz::GlobalId> gid(hi - lo);
        for (std::size_t i = lo; i < hi; ++i)
          gid[i - lo] = jz::GlobalId(i);
        std::vector<float> rho(hi - lo);
        jz::KnnProblem<float> p;
        p.sources = big.data() + 3 * lo;
        p.numSources = hi - lo;
        p.sourceIds = gid.data();
        p.k = K;
        p.periodic = true;
        for (int d = 0; d < 3; ++d)
          p.boxHi[d] = std::ldexp(1.0, k);
        jz::KnnResults<float> res;
        res.smoothingLength = h.data() + lo;
        res.density = rho.data();
        res.neighborIds = ids.data() + lo * K;
        jz::computeKnnDistributed(p, res, comm, jztest::backend());
      });
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i)
      bad += !sameScaled(h[i], ref.h[i], k);
    for (std::size_t j = 0; j < n * K; ++j)
      bad += ids[j] != ref.ids[j];
    JZ_CHECK_MSG(bad == 0, ranks << " ranks: " << bad << " values differ");
  }
}

//------------------------------------------------------------------------------
// The FoF problem of unit-scale points scaled by 2^k: a linking length of
// 0.2 mean separations and the box [0, 2^k)^3, both scaled alike.
template <class T>
jz::FofProblem<T> scaledFofProblem(const std::vector<T>& xyz, int k, bool periodic)
{
  const std::size_t n = xyz.size() / 3;
  jz::FofProblem<T> p =
    jztest::fofProblem(xyz.data(), n, std::ldexp(0.2 / std::cbrt(double(n)), k), periodic);
  for (int d = 0; d < 3; ++d)
    p.boxHi[d] = std::ldexp(1.0, k);
  return p;
}

template <class T>
void checkFofScaled(const std::string& kind, bool periodic)
{
  const std::size_t n = 4000;
  const std::vector<T> unit = unitPoints<T>(kind, n);
  std::vector<double> mass(n), vel(3 * n);
  for (std::size_t i = 0; i < n; ++i)
  {
    mass[i] = 1.0 + double(i % 3);
    for (int d = 0; d < 3; ++d)
      vel[3 * i + d] = double((i * 31 + std::size_t(d)) % 17) - 8;
  }
  auto run = [&](const std::vector<T>& xyz, int k)
  {
    const jz::FofProblem<T> p = scaledFofProblem(xyz, k, periodic);
    jz::FofHaloOptions o;
    o.minimumGroupSize = 5;
    o.masses = mass.data();
    o.velocities = vel.data();
    jz::FofHalos h;
    jz::computeFofHalos(p, o, h, jztest::backend());
    return h;
  };
  const jz::FofHalos ref = run(unit, 0);
  JZ_CHECK(ref.numGroups > 3);
  for (int k : exponents<T>())
  {
    const jz::FofHalos got = run(scaled(unit, k), k);
    std::size_t bad = got.groupId != ref.groupId || got.groupSize != ref.groupSize ||
      got.numGroups != ref.numGroups || got.catalogue.count != ref.catalogue.count ||
      got.catalogue.mass != ref.catalogue.mass ||
      got.catalogue.velocityDispersion != ref.catalogue.velocityDispersion;
    for (std::size_t g = 0; g < got.catalogue.numGroups && !bad; ++g)
    {
      for (int d = 0; d < 3; ++d)
        bad += got.catalogue.centerOfMass[3 * g + d] !=
          std::ldexp(ref.catalogue.centerOfMass[3 * g + d], k);
      bad += got.catalogue.inertiaRadius[g] != std::ldexp(ref.catalogue.inertiaRadius[g], k);
    }
    JZ_CHECK_MSG(bad == 0,
      typeName<T>() << " " << kind << (periodic ? " periodic" : "") << " 2^" << k
                    << ": groups or catalogue differ");
  }
}

JZ_TEST(FofAtAnyScale)
{
  for (const char* kind : { "clustered", "runs" })
    for (bool periodic : { false, true })
    {
      checkFofScaled<float>(kind, periodic);
      checkFofScaled<double>(kind, periodic);
    }
}

//------------------------------------------------------------------------------
template <class T>
jz::EmstEdges runEmst(const std::vector<T>& xyz, int k, jz::EmstMetric metric, bool periodic)
{
  jz::EmstProblem<T> p;
  p.points = xyz.data();
  p.numPoints = xyz.size() / 3;
  p.metric = metric;
  p.minSamples = 5;
  p.periodic = periodic;
  for (int d = 0; d < 3; ++d)
    p.boxHi[d] = std::ldexp(1.0, k);
  jz::EmstEdges e;
  jz::computeEmst(p, e, jztest::backend());
  return e;
}

template <class T>
void checkEmstScaled(const std::string& kind, jz::EmstMetric metric, bool periodic)
{
  const std::vector<T> unit = unitPoints<T>(kind, 3000);
  const jz::EmstEdges ref = runEmst(unit, 0, metric, periodic);
  for (int k : exponents<T>())
  {
    const jz::EmstEdges got = runEmst(scaled(unit, k), k, metric, periodic);
    std::size_t bad = got.from != ref.from || got.to != ref.to || got.size() != ref.size();
    for (std::size_t e = 0; e < got.size() && !bad; ++e)
      bad += got.weight2[e] != std::ldexp(ref.weight2[e], 2 * k);
    for (std::size_t i = 0; i < got.core2.size() && !bad; ++i)
      bad += got.core2[i] != std::ldexp(ref.core2[i], 2 * k);
    JZ_CHECK_MSG(bad == 0,
      typeName<T>() << " " << kind << (periodic ? " periodic" : "")
                    << (metric == jz::EmstMetric::Euclidean ? " euclidean" : " mutual") << " 2^"
                    << k << ": the tree differs");
  }
}

JZ_TEST(EmstAtAnyScale)
{
  for (const char* kind : { "uniform", "clustered" })
    for (jz::EmstMetric metric : { jz::EmstMetric::Euclidean, jz::EmstMetric::MutualReachability })
    {
      checkEmstScaled<float>(kind, metric, false);
      checkEmstScaled<double>(kind, metric, false);
    }
  checkEmstScaled<float>("clustered", jz::EmstMetric::Euclidean, true);
}

template <class T>
void checkHdbscanScaled()
{
  const std::vector<T> unit = unitPoints<T>("clustered", 3000);
  auto run = [&](const std::vector<T>& xyz)
  {
    jz::EmstProblem<T> p;
    p.points = xyz.data();
    p.numPoints = xyz.size() / 3;
    jz::HdbscanOptions o;
    o.minClusterSize = 15;
    jz::HdbscanResult r;
    jz::computeHdbscan(p, o, r, jztest::backend());
    return r;
  };
  const jz::HdbscanResult ref = run(unit);
  JZ_CHECK(ref.numClusters > 2);
  for (int k : exponents<T>())
  {
    const jz::HdbscanResult got = run(scaled(unit, k));
    std::size_t bad = got.clusterId != ref.clusterId || got.probability != ref.probability ||
      got.outlierScore != ref.outlierScore;
    for (std::size_t i = 0; i < got.coreDistance.size() && !bad; ++i)
      bad += got.coreDistance[i] != std::ldexp(ref.coreDistance[i], k);
    JZ_CHECK_MSG(bad == 0, typeName<T>() << " 2^" << k << ": the clusters differ");
  }
}

JZ_TEST(HdbscanAtAnyScale)
{
  checkHdbscanScaled<float>();
  checkHdbscanScaled<double>();
}

//------------------------------------------------------------------------------
template <class T>
void checkGravityScaled(double theta)
{
  const std::size_t n = 3000;
  const std::vector<T> unit = unitPoints<T>("clustered", n);
  std::vector<double> mass(n);
  for (std::size_t i = 0; i < n; ++i)
    mass[i] = 1.0 + double(i % 5);
  auto run = [&](const std::vector<T>& xyz, int k, std::vector<double>& phi,
               std::vector<double>& acc)
  {
    jz::GravityProblem<T> p;
    p.sources = xyz.data();
    p.numSources = n;
    p.sourceMasses = mass.data();
    p.openingAngle = theta;
    p.softening = std::ldexp(1e-3, k);
    phi.assign(n, 0.0);
    acc.assign(3 * n, 0.0);
    jz::GravityResults r;
    r.potential = phi.data();
    r.acceleration = acc.data();
    return jz::computeGravity(p, r, jztest::backend());
  };
  std::vector<double> phi0, acc0;
  run(unit, 0, phi0, acc0);
  for (int k : exponents<T>())
  {
    std::vector<double> phi, acc;
    run(scaled(unit, k), k, phi, acc);
    std::size_t bad = 0;
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i)
    {
      const double e = std::fabs(phi[i] / std::ldexp(phi0[i], -k) - 1);
      worst = std::max(worst, e);
      bad += !(e <= 1e-12);
      for (int d = 0; d < 3; ++d)
      {
        const double a = std::ldexp(acc0[3 * i + d], -2 * k);
        const double norm = std::ldexp(
          std::sqrt(acc0[3 * i] * acc0[3 * i] + acc0[3 * i + 1] * acc0[3 * i + 1] +
            acc0[3 * i + 2] * acc0[3 * i + 2]),
          -2 * k);
        bad += !(std::fabs(acc[3 * i + d] - a) <= 1e-12 * norm);
      }
    }
    JZ_CHECK_MSG(bad == 0,
      typeName<T>() << " theta " << theta << " 2^" << k << ": " << bad
                    << " values differ (worst potential " << worst << ")");
  }
}

JZ_TEST(GravityAtAnyScale)
{
  for (double theta : { 0.0, 0.6 })
  {
    checkGravityScaled<float>(theta);
    checkGravityScaled<double>(theta);
  }
}

//------------------------------------------------------------------------------
template <class T>
void checkHaloPropertiesScaled(bool periodic)
{
  const std::size_t n = 4000;
  const std::vector<T> unit = unitPoints<T>("clustered", n);
  std::vector<double> mass(n);
  for (std::size_t i = 0; i < n; ++i)
    mass[i] = 1.0 + double(i % 3);
  auto run = [&](const std::vector<T>& xyz, int k)
  {
    const jz::FofProblem<T> fp = scaledFofProblem(xyz, k, periodic);
    jz::FofHaloOptions fo;
    fo.minimumGroupSize = 8;
    fo.masses = mass.data();
    jz::FofHalos halos;
    jz::computeFofHalos(fp, fo, halos, jztest::backend());
    jz::HaloPropertiesInput<T> in = jztest::haloPropertiesInput(xyz.data(), n, mass.data(),
      halos.groupId.data(), halos.numGroups, halos.catalogue, periodic);
    std::copy_n(fp.boxHi, 3, in.boxHi);
    jz::HaloPropertiesOptions o;
    o.potentialCentres = true;
    o.softening = std::ldexp(1e-4, k);
    o.sphericalOverdensity = true;
    o.overdensity = 200;
    o.referenceDensity = std::ldexp(8000.0, -3 * k);
    jz::HaloProperties out;
    jz::SerialCommunicator comm;
    jz::computeHaloProperties(comm, in, o, out);
    return out;
  };
  const jz::HaloProperties ref = run(unit, 0);
  JZ_CHECK(!ref.mostBoundId.empty());
  for (int k : exponents<T>())
  {
    const jz::HaloProperties got = run(scaled(unit, k), k);
    std::size_t bad = got.mostBoundId != ref.mostBoundId || got.soCount != ref.soCount ||
      got.soMass != ref.soMass || got.soRadius.size() != ref.soRadius.size();
    for (std::size_t g = 0; g < got.soRadius.size() && !bad; ++g)
    {
      bad += got.soRadius[g] != std::ldexp(ref.soRadius[g], k);
      for (int d = 0; d < 3; ++d)
        bad += got.centreOfPotential[3 * g + d] != std::ldexp(ref.centreOfPotential[3 * g + d], k);
    }
    JZ_CHECK_MSG(bad == 0,
      typeName<T>() << (periodic ? " periodic" : "") << " 2^" << k
                    << ": centres or SO profiles differ");
  }
}

JZ_TEST(HaloPropertiesAtAnyScale)
{
  for (bool periodic : { false, true })
  {
    checkHaloPropertiesScaled<float>(periodic);
    checkHaloPropertiesScaled<double>(periodic);
  }
}
} // namespace

JZ_TEST_MAIN()
