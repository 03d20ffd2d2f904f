// Tree gravity against direct summation in double (an independent O(N^2)
// loop here): exact at theta = 0, within the accuracy contract at theta =
// 0.5 (99th percentiles: 1e-3 relative acceleration, 1e-4 potential), on
// uniform, clustered and duplicate-heavy sets, float and double, self and
// separate queries, one and several simulated ranks; bad input fails.
//
// One test body serves both backends (jztest::backend()): on the GPU
// (TestGravity --backend=cuda, CTest's kernels.TestGravityCuda) every run
// must really have run there and is checked against the direct sums and,
// within the same bounds, against the CPU backend. Cases that only make
// sense on one backend say so and skip on the other.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "PointSets.h"
#include "Problems.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/Gravity.h"

namespace
{
struct Field
{
  std::vector<double> phi, acc;
};

// phi_i = -G sum m_j / s, a_i = -G sum m_j (x_i - x_j) / s^3, s^2 = r^2 + eps^2;
// j = i excluded for self queries (selfFrom = index of query 0 among the
// sources, or -1), pairs with s = 0 skipped.
template <class T>
Field direct(const std::vector<T>& src, const std::vector<double>& m, const std::vector<T>& qry,
  long long selfFrom, double eps, double G, std::size_t stride = 1)
{
  const std::size_t ns = m.size(), nq = qry.size() / 3;
  Field f{ std::vector<double>(nq, 0.0), std::vector<double>(3 * nq, 0.0) };
  for (std::size_t i = 0; i < nq; i += stride)
  {
    double u = 0, g[3] = { 0, 0, 0 };
    for (std::size_t j = 0; j < ns; ++j)
    {
      if (selfFrom >= 0 && j == std::size_t(selfFrom) + i)
        continue;
      double d[3], s2 = eps * eps;
      for (int k = 0; k < 3; ++k)
      {
        d[k] = double(src[3 * j + k]) - double(qry[3 * i + k]);
        s2 += d[k] * d[k];
      }
      if (s2 == 0)
        continue;
      const double inv = 1 / std::sqrt(s2);
      u += m[j] * inv;
      for (int k = 0; k < 3; ++k)
        g[k] += m[j] * inv * inv * inv * d[k];
    }
    f.phi[i] = -G * u;
    for (int k = 0; k < 3; ++k)
      f.acc[3 * i + k] = G * g[k];
  }
  return f;
}

double percentile99(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::size_t(0.99 * double(v.size() - 1))];
}

// 99th percentiles of the relative acceleration and potential errors over
// the checked queries (every stride-th).
void errors(const Field& got, const Field& ref, std::size_t stride, double& accErr, double& phiErr)
{
  std::vector<double> ea, ep;
  for (std::size_t i = 0; i < ref.phi.size(); i += stride)
  {
    double diff2 = 0, norm2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double d = got.acc[3 * i + k] - ref.acc[3 * i + k];
      diff2 += d * d;
      norm2 += ref.acc[3 * i + k] * ref.acc[3 * i + k];
    }
    ea.push_back(norm2 > 0 ? std::sqrt(diff2 / norm2) : std::sqrt(diff2));
    ep.push_back(ref.phi[i] != 0 ? std::abs(got.phi[i] - ref.phi[i]) / std::abs(ref.phi[i])
                                 : std::abs(got.phi[i]));
  }
  accErr = percentile99(ea);
  phiErr = percentile99(ep);
}

std::vector<double> masses(std::size_t n, bool unit)
{
  std::vector<double> m(n, 1.0);
  if (!unit)
    for (std::size_t i = 0; i < n; ++i)
      m[i] = 0.5 + double((i * 2654435761u) % 1000) / 1000.0;
  return m;
}

