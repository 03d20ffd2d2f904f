// Test point distributions shared by the kernel tests and benchmarks.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace jztest
{
// Interleaved xyz coordinates of n points of the named distribution:
// uniform, clustered, duplicates, lattice, planar, outliers, offset, mixedsign;
// also runs (bulk duplicates: half the points on 12 sites), not in allKinds().
template <class T>
std::vector<T> makePoints(const std::string& kind, std::size_t n, unsigned seed = 1)
{
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<T> xyz(3 * n);
  if (kind == "lattice")
  {
    const std::size_t side = std::size_t(std::ceil(std::cbrt(double(n))));
    for (std::size_t i = 0; i < n; ++i)
    {
      xyz[3 * i + 0] = T(i % side);
      xyz[3 * i + 1] = T((i / side) % side);
      xyz[3 * i + 2] = T(i / (side * side));
    }
    return xyz;
  }
  std::vector<double> centers;
  for (int c = 0; c < 20; ++c)
    centers.push_back(u(rng));
  for (std::size_t i = 0; i < n; ++i)
  {
    double p[3] = { u(rng), u(rng), u(rng) };
    if (kind == "clustered" && i % 5 != 0)
    {
      const std::size_t c = (i * 7919) % 18;
      const double s = 0.002 + 0.03 * double(c) / 18.0;
      for (int d = 0; d < 3; ++d)
        p[d] = centers[c + d] + s * g(rng);
    }
    else if (kind == "duplicates" && i > 0 && i % 3 != 0)
    {
      const std::size_t j = (i * 2654435761u) % i;
      for (int d = 0; d < 3; ++d)
        p[d] = double(xyz[3 * j + d]);
    }
    else if (kind == "runs" && i % 2 == 0)
    {
      // Half the points on 12 sites, multiplicities from ~10 to ~n/5.
      const double r = u(rng);
      const std::size_t c = std::size_t(12 * r * r * r);
      for (int d = 0; d < 3; ++d)
        p[d] = centers[c + d];
    }
    else if (kind == "planar")
    {
      p[2] = 0.25;
    }
    else if (kind == "outliers" && i % 97 == 0)
    {
      for (int d = 0; d < 3; ++d)
        p[d] = 1e4 * g(rng);
    }
    else if (kind == "offset")
    {
      for (int d = 0; d < 3; ++d)
        p[d] = 1e6 + 10.0 * p[d];
    }
    else if (kind == "mixedsign")
    {
      for (int d = 0; d < 3; ++d)
        p[d] = 2.0 * p[d] - 1.0;
    }
    for (int d = 0; d < 3; ++d)
      xyz[3 * i + d] = T(p[d]);
  }
  return xyz;
}

// `count` more points at (x, y, z).
template <class T>
void appendCopies(std::vector<T>& xyz, std::size_t count, T x, T y, T z)
{
  for (std::size_t i = 0; i < count; ++i)
    xyz.insert(xyz.end(), { x, y, z });
}

inline std::vector<std::string> allKinds()
{
  return { "uniform", "clustered", "duplicates", "lattice", "planar", "outliers", "offset",
    "mixedsign" };
}
} // namespace jztest
