// Every public kernel entry point run with 1, 2, 3 and 5 threads on a
// clustered set (open and periodic, float and double where cheap): every
// output array must have the same bytes as the one-thread run. The thread
// count is set both in RunControl::numThreads and as OpenMP's default, so a
// loop that ignores the control shows up too. Results are compared as bytes,
// never with a tolerance: the product promises the same answer on any
// partition and backend, and the thread count must not change it either.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "PointSets.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/Distributed.h"
#include "jz/Emst.h"
#include "jz/Fof.h"
#include "jz/FofFromTree.h"
#include "jz/Gravity.h"
#include "jz/HaloProperties.h"
#include "jz/HaloTracking.h"
#include "jz/Hdbscan.h"
#include "jz/Knn.h"
#include "jz/SphMaps.h"
#include "jz/SphSmooth.h"
#include "jz/Subhalo.h"

namespace
{
using jz::GlobalId;

// One output array as bytes, with its element size (for the index of the
// first difference in messages).
struct Output
{
  std::string name;
  std::size_t elementSize = 1;
  std::vector<unsigned char> bytes;
};
using Outputs = std::vector<Output>;

template <class V>
void add(Outputs& out, const std::string& name, const V* values, std::size_t count)
{
  Output o;
  o.name = name;
  o.elementSize = sizeof(V);
  o.bytes.resize(count * sizeof(V));
  if (count)
    std::memcpy(o.bytes.data(), values, count * sizeof(V));
  out.push_back(std::move(o));
}

template <class V>
void add(Outputs& out, const std::string& name, const std::vector<V>& values)
{
  add(out, name, values.data(), values.size());
}

// "" when b has a's bytes, else which elements differ.
std::string difference(const Output& a, const Output& b)
{
  std::ostringstream os;
  if (a.bytes.size() != b.bytes.size())
  {
    os << a.name << ": " << b.bytes.size() / b.elementSize << " elements, not "
       << a.bytes.size() / a.elementSize;
    return os.str();
  }
  std::size_t first = a.bytes.size(), count = 0;
  for (std::size_t e = 0; e < a.bytes.size(); e += a.elementSize)
    if (std::memcmp(&a.bytes[e], &b.bytes[e], a.elementSize) != 0)
    {
      first = std::min(first, e / a.elementSize);
      ++count;
    }
  if (count == 0)
    return std::string();
  os << a.name << ": " << count << " of " << a.bytes.size() / a.elementSize
     << " elements differ, the first at " << first;
  return os.str();
}

// The thread counts compared with one thread's run.
constexpr int kThreadCounts[] = { 2, 3, 5 };

// Runs `run` with every thread count (the control's and OpenMP's default)
// and checks every output against one thread's.
void compareThreadCounts(
  const std::string& what, const std::function<Outputs(const jz::RunControl&)>& run)
{
  const int saved = omp_get_max_threads();
  auto withThreads = [&](int threads)
  {
    omp_set_num_threads(threads);
    jz::RunControl control;
    control.numThreads = threads;
    Outputs out = run(control);
    omp_set_num_threads(saved);
    return out;
  };
  const Outputs one = withThreads(1);
  JZ_CHECK_MSG(!one.empty(), what << ": no outputs");
  for (int threads : kThreadCounts)
  {
    const Outputs many = withThreads(threads);
    JZ_CHECK_EQ(many.size(), one.size());
    for (std::size_t i = 0; i < std::min(one.size(), many.size()); ++i)
    {
      const std::string d = difference(one[i], many[i]);
      JZ_CHECK_MSG(d.empty(), what << ", " << threads << " threads: " << d);
    }
  }
}

constexpr std::size_t kPoints = 30000;

// The clustered set in the unit box (periodic: folded into it), as T.
template <class T>
std::vector<T> clustered(std::size_t n, bool periodic, unsigned seed = 5)
{
  std::vector<double> xyz = jztest::makePoints<double>("clustered", n, seed);
  if (periodic)
    for (double& v : xyz)
      v -= std::floor(v);
  return std::vector<T>(xyz.begin(), xyz.end());
}

std::vector<double> masses(std::size_t n)
{
  std::vector<double> m(n);
  for (std::size_t i = 0; i < n; ++i)
    m[i] = 1.0 + 0.25 * double(i % 7);
  return m;
}

// Random velocities, some members bound to their clump and some not.
std::vector<double> velocities(std::size_t n, double sigma)
{
  std::mt19937_64 rng(17);
  std::normal_distribution<double> g(0, sigma);
  std::vector<double> v(3 * n);
  for (double& x : v)
    x = g(rng);
  return v;
}

// Global ids that are not the input indices (a permutation).
std::vector<GlobalId> permutedIds(std::size_t n)
{
  std::vector<GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = GlobalId((i * 7919) % n);
  return ids;
}

template <class P>
void unitBox(P& p, bool periodic)
{
  p.periodic = periodic;
  for (int d = 0; d < 3; ++d)
  {
    p.boxLo[d] = 0;
    p.boxHi[d] = 1;
  }
}

std::string label(const char* what, const char* type, bool periodic)
{
  return std::string(what) + " " + type + (periodic ? " periodic" : "");
}

// Runs body(comm, a, b) on two simulated ranks, rank r holding points
// [a, b) of n (its outputs for them); the ranks' outputs concatenated in
// rank order. The ranks' threads take the count from the control.
using RankBody = std::function<Outputs(jz::Communicator&, std::size_t, std::size_t)>;
Outputs onTwoRanks(std::size_t n, const RankBody& body)
{
  std::vector<Outputs> parts(2);
  jztest::ThreadWorld world(2);
  world.run(
    [&](jz::Communicator& comm)
    {
      const auto r = std::size_t(comm.rank());
      parts[r] = body(comm, n * r / 2, n * (r + 1) / 2);
    });
  Outputs out = parts[0];
  JZ_CHECK_EQ(parts[1].size(), out.size());
  for (std::size_t i = 0; i < std::min(out.size(), parts[1].size()); ++i)
    out[i].bytes.insert(out[i].bytes.end(), parts[1][i].bytes.begin(), parts[1][i].bytes.end());
  return out;
}

// body on one rank (a SerialCommunicator, all n points) or on two.
Outputs onRanks(int ranks, std::size_t n, const RankBody& body)
{
  if (ranks == 2)
    return onTwoRanks(n, body);
  jz::SerialCommunicator comm;
  return body(comm, 0, n);
}

std::string rankLabel(int ranks)
{
  return ranks == 1 ? std::string() : " on " + std::to_string(ranks) + " ranks";
}

// ---------------------------------------------------------------- kNN

// The kNN's outputs for nq queries: results pointing into them, and them
// as Outputs.
template <class T>
struct KnnBuffers
{
  std::vector<T> h, rho, dist;
  std::vector<GlobalId> nbr;
  jz::KnnResults<T> results;

