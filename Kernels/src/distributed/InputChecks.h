// Local input checks of the distributed algorithms: each rank checks its own
// piece and the ranks then agree (agreeOnErrors), so a bad point on one rank
// fails every rank with the same message. Empty string = fine.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace jz
{
inline std::string periodicBoxError(bool periodic, const double* lo, const double* hi)
{
  if (!periodic) return {};
  for (int d = 0; d < 3; ++d)
    if (!std::isfinite(lo[d]) || !std::isfinite(hi[d]) || !(hi[d] > lo[d]))
      return "the periodic box must have finite bounds with max > min in every dimension";
  return {};
}

template <class T>
std::string nonFiniteError(const T* xyz, std::size_t n, const char* what)
{
  for (std::size_t i = 0; i < 3 * n; ++i)
    if (!std::isfinite(xyz[i]))
      return std::string(what) + " " + std::to_string(i / 3) +
        " has a non-finite coordinate (NaN or infinity)";
  return {};
}
} // namespace jz
