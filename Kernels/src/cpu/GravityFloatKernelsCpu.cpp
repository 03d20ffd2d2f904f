// Tree gravity's single-precision inner loops (GravityKernelsCpu.h), the
// fast path of theta > 0. This file alone is compiled with -ffast-math: the
// compiler may reassociate the float sums and take 1/sqrt from the
// reciprocal square-root instruction with a Newton step (~1e-7 relative,
// far below the opening angle's error); coincident pairs (s^2 = 0) are
// selected away explicitly, never through infinities.
#include <cmath>

#include "GravityKernelsCpu.h"

namespace jz
{
namespace
{
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
    const std::size_t lanes = n - i0 < W ? n - i0 : W;
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
}

template <bool kField>
__attribute__((always_inline)) inline void direct(const double* x, const double* y, const double* z,
  const float* m, std::size_t n, const double* q, const FloatUnits& units, GravitySum& sum)
{
  float u[kGravityFloatLanes] = {}, g0[kGravityFloatLanes] = {}, g1[kGravityFloatLanes] = {},
        g2[kGravityFloatLanes] = {};
  const double q0 = q[0], q1 = q[1], q2 = q[2], L = units.invLength;
  const float eps2 = units.eps2;
  for (std::size_t j0 = 0; j0 < n; j0 += kGravityFloatLanes)
    for (std::size_t l = 0; l < kGravityFloatLanes; ++l)
    {
      const std::size_t j = j0 + l;
      const float dx = float((x[j] - q0) * L), dy = float((y[j] - q1) * L),
                  dz = float((z[j] - q2) * L);
      const float s2 = dx * dx + dy * dy + dz * dz + eps2;
      const bool apart = s2 > 0; // r = 0, eps = 0: skipped, with no 1/0 on the way
      const float inv = (apart ? 1.0f : 0.0f) / std::sqrt(apart ? s2 : 1.0f);
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
} // namespace

JZ_GRAVITY_CLONES
void applyMultipolesFloatCpu(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz)
{
  if (field)
    multipoles<true>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
  else
    multipoles<false>(nodes, k, qx, qy, qz, n, units, u, gx, gy, gz);
}

JZ_GRAVITY_CLONES
void sumDirectFloatCpu(const double* x, const double* y, const double* z, const float* m,
  std::size_t n, const double* q, const FloatUnits& units, bool field, GravitySum& sum)
{
  if (field)
    direct<true>(x, y, z, m, n, q, units, sum);
  else
    direct<false>(x, y, z, m, n, q, units, sum);
}
} // namespace jz
