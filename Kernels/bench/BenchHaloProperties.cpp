// The halo catalogue additions against friends-of-friends, side by side in one
// run: FoF (groups + labels + catalogue) and then centres of potential and
// spherical overdensity (Delta 200, mean density) on the same points.
// Periodic unit box, b = 0.2, masses 1/N (or spread over 0.5/N to 1.5/N).
//
// Usage: jz_bench_halo_properties [N=1000000] [uniform|clustered|FILE] [threads=2] [repeats=2]
//   [softening=1e-4] [equal|unequal masses]
// FILE: raw float64 xyz, its first N points (e.g. halos.py's, as bench_gravity.py writes them).
// Prints the wall and CPU time (all threads, std::clock) of each, their
// ratios (the target: FoF + additions <= 2x FoF, i.e. additions <= 1x
// FoF), the stage times, where the centres' time goes and a digest of
// the outputs (equal digests: bit-identical outputs, to compare builds).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "../tests/Problems.h"
#include "HaloPoints.h"
#include "RawFiles.h"
#include "jz/Fof.h"
#include "jz/HaloProperties.h"
#include "jz/StageTimer.h"

namespace
{
// FNV-1a over the bytes of every output column: equal digests, bit-identical outputs.
std::uint64_t digest(const jz::HaloProperties& out)
{
  std::uint64_t h = 1469598103934665603ull;
  auto add = [&](const auto& column)
  {
    const auto* bytes = reinterpret_cast<const unsigned char*>(column.data());
    for (std::size_t i = 0; i < column.size() * sizeof(column[0]); ++i)
      h = (h ^ bytes[i]) * 1099511628211ull;
  };
  add(out.centreOfPotential);
  add(out.mostBoundId);
  add(out.soRadius);
  add(out.soMass);
  add(out.soCount);
  return h;
}
} // namespace

int main(int argc, char** argv)
{
  const std::size_t n = argc > 1 ? std::size_t(std::atof(argv[1])) : 1000000;
  const char* kind = argc > 2 ? argv[2] : "clustered";
  jz::RunControl control;
  control.numThreads = argc > 3 ? std::atoi(argv[3]) : 2;
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 2;
  const double softening = argc > 5 ? std::atof(argv[5]) : 1e-4;
  const bool generated = std::strcmp(kind, "uniform") == 0 || std::strcmp(kind, "clustered") == 0;
  std::vector<float> xyz;
  std::vector<double> fromFile; // else a file of raw float64 xyz: its first n points
  if (generated)
    xyz = jzbench::makePoints<float>(n, std::strcmp(kind, "clustered") == 0, 12345);
  else if (jzbench::readAll(kind, fromFile) && fromFile.size() >= 3 * n)
    xyz.assign(fromFile.begin(), fromFile.begin() + std::ptrdiff_t(3 * n));
  else
  {
    std::fprintf(stderr, "%s: not a file of %zu float64 points\n", kind, n);
    return 2;
  }
  const bool unequal = argc > 6 && std::strcmp(argv[6], "unequal") == 0;
  std::vector<double> mass(n, 1.0 / double(n));
  for (std::size_t i = 0; unequal && i < n; ++i) // a fixed spread, no round values
    mass[i] *= 0.5 + double((i * 2654435761u) % 1000) / 999.0;
  double bestFof = 1e30, bestAdd = 1e30, bestFofCpu = 1e30, bestAddCpu = 1e30;
  auto cpuSeconds = [] { return double(std::clock()) / CLOCKS_PER_SEC; };
  for (int rep = 0; rep < repeats; ++rep)
  {
    jz::StageTimer fofClock(nullptr, "fof");
    const double fofCpu0 = cpuSeconds();
    const jz::FofProblem<float> pb =
      jztest::fofProblem(xyz.data(), n, jz::relativeLinkingLength(0.2, 1.0, n), true);
    jz::FofGroups groups;
    jz::computeFofGroups(pb, groups, jz::Backend::CPU, control);
    std::vector<jz::GlobalId> gid(n), gsize(n);
    const std::size_t G = jz::labelFofGroups(
      groups.groupRoot.data(), groups.groupLabel.data(), n, 20, gid.data(), gsize.data());
    const jz::FofCatalogueInput<float> in =
      jz::fofCatalogueInputFor(pb, gid.data(), G, mass.data(), nullptr);
    jz::FofCatalogue cat;
    jz::computeFofCatalogue(in, cat, control);
    const double tFof = fofClock.seconds();
    const double cFof = cpuSeconds() - fofCpu0;
    if (rep == 0)
    {
      double pairs = 0, large = 0, biggest = 0;
      for (std::size_t g = 0; g < G; ++g)
      {
        const double c = double(cat.count[g]);
        biggest = std::max(biggest, c);
        if (c <= double(jz::kDirectCentreLimit))
          pairs += c * c;
        else
          large += c;
      }
      std::printf("groups: direct pairs %.3g, members of bounded groups %.3g, largest %.0f\n",
        pairs, large, biggest);
    }

    const jz::StageTimer addClock(nullptr, "additions");
    const double addCpu0 = cpuSeconds();
    const jz::HaloPropertiesInput<float> hp =
      jztest::haloPropertiesInput(xyz.data(), n, mass.data(), gid.data(), G, cat, true);
    jz::HaloPropertiesOptions o;
    o.potentialCentres = true;
    o.softening = softening;
    o.sphericalOverdensity = true;
    o.overdensity = 200;
    o.referenceDensity = 1.0; // total mass 1 in the unit box
    jz::HaloProperties out;
    jz::SerialCommunicator comm;
    const jz::RunInfo info = jz::computeHaloProperties(comm, hp, o, out, control);
    const double tAdd = addClock.seconds();
    const double cAdd = cpuSeconds() - addCpu0;
    bestFof = std::min(bestFof, tFof);
    bestAdd = std::min(bestAdd, tAdd);
    bestFofCpu = std::min(bestFofCpu, cFof);
    bestAddCpu = std::min(bestAddCpu, cAdd);
    std::printf("rep %d: %zu groups, FoF %.3f s (CPU %.3f), centres + SO %.3f s (CPU %.3f):", rep,
      G, tFof, cFof, tAdd, cAdd);
    for (const auto& s : info.stageSeconds)
      std::printf(" %s=%.3f", s.first.c_str(), s.second);
    for (const auto& c : info.counters)
      std::printf(" [%s %.0f]", c.first.c_str(), c.second);
    std::printf("\n");
    if (rep == 0)
      std::printf("output digest %016llx\n", (unsigned long long)digest(out));
  }
  std::printf("N=%zu %s threads=%d: FoF %.3f s (CPU %.3f), centres + SO %.3f s (CPU %.3f); "
              "(FoF + additions) / FoF: wall %.2f, CPU %.2f (target <= 2)\n",
    n, kind, control.numThreads, bestFof, bestFofCpu, bestAdd,
    bestAddCpu, 1 + bestAdd / bestFof, 1 + bestAddCpu / bestFofCpu);
  return 0;
}