  KnnBuffers(std::size_t nq, std::size_t k, jz::DensityEstimator estimator)
    : h(nq)
    , rho(nq)
    , dist(nq * k)
    , nbr(nq * k)
  {
    results.estimator = estimator;
    results.smoothingLength = h.data();
    results.density = rho.data();
    results.neighborIds = nbr.data();
    results.neighborDistances = dist.data();
  }

  KnnBuffers(const KnnBuffers&) = delete; // results point into this one's arrays

  Outputs outputs() const
  {
    Outputs out;
    add(out, "SmoothingLength", h);
    add(out, "Density", rho);
    add(out, "NeighborIds", nbr);
    add(out, "NeighborDistances", dist);
    return out;
  }
};

template <class T>
void knnCase(
  bool periodic, jz::DensityEstimator estimator, bool separateQueries, std::size_t n = kPoints)
{
  const std::vector<T> xyz = clustered<T>(n, periodic);
  const std::vector<T> queries = clustered<T>(n / 3, periodic, 9);
  const std::vector<double> m = masses(n);
  const std::vector<GlobalId> ids = permutedIds(n);
  const int k = 16;
  compareThreadCounts(
    label(separateQueries ? "kNN queries" : "kNN", jztest::typeName<T>(), periodic) +
      (estimator == jz::DensityEstimator::TopHat ? " top-hat" : " SPH") + " n " + std::to_string(n),
    [&](const jz::RunControl& control)
    {
      jz::KnnProblem<T> p;
      p.sources = xyz.data();
      p.numSources = n;
      if (separateQueries)
      {
        p.queries = queries.data();
        p.numQueries = queries.size() / 3;
      }
      p.sourceMasses = m.data();
      p.sourceIds = ids.data();
      p.k = k;
      unitBox(p, periodic);
      const KnnBuffers<T> b(separateQueries ? p.numQueries : n, std::size_t(k), estimator);
      jz::computeKnn(p, b.results, jz::Backend::CPU, control);
      return b.outputs();
    });
}

JZ_TEST(KnnDensityAndNeighbours)
{
  for (bool periodic : { false, true })
  {
    knnCase<float>(periodic, jz::DensityEstimator::SphCubicSpline, false);
    knnCase<double>(periodic, jz::DensityEstimator::SphCubicSpline, false);
  }
  knnCase<float>(false, jz::DensityEstimator::TopHat, false);
  knnCase<double>(true, jz::DensityEstimator::SphCubicSpline, true);
  // Above the size where the tree's planes are built in parallel.
  knnCase<float>(false, jz::DensityEstimator::SphCubicSpline, false, 120000);
}

// ---------------------------------------------------------------- FoF

template <class T>
jz::EmstProblem<T> emstProblem(
  const std::vector<T>& xyz, const std::vector<GlobalId>& ids, jz::EmstMetric metric, bool periodic)
{
  jz::EmstProblem<T> p;
  p.points = xyz.data();
  p.numPoints = xyz.size() / 3;
  p.metric = metric;
  p.ids = ids.data();
  unitBox(p, periodic);
  return p;
}

constexpr double kLinkingLength = 0.0064; // b = 0.2 of the mean spacing

template <class T>
jz::FofProblem<T> fofProblem(
  const std::vector<T>& xyz, const std::vector<GlobalId>& ids, bool periodic)
{
  jz::FofProblem<T> p;
  p.points = xyz.data();
  p.numPoints = xyz.size() / 3;
  p.linkingLength = kLinkingLength;
  p.ids = ids.data();
  unitBox(p, periodic);
  return p;
}

void addCatalogue(Outputs& out, const jz::FofCatalogue& c)
{
  add(out, "Count", c.count);
  add(out, "Mass", c.mass);
  add(out, "CenterOfMass", c.centerOfMass);
  add(out, "InertiaRadius", c.inertiaRadius);
  add(out, "MeanVelocity", c.meanVelocity);
  add(out, "VelocityDispersion", c.velocityDispersion);
}

template <class T>
void fofCase(bool periodic)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<double> m = masses(kPoints), v = velocities(kPoints, 1.0);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  for (GlobalId minimumSize : { 1, 20 })
    compareThreadCounts(label("FoF halos", jztest::typeName<T>(), periodic) + " minimum " +
        std::to_string(minimumSize),
      [&](const jz::RunControl& control)
      {
        const jz::FofProblem<T> p = fofProblem(xyz, ids, periodic);
        jz::FofGroups groups;
        jz::computeFofGroups(p, groups, jz::Backend::CPU, control);
        jz::FofHaloOptions o;
        o.minimumGroupSize = minimumSize;
        o.masses = m.data();
        o.velocities = v.data();
        jz::FofHalos halos;
        jz::computeFofHalos(p, o, halos, jz::Backend::CPU, control);
        Outputs out;
        add(out, "GroupLabel", groups.groupLabel);
        add(out, "GroupRoot", groups.groupRoot);
        add(out, "GroupId", halos.groupId);
        add(out, "GroupSize", halos.groupSize);
        addCatalogue(out, halos.catalogue);
        return out;
      });
}