// The problem on backend b (the one under test unless given): two threads on
// the CPU; on the GPU it must really have run there. field = false asks for
// potentials alone.
template <class T>
Field run(const jz::GravityProblem<T>& p, jz::Backend b = jztest::backend(), bool field = true,
  jz::RunInfo* infoOut = nullptr)
{
  const std::size_t nq = p.queries ? p.numQueries : p.numSources;
  Field f{ std::vector<double>(nq, 0.0), std::vector<double>(field ? 3 * nq : 0, 0.0) };
  jz::RunControl control;
  if (b == jz::Backend::CPU)
    control.numThreads = 2;
  const jz::RunInfo info = jz::computeGravity(
    p, jz::GravityResults{ f.phi.data(), field ? f.acc.data() : nullptr }, b, control);
  if (b == jz::Backend::CUDA)
    JZ_CHECK_MSG(info.backend == jz::Backend::CUDA,
      "ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  if (infoOut)
    *infoOut = info;
  return f;
}

// The sources querying themselves, with masses m.
template <class T>
jz::GravityProblem<T> selfProblem(
  const std::vector<T>& xyz, const std::vector<double>& m, double theta, double eps)
{
  return jztest::gravityProblem(xyz.data(), m.size(), m.data(), theta, eps);
}

// The sources with masses m, queried at separate points.
template <class T>
jz::GravityProblem<T> queryProblem(const std::vector<T>& xyz, const std::vector<double>& m,
  const std::vector<T>& queries, double theta, double eps)
{
  jz::GravityProblem<T> p = selfProblem(xyz, m, theta, eps);
  p.queries = queries.data();
  p.numQueries = queries.size() / 3;
  return p;
}

// Separate queries: a 12^3 grid over the points and beyond, and 100
// particle positions (nothing is excluded there; at eps = 0 the coincident
// pair is skipped).
std::vector<float> gridAndParticles(const std::vector<float>& xyz)
{
  std::vector<float> grid;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      for (int k = 0; k < 12; ++k)
        grid.insert(grid.end(), { float(-0.1 + 0.1 * i), float(-0.1 + 0.1 * j), float(0.1 * k) });
  grid.insert(grid.end(), xyz.begin(), xyz.begin() + 300);
  return grid;
}

// The problem on the backend under test against the float64 direct sums
// (every stride-th query) and, on the GPU, against the CPU backend (all
// queries), both within the bounds.
template <class T>
void check(const std::string& what, const jz::GravityProblem<T>& p, const Field& ref,
  std::size_t stride, double accBound, double phiBound)
{
  const Field got = run(p);
  double ea, ep;
  errors(got, ref, stride, ea, ep);
  JZ_CHECK_MSG(ea <= accBound && ep <= phiBound, what << " vs direct: acc " << ea << " phi " << ep);
  if (!jztest::onGpu())
  {
    std::printf("  %s: p99 acc %.2e phi %.2e\n", what.c_str(), ea, ep);
    return;
  }
  double ca, cp;
  errors(got, run(p, jz::Backend::CPU), 1, ca, cp);
  std::printf("  %s: GPU vs direct p99 acc %.2e phi %.2e; GPU vs CPU p99 acc %.2e phi %.2e\n",
    what.c_str(), ea, ep, ca, cp);
  JZ_CHECK_MSG(ca <= accBound && cp <= phiBound, what << " vs CPU: acc " << ca << " phi " << cp);
}

// The sources querying themselves (G = 2.5), checked as check() does.
template <class T>
void checkSelf(const std::string& kind, double theta, double eps, double accBound, double phiBound,
  std::size_t n)
{
  const std::size_t stride = n > 20000 ? 97 : 7;
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 5);
  const std::vector<double> m = masses(n, false);
  jz::GravityProblem<T> p = selfProblem(xyz, m, theta, eps);
  p.gravitationalConstant = 2.5;
  const Field ref = direct(xyz, m, xyz, 0, eps, 2.5, stride);
  char what[160];
  std::snprintf(what, sizeof what, "%s %s n %zu theta %.2f eps %g", kind.c_str(),
    jztest::typeName<T>(), n, theta, eps);
  check(what, p, ref, stride, accBound, phiBound);
}

// Skip reasons.
const char* const kCpuAlone =
  "exercises the CPU backend alone (kernels.TestGravity runs it; a GPU run would repeat it)";
} // namespace

JZ_TEST(DirectSummationAtThetaZero)
{
  for (const char* kind : { "uniform", "clustered", "duplicates", "lattice" })
    for (double eps : { 0.0, 1e-3 })
    {
      checkSelf<double>(kind, 0.0, eps, 1e-12, 1e-12, 3000);
      checkSelf<float>(kind, 0.0, eps, 1e-12, 1e-12, 3000);
    }
}

JZ_TEST(AccuracyContractAtThetaHalf)
{
  for (const char* kind : { "uniform", "clustered", "duplicates", "lattice", "outliers" })
  {
    checkSelf<double>(kind, 0.5, 0.0, 1e-3, 1e-4, 12000);
    checkSelf<float>(kind, 0.5, 1e-3, 1e-3, 1e-4, 12000);
  }
  // Deeper trees (on the GPU more planes of node-plane M2P), a sample of the
  // queries.
  checkSelf<float>("clustered", 0.5, 1e-3, 1e-3, 1e-4, jztest::sized(40000, 200000));
  checkSelf<double>("uniform", 0.5, 0.0, 1e-3, 1e-4, jztest::sized(40000, 200000));
}

