// SPH smoothing on the particles (jz/SphSmooth.h): against a brute-force
// O(N^2) evaluation of the same definitions (its own neighbour search, ties
// by id), the physics of the estimates (gradients of linear fields, curl of
// a rotation, divergence of x, zero dispersion of a constant field, a field
// periodic in the box), degenerate sets, float and double, and simulated
// MPI ranks (equal to one process up to summation order).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "PointSets.h"
#include "RankPartitions.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"

#include "jz/DensityKernels.h"
#include "jz/Geometry.h"
#include "jz/SphSmooth.h"

namespace
{
constexpr double kPi = 3.14159265358979323846;

// One field's outputs, owned.
struct FieldOut
{
  std::vector<double> smoothed, gradient, divergence, curl, dispersion;
};

struct Run
{
  std::vector<double> h, rho;
  std::vector<FieldOut> fields;
};

// The inputs of a case in double; `points` are rounded to T for the run.
struct Case
{
  std::vector<double> points, masses;
  std::vector<std::vector<double>> values; // per field
  std::vector<int> components;
  int k = 32;
  bool periodic = false;
  double lo = 0, hi = 1;
};

template <class T>
std::vector<T> rounded(const std::vector<double>& v)
{
  return std::vector<T>(v.begin(), v.end());
}

// Every output of every field wanted, as the filter asks.
jz::SphFieldResults wantAll(FieldOut& o, std::size_t n, int c)
{
  jz::SphFieldResults r;
  o.smoothed.assign(n * c, -7);
  r.smoothed = o.smoothed.data();
  if (c == 1)
  {
    o.gradient.assign(3 * n, -7);
    r.gradient = o.gradient.data();
  }
  if (c == 3)
  {
    o.divergence.assign(n, -7);
    o.curl.assign(3 * n, -7);
    o.dispersion.assign(n, -7);
    r.divergence = o.divergence.data();
    r.curl = o.curl.data();
    r.dispersion = o.dispersion.data();
  }
  return r;
}

// The kernel on one process (or on `comm`'s ranks for the piece given).
template <class T>
Run runKernel(const Case& c, const std::vector<T>& pts, const std::vector<double>& masses,
  const std::vector<std::vector<double>>& values, const jz::GlobalId* ids, jz::Communicator& comm)
{
  const std::size_t n = pts.size() / 3;
  jz::SphSmoothProblem<T> p;
  p.points = pts.data();
  p.numPoints = n;
  p.masses = masses.empty() ? nullptr : masses.data();
  p.ids = ids;
  p.k = c.k;
  p.periodic = c.periodic;
  for (int d = 0; d < 3; ++d)
  {
    p.boxLo[d] = c.lo;
    p.boxHi[d] = c.hi;
  }
  Run run;
  std::vector<T> h(n), rho(n);
  jz::SphSmoothResults<T> r;
  r.smoothingLength = h.data();
  r.density = rho.data();
  run.fields.resize(values.size());
  for (std::size_t f = 0; f < values.size(); ++f)
  {
    jz::SphField field;
    field.values = values[f].data();
    field.components = c.components[f];
    p.fields.push_back(field);
    r.fields.push_back(wantAll(run.fields[f], n, c.components[f]));
  }
  jz::computeSphSmooth(p, r, comm, jztest::backend());
  run.h.assign(h.begin(), h.end());
  run.rho.assign(rho.begin(), rho.end());
  return run;
}

template <class T>
Run runSerial(const Case& c)
{
  jz::SerialCommunicator serial;
  return runKernel<T>(c, rounded<T>(c.points), c.masses, c.values, nullptr, serial);
}

// The brute-force reference on the points rounded to T: all pairs sorted by
// (distance, index), the K nearest, h, rho and the definitions, in double.
// `scale` gets, per output value, the sum of the magnitudes of its terms
// (what rounding errors are relative to).
template <class T>
Run reference(const Case& c, Run* scale)
{
  // The coordinates as the kNN's tree sees them: wrapped into the box in T.
  std::vector<T> tp = rounded<T>(c.points);
  const double period = c.periodic ? c.hi - c.lo : 0;
  for (T& x : tp)
    x = jz::treeCoordinate(x, c.lo, period);
  const std::size_t n = tp.size() / 3;
  auto mass = [&](std::size_t j) { return c.masses.empty() ? 1.0 : c.masses[j]; };
  auto offset = [&](std::size_t i, std::size_t j, double dx[3])
  {
    double r2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      dx[d] = jz::nearestImageOffset(double(tp[3 * i + d]) - double(tp[3 * j + d]), period);
      r2 += dx[d] * dx[d];
    }
    return std::sqrt(r2);
  };
  std::vector<std::vector<std::size_t>> nb(n);
  Run ref;
  ref.h.resize(n);
  ref.rho.resize(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    std::vector<std::pair<double, std::size_t>> all(n);
    for (std::size_t j = 0; j < n; ++j)
    {
      double r2 = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double dx =
          jz::nearestImageOffset(double(tp[3 * i + d]) - double(tp[3 * j + d]), period);
        r2 += dx * dx;
      }
      all[j] = { r2, j };
    }
    std::partial_sort(all.begin(), all.begin() + c.k, all.end());
    const double h = std::sqrt(all[c.k - 1].first);
    ref.h[i] = double(T(h));
    double rho = 0;
    for (int s = 0; s < c.k; ++s)
    {
      nb[i].push_back(all[s].second);
      rho += h > 0 ? mass(all[s].second) * jz::cubicSplineW(std::sqrt(all[s].first), h) : 0;
    }
    ref.rho[i] = h > 0 ? double(T(rho)) : std::numeric_limits<double>::infinity();
  }
  ref.fields.resize(c.values.size());
  scale->fields.resize(c.values.size());
  for (std::size_t f = 0; f < c.values.size(); ++f)
  {
    const int nc = c.components[f];
    const std::vector<double>& a = c.values[f];
    FieldOut& o = ref.fields[f];
    FieldOut& s = scale->fields[f];
    o.smoothed.assign(n * nc, 0);
    s.smoothed.assign(n * nc, 0);
    o.gradient.assign(3 * n, 0);
    s.gradient.assign(3 * n, 0);
    o.divergence.assign(n, 0);
    s.divergence.assign(n, 0);
    o.curl.assign(3 * n, 0);
    s.curl.assign(3 * n, 0);
    o.dispersion.assign(n, 0);
    s.dispersion.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
    {
      const double h = ref.h[i];
      double msum = 0;
      for (std::size_t j : nb[i])
      {
        double dx[3];
        const double r = offset(i, j, dx);
        const double rho = ref.rho[j];
        const double v = h > 0 && std::isfinite(rho) && rho > 0 ? mass(j) / rho : 0;
        const double w = h > 0 ? v * jz::cubicSplineW(r, h) : mass(j);
        const double g = h > 0 && r > 0 ? v * jz::cubicSplineDWdr(r, h) / r : 0;
        msum += mass(j);
        for (int l = 0; l < nc; ++l)
        {
          o.smoothed[i * nc + l] += w * a[j * nc + l];
          s.smoothed[i * nc + l] += std::fabs(w * a[j * nc + l]);
        }
        double da[3] = { 0, 0, 0 };
        for (int l = 0; l < nc && l < 3; ++l)
          da[l] = a[j * nc + l] - a[i * nc + l];
        const double gw[3] = { g * dx[0], g * dx[1], g * dx[2] };
        if (nc == 1)
          for (int d = 0; d < 3; ++d)
          {
            o.gradient[3 * i + d] += da[0] * gw[d];
            s.gradient[3 * i + d] += std::fabs(da[0] * gw[d]);
          }
        if (nc == 3)
        {
          const double cr[3] = { gw[1] * da[2] - gw[2] * da[1], gw[2] * da[0] - gw[0] * da[2],
            gw[0] * da[1] - gw[1] * da[0] };
          for (int d = 0; d < 3; ++d)
          {
            o.divergence[i] += da[d] * gw[d];
            s.divergence[i] += std::fabs(da[d] * gw[d]);
            o.curl[3 * i + d] += cr[d];
            s.curl[3 * i + d] += std::fabs(gw[(d + 1) % 3] * da[(d + 2) % 3]) +
              std::fabs(gw[(d + 2) % 3] * da[(d + 1) % 3]);
          }
        }
      }
      if (!(h > 0))
        for (int l = 0; l < nc; ++l)
        {
          o.smoothed[i * nc + l] /= msum;
          s.smoothed[i * nc + l] /= msum;
        }
      if (nc == 3)
      {
        double sum = 0, ssum = 0;
        for (std::size_t j : nb[i])
          for (int l = 0; l < 3; ++l)
          {
            const double d = a[j * 3 + l] - o.smoothed[i * 3 + l];
            sum += mass(j) * d * d;
            ssum += mass(j) * (std::fabs(a[j * 3 + l]) + s.smoothed[i * 3 + l]) *
              (std::fabs(a[j * 3 + l]) + s.smoothed[i * 3 + l]);
          }
        o.dispersion[i] = std::sqrt(sum / msum);
        s.dispersion[i] = std::sqrt(ssum / msum);
      }
    }
  }
  return ref;
}

