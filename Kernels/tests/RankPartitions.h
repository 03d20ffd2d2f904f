// How the distributed tests split a point set over simulated ranks: the rank
// of every point under a named partition ("random"; "slabs" by x in [0, 1);
// "empty": rank 0 holds nothing; "halves": the first half of the points on
// rank 0, the rest on rank 1 (two ranks); "one": everything on the last rank).
#pragma once

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

inline std::vector<int> partitionPoints(
  const std::string& how, const double* xyz, std::size_t n, int ranks, unsigned seed)
{
  std::vector<int> owner(n, 0);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < n; ++i)
  {
    if (how == "random")
      owner[i] = int(rng() % ranks);
    else if (how == "slabs")
      owner[i] = std::min(ranks - 1, std::max(0, int(xyz[3 * i] * ranks)));
    else if (how == "halves")
      owner[i] = std::min(ranks - 1, int(2 * i / n));
    else if (how == "empty")
      owner[i] = ranks == 1 ? 0 : 1 + int(rng() % (ranks - 1));
    else
      owner[i] = ranks - 1;
  }
  return owner;
}
