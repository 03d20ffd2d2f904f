// One axis of a cumulative table's separable form (SphVoxelFactors,
// SphPixelFactors): the factors u_p, p < kRank, known at the table's nodes
// 0 .. n on [0, 1] and interpolated as the table is, each interval's cubic
// through its 4 nodes (lagrangeWeights) in powers of the fraction; odd in
// the coordinate (node -1 = -node 1) and exactly u(1) beyond 1, so that a
// kernel's differences across the cells it covers sum to the whole kernel.
#pragma once

#include <cmath>
#include <vector>

#include "common/CacheAligned.h"
#include "jz/Config.h"
#include "sph/SphKernelTables.h"

namespace jz
{
class SphFactorCubics
{
public:
  static constexpr int kRank = 8;

  SphFactorCubics() = default;
  // u[node * kRank + p] at the nodes 0 .. intervals.
  SphFactorCubics(const std::vector<double>& u, int intervals);

  // The differences across the cells first .. first + n - 1 of an axis whose
  // edges lie at (lo + i step - x) / h on the unit kernel:
  //   diff[i * kRank + p] = u_p(edge first + i + 1) - u_p(edge first + i).
  // (Each edge from lo, so that its bits do not depend on where a strip of
  // the map begins.)
  void cellDifferences(
    double lo, int first, double step, double x, double h, int n, double* diff) const;

  // One axis of a kernel for the call below: its cells first .. first + n
  // - 1, edges at (lo + i step - x) / h, differences into diff.
  struct Span
  {
    double lo;
    int first;
    double step, x;
    int n;
    double* diff;
  };
  // cellDifferences for each of a kernel's axes (up to 3), the same bits as
  // one at a time: with AVX-512 the edges' intervals of all of them are
  // found first, 8 edges a vector, then each edge's cubic (the scalar steps,
  // one edge at a time, cost as much as the cubic).
  void cellDifferences(const Span* spans, int count, double h) const;

  int intervals() const { return intervals_; }
  // Interval i's coefficient j of u_p at [(i * 4 + j) * kRank + p]; u_p(1).
  const CacheAlignedVector<double>& cubic() const { return cubic_; }
  const double* end() const { return end_; }

private:
  int intervals_ = 0;
  CacheAlignedVector<double> cubic_; // an interval's coefficients: whole lines
  alignas(kCacheLine) double end_[kRank] = {};
};

// The factors as the GPU holds them (cubic() and end() copied there).
struct FactorCubicsView
{
  const double* cubic;
  const double* end;
  int intervals;
};

// u_p(a) for every p: the value of cellDifferences' edges, one edge at a
// time (host and device code; the CPU's own loop is vectorised over p).
JZ_HD void factorValues(const FactorCubicsView& f, double a, double* u)
{
  constexpr int R = SphFactorCubics::kRank;
  const TableNode at = tableNode(a, f.intervals);
  if (!(fabs(a) < 1.0))
  {
    for (int p = 0; p < R; ++p)
      u[p] = at.sign * f.end[p];
    return;
  }
  const double* c = f.cubic + std::size_t(at.node) * 4 * R;
  const double t = at.fraction;
  for (int p = 0; p < R; ++p)
    u[p] = at.sign * (((c[3 * R + p] * t + c[2 * R + p]) * t + c[R + p]) * t + c[p]);
}
} // namespace jz