// |got - want| <= tol * (scale + tiny) for every value; the count of misses.
int misses(const std::vector<double>& got, const std::vector<double>& want,
  const std::vector<double>& scale, double tol, const char* what, const std::string& label)
{
  if (got.size() != want.size())
  {
    std::fprintf(
      stderr, "  %s %s: %zu values, want %zu\n", label.c_str(), what, got.size(), want.size());
    return 1;
  }
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
  {
    const bool same = got[i] == want[i] || std::fabs(got[i] - want[i]) <= tol * (scale[i] + 1e-300);
    if (!same && bad++ < 3)
      std::fprintf(stderr, "  %s %s[%zu] = %.17g, want %.17g (scale %g)\n", label.c_str(), what, i,
        got[i], want[i], scale[i]);
  }
  return bad;
}

template <class T>
void checkAgainstReference(const Case& c, const std::string& label)
{
  const Run got = runSerial<T>(c);
  Run scale;
  const Run want = reference<T>(c, &scale);
  const double tol = std::is_same<T, float>::value ? 2e-6 : 1e-11;
  std::vector<double> hs(want.h.size()), rs(want.rho.size());
  for (std::size_t i = 0; i < hs.size(); ++i)
  {
    hs[i] = std::fabs(want.h[i]);
    rs[i] = std::fabs(want.rho[i]);
  }
  int bad = misses(got.h, want.h, hs, tol, "h", label);
  bad += misses(got.rho, want.rho, rs, tol, "rho", label);
  for (std::size_t f = 0; f < c.values.size(); ++f)
  {
    const FieldOut& g = got.fields[f];
    const FieldOut& w = want.fields[f];
    const FieldOut& s = scale.fields[f];
    bad += misses(g.smoothed, w.smoothed, s.smoothed, tol, "smoothed", label);
    if (c.components[f] == 1)
      bad += misses(g.gradient, w.gradient, s.gradient, tol, "gradient", label);
    if (c.components[f] == 3)
    {
      bad += misses(g.divergence, w.divergence, s.divergence, tol, "divergence", label);
      bad += misses(g.curl, w.curl, s.curl, tol, "curl", label);
      bad += misses(g.dispersion, w.dispersion, s.dispersion, tol, "dispersion", label);
    }
  }
  JZ_CHECK_MSG(bad == 0, label << ": " << bad << " values differ from the brute-force sums");
}