// The groups cut from a Euclidean tree (the filter's cached tree), their
// numbering and the catalogue with the cut's reference members.
template <class T>
void fofFromTreeCase(bool periodic)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<double> m = masses(kPoints), v = velocities(kPoints, 1.0);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  compareThreadCounts(label("FoF from a tree", jztest::typeName<T>(), periodic),
    [&](const jz::RunControl& control)
    {
      jz::EmstEdges tree;
      jz::computeEmst(emstProblem(xyz, ids, jz::EmstMetric::Euclidean, periodic), tree,
        jz::Backend::CPU, control);
      jz::FofGroups groups;
      jz::fofGroupsFromTree(tree, kPoints, ids.data(), kLinkingLength, groups);
      jz::FofTreeOrder order;
      jz::buildFofTreeOrder(std::move(tree), kPoints, ids.data(), order);
      std::vector<GlobalId> groupId(kPoints), groupSize(kPoints);
      std::vector<jz::Index> reference;
      const std::size_t G = jz::labelFofCut(
        order, kLinkingLength, 20, groupId.data(), groupSize.data(), &reference, control);
      jz::FofCatalogueInput<T> in = jz::fofCatalogueInputFor(
        fofProblem(xyz, ids, periodic), groupId.data(), G, m.data(), v.data());
      in.reference = reference.data();
      jz::FofCatalogue catalogue;
      jz::computeFofCatalogue(in, catalogue, control);
      Outputs out;
      add(out, "GroupLabel", groups.groupLabel);
      add(out, "GroupRoot", groups.groupRoot);
      add(out, "GroupId", groupId);
      add(out, "GroupSize", groupSize);
      add(out, "Reference", reference);
      addCatalogue(out, catalogue);
      return out;
    });
}

JZ_TEST(FofGroupsAndCatalogue)
{
  fofFromTreeCase<float>(true);
  fofCase<float>(false);
  fofCase<float>(true);
  fofCase<double>(true);
}

// ------------------------------------------------- halo properties

// Groups: each clump of the clustered set (its cluster index), the first
// eight clumps merged into one group above kDirectCentreLimit, the
// background in none.
std::vector<GlobalId> clumpGroups(std::size_t n, std::size_t* numGroups)
{
  std::vector<GlobalId> g(n, -1);
  for (std::size_t i = 0; i < n; ++i)
    if (i % 5 != 0)
    {
      const std::size_t c = (i * 7919) % 18; // PointSets.h's clump of point i
      g[i] = GlobalId(c < 8 ? 0 : c - 7);
    }
  *numGroups = 11;
  return g;
}

