// Backend entry points of computeFofGroups; the problem arrives validated.
#pragma once

#include "jz/Fof.h"

namespace jz
{
template <class T>
void fofCpu(const FofProblem<T>& problem, FofGroups& out, RunInfo& info,
  const RunControl& control);
} // namespace jz
