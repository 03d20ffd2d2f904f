// Digests of the CPU kNN, tree and FoF outputs of many configurations, one
// line each, for checking that a change to the leaf walk or the tree build
// leaves every output bit-identical: run the old and the new build and diff
// the lines.
//   jz_output_digest [quick] [knn|tree|more] [dump FILE]
// Set 1 (140 lines): 7 point kinds x K in {1, 7, 16, 33, 64} x open/periodic
// x float/double; h, densities, neighbour distances and ids, then the
// density alone (the density-only path); masses at K = 7 (float) and 16
// (double), top-hat at K = 33 (float).
// Set 2 (70 lines): separate query points, global ids, neighbour lists or
// not, top-hat, 1 to 3 threads.
// Set 3 (252 lines, `tree` alone): the tree (sorted points, every plane's
// splits, levels and boxes; leaves of 48 and of 192) and FoF's roots and
// labels on 28 point sets (7 kinds x float/double x open/periodic) at 1, 2
// and 3 threads.
// Set 4 (`more` alone): the EMST (Euclidean and mutual reachability),
// HDBSCAN*, tree gravity (theta 0 and 0.6), FoF halos with their catalogue
// and the catalogue additions, on 4 kinds x float/double x open/periodic at
// 1 and 2 threads.
// Each line is a 64-bit FNV-1a digest of the raw output bytes; `dump FILE`
// also writes those bytes (set 1 only) for a byte-for-byte cmp.
// To check against a build without this tool, compile this file against
// that build's library (Kernels/include, Kernels/tests and libjz_kernels.a;
// with -lcudart when it was built with CUDA).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <omp.h>

#include "../tests/PointSets.h"
#include "../tests/Problems.h"
#include "jz/Emst.h"
#include "jz/Fof.h"
#include "jz/Gravity.h"
#include "jz/HaloProperties.h"
#include "jz/Hdbscan.h"
#include "jz/Knn.h"
#include "jz/Tree.h"

namespace
{
std::FILE* dumpFile = nullptr;

struct Digest
{
  unsigned long long h = 1469598103934665603ull;
  // The arrays' bytes, in order.
  template <class... V>
  void add(const std::vector<V>&... v)
  {
    (addOne(v), ...);
  }

private:
  template <class V>
  void addOne(const std::vector<V>& v)
  {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t i = 0; i < v.size() * sizeof(V); ++i)
    {
      h ^= b[i];
      h *= 1099511628211ull;
    }
    if (dumpFile && !v.empty())
      std::fwrite(v.data(), sizeof(V), v.size(), dumpFile);
  }
};

const char* precision(float)
{
  return "float";
}
const char* precision(double)
{
  return "double";
}

// Set 1: the same problem with neighbour lists, then density only.
template <class T>
void allOutputs(
  const std::string& kind, std::size_t n, int k, bool periodic, bool masses, bool topHat)
{
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n);
  jz::KnnProblem<T> pr = jztest::knnProblem(xyz.data(), n, k);
  std::vector<double> m(n);
  for (std::size_t i = 0; i < n; ++i)
    m[i] = 1.0 + double(i % 7) * 0.25;
  if (masses)
    pr.sourceMasses = m.data();
  if (periodic)
    jztest::setPeriodicCube(pr, { -0.2, -0.1, 0.0 }, 0.9);
  std::vector<T> h(n), rho(n), dist(n * k), rho2(n);
  std::vector<jz::GlobalId> ids(n * k);
  jz::KnnResults<T> res = jztest::knnResults(h, rho, ids, dist);
  if (topHat)
    res.estimator = jz::DensityEstimator::TopHat;
  jz::computeKnn(pr, res, jz::Backend::CPU);
  jz::KnnResults<T> densityOnly;
  densityOnly.density = rho2.data();
  densityOnly.estimator = res.estimator;
  jz::computeKnn(pr, densityOnly, jz::Backend::CPU);
  Digest d;
  d.add(h, rho, dist, ids, rho2);
  std::printf("set1 %s %s n=%zu k=%d periodic=%d masses=%d tophat=%d: %016llx\n", kind.c_str(),
    precision(T()), n, k, int(periodic), int(masses), int(topHat), d.h);
}

