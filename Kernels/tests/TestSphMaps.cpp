// SPH maps against independent references: pixel and voxel integrals of the
// kernel by adaptive Simpson quadrature (nested, in the test), slices against
// direct kernel sums, mass conservation, h = 0, sub-pixel and huge
// particles, periodic wrap across edges and corners, duplicates, empty
// input, both kernels, float and double, thread-count independence, the
// distributed density gather against the serial one, and (--backend=cuda)
// the GPU's projections against the same references and the CPU's sums (and
// here the GPU's per-pixel logic against the CPU's deposition).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "common/LeadingEigenpairs.h"
#include "jz/SphMaps.h"
#include "sph/SphKernelTables.h"
#include "sph/SphPixelFactors.h"
#include "sph/SphProjectionColumns.h"
#include "sph/SphProjectionTiles.h"
#include "sph/SphSeparableForms.h"
#include "sph/SphVoxelFactors.h"

namespace
{
using jz::SphKernel;
using jz::SphMapKind;

const SphKernel kKernels[] = { SphKernel::CubicSpline, SphKernel::WendlandC2 };

// Adaptive Simpson on [a, b] to an absolute tolerance.
template <class F>
double simpsonStep(const F& f, double a, double b, double fa, double fm, double fb, double whole,
  double tol, int depth)
{
  const double m = 0.5 * (a + b), lm = 0.5 * (a + m), rm = 0.5 * (m + b);
  const double flm = f(lm), frm = f(rm);
  const double left = (m - a) / 6 * (fa + 4 * flm + fm), right = (b - m) / 6 * (fm + 4 * frm + fb);
  if (depth > 40 || std::fabs(left + right - whole) <= 15 * tol)
    return left + right + (left + right - whole) / 15;
  return simpsonStep(f, a, m, fa, flm, fm, left, 0.5 * tol, depth + 1) +
    simpsonStep(f, m, b, fm, frm, fb, right, 0.5 * tol, depth + 1);
}

template <class F>
double simpson(const F& f, double a, double b, double tol)
{
  if (!(b > a))
    return 0;
  const double fa = f(a), fm = f(0.5 * (a + b)), fb = f(b);
  return simpsonStep(f, a, b, fa, fm, fb, (b - a) / 6 * (fa + 4 * fm + fb), tol, 0);
}

double W(SphKernel k, double r, double h)
{
  return jz::sphKernelW(k, r, h); // the definition; the integrals below are the test's own
}

// The projected kernel of unit support, tabulated finely by quadrature
// (linear interpolation between 2e5 samples).
class ColumnReference
{
public:
  explicit ColumnReference(SphKernel k)
    : f_(kSamples + 2, 0.0)
  {
    for (int i = 0; i <= kSamples; ++i)
    {
      const double R = double(i) / kSamples, top = std::sqrt(std::fmax(0.0, 1 - R * R));
      auto w = [&](double z) { return W(k, std::sqrt(R * R + z * z), 1.0); };
      const double joint = R < 0.5 ? std::sqrt(0.25 - R * R) : 0.0;
      f_[i] = 2 * (simpson(w, 0, joint, 1e-13) + simpson(w, joint, top, 1e-13));
    }
  }
  double operator()(double R) const
  {
    if (R >= 1)
      return 0;
    const double t = R * kSamples;
    const int i = int(t);
    return f_[i] + (t - i) * (f_[i + 1] - f_[i]);
  }

private:
  static constexpr int kSamples = 200000;
  std::vector<double> f_;
};

const ColumnReference& columnReference(SphKernel k)
{
  static const ColumnReference cubic(SphKernel::CubicSpline), wendland(SphKernel::WendlandC2);
  return k == SphKernel::WendlandC2 ? wendland : cubic;
}

// Fraction of a particle's projected kernel (centre c, support h) over the
// rectangle [x0, x1] x [y0, y1]: the column integrated over the rectangle's
// part of the disk.
double pixelFraction(SphKernel k, double cx, double cy, double h, double x0, double x1, double y0,
  double y1)
{
  const ColumnReference& column = columnReference(k);
  auto alongY = [&](double x)
  {
    const double dx = x - cx;
    const double half = std::sqrt(std::fmax(0.0, h * h - dx * dx));
    return simpson([&](double y) { return column(std::hypot(dx, y - cy) / h) / (h * h); },
      std::fmax(y0, cy - half), std::fmin(y1, cy + half), 1e-11);
  };
  return simpson(alongY, std::fmax(x0, cx - h), std::fmin(x1, cx + h), 1e-9);
}

// 16-point Gauss-Legendre on [a, b].
template <class F>
double gauss16(const F& f, double a, double b)
{
  static const double x[8] = { 0.0950125098376374, 0.2816035507792589, 0.4580167776572274,
    0.6178762444026438, 0.7554044083550030, 0.8656312023878318, 0.9445750230732326,
    0.9894009349916499 };
  static const double w[8] = { 0.1894506104550685, 0.1826034150449236, 0.1691565193950025,
    0.1495959888165767, 0.1246289712555339, 0.0951585116824928, 0.0622535239386479,
    0.0271524594117541 };
  const double m = 0.5 * (a + b), r = 0.5 * (b - a);
  double s = 0;
  for (int i = 0; i < 8; ++i)
    s += w[i] * (f(m - r * x[i]) + f(m + r * x[i]));
  return s * r;
}

// Integral of f over [a, b] split at the given points (where f is not
// smooth), each piece in 8 Gauss panels. The points live on the stack: this
// runs once per point of the two outer quadratures.
template <class F>
double piecewise(const F& f, double a, double b, const std::array<double, 3>& inner)
{
  if (!(b > a))
    return 0;
  std::array<double, 5> breaks = { inner[0], inner[1], inner[2], a, b };
  std::sort(breaks.begin(), breaks.end());
  double s = 0;
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i)
  {
    const double lo = std::max(a, breaks[i]), hi = std::min(b, breaks[i + 1]);
    for (int p = 0; lo < hi && p < 8; ++p)
      s += gauss16(f, lo + (hi - lo) * p / 8, lo + (hi - lo) * (p + 1) / 8);
  }
  return s;
}

// Fraction of a particle's kernel inside the box [lo, hi]: along z by
// Gauss panels split where the kernel's pieces join, over y and x by
// adaptive Simpson.
double voxelFraction(SphKernel k, const double* c, double h, const double* lo, const double* hi)
{
  // In units of h (W(r, h) = W(r / h, 1) / h^3), so that the quadrature's
  // absolute tolerances are relative to the kernel, whatever its width.
  if (h != 1)
  {
    double cs[3], los[3], his[3];
    for (int d = 0; d < 3; ++d)
    {
      cs[d] = c[d] / h;
      los[d] = lo[d] / h;
      his[d] = hi[d] / h;
    }
    return voxelFraction(k, cs, 1.0, los, his);
  }
  bool whole = true; // the kernel wholly inside the voxel: all of it (W's norm)
  for (int d = 0; d < 3; ++d)
    whole = whole && lo[d] <= c[d] - 1 && hi[d] >= c[d] + 1;
  if (whole)
    return 1.0;
  auto alongZ = [&](double dx, double dy)
  {
    const double rho2 = dx * dx + dy * dy;
    const double half = std::sqrt(std::fmax(0.0, h * h - rho2));
    const double joint = std::sqrt(std::fmax(0.0, 0.25 * h * h - rho2));
    return piecewise([&](double z) { return W(k, std::sqrt(rho2 + (z - c[2]) * (z - c[2])), h); },
      std::fmax(lo[2], c[2] - half), std::fmin(hi[2], c[2] + half),
      { c[2] - joint, c[2], c[2] + joint });
  };
  auto alongY = [&](double x)
  {
    const double dx = x - c[0];
    const double half = std::sqrt(std::fmax(0.0, h * h - dx * dx));
    return simpson([&](double y) { return alongZ(dx, y - c[1]); }, std::fmax(lo[1], c[1] - half),
      std::fmin(hi[1], c[1] + half), 1e-11);
  };
  return simpson(alongY, std::fmax(lo[0], c[0] - h), std::fmin(hi[0], c[0] + h), 1e-9);
}

template <class T>
struct Particles
{
  std::vector<T> xyz;
  std::vector<double> m, h, rho;
  std::vector<std::vector<double>> fields;
  std::vector<int> comps;