// A scalar, a vector and a 2-component field of the points, with masses.
Case fieldsOf(std::vector<double> points, int k, unsigned seed)
{
  Case c;
  c.points = std::move(points);
  c.k = k;
  const std::size_t n = c.points.size() / 3;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  c.masses.resize(n);
  for (double& m : c.masses)
    m = u(rng);
  std::vector<double> scalar(n), vec(3 * n), two(2 * n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const double* x = &c.points[3 * i];
    scalar[i] = std::sin(3 * x[0]) + x[1] * x[2] + u(rng);
    for (int d = 0; d < 3; ++d)
      vec[3 * i + d] = x[(d + 1) % 3] - 2 * x[d] + 0.3 * u(rng);
    two[2 * i] = u(rng);
    two[2 * i + 1] = -x[0];
  }
  c.values = { scalar, vec, two };
  c.components = { 1, 3, 2 };
  return c;
}

JZ_TEST(KernelDerivativeIsTheSplinesSlope)
{
  // dW/dr against central differences of W, on both branches and at the joins.
  for (double h : { 0.01, 1.0, 37.0 })
    for (double q = 0.0; q <= 1.2; q += 0.0125)
    {
      const double r = q * h, e = 1e-6 * h;
      const double fd =
        q < 1e-9 ? 0.0 : (jz::cubicSplineW(r + e, h) - jz::cubicSplineW(r - e, h)) / (2 * e);
      const double scale = 8.0 / (kPi * h * h * h * h);
      JZ_CHECK_MSG(std::fabs(jz::cubicSplineDWdr(r, h) - fd) < 1e-6 * scale,
        "h=" << h << " q=" << q << ": " << jz::cubicSplineDWdr(r, h) << " vs " << fd);
    }
}

