// Backend entry points of computeGravity; the problem arrives validated and
// non-empty (sources and queries).
#pragma once

#include "jz/Gravity.h"

namespace jz
{
template <class T>
void gravityCpu(const GravityProblem<T>& problem, const GravityResults& results, RunInfo& info,
  const RunControl& control);

// Defined in CUDA builds only; called only there (runOnBackend).
// The GPU's group walk (GravityCuda.cu).
template <class T>
void gravityCuda(const GravityProblem<T>& problem, const GravityResults& results, RunInfo& info,
  const RunControl& control);
} // namespace jz
