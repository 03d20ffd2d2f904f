// Friends-of-friends benchmark of the kernels alone: groups + labels +
// catalogue, periodic unit box, b = 0.2, uniform or clustered points.
//
// Usage: jz_bench_fof [N=1000000] [uniform|clustered] [float|double] [repeats=3]
//        [--write FILE]   (writes the points as raw float32/float64 xyz for
//                          the comparison script, then exits)
//        [--read FILE]    (raw xyz points of that precision instead, e.g. halos.py's)
//        [--tree]         (times the shared tree build alone: the minima of wall
//                          and process CPU time over the repeats, and of each
//                          of the build's stages)
//
// "clustered": 85% of the points in halos with a power-law size function,
// each an isothermal sphere (rho ~ r^-2) of radius R200 (mean density 200x
// the box mean), the rest uniform. Prints the time per stage, the total and
// the peak memory beyond the input (VmHWM before/after, in bytes per point).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "../tests/Problems.h"
#include "HaloPoints.h"
#include "PeriodicCatalogue.h"
#include "ProcMemory.h"
#include "jz/Fof.h"
#include "jz/StageTimer.h"
#include "jz/Tree.h"

namespace
{
using jzbench::statusKb;

// The tree build alone (periodic unit box), as FoF and kNN run it.
template <class T>
int runTree(const std::vector<T>& xyz, int repeats)
{
  const std::size_t n = xyz.size() / 3;
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  const jz::Periodicity per = jz::Periodicity::of(true, lo, hi);
  double wall = 1e30, cpu = 1e30;
  std::vector<std::pair<std::string, double>> stages; // minima per stage
  for (int rep = 0; rep < repeats; ++rep)
  {
    const std::clock_t c0 = std::clock();
    const jz::StageTimer timer(nullptr, "tree");
    jz::ZTree<T> tree;
    jz::RunInfo info;
    jz::buildTreeCpu<T>(xyz.data(), jz::Index(n), nullptr, 0, per, lo, jz::TreeBuildOptions(), tree,
      jz::RunControl(), &info);
    wall = std::min(wall, timer.seconds());
    cpu = std::min(cpu, double(std::clock() - c0) / CLOCKS_PER_SEC);
    if (stages.empty())
      stages = info.stageSeconds;
    for (std::size_t s = 0; s < stages.size() && s < info.stageSeconds.size(); ++s)
      stages[s].second = std::min(stages[s].second, info.stageSeconds[s].second);
  }
  std::printf("tree build N=%zu %s, %d threads: min of %d: %.4f s wall, %.4f s CPU |", n,
    sizeof(T) == 4 ? "float32" : "float64", omp_get_max_threads(), repeats, wall, cpu);
  for (const auto& s : stages)
    std::printf(" %s %.4f", s.first.c_str() + std::strlen("tree: "), s.second);
  std::printf("\n");
  return 0;
}

template <class T>
int run(std::size_t n, bool clustered, int repeats, const char* writeFile, const char* readFile,
  bool treeOnly)
{
  std::vector<T> xyz;
  if (readFile)
  {
    std::ifstream in(readFile, std::ios::binary | std::ios::ate);
    if (!in)
      return 1;
    xyz.resize(std::size_t(in.tellg()) / sizeof(T) / 3 * 3);
    in.seekg(0);
    in.read(reinterpret_cast<char*>(xyz.data()), std::streamsize(xyz.size() * sizeof(T)));
    n = xyz.size() / 3;
  }
  else
  {
    xyz = jzbench::makePoints<T>(n, clustered, 12345);
  }
  if (treeOnly)
    return runTree(xyz, repeats);
  if (writeFile)
  {
    std::FILE* f = std::fopen(writeFile, "wb");
    if (!f || std::fwrite(xyz.data(), sizeof(T), xyz.size(), f) != xyz.size())
      return 1;
    std::fclose(f);
    return 0;
  }
  const double l = jz::relativeLinkingLength(0.2, 1.0, n);
  std::printf("FoF N=%zu %s %s periodic b=0.2 (l=%.4g), %d threads\n", n,
    clustered ? "clustered" : "uniform", sizeof(T) == 4 ? "float32" : "float64", l,
    omp_get_max_threads());
  const long rssBefore = statusKb("VmRSS:");
  for (int rep = 0; rep < repeats; ++rep)
  {
    const jz::StageTimer total(nullptr, "total");
    const jz::FofProblem<T> pb = jztest::fofProblem(xyz.data(), n, l, true);
    std::vector<jz::GlobalId> gid, gsize;
    std::size_t G;
    jz::RunInfo info;
    {
      jz::FofGroups out;
      info = jz::computeFofGroups(pb, out, jz::Backend::CPU);
      const std::vector<jz::GlobalId>& label = out.groupLabel;
      const std::vector<jz::Index>& root = out.groupRoot;
      jz::StageTimer labels(&info, "labels");
      // Outputs allocated after the tree is gone, as the filter does.
      gid.resize(n);
      gsize.resize(n);
      G = jz::labelFofGroups(root.data(), label.data(), n, 20, gid.data(), gsize.data());
      labels.stop();
    }
    jz::StageTimer catalogue(&info, "catalogue");
    const jz::FofCatalogue cat = jzbench::periodicCatalogue(xyz, gid, G);
    catalogue.stop();
    std::printf("  run %d: total %.3f s (%zu groups >= 20, largest %lld) |", rep, total.seconds(),
      G, G ? (long long)cat.count[0] : 0LL);
    for (auto& s : info.stageSeconds)
      std::printf(" %s %.3f", s.first.c_str(), s.second);
    std::printf("\n");
    if (rep == 0)
    {
      std::printf("  counters:");
      for (auto& s : info.counters)
        std::printf(" %s %.0f", s.first.c_str(), s.second);
      std::printf("\n");
    }
  }
  const long hwm = statusKb("VmHWM:");
  std::printf("  peak memory beyond the input: %.1f bytes/point (VmHWM %ld kB, before %ld kB;"
              " includes the GroupId/GroupSize outputs, 16 bytes/point)\n",
    double(hwm - rssBefore) * 1024.0 / double(n), hwm, rssBefore);
  return 0;
}
} // namespace

int main(int argc, char** argv)
{
  std::size_t n = 1000000;
  bool clustered = false, dbl = false;
  int repeats = 3;
  const char* writeFile = nullptr;
  const char* readFile = nullptr;
  bool treeOnly = false;
  int pos = 0;
  for (int a = 1; a < argc; ++a)
  {
    if (!std::strcmp(argv[a], "--write") && a + 1 < argc)
    {
      writeFile = argv[++a];
      continue;
    }
    if (!std::strcmp(argv[a], "--read") && a + 1 < argc)
    {
      readFile = argv[++a];
      continue;
    }
    if (!std::strcmp(argv[a], "--tree"))
    {
      treeOnly = true;
      continue;
    }
    switch (pos++)
    {
      case 0:
        n = std::size_t(std::atof(argv[a]));
        break;
      case 1:
        clustered = !std::strcmp(argv[a], "clustered");
        break;
      case 2:
        dbl = !std::strcmp(argv[a], "double");
        break;
      case 3:
        repeats = std::atoi(argv[a]);
        break;
    }
  }
  return dbl ? run<double>(n, clustered, repeats, writeFile, readFile, treeOnly)
             : run<float>(n, clustered, repeats, writeFile, readFile, treeOnly);
}