JZ_TEST(MatchesBruteForceOnEveryDistribution)
{
  for (const std::string& kind : jztest::allKinds())
  {
    for (int k : { 1, 8, 32 })
    {
      const Case c = fieldsOf(jztest::makePoints<double>(kind, 700, 5), k, 9);
      checkAgainstReference<double>(c, kind + " double k=" + std::to_string(k));
      checkAgainstReference<float>(c, kind + " float k=" + std::to_string(k));
    }
  }
}

JZ_TEST(MatchesBruteForceWithBulkDuplicatesAndZeroH)
{
  // Half the points on 12 sites: many particles have h = 0 (density +inf).
  Case c = fieldsOf(jztest::makePoints<double>("runs", 900, 3), 16, 4);
  const Run got = runSerial<double>(c);
  JZ_CHECK(std::count(got.h.begin(), got.h.end(), 0.0) > 100);
  checkAgainstReference<double>(c, "runs double");
  checkAgainstReference<float>(c, "runs float");
  c.masses.clear(); // unit masses
  checkAgainstReference<double>(c, "runs unit mass");
}

JZ_TEST(MatchesBruteForceInAPeriodicBox)
{
  // Points outside the box too: they are wrapped in, distances use the nearest image.
  std::vector<double> pts = jztest::makePoints<double>("clustered", 800, 8);
  for (std::size_t i = 0; i < pts.size(); i += 7)
    pts[i] += (i % 2 ? 1.0 : -2.0) * 0.8;
  Case c = fieldsOf(pts, 24, 2);
  c.periodic = true;
  c.lo = -0.1;
  c.hi = 0.7;
  checkAgainstReference<double>(c, "periodic double");
  checkAgainstReference<float>(c, "periodic float");
}

// A lattice jittered by 5% of its spacing (a glass-like uniform set) of side^3 points in [0, 1)^3.
std::vector<double> glass(int side, unsigned seed)
{
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  std::vector<double> pts;
  for (int z = 0; z < side; ++z)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x)
      {
        const int idx[3] = { x, y, z };
        for (int d = 0; d < 3; ++d)
          pts.push_back((idx[d] + 0.5 + u(rng)) / side);
      }
  return pts;
}

// Particles at least `margin` from every face of [0, 1)^3.
std::vector<std::size_t> interior(const std::vector<double>& pts, double margin)
{
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < pts.size() / 3; ++i)
  {
    bool inside = true;
    for (int d = 0; d < 3; ++d)
      inside = inside && pts[3 * i + d] > margin && pts[3 * i + d] < 1 - margin;
    if (inside)
      in.push_back(i);
  }
  return in;
}

// The largest |estimate - exact| over the interior, relative to `size`.
double worst(const std::vector<double>& est, int comps, const std::vector<std::size_t>& at,
  const std::function<double(std::size_t, int)>& exact, double size)
{
  double w = 0;
  for (std::size_t i : at)
    for (int l = 0; l < comps; ++l)
      w = std::max(w, std::fabs(est[i * comps + l] - exact(i, l)) / size);
  return w;
}