// Larger opening angles are less accurate, and the error grows with theta:
// the walk really uses multipoles (a test that cannot fail is a defect; a
// backend that summed everything directly would pass the contract cases).
// Unit masses as no mass array and as an array of ones.
JZ_TEST(ErrorGrowsWithOpeningAngle)
{
  const std::size_t n = 8000, stride = 5;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 3);
  const std::vector<double> m = masses(n, true);
  const Field ref = direct(xyz, m, xyz, 0, 0.0, 1.0, stride);
  for (bool massArray : { false, true })
  {
    double last = 0;
    for (double theta : { 0.3, 0.6, 1.0 })
    {
      jz::GravityProblem<double> p = selfProblem(xyz, m, theta, 0.0);
      if (!massArray)
        p.sourceMasses = nullptr;
      double ea, ep;
      errors(run(p), ref, stride, ea, ep);
      std::printf("  %s, theta %.1f: p99 acc %.2e phi %.2e\n",
        massArray ? "mass array" : "no mass array", theta, ea, ep);
      JZ_CHECK_MSG(ea > last, "theta " << theta << " acc " << ea << " not above " << last);
      last = ea;
    }
    JZ_CHECK(last > 1e-5);
  }
}

// The node-node interactions (M2L into local expansions) are really used,
// for self and separate queries, and the results stay within the contract.
// M2L is the CPU's walk; the GPU's uses node-plane M2P.
JZ_TEST(NodeNodeInteractionsAreUsed)
{
  jztest::skipOnGpu("M2L is the CPU walk's (the GPU's walk uses node-plane M2P)");
  const std::size_t n = 40000, stride = 97;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 11);
  const std::vector<double> m = masses(n, false);
  const Field ref = direct(xyz, m, xyz, 0, 1e-3, 1.0, stride);
  jz::GravityProblem<double> p = selfProblem(xyz, m, 0.5, 1e-3);
  // The same points as separate queries, each excluding itself.
  jz::GravityProblem<double> q = p;
  q.queries = xyz.data();
  q.numQueries = n;
  q.queriesFromSource = 0;
  for (const jz::GravityProblem<double>* problem : { &p, &q })
  {
    jz::RunInfo info;
    const Field got = run(*problem, jz::Backend::CPU, true, &info);
    double m2l = 0;
    for (const auto& c : info.counters)
      if (c.first == "M2L interactions per query")
        m2l = c.second;
    double ea, ep;
    errors(got, ref, stride, ea, ep);
    std::printf("  %s: %.2f M2L per query, p99 acc %.2e phi %.2e\n",
      problem->queries ? "separate" : "self", m2l, ea, ep);
    JZ_CHECK_MSG(m2l > 0.05, "no M2L: " << m2l);
    JZ_CHECK(ea <= 1e-3 && ep <= 1e-4);
  }
}

// The same results, bit for bit, for any thread count: every sum adds its
// terms in an order fixed by the tree (doc/filters/TreeGravity.md).
JZ_TEST(ThreadCountDoesNotChangeResults)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 30000;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 12);
  const std::vector<double> m = masses(n, false);
  const jz::GravityProblem<double> p = selfProblem(xyz, m, 0.7, 1e-3);
  Field first;
  for (int threads : { 1, 2, 3 })
  {
    Field got{ std::vector<double>(n), std::vector<double>(3 * n) };
    jz::RunControl control;
    control.numThreads = threads;
    jz::computeGravity(
      p, jz::GravityResults{ got.phi.data(), got.acc.data() }, jz::Backend::CPU, control);
    if (threads == 1)
      first = got;
    else
      JZ_CHECK_MSG(got.phi == first.phi && got.acc == first.acc, threads << " threads differ");
  }
}

