// Tree gravity's single-precision inner loops (GravityKernelsCpu.h), the
// fast path of theta > 0. This file alone is compiled with -ffast-math: the
// compiler may reassociate the float sums and take 1/sqrt from the
// reciprocal square-root instruction with a Newton step (~1e-7 relative,
// far below the opening angle's error); coincident pairs (s^2 = 0) are
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
#define JZ_AVX512 __attribute__((target("avx512f,avx512dq,fma")))

// 1 / sqrt(s2) to float precision (estimate, then one Newton step), 0
// where s2 = 0.
JZ_AVX512 inline __m512 inverseSqrt(__m512 s2)
{
  const __mmask16 apart = _mm512_cmp_ps_mask(s2, _mm512_setzero_ps(), _CMP_GT_OQ);
  const __m512 y = _mm512_maskz_rsqrt14_ps(apart, s2);
  const __m512 half = _mm512_mul_ps(s2, _mm512_set1_ps(0.5f));
  const __m512 h = _mm512_fnmadd_ps(_mm512_mul_ps(half, y), y, _mm512_set1_ps(1.5f));
  return _mm512_mul_ps(y, h);
}

// The sum of a vector's lanes in double, in lane order.
JZ_AVX512 inline double laneSum(__m512 v)
{
  alignas(64) float f[kGravityFloatLanes];
  _mm512_store_ps(f, v);
  double s = 0;
  for (std::size_t l = 0; l < kGravityFloatLanes; ++l)
    s += double(f[l]);
  return s;
}

// The lanes of the source block from j on that a query keeps: all but its
// own source's (own: its offset in the list, or npos).
inline __mmask16 keptLanes(std::size_t own, std::size_t j)
{
  const std::size_t d = own - j;
  return d < kGravityFloatLanes ? __mmask16(~(1u << d)) : __mmask16(0xFFFF);
}

// kQueries queries at once on the sources (in lanes): each source block is
// loaded once for all of them, and their chains of dependent operations
// interleave.
template <bool kField, int kQueries>
JZ_AVX512 void directAvx512(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, const FloatUnits& units, GravitySum* sum)
{
  __m512 q0[kQueries], q1[kQueries], q2[kQueries];
  __m512 u[kQueries], g0[kQueries], g1[kQueries], g2[kQueries];
  for (int k = 0; k < kQueries; ++k)
  {
    q0[k] = _mm512_set1_ps(q[3 * k]);
    q1[k] = _mm512_set1_ps(q[3 * k + 1]);
    q2[k] = _mm512_set1_ps(q[3 * k + 2]);
    u[k] = g0[k] = g1[k] = g2[k] = _mm512_setzero_ps();
  }
  const __m512 eps2 = _mm512_set1_ps(units.eps2);
  for (std::size_t j = 0; j < n; j += kGravityFloatLanes)
  {
    const __m512 sx = _mm512_loadu_ps(x + j), sy = _mm512_loadu_ps(y + j),
                 sz = _mm512_loadu_ps(z + j), sm = _mm512_loadu_ps(m + j);
    for (int k = 0; k < kQueries; ++k)
    {
      const __m512 dx = _mm512_sub_ps(sx, q0[k]);
      const __m512 dy = _mm512_sub_ps(sy, q1[k]);
      const __m512 dz = _mm512_sub_ps(sz, q2[k]);
      const __m512 s2 =
        _mm512_fmadd_ps(dx, dx, _mm512_fmadd_ps(dy, dy, _mm512_fmadd_ps(dz, dz, eps2)));
      const __m512 inv = inverseSqrt(s2);
      const __m512 mi = _mm512_maskz_mul_ps(keptLanes(own[k], j), sm, inv);
      u[k] = _mm512_add_ps(u[k], mi);
      if (kField)
      {
        const __m512 mi3 = _mm512_mul_ps(mi, _mm512_mul_ps(inv, inv));
        g0[k] = _mm512_fmadd_ps(mi3, dx, g0[k]);
        g1[k] = _mm512_fmadd_ps(mi3, dy, g1[k]);
        g2[k] = _mm512_fmadd_ps(mi3, dz, g2[k]);
      }
    }
  }
  for (int k = 0; k < kQueries; ++k)
  {
    sum[k].u += units.uBack * laneSum(u[k]);
    if (kField)
    {
      sum[k].g[0] += units.gBack * laneSum(g0[k]);
      sum[k].g[1] += units.gBack * laneSum(g1[k]);
      sum[k].g[2] += units.gBack * laneSum(g2[k]);
    }
  }
}

