// Friends-of-friends: the tree walk against a brute-force O(N^2) union-find
// (a cell-list union-find for large N), the deterministic labels and the
// catalogue against direct computation. The same cases run on the GPU
// (TestFof --backend=cuda, CTest's kernels.TestFofCuda), where every run must
// also give the CPU's labels exactly.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "PointSets.h"
#include "PreparedReferences.h"
#include "Problems.h"
#include "TestHarness.h"
#include "fof/FofGroupSums.h"
#include "jz/Fof.h"
#include "jz/FofLinking.h"

namespace
{
using jz::GlobalId;
using jz::Index;

// Brute-force reference partition: label = smallest input index of the group.
template <class T>
std::vector<GlobalId> bruteForce(
  const std::vector<T>& xyz, double l, bool periodic, const double* lo, const double* hi)
{
  const std::size_t n = xyz.size() / 3;
  jz::Periodicity per;
  if (periodic)
    for (int d = 0; d < 3; ++d)
      per.length[d] = hi[d] - lo[d];
  std::vector<Index> g(n);
  std::iota(g.begin(), g.end(), Index(0));
  const double l2 = l * l;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (jz::distance2(&xyz[3 * i], &xyz[3 * j], per) <= l2)
        jz::fofUnionLocal(g.data(), Index(i), Index(j));
  std::vector<GlobalId> label(n);
  for (std::size_t i = 0; i < n; ++i)
    label[i] = jz::fofFindLocal(g.data(), Index(i));
  return label;
}

// Whether two labellings describe the same partition.
bool samePartition(const std::vector<GlobalId>& a, const std::vector<GlobalId>& b)
{
  if (a.size() != b.size())
    return false;
  std::map<GlobalId, GlobalId> ab, ba;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    auto x = ab.emplace(a[i], b[i]);
    if (x.first->second != b[i])
      return false;
    auto y = ba.emplace(b[i], a[i]);
    if (y.first->second != a[i])
      return false;
  }
  return true;
}

std::size_t numGroups(const std::vector<GlobalId>& a)
{
  std::vector<GlobalId> s(a);
  std::sort(s.begin(), s.end());
  return std::size_t(std::unique(s.begin(), s.end()) - s.begin());
}

// On the GPU: the CPU's labels exactly, and one root per group, a member.
template <class T>
void checkSameAsCpu(const jz::FofProblem<T>& pb, const jz::FofGroups& gpu)
{
  jz::FofGroups cpu;
  cpu.wantRoot = false;
  jz::computeFofGroups(pb, cpu, jz::Backend::CPU);
  JZ_CHECK_MSG(cpu.groupLabel == gpu.groupLabel, "GPU labels differ from the CPU's");
  if (gpu.groupRoot.size() != pb.numPoints || gpu.groupLabel.size() != pb.numPoints)
    return;
  std::map<GlobalId, Index> rootOfLabel;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < pb.numPoints; ++i)
  {
    const Index r = gpu.groupRoot[i];
    const bool member = r < pb.numPoints && gpu.groupLabel[r] == gpu.groupLabel[i];
    if (!member || rootOfLabel.emplace(gpu.groupLabel[i], r).first->second != r)
      ++bad;
  }
  JZ_CHECK_MSG(bad == 0, bad << " points with an inconsistent GPU groupRoot");
}

// The problem of the points in the box [lo, hi) (wrapped when periodic).
template <class T>
jz::FofProblem<T> boxedProblem(const std::vector<T>& xyz, double l, bool periodic, const double* lo,
  const double* hi, const GlobalId* ids = nullptr)
{
  jz::FofProblem<T> pb = jztest::fofProblem(xyz.data(), xyz.size() / 3, l, periodic);
  std::copy_n(lo, 3, pb.boxLo);
  std::copy_n(hi, 3, pb.boxHi);
  pb.ids = ids;
  return pb;
}

template <class T>
std::vector<GlobalId> runFof(const std::vector<T>& xyz, double l, bool periodic, const double* lo,
  const double* hi, int threads = 0, const GlobalId* ids = nullptr,
  std::vector<Index>* roots = nullptr)
{
  const jz::FofProblem<T> pb = boxedProblem(xyz, l, periodic, lo, hi, ids);
  jz::FofGroups out;
  jz::RunControl rc;
  rc.numThreads = threads;
  jz::computeFofGroups(pb, out, jztest::backend(), rc);
  JZ_CHECK_EQ(out.groupLabel.size(), pb.numPoints);
  JZ_CHECK_EQ(out.groupRoot.size(), pb.numPoints);
  if (jztest::onGpu())
    checkSameAsCpu(pb, out);
  if (roots)
    *roots = out.groupRoot;
  return out.groupLabel;
}

template <class T>
void checkAgainstBruteForce(const std::vector<T>& xyz, double l, bool periodic, const double* lo,
  const double* hi, const std::string& what)
{
  const auto ref = bruteForce(xyz, l, periodic, lo, hi);
  // Thread counts matter on the CPU only.
  for (int threads : jztest::onGpu() ? std::vector<int>{ 0 } : std::vector<int>{ 1, 3 })
  {
    std::vector<Index> roots;
    const auto got = runFof(xyz, l, periodic, lo, hi, threads, nullptr, &roots);
    JZ_CHECK_MSG(samePartition(ref, got),
      what << " threads=" << threads << " groups ref=" << numGroups(ref)
           << " got=" << numGroups(got));
    // The canonical label is the smallest input index of the group, as the
    // reference's root is.
    JZ_CHECK_MSG(ref == got, what << ": canonical labels differ");
    std::vector<GlobalId> r(roots.begin(), roots.end());
    JZ_CHECK_MSG(samePartition(ref, r), what << ": roots are not one per group");
  }
}

template <class T>
std::vector<T> scaled(const std::vector<T>& xyz, double s, double o)
{
  std::vector<T> r(xyz.size());
  for (std::size_t i = 0; i < xyz.size(); ++i)
    r[i] = T(o + s * double(xyz[i]));
  return r;
}

template <class T>
void distributionsCase()
{
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  for (const std::string kind : { "uniform", "clustered", "duplicates", "planar", "mixedsign" })
  {
    for (std::size_t n : { 0, 1, 2, 7, 300, 2000 })
    {
      auto xyz = jztest::makePoints<T>(kind, n, 11 + unsigned(n));
      if (kind == "mixedsign")
        xyz = scaled(xyz, 0.5, 0.5); // into [0, 1)
      const double mean = n ? std::cbrt(1.0 / double(n)) : 1.0;
      for (double b : { 0.2, 0.75, 2.0 })
      {
        for (bool periodic : { false, true })
        {
          checkAgainstBruteForce(xyz, b * mean, periodic, lo, hi,
            kind + " n=" + std::to_string(n) + " b=" + std::to_string(b) +
              (periodic ? " periodic" : ""));
        }
      }
    }
  }
}

