// GPU friends-of-friends benchmark: computeFofHalos on the GPU end to end
// (groups, GroupId/GroupSize and the catalogue on the device; per-stage CUDA
// times: upload, sort, tree, node walk, leaf walk, groups, catalogue,
// download). Periodic unit box, b = 0.2,
// minimum group size 20, unit masses.
//   jz_bench_fof_cuda [N=134217728 (512^3)] [clustered|uniform] [float|double] [reps=3]
//                     [--pinned] [--verify] [--target SECONDS] [--dump FILE]
// --pinned registers the input points and the GroupId/GroupSize arrays
// (page-locked transfers); --verify compares every output (GroupId,
// GroupSize, the catalogue bit for bit) with the CPU's computeFofHalos (slow
// at large N). Exit code 77 without a usable GPU; --target makes it 2 when
// the best total misses it;
// --dump writes the points (raw x,y,z) for the jz-tree reference
// (jztree_reference.py).
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

#include "../tests/Problems.h"
#include "GpuBenchOptions.h"
#include "HaloPoints.h"
#include "WriteRaw.h"
#include "jz/Fof.h"
#include "jz/StageTimer.h"

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
  const jz::FofProblem<T> pb = jztest::fofProblem(xyz.data(), n, l, true);

  {
    // Warm-up: context creation and module load.
    jz::FofProblem<T> small = pb;
    small.numPoints = std::min<std::size_t>(n, 1000);
    jz::FofHalos out;
    jz::computeFofHalos(small, jz::FofHaloOptions(), out, jz::Backend::CUDA);
  }

  // The outputs, allocated (and page-locked) once, outside the timed runs.
  std::vector<jz::GlobalId> gid(n), gsize(n);
  if (o.pinned)
  {
    jzbench::pin(gid);
    jzbench::pin(gsize);
  }
  jz::FofHaloOptions options;
  options.minimumGroupSize = 20;
  options.groupIdOut = gid.data();
  options.groupSizeOut = gsize.data();

  double best = 1e30;
  jz::FofHalos halos;
  for (int rep = 0; rep < reps; ++rep)
  {
    const StageTimer t0(nullptr, "");
    jz::RunInfo info = jz::computeFofHalos(pb, options, halos, jz::Backend::CUDA);
    const double total = t0.seconds();
    double gpuSum = 0;
    for (auto& s : info.stageSeconds)
      gpuSum += s.second;
    const jz::FofCatalogue& cat = halos.catalogue;
    std::printf("  run %d: total %.3f s with the catalogue (GPU stages sum %.3f s); %zu groups"
                " >= 20, largest %lld\n",
      rep, total, gpuSum, halos.numGroups, cat.numGroups ? (long long)cat.count[0] : 0LL);
    std::printf("    stages:");
    for (auto& s : info.stageSeconds)
      std::printf(" %s %.4f", s.first.c_str(), s.second);
    std::printf("\n");
    if (rep == 0)
      jzbench::printCounters(info, n, "    ");
    best = std::min(best, total);
  }
  std::printf("RESULT GPU FoF N=%zu %s best total %.3f s including the catalogue", n,
    clustered ? "clustered" : "uniform", best);
  const int verdict = jzbench::finishResult(best, o.target);
  if (o.verify)
  {
    const StageTimer t0(nullptr, "");
    jz::FofHaloOptions cpuOptions = options;
    cpuOptions.groupIdOut = cpuOptions.groupSizeOut = nullptr;
    jz::FofHalos cpu;
    jz::computeFofHalos(pb, cpuOptions, cpu, jz::Backend::CPU);
    const jz::FofCatalogue &a = cpu.catalogue, &b = halos.catalogue;
    auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
      return x.size() == y.size() && (x.empty() || !std::memcmp(x.data(), y.data(), x.size() * 8));
    };
    const bool ids =
      cpu.numGroups == halos.numGroups && cpu.groupId == gid && cpu.groupSize == gsize;
    const bool rows = a.count == b.count && same(a.mass, b.mass) &&
      same(a.centerOfMass, b.centerOfMass) && same(a.inertiaRadius, b.inertiaRadius);
    std::printf("VERIFY CPU %.3f s: GPU GroupId/GroupSize %s, catalogue %s\n", t0.seconds(),
      ids ? "identical" : "DIFFER from the CPU", rows ? "identical (bit for bit)" : "DIFFERS");
    if (!ids || !rows)
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

  if (jzbench::usableGpuName("FoF CUDA").empty())
    return 77;
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