// Separate queries (a grid, and points exactly at particles: nothing is
// excluded, and at eps = 0 the coincident pair is skipped); potentials alone
// (no acceleration array) are those of the run with the field; the queries
// that are sources (queriesFromSource: each excludes itself).
JZ_TEST(SeparateQueries)
{
  const std::size_t n = 6000;
  const std::vector<float> xyz = jztest::makePoints<float>("clustered", n, 9);
  const std::vector<double> m = masses(n, false);
  const std::vector<float> grid = gridAndParticles(xyz);
  for (double eps : { 0.0, 0.01 })
    for (double theta : { 0.0, 0.5 })
    {
      const jz::GravityProblem<float> p = queryProblem(xyz, m, grid, theta, eps);
      const Field ref = direct(xyz, m, grid, -1, eps, 1.0);
      char what[96];
      std::snprintf(what, sizeof what, "grid theta %.1f eps %g", theta, eps);
      check(what, p, ref, 1, theta == 0 ? 1e-12 : 1e-3, theta == 0 ? 1e-12 : 1e-4);
      const Field full = run(p);
      const Field alone = run(p, jztest::backend(), false);
      JZ_CHECK_MSG(alone.phi == full.phi, "potential alone differs, theta " << theta);
    }
  // The last 2000 sources query as separate points, each excluding itself.
  for (double theta : { 0.0, 0.5 })
  {
    const std::size_t from = n - 2000;
    const std::vector<float> tail(xyz.begin() + 3 * from, xyz.end());
    jz::GravityProblem<float> p = queryProblem(xyz, m, tail, theta, 1e-3);
    p.queriesFromSource = from;
    const Field ref = direct(xyz, m, tail, (long long)from, 1e-3, 1.0);
    check(theta == 0 ? "queries from sources theta 0" : "queries from sources theta 0.5", p, ref, 1,
      theta == 0 ? 1e-12 : 1e-3, theta == 0 ? 1e-12 : 1e-4);
  }
}

// Potentials alone (no acceleration array: the kernels skip the field) are
// the potentials of a full run, within float rounding.
JZ_TEST(PotentialAlone)
{
  const std::size_t n = 8000;
  for (const char* kind : { "uniform", "clustered" })
  {
    const std::vector<double> xyz = jztest::makePoints<double>(kind, n, 6);
    const std::vector<double> m = masses(n, false);
    const jz::GravityProblem<double> p = selfProblem(xyz, m, 0.5, 1e-3);
    const Field full = run(p);
    const Field alone = run(p, jztest::backend(), false);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(alone.phi[i] - full.phi[i]) / std::abs(full.phi[i]));
    JZ_CHECK_MSG(worst <= 1e-6, kind << ": potential alone differs by " << worst);
  }
}

// Bulk duplicates at eps = 0 (point-mass nodes): every coincident pair is
// skipped, finite results, at theta = 0 and 0.5.
JZ_TEST(BulkDuplicatesAreSkippedPairs)
{
  std::vector<double> xyz;
  jztest::appendCopies(xyz, 5000, 0.5, 0.5, 0.5);
  jztest::appendCopies(xyz, 5000, 1.5, 0.5, 0.5);
  jz::GravityProblem<double> p = jztest::gravityProblem(xyz.data(), xyz.size() / 3, nullptr, 0, 0);
  for (double theta : { 0.0, 0.5 })
  {
    p.openingAngle = theta;
    const Field got = run(p);
    for (std::size_t i = 0; i < got.phi.size(); ++i)
    {
      JZ_CHECK(std::abs(got.phi[i] + 5000.0) < 1e-9);
      JZ_CHECK(std::abs(std::abs(got.acc[3 * i]) - 5000.0) < 1e-9);
    }
  }
}

// Bad input fails before any backend runs, naming the fault, with no output.
JZ_TEST(BadInputIsRejected)
{
  std::vector<double> xyz = jztest::makePoints<double>("uniform", 100, 1);
  std::vector<double> m(100, 1.0);
  auto rejects = [&](const jz::GravityProblem<double>& p, const char* word)
  {
    std::vector<double> phi(100, 7.0);
    try
    {
      jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jztest::backend());
      JZ_CHECK_MSG(false, "accepted input with " << word);
    }
    catch (const jz::Error& e)
    {
      JZ_CHECK_MSG(std::string(e.what()).find(word) != std::string::npos, e.what());
    }
    JZ_CHECK(phi[0] == 7.0); // no output
  };
  jz::GravityProblem<double> p;
  p.sources = xyz.data();
  p.numSources = 100;
  p.sourceMasses = m.data();
  jz::GravityProblem<double> q = p;
  q.openingAngle = -0.1;
  rejects(q, "opening angle");
  q = p;
  q.softening = -1;
  rejects(q, "softening");
  m[17] = -1;
  rejects(p, "negative");
  m[17] = NAN;
  rejects(p, "non-finite");
  m[17] = 1;
  xyz[3 * 42 + 1] = INFINITY;
  rejects(p, "42");
}

