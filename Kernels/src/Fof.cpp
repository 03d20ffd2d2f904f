// computeFofGroups: input validation and backend dispatch.
#include <cmath>
#include <string>

#include "CudaFallback.h"
#include "FofBackends.h"
#include "jz/Fof.h"

namespace jz
{
namespace
{
template <class T>
void validate(const FofProblem<T>& problem)
{
  const double l = problem.linkingLength;
  if (!std::isfinite(l) || !(l > 0))
  {
    throw Error(
      "the linking length must be a finite positive number (got " + std::to_string(l) + ")");
  }
  if (problem.numPoints >= std::size_t(0xFFFFFFFFu))
  {
    throw Error("too many points for one process: " + std::to_string(problem.numPoints));
  }
  if (problem.numPoints > 0 && !problem.points)
  {
    throw Error("no point coordinates were given");
  }
  if (problem.periodic)
  {
    for (int d = 0; d < 3; ++d)
    {
      const double lo = problem.boxLo[d], hi = problem.boxHi[d];
      if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo))
      {
        throw Error("the periodic box must have finite bounds with max > min in every "
                    "dimension (dimension " +
          std::to_string(d) + ": [" + std::to_string(lo) + ", " + std::to_string(hi) + "])");
      }
    }
  }
  const long long n = (long long)problem.numPoints;
  long long bad = n; // the first offending point, as the tree builds report it
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (long long i = 0; i < n; ++i)
  {
    const T* p = problem.points + 3 * i;
    if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2]))
    {
      bad = bad < i ? bad : i;
    }
  }
  if (bad < n)
  {
    throw Error("point " + std::to_string(bad) + " has a non-finite coordinate");
  }
}
} // namespace

double relativeLinkingLength(double b, double volume, std::size_t n)
{
  if (n == 0 || !(volume > 0))
    return 0;
  return b * std::cbrt(volume / double(n));
}

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
#if defined(JZ_WITH_CUDA)
  const bool ranOnGpu = runOnCudaOrFallBack(
    backend, info, [&] { fofCuda(problem, out, info, control); },
    [&]
    {
      out.groupLabel.clear();
      out.groupRoot.clear();
    });
  if (ranOnGpu)
    return info;
#endif
  info.backend = Backend::CPU;
  fofCpu(problem, out, info, control);
  return info;
}

template RunInfo computeFofGroups<float>(
  const FofProblem<float>&, FofGroups&, Backend, const RunControl&);
template RunInfo computeFofGroups<double>(
  const FofProblem<double>&, FofGroups&, Backend, const RunControl&);
} // namespace jz
