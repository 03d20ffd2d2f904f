// Backend entry points of computeFofGroups; the problem arrives validated.
#pragma once

#include "jz/Fof.h"

namespace jz
{
template <class T>
void fofCpu(const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control);

#if defined(JZ_WITH_CUDA)
// The GPU backend (cuda/FofCuda.cu); throws Error when the device fails.
template <class T>
void fofCuda(
  const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control);
#endif
} // namespace jz
