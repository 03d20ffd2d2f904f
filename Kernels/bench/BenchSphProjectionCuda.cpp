// GPU benchmark of SPHProjection's deposition: per-stage CUDA times
// (upload, deposition, download) of the best of `reps` runs of a
// RES x RES projection of N particles, with their smoothing lengths from
// the GPU kNN (the distance to the 32nd neighbour, not timed).
//   jz_bench_sph_cuda [N=1e8] [RES=4096] [kind=clustered] [reps=3] [--pinned]
//                     [--verify] [--target SECONDS]
// Float32 coordinates in the periodic unit cube (kind: jztest::makePoints),
// unit total mass. --verify also deposits on the CPU and requires every
// pixel within 1e-6 of the CPU's value (plus 1e-12 of the largest) and the
// totals within 1e-9 (use it at 1e6); --target makes the exit code 2 when
// the best wall time misses it. Exit code 77 without a usable GPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../tests/PointSets.h"
#include "../tests/Problems.h"
#include "GpuBenchOptions.h"
#include "jz/Knn.h"
#include "jz/SphMaps.h"
#include "jz/StageTimer.h"

int main(int argc, char** argv)
{
  const jzbench::GpuBenchOptions o = jzbench::parseGpuBenchOptions(argc, argv);
  const std::size_t n = std::size_t(o.number(0, 1e8));
  const int res = int(o.number(1, 4096));
  const std::string kind = o.word(2, "clustered");
  const int reps = int(o.number(3, 3));

  const std::string device = jzbench::usableGpuName("SPH projection CUDA");
  if (device.empty())
    return 77;
  std::printf("SPH projection CUDA benchmark on %s: N=%zu %dx%d %s, float32%s\n", device.c_str(),
    n, res, res, kind.c_str(), o.pinned ? ", pinned host memory" : "");

  std::vector<float> xyz = jztest::makePoints<float>(kind, n);
  std::vector<float> h32(n), rho(n);
  jz::KnnProblem<float> knn = jztest::knnProblem(xyz.data(), n, 32);
  knn.periodic = true;
  jz::KnnResults<float> kr;
  kr.smoothingLength = h32.data();
  kr.density = rho.data();
  jz::computeKnn(knn, kr, jz::Backend::CUDA);
  std::vector<double> h(h32.begin(), h32.end()), m(n, 1.0 / double(n));
  h32 = std::vector<float>();
  rho = std::vector<float>();
  if (o.pinned)
    jzbench::pinAll(xyz, h, m);

  jz::SphParticles<float> P;
  P.points = xyz.data();
  P.numPoints = n;
  P.masses = m.data();
  P.support = h.data();
  P.periodic = true;
  jz::SphGrid g;
  g.kind = jz::SphMapKind::Projection;
  g.resolution[0] = g.resolution[1] = res;
  jz::SphMapSums gpu;
  const jzbench::BestGpuRun bestRun = jzbench::timeGpuRuns(
    reps, n, [&] { return jz::depositSphMap(P, g, gpu, jz::Backend::CUDA); });
  const double best = bestRun.seconds;
  double total = 0;
  for (double v : gpu.mass)
    total += v;
  std::printf("RESULT GPU SPH projection N=%zu %dx%d %s%s best wall %.4f s", n, res, res,
    kind.c_str(), o.pinned ? " pinned" : "", best);
  const int verdict = jzbench::finishResult(best, o.target);
  jzbench::printStages(bestRun);
  std::printf("  mass in the image %.12f of 1\n", total);

  if (o.verify)
  {
    jz::SphMapSums cpu;
    const jz::StageTimer t0(nullptr, "");
    jz::depositSphMap(P, g, cpu, jz::Backend::CPU);
    double top = 0, worst = 0, cpuTotal = 0;
    for (std::size_t c = 0; c < cpu.mass.size(); ++c)
    {
      top = std::max(top, std::fabs(cpu.mass[c]));
      worst = std::max(worst, std::fabs(gpu.mass[c] - cpu.mass[c]) - 1e-6 * std::fabs(cpu.mass[c]));
      cpuTotal += cpu.mass[c];
    }
    const bool same = worst <= 1e-12 * top && std::fabs(total - cpuTotal) <= 1e-9;
    std::printf("VERIFY CPU %.3f s: GPU image %s (worst pixel beyond 1e-6: %.3g; totals %.12f, %.12f)\n",
      t0.seconds(), same ? "equals the CPU's" : "DIFFERS from the CPU's", worst, total, cpuTotal);
    if (!same)
      return 1;
  }
  return verdict;
}
