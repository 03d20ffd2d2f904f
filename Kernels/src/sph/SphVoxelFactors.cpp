#include "SphVoxelFactors.h"

#include <algorithm>
#include <cstring>

#include "SphKernelTables.h"
#include "SphRowVectors.h"

#if JZ_SPH_WIDE_ROWS
#include <immintrin.h>
#endif

namespace jz
{
namespace
{
constexpr int R = SphVoxelFactors::kRank;
// From this many cells along y on, a kernel's voxels are contracted x
// first (contractVoxelsXFirst). Not by its cells along z: a strip of slabs
// holds only some of them, and the form must not depend on the strips.
constexpr int kXFirstRows = 6;

using rows::Double8;
using rows::load;
constexpr int kLanes = SphVoxelFactors::kRowVector;
static_assert(rows::kLanes == kLanes, "a row vector is kRowVector doubles");
static_assert(R == kLanes, "a row of the core, or of a contracted core, is one vector");

// m sum_pqr core[p][q][r] dx[i][p] dy[j][q] dz[k][r] into row (j, k) of
// `to`, contracted one axis at a time: z, then y, then x along the rows a
// whole vector at a time.
JZ_SPH_CLONES void contractVoxels(const double (*core)[R][R], const double* dx, int nx,
  const double* dy, int ny, const double* dz, int nz, double m, double* scratch,
  const SphVoxelFactors::Output& to)
{
  // zq[k][q][p] = m sum_r dz[k][r] core[r][q][p] (= core[p][q][r]:
  // symmetric), a row q as a vector, summed in registers. Every sum here
  // starts from zero, each term one multiply-add (rows::rowVector says why).
  double* zq = scratch;
  for (int k = 0; k < nz; ++k)
  {
    Double8 acc[R], c;
    for (int q = 0; q < R; ++q)
      acc[q] = Double8{};
    for (int r = 0; r < R; ++r)
    {
      const double w = m * dz[k * R + r];
      for (int q = 0; q < R; ++q)
      {
        load(core[r][q], c);
        acc[q] += w * c;
      }
    }
    std::memcpy(zq + std::size_t(k) * R * R, acc, sizeof acc);
  }
  double* xt = zq + std::size_t(nz) * R * R;
  const int nxPad = rows::transposeRows<R>(dx, nx, 1.0, xt);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
    {
      // y[p] = sum_q dy[j][q] zq[k][q][p]
      const double* z = zq + std::size_t(k) * R * R;
      Double8 yv = {}, zrow;
      for (int q = 0; q < R; ++q)
      {
        load(z + q * R, zrow);
        yv += dy[j * R + q] * zrow;
      }
      double y[R];
      std::memcpy(y, &yv, sizeof y);
      rows::contractRow<R>(y, xt, nxPad, nx,
        to.values + std::size_t(k) * to.sliceStride + std::size_t(j) * to.rowStride, to.add);
    }
}

// The same voxels contracted x first, for kernels of many rows: per vector
// of a row's voxels cx[r][q] = sum_p core[r][q][p] m xt[p] once, then per
// z-cell w[q] = sum_r dz[k][r] cx[r][q] and per row sum_q dy[j][q] w[q].
// Each row is then 8 multiply-adds with no lane broadcasts, against 16 and
// 8 broadcasts z first; the 36 x 8 of cx (the core is symmetric) pay from
// about 20 rows (y by z) on.
JZ_SPH_CLONES void contractVoxelsXFirst(const double (*core)[R][R], const double* dx, int nx,
  const double* dy, int ny, const double* dz, int nz, double m, double* scratch,
  const SphVoxelFactors::Output& to)
{
  double* xt = scratch;
  const int nxPad = rows::transposeRows<R>(dx, nx, 1.0, xt);
  double* cx = xt + std::size_t(nxPad) * R;
  for (int i0 = 0; i0 < nxPad; i0 += kLanes)
  {
    Double8 xv[R], c;
    for (int p = 0; p < R; ++p)
    {
      load(xt + std::size_t(p) * std::size_t(nxPad) + std::size_t(i0), xv[p]);
      xv[p] = m * xv[p];
    }
    for (int r = 0; r < R; ++r)
      for (int q = r; q < R; ++q) // cx[q][r] = cx[r][q]: the core is symmetric
      {
        Double8 acc = {};
        for (int p = 0; p < R; ++p)
          acc += core[r][q][p] * xv[p];
        std::memcpy(cx + (r * R + q) * kLanes, &acc, sizeof acc);
        std::memcpy(cx + (q * R + r) * kLanes, &acc, sizeof acc);
      }
    const int lanes = std::min(kLanes, nx - i0);
    for (int k = 0; k < nz; ++k)
    {
      Double8 w[R];
      for (int q = 0; q < R; ++q)
        w[q] = Double8{};
      for (int r = 0; r < R; ++r)
        for (int q = 0; q < R; ++q)
        {
          load(cx + (r * R + q) * kLanes, c);
          w[q] += dz[k * R + r] * c;
        }
      for (int j = 0; j < ny; ++j)
      {
        Double8 v = {};
        for (int q = 0; q < R; ++q)
          v += dy[j * R + q] * w[q];
        double* row =
          to.values + std::size_t(k) * to.sliceStride + std::size_t(j) * to.rowStride + i0;
        if (!to.add)
          std::memcpy(row, &v, sizeof v);
        else
          for (int l = 0; l < lanes; ++l)
            row[l] += v[l];
      }
    }
  }
}

#if JZ_SPH_WIDE_ROWS
// contractVoxels adding to a volume, in AVX-512 intrinsics (its twin, row
// for row): the same operations in the same order (so the same bits), the
// rows' last vector masked instead of added lane by lane through the stack
// (most kernels' rows are only that vector), and the z-cells' contracted
// cores and the rows' weights kept in registers. GCC 12 warns of the
// "undefined" registers inside its own intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("arch=x86-64-v4"))) void addVoxelsAvx512(const double (*core)[R][R],
  const double* dx, int nx, const double* dy, int ny, const double* dz, int nz, double m,
  double* scratch, const SphVoxelFactors::Output& to)
{
  double* xt = scratch;
  const int nxPad = rows::transposeRows<R>(dx, nx, 1.0, xt);
  double* const values = to.values;
  const std::size_t rowStride = to.rowStride, sliceStride = to.sliceStride;
  for (int k = 0; k < nz; ++k)
  {
    // zq[q][p] = m sum_r dz[k][r] core[r][q][p], row q one vector.
    __m512d zq[R];
    for (int q = 0; q < R; ++q)
      zq[q] = _mm512_setzero_pd();
    for (int r = 0; r < R; ++r)
    {
      const __m512d w = _mm512_set1_pd(m * dz[k * R + r]);
      for (int q = 0; q < R; ++q)
        zq[q] = _mm512_fmadd_pd(w, _mm512_loadu_pd(core[r][q]), zq[q]);
    }
    for (int j = 0; j < ny; ++j)
    {
      // y[p] = sum_q dy[j][q] zq[q][p], then the row sum_p y[p] xt[p][i].
      __m512d yv = _mm512_setzero_pd();
      for (int q = 0; q < R; ++q)
        yv = _mm512_fmadd_pd(_mm512_set1_pd(dy[j * R + q]), zq[q], yv);
      __m512d y[R];
      for (int p = 0; p < R; ++p)
        y[p] = _mm512_permutexvar_pd(_mm512_set1_epi64(p), yv);
      double* row = values + std::size_t(k) * sliceStride + std::size_t(j) * rowStride;
      for (int i0 = 0; i0 < nx; i0 += rows::kLanes)
      {
        __m512d v = _mm512_setzero_pd();
        for (int p = 0; p < R; ++p)
          v = _mm512_fmadd_pd(
            y[p], _mm512_loadu_pd(xt + std::size_t(p) * std::size_t(nxPad) + std::size_t(i0)), v);
        rows::addToRow(row + i0, nx - i0, v);
      }
    }
  }
}

// addVoxelsXFirstAvx512's z-cells k .. k + K - 1 (dz from cell k) for one
// vector of a row's voxels (left of them in the rows, from `row`): per
// z-cell w[q] = sum_r dz[k][r] cx[r][q], then per row sum_q dy[j][q] w[q],
// the K z-cells' chains interleaved (the same sums for any K).
template <int K>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void xFirstZCells(const double* cx,
  const double* dy, int ny, const double* dz, double* row, std::size_t rowStride,
  std::size_t sliceStride, int left)
{
  __m512d w[K][R];
  for (int c = 0; c < K; ++c)
    for (int q = 0; q < R; ++q)
      w[c][q] = _mm512_setzero_pd();
  for (int r = 0; r < R; ++r)
  {
    __m512d d[K];
    for (int c = 0; c < K; ++c)
      d[c] = _mm512_set1_pd(dz[c * R + r]);
    for (int q = 0; q < R; ++q)
    {
      const __m512d x = _mm512_loadu_pd(cx + (r * R + q) * rows::kLanes);
      for (int c = 0; c < K; ++c)
        w[c][q] = _mm512_fmadd_pd(d[c], x, w[c][q]);
    }
  }
  for (int j = 0; j < ny; ++j, row += rowStride)
  {
    __m512d v[K];
    for (int c = 0; c < K; ++c)
      v[c] = _mm512_setzero_pd();
    for (int q = 0; q < R; ++q)
    {
      const __m512d y = _mm512_set1_pd(dy[j * R + q]);
      for (int c = 0; c < K; ++c)
        v[c] = _mm512_fmadd_pd(y, w[c][q], v[c]);
    }
    for (int c = 0; c < K; ++c)
      rows::addToRow(row + std::size_t(c) * sliceStride, left, v[c]);
  }
}

// contractVoxelsXFirst adding to a volume, in AVX-512 intrinsics (its twin,
// as addVoxelsAvx512 is contractVoxels').
__attribute__((target("arch=x86-64-v4"))) void addVoxelsXFirstAvx512(const double (*core)[R][R],
  const double* dx, int nx, const double* dy, int ny, const double* dz, int nz, double m,
  double* scratch, const SphVoxelFactors::Output& to)
{
  double* xt = scratch;
  const int nxPad = rows::transposeRows<R>(dx, nx, 1.0, xt);
  double* const cx = xt + std::size_t(nxPad) * R;
  double* const values = to.values;
  const std::size_t rowStride = to.rowStride, sliceStride = to.sliceStride;
  for (int i0 = 0; i0 < nx; i0 += rows::kLanes)
  {
    __m512d xv[R];
    for (int p = 0; p < R; ++p)
      xv[p] = _mm512_mul_pd(_mm512_set1_pd(m),
        _mm512_loadu_pd(xt + std::size_t(p) * std::size_t(nxPad) + std::size_t(i0)));
    for (int r = 0; r < R; ++r)
      for (int q = r; q < R; ++q)
      {
        __m512d acc = _mm512_setzero_pd();
        for (int p = 0; p < R; ++p)
          acc = _mm512_fmadd_pd(_mm512_set1_pd(core[r][q][p]), xv[p], acc);
        _mm512_storeu_pd(cx + (r * R + q) * rows::kLanes, acc);
        _mm512_storeu_pd(cx + (q * R + r) * rows::kLanes, acc);
      }
    // Two z-cells at a time: each cx row loaded once for both, and two
    // independent chains of multiply-adds per row.
    int k = 0;
    for (; k + 1 < nz; k += 2)
      xFirstZCells<2>(cx, dy, ny, dz + k * R, values + std::size_t(k) * sliceStride + i0, rowStride,
        sliceStride, nx - i0);
    if (k < nz)
      xFirstZCells<1>(cx, dy, ny, dz + k * R, values + std::size_t(k) * sliceStride + i0, rowStride,
        sliceStride, nx - i0);
  }
}

// addVoxelsAvx512 in AVX2 intrinsics (the same operations in the same order
// on every lane, so the same bits), a row vector as two halves. A z-cell's
// contracted core (16 halves) would not fit the 16 registers: it goes to
// the scratch, as do each row's weights, read back as broadcasts.
__attribute__((target("arch=x86-64-v3"))) void addVoxelsAvx2(const double (*core)[R][R],
  const double* dx, int nx, const double* dy, int ny, const double* dz, int nz, double m,
  double* scratch, const SphVoxelFactors::Output& to)
{
  constexpr int H = rows::kHalfLanes;
  double* xt = scratch;
  const int nxPad = rows::transposeRows<R>(dx, nx, 1.0, xt);
  alignas(kCacheLine) double zq[R][R], y[R];
  for (int k = 0; k < nz; ++k)
  {
    for (int half = 0; half < 2; ++half)
    {
      __m256d acc[R];
      for (int q = 0; q < R; ++q)
        acc[q] = _mm256_setzero_pd();
      for (int r = 0; r < R; ++r)
      {
        const __m256d w = _mm256_set1_pd(m * dz[k * R + r]);
        for (int q = 0; q < R; ++q)
          acc[q] = _mm256_fmadd_pd(w, _mm256_loadu_pd(core[r][q] + half * H), acc[q]);
      }
      for (int q = 0; q < R; ++q)
        _mm256_store_pd(zq[q] + half * H, acc[q]);
    }
    for (int j = 0; j < ny; ++j)
    {
      for (int half = 0; half < 2; ++half)
      {
        __m256d yv = _mm256_setzero_pd();
        for (int q = 0; q < R; ++q)
          yv = _mm256_fmadd_pd(_mm256_set1_pd(dy[j * R + q]), _mm256_load_pd(zq[q] + half * H), yv);
        _mm256_store_pd(y + half * H, yv);
      }
      double* row = to.values + std::size_t(k) * to.sliceStride + std::size_t(j) * to.rowStride;
      for (int i0 = 0; i0 < nx; i0 += H)
      {
        __m256d v = _mm256_setzero_pd();
        for (int p = 0; p < R; ++p)
          v = _mm256_fmadd_pd(_mm256_broadcast_sd(y + p),
            _mm256_loadu_pd(xt + std::size_t(p) * std::size_t(nxPad) + std::size_t(i0)), v);
        rows::addToHalfRow(row + i0, nx - i0, v);
      }
    }
  }
}

// addVoxelsXFirstAvx512 in AVX2 intrinsics (the same bits), half a row
// vector at a time, one z-cell at a time (two would need 16 registers for
// their contracted cores alone) and its rows two at a time, so that two
// independent chains of multiply-adds fill the units.
__attribute__((target("arch=x86-64-v3"))) void addVoxelsXFirstAvx2(const double (*core)[R][R],
  const double* dx, int nx, const double* dy, int ny, const double* dz, int nz, double m,
  double* scratch, const SphVoxelFactors::Output& to)
{
  constexpr int H = rows::kHalfLanes;
  double* xt = scratch;
  const int nxPad = rows::transposeRows<R>(dx, nx, 1.0, xt);
  double* const cx = xt + std::size_t(nxPad) * R;
  const std::size_t rowStride = to.rowStride;
  for (int i0 = 0; i0 < nx; i0 += H)
  {
    __m256d xv[R];
    for (int p = 0; p < R; ++p)
      xv[p] = _mm256_mul_pd(_mm256_set1_pd(m),
        _mm256_loadu_pd(xt + std::size_t(p) * std::size_t(nxPad) + std::size_t(i0)));
    for (int r = 0; r < R; ++r)
      for (int q = r; q < R; ++q)
      {
        __m256d acc = _mm256_setzero_pd();
        for (int p = 0; p < R; ++p)
          acc = _mm256_fmadd_pd(_mm256_set1_pd(core[r][q][p]), xv[p], acc);
        _mm256_storeu_pd(cx + (r * R + q) * H, acc);
        _mm256_storeu_pd(cx + (q * R + r) * H, acc);
      }
    const int left = nx - i0;
    for (int k = 0; k < nz; ++k)
    {
      __m256d w[R];
      for (int q = 0; q < R; ++q)
        w[q] = _mm256_setzero_pd();
      for (int r = 0; r < R; ++r)
      {
        const __m256d d = _mm256_set1_pd(dz[k * R + r]);
        for (int q = 0; q < R; ++q)
          w[q] = _mm256_fmadd_pd(d, _mm256_loadu_pd(cx + (r * R + q) * H), w[q]);
      }
      double* row = to.values + std::size_t(k) * to.sliceStride + i0;
      int j = 0;
      for (; j + 1 < ny; j += 2, row += 2 * rowStride)
      {
        __m256d v0 = _mm256_setzero_pd(), v1 = _mm256_setzero_pd();
        for (int q = 0; q < R; ++q)
        {
          v0 = _mm256_fmadd_pd(_mm256_set1_pd(dy[j * R + q]), w[q], v0);
          v1 = _mm256_fmadd_pd(_mm256_set1_pd(dy[(j + 1) * R + q]), w[q], v1);
        }
        rows::addToHalfRow(row, left, v0);
        rows::addToHalfRow(row + rowStride, left, v1);
      }
      if (j < ny)
      {
        __m256d v = _mm256_setzero_pd();
        for (int q = 0; q < R; ++q)
          v = _mm256_fmadd_pd(_mm256_set1_pd(dy[j * R + q]), w[q], v);
        rows::addToHalfRow(row, left, v);
      }
    }
  }
}
#pragma GCC diagnostic pop
#endif

// Lane t of `sums`: the sum of v[t]'s lanes, added in pairs, then pairs of
// pairs, then halves (the same order on every machine).
__attribute__((always_inline)) inline void laneSums(const Double8 (&v)[kLanes], Double8& sums)
{
  typedef long long Lanes __attribute__((vector_size(64)));
  const Lanes even = { 0, 8, 2, 10, 4, 12, 6, 14 }, odd = { 1, 9, 3, 11, 5, 13, 7, 15 };
  const Lanes lowPairs = { 0, 1, 8, 9, 4, 5, 12, 13 }, highPairs = { 2, 3, 10, 11, 6, 7, 14, 15 };
  const Lanes lowHalves = { 0, 1, 2, 3, 8, 9, 10, 11 }, highHalves = { 4, 5, 6, 7, 12, 13, 14, 15 };
  Double8 pairs[4], quads[2];
  for (int t = 0; t < 4; ++t)
    pairs[t] = __builtin_shuffle(v[2 * t], v[2 * t + 1], even) +
      __builtin_shuffle(v[2 * t], v[2 * t + 1], odd);
  for (int t = 0; t < 2; ++t)
    quads[t] = __builtin_shuffle(pairs[2 * t], pairs[2 * t + 1], lowPairs) +
      __builtin_shuffle(pairs[2 * t], pairs[2 * t + 1], highPairs);
  sums = __builtin_shuffle(quads[0], quads[1], lowHalves) +
    __builtin_shuffle(quads[0], quads[1], highHalves);
}

// twoCellVoxelsOf's sums over r in [r0, r1), from zero, one multiply-add
// a term: wy = coreE s_y, wz = coreE s_z and zq[q] = sum_r s_z[r] core[r][q].
__attribute__((always_inline)) inline void overRows(const double (*core)[R][R],
  const double (*coreE)[R], const Double8* s, int r0, int r1, Double8& wy, Double8& wz,
  Double8 (&zq)[R])
{
  Double8 c;
  for (int q = 0; q < R; ++q)
    zq[q] = Double8{};
  for (int r = r0; r < r1; ++r)
  {
    load(coreE[r], c);
    wy += s[1][r] * c;
    wz += s[2][r] * c;
    for (int q = 0; q < R; ++q)
    {
      load(core[r][q], c);
      zq[q] += s[2][r] * c;
    }
  }
}

// SphVoxelFactors::twoCellVoxels (its comment gives the terms). The voxels
// of row (j, k) are the dot products of the x differences e +- s_x with
// g[j][k][p] = sum_qr core[p][q][r] (e +- s_y)[q] (e +- s_z)[r]
//            = coreEE +- coreE s_y +- coreE s_z + (+-)(+-) y,
// y[p] = sum_qr core[p][q][r] s_y[q] s_z[r]; the eight dot products' lane sums
// are then the eight voxels. Sums split in two halves where one chain of
// dependent multiply-adds would be the critical path.
JZ_SPH_CLONES void twoCellVoxelsOf(const double (*core)[R][R], const double (*coreE)[R],
  const double* coreEE, const double* cubic, const double* end, int intervals, const double* middle,
  double m, double* values)
{
  Double8 top, s[3];
  load(end, top);
  for (int d = 0; d < 3; ++d)
    rows::factorsAt(cubic, top, intervals, middle[d], s[d]);
  // Each sum over r in two halves (first, second), each its own arrays, so
  // that they stay in registers (indexed by r / 4 they went to the stack).
  constexpr int H = R / 2;
  Double8 wy[2] = {}, wz[2] = {}, first[R], second[R];
  overRows(core, coreE, s, 0, H, wy[0], wz[0], first);
  overRows(core, coreE, s, H, R, wy[1], wz[1], second);
  Double8 y[2] = {};
  for (int q = 0; q < H; ++q)
    y[0] += s[1][q] * (first[q] + second[q]);
  for (int q = H; q < R; ++q)
    y[1] += s[1][q] * (first[q] + second[q]);
  Double8 ee;
  load(coreEE, ee);
  const Double8 wyy = wy[0] + wy[1], wzz = wz[0] + wz[1], yy = y[0] + y[1];
  const Double8 plusZ = ee + wzz, minusZ = ee - wzz, yPlus = wyy + yy, yMinus = wyy - yy;
  const Double8 g[2][2] = { { plusZ + yPlus, plusZ - yPlus },
    { minusZ + yMinus, minusZ - yMinus } };
  const Double8 dx[2] = { top + s[0], top - s[0] };
  Double8 products[kLanes], v;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i)
        products[(k * 2 + j) * 2 + i] = dx[i] * g[k][j];
  laneSums(products, v);
  v = m * v;
  std::memcpy(values, &v, sizeof v);
}

