// Boxes and distance bounds shared by the CPU backend and the CUDA kernels.
//
// All distances are squared and evaluated in double from the input coordinates
// (float32 differences are exact in double), so the CPU and the GPU rank
// neighbours identically and bounds stay monotone with point distances.
#pragma once

#include <math.h>

#include "Config.h"

namespace jz
{
// Axis-aligned box of a tree node's points. An empty box has lo > hi.
template <class T>
struct Box
{
  T lo[kDim];
  T hi[kDim];
};

// The periodic domain [lo, lo + length) in each dimension; length <= 0 means
// not periodic. Points are wrapped into the domain before the tree is built.
struct Periodicity
{
  double length[kDim] = { 0, 0, 0 };
  JZ_HD bool enabled() const { return length[0] > 0; }

  // The domain of a problem's periodic flag and [boxLo, boxHi).
  JZ_HD static Periodicity of(bool periodic, const double* boxLo, const double* boxHi)
  {
    Periodicity per;
    if (periodic)
      for (int d = 0; d < kDim; ++d)
        per.length[d] = boxHi[d] - boxLo[d];
    return per;
  }
};

// Relative slack applied to upper bounds and pruning radii, so that rounding
// in bound arithmetic never discards a candidate (it only keeps a few more).
constexpr double kBoundSlack = 1e-9;

JZ_HD double jzMax(double a, double b)
{
  return a > b ? a : b;
}
JZ_HD double jzMin(double a, double b)
{
  return a < b ? a : b;
}
JZ_HD double jzAbs(double a)
{
  return a < 0 ? -a : a;
}

// The periodic wrap, the one rule every path uses (tree builds, distributed
// decomposition, catalogue): x moved by whole periods into [lo, lo + length).
// Evaluated in double; when the result rounded to T lands on lo + length it
// becomes lo. -0 becomes +0, so equal coordinates have equal z-order bits.
template <class T>
JZ_HD T wrapIntoBox(T x, double lo, double length)
{
  const double w = double(x) - length * floor((double(x) - lo) / length);
  T t = T(w);
  if (double(t) >= lo + length || double(t) < lo)
    t = T(lo);
  return t + T(0);
}

// A coordinate as the tree sees it: wrapped into [lo, lo + period) when
// period > 0, and -0 as +0 always. Bit for bit wrapIntoBox, without its
// division for a coordinate already in the box (0 <= x - lo < period: the
// floor is then 0, so only wrapIntoBox's final range check can move x).
template <class T>
JZ_HD T treeCoordinate(T x, double lo, double period)
{
  if (!(period > 0))
    return x + T(0);
  const double offset = double(x) - lo;
  if (!(offset >= 0 && offset < period))
    return wrapIntoBox(x, lo, period);
  return (double(x) >= lo + period ? T(lo) : x) + T(0);
}

// The offset d = a - b moved to its nearest image, for points any number of
// periods apart (|result| <= period / 2); period <= 0: d unchanged.
JZ_HD double nearestImageOffset(double d, double period)
{
  if (period > 0)
    d -= period * nearbyint(d / period);
  return d;
}

// Per-dimension separation of two coordinates, nearest image when periodic.
// Both lie in one period (wrapped), so one image shift suffices. fabs, not a
// branch: the sign of a - b is a coin toss in the walks' exact distances.
JZ_HD double separation(double a, double b, double period)
{
  double d = fabs(a - b);
  if (period > 0 && d > 0.5 * period)
    d = period - d;
  return d;
}

template <class T>
JZ_HD double distance2(const T* p, const T* q, const Periodicity& per)
{
  double s = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double x = separation(double(p[d]), double(q[d]), per.length[d]);
    s += x * x;
  }
  return s;
}

// Smallest possible per-dimension separation between [alo, ahi] and [blo, bhi].
JZ_HD double gapLow(double alo, double ahi, double blo, double bhi, double period)
{
  double g = jzMax(0.0, jzMax(blo - ahi, alo - bhi));
  if (period > 0)
  {
    // Points lie in one period, so images shifted by one period suffice.
    g = jzMin(g, jzMax(0.0, jzMax(blo + period - ahi, alo - bhi - period)));
    g = jzMin(g, jzMax(0.0, jzMax(blo - period - ahi, alo - bhi + period)));
  }
  return g;
}

