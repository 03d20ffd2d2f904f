#include "jz/Backend.h"

namespace jz
{
const char* backendName(Backend backend)
{
  switch (backend)
  {
    case Backend::Auto:
      return "Auto";
    case Backend::CPU:
      return "CPU";
    case Backend::CUDA:
      return "CUDA";
  }
  return "?";
}

Backend resolveBackend(Backend requested)
{
  if (requested == Backend::CPU)
    return Backend::CPU;
  std::string why;
  const bool usable = cudaUsable(&why);
  if (requested == Backend::CUDA && !usable)
  {
    throw Error("Device CUDA was requested but no usable GPU is available: " + why);
  }
  return usable ? Backend::CUDA : Backend::CPU;
}
} // namespace jz
