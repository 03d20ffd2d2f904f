// Tree gravity against direct summation in double (an independent O(N^2)
// loop here): exact at theta = 0, within the accuracy contract at theta =
// 0.5 (99th percentiles: 1e-3 relative acceleration, 1e-4 potential), on
// uniform, clustered and duplicate-heavy sets, float and double, self and
// separate queries, one and several simulated ranks; bad input fails.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "PointSets.h"
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

template <class T>
Field run(const jz::GravityProblem<T>& p)
{
  const std::size_t nq = p.queries ? p.numQueries : p.numSources;
  Field f{ std::vector<double>(nq), std::vector<double>(3 * nq) };
  jz::GravityResults r{ f.phi.data(), f.acc.data() };
  jz::RunControl control;
  control.numThreads = 2;
  jz::computeGravity(p, r, jz::Backend::CPU, control);
  return f;
}

// The sources querying themselves, with masses m.
template <class T>
jz::GravityProblem<T> selfProblem(
  const std::vector<T>& xyz, const std::vector<double>& m, double theta, double eps)
{
  jz::GravityProblem<T> p;
  p.sources = xyz.data();
  p.numSources = m.size();
  p.sourceMasses = m.data();
  p.openingAngle = theta;
  p.softening = eps;
  return p;
}

template <class T>
void checkContract(const std::string& kind, double theta, double eps, double accBound,
  double phiBound, std::size_t n)
{
  const std::size_t stride = 7;
  const std::vector<T> xyz = jztest::makePoints<T>(kind, n, 5);
  const std::vector<double> m = masses(n, false);
  jz::GravityProblem<T> p = selfProblem(xyz, m, theta, eps);
  p.gravitationalConstant = 2.5;
  const Field got = run(p);
  const Field ref = direct(xyz, m, xyz, 0, eps, 2.5, stride);
  double ea, ep;
  errors(got, ref, stride, ea, ep);
  std::printf("  %s %s theta %.2f eps %g: p99 acc %.2e phi %.2e\n", kind.c_str(),
    sizeof(T) == 4 ? "float" : "double", theta, eps, ea, ep);
  JZ_CHECK_MSG(ea <= accBound, kind << " acc " << ea);
  JZ_CHECK_MSG(ep <= phiBound, kind << " phi " << ep);
}
} // namespace

JZ_TEST(DirectSummationAtThetaZero)
{
  for (const char* kind : { "uniform", "clustered", "duplicates", "lattice" })
    for (double eps : { 0.0, 1e-3 })
    {
      checkContract<double>(kind, 0.0, eps, 1e-12, 1e-12, 3000);
      checkContract<float>(kind, 0.0, eps, 1e-12, 1e-12, 3000);
    }
}

JZ_TEST(AccuracyContractAtThetaHalf)
{
  for (const char* kind : { "uniform", "clustered", "duplicates", "lattice", "outliers" })
  {
    checkContract<double>(kind, 0.5, 0.0, 1e-3, 1e-4, 12000);
    checkContract<float>(kind, 0.5, 1e-3, 1e-3, 1e-4, 12000);
  }
}

// Larger opening angles are less accurate, and the error grows with theta:
// the walk really uses multipoles (a test that cannot fail is a defect).
JZ_TEST(ErrorGrowsWithOpeningAngle)
{
  const std::size_t n = 8000, stride = 5;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 3);
  const std::vector<double> m = masses(n, true);
  const Field ref = direct(xyz, m, xyz, 0, 0.0, 1.0, stride);
  double last = 0;
  for (double theta : { 0.3, 0.6, 1.0 })
  {
    jz::GravityProblem<double> p;
    p.sources = xyz.data();
    p.numSources = n;
    p.openingAngle = theta;
    double ea, ep;
    errors(run(p), ref, stride, ea, ep);
    JZ_CHECK_MSG(ea > last, "theta " << theta << " acc " << ea << " not above " << last);
    last = ea;
  }
  JZ_CHECK(last > 1e-5);
}

