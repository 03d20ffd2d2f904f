// Eight doubles of a row as one vector, for the separable forms'
// contractions (SphFactorCubics.cpp, SphVoxelFactors.cpp,
// SphPixelFactors.cpp) and the wide rows' widening (SphKernelTables.cpp),
// kept in registers: an array of 8 doubles summed lane by lane is stored in
// halves and reloaded whole, which stalls store-to-load forwarding. Include
// only in the files built with the maps' vector options
// (Kernels/CMakeLists.txt): the helpers are inlined into each target clone
// of their callers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "SphKernelTables.h" // JZ_SPH_WIDE_ROWS

#if JZ_SPH_WIDE_ROWS
#include <immintrin.h>
#endif

namespace jz
{
namespace rows
{
typedef double Double8 __attribute__((vector_size(64)));
constexpr int kLanes = 8;

// (Vectors go by reference: a 512-bit vector returned by value would tie
// the default clone to an ABI it cannot use.)
__attribute__((always_inline)) inline void load(const double* p, Double8& v)
{
  std::memcpy(&v, p, sizeof v);
}

// acc = sum_p y[p] xt[p][i0 .. i0 + 8) over R rows of stride `stride`,
// from 0: every term is then one multiply-add onto the sum before it (from
// y[0] x alone the compiler may fuse either of the first two products, and
// does so differently from one loop to the next).
template <int R>
__attribute__((always_inline)) inline void rowVector(
  const double* y, const double* xt, int stride, int i0, Double8& acc)
{
  Double8 x;
  acc = Double8{};
  for (int p = 0; p < R; ++p)
  {
    load(xt + std::size_t(p) * std::size_t(stride) + std::size_t(i0), x);
    acc += y[p] * x;
  }
}

// The factors u_p(a), p < 8, of a separable form's axis (SphFactorCubics)
// at a on the unit kernel: its interval's cubic in powers of the fraction,
// sign folded in; top = u(1) beyond the support.
__attribute__((always_inline)) inline void factorsAt(
  const double* cubic, const Double8& top, int intervals, double a, Double8& value)
{
  const TableNode at = tableNode(a, intervals);
  const double* c = cubic + std::size_t(at.node) * 4 * kLanes;
  const double f = at.fraction;
  Double8 c0, c1, c2, c3;
  load(c, c0);
  load(c + kLanes, c1);
  load(c + 2 * kLanes, c2);
  load(c + 3 * kLanes, c3);
  const Double8 inside = ((c3 * f + c2) * f + c1) * f + c0;
  // A lane-wise select, not a branch: inside a kernel's span its support's
  // ends fall on no fixed edges, and a branch would mispredict there.
  const Double8 away = Double8{} + std::fabs(a);
  value = at.sign * (away < 1.0 ? inside : top);
}

// xt[p][i] = scale d[i][p] for the n cells i of an axis (d[i * R + p], a
// separable form's differences), zero beyond n up to a whole number of
// vectors: the rows then run along i a vector at a time. Returns the
// padded row's length.
template <int R>
inline int transposeRows(const double* d, int n, double scale, double* xt)
{
  const int nPad = (n + kLanes - 1) / kLanes * kLanes;
  std::fill(xt, xt + std::size_t(nPad) * R, 0.0);
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < R; ++p)
      xt[std::size_t(p) * std::size_t(nPad) + std::size_t(i)] = scale * d[i * R + p];
  return nPad;
}

// Row (of n values) = sum_p y[p] xt[p][i], xt's rows zero beyond n up to
// nPad (a whole number of vectors): added to the row's n values (add), or
// written over it as nPad values.
template <int R>
__attribute__((always_inline)) inline void contractRow(
  const double* y, const double* xt, int nPad, int n, double* row, bool add)
{
  // Whole vectors, then the row's last, partial one lane by lane.
  const int whole = add ? n / kLanes * kLanes : nPad;
  for (int i0 = 0; i0 < whole; i0 += kLanes)
  {
    Double8 v, old;
    rowVector<R>(y, xt, nPad, i0, v);
    if (add)
    {
      load(row + i0, old);
      v += old;
    }
    std::memcpy(row + i0, &v, sizeof v);
  }
  if (whole < n)
  {
    Double8 v;
    rowVector<R>(y, xt, nPad, whole, v);
    for (int l = 0; l < n - whole; ++l)
      row[whole + l] += v[l];
  }
}

#if JZ_SPH_WIDE_ROWS
// row[l] += v[l] for the lanes l < left (none when left <= 0), the lanes
// beyond neither read nor written: a row's last, partial vector without a
// trip through the stack.
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void addToRow(
  double* row, int left, __m512d v)
{
  const __mmask8 mask = left >= kLanes ? __mmask8(0xff)
    : left <= 0                        ? __mmask8(0)
                                       : __mmask8((1u << left) - 1);
  _mm512_mask_storeu_pd(row, mask, _mm512_add_pd(v, _mm512_maskz_loadu_pd(mask, row)));
}

// The AVX2 code's vector: four doubles, half a row vector.
constexpr int kHalfLanes = kLanes / 2;

// addToRow for an AVX2 vector: row[l] += v[l] for the lanes l < left (none
// when left <= 0), the lanes beyond neither read nor written.
__attribute__((target("arch=x86-64-v3"), always_inline)) inline void addToHalfRow(
  double* row, int left, __m256d v)
{
  if (left >= kHalfLanes)
    return _mm256_storeu_pd(row, _mm256_add_pd(v, _mm256_loadu_pd(row)));
  if (left <= 0)
    return;
  const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(left), _mm256_setr_epi64x(0, 1, 2, 3));
  _mm256_maskstore_pd(row, mask, _mm256_add_pd(v, _mm256_maskload_pd(row, mask)));
}

// factorsAt in AVX2 intrinsics, the factors as two halves (the same bits).
__attribute__((target("arch=x86-64-v3"), always_inline)) inline void factorsAtHalves(
  const double* cubic, const __m256d (&top)[2], int intervals, double a, __m256d (&value)[2])
{
  const TableNode at = tableNode(a, intervals);
  const double* c = cubic + std::size_t(at.node) * 4 * kLanes;
  const __m256d f = _mm256_set1_pd(at.fraction), sign = _mm256_set1_pd(at.sign);
  const __m256d inside =
    _mm256_cmp_pd(_mm256_set1_pd(std::fabs(a)), _mm256_set1_pd(1.0), _CMP_LT_OQ);
  for (int half = 0; half < 2; ++half)
  {
    const double* ch = c + half * kHalfLanes;
    __m256d v =
      _mm256_fmadd_pd(_mm256_load_pd(ch + 3 * kLanes), f, _mm256_load_pd(ch + 2 * kLanes));
    v = _mm256_fmadd_pd(v, f, _mm256_load_pd(ch + kLanes));
    v = _mm256_fmadd_pd(v, f, _mm256_load_pd(ch));
    value[half] = _mm256_mul_pd(sign, _mm256_blendv_pd(top[half], v, inside));
  }
}
#endif
} // namespace rows
} // namespace jz