// All queries, kDirectQueries at a time, the rest one by one.
constexpr int kDirectQueries = 2;
template <bool kField>
JZ_AVX512 void directAvx512(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, GravitySum* sum)
{
  std::size_t i = 0;
  for (; i + kDirectQueries <= numQueries; i += kDirectQueries)
    directAvx512<kField, kDirectQueries>(x, y, z, m, n, q + 3 * i, own + i, units, sum + i);
  for (; i < numQueries; ++i)
    directAvx512<kField, 1>(x, y, z, m, n, q + 3 * i, own + i, units, sum + i);
}

// The quadrupole terms of GravityTerms.h factored, with J = 1.5 I, T = tr I / 2,
// w = 1 / s^2 and q = w r.J.r - T:
//   U      = (m + q w) / s
//   grad U = (2 w J r - (m + w (5 q + 2 T)) r) / s^3
// (37 vector operations per node and 16 queries, against 43 unfactored).
template <bool kField>
JZ_AVX512 void multipolesAvx512(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, double* u, double* gx,
  double* gy, double* gz)
{
  constexpr std::size_t W = kGravityFloatLanes;
  const __m512 e2 = _mm512_set1_ps(units.eps2), five = _mm512_set1_ps(5.0f);
  for (std::size_t i0 = 0; i0 < n; i0 += W)
  {
    const __m512 x = _mm512_loadu_ps(qx + i0), y = _mm512_loadu_ps(qy + i0),
                 z = _mm512_loadu_ps(qz + i0);
    __m512 su = _mm512_setzero_ps(), sx = su, sy = su, sz = su;
    for (std::size_t j = 0; j < k; ++j)
    {
      const FloatMultipole& d = nodes[j];
      const __m512 r0 = _mm512_sub_ps(x, _mm512_set1_ps(d.com[0]));
      const __m512 r1 = _mm512_sub_ps(y, _mm512_set1_ps(d.com[1]));
      const __m512 r2 = _mm512_sub_ps(z, _mm512_set1_ps(d.com[2]));
      const __m512 s2 =
        _mm512_fmadd_ps(r0, r0, _mm512_fmadd_ps(r1, r1, _mm512_fmadd_ps(r2, r2, e2)));
      const __m512 inv = inverseSqrt(s2);
      const __m512 w = _mm512_mul_ps(inv, inv);
      const __m512 Jxx = _mm512_set1_ps(d.second[0]), Jyy = _mm512_set1_ps(d.second[1]),
                   Jzz = _mm512_set1_ps(d.second[2]), Jxy = _mm512_set1_ps(d.second[3]),
                   Jxz = _mm512_set1_ps(d.second[4]), Jyz = _mm512_set1_ps(d.second[5]);
      const __m512 Jr0 =
        _mm512_fmadd_ps(Jxx, r0, _mm512_fmadd_ps(Jxy, r1, _mm512_mul_ps(Jxz, r2)));
      const __m512 Jr1 =
        _mm512_fmadd_ps(Jxy, r0, _mm512_fmadd_ps(Jyy, r1, _mm512_mul_ps(Jyz, r2)));
      const __m512 Jr2 =
        _mm512_fmadd_ps(Jxz, r0, _mm512_fmadd_ps(Jyz, r1, _mm512_mul_ps(Jzz, r2)));
      const __m512 rJr = _mm512_fmadd_ps(r0, Jr0, _mm512_fmadd_ps(r1, Jr1, _mm512_mul_ps(r2, Jr2)));
      const __m512 m = _mm512_set1_ps(d.mass), T = _mm512_set1_ps(d.halfTrace);
      const __m512 q = _mm512_fmsub_ps(rJr, w, T);
      su = _mm512_fmadd_ps(inv, _mm512_fmadd_ps(q, w, m), su);
      if (kField)
      {
        const __m512 inv3 = _mm512_mul_ps(inv, w);
        const __m512 a = _mm512_mul_ps(_mm512_add_ps(inv3, inv3), w);
        const __m512 b = _mm512_mul_ps(
          inv3, _mm512_fmadd_ps(w, _mm512_fmadd_ps(five, q, _mm512_add_ps(T, T)), m));
        sx = _mm512_fnmadd_ps(b, r0, _mm512_fmadd_ps(a, Jr0, sx));
        sy = _mm512_fnmadd_ps(b, r1, _mm512_fmadd_ps(a, Jr1, sy));
        sz = _mm512_fnmadd_ps(b, r2, _mm512_fmadd_ps(a, Jr2, sz));
      }
    }
    alignas(64) float fu[W], fx[W], fy[W], fz[W];
    _mm512_store_ps(fu, su);
    _mm512_store_ps(fx, sx);
    _mm512_store_ps(fy, sy);
    _mm512_store_ps(fz, sz);
    addLanes<kField>(fu, fx, fy, fz, i0, n - i0 < W ? n - i0 : W, units, u, gx, gy, gz);
  }
}

