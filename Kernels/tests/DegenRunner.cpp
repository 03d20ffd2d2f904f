// Runs one kNN or FoF problem from files, for the randomized differential
// test (degenerate_diff.py, against scipy) and the degenerate-input benchmark
// (Testing/Benchmarks/bench_degenerate.py). Uses the public kernel API only,
// so the same source builds against an older checkout for before/after runs.
//
// Usage: jz_degen_runner knn|density|fof float|double POINTS PARAM PERIODIC
//                        LO0 LO1 LO2 HI0 HI1 HI2 IDS|- OUT|- [cpu|cuda]
//   POINTS  raw interleaved xyz in the named precision
//   PARAM   K for knn/density, the linking length for fof (rel:B for the
//           relative linking length B (V/N)^(1/3) of the box's volume V)
//   IDS     raw int64 global ids, one per point, or - for input indices
//   OUT     knn: per point K int64 ids then K float64 distances, nearest first;
//           density: float64 smoothing length per point (the K-th distance);
//           fof: int64 group label (smallest global id) per point
// Exit status 77: cuda asked for and no usable GPU; 4: the call ran elsewhere.
// Prints "seconds S peak_bytes_per_point B": the time of the kernel call and
// the peak resident memory it added beyond the input (VmHWM, reset after the
// input was read; outputs included).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../bench/ProcMemory.h"
#include "../bench/RawFiles.h"
#include "jz/StageTimer.h"
#include "jz/Fof.h"
#include "jz/Knn.h"

namespace
{
using jzbench::readAll;
using jzbench::resetPeak;
using jzbench::statusKb;
using jzbench::writeAll;

struct Args
{
  std::string mode;
  double param = 0;
  bool relative = false;
  jz::KnnProblem<double> box; // periodic flag and box only
  const char* ids = nullptr;
  const char* out = nullptr;
  jz::Backend backend = jz::Backend::CPU;
};

template <class T>
int run(const char* pointsPath, const Args& a)
{
  std::vector<T> xyz;
  if (!readAll(pointsPath, xyz))
  {
    std::fprintf(stderr, "cannot read %s\n", pointsPath);
    return 2;
  }
  std::vector<jz::GlobalId> ids;
  if (a.ids && !readAll(a.ids, ids))
  {
    std::fprintf(stderr, "cannot read %s\n", a.ids);
    return 2;
  }
  const std::size_t n = xyz.size() / 3;
  resetPeak();
  const long rssBefore = statusKb("VmRSS:");
  const jz::StageTimer clock(nullptr, "kernel call");
  std::vector<jz::GlobalId> labels, nbIds;
  std::vector<T> nbDist, h;
  jz::RunInfo info;
  if (a.mode == "fof")
  {
    jz::FofProblem<T> p;
    p.points = xyz.data();
    p.numPoints = n;
    p.linkingLength = a.param;
    if (a.relative)
    {
      double volume = 1;
      for (int d = 0; d < 3; ++d)
        volume *= a.box.boxHi[d] - a.box.boxLo[d];
      p.linkingLength = jz::relativeLinkingLength(a.param, volume, n);
    }
    p.periodic = a.box.periodic;
    for (int d = 0; d < 3; ++d)
    {
      p.boxLo[d] = a.box.boxLo[d];
      p.boxHi[d] = a.box.boxHi[d];
    }
    p.ids = ids.empty() ? nullptr : ids.data();
    jz::FofGroups g;
    g.wantRoot = false;
    info = jz::computeFofGroups(p, g, a.backend);
    labels.swap(g.groupLabel);
  }
  else
  {
    jz::KnnProblem<T> p;
    p.sources = xyz.data();
    p.numSources = n;
    p.k = int(a.param);
    p.periodic = a.box.periodic;
    for (int d = 0; d < 3; ++d)
    {
      p.boxLo[d] = a.box.boxLo[d];
      p.boxHi[d] = a.box.boxHi[d];
    }
    p.sourceIds = ids.empty() ? nullptr : ids.data();
    jz::KnnResults<T> r;
    if (a.mode == "knn")
    {
      nbIds.resize(n * p.k);
      nbDist.resize(n * p.k);
      r.neighborIds = nbIds.data();
      r.neighborDistances = nbDist.data();
    }
    else
    {
      h.resize(n);
      r.smoothingLength = h.data();
    }
    info = jz::computeKnn(p, r, a.backend);
  }
  const double seconds = clock.seconds();
  if (info.backend != a.backend)
  {
    std::fprintf(stderr, "ran on %s, not the backend asked for (%s)\n",
      jz::backendName(info.backend), info.note.c_str());
    return 4;
  }
  const long hwm = statusKb("VmHWM:");
  std::printf("seconds %.6f peak_bytes_per_point %.1f\n", seconds,
    n ? double(hwm - rssBefore) * 1024.0 / double(n) : 0.0);
  if (a.mode == "fof")
    writeAll(a.out, labels);
  else if (a.mode == "density")
  {
    std::vector<double> hd(h.begin(), h.end());
    writeAll(a.out, hd);
  }
  else
  {
    // Per point: K ids, then K distances in float64.
    const int k = int(a.param);
    std::vector<char> buf(n * k * 16);
    for (std::size_t i = 0; i < n; ++i)
    {
      char* row = buf.data() + i * k * 16;
      std::memcpy(row, nbIds.data() + i * k, k * 8);
      for (int j = 0; j < k; ++j)
      {
        const double d = double(nbDist[i * k + j]);
        std::memcpy(row + k * 8 + j * 8, &d, 8);
      }
    }
    writeAll(a.out, buf);
  }
  return 0;
}
} // namespace

int main(int argc, char** argv)
{
  if (argc < 14)
  {
    std::fprintf(stderr,
      "usage: %s knn|density|fof float|double POINTS PARAM PERIODIC LO0 LO1 LO2 HI0 HI1 HI2 "
      "IDS|- OUT|- [cpu|cuda]\n",
      argv[0]);
    return 2;
  }
  Args a;
  a.mode = argv[1];
  a.relative = std::strncmp(argv[4], "rel:", 4) == 0;
  a.param = std::atof(argv[4] + (a.relative ? 4 : 0));
  a.box.periodic = std::atoi(argv[5]) != 0;
  for (int d = 0; d < 3; ++d)
  {
    a.box.boxLo[d] = std::atof(argv[6 + d]);
    a.box.boxHi[d] = std::atof(argv[9 + d]);
  }
  a.ids = std::strcmp(argv[12], "-") == 0 ? nullptr : argv[12];
  a.out = argv[13];
  if (argc > 14 && std::strcmp(argv[14], "cuda") == 0)
  {
    a.backend = jz::Backend::CUDA;
    std::string why;
    if (!jz::cudaUsable(&why))
    {
      std::fprintf(stderr, "no usable GPU: %s\n", why.c_str());
      return 77; // skipped
    }
  }
  try
  {
    return std::strcmp(argv[2], "float") == 0 ? run<float>(argv[3], a) : run<double>(argv[3], a);
  }
  catch (const std::exception& e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}