JZ_TEST_FLOAT_AND_DOUBLE(FofMatchesBruteForce, distributionsCase)

// Dense halos of very different sizes on a sparse background: exercises whole
// node links and self-linked nodes on several planes.
JZ_TEST(FofClusteredLarge)
{
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> xyz;
  for (int h = 0; h < 40; ++h)
  {
    const double c[3] = { u(rng), u(rng), u(rng) };
    const int m = 10 + 15 * h;
    const double s = 0.002 + 0.01 * u(rng);
    for (int k = 0; k < m; ++k)
      for (int d = 0; d < 3; ++d)
      {
        double x = c[d] + s * g(rng);
        x -= std::floor(x);
        xyz.push_back(x);
      }
  }
  for (int k = 0; k < 3 * 8000; ++k)
    xyz.push_back(u(rng));
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  const double mean = std::cbrt(1.0 / double(xyz.size() / 3));
  for (double b : { 0.05, 0.2, 0.5 })
  {
    checkAgainstBruteForce(xyz, b * mean, true, lo, hi, "halos b=" + std::to_string(b));
    std::vector<float> f(xyz.begin(), xyz.end());
    checkAgainstBruteForce(f, b * mean, false, lo, hi, "halos float b=" + std::to_string(b));
  }
}

// A lattice with spacing h: linked at l = h exactly, isolated just below.
JZ_TEST(FofLatticeAtLinkingLength)
{
  const int side = 12;
  const double h = 0.125; // exact in binary
  for (bool periodic : { false, true })
  {
    std::vector<double> xyz;
    for (int i = 0; i < side; ++i)
      for (int j = 0; j < side; ++j)
        for (int k = 0; k < side; ++k)
        {
          xyz.push_back(2.0 + h * i);
          xyz.push_back(-1.0 + h * j);
          xyz.push_back(h * k);
        }
    const double lo[3] = { 2.0, -1.0, 0.0 };
    const double hi[3] = { 2.0 + side * h, -1.0 + side * h, side * h };
    auto at = runFof(xyz, h, periodic, lo, hi);
    JZ_CHECK_EQ(numGroups(at), std::size_t(1));
    auto below = runFof(xyz, std::nextafter(h, 0.0), periodic, lo, hi);
    JZ_CHECK_EQ(numGroups(below), std::size_t(side * side * side));
    checkAgainstBruteForce(xyz, h, periodic, lo, hi, "lattice at h");
    checkAgainstBruteForce(xyz, std::nextafter(h, 0.0), periodic, lo, hi, "lattice below h");
    // The face diagonal links at h sqrt(2) (rounded up) and not just below it.
    checkAgainstBruteForce(xyz, h * std::sqrt(2.0), periodic, lo, hi, "lattice sqrt2");
    std::vector<float> f(xyz.begin(), xyz.end());
    auto atf = runFof(f, h, periodic, lo, hi);
    JZ_CHECK_EQ(numGroups(atf), std::size_t(1));
    auto belowf = runFof(f, std::nextafter(h, 0.0), periodic, lo, hi);
    JZ_CHECK_EQ(numGroups(belowf), std::size_t(side * side * side));
  }
}

// Chains along each axis that only close through the periodic boundary.
JZ_TEST(FofPeriodicChains)
{
  const double lo[3] = { -5, 10, 0.5 }, hi[3] = { 5, 14, 1.5 };
  std::vector<double> xyz;
  // Chain along x crossing x = 5 == -5: spacing 0.5.
  for (int k = 0; k < 6; ++k)
  {
    xyz.push_back(3.0 + 0.5 * k - (3.0 + 0.5 * k >= 5 ? 10 : 0));
    xyz.push_back(12);
    xyz.push_back(1);
  }
  // Chain along y crossing y = 14 == 10.
  for (int k = 0; k < 5; ++k)
  {
    double y = 13.0 + 0.5 * k;
    if (y >= 14)
      y -= 4;
    xyz.push_back(0);
    xyz.push_back(y);
    xyz.push_back(0.6);
  }
  // Isolated points.
  xyz.insert(xyz.end(), { -2.0, 11.0, 1.0, 1.0, 11.0, 0.7 });
  auto per = runFof(xyz, 0.5, true, lo, hi);
  JZ_CHECK_EQ(numGroups(per), std::size_t(4));
  JZ_CHECK(per[0] == per[5]);
  JZ_CHECK(per[6] == per[10]);
  auto open = runFof(xyz, 0.5, false, lo, hi);
  JZ_CHECK_EQ(numGroups(open), std::size_t(6));
  checkAgainstBruteForce(xyz, 0.5, true, lo, hi, "chains periodic");
  checkAgainstBruteForce(xyz, 0.5, false, lo, hi, "chains open");
  // Random points near the faces of a box not at the origin.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> r;
  for (int i = 0; i < 3000; ++i)
  {
    for (int d = 0; d < 3; ++d)
    {
      double t = u(rng);
      t = t < 0.5 ? 0.05 * t : 1 - 0.05 * (1 - t); // near the faces
      r.push_back(lo[d] + (hi[d] - lo[d]) * t);
      if (r.back() >= hi[d])
        r.back() = lo[d];
    }
  }
  checkAgainstBruteForce(r, 0.03, true, lo, hi, "faces periodic");
  std::vector<float> rf(r.begin(), r.end());
  for (std::size_t i = 0; i < rf.size(); ++i)
    if (double(rf[i]) >= hi[i % 3])
      rf[i] = float(lo[i % 3]);
  checkAgainstBruteForce(rf, 0.03, true, lo, hi, "faces periodic float");
}

JZ_TEST(FofAllDuplicates)
{
  std::vector<float> xyz;
  jztest::appendCopies(xyz, 500, 0.3f, 0.3f, 0.3f);
  jztest::appendCopies(xyz, 200, 0.7f, 0.3f, 0.3f);
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  auto g = runFof(xyz, 1e-6, false, lo, hi);
  JZ_CHECK_EQ(numGroups(g), std::size_t(2));
  JZ_CHECK_EQ(g[0], GlobalId(0));
  JZ_CHECK_EQ(g[600], GlobalId(500));
}

// Runs of duplicates far longer than a leaf (each one tree node, linked as
// one point) among uniform points, below and above percolation.
JZ_TEST(FofRunsOfDuplicates)
{
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  for (bool periodic : { false, true })
    for (double l : { 0.005, 0.02, 0.06 })
    {
      checkAgainstBruteForce(jztest::makePoints<double>("runs", 6000, 9), l, periodic, lo, hi,
        "runs l=" + std::to_string(l));
      checkAgainstBruteForce(jztest::makePoints<float>("runs", 6000, 11), l, periodic, lo, hi,
        "runs float l=" + std::to_string(l));
    }
}

