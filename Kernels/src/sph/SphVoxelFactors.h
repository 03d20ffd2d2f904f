// The volume table in separable form, for every kernel of a volume. The
// cumulative volume integral G3 (SphKernelTables.h) is symmetric
// and, in any one argument, numerically of low rank: its unfolding's
// singular values fall below 1e-7 of the largest by the eighth. So
//   G3(a, b, c) ~= sum_pqr core[p][q][r] u_p(a) u_q(b) u_r(c)
// with u the leading eigenvectors of the unfolding's Gram matrix (the same
// for every axis) and core the table projected on them (a truncated Tucker
// form, within 1e-7 of the table; the core is scaled so that the whole kernel
// still integrates to exactly 1). The u are interpolated by the table's own
// cubics (each interval's, in powers of its fraction), so the separable form
// is the table's interpolant, truncated. A particle's voxels are then
//   voxel(i, j, k) = m sum_pqr core[p][q][r] dx[i][p] dy[j][q] dz[k][r],
// d the differences of u across each cell of an axis: three small dense
// contractions (z first, or x first for kernels of many rows), instead of
// 64 scattered table reads per corner. u and core are computed ahead
// (SphSeparableForms.h).
#pragma once

#include <cstddef>
#include <vector>

#include "jz/DensityKernels.h"

#include "SphFactorCubics.h"
#include "SphKernelTables.h"
#include "SphSeparableForms.h"

namespace jz
{
class SphVoxelFactors
{
public:
  static constexpr int kRank = SphFactorCubics::kRank;
  // The factors of `kernel`'s form as the library holds it (bakedVolumeForm).
  static const SphVoxelFactors& get(SphKernel kernel);
  // The factors of a volume form (computeVolumeForm's or bakedVolumeForm's).
  explicit SphVoxelFactors(const SphSeparableForm& form);

  // The factors along an axis (every axis: the table is symmetric).
  const SphFactorCubics& axis() const { return axis_; }

  // Where voxels() puts the values of row (j, k), i < nx: at values + k
  // sliceStride + j rowStride, added to what is there (add), or written
  // over it as a whole padded row of paddedRow(nx) values (the values beyond
  // nx unspecified).
  struct Output
  {
    double* values;
    std::size_t rowStride, sliceStride;
    bool add;
  };

  // The voxels m sum_pqr core[p][q][r] dx[i][p] dy[j][q] dz[k][r] (the
  // differences of cellDifferences) into `to`. scratch: room for
  // scratchSize(nx, ny, nz) doubles.
  void voxels(const double* dx, int nx, const double* dy, int ny, const double* dz, int nz,
    double m, double* scratch, const Output& to) const;
  static std::size_t scratchSize(int nx, int ny, int nz);

  // The voxels of a kernel that spans at most two cells along each axis
  // (half the particles of a typical volume). Along such an axis the
  // differences are e + s and e - s, e = u(1) (half the whole kernel's) and
  // s the factors at the middle edge; an axis of one cell takes s = e. The
  // voxels m sum core (e + a s_x)(e + b s_y)(e + c s_z), a, b, c = +-1, then
  // need the core contracted with s_y and s_z once (its contractions with e
  // built once): 88 multiply-adds and eight dot products, against 64 per
  // z-cell and 24 per row contracted one axis at a time. middle[d]: axis
  // d's middle edge on the unit kernel, (lo + (first + 1) step - x) / h, or
  // 1 for an axis of one cell. values[(k * 2 + j) * 2 + i]: cell (i, j, k)
  // of the kernel's 2 x 2 x 2 block from its first cells.
  void twoCellVoxels(const double* middle, double m, double* values) const;
  static constexpr int kRowVector = 8;
  static int paddedRow(int nx) { return (nx + kRowVector - 1) / kRowVector * kRowVector; }

private:
  SphFactorCubics axis_;
  alignas(kCacheLine) double core_[kRank][kRank][kRank];
  // The core contracted with e once (along its last axis) and twice:
  // twoCellVoxels' constant terms.
  alignas(kCacheLine) double coreE_[kRank][kRank];
  alignas(kCacheLine) double coreEE_[kRank];
};
} // namespace jz
