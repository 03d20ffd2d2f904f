// The process's resident memory, for the benchmarks' and runners' "peak
// memory beyond the input" (VmHWM after minus VmRSS before).
#pragma once

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace jzbench
{
// A kB value of /proc/self/status, e.g. statusKb("VmHWM:"); -1 when absent.
inline long statusKb(const char* key)
{
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(key);
  while (std::getline(f, line))
    if (line.compare(0, n, key) == 0)
      return std::atol(line.c_str() + n);
  return -1;
}

// Resets VmHWM to the current resident size (Linux clear_refs 5).
inline void resetPeak()
{
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}
} // namespace jzbench