template <class T>
void haloPropertiesCase(bool periodic, int ranks)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<double> m = masses(kPoints);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  std::size_t G = 0;
  const std::vector<GlobalId> group = clumpGroups(kPoints, &G);
  std::vector<double> com(3 * G, 0), gm(G, 0);
  for (std::size_t i = 0; i < kPoints; ++i)
    if (group[i] >= 0)
    {
      const auto g = std::size_t(group[i]);
      gm[g] += m[i];
      for (int d = 0; d < 3; ++d)
        com[3 * g + d] += m[i] * double(xyz[3 * i + d]);
    }
  for (std::size_t g = 0; g < G; ++g)
    for (int d = 0; d < 3; ++d)
      com[3 * g + d] /= gm[g];
  double total = 0;
  for (double x : m)
    total += x;
  compareThreadCounts(label("halo properties", jztest::typeName<T>(), periodic) + rankLabel(ranks),
    [&](const jz::RunControl& control)
    {
      return onRanks(ranks, kPoints,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          jz::HaloPropertiesInput<T> in;
          in.points = xyz.data() + 3 * a;
          in.numPoints = b - a;
          in.masses = m.data() + a;
          in.ids = ids.data() + a;
          in.groupId = group.data() + a;
          in.numGroups = G;
          for (std::size_t g = 0; g < G; ++g)
            if (int(g) % comm.size() == comm.rank())
            {
              in.rowGroupId.push_back(GlobalId(g));
              in.rowCenterOfMass.insert(in.rowCenterOfMass.end(), &com[3 * g], &com[3 * g] + 3);
              in.rowMass.push_back(gm[g]);
            }
          unitBox(in, periodic);
          jz::HaloPropertiesOptions o;
          o.potentialCentres = true;
          o.softening = 1e-4;
          o.sphericalOverdensity = true;
          o.referenceDensity = total;
          jz::HaloProperties h;
          jz::computeHaloProperties(comm, in, o, h, control);
          for (std::size_t i = 0; i < h.mostBoundId.size(); ++i)
            JZ_CHECK_MSG(h.mostBoundId[i] >= 0 && h.soCount[i] > 0, "row " << i);
          Outputs out;
          add(out, "CentreOfPotential", h.centreOfPotential);
          add(out, "MostBoundId", h.mostBoundId);
          add(out, "SORadius", h.soRadius);
          add(out, "SOMass", h.soMass);
          add(out, "SOCount", h.soCount);
          return out;
        });
    });
}

// One Gaussian group above the leaf filter's size: its centre comes from
// the branch and bound and, the minimum not pronounced enough, the tree
// ranking's candidates, their exact sums in blocks of the team's size.
JZ_TEST(HaloPropertiesCentreOfOneLargeGroup)
{
  const std::size_t n = 70000;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0, 1);
  std::vector<double> xyz(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      xyz[3 * i + d] = 0.5 + 0.05 * g(rng) * (i % 3 ? 1 : 0.2);
  const std::vector<double> m = masses(n);
  const std::vector<GlobalId> ids = permutedIds(n), group(n, 0);
  compareThreadCounts("halo properties, one group of 70000",
    [&](const jz::RunControl& control)
    {
      jz::HaloPropertiesInput<double> in;
      in.points = xyz.data();
      in.numPoints = n;
      in.masses = m.data();
      in.ids = ids.data();
      in.groupId = group.data();
      in.numGroups = 1;
      in.rowGroupId = { 0 };
      in.rowCenterOfMass = { 0.5, 0.5, 0.5 };
      in.rowMass = { double(n) };
      jz::HaloPropertiesOptions o;
      o.potentialCentres = true;
      o.softening = 1e-4;
      jz::SerialCommunicator comm;
      jz::HaloProperties h;
      jz::computeHaloProperties(comm, in, o, h, control);
      Outputs out;
      add(out, "CentreOfPotential", h.centreOfPotential);
      add(out, "MostBoundId", h.mostBoundId);
      return out;
    });
}

JZ_TEST(HaloPropertiesCentresAndOverdensity)
{
  haloPropertiesCase<float>(false, 1);
  haloPropertiesCase<double>(true, 1);
  haloPropertiesCase<double>(true, 2);
}

// ------------------------------------------------------ EMST, HDBSCAN

template <class T>
void emstCase(jz::EmstMetric metric, bool periodic)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  compareThreadCounts(label(metric == jz::EmstMetric::Euclidean ? "EMST" : "EMST reachability",
                        jztest::typeName<T>(), periodic),
    [&](const jz::RunControl& control)
    {
      jz::EmstEdges e;
      jz::computeEmst(emstProblem(xyz, ids, metric, periodic), e, jz::Backend::CPU, control);
      Outputs out;
      add(out, "From", e.from);
      add(out, "To", e.to);
      add(out, "Weight2", e.weight2);
      add(out, "Core2", e.core2);
      return out;
    });
}

JZ_TEST(EmstEdges)
{
  emstCase<float>(jz::EmstMetric::Euclidean, false);
  emstCase<double>(jz::EmstMetric::Euclidean, true);
  emstCase<float>(jz::EmstMetric::MutualReachability, true);
}

Outputs hdbscanOutputs(const jz::HdbscanResult& r)
{
  Outputs out;
  add(out, "ClusterId", r.clusterId);
  add(out, "Probability", r.probability);
  add(out, "OutlierScore", r.outlierScore);
  add(out, "CoreDistance", r.coreDistance);
  add(out, "NumClusters", &r.numClusters, 1);
  return out;
}

