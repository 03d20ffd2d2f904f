// Tree gravity's exact inner loop (GravityKernelsCpu.h), written so that it
// vectorizes without reassociation (kGravityLanes partial sums), and the
// float units of the fast loops (GravityFloatKernelsCpu.cpp).
#include "gravity/GravityKernelsCpu.h"

#include <cmath>

#include "gravity/MaskedInverse.h"

namespace jz
{
namespace
{
// 1 / sqrt(r^2 + eps^2) of a pair, 0 for r = 0 with eps = 0 (skipped).
inline double pairInverse(double dx, double dy, double dz, double eps2)
{
  const double s2 = dx * dx + dy * dy + dz * dz + eps2;
  return maskedInverse(1.0, s2);
}

// The direct sum's lanes: U always, grad U when Field (inlined into each
// clone of its callers).
template <bool Field>
inline __attribute__((always_inline)) void directLanes(const double* x, const double* y,
  const double* z, const double* m, std::size_t n, const double* q, double eps2, double* u,
  double* g0, double* g1, double* g2)
{
  const double q0 = q[0], q1 = q[1], q2 = q[2];
  for (std::size_t j0 = 0; j0 < n; j0 += kGravityLanes)
    for (std::size_t l = 0; l < kGravityLanes; ++l)
    {
      const std::size_t j = j0 + l;
      const double dx = x[j] - q0, dy = y[j] - q1, dz = z[j] - q2;
      const double inv = pairInverse(dx, dy, dz, eps2);
      const double mi = m[j] * inv;
      u[l] += mi;
      if constexpr (Field)
      {
        const double mi3 = mi * inv * inv;
        g0[l] += mi3 * dx;
        g1[l] += mi3 * dy;
        g2[l] += mi3 * dz;
      }
    }
}
} // namespace

namespace
{
template <class T>
__attribute__((always_inline)) inline void toFloatUnits(const T* __restrict x,
  const T* __restrict y, const T* __restrict z, const double* __restrict m, std::size_t n,
  const double* origin, const FloatUnits& units, float* __restrict fx, float* __restrict fy,
  float* __restrict fz, float* __restrict fm)
{
  const double L = units.invLength, M = units.invMass;
  const double o0 = origin[0], o1 = origin[1], o2 = origin[2];
  for (std::size_t j = 0; j < n; ++j)
  {
    fx[j] = float((double(x[j]) - o0) * L);
    fy[j] = float((double(y[j]) - o1) * L);
    fz[j] = float((double(z[j]) - o2) * L);
    fm[j] = float(m[j] * M);
  }
}
} // namespace

JZ_GRAVITY_CLONES
void toFloatUnitsCpu(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, const double* origin, const FloatUnits& units, float* fx, float* fy, float* fz,
  float* fm)
{
  toFloatUnits(x, y, z, m, n, origin, units, fx, fy, fz, fm);
}

JZ_GRAVITY_CLONES
void toFloatUnitsCpu(const float* x, const float* y, const float* z, const double* m, std::size_t n,
  const double* origin, const FloatUnits& units, float* fx, float* fy, float* fz, float* fm)
{
  toFloatUnits(x, y, z, m, n, origin, units, fx, fy, fz, fm);
}

JZ_GRAVITY_CLONES
void sumDirectCpu(const double* x, const double* y, const double* z, const double* m, std::size_t n,
  const double* q, double eps2, GravitySum& sum)
{
  double u[kGravityLanes] = {}, g0[kGravityLanes] = {}, g1[kGravityLanes] = {},
         g2[kGravityLanes] = {};
  directLanes<true>(x, y, z, m, n, q, eps2, u, g0, g1, g2);
  for (std::size_t l = 0; l < kGravityLanes; ++l)
  {
    sum.u += u[l];
    sum.g[0] += g0[l];
    sum.g[1] += g1[l];
    sum.g[2] += g2[l];
  }
}

JZ_GRAVITY_CLONES
double sumPotentialDirectCpu(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, const double* q, double eps2)
{
  double u[kGravityLanes] = {};
  directLanes<false>(x, y, z, m, n, q, eps2, u, nullptr, nullptr, nullptr);
  double sum = 0;
  for (std::size_t l = 0; l < kGravityLanes; ++l)
    sum += u[l];
  return sum;
}

JZ_GRAVITY_CLONES
void addPointPotentialCpu(const double* at, double m, const double* x, const double* y,
  const double* z, std::size_t n, double eps2, double* __restrict u)
{
  const double a0 = at[0], a1 = at[1], a2 = at[2];
  for (std::size_t i = 0; i < n; ++i)
    u[i] += m * pairInverse(a0 - x[i], a1 - y[i], a2 - z[i], eps2);
}

JZ_GRAVITY_CLONES
void addPointMassCpu(const double* at, const double* m, const double* x, const double* y,
  const double* z, std::size_t n, double eps2, double* __restrict u, double* __restrict gx,
  double* __restrict gy, double* __restrict gz)
{
  const double a0 = at[0], a1 = at[1], a2 = at[2];
  for (std::size_t i = 0; i < n; ++i)
  {
    const double dx = a0 - x[i], dy = a1 - y[i], dz = a2 - z[i];
    const double inv = pairInverse(dx, dy, dz, eps2);
    const double mi = m[i] * inv;
    const double mi3 = mi * inv * inv;
    u[i] += mi;
    gx[i] += mi3 * dx;
    gy[i] += mi3 * dy;
    gz[i] += mi3 * dz;
  }
}

JZ_GRAVITY_CLONES
void sumPotentialsSymmetricCpu(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, double eps2, double* u)
{
  for (std::size_t j = 0; j < n + kGravityLanes; ++j)
    u[j] = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    double lane[kGravityLanes] = {};
    const double qx = x[i], qy = y[i], qz = z[i], mi = m[i];
    for (std::size_t j0 = i + 1; j0 < n; j0 += kGravityLanes)
      for (std::size_t l = 0; l < kGravityLanes; ++l)
      {
        const std::size_t j = j0 + l;
        const double inv = pairInverse(x[j] - qx, y[j] - qy, z[j] - qz, eps2);
        lane[l] += m[j] * inv;
        u[j] += mi * inv;
      }
    for (std::size_t l = 0; l < kGravityLanes; ++l)
      u[i] += lane[l];
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

} // namespace jz