#define JZ_AVX2 __attribute__((target("avx2,fma")))

// 1 / sqrt(s2) to float precision from its estimate y (one Newton step).
JZ_AVX2 inline __m256 newtonStep(__m256 s2, __m256 y)
{
  const __m256 half = _mm256_mul_ps(s2, _mm256_set1_ps(0.5f));
  const __m256 h = _mm256_fnmadd_ps(_mm256_mul_ps(half, y), y, _mm256_set1_ps(1.5f));
  return _mm256_mul_ps(y, h);
}

// The same on the lanes of `keep`, 0 elsewhere and where s2 < FLT_MIN (the
// estimate takes a subnormal for 0, so such a pair counts as coincident).
// Only where eps^2 < FLT_MIN: otherwise every s2 >= eps^2 is normal.
JZ_AVX2 inline __m256 inverseSqrt(__m256 s2, __m256 keep)
{
  const __m256 apart =
    _mm256_cmp_ps(s2, _mm256_set1_ps(std::numeric_limits<float>::min()), _CMP_GE_OQ);
  return newtonStep(s2, _mm256_and_ps(_mm256_and_ps(apart, keep), _mm256_rsqrt_ps(s2)));
}

// The sum of a vector's lanes in double, in lane order.
JZ_AVX2 inline double laneSum(__m256 v)
{
  alignas(32) float f[8];
  _mm256_store_ps(f, v);
  double s = 0;
  for (std::size_t l = 0; l < 8; ++l)
    s += double(f[l]);
  return s;
}

// All lanes of the 8-source block from j on but the query's own source's
// (own: its offset in the list, or npos).
JZ_AVX2 inline __m256 keptLanes8(std::size_t own, std::size_t j)
{
  const float at = float(std::min<std::size_t>(own - j, 8));
  return _mm256_cmp_ps(_mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_ps(at), _CMP_NEQ_OQ);
}

