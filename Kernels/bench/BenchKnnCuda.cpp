// GPU benchmark of the kNN density: per-stage CUDA times (upload, sort, tree,
// node walks, leaf walk, input-order output) for a self query.
//   jz_bench_knn_cuda [N=1e7] [K=16] [kind=uniform] [reps=5] [--lists] [--pinned] [--verify]
//                     [--target SECONDS] [--dump FILE]
// --pinned registers the host arrays (page-locked transfers), --lists also
// returns neighbour ids and distances, --verify compares with the CPU backend,
// --target makes the exit code 2 when the best wall time misses it, --dump
// writes the points (raw float32 x,y,z) for the jz-tree reference
// (jztree_reference.py) to run on the same points. Exit code 77 without a
// usable GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../tests/PointSets.h"
#include "../tests/Problems.h"
#include "GpuBenchOptions.h"
#include "WriteRaw.h"
#include "jz/Knn.h"
#include "jz/StageTimer.h"

namespace
{
using jz::StageTimer; // the one clock (a null RunInfo records nothing)
} // namespace

int main(int argc, char** argv)
{
  const jzbench::GpuBenchOptions o = jzbench::parseGpuBenchOptions(argc, argv);
  const std::size_t n = std::size_t(o.number(0, 1e7));
  const int k = int(o.number(1, 16));
  const std::string kind = o.word(2, "uniform");
  const int reps = int(o.number(3, 5));
  const bool lists = o.lists;

  const std::string device = jzbench::usableGpuName("kNN CUDA");
  if (device.empty())
    return 77;
  std::printf("kNN CUDA benchmark on %s: N=%zu K=%d %s, self query, float32%s%s\n", device.c_str(),
    n, k, kind.c_str(), lists ? ", neighbour lists" : ", density only",
    o.pinned ? ", pinned host memory" : "");

  std::vector<float> xyz = jztest::makePoints<float>(kind, n);
  if (!o.dump.empty() && !jzbench::writeRaw(o.dump, xyz))
    return 1;
  std::vector<float> h(n), rho(n);
  std::vector<jz::GlobalId> ids;
  std::vector<float> dist;
  if (lists)
  {
    ids.resize(n * std::size_t(k));
    dist.resize(n * std::size_t(k));
  }
  if (o.pinned)
    jzbench::pinAll(xyz, h, rho, ids, dist);
  const jz::KnnProblem<float> pr = jztest::knnProblem(xyz.data(), n, k);
  const jz::KnnResults<float> res = jztest::knnResults(h, rho, ids, dist); // lists when sized

  const jzbench::BestGpuRun bestRun =
    jzbench::timeGpuRuns(reps, n, [&] { return jz::computeKnn(pr, res, jz::Backend::CUDA); });
  const double best = bestRun.seconds;
  std::printf("RESULT GPU N=%zu K=%d %s%s best wall %.4f s", n, k, kind.c_str(),
    o.pinned ? " pinned" : "", best);
  const int verdict = jzbench::finishResult(best, o.target);
  jzbench::printStages(bestRun);

  if (o.verify)
  {
    std::vector<float> h2(n), rho2(n);
    jz::KnnResults<float> cpu;
    cpu.smoothingLength = h2.data();
    cpu.density = rho2.data();
    const StageTimer t0(nullptr, "");
    jz::computeKnn(pr, cpu, jz::Backend::CPU);
    const bool same = std::memcmp(h.data(), h2.data(), n * sizeof(float)) == 0 &&
      std::memcmp(rho.data(), rho2.data(), n * sizeof(float)) == 0;
    std::printf("VERIFY CPU %.3f s: GPU results %s\n", t0.seconds(),
      same ? "bit-identical" : "DIFFER from the CPU");
    if (!same)
      return 1;
  }
  return verdict;
}