template <class T>
void hdbscanCase(bool periodic, jz::ClusterSelection selection)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  compareThreadCounts(label("HDBSCAN", jztest::typeName<T>(), periodic) +
      (selection == jz::ClusterSelection::Leaf ? " leaf" : " excess of mass"),
    [&](const jz::RunControl& control)
    {
      jz::HdbscanOptions o;
      o.minClusterSize = 20;
      o.selection = selection;
      jz::HdbscanResult r;
      jz::computeHdbscan(emstProblem(xyz, ids, jz::EmstMetric::MutualReachability, periodic), o, r,
        jz::Backend::CPU, control);
      return hdbscanOutputs(r);
    });
}

JZ_TEST(HdbscanClusters)
{
  hdbscanCase<float>(false, jz::ClusterSelection::ExcessOfMass);
  hdbscanCase<double>(true, jz::ClusterSelection::Leaf);
}

// ------------------------------------------------------------ gravity

template <class T>
void gravityCase(std::size_t n, double theta, bool separateQueries)
{
  const std::vector<T> xyz = clustered<T>(n, false);
  const std::vector<T> queries = clustered<T>(n / 4, false, 9);
  const std::vector<double> m = masses(n);
  compareThreadCounts(std::string("gravity ") + jztest::typeName<T>() + " theta " +
      std::to_string(theta).substr(0, 3) + (separateQueries ? " queries" : ""),
    [&](const jz::RunControl& control)
    {
      jz::GravityProblem<T> p;
      p.sources = xyz.data();
      p.numSources = n;
      p.sourceMasses = m.data();
      if (separateQueries)
      {
        p.queries = queries.data();
        p.numQueries = queries.size() / 3;
      }
      p.openingAngle = theta;
      p.softening = 1e-4;
      const std::size_t nq = separateQueries ? p.numQueries : n;
      std::vector<double> phi(nq), acc(3 * nq);
      jz::GravityResults r;
      r.potential = phi.data();
      r.acceleration = acc.data();
      jz::computeGravity(p, r, jz::Backend::CPU, control);
      Outputs out;
      add(out, "Potential", phi);
      add(out, "Acceleration", acc);
      return out;
    });
}

JZ_TEST(GravityPotentialAndAcceleration)
{
  gravityCase<float>(kPoints, 0.5, false);
  gravityCase<double>(kPoints, 0.5, false);
  gravityCase<double>(kPoints, 0.5, true);
  gravityCase<float>(12000, 0.0, false);
  gravityCase<double>(12000, 0.0, false);
}

// ----------------------------------------------------------- SPH maps

template <class T>
struct SphInputs
{
  std::vector<T> xyz;
  std::vector<double> mass, support, density, velocity, scalar;
};

template <class T>
SphInputs<T> sphInputs(bool periodic)
{
  SphInputs<T> s;
  s.xyz = clustered<T>(kPoints, periodic);
  s.mass = masses(kPoints);
  s.velocity = velocities(kPoints, 1.0);
  s.scalar.resize(kPoints);
  for (std::size_t i = 0; i < kPoints; ++i)
    s.scalar[i] = std::sin(20.0 * double(s.xyz[3 * i]));
  std::vector<T> h(kPoints);
  jz::KnnProblem<T> p;
  p.sources = s.xyz.data();
  p.numSources = kPoints;
  p.k = 32;
  unitBox(p, periodic);
  jz::KnnResults<T> r;
  r.smoothingLength = h.data();
  jz::computeKnn(p, r, jz::Backend::CPU);
  s.support.assign(h.begin(), h.end());
  s.density.resize(kPoints);
  const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
  jz::sphGatherDensity<T>(s.xyz.data(), kPoints, s.mass.data(), nullptr, 0, s.support.data(),
    jz::SphKernel::CubicSpline, periodic, lo, hi, s.density.data());
  return s;
}

template <class T>
void sphDensityCase(const SphInputs<T>& s, bool periodic)
{
  compareThreadCounts(label("SPH gather density", jztest::typeName<T>(), periodic),
    [&](const jz::RunControl& control)
    {
      std::vector<double> rho(kPoints);
      const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
      jz::sphGatherDensity<T>(s.xyz.data(), kPoints, s.mass.data(), nullptr, 0, s.support.data(),
        jz::SphKernel::CubicSpline, periodic, lo, hi, rho.data(), control);
      Outputs out;
      add(out, "Density", rho);
      return out;
    });
}

