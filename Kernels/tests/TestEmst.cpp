// The Borůvka EMST against a brute-force Prim on the complete graph under
// the same total edge order (weight, smaller id, larger id): the minimum is
// unique under it, so edge sets must match exactly, ties (duplicates,
// lattices) included. Euclidean and mutual reachability, open and periodic,
// float and double, several thread counts, shuffled global ids, simulated
// ranks, and bad input.
//
// One test body serves both backends (jztest::backend()): on the GPU
// (TestEmst --backend=cuda, CTest's kernels.TestEmstCuda) every tree must
// really have been built there and equal the CPU backend's bit for bit (the
// same edges, orientation, order, weights and core distances: the minimum
// under the total order is unique), besides Prim where a case checks it.
// Sets too large for Prim are checked against the CPU alone (on the CPU: all
// threads against one). Cases that only make sense on one backend say so and
// skip on the other. Built with -DJZ_CUDA_ASSERTS=ON the GPU also checks
// itself every round (each edge joins two components and carries the
// formula's weight; the component count drops by the edges added) and at the
// end (n - 1 edges).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "PointSets.h"
#include "Problems.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/Emst.h"
#include "jz/FofFromTree.h"
#include "jz/Geometry.h"
#include "jz/Hdbscan.h"

namespace
{
using jz::GlobalId;
using Edge = std::tuple<double, GlobalId, GlobalId>; // (weight2, lo id, hi id)

// The ids 0..n-1 shuffled: ties are broken by id, not by input order.
std::vector<GlobalId> shuffledIds(std::size_t n, unsigned seed)
{
  std::vector<GlobalId> ids(n);
  std::iota(ids.begin(), ids.end(), GlobalId(0));
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(seed));
  return ids;
}

// The EMST of the points with their ids (Euclidean unless the caller sets
// the metric).
template <class T>
jz::EmstProblem<T> emstProblem(
  const std::vector<T>& xyz, const std::vector<GlobalId>& ids, bool periodic)
{
  jz::EmstProblem<T> pr;
  pr.points = xyz.data();
  pr.numPoints = ids.size();
  pr.ids = ids.data();
  pr.periodic = periodic;
  return pr;
}

// The friends-of-friends groups of the points with their ids at l.
template <class T>
jz::FofProblem<T> fofProblem(
  const std::vector<T>& xyz, const std::vector<GlobalId>& ids, double l, bool periodic)
{
  jz::FofProblem<T> fp = jztest::fofProblem(xyz.data(), ids.size(), l, periodic);
  fp.ids = ids.data();
  return fp;
}

template <class T>
double dist2(const std::vector<T>& xyz, std::size_t a, std::size_t b, const jz::Periodicity& per,
  const double* lo)
{
  // Wrap like the tree does, then the exact nearest-image distance.
  T p[3], q[3];
  for (int d = 0; d < 3; ++d)
  {
    p[d] = xyz[3 * a + d];
    q[d] = xyz[3 * b + d];
    if (per.enabled())
    {
      const double L = per.length[d];
      auto wrap = [&](T x)
      {
        double w = double(x) - L * std::floor((double(x) - lo[d]) / L);
        T t = T(w);
        if (double(t) >= lo[d] + L || double(t) < lo[d])
          t = T(lo[d]);
        return t;
      };
      p[d] = wrap(p[d]);
      q[d] = wrap(q[d]);
    }
  }
  return jz::distance2(p, q, per);
}

