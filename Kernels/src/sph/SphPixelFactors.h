// The column table in separable form, for projected kernels narrower than
// SphColumnCentres::kMinPixels. The cumulative column integral G2
// (SphKernelTables.h) is a symmetric matrix on the table's nodes, and
// numerically of low rank: its eigenvalues fall below 1e-7 of the largest
// by the eighth, and its 8 leading terms are within 4e-8 of the table. So
//   G2(a, b) ~= sum_p w_p u_p(a) u_p(b)
// with u those eigenvectors (SphFactorCubics: interpolated by the table's
// own cubics) and w their eigenvalues, scaled so that the whole kernel,
// 4 G2(1, 1), is still exactly 1. A column's pixels are then
//   pixel(i, j) = m sum_p w_p du[i][p] dv[j][p]
// (du, dv: the differences of u across each cell of an axis), a row a
// vector at a time, instead of the table's four corners of 16 nodes each.
// u and w are computed ahead (SphSeparableForms.h).
#pragma once

#include <cstddef>

#include "jz/DensityKernels.h"

#include "SphFactorCubics.h"
#include "SphSeparableForms.h"

namespace jz
{
class SphPixelFactors
{
public:
  static constexpr int kRank = SphFactorCubics::kRank;
  // The factors of `kernel`'s form as the library holds it (bakedColumnForm).
  static const SphPixelFactors& get(SphKernel kernel);
  // The factors of a column form (computeColumnForm's or bakedColumnForm's).
  explicit SphPixelFactors(const SphSeparableForm& form);

  // The factors along either axis, and their weights w_p.
  const SphFactorCubics& axis() const { return axis_; }
  const double* weights() const { return weight_; }

  // Where pixels() puts row j's values (i < nu): at values + j rowStride,
  // added to what is there (add), or written over it as a whole padded row
  // of paddedRow(nu) values (the values beyond nu unspecified).
  struct Output
  {
    double* values;
    std::size_t rowStride;
    bool add;
  };

  // The pixels m sum_p w_p du[i][p] dv[j][p] (the differences of
  // cellDifferences) into `to`. scratch: room for scratchSize(nu) doubles.
  void pixels(const double* du, int nu, const double* dv, int nv, double m, double* scratch,
    const Output& to) const;
  static std::size_t scratchSize(int nu) { return std::size_t(paddedRow(nu)) * kRank; }
  static constexpr int kRowVector = 8;
  static int paddedRow(int nu) { return (nu + kRowVector - 1) / kRowVector * kRowVector; }

private:
  SphFactorCubics axis_;
  double weight_[kRank];
};

// A narrow column's pixel from its cell's edges a0 < a1 along u and b0 < b1
// along v (unit support): sum_p w_p (u_p(a1) - u_p(a0)) (u_p(b1) - u_p(b0)),
// the fraction of its mass pixels() gives, one pixel at a time (host and
// device code).
JZ_HD double pixelFraction(
  const FactorCubicsView& f, const double* weight, double a0, double a1, double b0, double b1)
{
  constexpr int R = SphFactorCubics::kRank;
  double ua[R], ub[R], va[R], vb[R];
  factorValues(f, a0, ua);
  factorValues(f, a1, ub);
  factorValues(f, b0, va);
  factorValues(f, b1, vb);
  double frac = 0;
  for (int p = 0; p < R; ++p)
    frac += weight[p] * (ub[p] - ua[p]) * (vb[p] - va[p]);
  return frac;
}
} // namespace jz
