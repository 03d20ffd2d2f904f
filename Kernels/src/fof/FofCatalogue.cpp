// The friends-of-friends halo catalogue (computeFofCatalogue in Fof.h,
// §IV-B): count, mass, periodic-aware centre of mass, inertia radius, mean
// velocity and velocity dispersion per kept group, in double.
//
// One pass over the points into GroupMoments (the accumulator the distributed
// catalogue merges across ranks), relative to each group's reference member:
// its member with the smallest global id, so results do not depend on the
// input order. The points are cut into chunks by their count alone
// (FofCatalogueChunks.h, the order the GPU catalogue follows too), each
// summed into a private copy, and the copies are merged in chunk order: the
// same bits whatever the number of threads.
#include <algorithm>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "fof/FofCatalogueChunks.h"
#include "fof/GroupMoments.h"
#include "jz/Fof.h"

namespace jz
{
namespace
{
// Reference member of each group: the smallest global id (the first such
// point), per thread's chunk, then the chunks' in order: the serial scan's.
template <class T, class Key>
void findReferences(
  const FofCatalogueInput<T>& in, const Key& key, int numThreads, std::vector<long long>& ref)
{
  const std::size_t G = in.numGroups;
  const long long n = (long long)in.numPoints;
  std::vector<std::vector<long long>> refOf(numThreads);
#pragma omp parallel num_threads(numThreads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<long long> mine(G, n);
    for (long long i = n * t / nt; i < n * (t + 1) / nt; ++i)
    {
      const GlobalId g = in.groupId[i];
      if (g >= 0 && std::size_t(g) < G && (mine[g] == n || key(i) < key(mine[g])))
        mine[g] = i;
    }
    refOf[t].swap(mine);
  }
  for (const std::vector<long long>& r : refOf)
    for (std::size_t g = 0; g < r.size(); ++g)
      if (r[g] < n && (ref[g] == n || key(r[g]) < key(ref[g])))
        ref[g] = r[g];
}

// Where the CPU has SSE4.1 the members' loop runs in a clone that rounds with
// roundsd instead of calling libm's nearbyint (three calls a member in the
// nearest-image offsets): the same IEEE operations, the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define JZ_SSE41_CLONES __attribute__((target_clones("sse4.1", "default")))
#else
#define JZ_SSE41_CLONES
#endif

// Each chunk's sums over its points, from `sums`, into part[chunk].
template <class T>
JZ_SSE41_CLONES void accumulateMembers(const FofCatalogueInput<T>& in, const double* period,
  int numThreads, int numChunks, const std::vector<GroupMoments>& sums,
  std::vector<std::vector<GroupMoments>>& part)
{
  const std::size_t G = in.numGroups, n = in.numPoints;
  const bool vel = in.velocities != nullptr;
#pragma omp parallel num_threads(std::min(numThreads, numChunks))
  {
    const int nt = omp_get_num_threads();
    for (int c = omp_get_thread_num(); c < numChunks; c += nt)
    {
      std::vector<GroupMoments>& acc = part[c];
      acc = sums;
      const std::size_t end = fofCatalogueChunkBegin(n, std::size_t(c) + 1, std::size_t(numChunks));
      for (std::size_t i = fofCatalogueChunkBegin(n, c, numChunks); i < end; ++i)
      {
        const GlobalId g = in.groupId[i];
        if (g < 0 || std::size_t(g) >= G)
          continue;
        double x[3];
        for (int d = 0; d < 3; ++d)
          x[d] = double(in.points[3 * i + d]);
        acc[g].add(
          x, in.masses ? in.masses[i] : 1.0, vel ? in.velocities + 3 * i : nullptr, period);
      }
    }
  }
}
} // namespace

int fofCatalogueChunks(std::size_t numGroups, std::size_t numPoints)
{
  // At least kMinChunkPoints points a chunk, at most kMaxChunks chunks, and
  // the chunks' private sums small next to the points (many tiny groups,
  // e.g. MinimumGroupSize 1, accumulate in one chunk).
  constexpr std::size_t kMaxChunks = 16, kMinChunkPoints = 4096;
  std::size_t chunks = kMaxChunks;
  while (chunks > 1 &&
    (numPoints / chunks < kMinChunkPoints || numGroups * chunks > numPoints / 16))
    chunks /= 2;
  return int(chunks);
}

template <class T>
void computeFofCatalogue(
  const FofCatalogueInput<T>& in, FofCatalogue& cat, const RunControl& control)
{
  const std::size_t G = in.numGroups;
  const long long n = (long long)in.numPoints;
  const int numThreads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  const int numChunks = fofCatalogueChunks(G, in.numPoints);
  const bool vel = in.velocities != nullptr;
  double period[3] = { 0, 0, 0 };
  if (in.periodic)
    for (int d = 0; d < 3; ++d)
      period[d] = in.boxHi[d] - in.boxLo[d];

  cat = FofCatalogue();
  cat.hasVelocities = vel;
  if (G == 0 || n == 0)
  {
    cat.numGroups = G;
    cat.count.assign(G, 0);
    cat.mass.assign(G, 0.0);
    cat.centerOfMass.assign(3 * G, 0.0);
    cat.inertiaRadius.assign(G, 0.0);
    if (vel)
    {
      cat.meanVelocity.assign(3 * G, 0.0);
      cat.velocityDispersion.assign(G, 0.0);
    }
    return;
  }

  auto key = [&](long long i) { return in.ids ? in.ids[i] : GlobalId(i); };
  std::vector<long long> ref(G, n);
  if (in.reference)
    for (std::size_t g = 0; g < G; ++g)
      ref[g] = (long long)in.reference[g];
  else
    findReferences(in, key, numThreads, ref);
  auto position = [&](long long i, double* x)
  {
    for (int d = 0; d < 3; ++d)
      x[d] = double(in.points[3 * i + d]);
  };
  std::vector<GroupMoments> sums(G);
  for (std::size_t g = 0; g < G; ++g)
  {
    double x[3] = { 0, 0, 0 };
    if (ref[g] < n)
      position(ref[g], x);
    sums[g] = GroupMoments::around(
      GlobalId(g), x, vel && ref[g] < n ? in.velocities + 3 * ref[g] : nullptr);
  }

  std::vector<std::vector<GroupMoments>> part(numChunks);
  accumulateMembers(in, period, numThreads, numChunks, sums, part);
  reportProgress(control, 0.5);
  for (int t = 0; t < numChunks; ++t)
    for (std::size_t g = 0; g < G; ++g)
      sums[g].merge(part[t][g], period);
  std::vector<std::vector<GroupMoments>>().swap(part);

  cat.numGroups = G;
  for (std::size_t g = 0; g < G; ++g)
    sums[g].appendRow(in.boxLo, period, vel, cat);
  reportProgress(control, 1.0);
}

template void computeFofCatalogue<float>(
  const FofCatalogueInput<float>&, FofCatalogue&, const RunControl&);
template void computeFofCatalogue<double>(
  const FofCatalogueInput<double>&, FofCatalogue&, const RunControl&);
} // namespace jz