// The tolerance of the physics checks: a gather kernel truncated at the
// K-th neighbour on a jittered lattice reproduces linear fields to a few
// per cent (sum_j V_j (x_j - x_i) grad W_ij is the identity to that
// accuracy); the brute-force comparison above checks the sums exactly.
constexpr double kConsistency = 0.08;

JZ_TEST(LinearFieldGradientIsItsSlope)
{
  Case c;
  c.points = glass(22, 1);
  c.k = 64;
  const std::size_t n = c.points.size() / 3;
  const double a[3] = { 1.5, -2.0, 0.75 };
  std::vector<double> lin(n);
  for (std::size_t i = 0; i < n; ++i)
    lin[i] = 4.0 + a[0] * c.points[3 * i] + a[1] * c.points[3 * i + 1] + a[2] * c.points[3 * i + 2];
  c.values = { lin };
  c.components = { 1 };
  const std::vector<std::size_t> in = interior(c.points, 0.2);
  JZ_CHECK(in.size() > 1000);
  for (bool useFloat : { false, true })
  {
    const Run r = useFloat ? runSerial<float>(c) : runSerial<double>(c);
    const double e = worst(
      r.fields[0].gradient, 3, in, [&](std::size_t, int d) { return a[d]; },
      std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]));

    JZ_CHECK_MSG(e < kConsistency, "gradient off by " << e << " of |a| (float " << useFloat << ")");
  }
}

JZ_TEST(RotationHasCurlTwoOmegaAndNoDivergence)
{
  Case c;
  c.points = glass(22, 2);
  c.k = 64;
  const std::size_t n = c.points.size() / 3;
  const double w[3] = { 0.3, -1.2, 2.0 };
  const double wn = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  std::vector<double> rot(3 * n), x(3 * n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const double* p = &c.points[3 * i];
    rot[3 * i + 0] = w[1] * p[2] - w[2] * p[1] + 1.0;
    rot[3 * i + 1] = w[2] * p[0] - w[0] * p[2];
    rot[3 * i + 2] = w[0] * p[1] - w[1] * p[0] - 0.5;
    for (int d = 0; d < 3; ++d)
      x[3 * i + d] = p[d];
  }
  c.values = { rot, x };
  c.components = { 3, 3 };
  const std::vector<std::size_t> in = interior(c.points, 0.2);
  const Run r = runSerial<double>(c);
  const double curl = worst(
    r.fields[0].curl, 3, in, [&](std::size_t, int d) { return 2 * w[d]; }, 2 * wn);
  const double div = worst(
    r.fields[0].divergence, 1, in, [](std::size_t, int) { return 0.0; }, wn);
  const double divX = worst(
    r.fields[1].divergence, 1, in, [](std::size_t, int) { return 3.0; }, 3);
  const double curlX = worst(
    r.fields[1].curl, 3, in, [](std::size_t, int) { return 0.0; }, 1.0);
  JZ_CHECK_MSG(curl < kConsistency, "curl off by " << curl << " of 2|omega|");
  JZ_CHECK_MSG(div < kConsistency, "divergence of a rotation " << div << " of |omega|");
  JZ_CHECK_MSG(divX < kConsistency, "divergence of x off by " << divX << " of 3");
  JZ_CHECK_MSG(curlX < kConsistency, "curl of x " << curlX);
}

