// The innermost loops of LeafToLeaf on the CPU, vectorized. AVX2 and
// AVX-512 versions are chosen at run time when the processor has them, so
// one binary runs on every x86-64 machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "jz/Config.h"
#include "jz/Tree.h"

namespace jz
{
// Writes to `candidates` the offsets i < n whose squared distance |p - s_i|^2,
// evaluated in the points' own precision, is <= filter2, and returns how many;
// candidateD2 (nullable) receives those distances. A fast filter: callers
// pass a generous filter2 and rank the survivors by exact double distances.
// periods (nullable) selects nearest images. The coordinate arrays must be
// readable up to a multiple of 8 elements past n (SortedPoints' padding).
Index leafCandidates(const float* xs, const float* ys, const float* zs, Index n, const float* p,
  const float* periods, float filter2, Index* candidates, float* candidateD2 = nullptr);
Index leafCandidates(const double* xs, const double* ys, const double* zs, Index n, const double* p,
  const double* periods, double filter2, Index* candidates, double* candidateD2 = nullptr);

// Writes to `active` the query points i < n whose squared distance to the
// box [lo, hi] (in the points' precision) is <= filter2[i]; returns how many.
// Coordinates and filter2 must be readable up to 8 elements past n.
Index queriesNearBox(const float* xs, const float* ys, const float* zs, Index n, const float* lo,
  const float* hi, const float* periods, const float* filter2, Index* active);
Index queriesNearBox(const double* xs, const double* ys, const double* zs, Index n,
  const double* lo, const double* hi, const double* periods, const double* filter2, Index* active);
} // namespace jz

namespace jz
{
// out[i] = |p - s_i|^2 in the points' precision, nearest image when periods.
void leafDistances2(const float* xs, const float* ys, const float* zs, Index n, const float* p,
  const float* periods, float* out);
void leafDistances2(const double* xs, const double* ys, const double* zs, Index n, const double* p,
  const double* periods, double* out);

// How many of d[i], i < n, are <= bound.
Index countAtMost(const float* d, Index n, float bound);
Index countAtMost(const double* d, Index n, double bound);

// Copies the entries i < n with d[i] <= bound to outD/outSrc, in order;
// returns how many. Inputs are read and outputs written up to 8 past n.
Index packAtMost(
  const float* d, const Index* src, Index n, float bound, float* outD, Index* outSrc);
Index packAtMost(
  const double* d, const Index* src, Index n, double bound, double* outD, Index* outSrc);

// Inserts (d2, s) into the list d/src[0, n), sorted by d, after the entries
// equal to d2. Both arrays must hold n + 8 entries, d 32-byte aligned and
// +infinity from n on (whole blocks of 8 are rewritten; the slots from
// n + 1 on stay +infinity).
void insertSorted(float* d, Index* src, Index n, float d2, Index s);
void insertSorted(double* d, Index* src, Index n, double d2, Index s);

// order[r] = the index i < n of rank r in the order (d[i], i): a counting
// sort without branches (n^2 comparisons; for the few dozen of a leaf), a
// sort beyond a thousand. d must have room up to a multiple of 8 past n
// (padded here).
void rankOrder(float* d, Index n, Index* order);
void rankOrder(double* d, Index n, Index* order);
} // namespace jz

