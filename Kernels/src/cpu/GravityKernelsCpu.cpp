// Tree gravity's inner loops (GravityKernelsCpu.h). The loops are written so
// that they vectorize without reassociation: across query points for a
// multipole, across kGravityLanes partial sums for the direct sum.
#include "GravityKernelsCpu.h"

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define JZ_GRAVITY_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define JZ_GRAVITY_CLONES
#endif

namespace jz
{
JZ_GRAVITY_CLONES
void applyMultipoleCpu(const GravityMoments& node, const double* __restrict qx,
  const double* __restrict qy, const double* __restrict qz, std::size_t n, double eps2,
  double* __restrict u, double* __restrict gx, double* __restrict gy, double* __restrict gz)
{
  const double m = node.mass, c0 = node.com[0], c1 = node.com[1], c2 = node.com[2];
  const double* I = node.second;
  const double Ixx = I[0], Iyy = I[1], Izz = I[2], Ixy = I[3], Ixz = I[4], Iyz = I[5];
  const double tr = Ixx + Iyy + Izz;
  for (std::size_t i = 0; i < n; ++i)
  {
    const double r0 = qx[i] - c0, r1 = qy[i] - c1, r2 = qz[i] - c2;
    const double s2 = r0 * r0 + r1 * r1 + r2 * r2 + eps2;
    const double inv = 1.0 / std::sqrt(s2);
    const double inv2 = inv * inv;
    const double inv3 = inv * inv2;
    const double inv5 = inv3 * inv2;
    const double Ir0 = Ixx * r0 + Ixy * r1 + Ixz * r2;
    const double Ir1 = Ixy * r0 + Iyy * r1 + Iyz * r2;
    const double Ir2 = Ixz * r0 + Iyz * r1 + Izz * r2;
    const double rIr = r0 * Ir0 + r1 * Ir1 + r2 * Ir2;
    u[i] += m * inv + 0.5 * (3.0 * rIr * inv5 - tr * inv3);
    const double radial = -m * inv3 - 7.5 * rIr * inv5 * inv2 + 1.5 * tr * inv5;
    gx[i] += radial * r0 + 3.0 * Ir0 * inv5;
    gy[i] += radial * r1 + 3.0 * Ir1 * inv5;
    gz[i] += radial * r2 + 3.0 * Ir2 * inv5;
  }
}

JZ_GRAVITY_CLONES
void sumDirectCpu(const double* x, const double* y, const double* z, const double* m, std::size_t n,
  const double* q, double eps2, GravitySum& sum)
{
  double u[kGravityLanes] = {}, g0[kGravityLanes] = {}, g1[kGravityLanes] = {},
         g2[kGravityLanes] = {};
  const double q0 = q[0], q1 = q[1], q2 = q[2];
  for (std::size_t j0 = 0; j0 < n; j0 += kGravityLanes)
    for (std::size_t l = 0; l < kGravityLanes; ++l)
    {
      const std::size_t j = j0 + l;
      const double dx = x[j] - q0, dy = y[j] - q1, dz = z[j] - q2;
      const double s2 = dx * dx + dy * dy + dz * dz + eps2;
      const double inv = s2 > 0 ? 1.0 / std::sqrt(s2) : 0.0; // r = 0, eps = 0: skipped
      const double mi = m[j] * inv;
      const double mi3 = mi * inv * inv;
      u[l] += mi;
      g0[l] += mi3 * dx;
      g1[l] += mi3 * dy;
      g2[l] += mi3 * dz;
    }
  for (std::size_t l = 0; l < kGravityLanes; ++l)
  {
    sum.u += u[l];
    sum.g[0] += g0[l];
    sum.g[1] += g1[l];
    sum.g[2] += g2[l];
  }
}
namespace
{
// The power of two nearest above v (1 for v <= 0 or non-finite).
double powerOfTwoAbove(double v)
{
  if (!(v > 0) || !std::isfinite(v))
    return 1;
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0, e);
}
} // namespace

FloatUnits::FloatUnits(double extent, double maxMass, double eps2_)
{
  const double length = powerOfTwoAbove(extent), mass = powerOfTwoAbove(maxMass);
  invLength = 1 / length;
  invMass = 1 / mass;
  eps2 = float(eps2_ * invLength * invLength);
  uBack = mass * invLength;
  gBack = mass * invLength * invLength;
}

JZ_GRAVITY_CLONES
void applyMultipoleFloatCpu(const GravityMoments& node, const double* __restrict qx,
  const double* __restrict qy, const double* __restrict qz, std::size_t n, const FloatUnits& units,
  double* __restrict u, double* __restrict gx, double* __restrict gy, double* __restrict gz)
{
  const double c0 = node.com[0], c1 = node.com[1], c2 = node.com[2];
  const double L = units.invLength, I2 = units.invMass * L * L;
  const float m = float(node.mass * units.invMass), e2 = units.eps2;
  const double* I = node.second;
  const float Ixx = float(I[0] * I2), Iyy = float(I[1] * I2), Izz = float(I[2] * I2),
              Ixy = float(I[3] * I2), Ixz = float(I[4] * I2), Iyz = float(I[5] * I2);
  const float tr = Ixx + Iyy + Izz;
  const double uBack = units.uBack, gBack = units.gBack;
  for (std::size_t i = 0; i < n; ++i)
  {
    const float r0 = float((qx[i] - c0) * L), r1 = float((qy[i] - c1) * L),
                r2 = float((qz[i] - c2) * L);
    const float s2 = r0 * r0 + r1 * r1 + r2 * r2 + e2;
    const float inv = 1.0f / std::sqrt(s2);
    const float inv2 = inv * inv;
    const float inv3 = inv * inv2;
    const float inv5 = inv3 * inv2;
    const float Ir0 = Ixx * r0 + Ixy * r1 + Ixz * r2;
    const float Ir1 = Ixy * r0 + Iyy * r1 + Iyz * r2;
    const float Ir2 = Ixz * r0 + Iyz * r1 + Izz * r2;
    const float rIr = r0 * Ir0 + r1 * Ir1 + r2 * Ir2;
    u[i] += uBack * double(m * inv + 0.5f * (3.0f * rIr * inv5 - tr * inv3));
    const float radial = -m * inv3 - 7.5f * rIr * inv5 * inv2 + 1.5f * tr * inv5;
    gx[i] += gBack * double(radial * r0 + 3.0f * Ir0 * inv5);
    gy[i] += gBack * double(radial * r1 + 3.0f * Ir1 * inv5);
    gz[i] += gBack * double(radial * r2 + 3.0f * Ir2 * inv5);
  }
}

JZ_GRAVITY_CLONES
void sumDirectFloatCpu(const double* x, const double* y, const double* z, const float* m,
  std::size_t n, const double* q, const FloatUnits& units, GravitySum& sum)
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
      const float inv = s2 > 0 ? 1.0f / std::sqrt(s2) : 0.0f; // r = 0, eps = 0: skipped
      const float mi = m[j] * inv;
      const float mi3 = mi * inv * inv;
      u[l] += mi;
      g0[l] += mi3 * dx;
      g1[l] += mi3 * dy;
      g2[l] += mi3 * dz;
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
} // namespace jz
