// Exact z-order (Morton order) of floating-point vectors, §II-A.
//
// No integer Morton keys: two vectors are compared along the dimension whose
// coordinates differ in the most significant bit, where "bit" means the bit
// position in an (infinitely wide) fixed-point representation of the value.
// This orders float32 and float64 data exactly at every scale and offset,
// including negative values, zero and subnormals.
#pragma once

#include "Config.h"
#include "FloatBits.h"

namespace jz
{
// msb() of two equal values: lower than every real bit position.
constexpr int kNoDifference = -0x40000;
// level() of two identical vectors: lower than every real level.
constexpr int kLevelNone = -0x100000;
// Level of the two sentinel gaps before the first and after the last point.
constexpr int kLevelInfinite = 0x100000;

// Position of the most significant bit in which |a| and |b| differ as fixed
// point numbers (eq. 2, §II-A); FloatBits<T>::kExponentMax when the
// signs differ, kNoDifference when a == b. -0 is treated as +0.
template <class T>
JZ_HD int msbDifference(T a, T b)
{
  using FB = FloatBits<T>;
  using U = typename FB::UInt;
  constexpr int kWidth = 8 * sizeof(U);
  constexpr U kMantissaMask = (U(1) << FB::kMantissaBits) - 1;
  constexpr U kImplicitBit = U(1) << FB::kMantissaBits;
  constexpr U kExponentMask = (U(1) << (kWidth - 1 - FB::kMantissaBits)) - 1;

  U ua = FB::bits(a);
  U ub = FB::bits(b);
  if ((ua << 1) == 0)
    ua = 0; // -0 -> +0
  if ((ub << 1) == 0)
    ub = 0;
  if (ua == ub)
    return kNoDifference;
  if ((ua ^ ub) >> (kWidth - 1))
    return FB::kExponentMax;

  const int ea = static_cast<int>((ua >> FB::kMantissaBits) & kExponentMask);
  const int eb = static_cast<int>((ub >> FB::kMantissaBits) & kExponentMask);
  // Subnormals share the scale of the smallest normal exponent but have no
  // implicit leading bit.
  const int sa = ea ? ea : 1;
  const int sb = eb ? eb : 1;
  if (sa != sb)
  {
    // The larger value is normal; its leading bit is the first difference.
    return (sa > sb ? sa : sb) - FB::kExponentBias;
  }
  const U ma = (ua & kMantissaMask) | (ea ? kImplicitBit : U(0));
  const U mb = (ub & kMantissaMask) | (eb ? kImplicitBit : U(0));
  const int highest = kWidth - 1 - FB::clz(ma ^ mb);
  return sa - FB::kExponentBias - FB::kMantissaBits + highest;
}

// The dimension whose coordinates differ most significantly (first one on
// ties, so earlier coordinates are more significant), and that msb.
template <class T>
JZ_HD int mostSignificantDimension(const T* p, const T* q, int& msbOut)
{
  int best = 0;
  int bestMsb = msbDifference(p[0], q[0]);
  for (int d = 1; d < kDim; ++d)
  {
    const int m = msbDifference(p[d], q[d]);
    if (m > bestMsb)
    {
      bestMsb = m;
      best = d;
    }
  }
  msbOut = bestMsb;
  return best;
}

// Strict z-order "p before q" (eqs. 3-4): a strict weak ordering.
template <class T>
JZ_HD bool zLess(const T* p, const T* q)
{
  int msb;
  const int k = mostSignificantDimension(p, q, msb);
  return msb != kNoDifference && p[k] < q[k];
}

// Morton level of the smallest z-order cell that holds both p and q (eq. 5);
// kLevelNone for identical vectors. 2^level is the cell volume.
template <class T>
JZ_HD int mortonLevel(const T* p, const T* q)
{
  int msb;
  const int k = mostSignificantDimension(p, q, msb);
  if (msb == kNoDifference)
    return kLevelNone;
  return (msb + 1) * kDim - k;
}
} // namespace jz
