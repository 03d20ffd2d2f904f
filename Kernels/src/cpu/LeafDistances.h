// The innermost loops of LeafToLeaf on the CPU, vectorized. AVX2 versions
// are chosen at run time when the processor has AVX2, so one binary runs
// on every x86-64 machine.
#pragma once

#include "jz/Config.h"

namespace jz
{
// Writes to `candidates` the offsets i < n whose squared distance |p - s_i|^2,
// evaluated in the points' own precision, is <= filter2, and returns how many.
// A fast filter: callers pass a generous filter2 and rank the survivors by
// exact double distances. periods (nullable) selects nearest images. The
// coordinate arrays must be readable up to a multiple of 8 elements past n
// (SortedPoints' padding).
Index leafCandidates(const float* xs, const float* ys, const float* zs, Index n, const float* p,
  const float* periods, float filter2, Index* candidates);
Index leafCandidates(const double* xs, const double* ys, const double* zs, Index n, const double* p,
  const double* periods, double filter2, Index* candidates);

// Writes to `active` the query points i < n whose squared distance to the
// box [lo, hi] (in the points' precision) is <= filter2[i]; returns how many.
// Coordinates and filter2 must be readable up to 8 elements past n.
Index queriesNearBox(const float* xs, const float* ys, const float* zs, Index n, const float* lo,
  const float* hi, const float* periods, const float* filter2, Index* active);
Index queriesNearBox(const double* xs, const double* ys, const double* zs, Index n,
  const double* lo, const double* hi, const double* periods, const double* filter2, Index* active);
} // namespace jz

namespace jz
{
// out[i] = |p - s_i|^2 in the points' precision, nearest image when periods.
void leafDistances2(const float* xs, const float* ys, const float* zs, Index n, const float* p,
  const float* periods, float* out);
void leafDistances2(const double* xs, const double* ys, const double* zs, Index n, const double* p,
  const double* periods, double* out);
} // namespace jz
