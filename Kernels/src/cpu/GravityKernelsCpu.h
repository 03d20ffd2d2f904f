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

// Lanes of the direct sum: per-lane partial sums let the compiler vectorize
// without reassociating a reduction (no -ffast-math).
constexpr std::size_t kGravityLanes = 8;

// Adds to sum the direct sum of n sources (x, y, z, m; n a multiple of
// kGravityLanes, padded with massless points) at query point q.
void sumDirectCpu(const double* x, const double* y, const double* z, const double* m, std::size_t n,
  const double* q, double eps2, GravitySum& sum);
} // namespace jz