// The node-node interactions (M2L into local expansions) are really used,
// for self and separate queries, and the results stay within the contract.
JZ_TEST(NodeNodeInteractionsAreUsed)
{
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
    Field got{ std::vector<double>(n), std::vector<double>(3 * n) };
    jz::RunControl control;
    control.numThreads = 2;
    const jz::RunInfo info = jz::computeGravity(
      *problem, jz::GravityResults{ got.phi.data(), got.acc.data() }, jz::Backend::CPU, control);
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
// terms in an order fixed by the tree (README, "Tree Gravity").
JZ_TEST(ThreadCountDoesNotChangeResults)
{
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
// excluded, and at eps = 0 the coincident pair is skipped).
JZ_TEST(SeparateQueries)
{
  const std::size_t n = 6000;
  const std::vector<float> xyz = jztest::makePoints<float>("clustered", n, 9);
  const std::vector<double> m = masses(n, false);
  std::vector<float> grid;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      for (int k = 0; k < 12; ++k)
        grid.insert(grid.end(), { float(-0.1 + 0.1 * i), float(-0.1 + 0.1 * j), float(0.1 * k) });
  grid.insert(grid.end(), xyz.begin(), xyz.begin() + 300); // 100 particle positions
  for (double eps : { 0.0, 0.01 })
    for (double theta : { 0.0, 0.5 })
    {
      jz::GravityProblem<float> p;
      p.sources = xyz.data();
      p.numSources = n;
      p.sourceMasses = m.data();
      p.queries = grid.data();
      p.numQueries = grid.size() / 3;
      p.openingAngle = theta;
      p.softening = eps;
      const Field got = run(p);
      const Field ref = direct(xyz, m, grid, -1, eps, 1.0);
      double ea, ep;
      errors(got, ref, 1, ea, ep);
      JZ_CHECK_MSG(ea <= (theta == 0 ? 1e-12 : 1e-3), "eps " << eps << " acc " << ea);
      JZ_CHECK_MSG(ep <= (theta == 0 ? 1e-12 : 1e-4), "eps " << eps << " phi " << ep);
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
    std::vector<double> phi(n, 0.0);
    jz::RunControl control;
    control.numThreads = 2;
    jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::CPU, control);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(phi[i] - full.phi[i]) / std::abs(full.phi[i]));
    JZ_CHECK_MSG(worst <= 1e-6, kind << ": potential alone differs by " << worst);
  }
}

// Bulk duplicates at eps = 0: every coincident pair is skipped, finite results.
JZ_TEST(BulkDuplicatesAreSkippedPairs)
{
  std::vector<double> xyz;
  for (int i = 0; i < 5000; ++i)
    xyz.insert(xyz.end(), { 0.5, 0.5, 0.5 });
  for (int i = 0; i < 5000; ++i)
    xyz.insert(xyz.end(), { 1.5, 0.5, 0.5 });
  jz::GravityProblem<double> p;
  p.sources = xyz.data();
  p.numSources = xyz.size() / 3;
  const Field got = run(p);
  for (std::size_t i = 0; i < got.phi.size(); ++i)
  {
    JZ_CHECK(std::abs(got.phi[i] + 5000.0) < 1e-9);
    const double ax = got.acc[3 * i];
    JZ_CHECK(std::abs(std::abs(ax) - 5000.0) < 1e-9);
  }
}

JZ_TEST(BadInputIsRejected)
{
  std::vector<double> xyz = jztest::makePoints<double>("uniform", 100, 1);
  std::vector<double> m(100, 1.0);
  auto rejects = [&](const jz::GravityProblem<double>& p, const char* word)
  {
    std::vector<double> phi(100, 7.0);
    try
    {
      jz::computeGravity(p, jz::GravityResults{ phi.data(), nullptr }, jz::Backend::CPU);
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

// Simulated ranks: each rank's own particles against everyone's, equal to the
// serial run within the contract.
JZ_TEST(DistributedEqualsSerial)
{
  const std::size_t n = 9000;
  const std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 4);
  const std::vector<double> m = masses(n, false);
  const Field ref = direct(xyz, m, xyz, 0, 1e-3, 1.0, 1);
  for (int ranks : { 2, 4, 8 })
  {
    Field got{ std::vector<double>(n), std::vector<double>(3 * n) };
    jztest::ThreadWorld world(ranks);
    world.run(
      [&](jz::Communicator& comm)
      {
        const std::size_t a = n * comm.rank() / ranks, b = n * (comm.rank() + 1) / ranks;
        jz::GravityProblem<double> p;
        p.sources = xyz.data() + 3 * a;
        p.numSources = b - a;
        p.sourceMasses = m.data() + a;
        p.softening = 1e-3;
        jz::RunControl control;
        control.numThreads = 1;
        const jz::RunInfo info = jz::computeGravityDistributed(comm, p,
          jz::GravityResults{ got.phi.data() + a, got.acc.data() + 3 * a }, jz::Backend::CPU,
          control);
        for (const auto& c : info.counters)
          if (comm.rank() == 0 && c.first == "received bytes per local point")
            std::printf("  %d ranks: received %.0f bytes per local point\n", ranks, c.second);
      });
    double ea, ep;
    errors(got, ref, 1, ea, ep);
    JZ_CHECK_MSG(ea <= 1e-3 && ep <= 1e-4, ranks << " ranks: acc " << ea << " phi " << ep);
  }
}

int main(int argc, char** argv)
{
  return jztest::runAll(argc, argv);
}