// GroupIds: by descending size, ties by the smallest global id; independent
// of input order and thread count.
JZ_TEST(FofLabelsDeterministic)
{
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  auto xyz = jztest::makePoints<double>("clustered", 20000, 4);
  const std::size_t n = xyz.size() / 3;
  std::vector<GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = GlobalId(1000 + 7 * ((i * 7919) % n));
  const double l = 0.2 * std::cbrt(1.0 / double(n));
  auto label = [&](const std::vector<double>& pts, const std::vector<GlobalId>& id, int threads,
                 std::vector<GlobalId>& gid, std::vector<GlobalId>& gsize)
  {
    std::vector<Index> roots;
    auto lab = runFof(pts, l, true, lo, hi, threads, id.data(), &roots);
    gid.assign(n, -5);
    gsize.assign(n, -5);
    return jz::labelFofGroups(roots.data(), lab.data(), n, 20, gid.data(), gsize.data());
  };
  std::vector<GlobalId> gid, gsize;
  const std::size_t G = label(xyz, ids, 2, gid, gsize);
  JZ_CHECK(G > 5);
  // Check the rule directly.
  std::map<GlobalId, std::pair<GlobalId, GlobalId>> info; // gid -> (size, min id)
  for (std::size_t i = 0; i < n; ++i)
  {
    if (gid[i] < 0)
    {
      JZ_CHECK(gsize[i] < 20);
      continue;
    }
    auto it = info.emplace(gid[i], std::make_pair(gsize[i], ids[i])).first;
    JZ_CHECK_EQ(it->second.first, gsize[i]);
    it->second.second = std::min(it->second.second, ids[i]);
  }
  JZ_CHECK_EQ(info.size(), G);
  for (GlobalId k = 0; k + 1 < GlobalId(G); ++k)
  {
    const auto& a = info[k];
    const auto& b = info[k + 1];
    JZ_CHECK(a.first > b.first || (a.first == b.first && a.second < b.second));
  }
  // Shuffled input, other thread counts: the same GroupId per global id.
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t(0));
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(9));
  std::vector<double> xyz2(3 * n);
  std::vector<GlobalId> ids2(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
      xyz2[3 * i + d] = xyz[3 * perm[i] + d];
    ids2[i] = ids[perm[i]];
  }
  for (int threads : { 1, 3 })
  {
    std::vector<GlobalId> gid2, gsize2;
    JZ_CHECK_EQ(label(xyz2, ids2, threads, gid2, gsize2), G);
    bool same = true;
    for (std::size_t i = 0; i < n; ++i)
      same = same && gid2[i] == gid[perm[i]] && gsize2[i] == gsize[perm[i]];
    JZ_CHECK(same);
  }
}

// Catalogue against a direct computation, including a halo across the
// periodic boundary.
JZ_TEST(FofCatalogueValues)
{
  const double lo[3] = { -1, 0, 2 }, hi[3] = { 1, 4, 3 };
  std::mt19937_64 rng(8);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> xyz, vel, mass;
  const double centers[3][3] = { { 0.98, 3.99, 2.5 }, { 0, 2, 2.5 }, { -0.5, 1, 2.01 } };
  for (int h = 0; h < 3; ++h)
    for (int k = 0; k < 100 + 50 * h; ++k)
    {
      for (int d = 0; d < 3; ++d)
      {
        double x = centers[h][d] + 0.01 * g(rng);
        const double L = hi[d] - lo[d];
        x = x - L * std::floor((x - lo[d]) / L);
        xyz.push_back(x);
        vel.push_back(10 * h + g(rng));
      }
      mass.push_back(0.5 + u(rng));
    }
  const std::size_t n = mass.size();
  std::vector<Index> roots;
  auto lab = runFof(xyz, 0.01, true, lo, hi, 2, nullptr, &roots);
  std::vector<GlobalId> gid(n), gsize(n);
  const std::size_t G =
    jz::labelFofGroups(roots.data(), lab.data(), n, 20, gid.data(), gsize.data());
  JZ_CHECK(G >= 3);
  jz::FofCatalogueInput<double> in = jz::fofCatalogueInputFor(
    boxedProblem(xyz, 0.01, true, lo, hi), gid.data(), G, mass.data(), vel.data());
  jz::FofCatalogue cat;
  jz::computeFofCatalogue(in, cat);
  JZ_CHECK_EQ(cat.numGroups, G);
  JZ_CHECK(cat.hasVelocities);
  // Direct: unwrap around the true halo centre instead of a member.
  for (std::size_t k = 0; k < G; ++k)
  {
    std::vector<std::size_t> mem;
    for (std::size_t i = 0; i < n; ++i)
      if (gid[i] == GlobalId(k))
        mem.push_back(i);
    JZ_CHECK_EQ(cat.count[k], GlobalId(mem.size()));
    int h = 0;
    double best = 1e9;
    for (int c = 0; c < 3; ++c)
    {
      double s = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double L = hi[d] - lo[d];
        double x = std::fabs(xyz[3 * mem[0] + d] - centers[c][d]);
        x = std::min(x, L - x);
        s += x * x;
      }
      if (s < best)
      {
        best = s;
        h = c;
      }
    }
    double M = 0, c[3] = { 0, 0, 0 }, v[3] = { 0, 0, 0 };
    for (std::size_t i : mem)
    {
      M += mass[i];
      for (int d = 0; d < 3; ++d)
      {
        const double L = hi[d] - lo[d];
        double x = xyz[3 * i + d] - centers[h][d];
        x -= L * std::round(x / L);
        c[d] += mass[i] * x;
        v[d] += mass[i] * vel[3 * i + d];
      }
    }
    double r2 = 0, s2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      c[d] /= M;
      v[d] /= M;
    }
    for (std::size_t i : mem)
      for (int d = 0; d < 3; ++d)
      {
        const double L = hi[d] - lo[d];
        double x = xyz[3 * i + d] - centers[h][d];
        x -= L * std::round(x / L);
        r2 += mass[i] * (x - c[d]) * (x - c[d]);
        s2 += mass[i] * (vel[3 * i + d] - v[d]) * (vel[3 * i + d] - v[d]);
      }
    JZ_CHECK(std::fabs(cat.mass[k] - M) < 1e-9 * M);
    for (int d = 0; d < 3; ++d)
    {
      const double L = hi[d] - lo[d];
      double want = centers[h][d] + c[d];
      want -= L * std::floor((want - lo[d]) / L);
      const double got = cat.centerOfMass[3 * k + d];
      JZ_CHECK_MSG(got >= lo[d] && got < hi[d], "CoM outside the box: " << got);
      double diff = std::fabs(got - want);
      diff = std::min(diff, L - diff);
      JZ_CHECK_MSG(diff < 1e-9, "group " << k << " dim " << d << ": " << got << " vs " << want);
      JZ_CHECK(std::fabs(cat.meanVelocity[3 * k + d] - v[d]) < 1e-9 * (1 + std::fabs(v[d])));
    }
    JZ_CHECK(std::fabs(cat.inertiaRadius[k] - std::sqrt(r2 / M)) < 1e-9);
    JZ_CHECK(std::fabs(cat.velocityDispersion[k] - std::sqrt(s2 / (3 * M))) < 1e-9);
  }
  // Without velocities and masses.
  in.velocities = nullptr;
  in.masses = nullptr;
  jz::computeFofCatalogue(in, cat);
  JZ_CHECK(!cat.hasVelocities);
  for (std::size_t k = 0; k < G; ++k)
    JZ_CHECK_EQ(cat.mass[k], double(cat.count[k]));
}

