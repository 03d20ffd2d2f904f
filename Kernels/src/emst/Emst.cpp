// computeEmst: input validation and backend dispatch.
#include <cmath>
#include <string>

#include "common/CudaFallback.h"
#include "emst/EmstBackends.h"
#include "emst/EmstInFrame.h"
#include "jz/Emst.h"
#include "jz/Validate.h"

namespace jz
{
std::string minSamplesError(int minSamples, std::size_t totalPoints)
{
  if (totalPoints == 0)
    return {};
  const std::string outside = rangeError(ranges::EmstMinSamples, minSamples);
  if (!outside.empty())
    return outside;
  if (std::size_t(minSamples) >= totalPoints)
    return "MinSamples = " + std::to_string(minSamples) +
      " must be smaller than the number of points (" + std::to_string(totalPoints) + ")";
  return {};
}

// The shared rules of jz/Validate.h (box, point count, finite coordinates),
// plus MinSamples.
template <class T>
std::string emstProblemError(const EmstProblem<T>& problem)
{
  std::string error = pointCountError(problem.numPoints);
  if (error.empty())
    error = periodicBoxError(problem.periodic, problem.boxLo, problem.boxHi);
  if (error.empty() && problem.metric == EmstMetric::MutualReachability)
    error = minSamplesError(problem.minSamples, problem.numPoints);
  if (error.empty() && !(problem.maxLength >= 0))
    error =
      "the maximum edge length must be at least 0 (got " + std::to_string(problem.maxLength) + ")";
  if (error.empty())
    error = nonFiniteCoordinateError(problem.points, problem.numPoints, "point");
  return error;
}

template <class T>
RunInfo computeEmst(
  const EmstProblem<T>& problem, EmstEdges& edges, Backend backend, const RunControl& control)
{
  RunInfo info;
  const std::string error = emstProblemError(problem);
  if (!error.empty())
    throw Error(error);
  if (problem.numPoints == 0)
  {
    edges = EmstEdges{};
    info.backend = backend == Backend::CUDA ? resolveBackend(backend) : Backend::CPU;
    return info;
  }
  const ScaleFrame frame = ScaleFrame::forMagnitude(largestMagnitude(problem));
  if (!frame.identity())
  {
    info = runEmstInFrame(problem, frame,
      [&](const EmstProblem<T>& scaled) { return computeEmst(scaled, edges, backend, control); });
    emstEdgesFromFrame(frame, edges.weight2, edges.core2);
    return info;
  }
  info.backend = resolveBackend(backend);
  // A failed GPU run's partial edges are dropped before the CPU runs.
  runOnBackend(
    backend, info, [&] { emstCuda(problem, edges, info, control); }, [&] { edges = EmstEdges{}; },
    [&] { emstCpu(problem, edges, info, control); });
  return info;
}

template std::string emstProblemError<float>(const EmstProblem<float>&);
template std::string emstProblemError<double>(const EmstProblem<double>&);
template RunInfo computeEmst<float>(
  const EmstProblem<float>&, EmstEdges&, Backend, const RunControl&);
template RunInfo computeEmst<double>(
  const EmstProblem<double>&, EmstEdges&, Backend, const RunControl&);
} // namespace jz
