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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "HaloPoints.h"
#include "WriteRaw.h"
#include "jz/Fof.h"

namespace
{
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0)
{
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class T>
int run(std::size_t n, bool clustered, int reps, bool pinned, bool verify, double target,
  const std::string& dump)
{
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  const double l = jz::relativeLinkingLength(0.2, 1.0, n);
  std::printf("FoF CUDA benchmark on %s: N=%zu %s %s periodic b=0.2 (l=%.4g)%s\n", prop.name, n,
    clustered ? "clustered" : "uniform", sizeof(T) == 4 ? "float32" : "float64", l,
    pinned ? ", pinned input" : "");
  const auto tg = Clock::now();
  std::vector<T> xyz = jzbench::makePoints<T>(n, clustered, 12345);
  std::printf("  (points generated in %.1f s)\n", since(tg));
  if (!dump.empty() && !jzbench::writeRaw(dump, xyz))
    return 1;
  if (pinned &&
    cudaHostRegister(xyz.data(), xyz.size() * sizeof(T), cudaHostRegisterDefault) != cudaSuccess)
  {
    cudaGetLastError();
    std::printf("  (could not pin the input)\n");
  }
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
    const auto t0 = Clock::now();
    jz::FofGroups groups;
    jz::RunInfo info = jz::computeFofGroups(pb, groups, jz::Backend::CUDA);
    const double tGroups = since(t0);
    const auto tl = Clock::now();
    std::vector<jz::GlobalId> gid(n), gsize(n);
    const std::size_t G = jz::labelFofGroups(
      groups.groupRoot.data(), groups.groupLabel.data(), n, 20, gid.data(), gsize.data());
    const double tLabels = since(tl);
    const auto tc = Clock::now();
    jz::FofCatalogueInput<T> in;
    in.points = xyz.data();
    in.numPoints = n;
    in.groupId = gid.data();
    in.numGroups = G;
    in.periodic = true;
    jz::FofCatalogue cat;
    jz::computeFofCatalogue(in, cat);
    const double tCat = since(tc);
    const double total = since(t0);
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
    {
      std::printf("    counters:");
      for (auto& c : info.counters)
        std::printf(" %s %.0f", c.first.c_str(), c.second);
      std::printf("\n");
      for (auto& c : info.counters)
        if (c.first == "gpu peak bytes")
          std::printf("    GPU memory: %.1f bytes per point at peak\n", c.second / double(n));
    }
    best = std::min(best, total);
    if (verify && rep == reps - 1)
      keepLabel = std::move(groups.groupLabel);
  }
  std::printf("RESULT GPU FoF N=%zu %s best total %.3f s including the host catalogue", n,
    clustered ? "clustered" : "uniform", best);
  if (target > 0)
    std::printf(" (target %.3f s: %s)", target, best <= target ? "met" : "MISSED");
  std::printf("\n");
  if (verify)
  {
    const auto t0 = Clock::now();
    jz::FofGroups cpu;
    cpu.wantRoot = false;
    jz::computeFofGroups(pb, cpu, jz::Backend::CPU);
    const bool same = cpu.groupLabel == keepLabel;
    std::printf("VERIFY CPU %.3f s: GPU group labels %s\n", since(t0),
      same ? "identical" : "DIFFER from the CPU");
    if (!same)
      return 1;
  }
  return target > 0 && best > target ? 2 : 0;
}
} // namespace

int main(int argc, char** argv)
{
  std::vector<std::string> pos;
  bool pinned = false, verify = false;
  double target = 0;
  std::string dump;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--target" && i + 1 < argc)
      target = std::atof(argv[++i]);
    else if (a == "--dump" && i + 1 < argc)
      dump = argv[++i];
    else if (a == "--pinned")
      pinned = true;
    else if (a == "--verify")
      verify = true;
    else
      pos.push_back(a);
  }
  const std::size_t n =
    pos.size() > 0 ? std::size_t(std::atof(pos[0].c_str())) : std::size_t(512) * 512 * 512;
  const bool clustered = pos.size() > 1 ? pos[1] != "uniform" : true;
  const bool dbl = pos.size() > 2 && pos[2] == "double";
  const int reps = pos.size() > 3 ? std::max(1, std::atoi(pos[3].c_str())) : 3;

  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("no usable GPU: %s\n", why.c_str());
    return 0;
  }
  try
  {
    return dbl ? run<double>(n, clustered, reps, pinned, verify, target, dump)
               : run<float>(n, clustered, reps, pinned, verify, target, dump);
  }
  catch (const std::exception& e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
