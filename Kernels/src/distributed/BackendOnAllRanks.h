// The backend every rank runs: resolved on each rank and agreed, so that
// Device CUDA without a usable GPU on any rank fails every rank alike.
#pragma once

#include <string>

#include "jz/Communicator.h"

namespace jz
{
// resolveBackend on every rank; when it fails on any rank, every rank throws
// the same Error.
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
