// Eigen-decomposition of a small symmetric matrix by cyclic Jacobi rotations:
// no library, and accurate to rounding in every eigenvector (the matrices
// here are 3 x 3 second moments and the 16 x 16 blocks of
// leadingEigenpairs, LeadingEigenpairs.h).
#pragma once

#include <cmath>

namespace jz
{
// a: the n x n symmetric matrix, row-major (overwritten). On return
// values[k] is an eigenvalue and column k of v (row-major n x n) its unit
// eigenvector, in no particular order.
inline void symmetricEigen(double* a, int n, double* values, double* v)
{
  const std::size_t m = std::size_t(n);
  auto at = [&](double* x, int i, int j) -> double&
  { return x[std::size_t(i) * m + std::size_t(j)]; };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      at(v, i, j) = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep)
  {
    double off = 0, diag = 0;
    for (int p = 0; p < n; ++p)
    {
      diag += at(a, p, p) * at(a, p, p);
      for (int q = p + 1; q < n; ++q)
        off += at(a, p, q) * at(a, p, q);
    }
    if (!(off > 1e-32 * diag))
      break;
    for (int p = 0; p + 1 < n; ++p)
      for (int q = p + 1; q < n; ++q)
      {
        if (at(a, p, q) == 0)
          continue;
        const double theta = (at(a, q, q) - at(a, p, p)) / (2 * at(a, p, q));
        const double t =
          (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), sn = t * c;
        for (int k = 0; k < n; ++k) // columns p, q of a
        {
          const double akp = at(a, k, p), akq = at(a, k, q);
          at(a, k, p) = c * akp - sn * akq;
          at(a, k, q) = sn * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) // rows p, q of a
        {
          const double apk = at(a, p, k), aqk = at(a, q, k);
          at(a, p, k) = c * apk - sn * aqk;
          at(a, q, k) = sn * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k)
        {
          const double vkp = at(v, k, p), vkq = at(v, k, q);
          at(v, k, p) = c * vkp - sn * vkq;
          at(v, k, q) = sn * vkp + c * vkq;
        }
      }
  }
  for (int k = 0; k < n; ++k)
    values[k] = at(a, k, k);
}
} // namespace jz
