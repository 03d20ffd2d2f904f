// The few eigenpairs of largest magnitude of a symmetric matrix whose
// spectrum falls fast (the SPH maps' tables, 129 x 129): orthogonal
// iteration on a block of twice as many vectors, each step closed by
// Rayleigh-Ritz on the block (symmetricEigen of its small matrix). A few
// matrix products, where a whole Jacobi decomposition of the table costs
// tens of milliseconds on a map's first run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/SymmetricEigen.h"

namespace jz
{
namespace leading_detail
{
// The columns of the n x b row-major block x made orthonormal (modified
// Gram-Schmidt, twice over for rounding).
inline void orthonormalize(std::vector<double>& x, std::size_t n, std::size_t b)
{
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t c = 0; c < b; ++c)
    {
      for (std::size_t d = 0; d < c; ++d)
      {
        double dot = 0;
        for (std::size_t i = 0; i < n; ++i)
          dot += x[i * b + d] * x[i * b + c];
        for (std::size_t i = 0; i < n; ++i)
          x[i * b + c] -= dot * x[i * b + d];
      }
      double norm = 0;
      for (std::size_t i = 0; i < n; ++i)
        norm += x[i * b + c] * x[i * b + c];
      norm = std::sqrt(norm);
      for (std::size_t i = 0; i < n; ++i)
        x[i * b + c] = norm > 0 ? x[i * b + c] / norm : 0.0;
    }
}

// out = a x for the n x n matrix a and the n x b block x (row-major).
inline void multiply(const double* a, const std::vector<double>& x, std::size_t n, std::size_t b,
  std::vector<double>& out)
{
  std::fill(out.begin(), out.end(), 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
    {
      const double aij = a[i * n + j];
      for (std::size_t c = 0; c < b; ++c)
        out[i * b + c] += aij * x[j * b + c];
    }
}
} // namespace leading_detail

// a: the n x n symmetric matrix, row-major. On return values[p] and the
// unit eigenvector vectors[i * k + p] (i < n) for p < k, by decreasing
// |value|, each with a residual |a v - value v| within 1e-14 of the largest
// |value| (or as close as 500 steps come).
inline void leadingEigenpairs(const double* a, int n, int k, double* values, double* vectors)
{
  using namespace leading_detail;
  const std::size_t N = std::size_t(n), K = std::size_t(k),
                    b = std::min(N, 2 * K); // the block: its last vectors speed the first k
  std::vector<double> q(N * b), z(N * b), ritz(N * b), image(N * b);
  std::uint64_t state = 0x9E3779B97F4A7C15ull; // a fixed start: the same result every run
  for (double& x : q)
  {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = double(state >> 11) * 0x1.0p-53 - 0.5;
  }
  orthonormalize(q, N, b);
  std::vector<double> h(b * b), w(b * b), theta(b);
  std::vector<std::size_t> order(b);
  for (int step = 0; step < 500; ++step)
  {
    multiply(a, q, N, b, z);
    // h = q' a q, symmetrised; its eigenvectors w give the Ritz vectors q w.
    for (std::size_t c = 0; c < b; ++c)
      for (std::size_t d = 0; d < b; ++d)
      {
        double s = 0;
        for (std::size_t i = 0; i < N; ++i)
          s += q[i * b + c] * z[i * b + d];
        h[c * b + d] = s;
      }
    for (std::size_t c = 0; c < b; ++c)
      for (std::size_t d = c + 1; d < b; ++d)
        h[c * b + d] = h[d * b + c] = 0.5 * (h[c * b + d] + h[d * b + c]);
    symmetricEigen(h.data(), int(b), theta.data(), w.data());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(),
      [&](std::size_t x, std::size_t y) { return std::fabs(theta[x]) > std::fabs(theta[y]); });
    // The Ritz vectors q w and their images a q w = z w, largest first.
    std::fill(ritz.begin(), ritz.end(), 0.0);
    std::fill(image.begin(), image.end(), 0.0);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t p = 0; p < b; ++p)
        for (std::size_t c = 0; c < b; ++c)
        {
          ritz[i * b + p] += q[i * b + c] * w[c * b + order[p]];
          image[i * b + p] += z[i * b + c] * w[c * b + order[p]];
        }
    double worst = 0;
    for (std::size_t p = 0; p < K; ++p)
    {
      double r = 0;
      for (std::size_t i = 0; i < N; ++i)
      {
        const double e = image[i * b + p] - theta[order[p]] * ritz[i * b + p];
        r += e * e;
      }
      worst = std::max(worst, std::sqrt(r));
    }
    const bool done = worst <= 1e-14 * std::fabs(theta[order[0]]);
    if (done || step == 499)
    {
      for (std::size_t p = 0; p < K; ++p)
      {
        values[p] = theta[order[p]];
        for (std::size_t i = 0; i < N; ++i)
          vectors[i * K + p] = ritz[i * b + p];
      }
      return;
    }
    q = image; // a times the block, in the Ritz basis
    orthonormalize(q, N, b);
  }
}
} // namespace jz
