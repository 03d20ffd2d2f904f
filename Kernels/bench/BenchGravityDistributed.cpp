// Communication volume and accuracy of distributed tree gravity on simulated
// ranks (threads): bytes received per local point (decomposition, LET,
// results home; mean and max over ranks) beside what gathering every
// rank's sources would receive, and the 99th-percentile errors at 200
// targets against float64 direct summation. Volume does not depend on
// timing, so threads stand in for MPI ranks here.
//   jz_bench_gravity_volume [points=1e6] [kind=uniform|clustered] [ranks=2,4,8]
//                           [pieces=slabs,interleaved] [theta=0.5] [eps=1e-3]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "../tests/PointSets.h"
#include "../tests/ThreadCommunicator.h"
#include "../tests/Problems.h"
#include "GravityTargets.h"
#include "jz/Gravity.h"

namespace
{
std::vector<std::string> split(const std::string& s)
{
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');)
    out.push_back(t);
  return out;
}
} // namespace

int main(int argc, char** argv)
{
  const std::size_t n = argc > 1 ? std::size_t(std::atof(argv[1])) : 1000000;
  const std::string kind = argc > 2 ? argv[2] : "uniform";
  const std::vector<std::string> rankList = split(argc > 3 ? argv[3] : "2,4,8");
  const std::vector<std::string> pieceList = split(argc > 4 ? argv[4] : "slabs,interleaved");
  const double theta = argc > 5 ? std::atof(argv[5]) : 0.5;
  const double eps = argc > 6 ? std::atof(argv[6]) : 1e-3;
  const std::vector<double> xyz = jztest::makePoints<double>(kind, n, 5);
  const std::vector<double> mass(n, 1.0 / double(n));

  // Direct summation at 1000 targets.
  const jzbench::GravityTargets ref = jzbench::directAtTargets(xyz, mass, 1000, eps, 2);

  // Slabs: cut at quantiles of x (a reader's spatial pieces).
  std::vector<std::size_t> byX(n);
  std::iota(byX.begin(), byX.end(), 0);
  std::sort(
    byX.begin(), byX.end(), [&](std::size_t a, std::size_t b) { return xyz[3 * a] < xyz[3 * b]; });

  for (const std::string& pieces : pieceList)
    for (const std::string& rs : rankList)
    {
      const int ranks = std::atoi(rs.c_str());
      std::vector<double> phi(n), acc(3 * n);
      std::vector<jz::RunInfo> infos(ranks);
      std::vector<std::size_t> localCount(ranks);
      jztest::ThreadWorld world(ranks);
      world.run(
        [&](jz::Communicator& comm)
        {
          const int r = comm.rank();
          std::vector<std::size_t> mine;
          if (pieces == "slabs")
            for (std::size_t i = n * r / ranks; i < n * (r + 1) / ranks; ++i)
              mine.push_back(byX[i]);
          else
            for (std::size_t i = r; i < n; i += ranks)
              mine.push_back(i);
          std::vector<double> x, m;
          for (std::size_t i : mine)
          {
            x.insert(x.end(), &xyz[3 * i], &xyz[3 * i] + 3);
            m.push_back(mass[i]);
          }
          std::vector<double> p(mine.size()), a(3 * mine.size());
          const jz::GravityProblem<double> gp =
            jztest::gravityProblem(x.data(), mine.size(), m.data(), theta, eps);
          jz::RunControl one;
          one.numThreads = 1;
          infos[r] = jz::computeGravityDistributed(
            comm, gp, jz::GravityResults{ p.data(), a.data() }, jz::Backend::CPU, one);
          localCount[r] = mine.size();
          for (std::size_t j = 0; j < mine.size(); ++j)
          {
            phi[mine[j]] = p[j];
            for (int k = 0; k < 3; ++k)
              acc[3 * mine[j] + k] = a[3 * j + k];
          }
        });
      const jzbench::TargetErrors e = jzbench::errorsAtTargets(ref, phi, acc);
      const char* names[] = { "received bytes per local point",
        "decomposition bytes per local point", "LET bytes per local point",
        "results bytes per local point" };
      double mean[4] = { 0, 0, 0, 0 }, most[4] = { 0, 0, 0, 0 };
      double gather = 0;
      for (int r = 0; r < ranks; ++r)
      {
        for (int c = 0; c < 4; ++c)
        {
          const double v = infos[r].counter(names[c]);
          mean[c] += v / ranks;
          most[c] = std::max(most[c], v);
        }
        // What the all-gather of main before the LET received: every other
        // rank's coordinates and masses (3 doubles + 1 double a source).
        gather += double(n - localCount[r]) * 32.0 / double(localCount[r]) / ranks;
      }
      std::printf("RESULT gravity %s n=%zu pieces=%s ranks=%d theta=%g: received %.1f B/pt "
                  "(max %.1f; decomposition %.1f, LET %.1f (max %.1f), results %.1f); "
                  "gather-all %.1f B/pt; p99 acc %.2e phi %.2e\n",
        kind.c_str(), n, pieces.c_str(), ranks, theta, mean[0], most[0], mean[1], mean[2], most[2],
        mean[3], gather, jzbench::percentile(e.acc, 0.99), jzbench::percentile(e.phi, 0.99));
      std::fflush(stdout);
    }
  return 0;
}