  void add(double x, double y, double z, double mass, double hh)
  {
    xyz.insert(xyz.end(), { T(x), T(y), T(z) });
    m.push_back(mass);
    h.push_back(hh);
  }
  jz::SphParticles<T> view(SphKernel k) const
  {
    jz::SphParticles<T> p;
    p.points = xyz.data();
    p.numPoints = m.size();
    p.masses = m.data();
    p.support = h.data();
    p.density = rho.empty() ? nullptr : rho.data();
    for (std::size_t f = 0; f < fields.size(); ++f)
      p.fields.push_back({ fields[f].data(), comps[f] });
    p.kernel = k;
    return p;
  }
};

jz::SphGrid grid(SphMapKind kind, int axis, double lo, double hi, int nu, int nv, int nw = 1)
{
  jz::SphGrid g;
  g.kind = kind;
  g.axis = axis;
  for (int d = 0; d < 3; ++d)
  {
    g.region[2 * d] = lo;
    g.region[2 * d + 1] = hi;
  }
  g.resolution[0] = nu;
  g.resolution[1] = nv;
  g.resolution[2] = nw;
  return g;
}

// The map on the backend under test (--backend=cuda: projections on the
// GPU, slices and volumes on the CPU).
template <class T>
jz::SphMapSums run(const jz::SphParticles<T>& p, const jz::SphGrid& g, int threads = 0)
{
  jz::SphMapSums sums;
  jz::RunControl control;
  control.numThreads = threads;
  jz::depositSphMap(p, g, sums, jztest::backend(), control);
  jz::finishSphMap(g, sums);
  return sums;
}

// One particle's pixel fractions against quadrature, for h from sub-pixel to
// many pixels, at an off-centre position; also the total inside the image.
// Square pixels, and pixels 16 times narrower than they are tall (a row's
// corners then lie closer together than the table's nodes; h in the taller
// side, below the midpoint rule's width).
template <class T>
void projectionSingle()
{
  const int square[2] = { 16, 16 }, narrow[2] = { 128, 8 };
  for (const int* n : { square, narrow })
    for (SphKernel k : kKernels)
      for (double hPixels : { 0.3, 1.7, n == square ? 6.5 : 3.0 })
        for (int axis : { 2, 0 })
        {
          const double du = 1.0 / n[0], dv = 1.0 / n[1];
          Particles<T> P;
          const double c[3] = { 0.4719, 0.5313, 0.5 };
          P.add(c[0], c[1], c[2], 2.0, hPixels * std::max(du, dv));
          jz::SphGrid g = grid(SphMapKind::Projection, axis, 0, 1, n[0], n[1]);
          const auto sums = run(P.view(k), g);
          const int u = (axis + 1) % 3, v = (axis + 2) % 3;
          const double cu = double(T(c[u])), cv = double(T(c[v])), h = P.h[0];
          double total = 0, worst = 0;
          for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i)
            {
              const double got = sums.mass[std::size_t(j) * n[0] + i] * du * dv / 2.0;
              total += got;
              const bool near =
                std::fabs((i + 0.5) * du - cu) < h + du && std::fabs((j + 0.5) * dv - cv) < h + dv;
              // Quadrature on every pixel of small kernels, on a sample of a large one's.
              if (near && (hPixels < 2 || (i + j) % 3 == 0))
              {
                const double ref =
                  pixelFraction(k, cu, cv, h, i * du, (i + 1) * du, j * dv, (j + 1) * dv);
                worst = std::max(worst, std::fabs(got - ref));
              }
              else if (!near)
                JZ_CHECK_EQ(got, 0.0);
            }
          JZ_CHECK_MSG(worst < 1e-6, "h/pixel " << hPixels << " worst pixel error " << worst);
          JZ_CHECK_MSG(std::fabs(total - 1) < 1e-12, "total " << total);
        }
}

JZ_TEST(ProjectionSingleParticleDouble)
{
  projectionSingle<double>();
}

JZ_TEST(ProjectionSingleParticleFloat)
{
  projectionSingle<float>();
}

// Kernels many pixels wide (the corrected midpoint rule): every pixel on a
// sample across the whole support (centre, joint, edge) against quadrature,
// none negative, square and oblong pixels, and the total inside the image.
template <class T>
void projectionWide()
{
  const int sizes[2][2] = { { 128, 128 }, { 128, 80 } };
  for (SphKernel k : kKernels)
    for (const auto& size : sizes)
      for (double hPixels : { 16.0, 24.5, 36.0 })
      {
        const int nu = size[0], nv = size[1];
        const double du = 1.0 / nu, dv = 1.0 / nv;
        Particles<T> P;
        P.add(0.4719, 0.5313, 0.5, 2.0, hPixels * std::max(du, dv));
        const jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, nu, nv);
        const auto sums = run(P.view(k), g);
        const double cu = double(P.xyz[0]), cv = double(P.xyz[1]), h = P.h[0];
        double total = 0, worst = 0;
        int checked = 0;
        for (int j = 0; j < nv; ++j)
          for (int i = 0; i < nu; ++i)
          {
            const double got = sums.mass[std::size_t(j) * nu + i] * du * dv / 2.0;
            total += got;
            JZ_CHECK(got >= 0);
            if ((7 * i + 3 * j) % 7 != 0)
              continue;
            const double ref = pixelFraction(k, cu, cv, h, i * du, (i + 1) * du, j * dv, (j + 1) * dv);
            worst = std::max(worst, std::fabs(got - ref));
            checked += ref > 0 ? 1 : 0;
          }
        JZ_CHECK(checked > 100);
        JZ_CHECK_MSG(worst < 3e-7, "h/pixel " << hPixels << " " << nu << "x" << nv << " worst pixel error " << worst);
        JZ_CHECK_MSG(std::fabs(total - 1) < 5e-7, "h/pixel " << hPixels << " total - 1 = " << total - 1);
      }
}

JZ_TEST(ProjectionWideKernels)
{
  projectionWide<double>();
  projectionWide<float>();
}

// Mass-weighted means through wide kernels: two overlapping particles with
// field values (2; 1, 0, -1) and (6; 3, 3, 3) give, per pixel, the mean of
// the values weighted by each particle's own map.
JZ_TEST(ProjectionWideKernelMeans)
{
  const jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, 96, 64);
  Particles<double> A, B, both;
  A.add(0.41, 0.5, 0.5, 1.0, 0.3);
  B.add(0.63, 0.5, 0.5, 3.0, 0.35);
  both.add(0.41, 0.5, 0.5, 1.0, 0.3);
  both.add(0.63, 0.5, 0.5, 3.0, 0.35);
  A.fields = { std::vector<double>(1, 2.0), std::vector<double>{ 1, 0, -1 } };
  B.fields = { std::vector<double>(1, 6.0), std::vector<double>(3, 3.0) };
  both.fields = { std::vector<double>{ 2, 6 }, std::vector<double>{ 1, 0, -1, 3, 3, 3 } };
  A.comps = B.comps = both.comps = std::vector<int>{ 1, 3 };
  for (SphKernel k : kKernels)
  {
    const auto a = run(A.view(k), g), b = run(B.view(k), g), ab = run(both.view(k), g);
    int mixed = 0;
    for (std::size_t c = 0; c < ab.mass.size(); ++c)
    {
      const double ma = a.mass[c], mb = b.mass[c];
      JZ_CHECK(ma >= 0 && mb >= 0 && std::fabs(ab.mass[c] - (ma + mb)) <= 1e-12 * (ma + mb));
      if (ma + mb <= 0)
        continue;
      mixed += ma > 0 && mb > 0 ? 1 : 0;
      JZ_CHECK(std::fabs(ab.fields[0][c] - (2 * ma + 6 * mb) / (ma + mb)) < 1e-6);
      const double expect[3] = { (ma + 3 * mb) / (ma + mb), 3 * mb / (ma + mb), (3 * mb - ma) / (ma + mb) };
      for (int d = 0; d < 3; ++d)
        JZ_CHECK(std::fabs(ab.fields[1][3 * c + std::size_t(d)] - expect[d]) < 1e-6);
    }
    JZ_CHECK(mixed > 1000);
  }
}