namespace
{
// Simulated ranks (threads). The pieces of the input: "interleaved" (point
// i on rank i % ranks: every rank's points spread everywhere), "slabs" (x
// quantiles: spatial pieces) or "random"; rank `empty` (if >= 0) gets none.
std::vector<int> pieceOf(
  const std::string& pieces, const std::vector<double>& x, int ranks, int empty = -1)
{
  const std::size_t n = x.size();
  std::vector<int> rank(n);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  const int used = empty >= 0 && ranks > 1 ? ranks - 1 : ranks;
  for (std::size_t j = 0; j < n; ++j)
  {
    const std::size_t i = order[j];
    int r = pieces == "slabs"   ? int(j * used / n)
      : pieces == "interleaved" ? int(i % used)
                                : int((i * 2654435761u >> 7) % std::size_t(used));
    if (empty >= 0 && ranks > 1 && r >= empty)
      ++r;
    rank[i] = r;
  }
  return rank;
}

struct DistributedRun
{
  Field field;
  double letBytes = 0;      // LET bytes per local point, mean over ranks
  double letSources = 0;    // LET sources received, all ranks
  double letMultipoles = 0; // of which multipoles (six sources each)
};

// computeGravityDistributed with the sources (and the queries, if any) cut
// into pieces by sourceRank (queryRank); results in input order.
template <class T>
DistributedRun runDistributed(const std::vector<T>& xyz, const std::vector<double>& m,
  const std::vector<T>* queries, const std::vector<int>& sourceRank,
  const std::vector<int>& queryRank, int ranks, double theta, double eps, bool passMasses = true)
{
  const std::size_t n = m.size(), nq = queries ? queries->size() / 3 : n;
  DistributedRun out;
  out.field = Field{ std::vector<double>(nq, 0.0), std::vector<double>(3 * nq, 0.0) };
  std::vector<double> letBytes(ranks, 0.0), letSources(ranks, 0.0), letMultipoles(ranks, 0.0);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      std::vector<T> src, qry;
      std::vector<double> mass;
      std::vector<std::size_t> mine; // the queries' input indices
      for (std::size_t i = 0; i < n; ++i)
        if (sourceRank[i] == r)
        {
          src.insert(src.end(), &xyz[3 * i], &xyz[3 * i] + 3);
          mass.push_back(m[i]);
          if (!queries)
            mine.push_back(i);
        }
      for (std::size_t i = 0; queries && i < nq; ++i)
        if (queryRank[i] == r)
        {
          qry.insert(qry.end(), &(*queries)[3 * i], &(*queries)[3 * i] + 3);
          mine.push_back(i);
        }
      static const T noQuery[3] = { 0, 0, 0 };
      jz::GravityProblem<T> p;
      p.sources = src.empty() ? nullptr : src.data();
      p.numSources = mass.size();
      p.sourceMasses = mass.empty() || !passMasses ? nullptr : mass.data();
      if (queries)
      {
        p.queries = qry.empty() ? noQuery : qry.data();
        p.numQueries = qry.size() / 3;
      }
      p.openingAngle = theta;
      p.softening = eps;
      std::vector<double> phi(mine.size()), acc(3 * mine.size());
      jz::RunControl control;
      control.numThreads = 1;
      const jz::RunInfo info = jz::computeGravityDistributed(
        comm, p, jz::GravityResults{ phi.data(), acc.data() }, jz::Backend::CPU, control);
      for (const auto& c : info.counters)
      {
        if (c.first == "LET bytes per local point")
          letBytes[r] = c.second;
        if (c.first == "LET sources received")
          letSources[r] = c.second;
        if (c.first == "LET multipoles received")
          letMultipoles[r] = c.second;
      }
      for (std::size_t j = 0; j < mine.size(); ++j)
      {
        out.field.phi[mine[j]] = phi[j];
        for (int k = 0; k < 3; ++k)
          out.field.acc[3 * mine[j] + k] = acc[3 * j + k];
      }
    });
  for (int r = 0; r < ranks; ++r)
  {
    out.letBytes += letBytes[r] / ranks;
    out.letSources += letSources[r];
    out.letMultipoles += letMultipoles[r];
  }
  return out;
}

template <class T>
std::vector<double> xOf(const std::vector<T>& xyz)
{
  std::vector<double> x(xyz.size() / 3);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = double(xyz[3 * i]);
  return x;
}