JZ_TEST(FofRejectsBadInput)
{
  std::vector<double> xyz = { 0, 0, 0, 1, 1, 1 };
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 2, 2, 2 };
  JZ_CHECK_THROWS(runFof(xyz, 0.0, false, lo, hi));
  JZ_CHECK_THROWS(runFof(xyz, -1.0, false, lo, hi));
  JZ_CHECK_THROWS(runFof(xyz, std::nan(""), false, lo, hi));
  const double badHi[3] = { 2, 0, 2 };
  JZ_CHECK_THROWS(runFof(xyz, 0.5, true, lo, badHi));
  xyz[4] = std::nan("");
  JZ_CHECK_THROWS(runFof(xyz, 0.5, false, lo, hi));
  xyz[4] = INFINITY;
  JZ_CHECK_THROWS(runFof(xyz, 0.5, false, lo, hi));
  std::vector<double> empty;
  JZ_CHECK(runFof(empty, 0.5, false, lo, hi).empty());
}
} // namespace

// The union-find contraction (§IV-A) with far more threads than cores, on
// random forests whose paths cross the threads' index ranges: afterwards every
// pointer must name the root a serial walk finds. Path halving by plain
// stores fails this in about one run in four (a stale ancestor stored after
// another thread stored the root).
JZ_TEST(FofContractionLeavesOnlyRoots)
{
  jztest::skipOnGpu("the CPU's contraction (kernels.TestFof runs it; a GPU run would repeat it)");
  const Index n = 1000000;
  std::mt19937_64 rng(16);
  std::vector<Index> parent(n), g(n), root(n);
  for (int threads : { 8, 16 })
  {
    int failedRuns = 0;
    for (int run = 0; run < 40; ++run)
    {
      for (Index i = 0; i < n; ++i)
        parent[i] = (i == 0 || rng() % 64 == 0) ? i : Index(rng() % i);
      for (Index i = 0; i < n; ++i)
        root[i] = parent[i] == i ? i : root[parent[i]];
      g = parent;
#pragma omp parallel for num_threads(threads) schedule(static)
      for (long long i = 0; i < (long long)n; ++i)
        jz::fofContract(g.data(), Index(i));
      failedRuns += g != root;
    }
    JZ_CHECK_MSG(failedRuns == 0,
      failedRuns << " of 40 contractions with " << threads
                 << " threads left a pointer at a non-root");
  }
}

// --- Large sets, lattices at exactly l, options: also the GPU's paths -------
namespace
{
// Reference partition by a cell list, label = smallest input index of the
// group; points must lie inside the periodic box. The cells are l / sqrt(3)
// wide, a little less, so that any two points of one cell are friends: each
// cell is one set up front, and two cells need only their first friendly
// pair. That keeps dense clumps and bulk duplicates linear (the GPU's sizes
// took the pairwise version past 170 s). A dimension with fewer than
// 2 * reach + 1 cells (periodic, l near the box) is one slab, whose cells
// are tested pair by pair.
template <class T>
std::vector<GlobalId> cellListFof(
  const std::vector<T>& xyz, double l, bool periodic, const double* lo, const double* hi)
{
  const std::size_t n = xyz.size() / 3;
  jz::Periodicity per;
  double origin[3], width[3];
  std::int64_t cells[3]; // per dimension, periodic only (1: one slab)
  int reach[3];          // neighbour cells to scan each way
  bool compact = true;   // every cell's points all friends
  for (int d = 0; d < 3; ++d)
  {
    origin[d] = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      origin[d] = std::min(origin[d], double(xyz[3 * i + d]));
    width[d] = l / std::sqrt(3.0) * (1 - 1e-6);
    cells[d] = 0;
    if (periodic)
    {
      const double L = hi[d] - lo[d];
      per.length[d] = L;
      origin[d] = lo[d];
      cells[d] = std::int64_t(std::ceil(L / width[d]));
      width[d] = L / double(cells[d]);
    }
    // |floor(a) - floor(b)| <= floor(|a - b|) + 1.
    reach[d] = int(std::floor(l / width[d])) + 1;
    if (cells[d] > 0 && cells[d] < 2 * reach[d] + 1)
    {
      cells[d] = 1;
      reach[d] = 0;
      compact = false;
    }
  }
  using Cell = std::array<std::int64_t, 3>;
  std::vector<Cell> cellOf(n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
    {
      std::int64_t c = std::int64_t(std::floor((double(xyz[3 * i + d]) - origin[d]) / width[d]));
      cellOf[i][d] = cells[d] > 0 ? ((c % cells[d]) + cells[d]) % cells[d] : c;
    }
  // The points by cell; the occupied cells in an open-addressing table.
  std::vector<Index> order(n);
  std::iota(order.begin(), order.end(), Index(0));
  std::stable_sort(
    order.begin(), order.end(), [&](Index a, Index b) { return cellOf[a] < cellOf[b]; });
  std::vector<std::size_t> begin; // per occupied cell, into order; and n
  for (std::size_t k = 0; k < n; ++k)
    if (k == 0 || cellOf[order[k]] != cellOf[order[k - 1]])
      begin.push_back(k);
  begin.push_back(n);
  const std::size_t occupied = begin.size() - 1;
  std::size_t slots = 1;
  while (slots < 2 * occupied + 2)
    slots *= 2;
  auto slotOf = [&](const Cell& c)
  {
    std::uint64_t h = std::uint64_t(c[0]) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 29) ^ std::uint64_t(c[1])) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 32) ^ std::uint64_t(c[2])) * 0x94D049BB133111EBull;
    return std::size_t(h ^ (h >> 31)) & (slots - 1);
  };
  struct Slot
  {
    Cell cell;
    std::int64_t number = -1; // occupied cell number, or -1
  };
  std::vector<Slot> table(slots);
  auto lookup = [&](const Cell& c)
  {
    std::size_t s = slotOf(c);
    while (table[s].number >= 0 && table[s].cell != c)
      s = (s + 1) & (slots - 1);
    return s;
  };
  for (std::size_t k = 0; k < occupied; ++k)
  {
    const Cell& c = cellOf[order[begin[k]]];
    table[lookup(c)] = Slot{ c, std::int64_t(k) };
  }

  std::vector<Index> g(n);
  std::iota(g.begin(), g.end(), Index(0));
  const double l2 = l * l;
  auto friends = [&](Index i, Index j)
  { return jz::distance2(&xyz[3 * i], &xyz[3 * j], per) <= l2; };
  // Links cells a and b (b == a: within the cell, each pair once).
  auto link = [&](std::size_t a, std::size_t b)
  {
    for (std::size_t p = begin[a]; p < begin[a + 1]; ++p)
      for (std::size_t q = (a == b ? p + 1 : begin[b]); q < begin[b + 1]; ++q)
        if (friends(order[p], order[q]))
        {
          jz::fofUnionLocal(g.data(), order[p], order[q]);
          if (compact) // two compact cells are joined by any one friendly pair
            return;
        }
  };
  for (std::size_t k = 0; k < occupied; ++k)
  {
    const Cell c = cellOf[order[begin[k]]];
    if (compact)
      for (std::size_t p = begin[k] + 1; p < begin[k + 1]; ++p)
        jz::fofUnionLocal(g.data(), order[begin[k]], order[p]);
    else
      link(k, k);
    // The neighbours at offsets after (0, 0, 0) in lexicographic order, so
    // each pair of cells once (at least 2 * reach + 1 cells where wrapped).
    for (int dx = 0; dx <= reach[0]; ++dx)
      for (int dy = (dx == 0 ? 0 : -reach[1]); dy <= reach[1]; ++dy)
        for (int dz = (dx == 0 && dy == 0 ? 1 : -reach[2]); dz <= reach[2]; ++dz)
        {
          Cell nc = { c[0] + dx, c[1] + dy, c[2] + dz };
          for (int d = 0; d < 3; ++d)
            if (cells[d] > 0)
              nc[d] = (nc[d] + cells[d]) % cells[d];
          const std::int64_t other = table[lookup(nc)].number;
          if (other >= 0)
            link(k, std::size_t(other));
        }
  }
  std::vector<GlobalId> label(n);
  for (std::size_t i = 0; i < n; ++i)
    label[i] = jz::fofFindLocal(g.data(), Index(i));
  return label;
}