// Largest possible per-dimension separation between the two intervals.
JZ_HD double gapHigh(double alo, double ahi, double blo, double bhi, double period)
{
  double g = jzMax(ahi - blo, bhi - alo);
  if (period > 0)
  {
    g = jzMin(g, jzMax(ahi - blo - period, bhi + period - alo));
    g = jzMin(g, jzMax(ahi - blo + period, bhi - period - alo));
    g = jzMin(g, 0.5 * period);
  }
  return g;
}

// The per-dimension gaps of the two bounds below, as function objects.
struct GapLow
{
  JZ_HD double operator()(double alo, double ahi, double blo, double bhi, double period) const
  {
    return gapLow(alo, ahi, blo, bhi, period);
  }
};

struct GapHigh
{
  JZ_HD double operator()(double alo, double ahi, double blo, double bhi, double period) const
  {
    return gapHigh(alo, ahi, blo, bhi, period);
  }
};

// The sum over the dimensions of the squared gaps between two boxes.
template <class T, class Gap>
JZ_HD double sumOfGaps2(const Box<T>& a, const Box<T>& b, const Periodicity& per, Gap gap)
{
  double s = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double g = gap(a.lo[d], a.hi[d], b.lo[d], b.hi[d], per.length[d]);
    s += g * g;
  }
  return s;
}

// d_low^2 of eq. 15 for two boxes: no point pair is closer.
template <class T>
JZ_HD double boxDistanceLow2(const Box<T>& a, const Box<T>& b, const Periodicity& per)
{
  return sumOfGaps2(a, b, per, GapLow());
}

// d_up^2 of eq. 16 for two boxes: no point pair is farther apart.
template <class T>
JZ_HD double boxDistanceHigh2(const Box<T>& a, const Box<T>& b, const Periodicity& per)
{
  return sumOfGaps2(a, b, per, GapHigh()) * (1 + kBoundSlack);
}

// The same bounds for a non-periodic domain, without the image logic.
template <class T>
JZ_HD double boxDistanceLow2Plain(const Box<T>& a, const Box<T>& b)
{
  double s = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double g =
      jzMax(0.0, jzMax(double(b.lo[d]) - double(a.hi[d]), double(a.lo[d]) - double(b.hi[d])));
    s += g * g;
  }
  return s;
}

template <class T>
JZ_HD double boxDistanceHigh2Plain(const Box<T>& a, const Box<T>& b)
{
  double s = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double g = jzMax(double(a.hi[d]) - double(b.lo[d]), double(b.hi[d]) - double(a.lo[d]));
    s += g * g;
  }
  return s * (1 + kBoundSlack);
}

// Smallest squared distance from a point to a box.
template <class T>
JZ_HD double pointBoxDistance2(const T* p, const Box<T>& b, const Periodicity& per)
{
  double s = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double x = p[d];
    const double g = gapLow(x, x, b.lo[d], b.hi[d], per.length[d]);
    s += g * g;
  }
  return s;
}

template <class T>
JZ_HD void boxSetEmpty(Box<T>& b)
{
  for (int d = 0; d < kDim; ++d)
  {
    b.lo[d] = T(1);
    b.hi[d] = T(0);
  }
}

template <class T>
JZ_HD bool boxIsEmpty(const Box<T>& b)
{
  return b.lo[0] > b.hi[0];
}

template <class T>
JZ_HD void boxExtend(Box<T>& b, const T* p)
{
  if (boxIsEmpty(b))
  {
    for (int d = 0; d < kDim; ++d)
      b.lo[d] = b.hi[d] = p[d];
    return;
  }
  for (int d = 0; d < kDim; ++d)
  {
    b.lo[d] = p[d] < b.lo[d] ? p[d] : b.lo[d];
    b.hi[d] = p[d] > b.hi[d] ? p[d] : b.hi[d];
  }
}

template <class T>
JZ_HD void boxMerge(Box<T>& b, const Box<T>& c)
{
  if (boxIsEmpty(c))
    return;
  if (boxIsEmpty(b))
  {
    b = c;
    return;
  }
  for (int d = 0; d < kDim; ++d)
  {
    b.lo[d] = c.lo[d] < b.lo[d] ? c.lo[d] : b.lo[d];
    b.hi[d] = c.hi[d] > b.hi[d] ? c.hi[d] : b.hi[d];
  }
}
} // namespace jz