template <class T>
void checkDistributed(const std::string& kind, double theta, double eps, std::size_t n,
  std::size_t stride, double accBound, double phiBound)
{
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 4);
  const std::vector<double> m = masses(n, false);
  const Field ref = direct(xyz, m, xyz, 0, eps, 1.0, stride);
  for (const char* pieces : { "interleaved", "slabs", "random" })
    for (int ranks : { 1, 2, 3, 4 })
    {
      const std::vector<int> rank = pieceOf(pieces, xOf(xyz), ranks);
      const DistributedRun got = runDistributed<T>(xyz, m, nullptr, rank, {}, ranks, theta, eps);
      double ea, ep;
      errors(got.field, ref, stride, ea, ep);
      std::printf("  %s %s theta %.1f %s %d ranks: p99 acc %.2e phi %.2e, LET %.1f B/pt\n",
        kind.c_str(), jztest::typeName<T>(), theta, pieces, ranks, ea, ep,
        got.letBytes);
      JZ_CHECK_MSG(ea <= accBound && ep <= phiBound,
        kind << " " << pieces << " " << ranks << " ranks: acc " << ea << " phi " << ep);
      if (ranks > 1) // every rank needs something from the others
        JZ_CHECK(got.letSources > 0);
    }
}
} // namespace

// Each rank's own particles against everyone's, within the contract against
// float64 direct summation, for any pieces and 1-4 ranks.
JZ_TEST(DistributedWithinContract)
{
  jztest::skipOnGpu(kCpuAlone);
  for (const char* kind : { "uniform", "clustered" })
  {
    checkDistributed<double>(kind, 0.5, 0.0, 12000, 7, 1e-3, 1e-4);
    checkDistributed<float>(kind, 0.5, 1e-3, 12000, 7, 1e-3, 1e-4);
  }
  for (const char* kind : { "duplicates", "outliers", "offset" })
    checkDistributed<double>(kind, 0.5, 1e-3, 8000, 7, 1e-3, 1e-4);
}

// theta = 0 stays direct summation under MPI: every remote particle arrives.
JZ_TEST(DistributedDirectAtThetaZero)
{
  jztest::skipOnGpu(kCpuAlone);
  for (const char* kind : { "uniform", "duplicates" })
    for (double eps : { 0.0, 1e-3 })
    {
      checkDistributed<double>(kind, 0.0, eps, 2000, 1, 1e-12, 1e-12);
      checkDistributed<float>(kind, 0.0, eps, 2000, 1, 1e-12, 1e-12);
    }
}

// The LET's purpose: on spatial pieces each rank receives a
// small part of the others' sources, far less than gathering them all; at
// this size (unlike the small sets above, where nearly every remote source is
// near) many nodes travel as multipoles, and the results stay within the
// contract.
JZ_TEST(DistributedReceivesLessThanAll)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 150000, stride = 301;
  for (const char* kind : { "uniform", "clustered" })
  {
    const std::vector<double> xyz = jztest::makePoints<double>(kind, n, 4);
    const std::vector<double> m = masses(n, false);
    const int ranks = 4;
    const DistributedRun got = runDistributed<double>(
      xyz, m, nullptr, pieceOf("slabs", xOf(xyz), ranks), {}, ranks, 0.5, 1e-3);
    const double gatherAll = double(ranks - 1) * 32.0; // 4 doubles per remote source
    double ea, ep;
    errors(got.field, direct(xyz, m, xyz, 0, 1e-3, 1.0, stride), stride, ea, ep);
    std::printf("  %s slabs, 4 ranks: LET %.1f B/pt, %.0f sources, %.0f multipoles (gathering: "
                "%.0f B/pt); p99 acc %.2e phi %.2e\n",
      kind, got.letBytes, got.letSources, got.letMultipoles, gatherAll, ea, ep);
    JZ_CHECK(got.letMultipoles > 1000);
    JZ_CHECK_MSG(got.letBytes < 0.6 * gatherAll, kind << ": LET " << got.letBytes);
    JZ_CHECK_MSG(ea <= 1e-3 && ep <= 1e-4, kind << ": acc " << ea << " phi " << ep);
  }
}