template <class T>
void sphMapCase(const SphInputs<T>& s, bool periodic, jz::SphMapKind kind)
{
  const char* name = kind == jz::SphMapKind::Projection ? "SPH projection"
    : kind == jz::SphMapKind::Slice                     ? "SPH slice"
                                                        : "SPH volume";
  compareThreadCounts(label(name, jztest::typeName<T>(), periodic),
    [&](const jz::RunControl& control)
    {
      jz::SphParticles<T> p;
      p.points = s.xyz.data();
      p.numPoints = kPoints;
      p.masses = s.mass.data();
      p.support = s.support.data();
      p.density = s.density.data();
      p.fields = { { s.scalar.data(), 1 }, { s.velocity.data(), 3 } };
      unitBox(p, periodic);
      jz::SphGrid g;
      g.kind = kind;
      g.axis = kind == jz::SphMapKind::Slice ? 0 : 2;
      if (kind == jz::SphMapKind::Volume)
        g.resolution[0] = g.resolution[1] = g.resolution[2] = 64;
      else
        g.resolution[0] = g.resolution[1] = 256;
      g.slicePosition = double(s.xyz[0]); // through the first clump
      jz::SphMapSums sums;
      jz::depositSphMap(p, g, sums, control);
      jz::finishSphMap(g, sums);
      Outputs out;
      add(out, "Mass", sums.mass.data(), sums.mass.size());
      add(out, "Scalar", sums.fields[0]);
      add(out, "Velocity", sums.fields[1]);
      return out;
    });
}

template <class T>
void sphMapsCases(bool periodic)
{
  const SphInputs<T> s = sphInputs<T>(periodic);
  sphDensityCase(s, periodic);
  for (jz::SphMapKind kind :
    { jz::SphMapKind::Projection, jz::SphMapKind::Slice, jz::SphMapKind::Volume })
    sphMapCase(s, periodic, kind);
}

JZ_TEST(SphMapsProjectionSliceVolume)
{
  sphMapsCases<float>(false);
  sphMapsCases<double>(true);
}

// -------------------------------------------------------- SPH smooth

template <class T>
void sphSmoothCase(bool periodic, int ranks)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<double> m = masses(kPoints), v = velocities(kPoints, 1.0);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  std::vector<double> scalar(kPoints);
  for (std::size_t i = 0; i < kPoints; ++i)
    scalar[i] = std::cos(15.0 * double(xyz[3 * i + 1]));
  compareThreadCounts(label("SPH smooth", jztest::typeName<T>(), periodic) + rankLabel(ranks),
    [&](const jz::RunControl& control)
    {
      return onRanks(ranks, kPoints,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          const std::size_t n = b - a;
          jz::SphSmoothProblem<T> p;
          p.points = xyz.data() + 3 * a;
          p.numPoints = n;
          p.masses = m.data() + a;
          p.ids = ids.data() + a;
          p.k = 32;
          unitBox(p, periodic);
          jz::SphField fs, fv;
          fs.values = scalar.data() + a;
          fv.values = v.data() + 3 * a;
          fv.components = 3;
          p.fields = { fs, fv };
          std::vector<T> h(n), rho(n);
          std::vector<double> s1(n), grad(3 * n), s3(3 * n), div(n), curl(3 * n), disp(n);
          jz::SphSmoothResults<T> r;
          r.smoothingLength = h.data();
          r.density = rho.data();
          jz::SphFieldResults fa, fb;
          fa.smoothed = s1.data();
          fa.gradient = grad.data();
          fb.smoothed = s3.data();
          fb.divergence = div.data();
          fb.curl = curl.data();
          fb.dispersion = disp.data();
          r.fields = { fa, fb };
          jz::computeSphSmooth(p, r, comm, jz::Backend::CPU, control);
          Outputs out;
          add(out, "SmoothingLength", h);
          add(out, "Density", rho);
          add(out, "Smoothed", s1);
          add(out, "Gradient", grad);
          add(out, "SmoothedVector", s3);
          add(out, "Divergence", div);
          add(out, "Curl", curl);
          add(out, "Dispersion", disp);
          return out;
        });
    });
}

JZ_TEST(SphSmoothFieldsAndDerivatives)
{
  sphSmoothCase<float>(false, 1);
  sphSmoothCase<double>(true, 1);
  sphSmoothCase<float>(true, 2);
}

// ----------------------------------------------------------- subhalos

Outputs subhaloOutputs(const jz::Subhalos& s)
{
  const jz::SubhaloCatalogue& c = s.catalogue;
  Outputs out;
  add(out, "SubhaloId", s.subhaloId);
  add(out, "SubhaloRank", s.subhaloRank);
  add(out, "NumSubhalos", &c.numSubhalos, 1);
  add(out, "Catalogue SubhaloId", c.subhaloId);
  add(out, "Catalogue GroupId", c.groupId);
  add(out, "Catalogue SubhaloRank", c.subhaloRank);
  add(out, "Count", c.count);
  add(out, "MostBoundId", c.mostBoundId);
  add(out, "ParentSubhaloId", c.parentSubhaloId);
  add(out, "Mass", c.mass);
  add(out, "CentreOfPotential", c.centreOfPotential);
  add(out, "CenterOfMass", c.centerOfMass);
  add(out, "MeanVelocity", c.meanVelocity);
  add(out, "VelocityDispersion", c.velocityDispersion);
  add(out, "Vmax", c.vmax);
  add(out, "RVmax", c.rvmax);
  add(out, "HalfMassRadius", c.halfMassRadius);
  return out;
}

