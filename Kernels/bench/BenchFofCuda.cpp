// GPU friends-of-friends benchmark: computeFofGroups on the GPU (per-stage
// CUDA times: upload, sort, tree, node walk, leaf walk, labels, output), then
// on the host labelFofGroups and computeFofCatalogue (timed separately).
// Periodic unit box, b = 0.2, minimum group size 20.
//   jz_bench_fof_cuda [N=134217728 (512^3)] [clustered|uniform] [float|double] [reps=3]
//                     [--pinned] [--verify] [--target SECONDS] [--dump FILE]
// --pinned registers the input points (page-locked upload); --verify compares
// the group labels with the CPU backend (slow at large N); --target makes the
// exit code 2 when the best total (with the host catalogue) misses it; --dump
// writes the points (raw x,y,z) for the jz-tree reference (jztree_reference.py).
//
// "clustered" is the halo model of BenchFof.cpp: 85% of the points in halos
// with a power-law size function (20 to 50000 members), each an isothermal
// sphere of radius R200 (200x the mean density), the rest uniform.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../src/StageTimer.h"
#include "GpuBenchOptions.h"
#include "HaloPoints.h"
#include "PeriodicCatalogue.h"
#include "WriteRaw.h"
#include "jz/Fof.h"

namespace
{
using jz::StageTimer; // the one clock (a null RunInfo records nothing)
using jzbench::GpuBenchOptions;

template <class T>
int run(std::size_t n, bool clustered, int reps, const GpuBenchOptions& o)
{
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  const double l = jz::relativeLinkingLength(0.2, 1.0, n);
  std::printf("FoF CUDA benchmark on %s: N=%zu %s %s periodic b=0.2 (l=%.4g)%s\n", prop.name, n,
    clustered ? "clustered" : "uniform", sizeof(T) == 4 ? "float32" : "float64", l,
    o.pinned ? ", pinned input" : "");
  const StageTimer tg(nullptr, "");
  std::vector<T> xyz = jzbench::makePoints<T>(n, clustered, 12345);
  std::printf("  (points generated in %.1f s)\n", tg.seconds());
  if (!o.dump.empty() && !jzbench::writeRaw(o.dump, xyz))
    return 1;
  if (o.pinned)
    jzbench::pin(xyz);
  jz::FofProblem<T> pb;
  pb.points = xyz.data();
  pb.numPoints = n;
  pb.linkingLength = l;
  pb.periodic = true;

  {
    // Warm-up: context creation and module load.
    jz::FofProblem<T> small = pb;
    small.numPoints = std::min<std::size_t>(n, 1000);
    jz::FofGroups out;
    jz::computeFofGroups(small, out, jz::Backend::CUDA);
  }

  double best = 1e30;
  std::vector<jz::GlobalId> keepLabel;
  for (int rep = 0; rep < reps; ++rep)
  {
    const StageTimer t0(nullptr, "");
    jz::FofGroups groups;
    jz::RunInfo info = jz::computeFofGroups(pb, groups, jz::Backend::CUDA);
    const double tGroups = t0.seconds();
    const StageTimer tl(nullptr, "");
    std::vector<jz::GlobalId> gid(n), gsize(n);
    const std::size_t G = jz::labelFofGroups(
      groups.groupRoot.data(), groups.groupLabel.data(), n, 20, gid.data(), gsize.data());
    const double tLabels = tl.seconds();
    const StageTimer tc(nullptr, "");
    const jz::FofCatalogue cat = jzbench::periodicCatalogue(xyz, gid, G);
    const double tCat = tc.seconds();
    const double total = t0.seconds();
    double gpuSum = 0;
    for (auto& s : info.stageSeconds)
      gpuSum += s.second;
    std::printf(
      "  run %d: total %.3f s = groups %.3f s (GPU stages sum %.3f s) + host labels %.3f s"
      " + host catalogue %.3f s; %zu groups >= 20, largest %lld\n",
      rep, total, tGroups, gpuSum, tLabels, tCat, G, G ? (long long)cat.count[0] : 0LL);
    std::printf("    GPU stages:");
    for (auto& s : info.stageSeconds)
      std::printf(" %s %.4f", s.first.c_str(), s.second);
    std::printf("\n");
    if (rep == 0)
      jzbench::printCounters(info, n, "    ");
    best = std::min(best, total);
    if (o.verify && rep == reps - 1)
      keepLabel = std::move(groups.groupLabel);
  }
  std::printf("RESULT GPU FoF N=%zu %s best total %.3f s including the host catalogue", n,
    clustered ? "clustered" : "uniform", best);
  const int verdict = jzbench::finishResult(best, o.target);
  if (o.verify)
  {
    const StageTimer t0(nullptr, "");
    jz::FofGroups cpu;
    cpu.wantRoot = false;
    jz::computeFofGroups(pb, cpu, jz::Backend::CPU);
    const bool same = cpu.groupLabel == keepLabel;
    std::printf("VERIFY CPU %.3f s: GPU group labels %s\n", t0.seconds(),
      same ? "identical" : "DIFFER from the CPU");
    if (!same)
      return 1;
  }
  return verdict;
}
} // namespace

int main(int argc, char** argv)
{
  const GpuBenchOptions o = jzbench::parseGpuBenchOptions(argc, argv);
  const std::size_t n = std::size_t(o.number(0, double(std::size_t(512) * 512 * 512)));
  const bool clustered = o.word(1, "clustered") != "uniform";
  const bool dbl = o.word(2, "float") == "double";
  const int reps = std::max(1, int(o.number(3, 3)));

  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("no usable GPU: %s\n", why.c_str());
    return 0;
  }
  try
  {
    return dbl ? run<double>(n, clustered, reps, o) : run<float>(n, clustered, reps, o);
  }
  catch (const std::exception& e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