// Mass conservation over many particles, some across the image's edges
// (their inside fraction by quadrature), some sub-pixel, some h = 0, some
// many pixels wide.
template <class T>
void massConservation(SphKernel k)
{
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> pos(0.25, 0.75), hs(0.001, 0.2), ms(0.5, 2.0);
  Particles<T> P;
  double expected = 0;
  for (int i = 0; i < 3000; ++i)
  {
    P.add(pos(rng), pos(rng), pos(rng), ms(rng), i % 100 == 0 ? 0.0 : hs(rng) * (i % 7 == 0 ? 0.01 : 1));
    expected += P.m.back();
  }
  // Two particles across the edges and one outside along the line of sight.
  P.add(0.02, 0.5, 0.5, 1.0, 0.1);
  expected += pixelFraction(k, double(T(0.02)), double(T(0.5)), 0.1, 0, 1, 0, 1);
  P.add(0.97, 0.99, 0.5, 1.0, 0.05);
  expected += pixelFraction(k, double(T(0.97)), double(T(0.99)), 0.05, 0, 1, 0, 1);
  P.add(0.5, 0.5, 1.2, 5.0, 0.1);
  // Every kernel under SphColumnCentres::kMinPixels pixels (exact cell
  // integrals), then with the wide ones by the corrected midpoint rule.
  for (int pixels : { 60, 200 })
  {
    const jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, pixels, pixels * 3 / 4);
    const auto sums = run(P.view(k), g);
    double total = 0;
    for (double s : sums.mass)
      total += s * g.cellMeasure();
    const double tolerance = pixels == 60 ? 2e-6 : 5e-7 * expected;
    JZ_CHECK_MSG(std::fabs(total - expected) < tolerance,
      pixels << " pixels: total - expected = " << total - expected);
  }
}

JZ_TEST(ProjectionMassConservation)
{
  for (SphKernel k : kKernels)
  {
    massConservation<double>(k);
    massConservation<float>(k);
  }
}

// h = 0: all of the mass in the containing pixel (half-open pixels); a
// particle on the region's high edge is outside.
JZ_TEST(ProjectionZeroSmoothingLength)
{
  Particles<double> P;
  P.add(0.26, 0.51, 0.5, 3.0, 0.0);
  P.add(0.5, 0.25, 0.5, 1.0, 0.0); // on a pixel edge: the higher pixel
  P.add(1.0, 0.5, 0.5, 7.0, 0.0);  // on the region's edge: outside
  const jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, 4, 4);
  const auto sums = run(P.view(SphKernel::CubicSpline), g);
  std::vector<double> expect(16, 0.0);
  expect[2 * 4 + 1] = 3.0 / g.cellMeasure();
  expect[1 * 4 + 2] = 1.0 / g.cellMeasure();
  for (int i = 0; i < 16; ++i)
    JZ_CHECK_MSG(std::fabs(sums.mass[i] - expect[i]) < 1e-12, "pixel " << i);
}

// Duplicates in bulk: N coincident particles make N times one particle's map,
// and a whole set inside one pixel puts its mass there.
JZ_TEST(ProjectionDuplicates)
{
  for (SphKernel k : kKernels)
  {
    Particles<double> one, many, tiny;
    one.add(0.3, 0.6, 0.1, 1.0, 0.15);
    for (int i = 0; i < 500; ++i)
    {
      many.add(0.3, 0.6, 0.1, 1.0, 0.15);
      tiny.add(0.51 + 1e-4 * (i % 7), 0.52, 0.5, 1.0, 1e-5);
    }
    const jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, 32, 32);
    const auto a = run(one.view(k), g), b = run(many.view(k), g), t = run(tiny.view(k), g);
    for (std::size_t i = 0; i < a.mass.size(); ++i)
      JZ_CHECK(std::fabs(b.mass[i] - 500 * a.mass[i]) <= 1e-9 * (1 + b.mass[i]));
    const std::size_t pixel = 16 * 32 + 16;
    JZ_CHECK(std::fabs(t.mass[pixel] * g.cellMeasure() - 500) < 1e-9);
  }
}

// Periodic wrap: a particle across an edge or a corner makes the image of the
// same particle moved by half the box, rolled by half the pixels.
template <class T>
void periodicWrap(SphMapKind kind)
{
  const int n = 16;
  for (SphKernel k : kKernels)
    for (const double* at : { (const double[3]){ 1.0 / 64, 0.5, 0.5 }, (const double[3]){ 63.0 / 64, 1.0 / 64, 61.0 / 64 } })
    {
      Particles<T> edge, moved;
      edge.add(at[0], at[1], at[2], 1.0, 0.125);
      moved.add(at[0] + (at[0] < 0.5 ? 0.5 : -0.5), at[1] + (at[1] < 0.5 ? 0.5 : -0.5),
        at[2] + (at[2] < 0.5 ? 0.5 : -0.5), 1.0, 0.125);
      edge.rho = moved.rho = { 1.0 };
      auto pe = edge.view(k), pm = moved.view(k);
      pe.periodic = pm.periodic = true;
      jz::SphGrid g = grid(kind, 2, 0, 1, n, n, kind == SphMapKind::Volume ? n : 1);
      g.slicePosition = double(T(at[2])) + 0.03;
      jz::SphGrid gm = g;
      gm.slicePosition = g.slicePosition + (at[2] < 0.5 ? 0.5 : -0.5);
      const auto a = run(pe, g), b = run(pm, gm);
      const int nw = kind == SphMapKind::Volume ? n : 1;
      double total = 0;
      for (int w = 0; w < nw; ++w)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
          {
            const int wm = kind == SphMapKind::Volume ? (w + n / 2) % n : 0;
            const double va = a.mass[(std::size_t(w) * n + j) * n + i];
            const double vb = b.mass[(std::size_t(wm) * n + (j + n / 2) % n) * n + (i + n / 2) % n];
            total += va;
            JZ_CHECK_MSG(std::fabs(va - vb) <= 1e-7 * (1 + std::fabs(vb)), "cell " << i << " " << j << " " << w);
          }
      JZ_CHECK(total > 0);
      if (kind != SphMapKind::Slice)
        JZ_CHECK_MSG(std::fabs(total * g.cellMeasure() - 1) < 1e-9, "periodic total " << total * g.cellMeasure());
    }
}

JZ_TEST(PeriodicWrap)
{
  for (SphMapKind kind : { SphMapKind::Projection, SphMapKind::Slice, SphMapKind::Volume })
  {
    periodicWrap<double>(kind);
    periodicWrap<float>(kind);
  }
}

// The slice against direct sums of the kernel at the pixel centres, with a
// mapped vector array and given densities, open and periodic.
template <class T>
void sliceBruteForce(SphKernel k, bool periodic)
{
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> pos(0, 1), hs(0.02, 0.3), ms(0.5, 2.0);
  Particles<T> P;
  std::vector<double> vel;
  for (int i = 0; i < 1500; ++i)
  {
    P.add(pos(rng), pos(rng), pos(rng), ms(rng), i == 5 ? 0.0 : hs(rng));
    P.rho.push_back(ms(rng));
    vel.insert(vel.end(), { pos(rng), pos(rng), pos(rng) });
  }
  P.fields = { vel };
  P.comps = { 3 };
  const int nu = 24, nv = 20;
  jz::SphGrid g = grid(SphMapKind::Slice, 1, 0, 1, nu, nv);
  g.region[0] = 0.1; // x spans [0.1, 0.9)
  g.region[1] = 0.9;
  g.slicePosition = 0.37;
  auto view = P.view(k);
  view.periodic = periodic;
  const auto sums = run(view, g);
  double worst = 0;
  for (int j = 0; j < nv; ++j)
    for (int i = 0; i < nu; ++i)
    {
      // Axis Y: the image's axes are z then x.
      const double px[3] = { 0.1 + (j + 0.5) * 0.8 / nv, 0.37, (i + 0.5) / nu };
      double rho = 0, v[3] = { 0, 0, 0 };
      for (std::size_t p = 0; p < P.m.size(); ++p)
      {
        double r2 = 0;
        for (int d = 0; d < 3; ++d)
        {
          double dd = px[d] - double(P.xyz[3 * p + d]);
          if (periodic)
            dd -= std::nearbyint(dd);
          r2 += dd * dd;
        }
        const double h = P.h[p];
        if (h == 0 || std::sqrt(r2) >= h)
          continue;
        const double w = W(k, std::sqrt(r2), h);
        rho += P.m[p] * w;
        for (int c = 0; c < 3; ++c)
          v[c] += P.m[p] / P.rho[p] * vel[3 * p + c] * w;
      }
      const std::size_t cell = std::size_t(j) * nu + i;
      worst = std::max(worst, std::fabs(sums.mass[cell] - rho) / (1 + rho));
      for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::fabs(sums.fields[0][3 * cell + c] - v[c]) / (1 + std::fabs(v[c])));
    }
  JZ_CHECK_MSG(worst < 1e-10, "slice worst relative error " << worst);
}

JZ_TEST(SliceBruteForce)
{
  for (SphKernel k : kKernels)
    for (bool periodic : { false, true })
    {
      sliceBruteForce<double>(k, periodic);
      sliceBruteForce<float>(k, periodic);
    }
}

