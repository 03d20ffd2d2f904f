// Backend entry points of computeGravity; the problem arrives validated and
// non-empty (sources and queries).
#pragma once

#include "jz/Gravity.h"

namespace jz
{
template <class T>
void gravityCpu(const GravityProblem<T>& problem, const GravityResults& results, RunInfo& info,
  const RunControl& control);

#if defined(JZ_WITH_CUDA)
// The GPU's group walk (cuda/GravityCuda.cu).
template <class T>
void gravityCuda(const GravityProblem<T>& problem, const GravityResults& results, RunInfo& info,
  const RunControl& control);
#endif
} // namespace jz
