// Input checks of the distributed algorithms: each rank checks its own piece
// and the ranks then agree (agreeOnErrors), so a bad point on one rank fails
// every rank with the same message. Empty string = fine.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "jz/Communicator.h"

namespace jz
{
inline std::string periodicBoxError(bool periodic, const double* lo, const double* hi)
{
  if (!periodic)
    return {};
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
// resolveBackend on every rank; when it fails on any rank (Device CUDA
// without a usable GPU), every rank throws the same Error.
inline Backend resolveBackendOnAllRanks(Communicator& comm, Backend requested)
{
  Backend resolved = Backend::CPU;
  std::string error;
  try
  {
    resolved = resolveBackend(requested);
  }
  catch (const Error& e)
  {
    error = e.what();
  }
  agreeOnErrors(comm, error);
  return resolved;
}
} // namespace jz