// Query points under MPI, spread over the ranks as arbitrarily as the
// sources, one rank with none: within the contract (exact at theta = 0).
JZ_TEST(DistributedQueries)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 6000;
  const std::vector<float> xyz = jztest::makePoints<float>("clustered", n, 9);
  const std::vector<double> m = masses(n, false);
  const std::vector<float> grid = gridAndParticles(xyz);
  const int ranks = 3;
  const std::vector<int> sourceRank = pieceOf("random", xOf(xyz), ranks);
  const std::vector<int> queryRank = pieceOf("slabs", xOf(grid), ranks, 1);
  for (double eps : { 0.0, 0.01 })
    for (double theta : { 0.0, 0.5 })
    {
      const DistributedRun got =
        runDistributed<float>(xyz, m, &grid, sourceRank, queryRank, ranks, theta, eps);
      const Field ref = direct(xyz, m, grid, -1, eps, 1.0);
      double ea, ep;
      errors(got.field, ref, 1, ea, ep);
      JZ_CHECK_MSG(ea <= (theta == 0 ? 1e-12 : 1e-3), "eps " << eps << " acc " << ea);
      JZ_CHECK_MSG(ep <= (theta == 0 ? 1e-12 : 1e-4), "eps " << eps << " phi " << ep);
    }
}

// A rank without particles takes part; unit masses (no mass array) on
// spatial and on interleaved pieces.
JZ_TEST(DistributedEmptyRank)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 8000;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 2);
  const std::vector<double> m = masses(n, true);
  const Field ref = direct(xyz, m, xyz, 0, 1e-3, 1.0, 3);
  for (const char* pieces : { "slabs", "interleaved" })
    for (int ranks : { 2, 4 })
      for (int empty : { 0, ranks - 1 })
      {
        const std::vector<int> rank = pieceOf(pieces, xOf(xyz), ranks, empty);
        const DistributedRun got =
          runDistributed<double>(xyz, m, nullptr, rank, {}, ranks, 0.5, 1e-3, false);
        double ea, ep;
        errors(got.field, ref, 3, ea, ep);
        JZ_CHECK_MSG(ea <= 1e-3 && ep <= 1e-4,
          ranks << " ranks, rank " << empty << " empty: acc " << ea << " phi " << ep);
      }
}

// Bad input on one rank: every rank throws the same error naming it, and
// no rank writes output.
JZ_TEST(DistributedBadInputAgreed)
{
  jztest::skipOnGpu(kCpuAlone);
  const std::size_t n = 3000;
  const std::vector<double> xyz = jztest::makePoints<double>("uniform", n, 3);
  std::vector<double> m = masses(n, false);
  m[2 * n / 3 + 5] = -1; // on rank 2 of 3
  const int ranks = 3;
  std::vector<std::string> messages(ranks);
  std::vector<int> untouched(ranks, 0);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const std::size_t a = n * comm.rank() / ranks, b = n * (comm.rank() + 1) / ranks;
      jz::GravityProblem<double> p;
      p.sources = xyz.data() + 3 * a;
      p.numSources = b - a;
      p.sourceMasses = m.data() + a;
      std::vector<double> phi(b - a, 7.0);
      try
      {
        jz::computeGravityDistributed(
          comm, p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::CPU);
      }
      catch (const jz::Error& e)
      {
        messages[comm.rank()] = e.what();
      }
      untouched[comm.rank()] =
        std::all_of(phi.begin(), phi.end(), [](double v) { return v == 7.0; });
    });
  for (int r = 0; r < ranks; ++r)
  {
    JZ_CHECK_MSG(messages[r].find("rank 2") != std::string::npos &&
        messages[r].find("negative") != std::string::npos,
      "rank " << r << ": " << messages[r]);
    JZ_CHECK(untouched[r]);
  }
}

// Bad input fails before the GPU runs, with no output; Device CUDA without
// a usable GPU is a clear error and Auto runs on the CPU (this part runs on
// every machine and backend); with a GPU, Auto runs there.
JZ_TEST(DeviceRulesAndBadInput)
{
  std::vector<double> xyz = jztest::makePoints<double>("uniform", 100, 1);
  std::vector<double> m(100, 1.0);
  jz::GravityProblem<double> p;
  p.sources = xyz.data();
  p.numSources = 100;
  p.sourceMasses = m.data();
  std::vector<double> phi(100, 7.0);
  std::string why;
  if (!jz::cudaUsable(&why))
  {
    std::printf("  no GPU (%s): Device CUDA must fail, Auto runs on the CPU\n", why.c_str());
    try
    {
      jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::CUDA);
      JZ_CHECK_MSG(false, "Device CUDA ran without a GPU");
    }
    catch (const jz::Error& e)
    {
      JZ_CHECK_MSG(std::string(e.what()).find("no usable GPU") != std::string::npos, e.what());
    }
    JZ_CHECK(phi[0] == 7.0);
    const jz::RunInfo info =
      jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::Auto);
    JZ_CHECK(info.backend == jz::Backend::CPU);
    return;
  }
  const jz::RunInfo info =
    jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::Auto);
  JZ_CHECK_MSG(info.backend == jz::Backend::CUDA,
    "Auto ran on " << jz::backendName(info.backend) << " (" << info.note << ")");
  std::fill(phi.begin(), phi.end(), 7.0);
  m[17] = -1;
  JZ_CHECK_THROWS(
    jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::CUDA));
  m[17] = 1;
  xyz[3 * 42 + 1] = NAN;
  JZ_CHECK_THROWS(
    jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::CUDA));
  JZ_CHECK(phi[0] == 7.0);
}

