// GPU benchmark of tree gravity: per-stage CUDA times (upload, sort, tree,
// multipoles, walk, input-order output) for a self query, and the accuracy
// at a sample of particles against float64 direct sums (GravityTargets.h).
//   jz_bench_gravity_cuda [N=1e7] [kind=uniform] [reps=3] [theta=0.5] [eps=0]
//                         [targets=1000] [--pinned] [--verify] [--target SECONDS]
// Masses 1/N, G = 1, float32 coordinates. --pinned registers the host arrays
// (page-locked transfers), --verify also runs the CPU backend and prints the
// GPU-CPU differences (99th percentiles over all particles), --target makes
// the exit code 2 when the best wall time misses it. Exit code 1 when the
// sample's 99th percentiles break the accuracy contract at theta <= 0.5
// (doc/filters/TreeGravity.md: 1e-3 acceleration, 1e-4 potential).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <omp.h>

#include "../tests/PointSets.h"
#include "../tests/Problems.h"
#include "GpuBenchOptions.h"
#include "GravityTargets.h"
#include "jz/Gravity.h"
#include "jz/StageTimer.h"

using jz::StageTimer; // the one clock (a null RunInfo records nothing)
using jzbench::accelerationError;
using jzbench::percentile;
using jzbench::potentialError;

int main(int argc, char** argv)
{
  const jzbench::GpuBenchOptions o = jzbench::parseGpuBenchOptions(argc, argv);
  const std::size_t n = std::size_t(o.number(0, 1e7));
  const std::string kind = o.word(1, "uniform");
  const int reps = int(o.number(2, 3));
  const double theta = o.number(3, 0.5);
  const double eps = o.number(4, 0.0);
  const std::size_t targets = std::size_t(o.number(5, 1000));

  const std::string device = jzbench::usableGpuName("gravity CUDA");
  if (device.empty())
    return 77;
  std::printf("gravity CUDA benchmark on %s: N=%zu %s theta %.2f eps %g, self query, float32%s\n",
    device.c_str(), n, kind.c_str(), theta, eps, o.pinned ? ", pinned host memory" : "");

  std::vector<float> xyz = jztest::makePoints<float>(kind, n);
  const std::vector<double> mass(n, 1.0 / double(n));
  std::vector<double> phi(n), acc(3 * n);
  if (o.pinned)
    jzbench::pinAll(xyz, phi, acc);
  const jz::GravityProblem<float> pr =
    jztest::gravityProblem(xyz.data(), n, mass.data(), theta, eps);
  const jz::GravityResults res{ phi.data(), acc.data() };

  const jzbench::BestGpuRun bestRun =
    jzbench::timeGpuRuns(reps, n, [&] { return jz::computeGravity(pr, res, jz::Backend::CUDA); });
  const double best = bestRun.seconds;
  std::printf("RESULT GPU gravity N=%zu %s theta %.2f%s best wall %.4f s", n, kind.c_str(), theta,
    o.pinned ? " pinned" : "", best);
  const int verdict = jzbench::finishResult(best, o.target);
  jzbench::printStages(bestRun);

  // Accuracy at a sample of particles against float64 direct sums.
  const std::vector<double> xyz64(xyz.begin(), xyz.end());
  const StageTimer tRef(nullptr, "");
  const jzbench::GravityTargets ref =
    jzbench::directAtTargets(xyz64, mass, targets, eps, omp_get_max_threads());
  const jzbench::TargetErrors e = jzbench::errorsAtTargets(ref, phi, acc);
  const double ea99 = percentile(e.acc, 0.99), ep99 = percentile(e.phi, 0.99);
  std::printf("ACCURACY %zu targets (direct sums %.1f s): acc median %.2e p99 %.2e, phi median "
              "%.2e p99 %.2e\n",
    ref.index.size(), tRef.seconds(), percentile(e.acc, 0.5), ea99, percentile(e.phi, 0.5), ep99);
  int rc = verdict;
  if (theta <= 0.5 && (ea99 > 1e-3 || ep99 > 1e-4))
  {
    std::printf("ACCURACY CONTRACT BROKEN (1e-3 acceleration, 1e-4 potential)\n");
    rc = 1;
  }

  if (o.verify)
  {
    std::vector<double> phiCpu(n), accCpu(3 * n);
    const StageTimer t0(nullptr, "");
    jz::computeGravity(pr, jz::GravityResults{ phiCpu.data(), accCpu.data() }, jz::Backend::CPU);
    std::vector<double> da(n), dp(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      da[i] = accelerationError(&acc[3 * i], &accCpu[3 * i]);
      dp[i] = potentialError(phi[i], phiCpu[i]);
    }
    std::printf("VERIFY CPU %.2f s: GPU vs CPU p99 acc %.2e phi %.2e, max acc %.2e phi %.2e\n",
      t0.seconds(), percentile(da, 0.99), percentile(dp, 0.99), percentile(da, 1.0),
      percentile(dp, 1.0));
  }
  return rc;
}
