// The cumulative integrals of the unit SPH kernels (support 1) that make the
// maps' pixel and voxel integrals exact to interpolation accuracy
// (well below 1e-6 of a particle's mass):
//   column: G2(a, b) = integral over [0, a] x [0, b] of the projected kernel,
//   volume: G3(a, b, c) = integral over [0, a] x [0, b] x [0, c] of W,
// both odd in each argument and constant beyond 1, normalised so that the
// whole kernel integrates to exactly 1 (a particle inside the map loses no
// mass). Tabulated once per kernel (double-precision quadrature), read by
// tensor cubic interpolation.
#pragma once

#include <cstddef>
#include <vector>

#include "jz/DensityKernels.h"

namespace jz
{
// Where a coordinate falls in a table: 4 interpolation nodes (indices into
// the padded table) and their weights, and the sign of the coordinate.
struct TableStencil
{
  int first = 0; // padded index of the first of 4 consecutive nodes
  double weight[4] = { 0, 0, 0, 0 };
  double sign = 1;
};

class SphCumulativeTable
{
public:
  // The table of `kernel` in `dims` (2: column, 3: volume) dimensions.
  static const SphCumulativeTable& get(SphKernel kernel, int dims);

  // The stencil of the (unit-support) coordinate a.
  TableStencil stencil(double a) const;
  double value(const TableStencil& a, const TableStencil& b) const;
  // value(a[i], b) for the n stencils a, into out[i].
  void row(const TableStencil& b, const TableStencil* a, std::size_t n, double* out) const;
  double value(const TableStencil& a, const TableStencil& b, const TableStencil& c) const;

  int intervals() const { return n_; }

private:
  static constexpr int kMaxIntervals = 256;
  SphCumulativeTable(SphKernel kernel, int dims);
  int n_ = 0;      // intervals on [0, 1]
  int stride_ = 0; // padded nodes per axis: n + 3 (nodes -1 .. n + 1)
  std::vector<double> padded_;
};

// The projected kernel of unit support at radius R: 2 * integral over
// 0 <= z <= sqrt(1 - R^2) of W(sqrt(R^2 + z^2), 1) (adaptive quadrature).
double columnKernel(SphKernel kernel, double R);
} // namespace jz
