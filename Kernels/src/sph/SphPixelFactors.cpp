#include "SphPixelFactors.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "SphKernelTables.h"
#include "SphRowVectors.h"

#if JZ_SPH_WIDE_ROWS
#include <immintrin.h>
#endif

namespace jz
{
namespace
{
constexpr int R = SphPixelFactors::kRank;
using rows::Double8;
using rows::load;
static_assert(rows::kLanes == SphPixelFactors::kRowVector, "a row vector is kRowVector doubles");

// Row j's weights y[p] = w_p dv[j][p]: with ut[p][i] = m du[i][p]
// (rows::transposeRows) the pixels of row j are sum_p y[p] ut[p][i].
inline void rowWeights(const double* weight, const double* dv, int j, double* y)
{
  for (int p = 0; p < R; ++p)
    y[p] = weight[p] * dv[j * R + p];
}

JZ_SPH_CLONES void contractPixels(const double* weight, const double* du, int nu, const double* dv,
  int nv, double m, double* scratch, const SphPixelFactors::Output& to)
{
  const int nuPad = rows::transposeRows<R>(du, nu, m, scratch);
  for (int j = 0; j < nv; ++j)
  {
    double y[R];
    rowWeights(weight, dv, j, y);
    rows::contractRow<R>(y, scratch, nuPad, nu, to.values + std::size_t(j) * to.rowStride, to.add);
  }
}

#if JZ_SPH_WIDE_ROWS
// contractPixels adding to an image, in AVX-512 intrinsics (its twin, row
// for row): the same operations in the same order (so the same bits), the
// row's last vector masked instead of added lane by lane through the stack
// (narrow columns' rows are mostly that last vector), and K rows at a time:
// a vector's sum over p is a chain of dependent multiply-adds, and one row
// alone leaves the vector units waiting on its latency. GCC 12 warns of
// the "undefined" registers inside its own intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <int K>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void addPixelRows(
  const double* weight, const double* dv, int j, const double* ut, int nuPad, int nu, double* row,
  std::size_t rowStride)
{
  double y[K][R];
  for (int k = 0; k < K; ++k)
    rowWeights(weight, dv, j + k, y[k]);
  for (int i0 = 0; i0 < nu; i0 += rows::kLanes)
  {
    __m512d v[K];
    for (int k = 0; k < K; ++k)
      v[k] = _mm512_setzero_pd();
    for (int p = 0; p < R; ++p)
    {
      const __m512d x = _mm512_loadu_pd(ut + std::size_t(p) * std::size_t(nuPad) + std::size_t(i0));
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
        v[k] = _mm512_fmadd_pd(_mm512_set1_pd(y[k][p]), x, v[k]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
      rows::addToRow(row + std::size_t(k) * rowStride + std::size_t(i0), nu - i0, v[k]);
  }
}

__attribute__((target("arch=x86-64-v4"))) void addPixelsAvx512(const double* weight,
  const double* du, int nu, const double* dv, int nv, double m, double* scratch,
  const SphPixelFactors::Output& to)
{
  constexpr int K = 4;
  const int nuPad = rows::transposeRows<R>(du, nu, m, scratch);
  int j = 0;
  for (; j + K <= nv; j += K)
    addPixelRows<K>(
      weight, dv, j, scratch, nuPad, nu, to.values + std::size_t(j) * to.rowStride, to.rowStride);
  for (; j < nv; ++j)
    addPixelRows<1>(
      weight, dv, j, scratch, nuPad, nu, to.values + std::size_t(j) * to.rowStride, to.rowStride);
}

// addPixelRows in AVX2 intrinsics (the same bits), half a row vector at a
// time.
template <int K>
__attribute__((target("arch=x86-64-v3"), always_inline)) inline void addPixelRowsAvx2(
  const double* weight, const double* dv, int j, const double* ut, int nuPad, int nu, double* row,
  std::size_t rowStride)
{
  constexpr int H = rows::kHalfLanes;
  double y[K][R];
  for (int k = 0; k < K; ++k)
    rowWeights(weight, dv, j + k, y[k]);
  for (int i0 = 0; i0 < nu; i0 += H)
  {
    __m256d v[K];
    for (int k = 0; k < K; ++k)
      v[k] = _mm256_setzero_pd();
    for (int p = 0; p < R; ++p)
    {
      const __m256d x = _mm256_loadu_pd(ut + std::size_t(p) * std::size_t(nuPad) + std::size_t(i0));
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
        v[k] = _mm256_fmadd_pd(_mm256_broadcast_sd(&y[k][p]), x, v[k]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
      rows::addToHalfRow(row + std::size_t(k) * rowStride + std::size_t(i0), nu - i0, v[k]);
  }
}

__attribute__((target("arch=x86-64-v3"))) void addPixelsAvx2(const double* weight, const double* du,
  int nu, const double* dv, int nv, double m, double* scratch, const SphPixelFactors::Output& to)
{
  constexpr int K = 4;
  const int nuPad = rows::transposeRows<R>(du, nu, m, scratch);
  int j = 0;
  for (; j + K <= nv; j += K)
    addPixelRowsAvx2<K>(
      weight, dv, j, scratch, nuPad, nu, to.values + std::size_t(j) * to.rowStride, to.rowStride);
  for (; j < nv; ++j)
    addPixelRowsAvx2<1>(
      weight, dv, j, scratch, nuPad, nu, to.values + std::size_t(j) * to.rowStride, to.rowStride);
}
#pragma GCC diagnostic pop
#endif
} // namespace

SphPixelFactors::SphPixelFactors(const SphSeparableForm& form)
{
  std::copy(form.weights.begin(), form.weights.begin() + R, weight_);
  axis_ = SphFactorCubics(form.u, form.intervals);
}

const SphPixelFactors& SphPixelFactors::get(SphKernel kernel)
{
  return builtOnce<SphPixelFactors, 2>(
    kernelIndex(kernel), [&] { return new SphPixelFactors(bakedColumnForm(kernel)); });
}

void SphPixelFactors::pixels(const double* du, int nu, const double* dv, int nv, double m,
  double* scratch, const Output& to) const
{
#if JZ_SPH_WIDE_ROWS
  if (to.add && sphRowCode() == SphRowCode::Avx512)
    return addPixelsAvx512(weight_, du, nu, dv, nv, m, scratch, to);
  if (to.add && sphRowCode() == SphRowCode::Avx2)
    return addPixelsAvx2(weight_, du, nu, dv, nv, m, scratch, to);
#endif
  contractPixels(weight_, du, nu, dv, nv, m, scratch, to);
}
} // namespace jz
