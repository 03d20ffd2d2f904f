// The CUDA friends-of-friends backend against the CPU backend: groupLabel
// (the smallest global id or input index of the group) must be identical for
// every point, and groupRoot must name one member of the point's group, the
// same for the whole group. Without a usable GPU the test prints why and exits
// with kSkipCode, which CTest reports as skipped (SKIP_RETURN_CODE).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "PointSets.h"
#include "TestHarness.h"
#include "jz/Fof.h"

namespace
{
constexpr int kSkipCode = 77;

struct Options
{
  std::string kind = "uniform";
  std::size_t n = 20000;
  double b = 0.2;      // relative linking length (mean separations)
  double absolute = 0; // > 0: the linking length itself
  bool periodic = false;
  bool latticeBox = false; // periodic box [lo, lo + side) around the integer lattice
  double latticeLo = 0;
  bool ids = false;
  unsigned seed = 17;
};

// Volume the kind's points fill, for the mean separation.
double volumeOf(const std::string& kind, std::size_t n)
{
  if (kind == "offset")
    return 1000.0;
  if (kind == "mixedsign")
    return 8.0;
  if (kind == "lattice")
    return double(n);
  return 1.0;
}

std::string describe(const Options& o, const char* type, double l)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", l);
  return std::string(type) + " " + o.kind + " n=" + std::to_string(o.n) + " l=" + buf +
    (o.periodic ? (o.latticeBox ? " periodic-lattice-box" : " periodic") : "") +
    (o.ids ? " ids" : "");
}

template <class T>
void compare(const Options& o)
{
  const char* type = sizeof(T) == 4 ? "float" : "double";
  std::vector<T> pts = jztest::makePoints<T>(o.kind, o.n, o.seed);
  jz::FofProblem<T> problem;
  problem.points = pts.data();
  problem.numPoints = o.n;
  problem.linkingLength = o.absolute > 0
    ? o.absolute
    : o.b * std::cbrt(volumeOf(o.kind, o.n) / double(std::max<std::size_t>(o.n, 1)));
  if (o.periodic)
  {
    problem.periodic = true;
    if (o.latticeBox)
    {
      const double side = std::ceil(std::cbrt(double(o.n)));
      for (int d = 0; d < 3; ++d)
      {
        problem.boxLo[d] = o.latticeLo;
        problem.boxHi[d] = o.latticeLo + side;
      }
    }
    else
    {
      // A box not at the origin; some points fall outside and are wrapped.
      for (int d = 0; d < 3; ++d)
      {
        problem.boxLo[d] = 0.1;
        problem.boxHi[d] = 0.9 + 0.05 * d;
      }
    }
  }
  std::vector<jz::GlobalId> ids;
  if (o.ids)
  {
    ids.resize(o.n);
    // Unique ids in reverse input order, so the smallest id is not the smallest index.
    for (std::size_t i = 0; i < o.n; ++i)
      ids[i] = jz::GlobalId((o.n - 1 - i) * 3 + 5);
    problem.ids = ids.data();
  }
  const std::string what = describe(o, type, problem.linkingLength);

  jz::FofGroups cpu, gpu;
  jz::computeFofGroups(problem, cpu, jz::Backend::CPU);
  jz::RunInfo info;
  try
  {
    info = jz::computeFofGroups(problem, gpu, jz::Backend::CUDA);
  }
  catch (const std::exception& e)
  {
    JZ_CHECK_MSG(false, what << ": CUDA run threw: " << e.what());
    return;
  }
  JZ_CHECK_MSG(
    info.backend == jz::Backend::CUDA, what << ": ran on " << jz::backendName(info.backend));
  JZ_CHECK_MSG(gpu.groupLabel.size() == o.n && gpu.groupRoot.size() == o.n,
    what << ": output sizes " << gpu.groupLabel.size() << ", " << gpu.groupRoot.size());
  if (gpu.groupLabel.size() != o.n || gpu.groupRoot.size() != o.n)
    return;
  std::size_t diffs = 0, first = 0;
  for (std::size_t i = 0; i < o.n; ++i)
  {
    if (cpu.groupLabel[i] != gpu.groupLabel[i])
    {
      if (diffs++ == 0)
        first = i;
    }
  }
  JZ_CHECK_MSG(diffs == 0,
    what << ": " << diffs << " labels differ, first at point " << first << ": cpu "
         << cpu.groupLabel[first] << " gpu " << gpu.groupLabel[first]);
  // groupRoot: a member of the group, one per group.
  std::unordered_map<jz::GlobalId, jz::Index> rootOfLabel;
  std::size_t badRoots = 0;
  for (std::size_t i = 0; i < o.n; ++i)
  {
    const jz::Index r = gpu.groupRoot[i];
    bool ok = r < o.n && gpu.groupLabel[r] == gpu.groupLabel[i];
    auto it = rootOfLabel.emplace(gpu.groupLabel[i], r).first;
    ok = ok && it->second == r;
    if (!ok)
      ++badRoots;
  }
  JZ_CHECK_MSG(badRoots == 0, what << ": " << badRoots << " points with an inconsistent groupRoot");
  bool hasLeaf = false;
  for (const auto& s : info.stageSeconds)
    hasLeaf = hasLeaf || s.first == "gpu fof leaf walk";
  JZ_CHECK_MSG(hasLeaf, what << ": no GPU stage times");
}

template <class T>
void linkingLengths(Options o)
{
  for (double b : { 0.05, 0.2, 0.75 })
  {
    o.b = b;
    compare<T>(o);
  }
}
} // namespace