// directAvx512 on 8 lanes. kApart: eps^2 < FLT_MIN, so each pair's s2 is
// tested; otherwise only the block holding a query's own source is masked.
template <bool kField, int kQueries, bool kApart>
JZ_AVX2 void directAvx2(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, const FloatUnits& units, GravitySum* sum)
{
  __m256 q0[kQueries], q1[kQueries], q2[kQueries];
  __m256 u[kQueries], g0[kQueries], g1[kQueries], g2[kQueries];
  for (int k = 0; k < kQueries; ++k)
  {
    q0[k] = _mm256_set1_ps(q[3 * k]);
    q1[k] = _mm256_set1_ps(q[3 * k + 1]);
    q2[k] = _mm256_set1_ps(q[3 * k + 2]);
    u[k] = g0[k] = g1[k] = g2[k] = _mm256_setzero_ps();
  }
  const __m256 eps2 = _mm256_set1_ps(units.eps2);
  for (std::size_t j = 0; j < n; j += 8)
  {
    const __m256 sx = _mm256_loadu_ps(x + j), sy = _mm256_loadu_ps(y + j),
                 sz = _mm256_loadu_ps(z + j), sm = _mm256_loadu_ps(m + j);
    for (int k = 0; k < kQueries; ++k)
    {
      const __m256 dx = _mm256_sub_ps(sx, q0[k]);
      const __m256 dy = _mm256_sub_ps(sy, q1[k]);
      const __m256 dz = _mm256_sub_ps(sz, q2[k]);
      const __m256 s2 =
        _mm256_fmadd_ps(dx, dx, _mm256_fmadd_ps(dy, dy, _mm256_fmadd_ps(dz, dz, eps2)));
      __m256 inv, mi;
      if (kApart)
      {
        inv = inverseSqrt(s2, keptLanes8(own[k], j));
        mi = _mm256_mul_ps(sm, inv);
      }
      else
      {
        inv = newtonStep(s2, _mm256_rsqrt_ps(s2));
        mi = _mm256_mul_ps(sm, inv);
        if (own[k] - j < 8)
          mi = _mm256_and_ps(mi, keptLanes8(own[k], j));
      }
      u[k] = _mm256_add_ps(u[k], mi);
      if (kField)
      {
        const __m256 mi3 = _mm256_mul_ps(mi, _mm256_mul_ps(inv, inv));
        g0[k] = _mm256_fmadd_ps(mi3, dx, g0[k]);
        g1[k] = _mm256_fmadd_ps(mi3, dy, g1[k]);
        g2[k] = _mm256_fmadd_ps(mi3, dz, g2[k]);
      }
    }
  }
  for (int k = 0; k < kQueries; ++k)
  {
    sum[k].u += units.uBack * laneSum(u[k]);
    if (kField)
    {
      sum[k].g[0] += units.gBack * laneSum(g0[k]);
      sum[k].g[1] += units.gBack * laneSum(g1[k]);
      sum[k].g[2] += units.gBack * laneSum(g2[k]);
    }
  }
}

template <bool kField, bool kApart>
JZ_AVX2 void directAvx2(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, GravitySum* sum)
{
  std::size_t i = 0;
  for (; i + kDirectQueries <= numQueries; i += kDirectQueries)
    directAvx2<kField, kDirectQueries, kApart>(x, y, z, m, n, q + 3 * i, own + i, units, sum + i);
  for (; i < numQueries; ++i)
    directAvx2<kField, 1, kApart>(x, y, z, m, n, q + 3 * i, own + i, units, sum + i);
}

