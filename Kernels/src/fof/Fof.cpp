// computeFofGroups: input validation and backend dispatch.
#include "jz/Fof.h"
#include "common/CudaFallback.h"
#include "fof/FofBackends.h"
#include "jz/Validate.h"

namespace jz
{
template <class T>
RunInfo computeFofGroups(
  const FofProblem<T>& problem, FofGroups& out, Backend backend, const RunControl& control)
{
  RunInfo info;
  validate(problem);
  out.groupLabel.clear();
  out.groupRoot.clear();
  if (problem.numPoints == 0)
  {
    // Nothing to run; Device CUDA still requires a usable GPU.
    info.backend = backend == Backend::CUDA ? resolveBackend(backend) : Backend::CPU;
    return info;
  }
  info.backend = resolveBackend(backend);
  runOnBackend(
    backend, info, [&] { fofCuda(problem, out, info, control); },
    [&]
    {
      out.groupLabel.clear();
      out.groupRoot.clear();
    },
    [&] { fofCpu(problem, out, info, control); });
  return info;
}

template RunInfo computeFofGroups<float>(
  const FofProblem<float>&, FofGroups&, Backend, const RunControl&);
template RunInfo computeFofGroups<double>(
  const FofProblem<double>&, FofGroups&, Backend, const RunControl&);
} // namespace jz