// One particle's volume (at c, support h, unit mass, field 4) against
// triple quadrature: zero in every voxel its kernel does not reach, its mean
// field exact where it has mass, and the map's total. `sampled`: only every
// fourth voxel it reaches against quadrature (wide kernels).
struct VoxelCheck
{
  double total = 0, worst = 0, expected = 0; // expected: the checked voxels' quadrature
  int checked = 0;
};
VoxelCheck checkVoxels(const jz::SphMapSums& sums, const jz::SphGrid& g, const int* n, SphKernel k,
  const double* c, double h, bool sampled)
{
  const double dv[3] = { 1.0 / n[0], 1.0 / n[1], 1.0 / n[2] };
  VoxelCheck v;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x)
      {
        const std::size_t cell = (std::size_t(z) * n[1] + y) * n[0] + x;
        const double got = sums.mass[cell] * g.cellMeasure();
        v.total += got;
        if (got != 0)
          JZ_CHECK(std::fabs(sums.fields[0][cell] - 4.0) < 1e-12);
        const double lo[3] = { x * dv[0], y * dv[1], z * dv[2] };
        const double hi[3] = { lo[0] + dv[0], lo[1] + dv[1], lo[2] + dv[2] };
        bool near = true;
        for (int d = 0; d < 3; ++d)
          near = near && lo[d] < c[d] + h && hi[d] > c[d] - h;
        if (!near)
        {
          JZ_CHECK_EQ(got, 0.0);
          continue;
        }
        if (sampled && (x + 2 * y + 3 * z) % 4 != 0)
          continue;
        const double reference = voxelFraction(k, c, h, lo, hi);
        v.expected += reference;
        v.worst = std::max(v.worst, std::fabs(got - reference));
        ++v.checked;
      }
  return v;
}

// Voxel integrals of one particle against triple quadrature, and mass
// conservation of the volume (the table's separable form): kernels from a
// thirtieth of a voxel (inside one voxel) through 0.4 (across its faces) to
// several voxels wide, on cubic and on unequal voxels.
template <class T>
void volumeSingle(SphKernel k)
{
  const int cubic[3] = { 12, 12, 12 }, unequal[3] = { 12, 9, 15 };
  for (const int* n : { cubic, unequal })
    for (double hVoxels : { 0.03, 0.4, 0.97, 1.03, 2.3, 3.9 })
    {
      const double dv[3] = { 1.0 / n[0], 1.0 / n[1], 1.0 / n[2] };
      Particles<T> P;
      const double c[3] = { 0.5123, 0.4791, 0.5377 };
      P.add(c[0], c[1], c[2], 1.0, hVoxels * std::max(dv[0], std::max(dv[1], dv[2])));
      P.fields = { { 4.0 } };
      P.comps = { 1 };
      const jz::SphGrid g = grid(SphMapKind::Volume, 2, 0, 1, n[0], n[1], n[2]);
      const auto sums = run(P.view(k), g);
      const double cc[3] = { double(T(c[0])), double(T(c[1])), double(T(c[2])) };
      const VoxelCheck v = checkVoxels(sums, g, n, k, cc, P.h[0], hVoxels > 2);
      JZ_CHECK(v.checked >= 1);
      JZ_CHECK_MSG(v.worst < 1e-6, "h/voxel " << hVoxels << " worst voxel error " << v.worst);
      JZ_CHECK_MSG(std::fabs(v.total - 1) < 1e-12, "volume total " << v.total);
    }
}

JZ_TEST(VolumeSingleParticle)
{
  for (SphKernel k : kKernels)
  {
    volumeSingle<double>(k);
    volumeSingle<float>(k);
  }
}

// Kernels of one or two voxels along each axis (a volume's smallest, which
// take the separable form expanded about the whole kernel) against triple
// quadrature: random sizes and places on unequal voxels, some reaching past
// the region (their voxels outside it dropped, as any kernel's), others
// across the slabs' strips. Each particle alone, its mean field exact.
JZ_TEST(VolumeKernelsOfOneAndTwoVoxels)
{
  const int n[3] = { 10, 7, 13 };
  const jz::SphGrid g = grid(SphMapKind::Volume, 2, 0, 1, n[0], n[1], n[2]);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> pos(-0.03, 1.03), hs(0.02, 0.99);
  for (SphKernel k : kKernels)
    for (int trial = 0; trial < 6; ++trial)
    {
      Particles<double> P;
      const double c[3] = { pos(rng), pos(rng), pos(rng) };
      P.add(c[0], c[1], c[2], 1.0, hs(rng) / n[0]);
      P.fields = { { 4.0 } };
      P.comps = { 1 };
      const auto sums = run(P.view(k), g);
      const double h = P.h[0];
      const VoxelCheck v = checkVoxels(sums, g, n, k, c, h, false);
      JZ_CHECK_MSG(v.worst < 1e-6, "h/voxel " << h * n[0] << " worst voxel error " << v.worst);
      JZ_CHECK_MSG(
        std::fabs(v.total - v.expected) < 1e-6, "volume total " << v.total << " of " << v.expected);
      bool wholly = true; // the kernel wholly inside the region
      for (int d = 0; d < 3; ++d)
        wholly = wholly && c[d] - h > 0 && c[d] + h < 1;
      if (wholly)
        JZ_CHECK_MSG(std::fabs(v.total - 1) < 1e-12, "volume total " << v.total);
    }
}

// The tables' leading eigenpairs (orthogonal iteration) on a matrix of
// known spectrum, of both signs as the column table's (falling more slowly):
// A = Q diag(lambda) Q' with Q from Householder reflections.
JZ_TEST(LeadingEigenpairsOfAKnownSpectrum)
{
  const int n = 70, k = 8;
  std::mt19937 rng(9);
  std::normal_distribution<double> gauss(0, 1);
  std::vector<double> q(std::size_t(n) * n, 0.0), lambda(n);
  for (int i = 0; i < n; ++i)
  {
    q[std::size_t(i) * n + i] = 1;
    lambda[std::size_t(i)] = (i % 2 ? -1.0 : 1.0) * std::pow(0.6, i);
  }
  for (int r = 0; r < 3; ++r) // Q <- (I - 2 v v') Q
  {
    std::vector<double> v(n);
    double norm = 0;
    for (double& x : v)
    {
      x = gauss(rng);
      norm += x * x;
    }
    for (double& x : v)
      x /= std::sqrt(norm);
    for (int c = 0; c < n; ++c)
    {
      double dot = 0;
      for (int i = 0; i < n; ++i)
        dot += v[std::size_t(i)] * q[std::size_t(i) * n + c];
      for (int i = 0; i < n; ++i)
        q[std::size_t(i) * n + c] -= 2 * dot * v[std::size_t(i)];
    }
  }
  std::vector<double> a(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int m = 0; m < n; ++m)
        a[std::size_t(i) * n + j] +=
          q[std::size_t(i) * n + m] * lambda[std::size_t(m)] * q[std::size_t(j) * n + m];
  double values[k];
  std::vector<double> vectors(std::size_t(n) * k);
  jz::leadingEigenpairs(a.data(), n, k, values, vectors.data());
  for (int p = 0; p < k; ++p)
  {
    JZ_CHECK_MSG(std::fabs(values[p] - lambda[std::size_t(p)]) < 1e-13, "value " << p);
    double dot = 0; // with the true eigenvector, column p of Q
    for (int i = 0; i < n; ++i)
      dot += vectors[std::size_t(i) * k + p] * q[std::size_t(i) * n + p];
    JZ_CHECK_MSG(std::fabs(std::fabs(dot) - 1) < 1e-9, "vector " << p << ": " << dot);
  }
}

// The separable forms' factors one edge at a time (factorValues, the GPU's)
// against the CPU's vectorised cell differences: the same cubics, equal up
// to rounding (the edges' own, where the CPU fuses multiply-adds, moves a
// steep factor by 1e-14), and beyond the support exactly u(1) on both.
JZ_TEST(FactorValuesAreTheCellDifferences)
{
  constexpr int R = jz::SphFactorCubics::kRank;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  for (SphKernel k : kKernels)
    for (const jz::SphFactorCubics* axis :
      { &jz::SphPixelFactors::get(k).axis(), &jz::SphVoxelFactors::get(k).axis() })
    {
      const jz::FactorCubicsView view{ axis->cubic().data(), axis->end(), axis->intervals() };
      for (int t = 0; t < 50; ++t)
      {
        const double h = 0.01 + 0.2 * unit(rng), x = unit(rng), step = 0.013, lo = x - h - step;
        const int n = int(2 * h / step) + 3;
        std::vector<double> diff(std::size_t(n) * R);
        axis->cellDifferences(lo, 0, step, x, h, n, diff.data());
        double a[R], b[R];
        const double inv = 1.0 / h; // as the CPU and the GPU scale the edges
        jz::factorValues(view, (lo - x) * inv, a);
        for (int i = 0; i < n; ++i)
        {
          jz::factorValues(view, (lo + (i + 1) * step - x) * inv, b);
          for (int p = 0; p < R; ++p)
            JZ_CHECK_MSG(std::fabs(diff[std::size_t(i) * R + p] - (b[p] - a[p])) < 1e-12,
              "cell " << i << " factor " << p);
          std::copy(b, b + R, a);
        }
        for (int p = 0; p < R; ++p)
          JZ_CHECK(b[p] == axis->end()[p]); // the last edge is beyond the support
      }
    }
}