// Set 2: queries, ids, lists and thread counts.
template <class T>
void variant(const std::string& kind, std::size_t n, int k, bool periodic, bool queries, bool lists,
  bool topHat, bool globalIds, int threads)
{
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 7);
  const std::vector<T> q = jztest::makePoints<T>("uniform", n / 3, 9);
  std::vector<double> mass(n);
  std::vector<jz::GlobalId> gid(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    mass[i] = 1 + double(i % 7) * 0.25;
    gid[i] = jz::GlobalId((i * 2654435761u) % 1000003);
  }
  jz::KnnProblem<T> pr = jztest::knnProblem(xyz.data(), n, k);
  // Kinds far from the unit box stay open.
  pr.periodic = periodic && kind != "offset" && kind != "outliers" && kind != "lattice";
  if (queries)
  {
    pr.queries = q.data();
    pr.numQueries = n / 3;
  }
  pr.sourceMasses = mass.data();
  if (globalIds)
    pr.sourceIds = gid.data();
  const std::size_t nq = queries ? n / 3 : n;
  std::vector<T> h(nq), rho(nq), dist(lists ? nq * k : 0);
  std::vector<jz::GlobalId> nid(lists ? nq * k : 0);
  jz::KnnResults<T> r;
  r.smoothingLength = h.data();
  r.density = rho.data();
  if (topHat)
    r.estimator = jz::DensityEstimator::TopHat;
  if (lists)
  {
    r.neighborIds = nid.data();
    r.neighborDistances = dist.data();
  }
  jz::RunControl rc;
  rc.numThreads = threads;
  jz::computeKnn(pr, r, jz::Backend::CPU, rc);
  std::FILE* keep = dumpFile;
  dumpFile = nullptr;
  Digest d;
  d.add(h, rho, dist, nid);
  dumpFile = keep;
  std::printf("set2 %s %s n=%zu k=%d periodic=%d queries=%d lists=%d tophat=%d ids=%d "
              "threads=%d: %016llx\n",
    kind.c_str(), precision(T()), n, k, int(periodic), int(queries), int(lists), int(topHat),
    int(globalIds), threads, d.h);
}
// Set 3: the tree and FoF of one point set.
template <class T>
void treeAndFof(const std::string& kind, std::size_t n, bool periodic, int threads)
{
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 5);
  const bool wrap = periodic && kind != "offset" && kind != "outliers" && kind != "lattice";
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  const jz::Periodicity per = jz::Periodicity::of(wrap, lo, hi);
  for (int leafSize : { 48, 192 })
  {
    jz::TreeBuildOptions options;
    options.leafSize = leafSize;
    jz::ZTree<T> tree;
    omp_set_num_threads(threads);
    jz::buildTreeCpu(xyz.data(), jz::Index(n), static_cast<const T*>(nullptr), 0, per, lo, options,
      tree, jz::RunControl());
    Digest d;
    d.add(tree.sources.x, tree.sources.y, tree.sources.z, tree.sources.inputIndex);
    for (const jz::TreePlane<T>& plane : tree.planes)
    {
      d.add(plane.sourceSplit, plane.querySplit, plane.childSplit, plane.level, plane.sourceBox);
    }
    std::printf("set3 tree %s %s n=%zu periodic=%d leaf=%d threads=%d: %016llx\n", kind.c_str(),
      precision(T()), n, int(wrap), leafSize, threads, d.h);
  }
  jz::FofProblem<T> pr = jztest::fofProblem(xyz.data(), n, 0.2 * std::cbrt(1.0 / double(n)), wrap);
  if (kind == "lattice")
  {
    for (int d = 0; d < 3; ++d)
      pr.boxLo[d] = -1, pr.boxHi[d] = 200;
    pr.linkingLength *= 60;
  }
  jz::FofGroups out;
  jz::RunControl rc;
  rc.numThreads = threads;
  jz::computeFofGroups(pr, out, jz::Backend::CPU, rc);
  Digest d;
  d.add(out.groupLabel, out.groupRoot);
  std::printf("set3 fof %s %s n=%zu periodic=%d threads=%d: %016llx\n", kind.c_str(),
    precision(T()), n, int(wrap), threads, d.h);
}

