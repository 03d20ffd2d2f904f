// Runs the CPU friends-of-friends many times on one point set and compares
// every run with a reference labelling (fof_stress.py computes it with scipy).
// The thread count comes from OMP_NUM_THREADS, so the caller can oversubscribe.
//
// Usage: jz_fof_stress_runner POINTS float|double L periodic(0|1) REFERENCE REPEATS
//   POINTS     raw xyz in the named precision, periodic box [0, 1)^3
//   REFERENCE  int64 per point: the smallest input index of its group
// Exit status: 0 when every run matched, 1 otherwise (mismatches on stderr).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <omp.h>

#include "../bench/RawFiles.h"
#include "jz/Fof.h"

namespace
{
using jzbench::readAll;

// Labels must equal the reference; each root must be a member of the point's
// group that is its own root.
std::size_t countMismatches(
  const jz::FofGroups& out, const std::vector<jz::GlobalId>& reference, std::size_t& badRoots)
{
  std::size_t bad = 0;
  badRoots = 0;
  for (std::size_t i = 0; i < reference.size(); ++i)
  {
    if (out.groupLabel[i] != reference[i])
      ++bad;
    const jz::Index r = out.groupRoot[i];
    if (r >= reference.size() || out.groupRoot[r] != r || reference[r] != reference[i])
      ++badRoots;
  }
  return bad;
}

template <class T>
int run(const char* pointsPath, double l, bool periodic, const char* refPath, int repeats)
{
  std::vector<T> xyz;
  std::vector<jz::GlobalId> reference;
  if (!readAll(pointsPath, xyz) || !readAll(refPath, reference) ||
    xyz.size() != 3 * reference.size())
  {
    std::fprintf(stderr, "cannot read %s / %s, or their sizes disagree\n", pointsPath, refPath);
    return 2;
  }
  jz::FofProblem<T> pb;
  pb.points = xyz.data();
  pb.numPoints = reference.size();
  pb.linkingLength = l;
  pb.periodic = periodic;
  for (int d = 0; d < 3; ++d)
  {
    pb.boxLo[d] = 0;
    pb.boxHi[d] = 1;
  }
  int failedRuns = 0;
  for (int rep = 0; rep < repeats; ++rep)
  {
    jz::FofGroups out;
    jz::computeFofGroups(pb, out, jz::Backend::CPU);
    std::size_t badRoots = 0;
    const std::size_t bad = countMismatches(out, reference, badRoots);
    if (bad || badRoots)
    {
      ++failedRuns;
      std::fprintf(stderr, "run %d (%d threads): %zu labels and %zu roots differ from scipy\n", rep,
        omp_get_max_threads(), bad, badRoots);
    }
  }
  std::printf("%d of %d runs (%d threads, N=%zu) differ from scipy\n", failedRuns, repeats,
    omp_get_max_threads(), reference.size());
  return failedRuns ? 1 : 0;
}
} // namespace

int main(int argc, char** argv)
{
  if (argc != 7)
  {
    std::fprintf(
      stderr, "usage: %s POINTS float|double L periodic(0|1) REFERENCE REPEATS\n", argv[0]);
    return 2;
  }
  const bool dbl = !std::strcmp(argv[2], "double");
  const double l = std::atof(argv[3]);
  const bool periodic = std::atoi(argv[4]) != 0;
  const int repeats = std::atoi(argv[6]);
  try
  {
    return dbl ? run<double>(argv[1], l, periodic, argv[5], repeats)
               : run<float>(argv[1], l, periodic, argv[5], repeats);
  }
  catch (const std::exception& e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
