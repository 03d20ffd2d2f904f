// What the GPU benchmarks share: their command-line flags, page-locking of
// host arrays, the timed repeats, and how a run's counters and the target
// are printed.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "jz/StageTimer.h"
#include "jz/Backend.h"

namespace jzbench
{
struct GpuBenchOptions
{
  std::vector<std::string> positional;
  bool lists = false;  // --lists: also return neighbour lists (kNN)
  bool pinned = false; // --pinned: page-locked host arrays
  bool verify = false; // --verify: compare with the CPU backend
  double target = 0;   // --target SECONDS: exit code 2 when missed
  std::string dump;    // --dump FILE: the points, raw, for a peer

  // The positional argument i as a number, or `fallback` when absent.
  double number(std::size_t i, double fallback) const
  {
    return i < positional.size() ? std::atof(positional[i].c_str()) : fallback;
  }
  std::string word(std::size_t i, const std::string& fallback) const
  {
    return i < positional.size() ? positional[i] : fallback;
  }
};

inline GpuBenchOptions parseGpuBenchOptions(int argc, char** argv)
{
  GpuBenchOptions o;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--target" && i + 1 < argc)
      o.target = std::atof(argv[++i]);
    else if (a == "--dump" && i + 1 < argc)
      o.dump = argv[++i];
    else if (a == "--lists")
      o.lists = true;
    else if (a == "--pinned")
      o.pinned = true;
    else if (a == "--verify")
      o.verify = true;
    else
      o.positional.push_back(a);
  }
  return o;
}

// Page-locks a host array so transfers run at the bus's speed.
template <class V>
void pin(std::vector<V>& v)
{
  if (!v.empty() &&
    cudaHostRegister(v.data(), v.size() * sizeof(V), cudaHostRegisterDefault) != cudaSuccess)
  {
    cudaGetLastError();
    std::printf("  (could not pin a host array)\n");
  }
}

// Page-locks each array.
template <class... V>
void pinAll(std::vector<V>&... v)
{
  (pin(v), ...);
}

// The GPU's name; empty, after saying why, when none is usable (the
// benchmark then exits 77, so that a GPU script does not count it as run).
inline std::string usableGpuName(const char* benchmark)
{
  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("no usable GPU: %s (%s benchmark not run)\n", why.c_str(), benchmark);
    return {};
  }
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  return prop.name;
}

// The counters of a run and the pool's high-water mark per point.
inline void printCounters(const jz::RunInfo& info, std::size_t n, const char* indent)
{
  std::printf("%scounters:", indent);
  for (auto& c : info.counters)
    std::printf(" %s %.0f", c.first.c_str(), c.second);
  std::printf("\n");
  for (auto& c : info.counters)
    if (c.first == "gpu peak bytes")
      std::printf("%sGPU memory: %.1f bytes per point at peak\n", indent, c.second / double(n));
}

// The best of `reps` timed runs and its stages.
struct BestGpuRun
{
  double seconds = 1e30;
  std::vector<std::pair<std::string, double>> stages;
};

// Runs `run` (returning its RunInfo) once to warm up (context, module load)
// and `reps` times timed, printing each run's wall time and stages and the
// warm-up's counters.
template <class Run>
BestGpuRun timeGpuRuns(int reps, std::size_t n, Run&& run)
{
  BestGpuRun best;
  for (int rep = 0; rep <= reps; ++rep)
  {
    const jz::StageTimer t0(nullptr, "");
    const jz::RunInfo info = run();
    const double t = t0.seconds();
    double gpuSum = 0;
    for (auto& s : info.stageSeconds)
      gpuSum += s.second;
    std::printf(
      "  %s: wall %.4f s, stages sum %.4f s (", rep == 0 ? "warm-up" : "run    ", t, gpuSum);
    for (auto& s : info.stageSeconds)
      std::printf(" %s %.4f", s.first.c_str(), s.second);
    std::printf(" )\n");
    if (rep == 0)
      printCounters(info, n, "    ");
    if (rep > 0 && t < best.seconds)
      best = BestGpuRun{ t, info.stageSeconds };
  }
  return best;
}

// The best run's stages, one line each.
inline void printStages(const BestGpuRun& best)
{
  for (auto& s : best.stages)
    std::printf("  stage %-16s %8.2f ms\n", s.first.c_str(), 1e3 * s.second);
}

// Ends a RESULT line with the target's verdict; the exit code for main.
inline int finishResult(double best, double target)
{
  if (target > 0)
    std::printf(" (target %.3f s: %s)", target, best <= target ? "met" : "MISSED");
  std::printf("\n");
  return target > 0 && best > target ? 2 : 0;
}
} // namespace jzbench
