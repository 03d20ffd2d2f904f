// HDBSCAN* of a raw float64 xyz file, for the validation script against the
// hdbscan library (Testing/Benchmarks/bench_hdbscan.py).
//
// Usage: jz_hdbscan POINTS.f64 OUT.bin MIN_CLUSTER_SIZE MIN_SAMPLES eom|leaf ALLOW_SINGLE(0|1)
// OUT.bin: per point int64 ClusterId, then float64 Probability, then
// float64 OutlierScore. Prints the time and the peak memory beyond the input
// (VmHWM after minus VmRSS before, in bytes per point).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ProcMemory.h"
#include "jz/StageTimer.h"
#include "jz/Hdbscan.h"

int main(int argc, char** argv)
{
  if (argc != 7)
  {
    std::fprintf(stderr, "usage: jz_hdbscan POINTS.f64 OUT.bin MCS MS eom|leaf ALLOW_SINGLE\n");
    return 1;
  }
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f)
    return 1;
  std::vector<double> xyz;
  double buf[3];
  while (std::fread(buf, sizeof(double), 3, f) == 3)
    xyz.insert(xyz.end(), buf, buf + 3);
  std::fclose(f);
  jz::EmstProblem<double> pr;
  pr.points = xyz.data();
  pr.numPoints = xyz.size() / 3;
  jz::HdbscanOptions opt;
  opt.minClusterSize = std::atoi(argv[3]);
  opt.minSamples = std::atoi(argv[4]);
  opt.selection = std::string(argv[5]) == "leaf" ? jz::ClusterSelection::Leaf
                                                 : jz::ClusterSelection::ExcessOfMass;
  opt.allowSingleCluster = std::atoi(argv[6]) != 0;
  jz::HdbscanResult res;
  jzbench::resetPeak();
  const long before = jzbench::statusKb("VmRSS:");
  const jz::StageTimer clock(nullptr, "hdbscan");
  jz::computeHdbscan(pr, opt, res, jz::Backend::CPU);
  const double t = clock.seconds();
  const double peak = 1024.0 * double(jzbench::statusKb("VmHWM:") - before) / double(pr.numPoints);
  std::FILE* o = std::fopen(argv[2], "wb");
  std::fwrite(res.clusterId.data(), sizeof(jz::GlobalId), res.clusterId.size(), o);
  std::fwrite(res.probability.data(), sizeof(double), res.probability.size(), o);
  std::fwrite(res.outlierScore.data(), sizeof(double), res.outlierScore.size(), o);
  std::fclose(o);
  if (std::getenv("JZ_HDBSCAN_TREE"))
  {
    // The mutual-reachability tree too: from, to (int64), weight2 (float64).
    pr.metric = jz::EmstMetric::MutualReachability;
    pr.minSamples = jz::hdbscanMinSamples(opt, pr.numPoints);
    jz::EmstEdges edges;
    jz::computeEmst(pr, edges, jz::Backend::CPU);
    std::FILE* t = std::fopen(std::getenv("JZ_HDBSCAN_TREE"), "wb");
    for (std::size_t e = 0; e < edges.size(); ++e)
    {
      const double row[3] = { double(edges.from[e]), double(edges.to[e]), edges.weight2[e] };
      std::fwrite(row, sizeof(double), 3, t);
    }
    std::fclose(t);
  }
  std::printf("jz_hdbscan N=%zu clusters=%zu time=%.3fs peak_beyond_input=%.1f B/point\n",
    pr.numPoints, res.numClusters, t, peak);
  return 0;
}
