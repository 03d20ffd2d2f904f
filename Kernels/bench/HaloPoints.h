// Point sets of the friends-of-friends benchmarks (CPU and CUDA): a periodic
// unit box, uniform, or "clustered" with 85% of the points in spherical
// halos of 20 to 50000 points (Pareto sizes, overdensity ~200).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace jzbench
{
template <class T>
std::vector<T> makePoints(std::size_t n, bool clustered, unsigned seed)
{
  std::vector<T> xyz(3 * n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::size_t i = 0;
  auto put = [&](double x, double y, double z)
  {
    const double p[3] = { x, y, z };
    for (int d = 0; d < 3; ++d)
    {
      double w = p[d] - std::floor(p[d]);
      T t = T(w);
      if (t >= T(1) || t < T(0))
        t = T(0);
      xyz[3 * i + d] = t;
    }
    ++i;
  };
  if (clustered)
  {
    const std::size_t inHalos = std::size_t(0.85 * double(n));
    while (i < inHalos)
    {
      // Pareto(alpha = 1) sizes from 20 to 50000 points.
      std::size_t m = std::size_t(20.0 / std::max(1e-9, u(rng)));
      m = std::min<std::size_t>({ m, 50000, inHalos - i });
      const double R = std::cbrt(3.0 * double(m) / (4.0 * M_PI * 200.0 * double(n)));
      const double c[3] = { u(rng), u(rng), u(rng) };
      for (std::size_t k = 0; k < m; ++k)
      {
        const double r = R * u(rng);
        double v[3] = { g(rng), g(rng), g(rng) };
        const double s = r / std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + 1e-300);
        put(c[0] + s * v[0], c[1] + s * v[1], c[2] + s * v[2]);
      }
    }
  }
  while (i < n)
    put(u(rng), u(rng), u(rng));
  return xyz;
}
} // namespace jzbench
