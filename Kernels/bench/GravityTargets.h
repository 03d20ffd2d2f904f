// The gravity benchmarks' reference: float64 direct summation (G = 1) at a
// spread of target particles, each excluding itself.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace jzbench
{
struct GravityTargets
{
  std::vector<std::size_t> index; // the target particles
  std::vector<double> phi, acc;   // per target: potential, acceleration (xyz)
};

inline GravityTargets directAtTargets(const std::vector<double>& xyz,
  const std::vector<double>& mass, std::size_t count, double eps, int threads)
{
  const std::size_t n = mass.size();
  GravityTargets t;
  for (std::size_t i = 0; i < count && i < n; ++i)
    t.index.push_back((i * 2654435761u) % n);
  t.phi.resize(t.index.size());
  t.acc.resize(3 * t.index.size());
#pragma omp parallel for num_threads(threads)
  for (long long i = 0; i < (long long)t.index.size(); ++i)
  {
    const double* q = &xyz[3 * t.index[i]];
    double u = 0, g[3] = { 0, 0, 0 };
    for (std::size_t j = 0; j < n; ++j)
    {
      if (j == t.index[i])
        continue;
      const double d[3] = { xyz[3 * j] - q[0], xyz[3 * j + 1] - q[1], xyz[3 * j + 2] - q[2] };
      const double s2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps;
      const double inv = 1 / std::sqrt(s2);
      u += mass[j] * inv;
      for (int k = 0; k < 3; ++k)
        g[k] += mass[j] * inv * inv * inv * d[k];
    }
    t.phi[i] = -u;
    for (int k = 0; k < 3; ++k)
      t.acc[3 * i + k] = g[k];
  }
  return t;
}
} // namespace jzbench
