// How every GPU backend (kNN, FoF, gravity, EMST) treats a failing GPU, and
// the dispatch between the GPU and the CPU backend.
#pragma once

#include <string>

#include "jz/Backend.h"

namespace jz
{
// Runs `gpu` when the resolved backend (info.backend) is CUDA and returns
// true if it completed. A failing GPU (a jz::Error: out of memory, driver
// trouble) is fatal when CUDA was requested explicitly; under Auto it is
// noted in info, `reset` discards partial results, and false sends the
// caller to the CPU. An abort always propagates.
template <class Gpu, class Reset>
bool runOnCudaOrFallBack(Backend requested, RunInfo& info, Gpu&& gpu, Reset&& reset)
{
  if (info.backend != Backend::CUDA)
    return false;
  try
  {
    gpu();
    return true;
  }
  catch (const Aborted&)
  {
    throw;
  }
  catch (const Error& e)
  {
    if (requested == Backend::CUDA)
      throw;
    info.note = std::string("CUDA failed, ran on the CPU instead: ") + e.what();
    info.backend = Backend::CPU;
    info.stageSeconds.clear();
    info.counters.clear();
    reset();
    return false;
  }
}

// A kernel's backend dispatch: `gpu` when the resolved backend
// (info.backend) is CUDA and the build has it, with runOnCudaOrFallBack's
// fallback (`reset`, then the CPU); else `cpu`. info.backend ends as the
// backend that ran.
template <class Gpu, class Reset, class Cpu>
void runOnBackend(Backend requested, RunInfo& info, [[maybe_unused]] Gpu&& gpu,
  [[maybe_unused]] Reset&& reset, Cpu&& cpu)
{
#if defined(JZ_WITH_CUDA)
  if (runOnCudaOrFallBack(requested, info, gpu, reset))
    return;
#else
  (void)requested;
#endif
  info.backend = Backend::CPU;
  cpu();
}
} // namespace jz
