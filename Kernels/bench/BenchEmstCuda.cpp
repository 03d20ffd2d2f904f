// GPU benchmark of the EMST: per-stage CUDA times (upload, sort, tree, core
// distances, each Borůvka round's search and merge, publish) of the best of
// `reps` runs, the rounds' component counts, and the GPU's peak bytes per
// point.
//   jz_bench_emst_cuda [N=1e7] [kind=uniform] [reps=3] [minSamples=0]
//                      [--pinned] [--verify] [--target SECONDS] [--dump FILE]
// float32 coordinates in the unit cube (kind: jztest::makePoints, e.g.
// uniform, clustered), Euclidean weights (minSamples 0) or mutual
// reachability. --verify also runs the CPU backend on the same points and
// requires the same edges bit for bit (exit code 1 otherwise); use it at 1e6.
// --target makes the exit code 2 when the best wall time misses it; --dump
// writes the points (raw float32 x,y,z) for a peer (arborx_emst) to run on
// the same points.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "jz/StageTimer.h"
#include "../tests/PointSets.h"
#include "GpuBenchOptions.h"
#include "WriteRaw.h"
#include "jz/Emst.h"

int main(int argc, char** argv)
{
  const jzbench::GpuBenchOptions o = jzbench::parseGpuBenchOptions(argc, argv);
  const std::size_t n = std::size_t(o.number(0, 1e7));
  const std::string kind = o.word(1, "uniform");
  const int reps = int(o.number(2, 3));
  const int minSamples = int(o.number(3, 0));

  const std::string device = jzbench::usableGpuName("EMST CUDA");
  if (device.empty())
    return 77;
  std::printf("EMST CUDA benchmark on %s: N=%zu %s %s, float32%s\n", device.c_str(), n,
    kind.c_str(),
    minSamples > 0 ? ("mutual reachability minSamples " + std::to_string(minSamples)).c_str()
                   : "Euclidean",
    o.pinned ? ", pinned host memory" : "");

  std::vector<float> xyz = jztest::makePoints<float>(kind, n);
  if (!o.dump.empty() && !jzbench::writeRaw(o.dump, xyz))
    return 1;
  if (o.pinned)
    jzbench::pin(xyz);
  jz::EmstProblem<float> pr;
  pr.points = xyz.data();
  pr.numPoints = n;
  if (minSamples > 0)
  {
    pr.metric = jz::EmstMetric::MutualReachability;
    pr.minSamples = minSamples;
  }
  jz::EmstEdges gpu;
  const jzbench::BestGpuRun bestRun =
    jzbench::timeGpuRuns(reps, n, [&] { return jz::computeEmst(pr, gpu, jz::Backend::CUDA); });
  const double best = bestRun.seconds;
  std::printf("RESULT GPU EMST N=%zu %s%s best wall %.4f s", n, kind.c_str(),
    o.pinned ? " pinned" : "", best);
  const int verdict = jzbench::finishResult(best, o.target);
  jzbench::printStages(bestRun);
  double rounds = 0, searches = 0, merges = 0;
  for (auto& s : bestRun.stages)
  {
    if (s.first.find(" search") != std::string::npos)
      searches += s.second, ++rounds;
    if (s.first.find(" merge") != std::string::npos)
      merges += s.second;
  }
  std::printf("  rounds %.0f: searches %.2f ms, merges %.2f ms in all\n", rounds, 1e3 * searches,
    1e3 * merges);

  int rc = verdict;
  if (o.verify)
  {
    jz::EmstEdges cpu;
    const jz::StageTimer t0(nullptr, "");
    jz::computeEmst(pr, cpu, jz::Backend::CPU);
    const double tc = t0.seconds();
    const bool same = gpu.from == cpu.from && gpu.to == cpu.to &&
      gpu.weight2.size() == cpu.weight2.size() &&
      std::memcmp(gpu.weight2.data(), cpu.weight2.data(), cpu.weight2.size() * sizeof(double)) ==
        0 &&
      gpu.core2.size() == cpu.core2.size() &&
      std::memcmp(gpu.core2.data(), cpu.core2.data(), cpu.core2.size() * sizeof(double)) == 0;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < std::min(gpu.size(), cpu.size()); ++i)
      differ +=
        gpu.from[i] != cpu.from[i] || gpu.to[i] != cpu.to[i] || gpu.weight2[i] != cpu.weight2[i];
    std::printf("VERIFY CPU %.2f s: GPU %zu edges, CPU %zu, %zu differ: %s\n", tc, gpu.size(),
      cpu.size(), differ, same ? "IDENTICAL" : "DIFFERENT");
    if (!same)
      rc = 1;
  }
  return rc;
}