// The codes this machine runs the maps' rows in, the portable loops first.
std::vector<jz::SphRowCode> rowCodes()
{
  std::vector<jz::SphRowCode> codes;
  for (int c = 0; c <= int(jz::sphMachineRowCode()); ++c)
    codes.push_back(jz::SphRowCode(c));
  return codes;
}

// A kernel's axes at once give the bits of one axis at a time, in every
// code the machine runs: spans of 1 to 40 cells (the widest one axis at a time), edges
// beyond the support, exactly on it (h a whole number of cells) and inside.
JZ_TEST(CellDifferencesOfSeveralAxes)
{
  constexpr int R = jz::SphFactorCubics::kRank;
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> unit(0, 1);
  for (jz::SphRowCode code : rowCodes())
    for (SphKernel k : kKernels)
    {
      jz::forceSphRowCode(code);
      const jz::SphFactorCubics& axis = jz::SphVoxelFactors::get(k).axis();
      for (int t = 0; t < 300; ++t)
      {
        const int count = 1 + t % 3;
        const double step = 0.01 + 0.02 * unit(rng);
        const double h = t % 5 == 0 ? step * double(1 + t % 7) : step * 20 * unit(rng) + 1e-9;
        std::vector<double> batched(std::size_t(3 * 41 * R)), single(batched.size());
        jz::SphFactorCubics::Span spans[3];
        for (int d = 0; d < count; ++d)
        {
          const double x = unit(rng), lo = -0.5 * unit(rng);
          const int first = int(std::floor((x - h - lo) / step)) - t % 2;
          const int n = std::min(40, int(2 * h / step) + 2 + t % 3);
          spans[d] = { lo, first, step, x, n, batched.data() + std::size_t(d) * 41 * R };
          axis.cellDifferences(lo, first, step, x, h, n, single.data() + std::size_t(d) * 41 * R);
        }
        axis.cellDifferences(spans, count, h);
        JZ_CHECK_MSG(
          batched == single, "code " << int(code) << ", count " << count << " h/step " << h / step);
      }
    }
  jz::forceSphRowCode(jz::sphMachineRowCode());
}

// The table a separable form stands for, at its nodes: a column's
// sum_p w_p u_p(a) u_p(b), a volume's sum_pqr core[p][q][r] u_p(a) u_q(b)
// u_r(c), one axis contracted at a time.
std::vector<double> formAtNodes(const jz::SphSeparableForm& f, int dims)
{
  constexpr std::size_t R = jz::SphFactorCubics::kRank;
  const std::size_t n = std::size_t(f.intervals) + 1;
  const auto u = [&](std::size_t node, std::size_t p) { return f.u[node * R + p]; };
  if (dims == 2)
  {
    std::vector<double> t(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t p = 0; p < R; ++p)
          t[i * n + j] += f.weights[p] * u(i, p) * u(j, p);
    return t;
  }
  std::vector<double> a(n * R * R, 0.0), b(n * n * R, 0.0), t(n * n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < R; ++p)
      for (std::size_t qr = 0; qr < R * R; ++qr)
        a[i * R * R + qr] += u(i, p) * f.weights[p * R * R + qr];
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t q = 0; q < R; ++q)
        for (std::size_t r = 0; r < R; ++r)
          b[(i * n + j) * R + r] += u(j, q) * a[(i * R + q) * R + r];
  for (std::size_t ij = 0; ij < n * n; ++ij)
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t r = 0; r < R; ++r)
        t[ij * n + k] += u(k, r) * b[ij * R + r];
  return t;
}

// The separable forms the library holds (SphBakedForms.inc) are the ones
// the tables give: bit for bit with GCC on x86-64, where they were computed.
// Elsewhere (machines that fuse multiply-adds round the quadrature and the
// eigensolve differently) the factors of nearly equal eigenvalues may come
// out rotated, so there the tables the forms stand for are compared, within
// 1e-10 (columns) and 1e-8 (volumes) at every node: far inside the forms'
// own truncation, 1e-7 of the tables (on aarch64 they differ by 6e-15 and
// 4e-9). A failure after a change to the tables means: rerun
// jz_bake_sph_forms (BakeSphForms.cpp).
JZ_TEST(BakedFormsAreTheComputedOnes)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  const bool bitwise = true;
#else
  const bool bitwise = false;
#endif
  auto same = [&](const jz::SphSeparableForm& held, const jz::SphSeparableForm& computed, int dims)
  {
    if (held.intervals != computed.intervals || held.u.size() != computed.u.size() ||
      held.weights.size() != computed.weights.size())
      return false;
    if (bitwise)
      return held.u == computed.u && held.weights == computed.weights;
    const std::vector<double> a = formAtNodes(held, dims), b = formAtNodes(computed, dims);
    const double tolerance = dims == 2 ? 1e-10 : 1e-8;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - b[i]) <= tolerance))
        return false;
    return true;
  };
  for (SphKernel k : kKernels)
  {
    JZ_CHECK_MSG(
      same(jz::bakedColumnForm(k), jz::computeColumnForm(k), 2), "column, kernel " << int(k));
    JZ_CHECK_MSG(
      same(jz::bakedVolumeForm(k), jz::computeVolumeForm(k), 3), "volume, kernel " << int(k));
  }
}

// The density gather against direct sums, open and periodic, both kernels.
JZ_TEST(GatherDensityBruteForce)
{
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> pos(0, 1), hs(0.05, 0.6), ms(0.5, 2.0);
  const std::size_t n = 800;
  std::vector<double> xyz(3 * n), m(n), h(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
      xyz[3 * i + d] = pos(rng);
    m[i] = ms(rng);
    h[i] = hs(rng);
  }
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  for (SphKernel k : kKernels)
    for (bool periodic : { false, true })
    {
      std::vector<double> rho(n);
      jz::sphGatherDensity<double>(xyz.data(), n, m.data(), nullptr, 0, h.data(), k, periodic, lo, hi, rho.data());
      double worst = 0;
      for (std::size_t q = 0; q < n; ++q)
      {
        double ref = 0;
        for (std::size_t s = 0; s < n; ++s)
          for (int a = -1; a <= 1; ++a)
            for (int b = -1; b <= 1; ++b)
              for (int c = -1; c <= 1; ++c)
              {
                if (!periodic && (a || b || c))
                  continue;
                const double dx = xyz[3 * s] + a - xyz[3 * q], dy = xyz[3 * s + 1] + b - xyz[3 * q + 1],
                             dz = xyz[3 * s + 2] + c - xyz[3 * q + 2];
                const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
                if (r < h[q])
                  ref += m[s] * W(k, r, h[q]);
              }
        worst = std::max(worst, std::fabs(rho[q] - ref) / ref);
      }
      JZ_CHECK_MSG(worst < 1e-12, "gather worst relative error " << worst);
    }
}

