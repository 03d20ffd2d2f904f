// The CUDA backend entry points of a build without a CUDA compiler.
#include "jz/Backend.h"

namespace jz
{
bool cudaUsable(std::string* why)
{
  if (why)
    *why = "this build of jz-tree has no CUDA backend (nvcc was not found at build time)";
  return false;
}
} // namespace jz