JZ_TEST(ConstantFieldHasNoDerivativesAndOnlyTheKernelsDispersion)
{
  // A constant A: gradient, divergence and curl are exactly 0. The
  // dispersion about the smoothed value is |A| |1 - sum_j V_j W_ij| (the
  // smoothed value is not normalised): the smoothing of 1 says how far the
  // kernel sum is from 1, and on a uniform set it is close.
  for (const char* kind : { "clustered", "glass" })
  {
    Case c;
    c.points =
      std::string(kind) == "glass" ? glass(16, 4) : jztest::makePoints<double>(kind, 3000, 6);
    c.k = 48;
    const std::size_t n = c.points.size() / 3;
    std::vector<double> vec(3 * n);
    for (std::size_t i = 0; i < n; ++i)
    {
      vec[3 * i] = 2.0;
      vec[3 * i + 1] = -6.0;
      vec[3 * i + 2] = 3.0; // |A| = 7
    }
    c.values = { std::vector<double>(n, 2.5), vec, std::vector<double>(n, 1.0) };
    c.components = { 1, 3, 1 };
    const Run r = runSerial<double>(c);
    double worstDerivative = 0, worstDispersion = 0, worstSum = 0;
    for (std::size_t i = 0; i < n; ++i)
    {
      const double kernelSum = r.fields[2].smoothed[i];
      worstDispersion = std::max(
        worstDispersion, std::fabs(r.fields[1].dispersion[i] - 7.0 * std::fabs(1 - kernelSum)));
      worstSum = std::max(worstSum, std::fabs(1 - kernelSum));
      worstDerivative = std::max(worstDerivative, std::fabs(r.fields[1].divergence[i]));
      for (int d = 0; d < 3; ++d)
      {
        worstDerivative = std::max(worstDerivative, std::fabs(r.fields[0].gradient[3 * i + d]));
        worstDerivative = std::max(worstDerivative, std::fabs(r.fields[1].curl[3 * i + d]));
      }
    }
    JZ_CHECK_EQ(worstDerivative, 0.0);
    JZ_CHECK_MSG(worstDispersion < 1e-12,
      kind << ": dispersion of a constant field off by " << worstDispersion);
    if (std::string(kind) == "glass")
    {
      const std::vector<std::size_t> in = interior(c.points, 0.25);
      double inner = 0;
      for (std::size_t i : in)
        inner = std::max(inner, r.fields[1].dispersion[i] / 7.0);
      JZ_CHECK_MSG(
        inner < 0.05, "glass interior: constant field dispersion " << inner << " of |A|");
    }
  }
}

JZ_TEST(PeriodicFieldGradientAcrossTheBox)
{
  // sin(2 pi x / L) in a periodic box: the particles near the faces, whose
  // neighbours lie across the box, are as exact as the interior ones.
  Case c;
  c.points = glass(20, 3);
  c.k = 64;
  c.periodic = true;
  const std::size_t n = c.points.size() / 3;
  std::vector<double> wave(n);
  for (std::size_t i = 0; i < n; ++i)
    wave[i] = std::sin(2 * kPi * c.points[3 * i]) + std::cos(2 * kPi * c.points[3 * i + 2]);
  c.values = { wave };
  c.components = { 1 };
  std::vector<std::size_t> all(n), edge;
  std::iota(all.begin(), all.end(), std::size_t(0));
  for (std::size_t i = 0; i < n; ++i)
    if (c.points[3 * i] < 0.05 || c.points[3 * i] > 0.95 || c.points[3 * i + 2] < 0.05)
      edge.push_back(i);
  JZ_CHECK(edge.size() > 500);
  auto exact = [&](std::size_t i, int d)
  {
    if (d == 0)
      return 2 * kPi * std::cos(2 * kPi * c.points[3 * i]);
    if (d == 2)
      return -2 * kPi * std::sin(2 * kPi * c.points[3 * i + 2]);
    return 0.0;
  };
  for (bool useFloat : { false, true })
  {
    const Run r = useFloat ? runSerial<float>(c) : runSerial<double>(c);
    const double eAll = worst(r.fields[0].gradient, 3, all, exact, 2 * kPi);
    const double eEdge = worst(r.fields[0].gradient, 3, edge, exact, 2 * kPi);
    JZ_CHECK_MSG(eAll < 0.1, "periodic gradient off by " << eAll << " (float " << useFloat << ")");
    JZ_CHECK_MSG(eEdge < 0.1, "periodic gradient at the faces off by " << eEdge);
  }
  // Without the box the faces lose half their neighbours: the check above can fail.
  c.periodic = false;
  const Run open = runSerial<double>(c);
  JZ_CHECK(worst(open.fields[0].gradient, 3, edge, exact, 2 * kPi) > 0.2);
}