// Core distances (k-th smallest distance, the point itself first) and Prim.
template <class T>
std::vector<Edge> bruteMst(
  const std::vector<T>& xyz, const std::vector<GlobalId>& ids, const jz::EmstProblem<T>& pr)
{
  const std::size_t n = ids.size();
  const jz::Periodicity per = jz::Periodicity::of(pr.periodic, pr.boxLo, pr.boxHi);
  std::vector<double> core(n, 0.0);
  const bool mutual = pr.metric == jz::EmstMetric::MutualReachability;
  if (mutual)
    for (std::size_t i = 0; i < n; ++i)
    {
      std::vector<double> d(n);
      for (std::size_t j = 0; j < n; ++j)
        d[j] = dist2(xyz, i, j, per, pr.boxLo);
      std::nth_element(d.begin(), d.begin() + pr.minSamples, d.end());
      core[i] = d[pr.minSamples];
    }
  auto w = [&](std::size_t a, std::size_t b)
  {
    const double d = dist2(xyz, a, b, per, pr.boxLo);
    return mutual ? std::max(d, std::max(core[a], core[b])) : d;
  };
  auto key = [&](std::size_t a, std::size_t b) {
    return Edge{ w(a, b), std::min(ids[a], ids[b]), std::max(ids[a], ids[b]) };
  };
  std::vector<bool> in(n, false);
  std::vector<Edge> best(n, Edge{ jz::kInfinity, 0, 0 });
  std::vector<std::size_t> from(n, 0);
  std::vector<Edge> out;
  in[0] = true;
  for (std::size_t j = 1; j < n; ++j)
    best[j] = key(0, j);
  for (std::size_t step = 1; step < n; ++step)
  {
    std::size_t next = n;
    for (std::size_t j = 0; j < n; ++j)
      if (!in[j] && (next == n || best[j] < best[next]))
        next = j;
    in[next] = true;
    out.push_back(best[next]);
    for (std::size_t j = 0; j < n; ++j)
      if (!in[j])
      {
        const Edge e = key(next, j);
        if (e < best[j])
          best[j] = e;
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <class T>
std::vector<Edge> edgesOf(const jz::EmstEdges& e, const std::vector<GlobalId>& ids)
{
  std::vector<Edge> out;
  for (std::size_t i = 0; i < e.size(); ++i)
    out.emplace_back(e.weight2[i], ids[e.from[i]], ids[e.to[i]]);
  return out;
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b)
{
  return a.size() == b.size() &&
    (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

bool identical(const jz::EmstEdges& a, const jz::EmstEdges& b)
{
  return a.from == b.from && a.to == b.to && sameBits(a.weight2, b.weight2) &&
    sameBits(a.core2, b.core2);
}

// got equals ref bit for bit; what names the case and the comparison.
void checkIdentical(const jz::EmstEdges& got, const jz::EmstEdges& ref, const std::string& what)
{
  if (identical(got, ref))
    return;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i)
    differ += got.from[i] != ref.from[i] || got.to[i] != ref.to[i] ||
      std::memcmp(&got.weight2[i], &ref.weight2[i], sizeof(double)) != 0;
  JZ_CHECK_MSG(false,
    what << ": " << got.size() << " edges, reference " << ref.size() << ", " << differ
         << " of the common ones differ; core distances "
         << (sameBits(got.core2, ref.core2) ? "same" : "differ"));
}

// The tree on the backend under test, with `threads` CPU threads (0: all).
// On the GPU it must really have been built there and equal the CPU's with
// as many threads, bit for bit.
template <class T>
jz::EmstEdges runEmst(const jz::EmstProblem<T>& pr, int threads, const std::string& what,
  jz::RunInfo* infoOut = nullptr)
{
  jz::RunControl control;
  control.numThreads = threads;
  jz::EmstEdges got;
  const jz::RunInfo info = jztest::onGpu() ? jz::computeEmst(pr, got, jz::Backend::CUDA)
                                           : jz::computeEmst(pr, got, jz::Backend::CPU, control);
  if (infoOut)
    *infoOut = info;
  if (!jztest::onGpu())
    return got;
  JZ_CHECK_MSG(info.backend == jz::Backend::CUDA,
    what << ": ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  jz::EmstEdges cpu;
  jz::computeEmst(pr, cpu, jz::Backend::CPU, control);
  checkIdentical(got, cpu, what + ": GPU vs CPU");
  return got;
}

// The EMST of the given points and ids against the brute-force Prim, edge for
// edge.
template <class T>
void checkPoints(const std::string& kind, const std::vector<T>& xyz,
  const std::vector<GlobalId>& ids, bool periodic, bool mutual, int threads)
{
  const std::size_t n = ids.size();
  jz::EmstProblem<T> pr = emstProblem(xyz, ids, false);
  pr.metric = mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
  pr.minSamples = 4;
  if (periodic)
  {
    pr.periodic = true;
    for (int d = 0; d < 3; ++d)
    {
      pr.boxLo[d] = 0.0;
      pr.boxHi[d] = kind == "lattice" ? double(std::ceil(std::cbrt(double(n)))) : 1.0;
    }
  }
  const jz::EmstEdges got = runEmst(pr, threads,
    kind + " n=" + std::to_string(n) + " periodic=" + std::to_string(periodic) +
      " mutual=" + std::to_string(mutual) + " threads=" + std::to_string(threads));
  const std::vector<Edge> want = bruteMst(xyz, ids, pr);
  std::vector<Edge> have = edgesOf<T>(got, ids);
  JZ_CHECK_EQ(have.size(), n - 1);
  // Sorted output, endpoints smaller id first.
  JZ_CHECK(std::is_sorted(have.begin(), have.end()));
  for (std::size_t i = 0; i < have.size(); ++i)
    JZ_CHECK(std::get<1>(have[i]) < std::get<2>(have[i]));
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < std::min(have.size(), want.size()); ++i)
    mismatches += have[i] != want[i];
  JZ_CHECK_MSG(mismatches == 0,
    kind << " n=" << n << " periodic=" << periodic << " mutual=" << mutual << " threads=" << threads
         << ": " << mismatches << " edges differ");
  if (mutual)
    JZ_CHECK_EQ(got.core2.size(), n);
}

template <class T>
void checkCase(
  const std::string& kind, std::size_t n, bool periodic, bool mutual, int threads, bool shuffleIds)
{
  std::vector<GlobalId> ids(n);
  if (shuffleIds)
    ids = shuffledIds(n, 3);
  else
    std::iota(ids.begin(), ids.end(), GlobalId(0));
  checkPoints<T>(kind, jztest::makePoints<T>(kind, n, 7), ids, periodic, mutual, threads);
}

template <class T>
void allKinds(bool periodic, bool mutual)
{
  for (const std::string& kind : jztest::allKinds())
  {
    if (periodic && (kind == "outliers" || kind == "offset" || kind == "mixedsign"))
      continue;
    checkCase<T>(kind, 1500, periodic, mutual, 2, kind == "duplicates");
  }
}

// Points, shuffled ids and the problem over them (the problem points into
// the case); minSamples 0: Euclidean.
template <class T>
struct PointCase
{
  std::vector<T> xyz;
  std::vector<GlobalId> ids;
  jz::EmstProblem<T> pr;

  PointCase(const std::string& kind, std::size_t n, bool periodic, int minSamples, unsigned seed)
    : xyz(jztest::makePoints<T>(kind, n, seed))
    , ids(shuffledIds(n, seed))
    , pr(emstProblem(xyz, ids, false))
  {
    pr.metric = minSamples > 0 ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
    pr.minSamples = minSamples > 0 ? minSamples : 5;
    if (periodic)
    {
      pr.periodic = true;
      for (int d = 0; d < 3; ++d)
      {
        pr.boxLo[d] = 0.0;
        pr.boxHi[d] = kind == "lattice" ? double(std::ceil(std::cbrt(double(n)))) : 1.0;
      }
    }
  }
  PointCase(const PointCase&) = delete;
};

// Sets too large for Prim: the tree against the CPU backend's, bit for bit.
// On the GPU the reference is the CPU with all threads (runEmst); on the
// CPU, whose tree is that reference, all threads against one. With `brute`,
// also against Prim.
template <class T>
void checkAgainstCpu(const std::string& kind, std::size_t n, bool periodic, int minSamples,
  double maxLength = jz::kInfinity, bool brute = false)
{
  PointCase<T> c(kind, n, periodic, minSamples, 7);
  c.pr.maxLength = maxLength;
  char what[160];
  std::snprintf(what, sizeof what, "%s %s n %zu periodic %d minSamples %d maxLength %g",
    kind.c_str(), jztest::typeName<T>(), n, int(periodic), minSamples, maxLength);
  const jz::EmstEdges got = runEmst(c.pr, 0, what);
  if (!jztest::onGpu())
  {
    jz::RunControl one;
    one.numThreads = 1;
    jz::EmstEdges single;
    jz::computeEmst(c.pr, single, jz::Backend::CPU, one);
    checkIdentical(got, single, std::string(what) + ": all threads vs one");
  }
  std::printf("  %s: %zu edges\n", what, got.size());
  if (brute)
    JZ_CHECK_MSG(edgesOf<T>(got, c.ids) == bruteMst(c.xyz, c.ids, c.pr), what << ": not Prim's");
}

// labelFofCut of the tree's order at l numbers the groups as labelFofGroups
// numbers the walk's (GroupId, GroupSize, count), and the catalogue from its
// reference members is bit for bit the one that finds them itself; minimum
// sizes 1, 3 and 20, one and two threads.
template <class T>
bool sameNumbering(const std::vector<T>& xyz, const std::vector<GlobalId>& ids, bool periodic,
  const jz::FofGroups& walk, jz::FofTreeOrder& order, double l)
{
  const std::size_t n = ids.size();
  bool same = true;
  for (GlobalId minSize : { 1, 3, 20 })
    for (int threads : { 1, 2 })
    {
      jz::RunControl control;
      control.numThreads = threads;
      std::vector<GlobalId> id0(n), size0(n), id1(n, 7), size1(n, 7);
      std::vector<jz::Index> reference;
      const std::size_t g0 = jz::labelFofGroups(walk.groupRoot.data(), walk.groupLabel.data(), n,
        minSize, id0.data(), size0.data(), control);
      const std::size_t g1 =
        jz::labelFofCut(order, l, minSize, id1.data(), size1.data(), &reference, control);
      same = same && g0 == g1 && id0 == id1 && size0 == size1 && reference.size() == g1;
      jz::FofCatalogueInput<T> in =
        jz::fofCatalogueInputFor(fofProblem(xyz, ids, l, periodic), id1.data(), g1, nullptr, nullptr);
      jz::FofCatalogue found, given;
      jz::computeFofCatalogue(in, found, control);
      in.reference = reference.data();
      jz::computeFofCatalogue(in, given, control);
      same = same && found.count == given.count && found.mass == given.mass &&
        found.centerOfMass == given.centerOfMass && found.inertiaRadius == given.inertiaRadius;
    }
  return same;
}

// The cut of the tree at l against the FoF walk, for many l: spread over the
// range of edge lengths, exactly at edge lengths (and one ulp either side),
// open and periodic, float and double.
template <class T>
void checkCuts(const std::string& kind, bool periodic)
{
  const std::size_t n = 4000;
  std::vector<T> xyz = jztest::makePoints<T>(kind, n, 9);
  const std::vector<GlobalId> ids = shuffledIds(n, 4);
  const jz::EmstProblem<T> pr = emstProblem(xyz, ids, periodic);
  jz::EmstEdges tree;
  jz::computeEmst(pr, tree, jz::Backend::CPU);
  jz::FofTreeOrder order;
  jz::buildFofTreeOrder(jz::EmstEdges(tree), n, ids.data(), order);
  std::vector<double> ls;
  const double maxw = std::sqrt(tree.weight2.back());
  for (int i = 1; i <= 12; ++i)
    ls.push_back(maxw * i / 12.0 * 0.6);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 12; ++i)
  {
    const double l = std::sqrt(tree.weight2[rng() % tree.size()]);
    if (l > 0)
    {
      ls.push_back(l);
      ls.push_back(std::nextafter(l, 0.0));
      ls.push_back(std::nextafter(l, 1e300));
    }
  }
  int bad = 0;
  for (double l : ls)
  {
    jz::FofGroups walk, cut;
    jz::computeFofGroups(fofProblem(xyz, ids, l, periodic), walk, jz::Backend::CPU);
    jz::fofGroupsFromTree(tree, n, ids.data(), l, cut);
    bad += walk.groupLabel != cut.groupLabel;
    bad += !sameNumbering(xyz, ids, periodic, walk, order, l);
  }
  JZ_CHECK_MSG(bad == 0,
    kind << " periodic=" << periodic << ": " << bad << " of " << ls.size()
         << " linking lengths differ from the FoF walk");
}

// The kinds of the larger sets.
const char* const kLargerKinds[] = { "uniform", "clustered", "duplicates", "runs", "lattice",
  "outliers" };

const char* const kCpuAlone =
  "exercises the CPU backend alone (kernels.TestEmst runs it; a GPU run would repeat it)";
} // namespace

JZ_TEST(FofFromTreeEqualsWalk)
{
  jztest::skipOnGpu(kCpuAlone);
  for (const char* kind : { "uniform", "clustered", "duplicates", "lattice" })
  {
    checkCuts<double>(kind, false);
    checkCuts<float>(kind, false);
  }
  checkCuts<double>("uniform", true);
  checkCuts<float>("clustered", true);
}

namespace
{
// Every kind against Prim; larger sets against the CPU; one set of shuffled
// ids against both; and a deeper tree (more node planes).
template <class T>
void euclidean(const char* againstBoth, const char* deeper)
{
  allKinds<T>(false, false);
  for (const char* kind : kLargerKinds)
    checkAgainstCpu<T>(kind, jztest::sized(3000, 30000), false, 0);
  checkAgainstCpu<T>(againstBoth, 1500, false, 0, jz::kInfinity, true);
  checkAgainstCpu<T>(deeper, jztest::sized(20000, 400000), false, 0);
}
} // namespace

JZ_TEST(EmstEuclideanDouble)
{
  euclidean<double>("clustered", "uniform");
}
JZ_TEST(EmstEuclideanFloat)
{
  euclidean<float>("runs", "clustered");
}
JZ_TEST(EmstPeriodic)
{
  allKinds<double>(true, false);
  allKinds<float>(true, false);
  for (const char* kind : { "uniform", "clustered", "runs", "lattice" })
  {
    checkAgainstCpu<double>(kind, jztest::sized(3000, 30000), true, 0);
    checkAgainstCpu<float>(kind, jztest::sized(3000, 30000), true, 0);
  }
  checkAgainstCpu<float>("uniform", 1500, true, 0, jz::kInfinity, true);
}
// Core distances (on the GPU from the CUDA kNN: K = minSamples + 1 on both
// of its leaf kernels, registers up to 32, warp lists above), bulk
// duplicates included.
JZ_TEST(EmstMutualReachability)
{
  allKinds<double>(false, true);
  allKinds<float>(true, true);
  for (int minSamples : { 1, 4, 16, 40 })
  {
    const std::size_t n = jztest::sized(3000, 20000);
    checkAgainstCpu<double>("clustered", n, false, minSamples);
    checkAgainstCpu<float>("runs", n, false, minSamples);
    checkAgainstCpu<float>("duplicates", n, true, minSamples);
  }
  checkAgainstCpu<double>("uniform", 1500, true, 4, jz::kInfinity, true);
  checkAgainstCpu<float>("runs", 1500, false, 4, jz::kInfinity, true);
}
// Bulk duplicates: half the points on 12 sites (runs of ~10 to ~n/5 copies,
// joined up front as one star each; under mutual reachability only the runs
// whose core distance is 0), and runs shorter than minSamples + 1 = 5 whose
// weights tie with their neighbours' (left to the rounds).
JZ_TEST(EmstRunsOfDuplicates)
{
  for (bool mutual : { false, true })
  {
    checkCase<double>("runs", 2000, false, mutual, 2, true);
    checkCase<float>("runs", 2000, true, mutual, 2, false);
    checkCase<double>("duplicates", 2000, false, mutual, 3, true);
  }
  // A pair of identical points (fewer than minSamples + 1 = 5: core distance
  // c > 0) next to a tight group with smaller ids whose core distances are
  // below c: the pair's own edge ties at weight c with the edges to the
  // group, and the smaller ids win, so the tree links both copies to point 0
  // and not to each other. Joining the pair up front would get this wrong.
  std::vector<double> xyz = { 0.1, 0, 0, 0.1, 0.01, 0, 0.1, 0, 0.01, 0.1, 0.01, 0.01, 0.11, 0, 0, 0,
    0, 0, 0, 0, 0 };
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> far(2.0, 3.0);
  for (int i = 0; i < 3 * 40; ++i)
    xyz.push_back(far(rng));
  std::vector<GlobalId> ids(xyz.size() / 3);
  std::iota(ids.begin(), ids.end(), GlobalId(0));
  for (int threads : { 1, 2 })
    checkPoints<double>("pair-next-to-group", xyz, ids, false, true, threads);
}
// With a maximum length the result is the brute-force tree's edges up to it,
// edge for edge: lengths between the quantiles of the edge lengths, exactly at
// an edge length and one ulp either side, below every edge and above all.
template <class T>
void checkForest(const std::string& kind, bool periodic, bool mutual)
{
  const std::size_t n = 1200;
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 11);
  const std::vector<GlobalId> ids = shuffledIds(n, 6);
  jz::EmstProblem<T> pr = emstProblem(xyz, ids, periodic);
  pr.metric = mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
  pr.minSamples = 4;
  const std::vector<Edge> tree = bruteMst(xyz, ids, pr);
  std::vector<double> ls = { 0.0, 1e-9, 1e9 };
  for (double f : { 0.1, 0.5, 0.9, 0.99 })
    ls.push_back(std::sqrt(std::get<0>(tree[std::size_t(f * double(n - 2))])));
  const double at = std::sqrt(std::get<0>(tree[n / 2]));
  for (double l : { at, std::nextafter(at, 0.0), std::nextafter(at, 1e300) })
    ls.push_back(l);
  for (double l : ls)
  {
    pr.maxLength = l;
    const jz::EmstEdges got = runEmst(pr, 0, kind + " forest");
    std::vector<Edge> want;
    for (const Edge& e : tree)
      if (std::get<0>(e) <= l * l)
        want.push_back(e);
    JZ_CHECK_MSG(edgesOf<T>(got, ids) == want,
      kind << " periodic=" << periodic << " mutual=" << mutual << " maxLength=" << l << ": "
           << got.size() << " edges, want " << want.size());
  }
}

JZ_TEST(EmstForestUpToMaxLength)
{
  for (bool mutual : { false, true })
  {
    checkForest<double>("clustered", false, mutual);
    checkForest<float>("uniform", true, mutual);
    checkForest<double>("runs", false, mutual);
  }
  checkForest<float>("duplicates", false, false);
  checkForest<double>("lattice", true, false);
  // Larger sets against the CPU: quantiles of the edge lengths, zero and
  // below every edge.
  const std::size_t n = jztest::sized(3000, 20000);
  for (int minSamples : { 0, 4 })
  {
    PointCase<double> c("clustered", n, false, minSamples, 3);
    jz::EmstEdges cpu;
    jz::computeEmst(c.pr, cpu, jz::Backend::CPU);
    std::vector<double> ls = { 0.0, 1e-12 };
    for (double f : { 0.1, 0.5, 0.9 })
      ls.push_back(std::sqrt(cpu.weight2[std::size_t(f * double(cpu.size() - 1))]));
    for (double l : ls)
    {
      checkAgainstCpu<double>("clustered", n, false, minSamples, l);
      checkAgainstCpu<float>("runs", n, true, minSamples, l);
    }
  }
}
JZ_TEST(EmstThreadCountsAndSizes)
{
  for (int threads : { 1, 3, 8 })
    checkCase<double>("clustered", 3000, false, false, threads, true);
  for (std::size_t n : { 1, 2, 3, 5, 49, 100, 1000 })
  {
    checkCase<double>("uniform", n, false, false, 2, false);
    checkAgainstCpu<double>("uniform", n, false, 0);
    if (n > 4)
    {
      checkCase<double>("uniform", n, false, true, 2, false);
      checkAgainstCpu<float>("uniform", n, true, 3);
    }
  }
}

JZ_TEST(EmstDistributedEqualsSerial)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 2000;
  std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 5);
  std::vector<GlobalId> ids(n);
  std::iota(ids.begin(), ids.end(), GlobalId(0));
  jz::EmstProblem<double> pr;
  pr.points = xyz.data();
  pr.numPoints = n;
  pr.ids = ids.data();
  jz::EmstEdges serial;
  jz::computeEmst(pr, serial, jz::Backend::CPU);
  const std::vector<Edge> want = edgesOf<double>(serial, ids);
  for (int ranks : { 1, 2, 3, 4 })
  {
    std::vector<std::vector<Edge>> parts(ranks);
    jztest::ThreadWorld world(ranks);
    world.run(
      [&](jz::Communicator& comm)
      {
        const int r = comm.rank();
        const std::size_t b = n * r / ranks, e = n * (r + 1) / ranks;
        jz::EmstProblem<double> piece = pr;
        piece.points = xyz.data() + 3 * b;
        piece.numPoints = e - b;
        piece.ids = ids.data() + b;
        jz::EmstRankEdges<double> out;
        jz::computeEmstDistributed(piece, comm, out, jz::Backend::CPU);
        for (std::size_t i = 0; i < out.weight2.size(); ++i)
          parts[r].emplace_back(out.weight2[i], out.fromId[i], out.toId[i]);
      });
    std::vector<Edge> all;
    for (auto& p : parts)
      all.insert(all.end(), p.begin(), p.end());
    std::sort(all.begin(), all.end());
    JZ_CHECK_MSG(all == want, ranks << " ranks");
  }
}

