// Tree gravity's single-precision inner loops (GravityKernelsCpu.h), the
// fast path of theta > 0. This file alone is compiled with -ffast-math: the
// compiler may reassociate the float sums and take 1/sqrt from the
// reciprocal square-root instruction with a Newton step (~1e-7 relative,
// far below the opening angle's error); coincident pairs (s^2 = 0) are
// selected away explicitly, never through infinities. GCC vectorizes
// 1 / sqrt over 16 floats as a square root and a division, each from an
// estimate and a Newton step: where AVX-512 is there, the loops are written
// with its intrinsics instead (one estimate, one Newton step; same terms).
#include <algorithm>
#include <cmath>
#include <limits>

#include "GravityKernelsCpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>
#define JZ_GRAVITY_AVX512 1
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
      const float c0 = d.com[0], c1 = d.com[1], c2 = d.com[2], m = d.mass, tr = d.trace;
      const float Ixx = d.second[0], Iyy = d.second[1], Izz = d.second[2], Ixy = d.second[3],
                  Ixz = d.second[4], Iyz = d.second[5];
      for (std::size_t l = 0; l < W; ++l)
      {
        const float r0 = qx[i0 + l] - c0, r1 = qy[i0 + l] - c1, r2 = qz[i0 + l] - c2;
        const float s2 = r0 * r0 + r1 * r1 + r2 * r2 + e2;
        const float inv = 1.0f / std::sqrt(s2);
        const float inv2 = inv * inv;
        const float inv3 = inv * inv2;
        const float inv5 = inv3 * inv2;
        const float Ir0 = Ixx * r0 + Ixy * r1 + Ixz * r2;
        const float Ir1 = Ixy * r0 + Iyy * r1 + Iyz * r2;
        const float Ir2 = Ixz * r0 + Iyz * r1 + Izz * r2;
        const float rIr = r0 * Ir0 + r1 * Ir1 + r2 * Ir2;
        su[l] += m * inv + 0.5f * (3.0f * rIr * inv5 - tr * inv3);
        if (kField)
        {
          const float radial = -m * inv3 - 7.5f * rIr * inv5 * inv2 + 1.5f * tr * inv5;
          sx[l] += radial * r0 + 3.0f * Ir0 * inv5;
          sy[l] += radial * r1 + 3.0f * Ir1 * inv5;
          sz[l] += radial * r2 + 3.0f * Ir2 * inv5;
        }
      }
    }
    addLanes<kField>(su, sx, sy, sz, i0, n - i0 < W ? n - i0 : W, units, u, gx, gy, gz);
  }
}

template <bool kField>
__attribute__((always_inline)) inline void direct(const float* __restrict x,
  const float* __restrict y, const float* __restrict z, const float* __restrict m, std::size_t n,
  const float* q, const FloatUnits& units, GravitySum& sum)
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
      // r = 0, eps = 0: skipped, with no 1/0 on the way (1 / sqrt alone
      // is the reciprocal square-root instruction and one Newton step).
      const float root = 1.0f / std::sqrt(std::max(s2, std::numeric_limits<float>::min()));
      const float inv = s2 > 0 ? root : 0.0f;
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

#ifdef JZ_GRAVITY_AVX512
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

template <bool kField>
JZ_AVX512 void directAvx512(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const FloatUnits& units, GravitySum& sum)
{
  const __m512 q0 = _mm512_set1_ps(q[0]), q1 = _mm512_set1_ps(q[1]), q2 = _mm512_set1_ps(q[2]);
  const __m512 eps2 = _mm512_set1_ps(units.eps2);
  __m512 u = _mm512_setzero_ps(), g0 = u, g1 = u, g2 = u;
  for (std::size_t j = 0; j < n; j += kGravityFloatLanes)
  {
    const __m512 dx = _mm512_sub_ps(_mm512_loadu_ps(x + j), q0);
    const __m512 dy = _mm512_sub_ps(_mm512_loadu_ps(y + j), q1);
    const __m512 dz = _mm512_sub_ps(_mm512_loadu_ps(z + j), q2);
    const __m512 s2 =
      _mm512_fmadd_ps(dx, dx, _mm512_fmadd_ps(dy, dy, _mm512_fmadd_ps(dz, dz, eps2)));
    const __m512 inv = inverseSqrt(s2);
    const __m512 mi = _mm512_mul_ps(_mm512_loadu_ps(m + j), inv);
    u = _mm512_add_ps(u, mi);
    if (kField)
    {
      const __m512 mi3 = _mm512_mul_ps(mi, _mm512_mul_ps(inv, inv));
      g0 = _mm512_fmadd_ps(mi3, dx, g0);
      g1 = _mm512_fmadd_ps(mi3, dy, g1);
      g2 = _mm512_fmadd_ps(mi3, dz, g2);
    }
  }
  sum.u += units.uBack * laneSum(u);
  if (kField)
  {
    sum.g[0] += units.gBack * laneSum(g0);
    sum.g[1] += units.gBack * laneSum(g1);
    sum.g[2] += units.gBack * laneSum(g2);
  }
}