#if JZ_SPH_WIDE_ROWS
// twoCellVoxelsOf in AVX2 intrinsics: the same sums in the same order (so
// the same bits), each vector over p as two halves. The core contracted
// with s_z is not kept (its 16 halves would not fit the registers): each
// row q's two half sums over r are added and taken into y at once.
__attribute__((target("arch=x86-64-v3"))) void twoCellVoxelsAvx2(const double (*core)[R][R],
  const double (*coreE)[R], const double* coreEE, const double* cubic, const double* end,
  int intervals, const double* middle, double m, double* values)
{
  constexpr int H = rows::kHalfLanes;
  const __m256d top[2] = { _mm256_loadu_pd(end), _mm256_loadu_pd(end + H) };
  __m256d s[3][2];
  for (int d = 0; d < 3; ++d)
    rows::factorsAtHalves(cubic, top, intervals, middle[d], s[d]);
  alignas(kCacheLine) double sy[R], sz[R];
  _mm256_store_pd(sy, s[1][0]);
  _mm256_store_pd(sy + H, s[1][1]);
  _mm256_store_pd(sz, s[2][0]);
  _mm256_store_pd(sz + H, s[2][1]);
  // g[k][j][half], the x differences' dot products' other factor.
  __m256d g[2][2][2];
  for (int half = 0; half < 2; ++half)
  {
    const int at = half * H;
    // wy = coreE s_y and wz = coreE s_z, each in halves over r.
    __m256d wy[2], wz[2], y[2];
    for (int part = 0; part < 2; ++part)
    {
      wy[part] = wz[part] = _mm256_setzero_pd();
      for (int r = part * H; r < (part + 1) * H; ++r)
      {
        const __m256d c = _mm256_loadu_pd(coreE[r] + at);
        wy[part] = _mm256_fmadd_pd(_mm256_set1_pd(sy[r]), c, wy[part]);
        wz[part] = _mm256_fmadd_pd(_mm256_set1_pd(sz[r]), c, wz[part]);
      }
    }
    // y = sum_q s_y[q] sum_r s_z[r] core[r][q], the sums over r and q in
    // halves.
    y[0] = y[1] = _mm256_setzero_pd();
    for (int q = 0; q < R; ++q)
    {
      __m256d first = _mm256_setzero_pd(), second = _mm256_setzero_pd();
      for (int r = 0; r < H; ++r)
      {
        first = _mm256_fmadd_pd(_mm256_set1_pd(sz[r]), _mm256_loadu_pd(core[r][q] + at), first);
        second =
          _mm256_fmadd_pd(_mm256_set1_pd(sz[r + H]), _mm256_loadu_pd(core[r + H][q] + at), second);
      }
      y[q / H] = _mm256_fmadd_pd(_mm256_set1_pd(sy[q]), _mm256_add_pd(first, second), y[q / H]);
    }
    const __m256d ee = _mm256_loadu_pd(coreEE + at);
    const __m256d wyy = _mm256_add_pd(wy[0], wy[1]), wzz = _mm256_add_pd(wz[0], wz[1]),
                  yy = _mm256_add_pd(y[0], y[1]);
    const __m256d plusZ = _mm256_add_pd(ee, wzz), minusZ = _mm256_sub_pd(ee, wzz),
                  yPlus = _mm256_add_pd(wyy, yy), yMinus = _mm256_sub_pd(wyy, yy);
    g[0][0][half] = _mm256_add_pd(plusZ, yPlus);
    g[0][1][half] = _mm256_sub_pd(plusZ, yPlus);
    g[1][0][half] = _mm256_add_pd(minusZ, yMinus);
    g[1][1][half] = _mm256_sub_pd(minusZ, yMinus);
  }
  // The eight products' lane sums, in laneSums' order: lanes in pairs, then
  // pairs of pairs, then the halves.
  __m256d pairs[2][4];
  for (int half = 0; half < 2; ++half)
  {
    const __m256d dx[2] = { _mm256_add_pd(top[half], s[0][half]),
      _mm256_sub_pd(top[half], s[0][half]) };
    for (int t = 0; t < 4; ++t)
    {
      const int k = t / 2, j = t % 2;
      pairs[half][t] =
        _mm256_hadd_pd(_mm256_mul_pd(dx[0], g[k][j][half]), _mm256_mul_pd(dx[1], g[k][j][half]));
    }
  }
  const __m256d scale = _mm256_set1_pd(m);
  for (int u = 0; u < 2; ++u)
  {
    __m256d quads[2];
    for (int half = 0; half < 2; ++half)
    {
      const __m256d a = pairs[half][2 * u], b = pairs[half][2 * u + 1];
      quads[half] =
        _mm256_add_pd(_mm256_permute2f128_pd(a, b, 0x20), _mm256_permute2f128_pd(a, b, 0x31));
    }
    _mm256_storeu_pd(values + u * H, _mm256_mul_pd(scale, _mm256_add_pd(quads[0], quads[1])));
  }
}
#endif
} // namespace

