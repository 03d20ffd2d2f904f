// computeKnn: input validation and backend dispatch.
#include <algorithm>
#include <cmath>
#include <string>

#include "CudaFallback.h"
#include "KnnBackends.h"
#include "jz/Knn.h"

namespace jz
{
namespace
{
template <class T>
void validate(const KnnProblem<T>& problem)
{
  if (problem.k < 1)
  {
    throw Error(
      "the number of neighbours K must be at least 1 (got " + std::to_string(problem.k) + ")");
  }
  if (std::size_t(problem.k) > problem.numSources)
  {
    throw Error("the number of neighbours K = " + std::to_string(problem.k) +
      " is larger than the number of source points (" + std::to_string(problem.numSources) + ")");
  }
  if (problem.numSources > 0 && !problem.sources)
  {
    throw Error("no source coordinates were given");
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
  if (problem.sourceMasses)
  {
    for (std::size_t i = 0; i < problem.numSources; ++i)
    {
      if (!std::isfinite(problem.sourceMasses[i]))
      {
        throw Error("the mass of source point " + std::to_string(i) + " is not finite");
      }
    }
  }
}
} // namespace

template <class T>
RunInfo computeKnn(const KnnProblem<T>& problem, const KnnResults<T>& results, Backend backend,
  const RunControl& control)
{
  RunInfo info;
  const bool self = problem.queries == nullptr;
  if (!self && problem.numSelfQueries < problem.numSources)
  {
    throw Error("numSelfQueries applies to self queries only");
  }
  const std::size_t numQueries =
    self ? std::min(problem.numSources, problem.numSelfQueries) : problem.numQueries;
  if (numQueries == 0 && problem.numSources == 0)
  {
    info.backend = backend == Backend::CUDA ? resolveBackend(backend) : Backend::CPU;
    return info;
  }
  validate(problem);
  info.backend = resolveBackend(backend);
#if defined(JZ_WITH_CUDA)
  const bool ranOnGpu = runOnCudaOrFallBack(
    backend, info,
    [&]
    {
      if (self && problem.numSelfQueries < problem.numSources)
      {
        // The GPU walk has no query subset: the first sources query as a
        // separate query set instead (same results).
        KnnProblem<T> separate = problem;
        separate.queries = problem.sources;
        separate.numQueries = numQueries;
        separate.numSelfQueries = std::size_t(-1);
        knnCuda(separate, results, info, control);
      }
      else
      {
        knnCuda(problem, results, info, control);
      }
    },
    [] {});
  if (ranOnGpu)
    return info;
#endif
  knnCpu(problem, results, info, control);
  return info;
}

template RunInfo computeKnn<float>(
  const KnnProblem<float>&, const KnnResults<float>&, Backend, const RunControl&);
template RunInfo computeKnn<double>(
  const KnnProblem<double>&, const KnnResults<double>&, Backend, const RunControl&);
} // namespace jz