// Groups: the FoF groups of the clustered set, or (oneLargeGroup) every
// clump point in one group, above the size where a group uses all threads
// in its neighbour searches and potentials.
template <class T>
void subhaloCase(bool periodic, double theta, bool oneLargeGroup)
{
  const std::vector<T> xyz = clustered<T>(kPoints, periodic);
  const std::vector<double> m = masses(kPoints), v = velocities(kPoints, 30.0);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  std::vector<GlobalId> group(kPoints, -1);
  if (oneLargeGroup)
    for (std::size_t i = 0; i < kPoints; ++i)
      group[i] = i % 5 != 0 ? 0 : -1;
  else
  {
    jz::FofHalos halos;
    jz::computeFofHalos(
      fofProblem(xyz, ids, periodic), jz::FofHaloOptions{}, halos, jz::Backend::CPU);
    group = halos.groupId;
  }
  compareThreadCounts(label("subhalos", jztest::typeName<T>(), periodic) + " theta " +
      std::to_string(theta).substr(0, 3) + (oneLargeGroup ? " one large group" : ""),
    [&](const jz::RunControl& control)
    {
      jz::SubhaloProblem<T> p;
      p.points = xyz.data();
      p.numPoints = kPoints;
      p.masses = m.data();
      p.velocities = v.data();
      p.ids = ids.data();
      p.groupId = group.data();
      p.softening = 1e-4;
      p.openingAngle = theta;
      unitBox(p, periodic);
      jz::Subhalos s;
      jz::computeSubhalos(p, s, jz::Backend::CPU, control);
      JZ_CHECK_MSG(s.catalogue.numSubhalos >= 10, s.catalogue.numSubhalos << " subhalos");
      return subhaloOutputs(s);
    });
}

JZ_TEST(SubhalosAndCatalogue)
{
  subhaloCase<float>(false, 0.5, false);
  subhaloCase<double>(true, 0.5, false);
  subhaloCase<double>(false, 0.0, false);
  subhaloCase<float>(true, 0.5, true);
}

// ------------------------------------------------------ halo tracking

JZ_TEST(HaloTrackingTree)
{
  // Three steps of the clustered set drifting, each step's FoF groups.
  const std::vector<double> m = masses(kPoints);
  const std::vector<GlobalId> ids = permutedIds(kPoints);
  std::vector<jz::TrackingMembers> steps(3);
  std::vector<double> xyz = clustered<double>(kPoints, true);
  std::mt19937_64 rng(23);
  std::normal_distribution<double> g(0, 0.002);
  for (jz::TrackingMembers& step : steps)
  {
    jz::FofHalos halos;
    jz::computeFofHalos(fofProblem(xyz, ids, true), jz::FofHaloOptions{}, halos, jz::Backend::CPU);
    for (std::size_t i = 0; i < kPoints; ++i)
      if (halos.groupId[i] >= 0)
      {
        step.ids.push_back(ids[i]);
        step.groups.push_back(halos.groupId[i]);
        step.masses.push_back(m[i]);
      }
    for (double& x : xyz) // a drift, folded into the box
    {
      x += g(rng);
      x -= std::floor(x);
    }
  }
  compareThreadCounts("halo tracking",
    [&](const jz::RunControl&)
    {
      const jz::HaloTree tree = jz::trackHalos(steps, jz::TrackingOptions{});
      std::vector<GlobalId> whole;
      std::vector<double> mass;
      for (const jz::TrackedGroup& r : tree.rows)
      {
        whole.insert(whole.end(),
          { GlobalId(r.step), r.group, r.track, GlobalId(r.count), r.descendant, GlobalId(r.shared),
            GlobalId(r.isMainProgenitor) });
        mass.push_back(r.mass);
      }
      Outputs out;
      add(out, "Rows", whole);
      add(out, "Mass", mass);
      return out;
    });
}
// ------------------------------------- distributed drivers, two ranks

