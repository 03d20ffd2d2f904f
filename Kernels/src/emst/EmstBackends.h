// Backend entry points of computeEmst; the problem arrives validated.
#pragma once

#include "jz/Emst.h"

namespace jz
{
template <class T>
void emstCpu(
  const EmstProblem<T>& problem, EmstEdges& edges, RunInfo& info, const RunControl& control);

#if defined(JZ_WITH_CUDA)
// The GPU's Borůvka rounds (cuda/EmstCuda.cu).
template <class T>
void emstCuda(
  const EmstProblem<T>& problem, EmstEdges& edges, RunInfo& info, const RunControl& control);
#endif
} // namespace jz
