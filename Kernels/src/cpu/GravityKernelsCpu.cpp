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
void applyMultipoleCpu(const GravityMoments& node, const double* qx, const double* qy,
  const double* qz, std::size_t n, double eps2, double* u, double* gx, double* gy, double* gz)
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
} // namespace jz
