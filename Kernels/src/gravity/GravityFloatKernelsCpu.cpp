// Tree gravity's single-precision inner loops (GravityKernelsCpu.h), the
// fast path of theta > 0. This file alone is compiled with -ffast-math: the
// compiler may take 1/sqrt from the reciprocal square-root instruction with
// a Newton step (~1e-7 relative, far below the opening angle's error), but
// neither reassociates nor fuses (so that the loops with and without the
// field sum the potential's terms alike); coincident pairs (s^2 = 0) are
// selected away explicitly, never through infinities. GCC vectorizes
// 1 / sqrt over 16 floats as a square root and a division, each from an
// estimate and a Newton step: on AVX-512 and on AVX2 with FMA the loops are
// written with their intrinsics instead (one estimate, one Newton step; same
// terms), the portable loops elsewhere.
#include <algorithm>
#include <cmath>
#include <limits>

#include "gravity/GravityKernelsCpu.h"

#if JZ_GRAVITY_VERSIONS
#include <immintrin.h>
#endif

namespace jz
{
namespace
{
// The float sums of the query lanes from i0 on added to their double outputs,
// scaled back to the caller's units.
template <bool kField>
__attribute__((always_inline)) inline void addLanes(const float* su, const float* sx,
  const float* sy, const float* sz, std::size_t i0, std::size_t lanes, const FloatUnits& units,
  double* __restrict u, double* __restrict gx, double* __restrict gy, double* __restrict gz)
{
  for (std::size_t l = 0; l < lanes; ++l)
  {
    u[i0 + l] += units.uBack * double(su[l]);
    if (kField)
    {
      gx[i0 + l] += units.gBack * double(sx[l]);
      gy[i0 + l] += units.gBack * double(sy[l]);
      gz[i0 + l] += units.gBack * double(sz[l]);
    }
  }
}

// The loops for U alone (kField false) or U and grad U; inlined into each
// clone below, so compiled for its instruction set.
template <bool kField>
__attribute__((always_inline)) inline void multipoles(const FloatMultipole* nodes, std::size_t k,
  const float* __restrict qx, const float* __restrict qy, const float* __restrict qz, std::size_t n,
  const FloatUnits& units, double* __restrict u, double* __restrict gx, double* __restrict gy,
  double* __restrict gz)
{
  constexpr std::size_t W = kGravityFloatLanes;
  const float e2 = units.eps2;
  for (std::size_t i0 = 0; i0 < n; i0 += W)
  {
    float su[W] = {}, sx[W] = {}, sy[W] = {}, sz[W] = {};
    for (std::size_t j = 0; j < k; ++j)
    {
      const FloatMultipole& d = nodes[j];
      const float c0 = d.com[0], c1 = d.com[1], c2 = d.com[2], m = d.mass, T = d.halfTrace;
      const float Jxx = d.second[0], Jyy = d.second[1], Jzz = d.second[2], Jxy = d.second[3],
                  Jxz = d.second[4], Jyz = d.second[5];
      for (std::size_t l = 0; l < W; ++l)
      {
        const float r0 = qx[i0 + l] - c0, r1 = qy[i0 + l] - c1, r2 = qz[i0 + l] - c2;
        const float s2 = r0 * r0 + r1 * r1 + r2 * r2 + e2;
        const float inv = 1.0f / std::sqrt(s2);
        const float w = inv * inv;
        const float Jr0 = Jxx * r0 + Jxy * r1 + Jxz * r2;
        const float Jr1 = Jxy * r0 + Jyy * r1 + Jyz * r2;
        const float Jr2 = Jxz * r0 + Jyz * r1 + Jzz * r2;
        const float q = (r0 * Jr0 + r1 * Jr1 + r2 * Jr2) * w - T;
        su[l] += inv * (m + q * w);
        if (kField)
        {
          const float inv3 = inv * w;
          const float a = 2.0f * inv3 * w;
          const float b = inv3 * (m + w * (5.0f * q + 2.0f * T));
          sx[l] += a * Jr0 - b * r0;
          sy[l] += a * Jr1 - b * r1;
          sz[l] += a * Jr2 - b * r2;
        }
      }
    }
    addLanes<kField>(su, sx, sy, sz, i0, n - i0 < W ? n - i0 : W, units, u, gx, gy, gz);
  }
}

template <bool kField>
__attribute__((always_inline)) inline void direct(const float* __restrict x,
  const float* __restrict y, const float* __restrict z, const float* __restrict m, std::size_t n,
  const float* q, std::size_t own, const FloatUnits& units, GravitySum& sum)
{
  float u[kGravityFloatLanes] = {}, g0[kGravityFloatLanes] = {}, g1[kGravityFloatLanes] = {},
        g2[kGravityFloatLanes] = {};
  const float q0 = q[0], q1 = q[1], q2 = q[2], eps2 = units.eps2;
  for (std::size_t j0 = 0; j0 < n; j0 += kGravityFloatLanes)
    for (std::size_t l = 0; l < kGravityFloatLanes; ++l)
    {
      const std::size_t j = j0 + l;
      const float dx = x[j] - q0, dy = y[j] - q1, dz = z[j] - q2;
      const float s2 = dx * dx + dy * dy + dz * dz + eps2;
      // r = 0, eps = 0, or the query's own source: skipped, with no 1/0 on
      // the way (1 / sqrt alone is the reciprocal square-root instruction
      // and one Newton step).
      const float root = 1.0f / std::sqrt(std::max(s2, std::numeric_limits<float>::min()));
      const float inv = s2 > 0 && j != own ? root : 0.0f;
      const float mi = m[j] * inv;
      u[l] += mi;
      if (kField)
      {
        const float mi3 = mi * inv * inv;
        g0[l] += mi3 * dx;
        g1[l] += mi3 * dy;
        g2[l] += mi3 * dz;
      }
    }
  double su = 0, sg[3] = { 0, 0, 0 };
  for (std::size_t l = 0; l < kGravityFloatLanes; ++l)
  {
    su += double(u[l]);
    sg[0] += double(g0[l]);
    sg[1] += double(g1[l]);
    sg[2] += double(g2[l]);
  }
  sum.u += units.uBack * su;
  for (int k = 0; k < 3; ++k)
    sum.g[k] += units.gBack * sg[k];
}

#if JZ_GRAVITY_VERSIONS
// Queries the direct sums take at once.
constexpr int kDirectQueries = 2;

// The intrinsic loops, written once (GravityFloatLanes.inc) and compiled
// once per instruction set: each copy inherits its target from the pragma
// around it, so no function of one set can call into the other's.

// AVX-512: 16 lanes; a query's own source is masked out of its product.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,fma")
namespace avx512
{
struct Lanes
{
  using Vec = __m512;
  static constexpr std::size_t kWidth = kGravityFloatLanes;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec a) { _mm512_store_ps(p, a); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec fnmadd(Vec a, Vec b, Vec c) { return _mm512_fnmadd_ps(a, b, c); }
  static Vec fmsub(Vec a, Vec b, Vec c) { return _mm512_fmsub_ps(a, b, c); }

  // 1 / sqrt(s2) to float precision (estimate, then one Newton step), 0
  // where s2 = 0.
  static Vec inverseSqrt(Vec s2)
  {
    const __mmask16 apart = _mm512_cmp_ps_mask(s2, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __m512 y = _mm512_maskz_rsqrt14_ps(apart, s2);
    const __m512 half = _mm512_mul_ps(s2, _mm512_set1_ps(0.5f));
    const __m512 h = _mm512_fnmadd_ps(_mm512_mul_ps(half, y), y, _mm512_set1_ps(1.5f));
    return _mm512_mul_ps(y, h);
  }

  // The lanes of the source block from j on that a query keeps: all but its
  // own source's (own: its offset in the list, or npos).
  static __mmask16 keptLanes(std::size_t own, std::size_t j)
  {
    const std::size_t d = own - j;
    return d < kWidth ? __mmask16(~(1u << d)) : __mmask16(0xFFFF);
  }

  // A source block's 1 / s and m / s for one query.
  static void weigh(Vec s2, Vec m, std::size_t own, std::size_t j, Vec& inv, Vec& mi)
  {
    inv = inverseSqrt(s2);
    mi = _mm512_maskz_mul_ps(keptLanes(own, j), m, inv);
  }
};

#include "gravity/GravityFloatLanes.inc"
} // namespace avx512
#pragma GCC pop_options

// AVX2 with FMA: 8 lanes; masks are vectors. kApart (eps^2 < FLT_MIN): each
// pair's s2 is tested (the estimate takes a subnormal for 0, so such a pair
// counts as coincident); otherwise every s2 >= eps^2 is normal and only the
// block holding a query's own source is masked.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2
{
struct Ops
{
  using Vec = __m256;
  static constexpr std::size_t kWidth = 8;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec a) { _mm256_store_ps(p, a); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec fnmadd(Vec a, Vec b, Vec c) { return _mm256_fnmadd_ps(a, b, c); }
  static Vec fmsub(Vec a, Vec b, Vec c) { return _mm256_fmsub_ps(a, b, c); }

  // 1 / sqrt(s2) to float precision from its estimate y (one Newton step).
  static Vec newtonStep(Vec s2, Vec y)
  {
    const __m256 half = _mm256_mul_ps(s2, _mm256_set1_ps(0.5f));
    const __m256 h = _mm256_fnmadd_ps(_mm256_mul_ps(half, y), y, _mm256_set1_ps(1.5f));
    return _mm256_mul_ps(y, h);
  }

  // The same on the lanes of `keep`, 0 elsewhere and where s2 < FLT_MIN.
  static Vec inverseSqrt(Vec s2, Vec keep)
  {
    const __m256 apart =
      _mm256_cmp_ps(s2, _mm256_set1_ps(std::numeric_limits<float>::min()), _CMP_GE_OQ);
    return newtonStep(s2, _mm256_and_ps(_mm256_and_ps(apart, keep), _mm256_rsqrt_ps(s2)));
  }

  // All lanes of the 8-source block from j on but the query's own source's
  // (own: its offset in the list, or npos).
  static Vec keptLanes(std::size_t own, std::size_t j)
  {
    const float at = float(std::min<std::size_t>(own - j, 8));
    return _mm256_cmp_ps(_mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_ps(at), _CMP_NEQ_OQ);
  }
};

template <bool kApart>
struct Lanes : Ops
{
  static Vec inverseSqrt(Vec s2)
  {
    if (kApart)
      return Ops::inverseSqrt(s2, _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
    return newtonStep(s2, _mm256_rsqrt_ps(s2));
  }

  static void weigh(Vec s2, Vec m, std::size_t own, std::size_t j, Vec& inv, Vec& mi)
  {
    if (kApart)
    {
      inv = Ops::inverseSqrt(s2, keptLanes(own, j));
      mi = _mm256_mul_ps(m, inv);
    }
    else
    {
      inv = newtonStep(s2, _mm256_rsqrt_ps(s2));
      mi = _mm256_mul_ps(m, inv);
      if (own - j < 8)
        mi = _mm256_and_ps(mi, keptLanes(own, j));
    }
  }
};

#include "gravity/GravityFloatLanes.inc"
} // namespace avx2
#pragma GCC pop_options

// The kernels of each instruction set, picked by GCC's resolver
// (GravityKernelsCpu.h): AVX-512 and AVX2 intrinsics, else the portable loops.
JZ_GRAVITY_V4 void multipolesFloat(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  if (field)
    avx512::multipoles<avx512::Lanes, true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    avx512::multipoles<avx512::Lanes, false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_V3 void multipolesFloat(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  using avx2::Lanes;
  const bool tiny = units.eps2 < std::numeric_limits<float>::min();
  if (field)
    tiny ? avx2::multipoles<Lanes<true>, true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz)
         : avx2::multipoles<Lanes<false>, true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    tiny ? avx2::multipoles<Lanes<true>, false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz)
         : avx2::multipoles<Lanes<false>, false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_V4 void directFloat(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum)
{
  if (field)
    avx512::direct<avx512::Lanes, true>(x, y, z, m, n, q, own, numQueries, units, sum);
  else
    avx512::direct<avx512::Lanes, false>(x, y, z, m, n, q, own, numQueries, units, sum);
}

JZ_GRAVITY_V3 void directFloat(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum)
{
  using avx2::Lanes;
  const bool tiny = units.eps2 < std::numeric_limits<float>::min();
  if (field)
    tiny ? avx2::direct<Lanes<true>, true>(x, y, z, m, n, q, own, numQueries, units, sum)
         : avx2::direct<Lanes<false>, true>(x, y, z, m, n, q, own, numQueries, units, sum);
  else
    tiny ? avx2::direct<Lanes<true>, false>(x, y, z, m, n, q, own, numQueries, units, sum)
         : avx2::direct<Lanes<false>, false>(x, y, z, m, n, q, own, numQueries, units, sum);
}
#endif

JZ_GRAVITY_BASE void multipolesFloat(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  if (field)
    multipoles<true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    multipoles<false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_BASE void directFloat(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum)
{
  for (std::size_t i = 0; i < numQueries; ++i)
    if (field)
      direct<true>(x, y, z, m, n, q + 3 * i, own[i], units, sum[i]);
    else
      direct<false>(x, y, z, m, n, q + 3 * i, own[i], units, sum[i]);
}
} // namespace

void applyMultipolesFloatCpu(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  multipolesFloat(nodes, k, qx, qy, qz, n, units, field, u, gx, gy, gz);
}

void sumDirectFloatCpu(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum)
{
  directFloat(x, y, z, m, n, q, own, numQueries, units, field, sum);
}
} // namespace jz