// Set 4: the other algorithms on one point set.
template <class T>
void moreAlgorithms(const std::string& kind, std::size_t n, bool periodic, int threads)
{
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 11);
  std::vector<double> mass(n), vel(3 * n);
  for (std::size_t i = 0; i < n; ++i)
  {
    mass[i] = 1 + double(i % 5) * 0.5;
    for (int k = 0; k < 3; ++k)
      vel[3 * i + k] = double((i * 31 + std::size_t(k)) % 23) - 11;
  }
  jz::RunControl rc;
  rc.numThreads = threads;
  omp_set_num_threads(threads);
  const std::string what = kind + " " + precision(T()) + " n=" + std::to_string(n) +
    " periodic=" + std::to_string(int(periodic)) + " threads=" + std::to_string(threads);

  for (jz::EmstMetric metric : { jz::EmstMetric::Euclidean, jz::EmstMetric::MutualReachability })
  {
    jz::EmstProblem<T> pr;
    pr.points = xyz.data();
    pr.numPoints = n;
    pr.metric = metric;
    pr.minSamples = 7;
    pr.periodic = periodic;
    jz::EmstEdges e;
    jz::computeEmst(pr, e, jz::Backend::CPU, rc);
    Digest d;
    d.add(e.from, e.to, e.weight2, e.core2);
    std::printf("set4 emst %s metric=%d: %016llx\n", what.c_str(), int(metric), d.h);
  }
  {
    jz::EmstProblem<T> pr;
    pr.points = xyz.data();
    pr.numPoints = n;
    pr.periodic = periodic;
    jz::HdbscanOptions o;
    o.minClusterSize = 25;
    jz::HdbscanResult r;
    jz::computeHdbscan(pr, o, r, jz::Backend::CPU, rc);
    Digest d;
    d.add(r.clusterId, r.probability, r.outlierScore, r.coreDistance);
    std::printf("set4 hdbscan %s: %016llx\n", what.c_str(), d.h);
  }
  for (double theta : { 0.0, 0.6 })
  {
    const std::size_t m = theta == 0 ? n / 8 : n;
    // Isolated only: `periodic` varies the softening.
    const jz::GravityProblem<T> pr =
      jztest::gravityProblem(xyz.data(), m, mass.data(), theta, periodic ? 1e-3 : 0);
    std::vector<double> phi(m), acc(3 * m);
    jz::GravityResults res;
    res.potential = phi.data();
    res.acceleration = acc.data();
    jz::computeGravity(pr, res, jz::Backend::CPU, rc);
    Digest d;
    d.add(phi, acc);
    std::printf("set4 gravity %s theta=%g: %016llx\n", what.c_str(), theta, d.h);
  }
  const jz::FofProblem<T> fp =
    jztest::fofProblem(xyz.data(), n, 0.2 * std::cbrt(1.0 / double(n)), periodic);
  jz::FofHaloOptions fo;
  fo.minimumGroupSize = 10;
  fo.masses = mass.data();
  fo.velocities = vel.data();
  jz::FofHalos halos;
  jz::computeFofHalos(fp, fo, halos, jz::Backend::CPU, rc);
  {
    const jz::FofCatalogue& c = halos.catalogue;
    Digest d;
    d.add(halos.groupId, halos.groupSize, c.count, c.mass, c.centerOfMass, c.inertiaRadius,
      c.meanVelocity, c.velocityDispersion);
    std::printf("set4 halos %s groups=%zu: %016llx\n", what.c_str(), halos.numGroups, d.h);
  }
  const jz::HaloPropertiesInput<T> in = jztest::haloPropertiesInput(
    xyz.data(), n, mass.data(), halos.groupId.data(), halos.numGroups, halos.catalogue, periodic);
  jz::HaloPropertiesOptions o;
  o.potentialCentres = true;
  o.softening = 1e-4;
  o.sphericalOverdensity = true;
  o.referenceDensity = 3.0 * double(n);
  jz::HaloProperties out;
  jz::SerialCommunicator comm;
  jz::computeHaloProperties(comm, in, o, out, rc);
  Digest d;
  d.add(out.centreOfPotential, out.mostBoundId, out.soRadius, out.soMass, out.soCount);
  std::printf("set4 haloproperties %s: %016llx\n", what.c_str(), d.h);
}
} // namespace

int main(int argc, char** argv)
{
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool quick = false, knn = true, tree = true, more = true;
  for (int a = 1; a < argc; ++a)
  {
    if (!std::strcmp(argv[a], "quick"))
      quick = true;
    else if (!std::strcmp(argv[a], "knn"))
      tree = more = false;
    else if (!std::strcmp(argv[a], "tree"))
      knn = more = false;
    else if (!std::strcmp(argv[a], "more"))
      knn = tree = false;
    else if (!std::strcmp(argv[a], "dump") && a + 1 < argc)
      dumpFile = std::fopen(argv[++a], "wb");
  }
  const char* kinds[] = { "uniform", "clustered", "duplicates", "lattice", "planar", "outliers",
    "offset" };
  for (const std::string kind : kinds)
    for (int k : { 1, 7, 16, 33, 64 })
      if (knn)
        for (bool periodic : { false, true })
        {
          allOutputs<float>(kind, quick ? 5000 : 20000, k, periodic, k == 7, k == 33);
          allOutputs<double>(kind, quick ? 3000 : 12000, k, periodic, k == 16, false);
        }
  const std::size_t n = quick ? 60000 : 250000;
  for (const std::string kind : kinds)
    for (bool periodic : { false, true })
      if (knn)
      {
        // Two thirds of "duplicates" are one point: kNN there is quadratic.
        const std::size_t m = kind == "duplicates" ? 3000 : n;
        variant<float>(kind, m, 16, periodic, false, false, false, false, 2);
        variant<double>(kind, m, 16, periodic, false, true, false, true, 3);
        variant<float>(kind, m / 2, 1, periodic, true, true, true, false, 2);
        variant<float>(kind, m / 2, 40, periodic, false, false, false, true, 1);
        variant<double>(kind, m / 2, 33, periodic, true, false, true, false, 2);
      }
  for (const std::string kind : kinds)
    for (bool periodic : { false, true })
      for (int threads : { 1, 2, 3 })
        if (tree)
        {
          const std::size_t m = kind == "duplicates" ? 30000 : n;
          treeAndFof<float>(kind, m, periodic, threads);
          treeAndFof<double>(kind, m, periodic, threads);
        }
  for (const char* kind : { "uniform", "clustered", "duplicates", "planar" })
    for (bool periodic : { false, true })
      for (int threads : { 1, 2 })
        if (more)
        {
          const std::size_t m = quick ? 4000 : 20000;
          moreAlgorithms<float>(kind, m, periodic, threads);
          moreAlgorithms<double>(kind, m, periodic, threads);
        }
  if (dumpFile)
    std::fclose(dumpFile);
  return 0;
}
