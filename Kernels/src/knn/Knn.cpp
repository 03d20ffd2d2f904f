// computeKnn: input validation and backend dispatch.
#include <algorithm>
#include <vector>

#include "common/CudaFallback.h"
#include "knn/KnnBackends.h"
#include "knn/KnnInFrame.h"
#include "jz/Knn.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
// The search of a validated problem whose coordinates lie in the frame
// window (ScaleFrame.h), on the requested backend.
template <class T>
RunInfo knnInWindow(const KnnProblem<T>& problem, const KnnResults<T>& results,
  std::size_t numQueries, Backend backend, const RunControl& control)
{
  RunInfo info;
  info.backend = resolveBackend(backend);
  auto gpu = [&]
  {
    if (problem.queries == nullptr &&
      (problem.numSelfQueries < problem.numSources || problem.selfQueryIndices))
    {
      // The GPU walk has no query subset: the querying sources go as a
      // separate query set instead (same results).
      KnnProblem<T> separate = problem;
      std::vector<T> named;
      if (problem.selfQueryIndices)
      {
        named.resize(3 * numQueries);
        for (std::size_t q = 0; q < numQueries; ++q)
          std::copy_n(
            problem.sources + 3 * std::size_t(problem.selfQueryIndices[q]), 3, &named[3 * q]);
      }
      separate.queries = problem.selfQueryIndices ? named.data() : problem.sources;
      separate.numQueries = numQueries;
      separate.numSelfQueries = std::size_t(-1);
      separate.selfQueryIndices = nullptr;
      knnCuda(separate, results, info, control);
    }
    else
    {
      knnCuda(problem, results, info, control);
    }
  };
  runOnBackend(
    backend, info, gpu, [] {}, [&] { knnCpu(problem, results, info, control); });
  return info;
}
} // namespace

template <class T>
RunInfo computeKnn(const KnnProblem<T>& problem, const KnnResults<T>& results, Backend backend,
  const RunControl& control)
{
  const bool self = problem.queries == nullptr;
  const std::size_t numQueries =
    self ? std::min(problem.numSources, problem.numSelfQueries) : problem.numQueries;
  if (numQueries == 0 && problem.numSources == 0)
  {
    RunInfo info;
    info.backend = backend == Backend::CUDA ? resolveBackend(backend) : Backend::CPU;
    return info;
  }
  validate(problem);
  auto run = [&](const KnnProblem<T>& p)
  { return knnInWindow(p, results, numQueries, backend, control); };
  const ScaleFrame frame = ScaleFrame::forMagnitude(largestMagnitude(problem));
  RunInfo info = frame.identity() ? run(problem)
                                  : runKnnInFrame(problem, results, numQueries, frame, run);
  const std::string w =
    outOfRangeWarning<T>(densitiesOutOfRange(problem, results, numQueries), "Density");
  if (!w.empty())
    info.warnings.push_back(w);
  return info;
}

template RunInfo computeKnn<float>(
  const KnnProblem<float>&, const KnnResults<float>&, Backend, const RunControl&);
template RunInfo computeKnn<double>(
  const KnnProblem<double>&, const KnnResults<double>&, Backend, const RunControl&);
} // namespace jz
