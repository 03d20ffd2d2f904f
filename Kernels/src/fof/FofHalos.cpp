// computeFofHalos: groups, numbering and catalogue in one call, on the GPU
// end to end or on the CPU as computeFofGroups, labelFofGroups and
// computeFofCatalogue.
#include "common/CudaFallback.h"
#include "fof/FofBackends.h"
#include "fof/OutputArray.h"
#include "jz/StageTimer.h"
#include "jz/Fof.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
template <class T>
void fofHalosCpu(const FofProblem<T>& problem, const FofHaloOptions& options, FofHalos& result,
  RunInfo& info, const RunControl& control)
{
  const std::size_t n = problem.numPoints;
  FofGroups groups;
  if (n > 0)
    fofCpu(problem, groups, info, control);
  StageTimer labels(&info, "labels");
  GlobalId* groupId = outputOf(options.groupIdOut, result.groupId, n);
  GlobalId* groupSize = outputOf(options.groupSizeOut, result.groupSize, n);
  result.numGroups = labelFofGroups(groups.groupRoot.data(), groups.groupLabel.data(), n,
    options.minimumGroupSize, groupId, groupSize, control);
  labels.stop();
  FofGroups().groupRoot.swap(groups.groupRoot);
  StageTimer catalogue(&info, "catalogue");
  computeFofCatalogue(
    fofCatalogueInputFor(problem, groupId, result.numGroups, options.masses, options.velocities),
    result.catalogue, control);
}
} // namespace

template <class T>
RunInfo computeFofHalos(const FofProblem<T>& problem, const FofHaloOptions& options,
  FofHalos& result, Backend backend, const RunControl& control)
{
  RunInfo info;
  validate(problem);
  result = FofHalos();
  if (problem.numPoints == 0)
  {
    // Nothing to run; Device CUDA still requires a usable GPU.
    info.backend = backend == Backend::CUDA ? resolveBackend(backend) : Backend::CPU;
    fofHalosCpu(problem, options, result, info, control);
    return info;
  }
  info.backend = resolveBackend(backend);
  runOnBackend(
    backend, info, [&] { fofHalosCuda(problem, options, result, info, control); },
    [&] { result = FofHalos(); }, [&] { fofHalosCpu(problem, options, result, info, control); });
  return info;
}

template RunInfo computeFofHalos<float>(
  const FofProblem<float>&, const FofHaloOptions&, FofHalos&, Backend, const RunControl&);
template RunInfo computeFofHalos<double>(
  const FofProblem<double>&, const FofHaloOptions&, FofHalos&, Backend, const RunControl&);
} // namespace jz