JZ_TEST(small_sizes)
{
  Options o;
  for (std::size_t n : { 1, 2, 3, 10, 47, 48, 49, 100, 500, 2000 })
  {
    o.n = n;
    for (double b : { 0.2, 0.75, 3.0 })
    {
      o.b = b;
      o.periodic = false;
      compare<float>(o);
      compare<double>(o);
      o.periodic = true;
      compare<float>(o);
      compare<double>(o);
    }
  }
  // Everything one group; duplicates only.
  o.periodic = false;
  o.n = 300;
  o.absolute = 10.0;
  compare<float>(o);
  o.kind = "duplicates";
  o.absolute = 1e-30;
  compare<double>(o);
}

JZ_TEST(all_kinds_float)
{
  for (const std::string& kind : jztest::allKinds())
  {
    Options o;
    o.kind = kind;
    linkingLengths<float>(o);
  }
}

JZ_TEST(all_kinds_double)
{
  for (const std::string& kind : jztest::allKinds())
  {
    Options o;
    o.kind = kind;
    o.ids = true;
    linkingLengths<double>(o);
  }
}

JZ_TEST(periodic_box_off_origin)
{
  for (const char* kind : { "uniform", "clustered", "duplicates", "mixedsign", "planar" })
  {
    Options o;
    o.kind = kind;
    o.periodic = true;
    linkingLengths<float>(o);
    o.ids = true;
    linkingLengths<double>(o);
  }
}

JZ_TEST(lattice_at_exactly_l)
{
  // Integer lattice: neighbours at exactly 1, diagonals at sqrt(2), sqrt(3).
  Options o;
  o.kind = "lattice";
  o.n = 27000; // 30^3
  for (double l : { 1.0, std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0), std::sqrt(2.0),
         std::nextafter(std::sqrt(2.0), 0.0), 0.5 })
  {
    o.absolute = l;
    o.periodic = false;
    compare<float>(o);
    compare<double>(o);
    // Periodic lattices: links across the boundary at exactly l, boxes at
    // the origin and off it.
    o.periodic = true;
    o.latticeBox = true;
    for (double lo : { 0.0, -0.5, 3.0 })
    {
      o.latticeLo = lo;
      compare<float>(o);
      compare<double>(o);
    }
    o.latticeBox = false;
  }
  // An incomplete lattice (n not a cube).
  o.n = 5000;
  o.absolute = 1.0;
  o.periodic = false;
  compare<double>(o);
}

JZ_TEST(outputs_wanted)
{
  std::vector<float> pts = jztest::makePoints<float>("clustered", 5000, 5);
  jz::FofProblem<float> problem;
  problem.points = pts.data();
  problem.numPoints = 5000;
  problem.linkingLength = 0.2 * std::cbrt(1.0 / 5000);
  jz::FofGroups cpu, labelsOnly, rootsOnly;
  jz::computeFofGroups(problem, cpu, jz::Backend::CPU);
  labelsOnly.wantRoot = false;
  rootsOnly.wantLabel = false;
  jz::computeFofGroups(problem, labelsOnly, jz::Backend::CUDA);
  jz::computeFofGroups(problem, rootsOnly, jz::Backend::CUDA);
  JZ_CHECK(labelsOnly.groupRoot.empty());
  JZ_CHECK(labelsOnly.groupLabel == cpu.groupLabel);
  JZ_CHECK(rootsOnly.groupLabel.empty());
  JZ_CHECK_EQ(rootsOnly.groupRoot.size(), std::size_t(5000));
}

JZ_TEST(empty_input)
{
  jz::FofProblem<double> problem;
  problem.linkingLength = 0.1;
  jz::FofGroups out;
  jz::RunInfo info = jz::computeFofGroups(problem, out, jz::Backend::CUDA);
  JZ_CHECK(info.backend == jz::Backend::CUDA);
  JZ_CHECK(out.groupLabel.empty() && out.groupRoot.empty());
}

JZ_TEST(large)
{
  Options o;
  o.n = 1000000;
  for (const char* kind : { "uniform", "clustered" })
  {
    o.kind = kind;
    o.b = 0.2;
    compare<float>(o);
    o.b = 0.75;
    compare<float>(o);
  }
  o.kind = "clustered";
  o.b = 0.2;
  o.periodic = true;
  o.ids = true;
  compare<double>(o);
}

JZ_TEST(auto_picks_cuda)
{
  std::vector<float> pts = jztest::makePoints<float>("uniform", 5000, 3);
  jz::FofProblem<float> problem;
  problem.points = pts.data();
  problem.numPoints = 5000;
  problem.linkingLength = 0.2 * std::cbrt(1.0 / 5000);
  jz::FofGroups out;
  jz::RunInfo info = jz::computeFofGroups(problem, out, jz::Backend::Auto);
  JZ_CHECK_MSG(info.backend == jz::Backend::CUDA,
    "Auto ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  bool hasLeaf = false;
  for (const auto& s : info.stageSeconds)
    hasLeaf = hasLeaf || s.first == "gpu fof leaf walk";
  JZ_CHECK(hasLeaf);
}

JZ_TEST(bad_input_throws)
{
  std::vector<double> pts = jztest::makePoints<double>("uniform", 100, 3);
  jz::FofProblem<double> problem;
  problem.points = pts.data();
  problem.numPoints = 100;
  problem.linkingLength = 0.1;
  pts[3 * 42 + 1] = std::nan("");
  jz::FofGroups out;
  JZ_CHECK_THROWS(jz::computeFofGroups(problem, out, jz::Backend::CUDA));
  pts[3 * 42 + 1] = 0.5;
  problem.linkingLength = 0;
  JZ_CHECK_THROWS(jz::computeFofGroups(problem, out, jz::Backend::CUDA));
}

int main(int argc, char** argv)
{
  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("SKIPPED: %s\n", why.c_str());
    return kSkipCode;
  }
  return jztest::runAll(argc, argv);
}