// The distributed gather on 1, 3 and 4 ranks (one of them empty; a clustered
// half, an interleaved and a spatial partition) equals the serial gather up
// to summation order, open and periodic, float and double.
template <class T>
void gatherDensityDistributed()
{
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> pos(0, 1), hs(0.02, 0.3), ms(0.5, 2.0), blob(0.4, 0.5);
  const std::size_t n = 1200;
  std::vector<T> xyz(3 * n);
  std::vector<double> m(n), h(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
      xyz[3 * i + d] = T(i % 2 ? pos(rng) : blob(rng));
    m[i] = ms(rng);
    h[i] = hs(rng);
  }
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  for (bool periodic : { false, true })
  {
    std::vector<double> serial(n);
    jz::sphGatherDensity<T>(xyz.data(), n, m.data(), nullptr, 0, h.data(), SphKernel::CubicSpline,
      periodic, lo, hi, serial.data());
    for (int ranks : { 1, 3, 4 })
      for (int partition = 0; partition < 2; ++partition)
      {
        std::vector<double> rho(n, -1.0);
        jztest::ThreadWorld world(ranks);
        world.run(
          [&](jz::Communicator& comm)
          {
            // Rank size - 1 holds nothing when there are 4.
            const int holders = ranks == 4 ? 3 : ranks;
            std::vector<std::size_t> mine;
            for (std::size_t i = 0; i < n; ++i)
            {
              const int owner = partition == 0 ? int(i % std::size_t(holders))
                                               : std::min(holders - 1, int(double(xyz[3 * i]) * holders));
              if (owner == comm.rank())
                mine.push_back(i);
            }
            std::vector<T> p;
            std::vector<double> mm, hh, out(mine.size());
            for (std::size_t i : mine)
            {
              p.insert(p.end(), &xyz[3 * i], &xyz[3 * i] + 3);
              mm.push_back(m[i]);
              hh.push_back(h[i]);
            }
            jz::sphGatherDensityDistributed<T>(comm, p.data(), mine.size(), mm.data(), hh.data(),
              SphKernel::CubicSpline, periodic, lo, hi, out.data());
            for (std::size_t k = 0; k < mine.size(); ++k)
              rho[mine[k]] = out[k];
          });
        double worst = 0;
        for (std::size_t i = 0; i < n; ++i)
          worst = std::max(worst, std::fabs(rho[i] - serial[i]) / serial[i]);
        JZ_CHECK_MSG(worst < 1e-12, "ranks " << ranks << " partition " << partition << " periodic "
                                             << periodic << " worst relative difference " << worst);
      }
  }
}

JZ_TEST(GatherDensityDistributed)
{
  gatherDensityDistributed<double>();
  gatherDensityDistributed<float>();
}

// The projection's rows and the volume's give the same bits in every code
// the machine runs (AVX-512, AVX2 and the portable loops): square and oblong
// pixels (the anisotropic term), rows of one vector and of several, kernels
// of one or two cells along each axis, of a few rows (contracted z first)
// and of many (x first), the surface density and a mean (the rows' values
// written out, then added with the fields).
JZ_TEST(MapRowsAnyVectorWidth)
{
  if (jztest::onGpu())
    jztest::skip("a CPU case");
  if (rowCodes().size() == 1)
    jztest::skip("this machine runs only the portable loops");
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> pos(0, 1), hs(0.05, 0.3), small(0.002, 0.06);
  Particles<double> P;
  for (int i = 0; i < 300; ++i)
    P.add(pos(rng), pos(rng), pos(rng), 1.0 + pos(rng), i % 2 ? hs(rng) : small(rng));
  P.fields.push_back(std::vector<double>(300));
  P.comps.push_back(1);
  for (double& v : P.fields[0])
    v = pos(rng);
  const int sizes[5][3] = { { 200, 200, 1 }, { 250, 90, 1 }, { 40, 40, 40 }, { 90, 30, 20 },
    { 13, 17, 11 } };
  for (const auto& res : sizes)
  {
    const SphMapKind kind = res[2] > 1 ? SphMapKind::Volume : SphMapKind::Projection;
    const jz::SphGrid g = grid(kind, 2, 0, 1, res[0], res[1], res[2]);
    auto plain = P.view(SphKernel::CubicSpline);
    plain.fields.clear();
    for (const auto& particles : { plain, P.view(SphKernel::CubicSpline) })
    {
      jz::forceSphRowCode(jz::SphRowCode::Portable);
      const auto portable = run(particles, g);
      for (jz::SphRowCode code : rowCodes())
      {
        jz::forceSphRowCode(code);
        const auto coded = run(particles, g);
        JZ_CHECK_MSG(coded.mass == portable.mass && coded.fields == portable.fields,
          "code " << int(code) << ", cells " << res[0] << " x " << res[1] << " x " << res[2]
                  << ", fields " << particles.fields.size());
      }
      jz::forceSphRowCode(jz::sphMachineRowCode());
    }
  }
}

// The sums do not depend on the number of threads, bit for bit.
JZ_TEST(ThreadCountIndependence)
{
  if (jztest::onGpu())
    jztest::skip("the CPU's threads (the GPU adds its pixels atomically)");
  // 5000 particles (one chunk of the strip listing, on one thread) and 80000
  // (several chunks, listed in parallel).
  for (int n : { 5000, 80000 })
  {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> pos(0, 1), hs(0.01, 0.1);
    Particles<double> P;
    for (int i = 0; i < n; ++i)
      P.add(pos(rng), pos(rng), pos(rng), 1.0, hs(rng));
    for (SphMapKind kind : { SphMapKind::Projection, SphMapKind::Volume, SphMapKind::Slice })
    {
      // Enough rows or slabs that one thread and three cut them into
      // strips of different widths.
      const bool volume = kind == SphMapKind::Volume;
      const jz::SphGrid g = grid(kind, 2, 0, 1, 60, volume ? 60 : 480, volume ? 48 : 1);
      const auto a = run(P.view(SphKernel::CubicSpline), g, 1);
      const auto b = run(P.view(SphKernel::CubicSpline), g, 3);
      JZ_CHECK_MSG(a.mass == b.mass, "n " << n << " kind " << int(kind));
      if (n < 80000)
        continue;
      // The several chunks' lists hold every particle once: the map equals
      // the sum of the maps of four quarters (two chunks each).
      std::vector<double> quarters(a.mass.size(), 0.0);
      for (int q = 0; q < 4; ++q)
      {
        Particles<double> Q;
        for (int i = q; i < n; i += 4)
          Q.add(P.xyz[3 * std::size_t(i)], P.xyz[3 * std::size_t(i) + 1], P.xyz[3 * std::size_t(i) + 2],
            1.0, P.h[std::size_t(i)]);
        const auto part = run(Q.view(SphKernel::CubicSpline), g, 3);
        for (std::size_t c = 0; c < quarters.size(); ++c)
          quarters[c] += part.mass[c];
      }
      double worst = 0, top = 0;
      for (std::size_t c = 0; c < quarters.size(); ++c)
      {
        worst = std::max(worst, std::fabs(quarters[c] - a.mass[c]));
        top = std::max(top, std::fabs(a.mass[c]));
      }
      JZ_CHECK_MSG(worst <= 1e-12 * top, "kind " << int(kind) << ": quarters differ by " << worst);
    }
  }
}

// Kernels that reach more strips than the listing counts in a byte (it
// then asks for them again, from its copy of the particles), as tall as the
// image and across its periodic edge: the same sums with 64 threads (strips
// of 32 rows, 128 of them) as with one (strips of 256 rows), and the whole
// mass in the periodic image.
JZ_TEST(KernelsAcrossManyStrips)
{
  if (jztest::onGpu())
    jztest::skip("the CPU's strips (the GPU adds its pixels atomically)");
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> pos(0, 1), hs(0.001, 0.02);
  Particles<double> P;
  for (int i = 0; i < 2000; ++i)
    P.add(pos(rng), pos(rng), pos(rng), 1.0, hs(rng));
  P.add(0.5, 0.5, 0.5, 1.0, 0.49);   // rows 41 .. 4054: strips 1 .. 126
  P.add(0.3, 0.5, 0.5, 1.0, 0.4999); // rows 0 .. 4095 of the open image
  P.add(0.7, 0.02, 0.5, 1.0, 0.45);  // across the lower edge (periodic)
  const jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, 8, 4096);
  for (bool periodic : { false, true })
  {
    jz::SphParticles<double> p = P.view(SphKernel::CubicSpline);
    p.periodic = periodic;
    const auto one = run(p, g, 1), many = run(p, g, 64);
    JZ_CHECK_MSG(one.mass == many.mass, "periodic " << periodic);
    double total = 0;
    for (double v : many.mass)
      total += v;
    if (periodic)
      JZ_CHECK_MSG(std::fabs(total * g.cellMeasure() / double(P.m.size()) - 1) < 1e-9,
        "periodic total " << total * g.cellMeasure());
  }
  omp_set_num_threads(omp_get_num_procs());
}

