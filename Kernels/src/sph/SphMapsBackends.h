// Backend entry points of depositSphMap; the particles arrive validated and
// non-empty, the sums sized and zeroed.
#pragma once

#include "jz/SphMaps.h"

namespace jz
{
// Defined in CUDA builds only; called only there (runOnBackend). A
// projection's sums on the GPU: a warp per particle over its pixels, the
// same pixel integrals as the CPU's (SphKernelTables.h) added atomically
// (SphMapsCuda.cu). `period[d]` is 0 where not periodic.
template <class T>
void depositProjectionCuda(const SphParticles<T>& particles, const SphGrid& grid,
  const double* period, SphMapSums& sums, RunInfo& info, const RunControl& control);
} // namespace jz