// Bad input fails before any backend runs; no points, no edges.
JZ_TEST(EmstBadInput)
{
  std::vector<double> xyz = jztest::makePoints<double>("uniform", 10, 1);
  jz::EmstProblem<double> pr;
  pr.points = xyz.data();
  pr.numPoints = 10;
  jz::EmstEdges out;
  xyz[7] = std::nan("");
  JZ_CHECK_THROWS(jz::computeEmst(pr, out, jztest::backend()));
  xyz[7] = 0.5;
  pr.metric = jz::EmstMetric::MutualReachability;
  pr.minSamples = 10;
  JZ_CHECK_THROWS(jz::computeEmst(pr, out, jztest::backend()));
  pr.minSamples = 0;
  JZ_CHECK_THROWS(jz::computeEmst(pr, out, jztest::backend()));
  pr.minSamples = 3;
  pr.periodic = true;
  pr.boxHi[1] = 0.0;
  JZ_CHECK_THROWS(jz::computeEmst(pr, out, jztest::backend()));
  pr.periodic = false;
  for (double bad : { -1e-300, -1.0, std::nan("") })
  {
    pr.maxLength = bad;
    JZ_CHECK_THROWS(jz::computeEmst(pr, out, jztest::backend()));
  }
  pr.maxLength = jz::kInfinity;
  pr.numPoints = 0;
  jz::computeEmst(pr, out, jztest::backend());
  JZ_CHECK_EQ(out.size(), 0u);
}

