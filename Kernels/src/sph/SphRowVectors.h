// Eight doubles of a row as one vector, for the separable forms'
// contractions (SphFactorCubics.cpp, SphVoxelFactors.cpp,
// SphPixelFactors.cpp) and the wide rows' widening (SphKernelTables.cpp), kept in registers: an
// array of 8 doubles summed lane by lane is stored in halves and reloaded whole, which stalls
// store-to-load forwarding. Include only in the files built with the
// maps' vector options (Kernels/CMakeLists.txt): the helpers are inlined
// into each target clone of their callers.
#pragma once

#include <cstddef>
#include <cstring>

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
} // namespace rows
} // namespace jz