// `count` clustered particles from sub-pixel kernels to kernels most of the
// image wide, zero h, a scalar and a vector field.
template <class T>
Particles<T> mixedParticles(int count)
{
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> pos(0, 1), unit(0, 1);
  std::normal_distribution<double> blob(0, 0.02);
  Particles<T> P;
  P.fields.resize(2);
  P.comps = { 1, 3 };
  for (int i = 0; i < count; ++i)
  {
    const bool clustered = i % 3 != 0;
    const double c = clustered ? 0.2 + 0.6 * double(i % 7) / 7 : 0;
    double x[3];
    for (double& v : x)
    {
      v = clustered ? c + blob(rng) : pos(rng);
      v -= std::floor(v);
    }
    const double h = i % 97 == 0 ? 0.0 : std::pow(10.0, -3.0 + 2.6 * unit(rng));
    P.add(x[0], x[1], x[2], 0.5 + unit(rng), h);
    P.fields[0].push_back(unit(rng));
    for (int k = 0; k < 3; ++k) // positive: the sums' relative rounding is the check's bound
      P.fields[1].push_back(1 + double(k) + blob(rng));
  }
  return P;
}

// Sums equal up to summation order: per pixel within `relative` of b's value
// plus 1e-9 of b's largest (where a wide kernel's single-precision rows
// fade out at its support, the two sides' roundings differ by about 1e-7 of
// that kernel's peak pixel, however small the pixel), totals within 1e-9.
void checkSameSums(const jz::SphMapSums& a, const jz::SphMapSums& b, double relative,
  const std::string& what)
{
  auto compare = [&](const auto& x, const auto& y, const std::string& name)
  {
    JZ_CHECK_EQ(x.size(), y.size());
    double top = 0, totalX = 0, totalY = 0, worst = 0;
    for (std::size_t c = 0; c < y.size() && c < x.size(); ++c)
    {
      top = std::max(top, std::fabs(y[c]));
      worst = std::max(worst, std::fabs(x[c] - y[c]) - relative * std::fabs(y[c]));
      totalX += x[c];
      totalY += y[c];
    }
    JZ_CHECK_MSG(worst <= 1e-9 * top,
      what << ", " << name << ": a pixel differs by " << worst << " (largest pixel " << top << ")");
    JZ_CHECK_MSG(std::fabs(totalX - totalY) <= 1e-9 * std::max(1.0, std::fabs(totalY)),
      what << ", " << name << ": totals " << totalX << " and " << totalY);
  };
  compare(a.mass, b.mass, "mass");
  for (std::size_t f = 0; f < a.fields.size() && f < b.fields.size(); ++f)
    compare(a.fields[f], b.fields[f], "field " + std::to_string(f));
}

// The mixed particles' projection for each box (open, periodic) and
// kernel, 20000 on a 200 x 120 image of the box and 5000 on a 150 x 90
// image of a region two boxes wide across it (every particle's images
// twice over): compare(particles, view, grid, label).
template <class T, class Compare>
void forEachMixedProjection(Compare&& compare)
{
  const Particles<T> many = mixedParticles<T>(20000), few = mixedParticles<T>(5000);
  for (const bool periodic : { false, true })
    for (SphKernel k : kKernels)
      for (const bool wide : { false, true })
      {
        const Particles<T>& P = wide ? few : many;
        jz::SphParticles<T> view = P.view(k);
        view.periodic = periodic;
        compare(P, view,
          wide ? grid(SphMapKind::Projection, 1, -0.3, 1.7, 150, 90)
               : grid(SphMapKind::Projection, 1, 0, 1, 200, 120),
          std::string(jztest::typeName<T>()) + (periodic ? " periodic" : "") + " kernel " +
            std::to_string(int(k)) + (wide ? " region of two boxes" : ""));
      }
}

// The narrow columns' separable form as the GPU holds it, from the host's copy.
jz::projection::PixelFactors hostPixelFactors(SphKernel kernel)
{
  const jz::SphPixelFactors& f = jz::SphPixelFactors::get(kernel);
  return { jz::FactorCubicsView{ f.axis().cubic().data(), f.axis().end(), f.axis().intervals() },
    f.weights() };
}

// The host's run of a projection as the GPU deposits it: the narrow columns
// a particle at a time over 32 lanes (SphProjectionColumns.h), the wide
// ones by tiles (SphProjectionTiles.h), each tile's threads in turn.
template <class T>
jz::SphMapSums projectionAsTheGpuDoes(
  const Particles<T>& P, const jz::SphParticles<T>& view, const jz::SphGrid& g)
{
  namespace pr = jz::projection;
  jz::SphMapSums host;
  host.mass.assign(g.numCells(), 0.0);
  host.fields = { std::vector<double>(g.numCells(), 0.0),
    std::vector<double>(3 * g.numCells(), 0.0) };
  auto field = [&](std::size_t cell, std::size_t i, double w)
  {
    host.fields[0][cell] += w * P.fields[0][i];
    for (std::size_t c = 0; c < 3; ++c)
      host.fields[1][3 * cell + c] += w * P.fields[1][3 * i + c];
  };
  const double L = view.periodic ? 1.0 : 0.0, period[3] = { L, L, L };
  const pr::Projection proj = pr::projectionOf(g, period);
  const pr::PixelFactors columns = hostPixelFactors(view.kernel);
  const pr::Centres centres = pr::centresOf(jz::SphColumnCentres::get(view.kernel));
  std::vector<std::pair<unsigned, std::uint64_t>> entries;
  const pr::TileGrid tiles = pr::tileGridOf(proj);
  JZ_CHECK(pr::imagesFitEntryCodes(proj));
  for (std::size_t i = 0; i < P.m.size(); ++i)
  {
    auto add = [&](std::size_t cell, double w, double fieldWeight)
    {
      host.mass[cell] += w;
      field(cell, i, fieldWeight);
    };
    for (int lane = 0; lane < 32; ++lane)
      pr::projectParticle(proj, columns, centres, P.xyz.data(), P.h.data(), P.m.data(), i, lane, 32,
        add, pr::Columns::Narrow);
    pr::forWideEntries(proj, tiles, P.xyz.data(), P.h.data(), i,
      [&](unsigned tile, std::uint64_t code) { entries.emplace_back(tile, code); });
  }
  std::stable_sort(
    entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t first = 0, last = 0; first < entries.size(); first = last)
  {
    const unsigned tile = entries[first].first;
    std::vector<pr::WideColumn> wide;
    std::vector<std::size_t> particles;
    for (last = first; last < entries.size() && entries[last].first == tile; ++last)
    {
      particles.push_back(0);
      wide.push_back(pr::entryColumn(
        proj, P.xyz.data(), P.h.data(), P.m.data(), entries[last].second, particles.back()));
    }
    const int u0 = int(tile % unsigned(tiles.across)) * pr::kTileSide,
              v0 = int(tile / unsigned(tiles.across)) * pr::kTileSide;
    for (int t = 0; t < pr::kTileThreads; ++t)
    {
      const int u = u0 + t % pr::kTileSide, v = v0 + t / pr::kTileSide;
      double mass[pr::kTileRowsPerThread] = {};
      pr::addTileColumns(
        proj, centres, wide.data(), particles.data(), int(wide.size()), u, v, mass, field);
      for (int r = 0; r < pr::kTileRowsPerThread; ++r)
        if (u < proj.u.cells && v + r * pr::kTileRowStep < proj.v.cells)
          host.mass[std::size_t(v + r * pr::kTileRowStep) * std::size_t(proj.u.cells) +
            std::size_t(u)] += mass[r];
    }
  }
  return host;
}

// The GPU's tiles of wide columns cover every pixel of theirs once: the
// host's run of the GPU's logic against the CPU's deposition (equal up to
// summation order and fused multiply-adds, 1e-6 of a pixel's value).
template <class T>
void projectionTilesOnTheHost()
{
  forEachMixedProjection<T>(
    [](const Particles<T>& P, const jz::SphParticles<T>& view, const jz::SphGrid& g,
      const std::string& what)
    {
      jz::SphMapSums cpu;
      jz::depositSphMap(view, g, cpu, jz::Backend::CPU);
      checkSameSums(projectionAsTheGpuDoes(P, view, g), cpu, 1e-6, what);
    });
}

JZ_TEST(ProjectionTilesOnTheHost)
{
  if (jztest::onGpu())
    jztest::skip("a CPU case (the GPU's own runs ProjectionGpuEqualsCpu)");
  projectionTilesOnTheHost<float>();
  projectionTilesOnTheHost<double>();
}