// Bad input fails before the GPU runs; Device CUDA without a usable GPU is a
// clear error and Auto runs on the CPU; with a GPU, Auto runs there, and
// HDBSCAN (which calls the EMST) follows the same dispatch. This case runs
// on every machine and backend.
JZ_TEST(DeviceRulesAndBadInput)
{
  std::vector<double> xyz = jztest::makePoints<double>("clustered", 500, 1);
  jz::EmstProblem<double> pr;
  pr.points = xyz.data();
  pr.numPoints = 500;
  jz::EmstEdges out;
  jz::HdbscanOptions options;
  options.minClusterSize = 10;
  jz::HdbscanResult clusters;
  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("  no GPU (%s): Device CUDA must fail, Auto runs on the CPU\n", why.c_str());
    for (int hdbscan : { 0, 1 })
      try
      {
        if (hdbscan)
          jz::computeHdbscan(pr, options, clusters, jz::Backend::CUDA);
        else
          jz::computeEmst(pr, out, jz::Backend::CUDA);
        JZ_CHECK_MSG(false, "Device CUDA ran without a GPU");
      }
      catch (const jz::Error& e)
      {
        JZ_CHECK_MSG(std::string(e.what()).find("no usable GPU") != std::string::npos, e.what());
      }
    JZ_CHECK(jz::computeEmst(pr, out, jz::Backend::Auto).backend == jz::Backend::CPU);
    JZ_CHECK_EQ(out.size(), 499u);
    JZ_CHECK(
      jz::computeHdbscan(pr, options, clusters, jz::Backend::Auto).backend == jz::Backend::CPU);
    return;
  }
  const jz::RunInfo info = jz::computeEmst(pr, out, jz::Backend::Auto);
  JZ_CHECK_MSG(info.backend == jz::Backend::CUDA,
    "Auto ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  // HDBSCAN on the GPU: the CPU's clusters, bit for bit.
  jz::HdbscanResult onCpu;
  jz::computeHdbscan(pr, options, onCpu, jz::Backend::CPU);
  const jz::RunInfo h = jz::computeHdbscan(pr, options, clusters, jz::Backend::CUDA);
  JZ_CHECK(h.backend == jz::Backend::CUDA);
  JZ_CHECK(clusters.clusterId == onCpu.clusterId &&
    sameBits(clusters.probability, onCpu.probability) &&
    sameBits(clusters.outlierScore, onCpu.outlierScore) &&
    sameBits(clusters.coreDistance, onCpu.coreDistance));
  xyz[3 * 42 + 1] = NAN;
  JZ_CHECK_THROWS(jz::computeEmst(pr, out, jz::Backend::CUDA));
  xyz[3 * 42 + 1] = 0.5;
  pr.metric = jz::EmstMetric::MutualReachability;
  pr.minSamples = 500;
  JZ_CHECK_THROWS(jz::computeEmst(pr, out, jz::Backend::CUDA));
  pr.numPoints = 0;
  JZ_CHECK(jz::computeEmst(pr, out, jz::Backend::CUDA).backend == jz::Backend::CUDA);
  JZ_CHECK_EQ(out.size(), 0u);
}

