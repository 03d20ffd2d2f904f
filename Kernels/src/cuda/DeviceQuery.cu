// Run-time detection of a usable CUDA device.
#include <cuda_runtime.h>

#include <string>

#include "jz/Backend.h"

namespace jz
{
bool cudaUsable(std::string* why)
{
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
  {
    if (why)
      *why = std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
    cudaGetLastError(); // clear the sticky error so later calls are not confused
    return false;
  }
  if (count == 0)
  {
    if (why)
      *why = "no CUDA device found";
    return false;
  }
  int device = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess ||
    cudaGetDeviceProperties(&prop, device) != cudaSuccess)
  {
    if (why)
      *why = "the CUDA device could not be queried";
    cudaGetLastError();
    return false;
  }
  if (prop.major < 8)
  {
    if (why)
      *why = std::string("GPU ") + prop.name + " has compute capability " +
        std::to_string(prop.major) + "." + std::to_string(prop.minor) +
        "; this build targets sm_80 and newer";
    return false;
  }
  return true;
}
} // namespace jz
