// The float pass of PotentialCentreFloatSums.h. The members become float
// offsets from the first in FloatUnits (toFloatUnitsCpu: a power-of-two
// length above the extent, so every offset is below 1); each pair's term
// t~ = m / s is taken once for both ends from the reciprocal square-root
// estimate and a Newton step, and the pass also sums E_i = sum_j m_j / s~^2.
// In these units, with u = 2^-24 and s the exact distance (softened):
//  - each float coordinate is off by at most u, so each difference by
//    2u + u |dx| and the distance by 2u s + c, c = 2 sqrt(3) u (1 + u);
//  - the sum of squares adds 3u, the estimate and Newton step 1e-6 (the
//    estimate is within 1.5 2^-12 on every x86 CPU, the step squares that
//    to 2e-7 plus its own three roundings), the mass and product 2u (the
//    masses normal floats, eps^2 finite: else the pass gives up);
// so |t - t~| <= eps_r t~ + K m / s~^2 with eps_r = 2e-6 and K = 4.6u,
// provided c / s~ <= 1/8 for every pair (s~^2 >= (32 u)^2: closer members
// make the pass give up). Without softening, a pair at one point in float
// adds nothing, as in the definition, if every such pair is at one point in
// double (checked after the pass; else it gives up).
// Each sum adds its terms through at most n + 8 roundings: gamma = (n + 8) u.
// Hence U_i lies within [U~ (1 - eps_r) / (1 + gamma) - K E~ / (1 - gamma),
// U~ (1 + eps_r) / (1 - gamma) + K E~ / (1 - gamma)], rounded outward.
#include "halo/PotentialCentreFloatSums.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "gravity/GravityKernelsCpu.h"
#include "halo/PotentialCentreBounds.h"

#if JZ_GRAVITY_VERSIONS
#include <immintrin.h>
#endif

namespace jz
{
namespace
{
constexpr float kUnit = 1.0f / 16777216.0f; // 2^-24
constexpr double kU = 1.0 / 16777216.0;
constexpr double kRelative = 2e-6;                    // eps_r
constexpr double kPositionGain = 4.6 * kU;            // K
constexpr float kMinS2 = (32 * kUnit) * (32 * kUnit); // c / s~ <= 1/8
constexpr std::size_t kLanes = 8;
// Padding members: massless, farther than any member (offsets below 1).
constexpr float kFarAway = 4.0f;

#if JZ_GRAVITY_VERSIONS
#define JZ_AVX2 __attribute__((target("avx2,fma")))

JZ_AVX2 inline float laneSum(__m256 v)
{
  alignas(32) float f[kLanes];
  _mm256_store_ps(f, v);
  float s = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
    s += f[l];
  return s;
}

// Adds every pair's terms (j > i) to u and e at both ends; returns the
// smallest s~^2. The arrays hold whole lanes past n (massless, far away);
// i's row starts at its lane block, the lanes up to i masked off. With
// skipCoincident (eps = 0) a pair with s~^2 = 0 adds nothing and is left
// out of the smallest; coincident says whether there was one.
JZ_GRAVITY_V3 float pairSums(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, float eps2, bool skipCoincident, float* u, float* e, bool& coincident)
{
  const __m256 vEps2 = _mm256_set1_ps(eps2), half = _mm256_set1_ps(0.5f),
               threeHalves = _mm256_set1_ps(1.5f), zero = _mm256_setzero_ps(),
               infinity = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256 minS2 = infinity, atOnePoint = zero;
  for (std::size_t i = 0; i < n; ++i)
  {
    const __m256 xi = _mm256_set1_ps(x[i]), yi = _mm256_set1_ps(y[i]), zi = _mm256_set1_ps(z[i]),
                 mi = _mm256_set1_ps(m[i]);
    __m256 ui = _mm256_setzero_ps(), ei = _mm256_setzero_ps();
    const std::size_t j0 = (i + 1) / kLanes * kLanes;
    for (std::size_t j = j0; j < n; j += kLanes)
    {
      const __m256 dx = _mm256_sub_ps(_mm256_load_ps(x + j), xi);
      const __m256 dy = _mm256_sub_ps(_mm256_load_ps(y + j), yi);
      const __m256 dz = _mm256_sub_ps(_mm256_load_ps(z + j), zi);
      __m256 s2 = _mm256_fmadd_ps(dx, dx, _mm256_fmadd_ps(dy, dy, _mm256_fmadd_ps(dz, dz, vEps2)));
      const __m256 est = _mm256_rsqrt_ps(s2);
      __m256 inv = _mm256_mul_ps(
        est, _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_mul_ps(half, s2), est), est, threeHalves));
      if (j == j0) // only the lanes past i
      {
        const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
          _mm256_add_epi32(iota, _mm256_set1_epi32(int(j))), _mm256_set1_epi32(int(i))));
        inv = _mm256_and_ps(inv, keep);
        s2 = _mm256_blendv_ps(infinity, s2, keep);
      }
      if (skipCoincident)
      {
        const __m256 apart = _mm256_cmp_ps(s2, zero, _CMP_GT_OQ);
        atOnePoint = _mm256_or_ps(atOnePoint, _mm256_cmp_ps(s2, zero, _CMP_EQ_OQ));
        inv = _mm256_and_ps(inv, apart);
        s2 = _mm256_blendv_ps(infinity, s2, apart);
      }
      minS2 = _mm256_min_ps(minS2, s2);
      const __m256 aj = _mm256_mul_ps(_mm256_load_ps(m + j), inv);
      ui = _mm256_add_ps(ui, aj);
      ei = _mm256_fmadd_ps(aj, inv, ei);
      const __m256 ai = _mm256_mul_ps(mi, inv);
      _mm256_store_ps(u + j, _mm256_add_ps(_mm256_load_ps(u + j), ai));
      _mm256_store_ps(e + j, _mm256_fmadd_ps(ai, inv, _mm256_load_ps(e + j)));
    }
    u[i] += laneSum(ui);
    e[i] += laneSum(ei);
  }
  coincident = _mm256_movemask_ps(atOnePoint) != 0;
  alignas(32) float f[kLanes];
  _mm256_store_ps(f, minS2);
  return *std::min_element(f, f + kLanes);
}
#endif