// HDBSCAN's parameters at their bounds, as the hdbscan library takes them:
// MinClusterSize 1 is an error ("Min cluster size must be greater than
// one"), 2 is the smallest cluster size; MinSamples beyond the points is
// min(n - 1, MinSamples).
JZ_TEST(HdbscanParametersAtTheirBounds)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 400;
  std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 5);
  jz::EmstProblem<double> pr;
  pr.points = xyz.data();
  pr.numPoints = n;
  jz::HdbscanOptions options;
  jz::HdbscanResult result;
  for (int bad : { 1, 0, -4 })
  {
    options.minClusterSize = bad;
    try
    {
      jz::computeHdbscan(pr, options, result, jz::Backend::CPU);
      JZ_CHECK_MSG(false, "MinClusterSize " << bad << " was accepted");
    }
    catch (const jz::Error& e)
    {
      JZ_CHECK_MSG(std::string(e.what()).find("MinClusterSize") != std::string::npos, e.what());
    }
  }
  options.minClusterSize = 2;
  jz::computeHdbscan(pr, options, result, jz::Backend::CPU);
  JZ_CHECK_EQ(result.clusterId.size(), n);
  JZ_CHECK(result.numClusters >= 1);
  std::size_t smallest = n;
  for (std::size_t c = 0; c < result.numClusters; ++c)
    smallest = std::min<std::size_t>(smallest,
      std::size_t(std::count(result.clusterId.begin(), result.clusterId.end(), jz::GlobalId(c))));
  JZ_CHECK_MSG(smallest >= 2, "a cluster of " << smallest);

  options.minClusterSize = 10;
  jz::HdbscanResult clipped, beyond;
  options.minSamples = int(n) - 1;
  jz::computeHdbscan(pr, options, clipped, jz::Backend::CPU);
  options.minSamples = int(n) + 50;
  jz::computeHdbscan(pr, options, beyond, jz::Backend::CPU);
  JZ_CHECK(beyond.clusterId == clipped.clusterId && beyond.probability == clipped.probability &&
    beyond.coreDistance == clipped.coreDistance);
}

