// The gravity benchmarks' reference: float64 direct summation (G = 1) at a
// spread of target particles, each excluding itself.
#pragma once

#include <algorithm>
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

// The q-quantile of v (0 for none).
inline double percentile(std::vector<double> v, double q)
{
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::size_t(q * double(v.size() - 1))];
}

// Relative error of an acceleration (3 values), absolute where the
// reference is 0.
inline double accelerationError(const double* got, const double* ref)
{
  double d2 = 0, n2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    d2 += (got[k] - ref[k]) * (got[k] - ref[k]);
    n2 += ref[k] * ref[k];
  }
  return n2 > 0 ? std::sqrt(d2 / n2) : std::sqrt(d2);
}

// Relative error of a potential, absolute where the reference is 0.
inline double potentialError(double got, double ref)
{
  return ref != 0 ? std::abs(got - ref) / std::abs(ref) : std::abs(got);
}

// Per target, the errors of a run's results (every particle, input order).
struct TargetErrors
{
  std::vector<double> acc, phi;
};

inline TargetErrors errorsAtTargets(
  const GravityTargets& t, const std::vector<double>& phi, const std::vector<double>& acc)
{
  TargetErrors e;
  for (std::size_t i = 0; i < t.index.size(); ++i)
  {
    const std::size_t p = t.index[i];
    e.acc.push_back(accelerationError(&acc[3 * p], &t.acc[3 * i]));
    e.phi.push_back(potentialError(phi[p], t.phi[i]));
  }
  return e;
}
} // namespace jzbench
