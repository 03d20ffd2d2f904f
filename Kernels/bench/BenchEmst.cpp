// EMST benchmark of the kernels alone (Testing/Benchmarks/bench_emst.py runs
// it beside ArborX and scipy and prints the ratios).
//
// Usage: jz_bench_emst N uniform|FILE.f32 [euclidean|mutual] [repeats=1] [minSamples=5] [b]
// "uniform": N points in the unit cube (mt19937_64, seed 1); FILE.f32: the
// first N float32 xyz triplets of the file. b: only the edges up to
// maxLength = b times the mean spacing (cube root of the bounding box's
// volume per point), as friends of friends at linking lengths up to b needs.
// Prints the stage times of the fastest run, the total weight and the peak
// memory beyond the input (VmHWM after minus VmRSS before, in bytes per point).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "jz/StageTimer.h"
#include "ProcMemory.h"
#include "jz/Emst.h"

namespace
{
using jzbench::statusKb;
} // namespace

int main(int argc, char** argv)
{
  if (argc < 3)
  {
    std::fprintf(stderr,
      "usage: jz_bench_emst N uniform|FILE.f32 [euclidean|mutual] [repeats] [minSamples] [b]\n");
    return 1;
  }
  std::size_t n = std::size_t(std::atof(argv[1]));
  const std::string source = argv[2];
  const bool mutual = argc > 3 && std::string(argv[3]) == "mutual";
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 1;
  const int minSamples = argc > 5 ? std::atoi(argv[5]) : 5;
  const double relativeMax = argc > 6 ? std::atof(argv[6]) : 0;
  std::vector<float> xyz(3 * n);
  if (source == "uniform")
  {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (float& v : xyz)
      v = u(rng);
  }
  else
  {
    std::FILE* f = std::fopen(source.c_str(), "rb");
    if (!f)
      return 1;
    n = std::fread(xyz.data(), sizeof(float) * 3, n, f);
    std::fclose(f);
    xyz.resize(3 * n);
  }
  const long before = statusKb("VmRSS:");
  jz::EmstProblem<float> pr;
  pr.points = xyz.data();
  pr.numPoints = n;
  pr.metric = mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
  pr.minSamples = minSamples;
  if (relativeMax > 0 && n > 0)
  {
    double lo[3] = { 1e300, 1e300, 1e300 }, hi[3] = { -1e300, -1e300, -1e300 };
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d)
      {
        lo[d] = std::min(lo[d], double(xyz[3 * i + d]));
        hi[d] = std::max(hi[d], double(xyz[3 * i + d]));
      }
    const double volume = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    pr.maxLength = relativeMax * std::cbrt(volume / double(n));
    std::printf("maxLength %.6g (b = %g)\n", pr.maxLength, relativeMax);
  }
  double best = 1e300;
  jz::RunInfo bestInfo;
  double weight = 0;
  for (int r = 0; r < repeats; ++r)
  {
    jz::EmstEdges edges;
    const jz::StageTimer clock(nullptr, "emst");
    const jz::RunInfo info = jz::computeEmst(pr, edges, jz::Backend::CPU);
    const double t = clock.seconds();
    if (t < best)
    {
      best = t;
      bestInfo = info;
    }
    weight = 0;
    for (double w2 : edges.weight2)
      weight += std::sqrt(w2);
  }
  const long peak = statusKb("VmHWM:");
  for (const auto& s : bestInfo.stageSeconds)
    std::printf("stage %-16s %.3f s\n", s.first.c_str(), s.second);
  for (const auto& c : bestInfo.counters)
    std::printf("counter %-16s %.0f\n", c.first.c_str(), c.second);
  std::printf(
    "jz_emst N=%zu %s threads=%d weight=%.9g total=%.3fs peak_beyond_input=%.1f B/point\n", n,
    mutual ? "mutual" : "euclidean", omp_get_max_threads(), weight, best,
    1024.0 * double(peak - before) / double(n));
  return 0;
}
