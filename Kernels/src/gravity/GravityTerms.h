// The two interactions of tree gravity, shared by the CPU and CUDA backends:
// a source point on a query point (direct summation), and a node's multipole
// (mass, centre of mass, second moments) on a query point. Both with Plummer
// softening; G is applied once at the end by the caller.
//
// With U the softened potential sum, phi = -G U and a = G grad U. A node with
// mass M, centre c and second moments I_ij = sum m (y_i y_j), y = x_k - c,
// seen from x (r = x - c, s^2 = |r|^2 + eps^2), to second order:
//   U      = M / s + (3 r.I.r / s^5 - tr I / s^3) / 2
//   grad U = -M r / s^3 + 3 I r / s^5 - 7.5 (r.I.r) r / s^7 + 1.5 tr I r / s^5
// (the exact Taylor terms of the softened kernel 1/s; doc/filters/TreeGravity.md).
#pragma once

#include <cmath>

#include "jz/Config.h"

namespace jz
{
// A node's multipole up to quadrupole, and the squared radius around its
// centre of mass that holds all its points (from its box corners).
struct GravityMoments
{
  double mass = 0;
  double com[3] = { 0, 0, 0 };
  double second[6] = { 0, 0, 0, 0, 0, 0 }; // xx yy zz xy xz yz
  double radius2 = 0;
};

// Adds m y y^T to second moments (xx yy zz xy xz yz).
JZ_HD void addSecond(double* second, const double* y, double m)
{
  second[0] += m * y[0] * y[0];
  second[1] += m * y[1] * y[1];
  second[2] += m * y[2] * y[2];
  second[3] += m * y[0] * y[1];
  second[4] += m * y[0] * y[2];
  second[5] += m * y[1] * y[2];
}

// U and grad U accumulated at one query point.
struct GravitySum
{
  double u = 0;
  double g[3] = { 0, 0, 0 };
};

// A source point of mass m at offset (dx, dy, dz) = source - query; a pair
// with s^2 = 0 (coincident, eps = 0) contributes nothing.
JZ_HD void addPointTerm(GravitySum& sum, double dx, double dy, double dz, double m, double eps2)
{
  const double s2 = dx * dx + dy * dy + dz * dz + eps2;
  if (!(s2 > 0))
    return;
  const double inv = 1.0 / std::sqrt(s2);
  const double mi = m * inv;
  const double mi3 = mi * inv * inv;
  sum.u += mi;
  sum.g[0] += mi3 * dx;
  sum.g[1] += mi3 * dy;
  sum.g[2] += mi3 * dz;
}

// A node's multipole at query point x.
JZ_HD void addMultipoleTerm(GravitySum& sum, const GravityMoments& n, const double* x, double eps2)
{
  const double r0 = x[0] - n.com[0], r1 = x[1] - n.com[1], r2 = x[2] - n.com[2];
  const double s2 = r0 * r0 + r1 * r1 + r2 * r2 + eps2;
  const double inv = 1.0 / std::sqrt(s2);
  const double inv2 = inv * inv;
  const double inv3 = inv * inv2;
  const double inv5 = inv3 * inv2;
  const double* I = n.second;
  const double Ir0 = I[0] * r0 + I[3] * r1 + I[4] * r2;
  const double Ir1 = I[3] * r0 + I[1] * r1 + I[5] * r2;
  const double Ir2 = I[4] * r0 + I[5] * r1 + I[2] * r2;
  const double rIr = r0 * Ir0 + r1 * Ir1 + r2 * Ir2;
  const double tr = I[0] + I[1] + I[2];
  sum.u += n.mass * inv + 0.5 * (3.0 * rIr * inv5 - tr * inv3);
  const double radial = -n.mass * inv3 - 7.5 * rIr * inv5 * inv2 + 1.5 * tr * inv5;
  sum.g[0] += radial * r0 + 3.0 * Ir0 * inv5;
  sum.g[1] += radial * r1 + 3.0 * Ir1 * inv5;
  sum.g[2] += radial * r2 + 3.0 * Ir2 * inv5;
}

// The opening criterion for a node seen from a receiver box at squared
// distance dist2 from the node's centre of mass, two tests:
//  - its spread, the mass-weighted mean squared distance of its points from
//    the centre of mass (tr I / M), below 0.2 theta^2 d^2: the expansion's
//    error follows the node's higher moments, which a dense core with a
//    few outlying points keeps small however far its box reaches;
//  - its radius b around the centre of mass (from its box corners) below
//    0.84 theta d and below d itself: the outlying points stay well inside
//    the series' convergence radius, and no point of the node lies in the
//    receiver's box (r > 0 for every accepted pair).
// For a uniformly filled cube (tr I / M = b^2 / 3) the spread test is
// b^2 < 0.6 theta^2 d^2, as before, and binds first; on clustered points
// the radius test takes over. At equal 99th-percentile acceleration error on
// clustered points this costs fewer interactions than b^2 < 0.6 theta^2 d^2
// alone (Salmon & Warren's b_max form), with M2L at 0.52 theta
// (GravityPolicy.h). The factors keep the
// accuracy contract at theta = 0.5 (doc/filters/TreeGravity.md). theta = 0
// accepts nothing (the radius test): direct summation; a massless node
// passes the spread test and follows the radius test.
constexpr double kOpeningSpreadFactor2 = 0.2;
constexpr double kOpeningRadiusFactor2 = 0.7;
JZ_HD bool multipoleAcceptable(const GravityMoments& n, double dist2, double theta2)
{
  const double massSpread2 = n.second[0] + n.second[1] + n.second[2]; // M tr I / M
  return (massSpread2 <= kOpeningSpreadFactor2 * theta2 * dist2 * n.mass) &
    (n.radius2 < kOpeningRadiusFactor2 * theta2 * dist2) & (n.radius2 < dist2);
}

} // namespace jz
