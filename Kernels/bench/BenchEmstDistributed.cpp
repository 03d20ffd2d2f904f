// The distributed EMST on simulated ranks (threads): bytes received per
// local point (mean and max over ranks: the decomposition, the covers, the
// boundary queries and answers, the allgathered spanning candidates and
// cross-rank edges, the edges home), boundary queries per local point,
// points received per local point (by the searches; moved by the
// decomposition, which interleaved input pieces make about all), Borůvka
// rounds, and rank 0's stage times. Volume does not depend on timing, so
// threads stand in for MPI ranks.
//   jz_bench_emst_distributed [ranks=4] [pointsPerRank=1e5] [kind=uniform|clustered]
//                             [mutual] [minSamples=5] [periodic] [blocks]
// (the words after kind in any order; periodic: the unit box, as bench_mpi.py's
// filters run; blocks: rank r's input is the r-th block of the points in a
// z-order of their bounding box, about the decomposition's ranges; else
// every ranks-th point)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "../tests/PointSets.h"
#include "../tests/ThreadCommunicator.h"
#include "jz/Emst.h"

namespace
{
double counter(const jz::RunInfo& info, const std::string& name)
{
  for (const auto& [key, value] : info.counters)
    if (key == name)
      return value;
  return 0;
}

// A 10-bit-per-axis z-order key per point over the points' bounding box.
std::vector<std::uint32_t> zOrderKeys(const std::vector<float>& xyz)
{
  float lo[3] = { xyz[0], xyz[1], xyz[2] }, hi[3] = { xyz[0], xyz[1], xyz[2] };
  for (std::size_t i = 0; i < xyz.size(); ++i)
  {
    lo[i % 3] = std::min(lo[i % 3], xyz[i]);
    hi[i % 3] = std::max(hi[i % 3], xyz[i]);
  }
  std::vector<std::uint32_t> key(xyz.size() / 3, 0);
  for (std::size_t i = 0; i < key.size(); ++i)
    for (int d = 0; d < 3; ++d)
    {
      const double t = (double(xyz[3 * i + d]) - lo[d]) / std::max(1e-30, double(hi[d]) - lo[d]);
      const std::uint32_t cell = std::min(1023u, std::uint32_t(t * 1024));
      for (int b = 0; b < 10; ++b)
        key[i] |= ((cell >> b) & 1u) << (3 * b + (2 - d));
    }
  return key;
}
} // namespace

int main(int argc, char** argv)
{
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 4;
  const std::size_t perRank = argc > 2 ? std::size_t(std::atof(argv[2])) : 100000;
  const std::string kind = argc > 3 ? argv[3] : "uniform";
  bool mutual = false, periodic = false, blocks = false;
  int minSamples = 5;
  for (int a = 4; a < argc; ++a)
  {
    const std::string word = argv[a];
    mutual |= word == "mutual";
    periodic |= word == "periodic";
    blocks |= word == "blocks";
    if (std::isdigit(static_cast<unsigned char>(word[0])))
      minSamples = std::atoi(argv[a]);
  }
  const std::size_t n = perRank * std::size_t(ranks);
  std::vector<float> xyz = jztest::makePoints<float>(kind, n, 5);
  // The input pieces: rank r holds order[i] for i = r, r + ranks, ... (blocks:
  // the points in z-order, so that every rank holds a compact block).
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  if (blocks)
  {
    const std::vector<std::uint32_t> key = zOrderKeys(xyz);
    std::stable_sort(order.begin(), order.end(),
      [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    std::vector<std::size_t> dealt(n);
    for (std::size_t i = 0; i < n; ++i) // block i / perRank to rank i / perRank
      dealt[(i % perRank) * std::size_t(ranks) + i / perRank] = order[i];
    order = dealt;
  }
  std::vector<double> bytes(ranks), queries(ranks), local(ranks), moved(ranks), searched(ranks),
    cores(ranks);
  std::vector<jz::RunInfo> infos(ranks);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      std::vector<float> mine; // input pieces: every ranks-th point
      std::vector<jz::GlobalId> ids;
      for (std::size_t k = r; k < n; k += ranks)
      {
        const std::size_t i = order[k];
        mine.insert(mine.end(), &xyz[3 * i], &xyz[3 * i] + 3);
        ids.push_back(jz::GlobalId(i));
      }
      jz::EmstProblem<float> pr;
      pr.points = mine.data();
      pr.numPoints = ids.size();
      pr.ids = ids.data();
      pr.metric = mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
      pr.minSamples = minSamples;
      pr.periodic = periodic;
      jz::RunControl one;
      one.numThreads = 1;
      jz::EmstRankEdges<float> out;
      infos[r] = jz::computeEmstDistributed(pr, comm, out, jz::Backend::CPU, one);
      bytes[r] = counter(infos[r], "bytes received");
      queries[r] = counter(infos[r], "boundary queries");
      moved[r] = counter(infos[r], "points received: decomposition");
      searched[r] = counter(infos[r], "points received: searches");
      cores[r] = counter(infos[r], "points received: core distances' searches");
      local[r] = double(ids.size());
    });
  double meanBytes = 0, maxBytes = 0, meanQueries = 0;
  for (int r = 0; r < ranks; ++r)
  {
    meanBytes += bytes[r] / local[r] / ranks;
    maxBytes = std::max(maxBytes, bytes[r] / local[r]);
    meanQueries += queries[r] / local[r] / ranks;
  }
  std::printf("ranks %d, %zu points per rank, %s, %s%s%s: bytes received per local point mean %.1f "
              "max %.1f; boundary queries per local point %.3f; rounds %.0f\n",
    ranks, perRank, kind.c_str(), mutual ? "mutual reachability" : "euclidean",
    periodic ? ", periodic" : "", blocks ? ", blocks" : ", interleaved", meanBytes,
    maxBytes, meanQueries, counter(infos[0], "boruvka rounds"));
  double meanMoved = 0, meanSearched = 0, maxSearched = 0, meanCores = 0;
  for (int r = 0; r < ranks; ++r)
  {
    meanMoved += moved[r] / local[r] / ranks;
    meanCores += cores[r] / local[r] / ranks;
    meanSearched += searched[r] / local[r] / ranks;
    maxSearched = std::max(maxSearched, searched[r] / local[r]);
  }
  std::printf("points received per local point: by the searches mean %.3f max %.3f (of which "
              "the core distances' mean %.3f); moved by the decomposition mean %.3f\n",
    meanSearched, maxSearched, meanCores, meanMoved);
  for (const auto& [key, value] : infos[0].counters)
    if (key.rfind("bytes received: ", 0) == 0)
      std::printf("  rank 0 %-32s %.1f per local point\n", key.c_str(), value / local[0]);
  std::printf("  rank 0 boundary queries per round per local point:");
  for (const auto& [key, value] : infos[0].counters)
    if (key.rfind("boundary queries ", 0) == 0)
      std::printf(" %.3f", value / local[0]);
  std::printf("\n");
  for (const auto& [stage, seconds] : infos[0].stageSeconds)
    std::printf("  rank 0 %-20s %.3f s\n", stage.c_str(), seconds);
  return 0;
}
