// The CPU friends-of-friends' thread count (walk and numbering).
#pragma once

#include <cstddef>

#include <omp.h>

#include "jz/Backend.h"

namespace jz
{
// The caller's count, else all of OpenMP's; one below 1e5 points, where a
// second thread saves little and a team's barriers cost much on a loaded
// machine (a descheduled member stalls every one). Outputs do not depend on
// it.
inline int fofThreads(const RunControl& control, std::size_t numPoints)
{
  if (control.numThreads > 0)
    return control.numThreads;
  return numPoints < 100000 ? 1 : omp_get_max_threads();
}
} // namespace jz