// --- Cases of the GPU alone -------------------------------------------------
// The GPU backend's own machinery (src/emst/EmstCuda.cu, Boruvka*Cuda.cu):
// leaf batches, repeatability, and the small case for compute-sanitizer.
// They run with --backend=cuda (CTest's kernels.TestEmstCuda,
// Kernels/scripts/gpu-check.sh) and skip on the CPU.

// Many leaf batches (JZ_CUDA_LEAF_BATCH_ENTRIES) give the edges of one
// batch, and a second run the same edges (no races: every choice is exact,
// every reduction a minimum under a total order).
JZ_TEST(GpuLeafBatchesAndRepeatability)
{
  jztest::skipOnCpu("leaf batches and repeatability of the GPU's rounds: run with --backend=cuda");
  PointCase<float> c("clustered", 50000, false, 0, 5);
  const jz::EmstEdges whole = runEmst(c.pr, 0, "one batch");
  setenv("JZ_CUDA_LEAF_BATCH_ENTRIES", "3000", 1);
  jz::RunInfo many;
  const jz::EmstEdges batched = runEmst(c.pr, 0, "leaf batches", &many);
  unsetenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
  double batches = 0;
  for (const auto& k : many.counters)
    if (k.first == "gpu boruvka leaf batches")
      batches = std::max(batches, k.second);
  JZ_CHECK_MSG(batches > 5, "leaf batches " << batches);
  JZ_CHECK(identical(batched, whole));
  JZ_CHECK(identical(runEmst(c.pr, 0, "second run"), whole));
}

// A small case that reaches every kernel (node planes and leaves, mutual
// reachability with both core-distance kernels' copies of duplicate runs,
// periodic images, leaf batches, a finite maximum length), for
// compute-sanitizer (Kernels/scripts/gpu-check.sh).
JZ_TEST(GpuSanitizerSmall)
{
  jztest::skipOnCpu("the small case for compute-sanitizer: run with --backend=cuda");
  PointCase<float> c("clustered", 20000, true, 4, 8);
  for (std::size_t i = 0; i < 300; ++i) // a bulk duplicate: a point leaf
    for (int k = 0; k < 3; ++k)
      c.xyz[3 * (7 * i) + k] = 0.25f;
  setenv("JZ_CUDA_LEAF_BATCH_ENTRIES", "2000", 1);
  const jz::EmstEdges whole = runEmst(c.pr, 0, "sanitizer case");
  c.pr.maxLength = std::sqrt(whole.weight2[whole.size() / 2]);
  runEmst(c.pr, 0, "sanitizer case, finite maximum length");
  unsetenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
}

JZ_TEST_MAIN()