// The GPU's per-pixel logic (SphProjectionColumns.h) run here, a particle
// at a time over 32 lanes as a warp runs it, against the CPU's deposition:
// the same pixel integrals, equal up to summation order and to the fused
// multiply-adds the CPU's single-precision rows of wide kernels may take
// (1e-6 of a pixel's value).
template <class T>
void projectionColumnsOnTheHost()
{
  forEachMixedProjection<T>([](const Particles<T>& P, const jz::SphParticles<T>& view,
                              const jz::SphGrid& g, const std::string& what)
    {
      jz::SphMapSums cpu, host;
      jz::depositSphMap(view, g, cpu, jz::Backend::CPU);
      host.mass.assign(g.numCells(), 0.0);
      host.fields = { std::vector<double>(g.numCells(), 0.0),
        std::vector<double>(3 * g.numCells(), 0.0) };
      const double L = view.periodic ? 1.0 : 0.0, period[3] = { L, L, L };
      const jz::projection::Projection pr = jz::projection::projectionOf(g, period);
      const jz::projection::PixelFactors columns = hostPixelFactors(view.kernel);
      const jz::projection::Centres centres =
        jz::projection::centresOf(jz::SphColumnCentres::get(view.kernel));
      for (std::size_t i = 0; i < P.m.size(); ++i)
      {
        auto add = [&](std::size_t cell, double w, double fieldWeight)
        {
          host.mass[cell] += w;
          host.fields[0][cell] += fieldWeight * P.fields[0][i];
          for (std::size_t c = 0; c < 3; ++c)
            host.fields[1][3 * cell + c] += fieldWeight * P.fields[1][3 * i + c];
        };
        for (int lane = 0; lane < 32; ++lane)
          jz::projection::projectParticle(
            pr, columns, centres, P.xyz.data(), P.h.data(), P.m.data(), i, lane, 32, add);
      }
      checkSameSums(host, cpu, 1e-6, what);
    });
}

JZ_TEST(ProjectionColumnsOnTheHost)
{
  if (jztest::onGpu())
    jztest::skip("a CPU case (the GPU's own runs ProjectionGpuEqualsCpu)");
  projectionColumnsOnTheHost<float>();
  projectionColumnsOnTheHost<double>();
}

// A projection on the GPU against the CPU's, on the same particles: equal
// up to summation order and fused multiply-adds (1e-6 of a pixel's value).
template <class T>
void projectionGpuEqualsCpu()
{
  forEachMixedProjection<T>([](const Particles<T>&, const jz::SphParticles<T>& view,
                              const jz::SphGrid& g, const std::string& what)
    {
      jz::SphMapSums gpu, cpu;
      const jz::RunInfo info = jz::depositSphMap(view, g, gpu, jz::Backend::CUDA);
      JZ_CHECK(info.backend == jz::Backend::CUDA);
      jz::depositSphMap(view, g, cpu, jz::Backend::CPU);
      checkSameSums(gpu, cpu, 1e-6, what);
    });
}

JZ_TEST(ProjectionGpuEqualsCpu)
{
  if (!jztest::onGpu())
    jztest::skip("a GPU case");
  projectionGpuEqualsCpu<float>();
  projectionGpuEqualsCpu<double>();
}

// The particle rules scan in parallel: the message names the smallest
// offending index, and its reason, whatever the number of threads.
JZ_TEST(RulesNameTheFirstOffenderForAnyThreadCount)
{
  const std::size_t n = 200000;
  Particles<double> P;
  for (std::size_t i = 0; i < n; ++i)
    P.add(0.25, 0.25, 0.25, 1.0, 0.01);
  P.rho.assign(n, 1.0);
  P.fields.push_back(std::vector<double>(n, 2.0));
  P.comps.push_back(1);
  // Offenders late in different blocks, the first of them too wide for the box.
  P.h[150001] = -1;
  P.h[120000] = std::numeric_limits<double>::infinity();
  P.h[99999] = std::nan("");
  P.h[31000] = 0.75;
  P.h[4097] = 0.6; // too wide for a box of side 0.5
  P.rho[170000] = -2;
  P.rho[123457] = std::nan("");
  P.rho[65537] = -1e-300;
  jz::SphGrid g = grid(SphMapKind::Slice, 2, 0, 1, 8, 8);
  auto view = P.view(SphKernel::CubicSpline);
  view.periodic = true;
  for (int d = 0; d < 3; ++d)
    view.boxHi[d] = 0.5;
  for (int threads : { 1, 2, 5, 16 })
  {
    omp_set_num_threads(threads);
    std::string e = jz::sphSupportError(P.h.data(), n, true, view.boxLo, view.boxHi, "h");
    JZ_CHECK_MSG(
      e.find("h of point 4097 (0.6") == 0 && e.find("periodic box") != std::string::npos, e);
    e = jz::sphSupportError(P.h.data(), n, false, view.boxLo, view.boxHi, "h");
    JZ_CHECK_MSG(e.find("h of point 99999 is negative or not finite (nan)") == 0, e);
    e = jz::sphParticlesError(view, g);
    JZ_CHECK_MSG(e.find("SmoothingLength of point 4097 (") == 0, e);
    std::vector<double> good(n, 0.01);
    auto rhoOnly = view;
    rhoOnly.support = good.data();
    e = jz::sphParticlesError(rhoOnly, g);
    JZ_CHECK_MSG(e == "Density of point 65537 is negative or NaN.", e);
    rhoOnly.numPoints = 65537; // the offenders beyond the particles are not seen
    JZ_CHECK_MSG(jz::sphParticlesError(rhoOnly, g).empty(), jz::sphParticlesError(rhoOnly, g));
  }
  omp_set_num_threads(omp_get_num_procs());
  // The deposition refuses them with the same message, before it writes.
  jz::SphMapSums sums;
  sums.mass.assign(3, 7.0);
  try
  {
    jz::depositSphMap(view, g, sums);
    JZ_CHECK_MSG(false, "bad support radii were deposited");
  }
  catch (const jz::Error& err)
  {
    JZ_CHECK_EQ(std::string(err.what()), jz::sphParticlesError(view, g));
  }
  JZ_CHECK(std::vector<double>(sums.mass.begin(), sums.mass.end()) == std::vector<double>(3, 7.0));
}

JZ_TEST(EmptyInputAndBadInput)
{
  Particles<double> P;
  jz::SphGrid g = grid(SphMapKind::Projection, 2, 0, 1, 8, 8);
  const auto sums = run(P.view(SphKernel::CubicSpline), g);
  JZ_CHECK_EQ(sums.mass.size(), std::size_t(64));
  JZ_CHECK(std::all_of(sums.mass.begin(), sums.mass.end(), [](double v) { return v == 0; }));
  P.add(0.5, 0.5, 0.5, 1.0, -0.1);
  JZ_CHECK_THROWS(run(P.view(SphKernel::CubicSpline), g));
  P.h[0] = std::nan("");
  JZ_CHECK_THROWS(run(P.view(SphKernel::CubicSpline), g));
  P.h[0] = 0.1;
  jz::SphGrid bad = g;
  bad.resolution[0] = 0;
  JZ_CHECK_THROWS(run(P.view(SphKernel::CubicSpline), bad));
  bad = g;
  std::swap(bad.region[2], bad.region[3]);
  JZ_CHECK_THROWS(run(P.view(SphKernel::CubicSpline), bad));
  JZ_CHECK(jz::sphGridError(bad).find("Region") != std::string::npos);
  // A map that cannot fit in memory is refused before anything is
  // allocated: 2^31 - 1 cells with a thousand values each (tens of PB).
  bad = g;
  bad.resolution[0] = 46340;
  bad.resolution[1] = 46340;
  JZ_CHECK(jz::sphGridError(g, 1000).empty());
  JZ_CHECK_MSG(jz::sphGridError(bad, 1000).find("GiB") != std::string::npos,
    "said '" << jz::sphGridError(bad, 1000) << "'");
  std::vector<double> many(1000, 1.0);
  auto fat = P.view(SphKernel::CubicSpline);
  fat.fields.push_back({ many.data(), 1000 });
  JZ_CHECK(jz::sphParticlesError(fat, bad).find("GiB") != std::string::npos);
  JZ_CHECK_THROWS(run(fat, bad));
  // A kernel wider than the periodic box is refused (its images would number
  // in the millions); one exactly as wide is mapped, its mass all inside.
  P.h[0] = 50;
  auto wide = P.view(SphKernel::CubicSpline);
  wide.periodic = true;
  JZ_CHECK_THROWS(run(wide, g));
  JZ_CHECK(jz::sphSupportError(wide.support, 1, true, wide.boxLo, wide.boxHi, "h")
             .find("periodic box") != std::string::npos);
  P.h[0] = 1.0;
  const auto sums1 = run(wide, g);
  double total = 0;
  for (double s : sums1.mass)
    total += s * g.cellMeasure();
  JZ_CHECK_MSG(std::fabs(total - 1) < 1e-9, "a kernel as wide as the box: mass " << total);
}
} // namespace

JZ_TEST_MAIN()
