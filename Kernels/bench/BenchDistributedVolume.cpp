// Communication volume of the distributed kNN and FoF, on simulated ranks
// (threads): ghost points received per local point, mean and max over ranks
// (and the kNN's boundary queries, searched again with the ghosts, per local
// query).
// Volume does not depend on timing, so threads stand in for MPI ranks here.
//   jz_bench_volume [ranks=8] [pointsPerRank=1e6] [kind=uniform|clustered] [k=16] [b=0.2]
//                   [filters=knn,fof]
// JZ_STAGES=1 prints rank 0's stage times.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../tests/PointSets.h"
#include "../tests/ThreadCommunicator.h"
#include "../tests/Problems.h"
#include "jz/Distributed.h"

int main(int argc, char** argv)
{
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 8;
  const std::size_t perRank = argc > 2 ? std::size_t(std::atof(argv[2])) : 1000000;
  const std::string kind = argc > 3 ? argv[3] : "uniform";
  const int k = argc > 4 ? std::atoi(argv[4]) : 16;
  const double b = argc > 5 ? std::atof(argv[5]) : 0.2;
  const std::string filters = argc > 6 ? argv[6] : "knn,fof";
  const bool runKnn = filters.find("knn") != std::string::npos;
  const bool runFof = filters.find("fof") != std::string::npos;
  const std::size_t n = perRank * std::size_t(ranks);
  std::vector<float> xyz = jztest::makePoints<float>(kind, n, 5);
  for (float& x : xyz)
    x -= std::floor(x); // periodic unit box
  const double l = b * std::cbrt(1.0 / double(n));
  std::vector<double> knnGhosts(ranks), knnBoundary(ranks), fofGhosts(ranks), local(ranks);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      // Input pieces: random ranks (the decomposition redistributes anyway).
      std::vector<float> mine;
      std::vector<jz::GlobalId> ids;
      for (std::size_t i = r; i < n; i += ranks)
      {
        mine.insert(mine.end(), &xyz[3 * i], &xyz[3 * i] + 3);
        ids.push_back(jz::GlobalId(i));
      }
      jz::RunControl one;
      one.numThreads = 1;
      jz::KnnProblem<float> kp = jztest::knnProblem(mine.data(), ids.size(), k);
      kp.sourceIds = ids.data();
      kp.periodic = true;
      std::vector<float> h(ids.size());
      jz::KnnResults<float> out;
      out.smoothingLength = h.data();
      jz::RunInfo ki;
      if (runKnn)
      {
        ki = jz::computeKnnDistributed(kp, out, comm, jz::Backend::CPU, one);
        knnGhosts[r] = ki.counter("ghost sources received");
        knnBoundary[r] = ki.counter("boundary queries");
        local[r] = ki.counter("local sources");
      }
      jz::FofProblem<float> fp = jztest::fofProblem(mine.data(), ids.size(), l, true);
      fp.ids = ids.data();
      jz::FofDistributedResult res;
      jz::RunInfo fi;
      if (runFof)
      {
        fi = jz::computeFofDistributed(
          fp, jz::FofDistributedOptions(), res, comm, jz::Backend::CPU, one);
        fofGhosts[r] = fi.counter("ghost points received");
        local[r] = fi.counter("local points");
      }
      if (r == 0 && std::getenv("JZ_STAGES"))
      {
        for (const auto& s : ki.stageSeconds)
          std::printf("  knn rank 0 %s %.3f s\n", s.first.c_str(), s.second);
        for (const auto& s : fi.stageSeconds)
          std::printf("  fof rank 0 %s %.3f s\n", s.first.c_str(), s.second);
      }
    });
  auto report = [&](const char* what, const std::vector<double>& g)
  {
    double mean = 0, worst = 0;
    for (int r = 0; r < ranks; ++r)
    {
      const double f = local[r] > 0 ? g[r] / local[r] : 0;
      mean += f / ranks;
      worst = std::max(worst, f);
    }
    std::printf("RESULT %s ranks=%d perRank=%zu %s: %.3f received per local point (max %.3f)\n",
      what, ranks, perRank, kind.c_str(), mean, worst);
  };
  report("knn", knnGhosts);
  // The queries searched twice (locally, then with the ghosts).
  report("knn boundary queries", knnBoundary);
  report("fof", fofGhosts);
  return 0;
}