JZ_TEST(ScaleInvarianceAndDensitiesOutOfRange)
{
  // Lengths times 2^80 (centimetres rather than megaparsecs): in double the
  // smoothed values are the same and the gradients 2^-80 times the unit
  // scale's; in float the densities underflow, and the run says so.
  Case c = fieldsOf(jztest::makePoints<double>("clustered", 2000, 4), 24, 7);
  c.masses.clear();
  const Run unit = runSerial<double>(c);
  const double s = std::ldexp(1.0, 80);
  Case big = c;
  for (double& x : big.points)
    x *= s;
  const Run scaled = runSerial<double>(big);
  double worstSmooth = 0, worstGrad = 0;
  for (std::size_t i = 0; i < unit.fields[0].smoothed.size(); ++i)
    worstSmooth = std::max(worstSmooth,
      std::fabs(scaled.fields[0].smoothed[i] - unit.fields[0].smoothed[i]) /
        (std::fabs(unit.fields[0].smoothed[i]) + 1e-300));
  for (std::size_t i = 0; i < unit.fields[0].gradient.size(); ++i)
    worstGrad = std::max(worstGrad,
      std::fabs(scaled.fields[0].gradient[i] * s - unit.fields[0].gradient[i]) /
        (std::fabs(unit.fields[0].gradient[i]) + 1e-6));
  JZ_CHECK_MSG(worstSmooth < 1e-12, "smoothed values change with the length unit: " << worstSmooth);
  JZ_CHECK_MSG(worstGrad < 1e-9, "gradients do not scale with the length unit: " << worstGrad);

  const std::vector<float> pts = rounded<float>(big.points);
  jz::SphSmoothProblem<float> p;
  p.points = pts.data();
  p.numPoints = pts.size() / 3;
  p.k = 24;
  jz::SphField f;
  f.values = big.values[0].data();
  p.fields = { f };
  std::vector<float> h(p.numPoints), rho(p.numPoints);
  std::vector<double> smoothed(p.numPoints);
  jz::SphSmoothResults<float> r;
  r.smoothingLength = h.data();
  r.density = rho.data();
  jz::SphFieldResults out;
  out.smoothed = smoothed.data();
  r.fields = { out };
  jz::SerialCommunicator serial;
  const jz::RunInfo info = jz::computeSphSmooth(p, r, serial, jztest::backend());
  bool warned = false;
  for (const std::string& w : info.warnings)
    warned = warned || w.find("smoothed arrays") != std::string::npos;
  JZ_CHECK_MSG(warned, "float densities below the float range are reported");
}

// The points split over `ranks` simulated ranks give what one process gives.
template <class T>
void distributedCase(const std::string& kind, const std::string& how, int ranks, bool periodic)
{
  Case c = fieldsOf(jztest::makePoints<double>(kind, 3000, 11), 20, 3);
  c.periodic = periodic;
  const std::size_t n = c.points.size() / 3;
  const std::vector<T> tp = rounded<T>(c.points);
  // Global ids not equal to the index: scattered, so the directory hashes matter.
  std::vector<jz::GlobalId> gids(n);
  for (std::size_t i = 0; i < n; ++i)
    gids[i] = jz::GlobalId(i) * 7919 + 1000003;
  jz::SerialCommunicator serial;
  const Run one = runKernel<T>(c, tp, c.masses, c.values, gids.data(), serial);

  const std::vector<int> owner = partitionPoints(how, c.points.data(), n, ranks, 5);
  jztest::ThreadWorld world(ranks);
  std::vector<int> bad(ranks, 0);
  world.run(
    [&](jz::Communicator& comm)
    {
      std::vector<std::size_t> mine;
      for (std::size_t i = 0; i < n; ++i)
        if (owner[i] == comm.rank())
          mine.push_back(i);
      std::vector<T> pts;
      std::vector<double> masses;
      std::vector<jz::GlobalId> ids;
      std::vector<std::vector<double>> values(c.values.size());
      for (std::size_t i : mine)
      {
        pts.insert(pts.end(), tp.begin() + 3 * i, tp.begin() + 3 * i + 3);
        masses.push_back(c.masses[i]);
        ids.push_back(gids[i]);
        for (std::size_t f = 0; f < values.size(); ++f)
          for (int l = 0; l < c.components[f]; ++l)
            values[f].push_back(c.values[f][i * c.components[f] + l]);
      }
      const Run got = runKernel<T>(c, pts, masses, values, ids.data(), comm);
      auto close = [](double a, double b)
      { return a == b || std::fabs(a - b) <= 1e-12 * (std::fabs(a) + std::fabs(b)) + 1e-13; };
      for (std::size_t m = 0; m < mine.size(); ++m)
      {
        const std::size_t i = mine[m];
        bad[comm.rank()] += got.h[m] != one.h[i] || !close(got.rho[m], one.rho[i]);
        for (std::size_t f = 0; f < values.size(); ++f)
        {
          const FieldOut& g = got.fields[f];
          const FieldOut& o = one.fields[f];
          const int nc = c.components[f];
          for (int l = 0; l < nc; ++l)
            bad[comm.rank()] += !close(g.smoothed[m * nc + l], o.smoothed[i * nc + l]);
          for (int d = 0; d < 3 && nc == 1; ++d)
            bad[comm.rank()] += !close(g.gradient[3 * m + d], o.gradient[3 * i + d]);
          if (nc == 3)
          {
            bad[comm.rank()] += !close(g.divergence[m], o.divergence[i]);
            bad[comm.rank()] += !close(g.dispersion[m], o.dispersion[i]);
            for (int d = 0; d < 3; ++d)
              bad[comm.rank()] += !close(g.curl[3 * m + d], o.curl[3 * i + d]);
          }
        }
      }
    });
  const int total = std::accumulate(bad.begin(), bad.end(), 0);
  JZ_CHECK_MSG(total == 0,
    kind << " " << how << " ranks=" << ranks << " periodic=" << periodic << ": " << total
         << " values differ from one process");
}