template <class T>
void checkAgainstCellList(const std::vector<T>& xyz, double l, bool periodic, const double* lo,
  const double* hi, const std::string& what)
{
  // Each case named as it starts (flushed): a run stopped by a time limit
  // shows which one it was in.
  std::printf("  %s\n", what.c_str());
  std::fflush(stdout);
  // The reference's labels, or only their digest when prepared beforehand.
  const std::uint64_t key = jztest::digestOf(xyz, jz::contentHash(&l, sizeof l, periodic));
  std::vector<GlobalId> ref;
  std::optional<std::uint64_t> refDigest = jztest::preparedReference(key);
  if (!refDigest)
  {
    ref = cellListFof(xyz, l, periodic, lo, hi);
    refDigest = jztest::digestOf(ref);
    jztest::storeReference(key, *refDigest);
  }
  std::vector<Index> roots;
  const std::vector<GlobalId> got = runFof(xyz, l, periodic, lo, hi, 0, nullptr, &roots);
  JZ_CHECK_MSG(jztest::digestOf(got) == *refDigest,
    what << ": labels differ from the cell list (groups "
         << (ref.empty() ? std::string("prepared") : std::to_string(numGroups(ref))) << " vs "
         << numGroups(got) << ")");
  std::vector<GlobalId> r(roots.begin(), roots.end());
  JZ_CHECK_MSG(samePartition(got, r), what << ": roots are not one per group");
}

// The points wrapped into the periodic box exactly as the kernels wrap them
// (so the reference sees the coordinates the kernels use).
template <class T>
std::vector<T> wrappedInto(std::vector<T> xyz, const double* lo, const double* hi)
{
  for (std::size_t i = 0; i < xyz.size(); ++i)
  {
    const int d = int(i % 3);
    const double L = hi[d] - lo[d];
    T t = T(double(xyz[i]) - L * std::floor((double(xyz[i]) - lo[d]) / L));
    if (double(t) >= lo[d] + L || double(t) < lo[d])
      t = T(lo[d]);
    xyz[i] = t;
  }
  return xyz;
}

// The volume a kind's points fill, for the mean separation.
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
} // namespace

JZ_TEST(FofAllKindsLargerSets)
{
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  const std::size_t n = jztest::sized(8000, 200000);
  for (const std::string& kind : jztest::allKinds())
  {
    const auto f = jztest::makePoints<float>(kind, n, 7);
    const auto d = jztest::makePoints<double>(kind, n, 8);
    // The unit-box kinds also periodic.
    const bool unitBox =
      kind == "uniform" || kind == "clustered" || kind == "duplicates" || kind == "planar";
    for (double b : { 0.05, 0.2, 0.75 })
    {
      const double l = b * std::cbrt(volumeOf(kind, n) / double(n));
      const std::string what = kind + " b=" + std::to_string(b);
      checkAgainstCellList(f, l, false, lo, hi, what + " float");
      checkAgainstCellList(d, l, false, lo, hi, what + " double");
      if (unitBox)
        checkAgainstCellList(wrappedInto(d, lo, hi), l, true, lo, hi, what + " double periodic");
    }
  }
}

JZ_TEST(FofLargeSets)
{
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  const std::size_t n = jztest::sized(50000, 1000000);
  for (const char* kind : { "uniform", "clustered" })
  {
    const auto f = wrappedInto(jztest::makePoints<float>(kind, n, 3), lo, hi);
    for (double b : { 0.2, 0.75 })
      checkAgainstCellList(f, b * std::cbrt(1.0 / double(n)), true, lo, hi,
        std::string(kind) + " b=" + std::to_string(b));
  }
}

// Integer lattices: friends at exactly l = 1, diagonals at sqrt(2) and
// sqrt(3), periodic boxes at the origin and off it (points wrapped in).
JZ_TEST(FofLatticeBoxes)
{
  const std::size_t side = jztest::sized(16, 30), n = side * side * side;
  const std::vector<double> base = jztest::makePoints<double>("lattice", n);
  for (double l : { 1.0, std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0), std::sqrt(2.0),
         std::nextafter(std::sqrt(2.0), 0.0), 0.5 })
  {
    for (double origin : { 0.0, -0.5, 3.0 })
    {
      const double lo[3] = { origin, origin, origin };
      const double hi[3] = { origin + side, origin + side, origin + side };
      std::vector<double> xyz(base);
      for (double& x : xyz)
        x = x < origin ? x + double(side) : x; // into [origin, origin + side)
      const std::vector<float> xyzf(xyz.begin(), xyz.end());
      const std::string what =
        "lattice l=" + std::to_string(l) + " box at " + std::to_string(origin);
      checkAgainstCellList(xyz, l, true, lo, hi, what);
      checkAgainstCellList(xyzf, l, true, lo, hi, what + " float");
    }
    const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
    checkAgainstCellList(base, l, false, lo, hi, "open lattice l=" + std::to_string(l));
  }
}

