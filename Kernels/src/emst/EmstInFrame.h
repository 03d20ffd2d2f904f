// An EMST problem run in a power-of-two frame (ScaleFrame.h): the points,
// box and maximum edge length scaled in; squared weights and core distances
// (power 2) and endpoint coordinates (power 1) scaled back.
#pragma once

#include <algorithm>

#include "common/ScaleFrame.h"
#include "jz/Emst.h"

namespace jz
{
template <class T>
double largestMagnitude(const EmstProblem<T>& problem)
{
  return std::max(largestMagnitude(problem.points, 3 * problem.numPoints),
    boxMagnitude(problem.periodic, problem.boxLo, problem.boxHi));
}

// Runs run(scaledProblem), which returns RunInfo; the caller scales its
// outputs back (their types differ between the serial and distributed trees).
template <class T, class Run>
RunInfo runEmstInFrame(const EmstProblem<T>& problem, const ScaleFrame& frame, Run&& run)
{
  EmstProblem<T> scaled = problem;
  const std::vector<T> points = frame.pointsToFrame(problem.points, problem.numPoints);
  scaled.points = points.data();
  frame.boxToFrame(scaled.boxLo, scaled.boxHi);
  scaled.maxLength = frame.toFrame(problem.maxLength);
  return run(scaled);
}

inline void emstEdgesFromFrame(const ScaleFrame& frame, std::vector<double>& weight2,
  std::vector<double>& core2)
{
  frame.valuesFromFrame(weight2.data(), weight2.size(), 2);
  frame.valuesFromFrame(core2.data(), core2.size(), 2);
}
} // namespace jz
