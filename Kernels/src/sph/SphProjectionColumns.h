// A projection's columns as the GPU deposits them (SphMapsCuda.cu), one
// particle at a time over `lanes` workers: every periodic image of its
// column, its pixels shared out by index over the lanes, each pixel's mass
// the CPU's pixel integral: the column table's separable form
// (SphPixelFactors.h) below SphColumnCentres::kMinPixels, the corrected
// midpoint rule (SphKernelTables.h) from there on. Host and device code (JZ_HD), so that the CPU
// tests run the very per-pixel logic the GPU runs; the pixels go to an adder (atomic on the GPU).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "jz/Config.h"
#include "jz/SphMaps.h"
#include "sph/SphImages.h"
#include "sph/SphKernelTables.h"
#include "sph/SphPixelFactors.h"

namespace jz
{
namespace projection
{
constexpr int kPieces = SphColumnCentres::kPieces;
constexpr int kValueTerms = SphColumnCentres::kValueDegree + 1;
constexpr int kCorrectionTerms = SphColumnCentres::kCorrectionDegree + 1;

// The image's two axes and the line of sight (its depth range and period).
struct Projection
{
  GridAxis u, v, depth;
  double wideFrom; // support radii from here on take the midpoint rule
};

// The column table's separable form (SphPixelFactors) as the GPU holds it.
struct PixelFactors
{
  FactorCubicsView axis;
  const double* weight;
};

// The midpoint rule's polynomials (SphColumnCentres), held by value:
// coefficient j of piece p at [j][p].
struct Centres
{
  float value[kValueTerms][kPieces];
  float laplacian[kCorrectionTerms][kPieces];
  float anisotropy[kCorrectionTerms][kPieces];
};

template <int Terms>
JZ_HD float horner(const float (*c)[kPieces], int piece, float u)
{
  float acc = c[Terms - 1][piece];
  for (int j = Terms - 2; j >= 0; --j)
    acc = acc * u + c[j][piece];
  return acc;
}

// A column of support h and mass m at (x, y): the pixel integrals of the
// column table's separable form (pixelFraction). add(cell, mass, fieldWeight).
template <class Add>
JZ_HD void narrowColumn(const Projection& g, const PixelFactors& factors, double x, double y,
  double h, double m, int lane, int lanes, Add& add)
{
  int i0, i1, j0, j1;
  if (!g.u.span(x, h, 0, g.u.cells, i0, i1) || !g.v.span(y, h, 0, g.v.cells, j0, j1))
    return;
  const std::size_t nu = std::size_t(g.u.cells);
  if (h == 0)
  {
    if (lane == 0)
      add(std::size_t(j0) * nu + std::size_t(i0), m, m);
    return;
  }
  const double inv = 1.0 / h, eu = g.u.edge(i0), ev = g.v.edge(j0);
  const int width = i1 - i0 + 1;
  const long long pixels = (long long)width * (j1 - j0 + 1);
  for (long long p = lane; p < pixels; p += lanes)
  {
    const int di = int(p % width), dj = int(p / width);
    const double frac = pixelFraction(factors.axis, factors.weight, (eu + di * g.u.step - x) * inv,
      (eu + (di + 1) * g.u.step - x) * inv, (ev + dj * g.v.step - y) * inv,
      (ev + (dj + 1) * g.v.step - y) * inv);
    if (frac != 0)
      add(std::size_t(j0 + dj) * nu + std::size_t(i0 + di), m * frac, m * frac);
  }
}

// A column many pixels wide on the image: the pixel centres within h
// (SphColumnCentres' footprint and rows) and the corrected midpoint rule's
// constants, for widePixel.
struct WideColumn
{
  int i0, i1, j0, j1; // its pixels [i0, i1] x [j0, j1]
  double y, vlo, dv, invH;
  float X0, a, scale, lapScale, anisoScale;
  bool anisotropic;
};

// The pixels [i0, i1] x [j0, j1] whose centres lie within h of (x, y);
// false when there are none on the image.
JZ_HD bool wideSpan(
  const Projection& g, double x, double y, double h, int& i0, int& i1, int& j0, int& j1)
{
  return g.u.centresWithin(x, h, 0, g.u.cells, i0, i1) &&
    g.v.centresWithin(y, h, 0, g.v.cells, j0, j1);
}

// The wide column of support h and mass m at (x, y); false when none of its
// pixel centres is on the image.
JZ_HD bool wideColumnOf(const Projection& g, double x, double y, double h, double m, WideColumn& w)
{
  if (!wideSpan(g, x, y, h, w.i0, w.i1, w.j0, w.j1))
    return false;
  const double du = g.u.step, dv = g.v.step, invH = 1 / h;
  const double au2 = du * du / (h * h), av2 = dv * dv / (h * h);
  w.y = y;
  w.vlo = g.v.lo;
  w.dv = dv;
  w.invH = invH;
  w.scale = float(m * du * dv / (h * h));
  w.lapScale = float((au2 + av2) / 48);
  w.anisoScale = float((au2 - av2) / 48);
  w.anisotropic = fabs(au2 - av2) > 1e-6 * (au2 + av2);
  w.X0 = float((g.u.lo + (w.i0 + 0.5) * du - x) * invH);
  w.a = float(du / h);
  return true;
}

// The mass of pixel (i0 + di, j0 + dj) of a wide column: 0 beyond its support.
JZ_HD double widePixel(const WideColumn& w, const Centres& c, int di, int dj)
{
  const double dy = w.vlo + (w.j0 + dj + 0.5) * w.dv - w.y;
  const float Y2 = float(dy * dy * w.invH * w.invH);
  const float X = w.X0 + float(di) * w.a;
  const float t = X * X + Y2;
  if (!(t < 1.0f))
    return 0;
  const float s = t * float(kPieces);
  const int piece = int(s) < kPieces - 1 ? int(s) : kPieces - 1;
  const float u = s - float(piece);
  float value = horner<kValueTerms>(c.value, piece, u);
  value += w.lapScale * horner<kCorrectionTerms>(c.laplacian, piece, u);
  if (w.anisotropic)
    value += w.anisoScale * horner<kCorrectionTerms>(c.anisotropy, piece, u) *
      ((X * X - Y2) / (t > 0.0f ? t : 1.0f));
  return value > 0.0f ? double(value * w.scale) : 0.0;
}

// A column many pixels wide: the corrected midpoint rule at the pixel
// centres within h, one pixel a lane.
template <class Add>
JZ_HD void wideColumn(const Projection& g, const Centres& c, double x, double y, double h,
  double m, int lane, int lanes, Add& add)
{
  WideColumn w;
  if (!wideColumnOf(g, x, y, h, m, w))
    return;
  const int width = w.i1 - w.i0 + 1;
  const long long pixels = (long long)width * (w.j1 - w.j0 + 1);
  for (long long p = lane; p < pixels; p += lanes)
  {
    const int di = int(p % width), dj = int(p / width);
    const double pixel = widePixel(w, c, di, dj);
    if (pixel != 0)
      add(std::size_t(w.j0 + dj) * std::size_t(g.u.cells) + std::size_t(w.i0 + di), pixel, pixel);
  }
}

// Which of the columns projectParticle deposits: all, or those narrower or
// those wider than Projection::wideFrom (the GPU's two passes).
enum class Columns
{
  All,
  Narrow,
  Wide
};

// Particle i's share of the image on lane `lane` of `lanes`: every periodic
// image of its column, with its mass times the number of its images inside
// the depth range.
template <class T, class Add>
JZ_HD void projectParticle(const Projection& g, const PixelFactors& factors, const Centres& centres,
  const T* points, const double* support, const double* masses, std::size_t i, int lane, int lanes,
  Add& add, Columns which = Columns::All)
{
  if (which != Columns::All && (support[i] >= g.wideFrom) != (which == Columns::Wide))
    return;
  const int images =
    imagesInside(double(points[3 * i + g.depth.dim]), g.depth.lo, g.depth.hi, g.depth.period);
  if (images == 0)
    return;
  const double x = double(points[3 * i + g.u.dim]), y = double(points[3 * i + g.v.dim]);
  const double h = support[i], m = (masses ? masses[i] : 1.0) * images;
  const ImageShifts su(x, h, g.u.lo, g.u.hi, g.u.period), sv(y, h, g.v.lo, g.v.hi, g.v.period);
  for (int ku = su.first; ku <= su.last; ++ku)
    for (int kv = sv.first; kv <= sv.last; ++kv)
    {
      const double cx = x + ku * g.u.period, cy = y + kv * g.v.period;
      if (h >= g.wideFrom)
        wideColumn(g, centres, cx, cy, h, m, lane, lanes, add);
      else
        narrowColumn(g, factors, cx, cy, h, m, lane, lanes, add);
    }
}

// The projection of `grid` (period[d] 0 where not periodic).
inline Projection projectionOf(const SphGrid& grid, const double* period)
{
  const int a = grid.axis, ud = (a + 1) % 3, vd = (a + 2) % 3;
  Projection g;
  g.u = makeAxis(grid, ud, grid.resolution[0], period[ud]);
  g.v = makeAxis(grid, vd, grid.resolution[1], period[vd]);
  g.depth = makeAxis(grid, a, 1, period[a]);
  g.wideFrom = SphColumnCentres::kMinPixels * std::max(g.u.step, g.v.step);
  return g;
}

inline Centres centresOf(const SphColumnCentres& c)
{
  Centres d;
  for (int p = 0; p < kPieces; ++p)
  {
    for (int j = 0; j < kValueTerms; ++j)
      d.value[j][p] = c.valueCoefficients()[j * kPieces + p];
    for (int j = 0; j < kCorrectionTerms; ++j)
    {
      d.laplacian[j][p] = c.laplacianCoefficients()[j * kPieces + p];
      d.anisotropy[j][p] = c.anisotropyCoefficients()[j * kPieces + p];
    }
  }
  return d;
}
} // namespace projection
} // namespace jz