namespace
{
// Groups of `pts` in the unit box at b = 0.2 of the mean spacing.
jz::FofProblem<float> meanSpacingProblem(const std::vector<float>& pts)
{
  const std::size_t n = pts.size() / 3;
  return jztest::fofProblem(pts.data(), n, 0.2 * std::cbrt(1.0 / double(n)), false);
}
} // namespace

JZ_TEST(FofOutputsWanted)
{
  std::vector<float> pts = jztest::makePoints<float>("clustered", 5000, 5);
  const jz::FofProblem<float> pb = meanSpacingProblem(pts);
  jz::FofGroups both, labelsOnly, rootsOnly;
  labelsOnly.wantRoot = false;
  rootsOnly.wantLabel = false;
  jz::computeFofGroups(pb, both, jztest::backend());
  jz::computeFofGroups(pb, labelsOnly, jztest::backend());
  jz::computeFofGroups(pb, rootsOnly, jztest::backend());
  JZ_CHECK(labelsOnly.groupRoot.empty());
  JZ_CHECK(labelsOnly.groupLabel == both.groupLabel);
  JZ_CHECK(rootsOnly.groupLabel.empty());
  JZ_CHECK(rootsOnly.groupRoot == both.groupRoot);
}

JZ_TEST(FofEmptyInput)
{
  jz::FofProblem<double> pb;
  pb.linkingLength = 0.1;
  jz::FofGroups out;
  const jz::RunInfo info = jz::computeFofGroups(pb, out, jztest::backend());
  JZ_CHECK(info.backend == jztest::backend());
  JZ_CHECK(out.groupLabel.empty() && out.groupRoot.empty());
}

JZ_TEST(FofNamesFirstNonFinitePoint)
{
  std::vector<float> pts = jztest::makePoints<float>("uniform", 100, 3);
  pts[3 * 77] = std::numeric_limits<float>::infinity();
  pts[3 * 42 + 2] = std::nanf("");
  const jz::FofProblem<float> pb = jztest::fofProblem(pts.data(), 100, 0.1, false);
  jz::FofGroups out;
  const std::string message =
    jztest::errorOf([&] { jz::computeFofGroups(pb, out, jztest::backend()); });
  JZ_CHECK_MSG(message.find("point 42 ") != std::string::npos, "message: " << message);
  JZ_CHECK(out.groupLabel.empty() && out.groupRoot.empty());
}

