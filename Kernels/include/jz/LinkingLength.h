// The relative linking length of friends-of-friends, l = b (V/N)^(1/3)
// (eq. 18, §IV): the one definition used by the kernels, the FriendsOfFriends
// filter's Relative mode and its Qt property widget. Header-only and
// VTK-free, so the GUI can include it without linking the kernels.
//
// Exact in exact cases: (V/N)^(1/3) is the double whose cube, times N, is
// closest to V, and exactly the cube root whenever that is representable
// (a 16^3 lattice in the unit box gives exactly 1/16, so Relative b = 1
// links exactly what Absolute l = 1/16 links). std::cbrt alone is not
// correctly rounded (glibc's is off by up to a few ulps, e.g. below 1/32).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace jz
{
namespace detail
{
// x = mantissa * 2^exponent with an odd mantissa (x > 0, finite).
inline void oddMantissa(double x, std::uint64_t& mantissa, int& exponent)
{
  int e = 0;
  const double f = std::frexp(x, &e); // x = f 2^e, f in [0.5, 1)
  mantissa = std::uint64_t(std::ldexp(f, 53));
  exponent = e - 53;
  while ((mantissa & 1) == 0)
  {
    mantissa >>= 1;
    ++exponent;
  }
}

// Whether c^3 n == v exactly, in integer arithmetic (c, n, v > 0; n < 2^63).
inline bool cubeTimesEquals(double c, std::uint64_t n, double v)
{
  std::uint64_t mc = 0, mv = 0;
  int ec = 0, ev = 0;
  oddMantissa(c, mc, ec);
  oddMantissa(v, mv, ev);
  int en = 0;
  while (n > 0 && (n & 1) == 0)
  {
    n >>= 1;
    ++en;
  }
  // The odd parts must agree: mc^3 * n == mv < 2^53, so mc < 2^18.
  if (mc >= (std::uint64_t(1) << 18))
    return false;
  const unsigned __int128 odd = (unsigned __int128)(mc * mc * mc) * n;
  return odd == mv && 3 * ec + en == ev;
}

// a + b = s + e exactly.
inline void twoSum(double a, double b, double& s, double& e)
{
  s = a + b;
  const double z = s - a;
  e = (a - (s - z)) + (b - z);
}

// c^3 n - v, evaluated as an exact sum of products (error-free with fma)
// summed in about triple precision: enough to rank neighbouring candidates.
inline double cubeResidual(double c, double n, double v)
{
  const double p1 = c * c, e1 = std::fma(c, c, -p1); // c^2 = p1 + e1
  const double p2 = c * p1, e2 = std::fma(c, p1, -p2);
  const double p3 = c * e1, e3 = std::fma(c, e1, -p3); // c^3 = p2 + e2 + p3 + e3
  const double parts[4] = { p2, e2, p3, e3 };
  double t[9];
  for (int i = 0; i < 4; ++i)
  {
    t[2 * i] = parts[i] * n;
    t[2 * i + 1] = std::fma(parts[i], n, -t[2 * i]);
  }
  t[8] = -v;
  for (int pass = 0; pass < 3; ++pass)
    for (int i = 1; i < 9; ++i)
      twoSum(t[i], t[i - 1], t[i], t[i - 1]);
  double sum = 0;
  for (double x : t)
    sum += x;
  return sum;
}
} // namespace detail

// The double nearest to (v / n)^(1/3) in the sense that its cube times n is
// closest to v; exact when the cube root is representable. v > 0, n > 0.
inline double cubeRootOfRatio(double v, std::size_t n)
{
  double c0 = std::cbrt(v / double(n));
  if (!(c0 > 0) || !std::isfinite(c0))
    return c0;
  // std::cbrt may be a few ulps off: one Newton step on the accurate
  // residual lands within an ulp, then the neighbours decide.
  const double step = detail::cubeResidual(c0, double(n), v) / (3 * c0 * c0 * double(n));
  if (std::isfinite(step))
    c0 -= step;
  double candidates[5];
  candidates[2] = c0;
  candidates[1] = std::nextafter(c0, 0.0);
  candidates[0] = std::nextafter(candidates[1], 0.0);
  candidates[3] = std::nextafter(c0, HUGE_VAL);
  candidates[4] = std::nextafter(candidates[3], HUGE_VAL);
  if (std::uint64_t(n) < (std::uint64_t(1) << 53))
  {
    for (double c : candidates)
      if (c > 0 && detail::cubeTimesEquals(c, std::uint64_t(n), v))
        return c;
  }
  double best = c0, bestResidual = std::fabs(detail::cubeResidual(c0, double(n), v));
  for (double c : candidates)
  {
    const double r = std::fabs(detail::cubeResidual(c, double(n), v));
    if (r < bestResidual)
    {
      best = c;
      bestResidual = r;
    }
  }
  return best;
}

// l = b (V/N)^(1/3), V the box volume; 0 when n == 0 or V <= 0 (no volume:
// the caller reports that Relative mode needs one).
inline double relativeLinkingLength(double b, double volume, std::size_t n)
{
  if (n == 0 || !(volume > 0) || !std::isfinite(volume))
    return 0;
  return b * cubeRootOfRatio(volume, n);
}
} // namespace jz
