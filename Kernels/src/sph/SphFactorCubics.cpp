#include "SphFactorCubics.h"

#include <cstring>

#include "SphRowVectors.h"

namespace jz
{
namespace
{
constexpr int R = SphFactorCubics::kRank;

using rows::Double8;
using rows::load;
static_assert(rows::kLanes == R, "an edge's factors are one vector");

// The factors at the n + 1 edges (lo + (first + i) step - x) inv of an axis, each by
// its interval's cubic (sign folded in; exactly u(1) beyond the support, so
// that a particle's differences sum to the whole kernel), then their
// differences across the n cells.
JZ_SPH_CLONES void factorDifferences(const double* cubic, const double* end, int intervals,
  double lo, int first, double step, double x, double inv, int n, double* diff)
{
  Double8 previous, top, value;
  load(end, top);
  for (int i = 0; i <= n; ++i)
  {
    const double a = (lo + (first + i) * step - x) * inv;
    // The ends of a kernel's span lie almost always beyond its support: the
    // value there needs no cubic (the same bits as the select below).
    if ((i == 0 || i == n) && !(std::fabs(a) < 1.0))
      value = (a < 0 ? -1.0 : 1.0) * top;
    else
      rows::factorsAt(cubic, top, intervals, a, value);
    if (i > 0)
    {
      const Double8 d = value - previous;
      std::memcpy(diff + std::size_t(i - 1) * R, &d, sizeof d);
    }
    previous = value;
  }
}

} // namespace

SphFactorCubics::SphFactorCubics(const std::vector<double>& u, int intervals)
  : intervals_(intervals)
{
  const int n = intervals, s = n + 3;
  // The padded nodes -1 .. n + 1 (node -1 is -node 1: the factors are odd),
  // then each interval's cubic through its 4 nodes (lagrangeWeights' in powers of f).
  std::vector<double> padded(std::size_t(s) * R);
  for (int node = 0; node < s; ++node)
  {
    double sign = 1;
    const int source = paddedSource(node - 1, n, sign);
    for (int p = 0; p < R; ++p)
      padded[std::size_t(node) * R + std::size_t(p)] =
        sign * u[std::size_t(source) * R + std::size_t(p)];
  }
  cubic_.assign(std::size_t(n) * 4 * R, 0.0);
  for (int node = 0; node < n; ++node)
    for (int p = 0; p < R; ++p)
    {
      auto f = [&](int k) { return padded[std::size_t(node + k) * R + std::size_t(p)]; };
      double* c = cubic_.data() + std::size_t(node) * 4 * R + std::size_t(p);
      c[0] = f(1);
      c[R] = -f(0) / 3 - f(1) / 2 + f(2) - f(3) / 6;
      c[2 * R] = f(0) / 2 - f(1) + f(2) / 2;
      c[3 * R] = -f(0) / 6 + f(1) / 2 - f(2) / 2 + f(3) / 6;
    }
  for (int p = 0; p < R; ++p)
    end_[p] = u[std::size_t(n) * R + std::size_t(p)];
}

void SphFactorCubics::cellDifferences(
  double lo, int first, double step, double x, double h, int n, double* diff) const
{
  factorDifferences(cubic_.data(), end_, intervals_, lo, first, step, x, 1.0 / h, n, diff);
}
} // namespace jz
