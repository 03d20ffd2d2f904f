// Backend entry points of computeFofGroups; the problem arrives validated.
#pragma once

#include "jz/Fof.h"
#include "jz/Tree.h"

namespace jz
{
template <class T>
void fofCpu(const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control);

// The CPU walk on a tree already built from problem.points (the first
// problem.numPoints of them): the distributed driver's local tree, built once
// for the ghost selection and the local groups.
template <class T>
void fofCpuOnTree(const ZTree<T>& tree, const FofProblem<T>& problem, FofGroups& out, RunInfo& info,
  const RunControl& control);

// Defined in CUDA builds only; called only there (runOnBackend).
// The GPU backend (FofCuda.cu); throws Error when the device fails.
template <class T>
void fofCuda(
  const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control);
// computeFofHalos on the GPU (FofCuda.cu); throws Error when the device fails.
template <class T>
void fofHalosCuda(const FofProblem<T>& problem, const FofHaloOptions& options, FofHalos& result,
  RunInfo& info, const RunControl& control);
} // namespace jz