JZ_TEST(FofAutoBackend)
{
  std::vector<float> pts = jztest::makePoints<float>("uniform", 5000, 3);
  const jz::FofProblem<float> pb = meanSpacingProblem(pts);
  jz::FofGroups out;
  const jz::RunInfo info = jz::computeFofGroups(pb, out, jz::Backend::Auto);
  const bool gpu = jz::cudaUsable();
  JZ_CHECK_MSG(info.backend == (gpu ? jz::Backend::CUDA : jz::Backend::CPU),
    "Auto ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  bool gpuStage = false;
  for (const auto& s : info.stageSeconds)
    gpuStage = gpuStage || s.first == "gpu fof leaf walk";
  JZ_CHECK_EQ(gpuStage, gpu);
}

// ---- computeFofHalos: groups, numbering and catalogue in one call. On the
// GPU (--backend=cuda) everything after the links runs on the device too;
// every output must equal the CPU's bit for bit (computeFofGroups,
// labelFofGroups and computeFofCatalogue with the same thread count, which
// fixes the catalogue's summation order). Independently of both, the
// numbering is checked against the partition's labels.
namespace
{
template <class T>
struct HaloCase
{
  std::string what;
  std::vector<T> xyz;
  double l = 0;
  bool periodic = false;
  double lo[3] = { 0, 0, 0 };
  double hi[3] = { 1, 1, 1 };
  std::vector<GlobalId> ids;
  std::vector<double> mass, vel;
  GlobalId minimumSize = 20;
};

// Equal bit for bit (so -0 and +0 differ, and NaN equals itself).
bool sameBits(const std::vector<double>& a, const std::vector<double>& b)
{
  return a.size() == b.size() &&
    (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

std::string catalogueDifference(const jz::FofCatalogue& a, const jz::FofCatalogue& b)
{
  if (a.numGroups != b.numGroups || a.hasVelocities != b.hasVelocities)
    return "the group count or hasVelocities";
  if (a.count != b.count)
    return "count";
  const std::pair<const char*, std::pair<const std::vector<double>*, const std::vector<double>*>>
    fields[] = { { "mass", { &a.mass, &b.mass } },
      { "centerOfMass", { &a.centerOfMass, &b.centerOfMass } },
      { "inertiaRadius", { &a.inertiaRadius, &b.inertiaRadius } },
      { "meanVelocity", { &a.meanVelocity, &b.meanVelocity } },
      { "velocityDispersion", { &a.velocityDispersion, &b.velocityDispersion } } };
  for (const auto& f : fields)
    if (!sameBits(*f.second.first, *f.second.second))
      return f.first;
  return "";
}

// GroupSize is the partition's group size; GroupId numbers the groups of at
// least minimumSize by descending size, then ascending label.
void checkNumbering(const std::vector<GlobalId>& label, const std::vector<GlobalId>& groupId,
  const std::vector<GlobalId>& groupSize, std::size_t G, GlobalId minimumSize,
  const std::string& what)
{
  std::map<GlobalId, GlobalId> sizeOf;
  for (GlobalId x : label)
    ++sizeOf[x];
  std::vector<std::pair<GlobalId, GlobalId>> kept; // (-size, label)
  for (const auto& s : sizeOf)
    if (s.second >= minimumSize)
      kept.emplace_back(-s.second, s.first);
  std::sort(kept.begin(), kept.end());
  std::map<GlobalId, GlobalId> idOf;
  for (std::size_t k = 0; k < kept.size(); ++k)
    idOf[kept[k].second] = GlobalId(k);
  JZ_CHECK_MSG(G == kept.size(), what << ": " << G << " groups, expected " << kept.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < label.size(); ++i)
  {
    const auto it = idOf.find(label[i]);
    bad += groupSize[i] != sizeOf[label[i]] || groupId[i] != (it == idOf.end() ? -1 : it->second);
  }
  JZ_CHECK_MSG(bad == 0, what << ": " << bad << " points with a wrong GroupId or GroupSize");
}

template <class T>
void checkHalos(const HaloCase<T>& c, int threads)
{
  const std::size_t n = c.xyz.size() / 3;
  const std::string what = c.what + " threads=" + std::to_string(threads);
  const jz::FofProblem<T> pb =
    boxedProblem(c.xyz, c.l, c.periodic, c.lo, c.hi, c.ids.empty() ? nullptr : c.ids.data());
  jz::FofHaloOptions options;
  options.minimumGroupSize = c.minimumSize;
  options.masses = c.mass.empty() ? nullptr : c.mass.data();
  options.velocities = c.vel.empty() ? nullptr : c.vel.data();
  jz::RunControl rc;
  rc.numThreads = threads;
  jz::FofHalos got;
  const jz::RunInfo info = jz::computeFofHalos(pb, options, got, jztest::backend(), rc);
  JZ_CHECK_MSG(
    info.backend == jztest::backend(), what << ": ran on " << jz::backendName(info.backend));

  // The CPU, one call at a time.
  jz::FofGroups groups;
  jz::computeFofGroups(pb, groups, jz::Backend::CPU, rc);
  std::vector<GlobalId> gid(n), gsize(n);
  const std::size_t G = jz::labelFofGroups(groups.groupRoot.data(), groups.groupLabel.data(), n,
    c.minimumSize, gid.data(), gsize.data(), rc);
  const jz::FofCatalogueInput<T> in =
    jz::fofCatalogueInputFor(pb, gid.data(), G, options.masses, options.velocities);
  jz::FofCatalogue cat;
  jz::computeFofCatalogue(in, cat, rc);

  JZ_CHECK_MSG(got.numGroups == G, what << ": " << got.numGroups << " groups, the CPU " << G);
  JZ_CHECK_MSG(got.groupId == gid, what << ": GroupId differs from the CPU's");
  JZ_CHECK_MSG(got.groupSize == gsize, what << ": GroupSize differs from the CPU's");
  const std::string diff = catalogueDifference(got.catalogue, cat);
  JZ_CHECK_MSG(diff.empty(), what << ": the catalogue's " << diff << " differs from the CPU's");
  checkNumbering(groups.groupLabel, gid, gsize, G, c.minimumSize, what);
  for (std::size_t k = 0; k < G && k < cat.count.size(); ++k)
    JZ_CHECK(cat.count[k] >= c.minimumSize && (k == 0 || cat.count[k] <= cat.count[k - 1]));

  // Into the caller's arrays: the same values, the vectors left empty.
  std::vector<GlobalId> gid2(n, -7), gsize2(n, -7);
  options.groupIdOut = gid2.data();
  options.groupSizeOut = gsize2.data();
  jz::FofHalos into;
  jz::computeFofHalos(pb, options, into, jztest::backend(), rc);
  JZ_CHECK(into.groupId.empty() && into.groupSize.empty());
  JZ_CHECK_MSG(gid2 == gid && gsize2 == gsize, what << ": outputs into the caller's arrays differ");
  JZ_CHECK(catalogueDifference(into.catalogue, cat).empty());
}

// Masses, velocities and shuffled unique ids for the points of c.
template <class T>
void addPointData(HaloCase<T>& c, unsigned seed)
{
  const std::size_t n = c.xyz.size() / 3;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::normal_distribution<double> g(0, 100);
  c.ids.resize(n);
  std::iota(c.ids.begin(), c.ids.end(), GlobalId(1000000007));
  std::shuffle(c.ids.begin(), c.ids.end(), rng);
  c.mass.resize(n);
  c.vel.resize(3 * n);
  for (double& m : c.mass)
    m = u(rng);
  for (double& v : c.vel)
    v = g(rng);
}

template <class T>
void runHaloCases(const HaloCase<T>& base)
{
  // Thread counts change the CPU catalogue's summation order (chunks).
  for (int threads : { 1, 3, 16 })
    checkHalos(base, threads);
}

template <class T>
void haloKindsCase()
{
  const char* type = jztest::typeName<T>();
  const std::size_t n = jztest::sized(6000, 300000);
  for (const char* kind : { "clustered", "runs", "duplicates", "uniform" })
  {
    HaloCase<T> c;
    c.xyz = jztest::makePoints<T>(kind, n, 21);
    c.l = 0.2 * std::cbrt(1.0 / double(n));
    c.what = std::string(kind) + " " + type;
    for (bool periodic : { false, true })
    {
      c.periodic = periodic;
      c.minimumSize = 20;
      runHaloCases(c);
    }
    addPointData(c, 5);
    c.what += " with masses, velocities and ids";
    c.minimumSize = 5;
    runHaloCases(c);
  }
}
} // namespace

JZ_TEST_FLOAT_AND_DOUBLE(FofHalosKinds, haloKindsCase)

// MinimumGroupSize 0, 1, 2, 20 and more than every group.
JZ_TEST(FofHalosMinimumGroupSize)
{
  HaloCase<float> c;
  c.xyz = jztest::makePoints<float>("clustered", jztest::sized(5000, 200000), 9);
  c.l = 0.2 * std::cbrt(1.0 / double(c.xyz.size() / 3));
  c.periodic = true;
  for (GlobalId m : { GlobalId(0), GlobalId(1), GlobalId(2), GlobalId(20), GlobalId(1) << 40 })
  {
    c.minimumSize = m;
    c.what = "clustered minimum size " + std::to_string(m);
    checkHalos(c, 3);
  }
}

// Every point alone (numbered by its id when kept) and one group of all.
JZ_TEST(FofHalosNoGroupsAndOneGroup)
{
  const std::size_t n = jztest::sized(4000, 200000);
  HaloCase<double> alone;
  alone.xyz = jztest::makePoints<double>("uniform", n, 4);
  alone.l = 1e-9;
  addPointData(alone, 8);
  for (GlobalId m : { 1, 2 })
  {
    alone.minimumSize = m;
    alone.what = "every point alone, minimum size " + std::to_string(m);
    runHaloCases(alone);
  }
  HaloCase<float> all;
  const std::size_t m = jztest::sized(4000, 100000);
  all.xyz = jztest::makePoints<float>("uniform", m, 6);
  all.l = 3 * std::cbrt(1.0 / double(m)); // far beyond percolation: (almost) one group
  all.periodic = true;
  addPointData(all, 9);
  all.what = "a giant group";
  runHaloCases(all);
}

// A periodic box off the origin with points outside it (the tree wraps them;
// the catalogue sums them as given, around each group's reference member).
JZ_TEST(FofHalosPointsOutsideTheBox)
{
  HaloCase<double> c;
  const double lo[3] = { -1, 0, 2 }, hi[3] = { 1, 4, 3 };
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0, 0.01);
  std::uniform_int_distribution<int> shift(-2, 2);
  const std::size_t n = jztest::sized(3000, 100000);
  for (std::size_t i = 0; i < n; ++i)
  {
    const double centre[3] = { 0.995, 3.995, 2.5 + 0.1 * double(i % 4) };
    for (int d = 0; d < 3; ++d)
      c.xyz.push_back(centre[d] + g(rng) + double(shift(rng)) * (hi[d] - lo[d]));
  }
  for (int d = 0; d < 3; ++d)
  {
    c.lo[d] = lo[d];
    c.hi[d] = hi[d];
  }
  c.periodic = true;
  c.l = 0.004;
  c.minimumSize = 10;
  addPointData(c, 10);
  c.what = "periodic, points outside the box";
  runHaloCases(c);
}

// The GPU catalogue's per-group code (jz::fofGroupSums, run by one device
// thread per group) on the host: members in input order, the reference
// member, the CPU's chunk count; it must give computeFofCatalogue's bits for
// any thread count, so a CPU-only run already proves the GPU's order. Those
// bits do not depend on the thread count.
template <class T>
void groupSumsCase(
  const char* kind, std::size_t n, bool periodic, int threads, GlobalId minimumSize)
{
  std::vector<T> xyz = jztest::makePoints<T>(kind, n, 3);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g(0, 1);
  if (periodic)
    for (T& x : xyz)
      x += T(std::floor(2 * g(rng))); // whole boxes away: outside the box
  std::vector<GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = GlobalId((i * 2654435761ull) % 1000000007ull);
  std::vector<double> mass(n), vel(3 * n);
  for (double& m : mass)
    m = 1 + 0.5 * g(rng) * g(rng);
  for (double& v : vel)
    v = 100 * g(rng);
  jz::FofProblem<T> pb =
    jztest::fofProblem(xyz.data(), n, 0.2 * std::cbrt(1.0 / double(n)), periodic);
  pb.ids = ids.data();
  jz::FofGroups groups;
  jz::computeFofGroups(pb, groups, jz::Backend::CPU);
  std::vector<GlobalId> gid(n);
  const std::size_t G = jz::labelFofGroups(
    groups.groupRoot.data(), groups.groupLabel.data(), n, minimumSize, gid.data(), nullptr);
  const jz::FofCatalogueInput<T> in =
    jz::fofCatalogueInputFor(pb, gid.data(), G, mass.data(), vel.data());
  jz::RunControl rc;
  rc.numThreads = threads;
  jz::FofCatalogue cpu;
  jz::computeFofCatalogue(in, cpu, rc);

  std::vector<std::vector<Index>> member(G);
  for (std::size_t i = 0; i < n; ++i)
    if (gid[i] >= 0)
      member[gid[i]].push_back(Index(i));
  const jz::Periodicity per = jz::Periodicity::of(periodic, pb.boxLo, pb.boxHi);
  const std::size_t chunks = std::size_t(jz::fofCatalogueChunks(G, n));
  jz::FofCatalogue emulated;
  emulated.hasVelocities = true;
  emulated.numGroups = G;
  for (std::size_t j = 0; j < G; ++j)
  {
    Index ref = member[j][0];
    for (Index i : member[j])
      ref = ids[i] < ids[ref] ? i : ref;
    jz::fofGroupSums(GlobalId(j), member[j].data(), Index(member[j].size()), ref, xyz.data(),
      mass.data(), vel.data(), n, chunks, per.length)
      .appendRow(pb.boxLo, per.length, true, emulated);
  }
  const std::string diff = catalogueDifference(emulated, cpu);
  JZ_CHECK_MSG(diff.empty(),
    kind << " n=" << n << (periodic ? " periodic" : "") << " threads=" << threads
         << ": fofGroupSums' " << diff << " differs");
  // The same bits as one thread's catalogue.
  jz::RunControl one;
  one.numThreads = 1;
  jz::FofCatalogue serial;
  jz::computeFofCatalogue(in, serial, one);
  const std::string threadDiff = catalogueDifference(serial, cpu);
  JZ_CHECK_MSG(threadDiff.empty(),
    kind << " n=" << n << (periodic ? " periodic" : "") << " threads=" << threads << ": "
         << threadDiff << " differs from one thread's");
}

JZ_TEST(FofGroupSumsFollowTheCpuOrder)
{
  for (const char* kind : { "clustered", "runs", "duplicates" })
    for (bool periodic : { false, true })
      for (int threads : { 1, 2, 3, 16 })
        for (GlobalId minimumSize : { 1, 20 })
        {
          groupSumsCase<float>(kind, 30001, periodic, threads, minimumSize);
          groupSumsCase<double>(kind, 30001, periodic, threads, minimumSize);
        }
}

// Small and fixed-size (compute-sanitizer runs it in gpu-check.sh): every
// device stage with masses, velocities and ids, kept groups and none.
JZ_TEST(FofHalosSanitizerSmall)
{
  HaloCase<float> c;
  c.xyz = jztest::makePoints<float>("clustered", 20000, 12);
  c.l = 0.2 * std::cbrt(1.0 / 20000.0);
  c.periodic = true;
  addPointData(c, 13);
  for (GlobalId m : { GlobalId(1), GlobalId(20), GlobalId(1) << 40 })
  {
    c.minimumSize = m;
    c.what = "sanitizer case, minimum size " + std::to_string(m);
    checkHalos(c, 3);
  }
}

JZ_TEST(FofHalosEmptyInput)
{
  jz::FofProblem<float> pb;
  pb.linkingLength = 0.1;
  jz::FofHaloOptions options;
  jz::FofHalos got;
  const jz::RunInfo info = jz::computeFofHalos(pb, options, got, jztest::backend());
  JZ_CHECK(info.backend == jztest::backend());
  JZ_CHECK(got.numGroups == 0 && got.groupId.empty() && got.groupSize.empty());
  JZ_CHECK(got.catalogue.numGroups == 0 && got.catalogue.count.empty());
}

JZ_TEST(FofHalosAutoBackend)
{
  std::vector<float> pts = jztest::makePoints<float>("clustered", 5000, 3);
  const jz::FofProblem<float> pb = meanSpacingProblem(pts);
  jz::FofHalos out;
  const jz::RunInfo info = jz::computeFofHalos(pb, jz::FofHaloOptions(), out, jz::Backend::Auto);
  const bool gpu = jz::cudaUsable();
  JZ_CHECK_MSG(info.backend == (gpu ? jz::Backend::CUDA : jz::Backend::CPU),
    "Auto ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  bool gpuStage = false;
  for (const auto& s : info.stageSeconds)
    gpuStage = gpuStage || s.first == "gpu fof catalogue";
  JZ_CHECK_EQ(gpuStage, gpu);
  JZ_CHECK_EQ(out.groupId.size(), pb.numPoints);
  JZ_CHECK_EQ(out.catalogue.numGroups, out.numGroups);
}

JZ_TEST_MAIN()