JZ_GRAVITY_BASE float pairSums(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, float eps2, bool skipCoincident, float* u, float* e, bool& coincident)
{
  float minS2 = std::numeric_limits<float>::infinity();
  coincident = false;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
    {
      const float dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
      const float s2 = dx * dx + dy * dy + dz * dz + eps2;
      if (skipCoincident && s2 == 0)
      {
        coincident = true;
        continue;
      }
      minS2 = std::min(minS2, s2);
      const float inv = s2 > 0 ? 1.0f / std::sqrt(s2) : 0.0f;
      const float aj = m[j] * inv, ai = m[i] * inv;
      u[i] += aj;
      e[i] += aj * inv;
      u[j] += ai;
      e[j] += ai * inv;
    }
  return minS2;
}

// Room for n members and whole lanes past them, 32-byte aligned.
struct FloatMembers
{
  std::vector<float> storage;
  float *x, *y, *z, *m, *u, *e;
  explicit FloatMembers(std::size_t n)
  {
    const std::size_t padded = (n + kLanes - 1) / kLanes * kLanes + kLanes;
    storage.assign(6 * padded + kLanes, 0.0f);
    float* at = storage.data();
    while (reinterpret_cast<std::uintptr_t>(at) % 32 != 0)
      ++at;
    float* field[6];
    for (std::size_t k = 0; k < 6; ++k)
      field[k] = at + k * padded;
    x = field[0], y = field[1], z = field[2], m = field[3], u = field[4], e = field[5];
    std::fill(x + n, x + padded, kFarAway);
    std::fill(y + n, y + padded, kFarAway);
    std::fill(z + n, z + padded, kFarAway);
  }
};

// Whether the members with equal float offsets are at one point in double
// too: then the pairs the pass skipped are exactly those the definition
// skips (coincident, eps = 0), each adding nothing.
bool floatTwinsCoincide(
  const double* x, const double* y, const double* z, const FloatMembers& f, std::size_t n)
{
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i)
    order[i] = i;
  auto key = [&](std::size_t i) { return std::make_tuple(f.x[i], f.y[i], f.z[i]); };
  std::sort(
    order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (std::size_t k = 1; k < n; ++k)
  {
    const std::size_t a = order[k - 1], b = order[k];
    if (key(a) == key(b) && (x[a] != x[b] || y[a] != y[b] || z[a] != z[b]))
      return false;
  }
  return true;
}
} // namespace

bool potentialCentreCandidatesByFloatSums(const double* x, const double* y, const double* z,
  const double* m, std::size_t n, double eps2, std::size_t maxCandidates,
  std::vector<std::pair<double, std::size_t>>& out)
{
  out.clear();
  if (n == 0)
    return true;
  const double origin[3] = { x[0], y[0], z[0] };
  double extent = 0, maxMass = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    extent = std::max({ extent, std::abs(x[i] - origin[0]), std::abs(y[i] - origin[1]),
      std::abs(z[i] - origin[2]) });
    maxMass = std::max(maxMass, m[i]);
  }
  const FloatUnits units(extent, maxMass, eps2);
  // Every mass and eps^2 a normal float in these units (else no relative bound).
  for (std::size_t i = 0; i < n; ++i)
    if (m[i] != 0 && !(m[i] * units.invMass >= 0x1p-100))
      return false;
  if (!(units.eps2 <= 0x1p100f))
    return false;
  FloatMembers f(n);
  toFloatUnitsCpu(x, y, z, m, n, origin, units, f.x, f.y, f.z, f.m);
  bool coincident = false;
  if (pairSums(f.x, f.y, f.z, f.m, n, units.eps2, eps2 == 0, f.u, f.e, coincident) < kMinS2)
    return false; // members closer than float resolves
  if (coincident && !floatTwinsCoincide(x, y, z, f, n))
    return false; // members apart in double at one point in float
  const double gamma = double(n + 8) * kU / (1 - double(n + 8) * kU);
  std::vector<double> upper(n);
  double bestLower = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const double sum = f.u[i], position = kPositionGain * double(f.e[i]) / (1 - gamma);
    upper[i] = (sum * (1 + kRelative) / (1 - gamma) + position) * units.uBack * (1 + 1e-12);
    const double lower = (sum * (1 - kRelative) / (1 + gamma) - position) * units.uBack;
    bestLower = std::max(bestLower, lower * (1 - 1e-12));
  }
  const double keepFrom = bestLower * (1 - kCentreBoundMargin);
  for (std::size_t i = 0; i < n; ++i)
    if (upper[i] >= keepFrom)
      out.emplace_back(upper[i], i);
  if (out.size() > maxCandidates)
  {
    out.clear();
    return false;
  }
  sortCandidates(out);
  return true;
}
} // namespace jz
