// m / sqrt(s2) where a pair counts, else 0: the one home of the guarded
// inverse distance in the double loops that vectorize (exact sums, the
// centre-of-potential bounds).
#pragma once

#include <cmath>

namespace jz
{
// m / sqrt(s2) when keep and s2 > 0, else 0, bit for bit the division where
// it counts. Arithmetic masks, not `keep && s2 > 0 ? m / sqrt(s2) : 0`: GCC
// 12.2 with -fno-trapping-math vectorizes that conditional division over an
// 8-lane block as two AVX2 halves with the first half's mask and drops the
// second half's term in the masked lane (a near sum of the leaf filter lost
// 1,469 of 29,987 this way; TestPotentialCentreBounds' mirrored clumps).
inline double maskedInverse(double m, double s2, bool keep = true)
{
  const double on = double(keep & (s2 > 0));
  return m * on / std::sqrt(s2 + (1 - on));
}
} // namespace jz