template <bool kField>
JZ_AVX512 void multipolesAvx512(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, double* u, double* gx,
  double* gy, double* gz)
{
  constexpr std::size_t W = kGravityFloatLanes;
  const __m512 e2 = _mm512_set1_ps(units.eps2), half = _mm512_set1_ps(0.5f),
               three = _mm512_set1_ps(3.0f);
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
      const __m512 inv2 = _mm512_mul_ps(inv, inv);
      const __m512 inv3 = _mm512_mul_ps(inv, inv2);
      const __m512 inv5 = _mm512_mul_ps(inv3, inv2);
      const __m512 Ixx = _mm512_set1_ps(d.second[0]), Iyy = _mm512_set1_ps(d.second[1]),
                   Izz = _mm512_set1_ps(d.second[2]), Ixy = _mm512_set1_ps(d.second[3]),
                   Ixz = _mm512_set1_ps(d.second[4]), Iyz = _mm512_set1_ps(d.second[5]);
      const __m512 Ir0 =
        _mm512_fmadd_ps(Ixx, r0, _mm512_fmadd_ps(Ixy, r1, _mm512_mul_ps(Ixz, r2)));
      const __m512 Ir1 =
        _mm512_fmadd_ps(Ixy, r0, _mm512_fmadd_ps(Iyy, r1, _mm512_mul_ps(Iyz, r2)));
      const __m512 Ir2 =
        _mm512_fmadd_ps(Ixz, r0, _mm512_fmadd_ps(Iyz, r1, _mm512_mul_ps(Izz, r2)));
      const __m512 rIr = _mm512_fmadd_ps(r0, Ir0, _mm512_fmadd_ps(r1, Ir1, _mm512_mul_ps(r2, Ir2)));
      const __m512 m = _mm512_set1_ps(d.mass), tr = _mm512_set1_ps(d.trace);
      // U = m / s + (3 rIr / s^5 - tr / s^3) / 2
      const __m512 rIr5 = _mm512_mul_ps(rIr, inv5);
      su = _mm512_fmadd_ps(m, inv, su);
      su = _mm512_fmadd_ps(half, _mm512_fmsub_ps(three, rIr5, _mm512_mul_ps(tr, inv3)), su);
      if (kField)
      {
        // radial = -m / s^3 - 7.5 rIr / s^7 + 1.5 tr / s^5
        const __m512 radial = _mm512_fmadd_ps(_mm512_set1_ps(1.5f), _mm512_mul_ps(tr, inv5),
          _mm512_fnmadd_ps(_mm512_set1_ps(7.5f), _mm512_mul_ps(rIr5, inv2),
            _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), m), inv3)));
        const __m512 i3 = _mm512_mul_ps(three, inv5);
        sx = _mm512_fmadd_ps(radial, r0, _mm512_fmadd_ps(i3, Ir0, sx));
        sy = _mm512_fmadd_ps(radial, r1, _mm512_fmadd_ps(i3, Ir1, sy));
        sz = _mm512_fmadd_ps(radial, r2, _mm512_fmadd_ps(i3, Ir2, sz));
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

bool haveAvx512()
{
  static const bool have =
    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return have;
}
#else
bool haveAvx512() { return false; }
#endif

JZ_GRAVITY_CLONES
void multipolesGeneric(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  if (field)
    multipoles<true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    multipoles<false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_CLONES
void directGeneric(const float* x, const float* y, const float* z, const float* m, std::size_t n,
  const float* q, const FloatUnits& units, bool field, GravitySum& sum)
{
  if (field)
    direct<true>(x, y, z, m, n, q, units, sum);
  else
    direct<false>(x, y, z, m, n, q, units, sum);
}
} // namespace

void applyMultipolesFloatCpu(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
#ifdef JZ_GRAVITY_AVX512
  if (haveAvx512())
    return field ? multipolesAvx512<true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz)
                 : multipolesAvx512<false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
#endif
  multipolesGeneric(nodes, k, qx, qy, qz, n, units, field, u, gx, gy, gz);
}

void sumDirectFloatCpu(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const FloatUnits& units, bool field, GravitySum& sum)
{
#ifdef JZ_GRAVITY_AVX512
  if (haveAvx512())
    return field ? directAvx512<true>(x, y, z, m, n, q, units, sum)
                 : directAvx512<false>(x, y, z, m, n, q, units, sum);
#endif
  directGeneric(x, y, z, m, n, q, units, field, sum);
}
} // namespace jz