SphVoxelFactors::SphVoxelFactors(const SphSeparableForm& form)
{
  std::memcpy(core_, form.weights.data(), sizeof core_);
  axis_ = SphFactorCubics(form.u, form.intervals);
  const double* e = axis_.end();
  for (int p = 0; p < R; ++p)
  {
    coreEE_[p] = 0;
    for (int q = 0; q < R; ++q)
    {
      coreE_[p][q] = 0;
      for (int r = 0; r < R; ++r)
        coreE_[p][q] += core_[p][q][r] * e[r];
      coreEE_[p] += coreE_[p][q] * e[q];
    }
  }
}

const SphVoxelFactors& SphVoxelFactors::get(SphKernel kernel)
{
  return builtOnce<SphVoxelFactors, 2>(
    kernelIndex(kernel), [&] { return new SphVoxelFactors(bakedVolumeForm(kernel)); });
}

void SphVoxelFactors::voxels(const double* dx, int nx, const double* dy, int ny, const double* dz,
  int nz, double m, double* scratch, const Output& to) const
{
#if JZ_SPH_WIDE_ROWS
  if (to.add && sphRowCode() == SphRowCode::Avx512)
  {
    if (ny >= kXFirstRows)
      return addVoxelsXFirstAvx512(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
    return addVoxelsAvx512(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
  }
  if (to.add && sphRowCode() == SphRowCode::Avx2)
  {
    if (ny >= kXFirstRows)
      return addVoxelsXFirstAvx2(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
    return addVoxelsAvx2(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
  }
#endif
  if (ny >= kXFirstRows)
    return contractVoxelsXFirst(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
  contractVoxels(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
}

void SphVoxelFactors::twoCellVoxels(const double* middle, double m, double* values) const
{
#if JZ_SPH_WIDE_ROWS
  if (sphRowCode() == SphRowCode::Avx2)
    return twoCellVoxelsAvx2(core_, coreE_, coreEE_, axis_.cubic().data(), axis_.end(),
      axis_.intervals(), middle, m, values);
#endif
  twoCellVoxelsOf(core_, coreE_, coreEE_, axis_.cubic().data(), axis_.end(), axis_.intervals(),
    middle, m, values);
}

std::size_t SphVoxelFactors::scratchSize(int nx, int, int nz)
{
  return std::size_t(nz) * R * R + std::size_t(paddedRow(nx)) * R + std::size_t(R) * R * kRowVector;
}
} // namespace jz
