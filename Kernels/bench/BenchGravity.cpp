// Tree gravity timings and accuracy:
//   jz_bench_gravity POINTS.f64 THETA[,THETA...] [EPS] [THREADS] [TARGETS]
// POINTS.f64: raw float64 xyz (the Python side writes it, so peers run on the
// same points); masses 1/N. Per theta: the best of three wall times of
// computeGravity (tree build included) and of its CPU time (all threads), the stage times, and the
// median and 99th-percentile relative errors of acceleration and potential at TARGETS (200)
// targets against direct summation (the 99th percentile of 200 is the third largest error: a
// few thousand targets give a steadier figure). Testing/Benchmarks/bench_gravity.py runs it beside pytreegrav.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../tests/Problems.h"
#include "GravityTargets.h"
#include "jz/Gravity.h"
#include "jz/StageTimer.h"

int main(int argc, char** argv)
{
  if (argc < 3)
  {
    std::fprintf(stderr, "usage: %s POINTS.f64 THETA[,THETA...] [EPS] [THREADS] [TARGETS]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
  std::vector<double> pts(std::size_t(in.tellg()) / 8);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(pts.data()), std::streamsize(pts.size() * 8));
  const std::size_t n = pts.size() / 3;
  const double eps = argc > 3 ? std::atof(argv[3]) : 1e-3;
  jz::RunControl control;
  control.numThreads = argc > 4 ? std::atoi(argv[4]) : 2;
  std::vector<double> mass(n, 1.0 / double(n));

  // Direct summation at the targets.
  const std::size_t numTargets = argc > 5 ? std::size_t(std::atol(argv[5])) : 200;
  const jzbench::GravityTargets ref =
    jzbench::directAtTargets(pts, mass, numTargets, eps, control.numThreads);

  std::stringstream thetas(argv[2]);
  std::string item;
  while (std::getline(thetas, item, ','))
  {
    const jz::GravityProblem<double> p =
      jztest::gravityProblem(pts.data(), n, mass.data(), std::atof(item.c_str()), eps);
    std::vector<double> phi(n), acc(3 * n);
    double best = 1e30, bestCpu = 1e30;
    jz::RunInfo info;
    for (int rep = 0; rep < 3; ++rep)
    {
      const jz::StageTimer clock(nullptr, "gravity");
      const std::clock_t cpu0 = std::clock(); // the process's CPU time, all threads
      info = jz::computeGravity(
        p, jz::GravityResults{ phi.data(), acc.data() }, jz::Backend::CPU, control);
      bestCpu = std::min(bestCpu, double(std::clock() - cpu0) / CLOCKS_PER_SEC);
      best = std::min(best, clock.seconds());
    }
    const jzbench::TargetErrors e = jzbench::errorsAtTargets(ref, phi, acc);
    using jzbench::percentile;
    std::printf(
      "jz theta=%s time=%.4f cpu=%.4f accel_med=%.3e accel_p99=%.3e phi_med=%.3e phi_p99=%.3e",
      item.c_str(), best, bestCpu, percentile(e.acc, 0.5), percentile(e.acc, 0.99),
      percentile(e.phi, 0.5), percentile(e.phi, 0.99));
    for (const auto& s : info.stageSeconds)
      std::printf(" %s=%.3f", s.first.c_str(), s.second);
    for (const auto& c : info.counters)
      if (c.first.find("per query") != std::string::npos)
        std::printf(" [%s %.0f]", c.first.c_str(), c.second);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
