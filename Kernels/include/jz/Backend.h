// Choosing where an algorithm runs, run-time controls, and errors.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace jz
{
// Where to run: the one Device enumeration. The values are those of the
// filters' Device property (Plugin/*.xml, vtkJZ*::DEVICE_*), which the
// filters pass through unchanged.
enum class Backend
{
  Auto = 0, // the GPU when a usable one is present, otherwise the CPU
  CPU = 1,
  CUDA = 2
};

const char* backendName(Backend backend);

// Invalid input or a failed run; the message is meant for the user.
class Error : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

// The run was cancelled through RunControl::progress.
class Aborted : public Error
{
public:
  Aborted()
    : Error("aborted by the user")
  {
  }
};

// Whether a usable CUDA device is present; when not, why (for messages).
bool cudaUsable(std::string* why = nullptr);

// Resolves Auto to CPU or CUDA. Throws Error when CUDA is requested and no
// usable device is present.
Backend resolveBackend(Backend requested);

struct RunControl
{
  // Worker threads of the CPU backend; 0 = all hardware threads (OpenMP default).
  int numThreads = 0;
  // Called with the fraction done (0..1) from the calling thread; returning
  // false aborts the run (an Aborted exception).
  std::function<bool(double)> progress;
};

// What ran, and how long each stage took (seconds), for logs and benchmarks.
struct RunInfo
{
  Backend backend = Backend::CPU;
  std::string note; // e.g. why Auto fell back to the CPU
  // What the user should know of a successful run, e.g. results that the
  // output precision cannot hold (written as inf or 0). The filters report
  // them as warnings.
  std::vector<std::string> warnings;
  std::vector<std::pair<std::string, double>> stageSeconds;
  // Communication/work counters, e.g. interaction list sizes.
  std::vector<std::pair<std::string, double>> counters;

  // The counter of that name, 0 when the run did not record it.
  double counter(const std::string& name) const
  {
    for (const auto& c : counters)
      if (c.first == name)
        return c.second;
    return 0;
  }
};
} // namespace jz