namespace jz
{
// The one margin rule of the pre-filter above: how far a squared
// distance evaluated in the points' precision T may lie from the exact one
// (jz/Geometry.h, in double), so that neither bound ever drops a candidate.
//
// Bound. Let u = 2^-p be T's unit roundoff (p = 24 for float, 53 for double)
// and s_d, d = |s| the exact per-dimension separations and distance.
//  - Relative part: a difference, |.|, a square and each sum round once
//    (fused or not): without periodicity |d_T - d| <= 2u d per coordinate,
//    so d_T^2 <= (1 + 6u) d^2 and vice versa. 6u < 4e-7 for float; the
//    factor 1 + 1e-5 covers it (and the final rounding of a bound to T).
//  - Absolute part, periodic boxes only: the images use the period rounded
//    to T, |L_T - L| <= ulp_T(L) / 2, and x -/+ L_T rounds to T with an error
//    up to ulp_T(|x| + L) / 2; L_T - |x_s - x_p| also inherits the rounding
//    of the difference, u |x_s - x_p| < ulp_T(L). Per dimension the error is
//    at most 3/2 ulp_T(2S) + u s_d, S = max(|x|, L) over the box, hence over
//    three dimensions at most a = sqrt(3) 3/2 ulp_T(2S) <= 3 ulp_T(2S). At a
//    wrapped separation of 1e-6 L in float this is ~10% of d: a relative
//    margin alone does not cover it.
// So both d_T^2 <= (1 + 6u)(d + a)^2 and d^2 <= (1 + 6u)(d_T + a)^2, and
// widen() = (sqrt(x) + a)^2 (1 + 1e-5) + 1e-30 bounds either from the other
// (the 1e-30 absorbs underflow). a = 4 ulp_T(2S), 0 without periodicity
// (then widen() is exactly the former x (1 + 1e-5) + 1e-30).
struct FilterMargin
{
  double absolute = 0; // a

  // The margin of a tree's points (S from its top-plane boxes).
  template <class T>
  static FilterMargin of(const ZTree<T>& tree)
  {
    FilterMargin m;
    const Periodicity& per = tree.periodicity;
    if (!per.enabled() || tree.planes.empty())
      return m;
    double scale = 0;
    for (int d = 0; d < kDim; ++d)
      scale = std::max(scale, per.length[d]);
    const TreePlane<T>& top = tree.planes.back();
    auto extend = [&](const Box<T>& b)
    {
      if (boxIsEmpty(b))
        return;
      for (int d = 0; d < kDim; ++d)
        scale = std::max(scale, std::max(std::fabs(double(b.lo[d])), std::fabs(double(b.hi[d]))));
    };
    for (const Box<T>& b : top.sourceBox)
      extend(b);
    for (const Box<T>& b : top.queryBox)
      extend(b);
    m.absolute = 4 * ulp<T>(2 * scale);
    return m;
  }

  // The unit in the last place of T at x > 0 (an upper bound: x rounded up
  // to a power of two).
  template <class T>
  static double ulp(double x)
  {
    return std::ldexp(1.0, std::ilogb(x) + 1 - std::numeric_limits<T>::digits);
  }

  // A squared distance widened so that it bounds the other precision's
  // value: an exact bound -> the pre-filter's threshold, or a pre-filter
  // distance -> an exact upper bound.
  // (Inlined on every bound update of the leaf walk; the periodic part,
  // with its square root, stays out of line.)
  __attribute__((always_inline)) double widen(double d2) const
  {
    if (absolute > 0)
      d2 = widenAbsolute(d2);
    return d2 * (1 + 1e-5) + 1e-30;
  }
  double widenAbsolute(double d2) const { return d2 + absolute * (2 * std::sqrt(d2) + absolute); }

  // widen(d2) (1 + kBoundSlack), an exact bound from a pre-filter distance,
  // and in `filter` at least widen() of that bound (its threshold) from the
  // same square root: the bound's root is at most
  // (sqrt(d2) + a) sqrt((1 + 1e-5)(1 + kBoundSlack)) + 1e-15 sqrt(1 + kBoundSlack),
  // taken 1e-9 larger for the rounding (a larger threshold only lets more
  // candidates be ranked exactly).
  __attribute__((always_inline)) double boundAndFilter(double d2, double& filter) const
  {
    constexpr double kSlack = 1 + kBoundSlack;
    if (!(absolute > 0))
    {
      const double bound2 = widen(d2) * kSlack;
      filter = widen(bound2);
      return bound2;
    }
    const double root = std::sqrt(d2);
    const double bound2 = ((d2 + absolute * (2 * root + absolute)) * (1 + 1e-5) + 1e-30) * kSlack;
    const double boundRoot =
      ((root + absolute) * std::sqrt((1 + 1e-5) * kSlack) + 1e-15 * std::sqrt(kSlack)) * (1 + 1e-9);
    filter = (bound2 + absolute * (2 * boundRoot + absolute)) * (1 + 1e-5) + 1e-30;
    return bound2;
  }
};
} // namespace jz