// --- Cases of the GPU alone -------------------------------------------------
// The GPU backend's own machinery (src/gravity/Gravity*Cuda.cu): leaf
// batches, repeatability of the device's sums, and the small case for
// compute-sanitizer. They run with --backend=cuda (CTest's
// kernels.TestGravityCuda, Kernels/scripts/gpu-check.sh) and skip on the CPU.

// Many leaf batches (a small budget: JZ_CUDA_LEAF_BATCH_ENTRIES) give the
// results of one batch, bit for bit.
JZ_TEST(GpuLeafBatches)
{
  jztest::skipOnCpu("leaf batches are the GPU's (JZ_CUDA_LEAF_BATCH_ENTRIES): run with "
                    "--backend=cuda");
  const std::size_t n = 20000;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 4);
  const std::vector<double> m = masses(n, false);
  const jz::GravityProblem<double> p = selfProblem(xyz, m, 0.5, 1e-3);
  jz::RunInfo one, many;
  const Field whole = run(p, jz::Backend::CUDA, true, &one);
  setenv("JZ_CUDA_LEAF_BATCH_ENTRIES", "3000", 1);
  const Field batched = run(p, jz::Backend::CUDA, true, &many);
  unsetenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
  double batches = 0;
  for (const auto& c : many.counters)
    if (c.first == "gpu leaf batches")
      batches = c.second;
  JZ_CHECK_MSG(batches > 5, "leaf batches " << batches);
  JZ_CHECK(batched.phi == whole.phi && batched.acc == whole.acc);
}

// The same results on a second run (no races: every sum is one thread's, in
// an order fixed by the tree). The CPU's counterpart across thread counts is
// ThreadCountDoesNotChangeResults.
JZ_TEST(GpuRunsAreRepeatable)
{
  jztest::skipOnCpu("repeatability of the GPU's sums: run with --backend=cuda");
  const std::vector<float> pts = jztest::makePoints<float>("clustered", 50000, 8);
  const std::vector<double> m = masses(50000, false);
  const jz::GravityProblem<float> q = selfProblem(pts, m, 0.6, 1e-3);
  const Field a = run(q, jz::Backend::CUDA), b = run(q, jz::Backend::CUDA);
  JZ_CHECK(a.phi == b.phi && a.acc == b.acc);
}

// A small case that reaches every kernel (two planes: M2P on the node plane
// and at the leaves, point masses, direct sums; queries from sources; many
// leaf batches), for compute-sanitizer (Kernels/scripts/gpu-check.sh).
JZ_TEST(GpuSanitizerSmall)
{
  jztest::skipOnCpu("the small case for compute-sanitizer: run with --backend=cuda");
  const std::size_t n = 40000; // 2 planes (1500 leaves, 284 nodes)
  std::vector<float> xyz = jztest::makePoints<float>("clustered", n, 8);
  for (std::size_t i = 0; i < 300; ++i) // a bulk duplicate: a point-mass node
    for (int k = 0; k < 3; ++k)
      xyz[3 * (7 * i) + k] = 0.25f;
  const std::vector<double> m = masses(n, false);
  const Field ref = direct(xyz, m, xyz, 0, 1e-3, 1.0, 401);
  check("clustered float theta 0.5", selfProblem(xyz, m, 0.5, 1e-3), ref, 401, 1e-3, 1e-4);
  const std::vector<float> some(xyz.begin() + 3 * 1000, xyz.begin() + 3 * 1500);
  jz::GravityProblem<float> q = selfProblem(xyz, m, 0.5, 1e-3);
  q.queries = some.data();
  q.numQueries = 500;
  q.queriesFromSource = 1000;
  const Field refSome = direct(xyz, m, some, 1000, 1e-3, 1.0);
  setenv("JZ_CUDA_LEAF_BATCH_ENTRIES", "2000", 1);
  check("queries from sources theta 0.5, leaf batches", q, refSome, 1, 1e-3, 1e-4);
  unsetenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
}

JZ_TEST_MAIN()