JZ_TEST(DistributedEqualsOneProcess)
{
  jztest::skipOnGpu("the distributed exchange runs on the CPU");
  for (int ranks : { 1, 2, 3, 4 })
    for (const char* how : { "random", "slabs", "empty", "one" })
    {
      distributedCase<double>("clustered", how, ranks, false);
      distributedCase<float>("uniform", how, ranks, true);
    }
  distributedCase<double>("duplicates", "random", 3, false);
  distributedCase<double>("runs", "random", 3, true);
}

JZ_TEST(BadInputThrows)
{
  Case c = fieldsOf(jztest::makePoints<double>("uniform", 50, 1), 8, 1);
  jz::SerialCommunicator serial;
  const std::vector<double> pts = c.points;
  // K larger than the number of points.
  Case big = c;
  big.k = 51;
  JZ_CHECK_THROWS(runKernel<double>(big, pts, c.masses, c.values, nullptr, serial));
  // A NaN in a field, and a NaN coordinate.
  std::vector<std::vector<double>> nanValues = c.values;
  nanValues[1][17] = std::nan("");
  JZ_CHECK_THROWS(runKernel<double>(c, pts, c.masses, nanValues, nullptr, serial));
  std::vector<double> nanPts = pts;
  nanPts[4] = std::numeric_limits<double>::infinity();
  JZ_CHECK_THROWS(runKernel<double>(c, nanPts, c.masses, c.values, nullptr, serial));
  // Repeated global ids.
  std::vector<jz::GlobalId> ids(50, 3);
  JZ_CHECK_THROWS(runKernel<double>(c, pts, c.masses, c.values, ids.data(), serial));
  // A gradient asked of a 3-component field.
  jz::SphSmoothProblem<double> p;
  p.points = pts.data();
  p.numPoints = 50;
  p.k = 8;
  jz::SphField f;
  f.values = c.values[1].data();
  f.components = 3;
  p.fields = { f };
  std::vector<double> h(50), rho(50), grad(150);
  jz::SphSmoothResults<double> r;
  r.smoothingLength = h.data();
  r.density = rho.data();
  jz::SphFieldResults out;
  out.gradient = grad.data();
  r.fields = { out };
  JZ_CHECK_THROWS(jz::computeSphSmooth(p, r, serial, jztest::backend()));
  // Empty input: nothing to do, no error.
  p.numPoints = 0;
  p.points = nullptr;
  r.fields[0].gradient = nullptr;
  jz::computeSphSmooth(p, r, serial, jztest::backend());
}
} // namespace

JZ_TEST_MAIN()