// multipolesAvx512's terms on 8 queries at a time (kApart as for the direct
// sum).
template <bool kField, bool kApart>
JZ_AVX2 void multipolesAvx2(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, double* u, double* gx,
  double* gy, double* gz)
{
  constexpr std::size_t W = 8;
  const __m256 e2 = _mm256_set1_ps(units.eps2), five = _mm256_set1_ps(5.0f);
  const __m256 all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  for (std::size_t i0 = 0; i0 < n; i0 += W)
  {
    const __m256 x = _mm256_loadu_ps(qx + i0), y = _mm256_loadu_ps(qy + i0),
                 z = _mm256_loadu_ps(qz + i0);
    __m256 su = _mm256_setzero_ps(), sx = su, sy = su, sz = su;
    for (std::size_t j = 0; j < k; ++j)
    {
      const FloatMultipole& d = nodes[j];
      const __m256 r0 = _mm256_sub_ps(x, _mm256_set1_ps(d.com[0]));
      const __m256 r1 = _mm256_sub_ps(y, _mm256_set1_ps(d.com[1]));
      const __m256 r2 = _mm256_sub_ps(z, _mm256_set1_ps(d.com[2]));
      const __m256 s2 =
        _mm256_fmadd_ps(r0, r0, _mm256_fmadd_ps(r1, r1, _mm256_fmadd_ps(r2, r2, e2)));
      const __m256 inv = kApart ? inverseSqrt(s2, all) : newtonStep(s2, _mm256_rsqrt_ps(s2));
      const __m256 w = _mm256_mul_ps(inv, inv);
      const __m256 Jxx = _mm256_set1_ps(d.second[0]), Jyy = _mm256_set1_ps(d.second[1]),
                   Jzz = _mm256_set1_ps(d.second[2]), Jxy = _mm256_set1_ps(d.second[3]),
                   Jxz = _mm256_set1_ps(d.second[4]), Jyz = _mm256_set1_ps(d.second[5]);
      const __m256 Jr0 = _mm256_fmadd_ps(Jxx, r0, _mm256_fmadd_ps(Jxy, r1, _mm256_mul_ps(Jxz, r2)));
      const __m256 Jr1 = _mm256_fmadd_ps(Jxy, r0, _mm256_fmadd_ps(Jyy, r1, _mm256_mul_ps(Jyz, r2)));
      const __m256 Jr2 = _mm256_fmadd_ps(Jxz, r0, _mm256_fmadd_ps(Jyz, r1, _mm256_mul_ps(Jzz, r2)));
      const __m256 rJr = _mm256_fmadd_ps(r0, Jr0, _mm256_fmadd_ps(r1, Jr1, _mm256_mul_ps(r2, Jr2)));
      const __m256 m = _mm256_set1_ps(d.mass), T = _mm256_set1_ps(d.halfTrace);
      const __m256 q = _mm256_fmsub_ps(rJr, w, T);
      su = _mm256_fmadd_ps(inv, _mm256_fmadd_ps(q, w, m), su);
      if (kField)
      {
        const __m256 inv3 = _mm256_mul_ps(inv, w);
        const __m256 a = _mm256_mul_ps(_mm256_add_ps(inv3, inv3), w);
        const __m256 b =
          _mm256_mul_ps(inv3, _mm256_fmadd_ps(w, _mm256_fmadd_ps(five, q, _mm256_add_ps(T, T)), m));
        sx = _mm256_fnmadd_ps(b, r0, _mm256_fmadd_ps(a, Jr0, sx));
        sy = _mm256_fnmadd_ps(b, r1, _mm256_fmadd_ps(a, Jr1, sy));
        sz = _mm256_fnmadd_ps(b, r2, _mm256_fmadd_ps(a, Jr2, sz));
      }
    }
    alignas(32) float fu[W], fx[W], fy[W], fz[W];
    _mm256_store_ps(fu, su);
    _mm256_store_ps(fx, sx);
    _mm256_store_ps(fy, sy);
    _mm256_store_ps(fz, sz);
    addLanes<kField>(fu, fx, fy, fz, i0, n - i0 < W ? n - i0 : W, units, u, gx, gy, gz);
  }
}

// The kernels of each instruction set, picked by GCC's resolver
// (GravityKernelsCpu.h): AVX-512 and AVX2 intrinsics, else the portable loops.
JZ_GRAVITY_V4 void multipolesFloat(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  if (field)
    multipolesAvx512<true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    multipolesAvx512<false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_V3 void multipolesFloat(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  const bool tiny = units.eps2 < std::numeric_limits<float>::min();
  if (field)
    tiny ? multipolesAvx2<true, true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz)
         : multipolesAvx2<true, false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    tiny ? multipolesAvx2<false, true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz)
         : multipolesAvx2<false, false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_V4 void directFloat(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum)
{
  if (field)
    directAvx512<true>(x, y, z, m, n, q, own, numQueries, units, sum);
  else
    directAvx512<false>(x, y, z, m, n, q, own, numQueries, units, sum);
}

JZ_GRAVITY_V3 void directFloat(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum)
{
  const bool tiny = units.eps2 < std::numeric_limits<float>::min();
  if (field)
    tiny ? directAvx2<true, true>(x, y, z, m, n, q, own, numQueries, units, sum)
         : directAvx2<true, false>(x, y, z, m, n, q, own, numQueries, units, sum);
  else
    tiny ? directAvx2<false, true>(x, y, z, m, n, q, own, numQueries, units, sum)
         : directAvx2<false, false>(x, y, z, m, n, q, own, numQueries, units, sum);
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