// kNN, FoF with its catalogue rows, gravity, EMST, HDBSCAN, subhalos and
// the SPH density over two simulated ranks (halo properties and SPH smooth
// have their own cases above): each rank's threads set by the control.
template <class T>
void distributedCases(bool periodic)
{
  const std::size_t n = kPoints;
  const std::vector<T> xyz = clustered<T>(n, periodic);
  const std::vector<double> m = masses(n), v = velocities(n, 30.0);
  const std::vector<GlobalId> ids = permutedIds(n);
  const std::string type = jztest::typeName<T>();
  std::vector<GlobalId> fofGroupId(n, -1);
  compareThreadCounts(label("kNN", type.c_str(), periodic) + rankLabel(2),
    [&](const jz::RunControl& control)
    {
      return onTwoRanks(n,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          const std::size_t k = 16;
          jz::KnnProblem<T> p;
          p.sources = xyz.data() + 3 * a;
          p.numSources = b - a;
          p.sourceMasses = m.data() + a;
          p.sourceIds = ids.data() + a;
          p.k = int(k);
          unitBox(p, periodic);
          const KnnBuffers<T> r(b - a, k, jz::DensityEstimator::SphCubicSpline);
          jz::computeKnnDistributed(p, r.results, comm, jz::Backend::CPU, control);
          return r.outputs();
        });
    });
  compareThreadCounts(label("FoF", type.c_str(), periodic) + rankLabel(2),
    [&](const jz::RunControl& control)
    {
      return onTwoRanks(n,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          jz::FofProblem<T> p = fofProblem(xyz, ids, periodic);
          p.points = xyz.data() + 3 * a;
          p.numPoints = b - a;
          p.ids = ids.data() + a;
          jz::FofDistributedOptions o;
          o.masses = m.data() + a;
          o.velocities = v.data() + 3 * a;
          jz::FofDistributedResult r;
          jz::computeFofDistributed(p, o, r, comm, jz::Backend::CPU, control);
          std::copy(r.groupId.begin(), r.groupId.end(), fofGroupId.begin() + std::ptrdiff_t(a));
          Outputs out;
          add(out, "GroupId", r.groupId);
          add(out, "GroupSize", r.groupSize);
          add(out, "Catalogue GroupId", r.catalogueGroupId);
          addCatalogue(out, r.catalogue);
          return out;
        });
    });
  compareThreadCounts(std::string("gravity ") + type + " theta 0.5" + rankLabel(2),
    [&](const jz::RunControl& control)
    {
      return onTwoRanks(n,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          jz::GravityProblem<T> p;
          p.sources = xyz.data() + 3 * a;
          p.numSources = b - a;
          p.sourceMasses = m.data() + a;
          p.softening = 1e-4;
          std::vector<double> phi(b - a), acc(3 * (b - a));
          jz::computeGravityDistributed(
            comm, p, jz::GravityResults{ phi.data(), acc.data() }, jz::Backend::CPU, control);
          Outputs out;
          add(out, "Potential", phi);
          add(out, "Acceleration", acc);
          return out;
        });
    });
  for (jz::EmstMetric metric : { jz::EmstMetric::Euclidean, jz::EmstMetric::MutualReachability })
    compareThreadCounts(label(metric == jz::EmstMetric::Euclidean ? "EMST" : "EMST reachability",
                          type.c_str(), periodic) +
        rankLabel(2),
      [&](const jz::RunControl& control)
      {
        return onTwoRanks(n,
          [&](jz::Communicator& comm, std::size_t a, std::size_t b)
          {
            jz::EmstProblem<T> p = emstProblem(xyz, ids, metric, periodic);
            p.points = xyz.data() + 3 * a;
            p.numPoints = b - a;
            p.ids = ids.data() + a;
            jz::EmstRankEdges<T> e;
            jz::computeEmstDistributed(p, comm, e, jz::Backend::CPU, control);
            Outputs out;
            add(out, "FromId", e.fromId);
            add(out, "ToId", e.toId);
            add(out, "Weight2", e.weight2);
            add(out, "Core2", e.core2);
            return out;
          });
      });
  compareThreadCounts(label("HDBSCAN", type.c_str(), periodic) + rankLabel(2),
    [&](const jz::RunControl& control)
    {
      return onTwoRanks(n,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          jz::EmstProblem<T> p =
            emstProblem(xyz, ids, jz::EmstMetric::MutualReachability, periodic);
          p.points = xyz.data() + 3 * a;
          p.numPoints = b - a;
          p.ids = ids.data() + a;
          jz::HdbscanResult r;
          jz::computeHdbscanDistributed(
            p, jz::HdbscanOptions{}, comm, r, jz::Backend::CPU, control);
          return hdbscanOutputs(r);
        });
    });
  compareThreadCounts(label("subhalos", type.c_str(), periodic) + rankLabel(2),
    [&](const jz::RunControl& control)
    {
      return onTwoRanks(n,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          jz::SubhaloProblem<T> p;
          p.points = xyz.data() + 3 * a;
          p.numPoints = b - a;
          p.masses = m.data() + a;
          p.velocities = v.data() + 3 * a;
          p.ids = ids.data() + a;
          p.groupId = fofGroupId.data() + a;
          p.softening = 1e-4;
          unitBox(p, periodic);
          jz::Subhalos s;
          jz::computeSubhalosDistributed(comm, p, s, jz::Backend::CPU, control);
          return subhaloOutputs(s);
        });
    });
  const SphInputs<T> sph = sphInputs<T>(periodic);
  compareThreadCounts(label("SPH gather density", type.c_str(), periodic) + rankLabel(2),
    [&](const jz::RunControl& control)
    {
      return onTwoRanks(n,
        [&](jz::Communicator& comm, std::size_t a, std::size_t b)
        {
          std::vector<double> rho(b - a);
          const double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
          jz::sphGatherDensityDistributed<T>(comm, sph.xyz.data() + 3 * a, b - a,
            sph.mass.data() + a, sph.support.data() + a, jz::SphKernel::CubicSpline, periodic, lo,
            hi, rho.data(), control);
          Outputs out;
          add(out, "Density", rho);
          return out;
        });
    });
}

JZ_TEST(DistributedDriversOnTwoRanks)
{
  distributedCases<float>(false);
  distributedCases<double>(true);
}
} // namespace

JZ_TEST_MAIN()
