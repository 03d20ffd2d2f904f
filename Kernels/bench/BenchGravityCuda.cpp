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

#include "jz/StageTimer.h"
#include "../tests/PointSets.h"
#include "GpuBenchOptions.h"
#include "GravityTargets.h"
#include "jz/Gravity.h"

namespace
{
using jz::StageTimer; // the one clock (a null RunInfo records nothing)

double percentile(std::vector<double> v, double q)
{
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::size_t(q * double(v.size() - 1))];
}

// Relative error of an acceleration (3 values) and of a potential.
double accError(const double* got, const double* ref)
{
  double d2 = 0, n2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    d2 += (got[k] - ref[k]) * (got[k] - ref[k]);
    n2 += ref[k] * ref[k];
  }
  return n2 > 0 ? std::sqrt(d2 / n2) : std::sqrt(d2);
}

double phiError(double got, double ref)
{
  return ref != 0 ? std::abs(got - ref) / std::abs(ref) : std::abs(got);
}
} // namespace

int main(int argc, char** argv)
{
  const jzbench::GpuBenchOptions o = jzbench::parseGpuBenchOptions(argc, argv);
  const std::size_t n = std::size_t(o.number(0, 1e7));
  const std::string kind = o.word(1, "uniform");
  const int reps = int(o.number(2, 3));
  const double theta = o.number(3, 0.5);
  const double eps = o.number(4, 0.0);
  const std::size_t targets = std::size_t(o.number(5, 1000));

  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("no GPU: %s (gravity CUDA benchmark not run)\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  std::printf("gravity CUDA benchmark on %s: N=%zu %s theta %.2f eps %g, self query, float32%s\n",
    prop.name, n, kind.c_str(), theta, eps, o.pinned ? ", pinned host memory" : "");

  std::vector<float> xyz = jztest::makePoints<float>(kind, n);
  const std::vector<double> mass(n, 1.0 / double(n));
  std::vector<double> phi(n), acc(3 * n);
  if (o.pinned)
  {
    jzbench::pin(xyz);
    jzbench::pin(phi);
    jzbench::pin(acc);
  }
  jz::GravityProblem<float> pr;
  pr.sources = xyz.data();
  pr.numSources = n;
  pr.sourceMasses = mass.data();
  pr.openingAngle = theta;
  pr.softening = eps;
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
  std::vector<double> ea, ep;
  for (std::size_t i = 0; i < ref.index.size(); ++i)
  {
    const std::size_t t = ref.index[i];
    ea.push_back(accError(&acc[3 * t], &ref.acc[3 * i]));
    ep.push_back(phiError(phi[t], ref.phi[i]));
  }
  const double ea99 = percentile(ea, 0.99), ep99 = percentile(ep, 0.99);
  std::printf("ACCURACY %zu targets (direct sums %.1f s): acc median %.2e p99 %.2e, phi median "
              "%.2e p99 %.2e\n",
    ref.index.size(), tRef.seconds(), percentile(ea, 0.5), ea99, percentile(ep, 0.5), ep99);
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
      da[i] = accError(&acc[3 * i], &accCpu[3 * i]);
      dp[i] = phiError(phi[i], phiCpu[i]);
    }
    std::printf("VERIFY CPU %.2f s: GPU vs CPU p99 acc %.2e phi %.2e, max acc %.2e phi %.2e\n",
      t0.seconds(), percentile(da, 0.99), percentile(dp, 0.99), percentile(da, 1.0),
      percentile(dp, 1.0));
  }
  return rc;
}
