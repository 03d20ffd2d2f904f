// kNN benchmark: jz-tree CPU (and CUDA when present) against nanoflann, side
// by side on the same points and threads. Prints times and ratios.
//   jz_bench_knn [N=1000000] [K=16] [kind=uniform|clustered|FILE.f32] [threads=0]
//                [memory|jzonly|nanoflannonly]
// A kind ending in .f32 reads N raw float32 xyz triplets from that file (the
// peers' input, e.g. ../shared/anchors/halos.py); jzonly skips nanoflann
// (Testing/Benchmarks/bench_scaling.py runs the peers as their own programs);
// nanoflannonly runs nanoflann alone (its CPU time then is its own: the peer
// on points the anchor program cannot read, e.g. halos).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <omp.h>

#include "../tests/PointSets.h"
#include "../tests/Problems.h"
#include "jz/Knn.h"
#include "jz/StageTimer.h"

#if defined(JZ_HAVE_NANOFLANN)
#include <nanoflann.hpp>
#endif

namespace
{
#if defined(JZ_HAVE_NANOFLANN)
struct Cloud
{
  const std::vector<float>* xyz;
  size_t kdtree_get_point_count() const { return xyz->size() / 3; }
  float kdtree_get_pt(size_t i, size_t d) const { return (*xyz)[3 * i + d]; }
  template <class B>
  bool kdtree_get_bbox(B&) const
  {
    return false;
  }
};

double runNanoflann(const std::vector<float>& xyz, int k)
{
  using Tree =
    nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, Cloud>, Cloud, 3>;
  const jz::StageTimer t0(nullptr, "");
  Cloud cloud{ &xyz };
  Tree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
  const long long n = (long long)(xyz.size() / 3);
  std::vector<float> h(n);
#pragma omp parallel
  {
    std::vector<uint32_t> idx(k);
    std::vector<float> d2(k);
#pragma omp for schedule(dynamic, 1024)
    for (long long i = 0; i < n; ++i)
    {
      tree.knnSearch(&xyz[3 * i], k, idx.data(), d2.data());
      h[i] = d2[k - 1];
    }
  }
  return t0.seconds();
}
#endif
} // namespace

// Resident memory of this process from /proc (kB): current and peak.
long procStatusKb(const char* field)
{
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long value = -1;
  const std::size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, len) == 0)
      value = std::atol(line + len + 1);
  std::fclose(f);
  return value;
}

// Points of a named kind, or N raw float32 triplets from a .f32 file.
std::vector<float> readOrMakePoints(const std::string& kind, std::size_t n)
{
  const std::string ext = ".f32";
  if (kind.size() <= ext.size() || kind.compare(kind.size() - ext.size(), ext.size(), ext) != 0)
    return jztest::makePoints<float>(kind, n);
  std::vector<float> xyz(3 * n);
  std::FILE* f = std::fopen(kind.c_str(), "rb");
  const std::size_t got = f ? std::fread(xyz.data(), sizeof(float), xyz.size(), f) : 0;
  if (f)
    std::fclose(f);
  xyz.resize(got);
  return xyz;
}

int main(int argc, char** argv)
{
  const std::size_t n = argc > 1 ? std::size_t(std::atof(argv[1])) : 1000000;
  const int k = argc > 2 ? std::atoi(argv[2]) : 16;
  const std::string kind = argc > 3 ? argv[3] : "uniform";
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  if (threads > 0)
    omp_set_num_threads(threads);
  std::printf(
    "kNN benchmark: N=%zu K=%d %s, %d threads\n", n, k, kind.c_str(), omp_get_max_threads());
  const std::vector<float> xyz = readOrMakePoints(kind, n);
  if (xyz.size() != 3 * n)
  {
    std::printf("could not read %zu points from %s\n", n, kind.c_str());
    return 1;
  }

  jz::KnnProblem<float> pr = jztest::knnProblem(xyz.data(), n, k);
  std::vector<float> h(n), rho(n);
  jz::KnnResults<float> res;
  res.smoothingLength = h.data();
  res.density = rho.data();
  if (argc > 5 && std::string(argv[5]) == "memory")
  {
    // Peak memory of one density-only run beyond the input points (the two
    // output arrays, 8 bytes per point, are counted as part of it).
    std::fill(h.begin(), h.end(), 1.0f);
    std::fill(rho.begin(), rho.end(), 1.0f);
    const long before = procStatusKb("VmRSS:") - long(8 * n / 1024);
    const jz::StageTimer t0(nullptr, "");
    jz::computeKnn(pr, res, jz::Backend::CPU);
    const long peak = procStatusKb("VmHWM:");
    std::printf("RESULT memory N=%zu K=%d %s: %.1f bytes/point beyond the input (%.2f s)\n", n, k,
      kind.c_str(), double(peak - before) * 1024.0 / double(n), t0.seconds());
    return 0;
  }
  const bool jzOnly = argc > 5 && std::string(argv[5]) == "jzonly";
#if defined(JZ_HAVE_NANOFLANN)
  if (argc > 5 && std::string(argv[5]) == "nanoflannonly")
  {
    std::printf("RESULT N=%zu K=%d %s nanoflann=%.4f\n", n, k, kind.c_str(), runNanoflann(xyz, k));
    return 0;
  }
#endif
  // jzonly runs once by default, like the peers' programs (cold memory);
  // a sixth argument asks for more runs in the same process (warm).
  const int runs = jzOnly ? (argc > 6 ? std::max(1, std::atoi(argv[6])) : 1) : 3;
  double best = 1e30;
  for (int rep = 0; rep < runs; ++rep)
  {
    const jz::StageTimer t0(nullptr, "");
    const std::clock_t c0 = std::clock();
    jz::RunInfo info = jz::computeKnn(pr, res, jz::Backend::CPU);
    const double t = t0.seconds();
    const double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC; // all threads
    best = std::min(best, t);
    std::printf("  jz-tree CPU density: %.3f s, CPU %.3f s (", t, cpu);
    for (auto& s : info.stageSeconds)
      std::printf(" %s %.3f", s.first.c_str(), s.second);
    std::printf(" )\n");
    if (rep == 0)
      for (auto& c : info.counters)
        std::printf("    %s: %.0f\n", c.first.c_str(), c.second);
  }
  if (jzOnly)
  {
    std::printf("RESULT N=%zu K=%d %s jz_cpu=%.4f\n", n, k, kind.c_str(), best);
    return 0;
  }
  if (jz::cudaUsable())
  {
    for (int rep = 0; rep < 3; ++rep)
    {
      const jz::StageTimer t0(nullptr, "");
      jz::RunInfo info = jz::computeKnn(pr, res, jz::Backend::CUDA);
      std::printf("  jz-tree CUDA density: %.4f s (", t0.seconds());
      for (auto& s : info.stageSeconds)
        std::printf(" %s %.4f", s.first.c_str(), s.second);
      std::printf(" )\n");
    }
  }
#if defined(JZ_HAVE_NANOFLANN)
  const double nf = runNanoflann(xyz, k);
  std::printf("  nanoflann build+query: %.3f s\n", nf);
  std::printf("RESULT N=%zu K=%d %s jz_cpu=%.3f nanoflann=%.3f speedup=%.2fx\n", n, k, kind.c_str(),
    best, nf, nf / best);
#else
  std::printf("RESULT N=%zu K=%d %s jz_cpu=%.3f (nanoflann not found)\n", n, k, kind.c_str(), best);
#endif
  return 0;
}
