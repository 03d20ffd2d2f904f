// Stage times for RunInfo: the one clock every driver and walk uses (and the
// thread CPU clock beside it).
#pragma once

#include <chrono>
#include <ctime>
#include <string>
#include <utility>

#include "jz/Backend.h"

namespace jz
{
// Adds (name, seconds) to info->stageSeconds when it goes out of scope, or at
// stop(). A null info times nothing and records nothing.
class StageTimer
{
public:
  using Clock = std::chrono::steady_clock;

  StageTimer(RunInfo* info, std::string name)
    : info_(info)
    , name_(std::move(name))
    , start_(Clock::now())
  {
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  ~StageTimer() { stop(); }

  // Seconds since construction.
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Records the stage now (once); later calls and the destructor do nothing.
  void stop()
  {
    if (info_)
    {
      info_->stageSeconds.emplace_back(std::move(name_), seconds());
      info_ = nullptr;
    }
  }

private:
  RunInfo* info_;
  std::string name_;
  Clock::time_point start_;
};

// CPU seconds of the calling thread: per-task counters that stay steady
// under load (a StageTimer's wall seconds do not).
inline double threadCpuSeconds()
{
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
} // namespace jz
