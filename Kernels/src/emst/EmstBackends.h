// Backend entry points of computeEmst; the problem arrives validated.
#pragma once

#include "jz/Emst.h"

namespace jz
{
template <class T>
void emstCpu(
  const EmstProblem<T>& problem, EmstEdges& edges, RunInfo& info, const RunControl& control);

// Defined in CUDA builds only; called only there (runOnBackend).
// The GPU's Borůvka rounds (EmstCuda.cu).
template <class T>
void emstCuda(
  const EmstProblem<T>& problem, EmstEdges& edges, RunInfo& info, const RunControl& control);
} // namespace jz
