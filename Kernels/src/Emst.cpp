// computeEmst: input validation and backend dispatch.
#include <cmath>
#include <string>

#include "EmstBackends.h"
#include "jz/Emst.h"

namespace jz
{
template <class T>
std::string emstProblemError(const EmstProblem<T>& problem)
{
  if (problem.numPoints >= std::size_t(Index(-1)))
    return "too many points for one process (" + std::to_string(problem.numPoints) + ")";
  if (problem.periodic)
  {
    for (int d = 0; d < 3; ++d)
    {
      const double lo = problem.boxLo[d], hi = problem.boxHi[d];
      if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo))
        return "the periodic box must have finite bounds with max > min in every dimension "
               "(dimension " +
          std::to_string(d) + ": [" + std::to_string(lo) + ", " + std::to_string(hi) + "])";
    }
  }
  if (problem.metric == EmstMetric::MutualReachability && problem.numPoints > 0)
  {
    if (problem.minSamples < 1)
      return "MinSamples must be at least 1 (got " + std::to_string(problem.minSamples) + ")";
    if (std::size_t(problem.minSamples) >= problem.numPoints)
      return "MinSamples = " + std::to_string(problem.minSamples) + " needs more points than the " +
        std::to_string(problem.numPoints) + " given";
  }
  for (std::size_t i = 0; i < 3 * problem.numPoints; ++i)
    if (!std::isfinite(double(problem.points[i])))
      return "point " + std::to_string(i / 3) + " has a non-finite coordinate";
  return std::string();
}

template <class T>
RunInfo computeEmst(
  const EmstProblem<T>& problem, EmstEdges& edges, Backend backend, const RunControl& control)
{
  RunInfo info;
  const std::string error = emstProblemError(problem);
  if (!error.empty())
    throw Error(error);
  if (backend == Backend::CUDA)
    throw Error("the EMST has no CUDA backend yet: use Device CPU or Auto");
  info.backend = Backend::CPU;
  emstCpu(problem, edges, info, control);
  return info;
}

template std::string emstProblemError<float>(const EmstProblem<float>&);
template std::string emstProblemError<double>(const EmstProblem<double>&);
template RunInfo computeEmst<float>(
  const EmstProblem<float>&, EmstEdges&, Backend, const RunControl&);
template RunInfo computeEmst<double>(
  const EmstProblem<double>&, EmstEdges&, Backend, const RunControl&);
} // namespace jz
