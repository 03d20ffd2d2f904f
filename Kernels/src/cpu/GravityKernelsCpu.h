// The two inner loops of tree gravity on the CPU, compiled once with
// run-time dispatch to the widest vector unit (AVX-512, AVX2 or the baseline)
// where the compiler supports it. The formulas are GravityTerms.h's.
#pragma once

#include <cstddef>

#include "../GravityTerms.h"

namespace jz
{
// Sums U and grad U (u, gx, gy, gz: one per query, added to) of a node's
// multipole at n query points (qx, qy, qz).
void applyMultipoleCpu(const GravityMoments& node, const double* qx, const double* qy,
  const double* qz, std::size_t n, double eps2, double* u, double* gx, double* gy, double* gz);

// Units of the single-precision terms: lengths and masses divided by powers
// of two near the problem's extent and largest mass (exact), so that no
// float overflows or underflows whatever the caller's units.
struct FloatUnits
{
  double invLength = 1, invMass = 1;
  float eps2 = 0;   // in these units
  double uBack = 1; // U in float units -> U
  double gBack = 1; // grad U in float units -> grad U
  FloatUnits() = default;
  FloatUnits(double extent, double maxMass, double eps2);
};

// The same multipole at n query points with the terms in single precision
// (the offsets from the centre of mass taken in double, scaled, then
// rounded): the fast path of theta > 0, whose accuracy contract (README,
// "Tree Gravity") is far above float rounding.
void applyMultipoleFloatCpu(const GravityMoments& node, const double* qx, const double* qy,
  const double* qz, std::size_t n, const FloatUnits& units, double* u, double* gx, double* gy,
  double* gz);

// Lanes of the direct sum: per-lane partial sums let the compiler vectorize
// without reassociating a reduction (no -ffast-math).
constexpr std::size_t kGravityLanes = 8;

// Adds to sum the direct sum of n sources (x, y, z, m; n a multiple of
// kGravityLanes, padded with massless points) at query point q.
void sumDirectCpu(const double* x, const double* y, const double* z, const double* m, std::size_t n,
  const double* q, double eps2, GravitySum& sum);

// Lanes of the single-precision direct sum.
constexpr std::size_t kGravityFloatLanes = 16;

// The direct sum with the pair terms in single precision (theta > 0): each
// offset source - query is taken in double, scaled and rounded, so a close
// pair far from the origin keeps its relative accuracy; per-lane float
// partial sums are added to sum in double. m: masses in float units; n a
// multiple of kGravityFloatLanes.
void sumDirectFloatCpu(const double* x, const double* y, const double* z, const float* m,
  std::size_t n, const double* q, const FloatUnits& units, GravitySum& sum);
} // namespace jz
