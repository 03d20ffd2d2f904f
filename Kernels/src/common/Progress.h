// How the kernels report progress to RunControl::progress and stop when it
// answers false: an Aborted exception, which every caller lets through (an
// abort is not an error). The distributed drivers agree on it, so that all
// ranks end together and none hangs in a later collective.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "jz/Backend.h"
#include "jz/Communicator.h"

namespace jz
{
// Reports `fraction` done; throws Aborted when the caller asks to stop.
inline void reportProgress(const RunControl& control, double fraction)
{
  if (control.progress && !control.progress(fraction))
    throw Aborted();
}

// A step's progress, 0..1, reported as begin..begin + span of the run's;
// empty when the run reports none. `control` must outlive the result.
inline std::function<bool(double)> progressSpan(
  const RunControl& control, double begin, double span)
{
  if (!control.progress)
    return {};
  return [&control, begin, span](double f) { return control.progress(begin + span * f); };
}

// reportProgress on every rank; when any rank asks to stop (or `stopHere`),
// every rank throws Aborted here. Collective.
inline void agreeOnProgress(
  const RunControl& control, double fraction, Communicator& comm, bool stopHere = false)
{
  const bool stop = stopHere || (control.progress && !control.progress(fraction));
  if (allSum(comm, stop ? 1 : 0) > 0)
    throw Aborted();
}

// Runs f; an abort on any rank becomes Aborted on every rank, an error (a
// bad GPU) the same Error on every rank. Collective.
template <class F>
void agreeOnRunErrors(Communicator& comm, F&& f)
{
  bool aborted = false;
  std::string runError;
  try
  {
    std::forward<F>(f)();
  }
  catch (const Aborted&)
  {
    aborted = true;
  }
  catch (const std::exception& e)
  {
    runError = e.what();
  }
  agreeOnAbortsAndErrors(comm, aborted, runError);
}
} // namespace jz
