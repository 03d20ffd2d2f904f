// Halo catalogue additions against brute force: centres of potential from
// O(n^2) potentials of each group's members (nearest image around the
// smallest-id member when periodic), SO radius/mass/count from every
// particle's sorted distance to the centre; uniform, clustered and
// duplicate-heavy sets, float and double, periodic and open, one and several
// simulated ranks (identical results).
#include <algorithm>
#include <cmath>
#include <vector>

#include "PointSets.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/HaloProperties.h"

namespace
{
constexpr double kPi = 3.14159265358979323846;

struct Case
{
  std::vector<double> xyz, mass;
  std::vector<jz::GlobalId> ids, group;
  std::size_t G = 0;
  bool periodic = true;
  bool unitMasses = false; // the kernel gets no masses (every mass 1, as in `mass`)
};

double fold(double d, bool periodic)
{
  return periodic ? d - std::round(d) : d; // unit box
}

Case makeCase(const std::string& kind, std::size_t n, bool periodic, std::size_t bigGroup = 0,
  std::size_t seeds = 12)
{
  Case c;
  c.periodic = periodic;
  c.xyz = jztest::makePoints<double>(kind, n, 11);
  for (double& v : c.xyz)
    v = v - std::floor(v); // in the unit box
  c.mass.resize(n);
  c.ids.resize(n);
  c.group.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i)
  {
    c.mass[i] = 1.0 + double(i % 3);
    c.ids[i] = jz::GlobalId((i * 7919) % n); // a permutation: ids differ from indices
  }
  // Groups: points near 12 seeds (some straddle the periodic boundary).
  c.G = seeds;
  for (std::size_t i = 0; i < n; ++i)
  {
    for (std::size_t g = 0; g < c.G; ++g)
    {
      const double s[3] = { 0.08 * double(g), 0.5 + 0.04 * double(g % 5), 0.02 };
      double d2 = 0;
      for (int k = 0; k < 3; ++k)
      {
        const double d = fold(c.xyz[3 * i + k] - s[k], periodic);
        d2 += d * d;
      }
      if (d2 < 0.1 * 0.1)
      {
        c.group[i] = jz::GlobalId(g);
        break;
      }
    }
    if (bigGroup && i < bigGroup)
      c.group[i] = 0;
  }
  return c;
}

struct Reference
{
  std::vector<double> cop;
  std::vector<jz::GlobalId> mostBound;
  std::vector<double> radius, mass;
  std::vector<jz::GlobalId> count;
};

Reference reference(
  const Case& c, double eps, double delta, double rhoRef, const std::vector<double>* soCentres)
{
  const std::size_t n = c.mass.size();
  Reference ref;
  ref.cop.assign(3 * c.G, 0.0);
  ref.mostBound.assign(c.G, -1);
  for (std::size_t g = 0; g < c.G; ++g)
  {
    std::vector<std::size_t> mem;
    for (std::size_t i = 0; i < n; ++i)
      if (c.group[i] == jz::GlobalId(g))
        mem.push_back(i);
    std::sort(
      mem.begin(), mem.end(), [&](std::size_t a, std::size_t b) { return c.ids[a] < c.ids[b]; });
    std::vector<double> ux(3 * mem.size());
    for (std::size_t a = 0; a < mem.size(); ++a)
      for (int k = 0; k < 3; ++k)
        ux[3 * a + k] =
          c.xyz[3 * mem[0] + k] + fold(c.xyz[3 * mem[a] + k] - c.xyz[3 * mem[0] + k], c.periodic);
    double best = 1e300;
    for (std::size_t a = 0; a < mem.size(); ++a)
    {
      double phi = 0;
      for (std::size_t b = 0; b < mem.size(); ++b)
      {
        double s2 = eps * eps;
        for (int k = 0; k < 3; ++k)
          s2 += (ux[3 * a + k] - ux[3 * b + k]) * (ux[3 * a + k] - ux[3 * b + k]);
        if (b != a && s2 > 0)
          phi -= c.mass[mem[b]] / std::sqrt(s2);
      }
      if (phi < best) // members in id order: ties keep the smaller id
      {
        best = phi;
        ref.mostBound[g] = c.ids[mem[a]];
        for (int k = 0; k < 3; ++k)
          ref.cop[3 * g + k] = c.xyz[3 * mem[a] + k];
      }
    }
  }
  const std::vector<double>& centres = soCentres ? *soCentres : ref.cop;
  for (std::size_t g = 0; g < c.G; ++g)
  {
    std::vector<std::pair<double, double>> prof;
    for (std::size_t i = 0; i < n; ++i)
    {
      double r2 = 0;
      for (int k = 0; k < 3; ++k)
      {
        const double d = fold(c.xyz[3 * i + k] - centres[3 * g + k], c.periodic);
        r2 += d * d;
      }
      prof.emplace_back(r2, c.mass[i]);
    }
    std::sort(prof.begin(), prof.end());
    double M = 0, R = 0, Mk = 0;
    jz::GlobalId k = 0;
    for (std::size_t i = 0; i < prof.size();)
    {
      std::size_t j = i;
      double m = M;
      while (j < prof.size() && prof[j].first == prof[i].first)
        m += prof[j++].second;
      const double r = std::sqrt(prof[i].first);
      if (r > 0 && m / (4.0 / 3.0 * kPi * r * r * r) < delta * rhoRef)
        break;
      M = m;
      R = r;
      Mk = m;
      k = jz::GlobalId(j);
      i = j;
    }
    ref.radius.push_back(R);
    ref.mass.push_back(Mk);
    ref.count.push_back(k);
  }
  return ref;
}

// Runs the kernel on `ranks` simulated ranks (contiguous shares; row g owned
// by rank g % ranks) and returns the rows in GroupId order.
template <class T>
jz::HaloProperties run(const Case& c, int ranks, const jz::HaloPropertiesOptions& o,
  const std::vector<double>& com, double rowMass = 10.0, jz::RunInfo* info0 = nullptr)
{
  const std::size_t n = c.mass.size();
  std::vector<T> pts(c.xyz.begin(), c.xyz.end());
  jz::HaloProperties all;
  all.centreOfPotential.assign(3 * c.G, 0.0);
  all.mostBoundId.assign(c.G, -1);
  all.soRadius.assign(c.G, 0.0);
  all.soMass.assign(c.G, 0.0);
  all.soCount.assign(c.G, 0);
  std::vector<jz::HaloProperties> parts(ranks);
  std::vector<std::vector<jz::GlobalId>> rowsOf(ranks);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      const std::size_t a = n * r / ranks, b = n * (r + 1) / ranks;
      jz::HaloPropertiesInput<T> in;
      in.points = pts.data() + 3 * a;
      in.numPoints = b - a;
      in.masses = c.unitMasses ? nullptr : c.mass.data() + a;
      in.ids = c.ids.data() + a;
      in.groupId = c.group.data() + a;
      in.numGroups = c.G;
      for (std::size_t g = 0; g < c.G; ++g)
        if (int(g % ranks) == r)
        {
          in.rowGroupId.push_back(jz::GlobalId(g));
          in.rowCenterOfMass.insert(in.rowCenterOfMass.end(), &com[3 * g], &com[3 * g] + 3);
          in.rowMass.push_back(rowMass);
        }
      in.periodic = c.periodic;
      for (int k = 0; k < 3; ++k)
      {
        in.boxLo[k] = 0;
        in.boxHi[k] = 1;
      }
      jz::RunControl control;
      control.numThreads = 2;
      const jz::RunInfo info = jz::computeHaloProperties(comm, in, o, parts[r], control);
      if (r == 0 && info0)
        *info0 = info;
      rowsOf[r] = in.rowGroupId;
    });
  for (int r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < rowsOf[r].size(); ++i)
    {
      const std::size_t g = std::size_t(rowsOf[r][i]);
      if (o.potentialCentres)
      {
        std::copy(&parts[r].centreOfPotential[3 * i], &parts[r].centreOfPotential[3 * i] + 3,
          &all.centreOfPotential[3 * g]);
        all.mostBoundId[g] = parts[r].mostBoundId[i];
      }
      if (o.sphericalOverdensity)
      {
        all.soRadius[g] = parts[r].soRadius[i];
        all.soMass[g] = parts[r].soMass[i];
        all.soCount[g] = parts[r].soCount[i];
      }
    }
  return all;
}

// rowMass: the FoF mass given for every row (the first SO trial radius);
// retries: the count of centres the one-rank run retried with a larger one.
template <class T>
void checkCase(Case c, const std::string& kind, bool centres, double rowMass = 10.0,
  double* retries = nullptr, double softening = 1e-3)
{
  const std::size_t n = c.mass.size();
  jz::HaloPropertiesOptions o;
  o.potentialCentres = centres;
  o.softening = softening;
  o.gravitationalConstant = 3;
  o.sphericalOverdensity = true;
  o.overdensity = 1.5;
  o.referenceDensity = 2.0 * double(n); // the mean: masses 1..3, unit box
  // The SO centre when no centre of potential: the group's last member
  // (any point will do; one on a particle has a non-trivial profile).
  std::vector<double> com(3 * c.G);
  for (std::size_t i = 0; i < n; ++i)
    if (c.group[i] >= 0)
      std::copy(&c.xyz[3 * i], &c.xyz[3 * i] + 3, &com[3 * c.group[i]]);
  // Float coordinates: the reference sees the same rounded points.
  for (double& v : c.xyz)
    v = double(T(v));
  const Reference ref =
    reference(c, o.softening, o.overdensity, o.referenceDensity, centres ? nullptr : &com);
  for (int ranks : { 1, 2, 3 })
  {
    jz::RunInfo info;
    const jz::HaloProperties got = run<T>(c, ranks, o, com, rowMass, &info);
    for (const auto& counter : info.counters)
      if (ranks == 1 && retries && counter.first == "SO retries")
        *retries = counter.second;
    int nonzero = 0;
    for (std::size_t g = 0; g < c.G; ++g)
    {
      if (centres)
      {
        JZ_CHECK_MSG(got.mostBoundId[g] == ref.mostBound[g],
          kind << " ranks " << ranks << " group " << g << ": " << got.mostBoundId[g] << " vs "
               << ref.mostBound[g]);
        for (int k = 0; k < 3; ++k)
          JZ_CHECK(got.centreOfPotential[3 * g + k] == ref.cop[3 * g + k]);
      }
      JZ_CHECK_MSG(got.soCount[g] == ref.count[g],
        kind << " ranks " << ranks << " group " << g << ": SOCount " << got.soCount[g] << " vs "
             << ref.count[g]);
      JZ_CHECK_MSG(std::abs(got.soRadius[g] - ref.radius[g]) <= 1e-12 * (1 + ref.radius[g]),
        kind << " ranks " << ranks << " group " << g << ": SORadius " << got.soRadius[g] << " vs "
             << ref.radius[g] << " (SOCount " << ref.count[g] << ")");
      JZ_CHECK(std::abs(got.soMass[g] - ref.mass[g]) <= 1e-9 * (1 + ref.mass[g]));
      nonzero += ref.count[g] > 1;
    }
    JZ_CHECK_MSG(nonzero >= 2, kind << ": only " << nonzero << " groups with an SO mass");
  }
}

template <class T>
void check(const std::string& kind, bool periodic, bool centres, std::size_t n, std::size_t big = 0,
  std::size_t seeds = 12)
{
  checkCase<T>(makeCase(kind, n, periodic, big, seeds), kind, centres);
}

// Most particles crowded into one small cube of the periodic box: the SO
// searches visit too many particles per cell of the grid and the tree takes
// over (HaloProperties.cpp, collectWithin); 80 groups of the crowd.
Case crowdedCase()
{
  Case c = makeCase("uniform", 4000, true, 0, 0);
  c.G = 80;
  for (std::size_t i = 0; i < 3200; ++i)
  {
    for (int k = 0; k < 3; ++k)
      c.xyz[3 * i + k] =
        0.999 + 0.002 * c.xyz[3 * i + k] - std::floor(0.999 + 0.002 * c.xyz[3 * i + k]);
    c.group[i] = jz::GlobalId(i % c.G);
  }
  return c;
}
} // namespace

JZ_TEST(CentresAndSoPeriodic)
{
  for (const char* kind : { "uniform", "clustered", "duplicates" })
  {
    check<double>(kind, true, true, 6000);
    check<float>(kind, true, true, 6000);
  }
}

// No mass array (the filters' MassArray "None"): unit masses everywhere,
// the SO grid keeps none (SphericalOverdensityGrid::massAt).
JZ_TEST(CentresAndSoUnitMasses)
{
  for (const char* kind : { "clustered", "duplicates" })
  {
    Case c = makeCase(kind, 6000, true);
    c.unitMasses = true;
    std::fill(c.mass.begin(), c.mass.end(), 1.0);
    checkCase<double>(c, std::string(kind) + " unit masses", true);
    checkCase<float>(c, std::string(kind) + " unit masses", true);
  }
}

JZ_TEST(SoAroundCentreOfMassOpenBox)
{
  for (const char* kind : { "clustered", "duplicates" })
    check<double>(kind, false, false, 6000);
}

// A group above kDirectCentreLimit: the branch and bound picks the
// candidates; a uniform one (no pronounced minimum) falls back to the tree
// ranking.
JZ_TEST(LargeGroupCentre)
{
  check<double>("clustered", true, true, 12000, jz::kDirectCentreLimit + 500);
  check<double>("uniform", true, true, 12000, jz::kDirectCentreLimit + 500);
}

// Without softening (the filters' default; the cases above all soften):
// pairs at distance 0 are skipped, in the large group's leaf filter and in
// the small groups' symmetric sums, on 1 to 3 ranks. (The near sums that
// GCC 12 once miscompiled there are caught by TestPotentialCentreBounds'
// BenchmarkHalosUnsoftened; these groups did not trigger it.)
JZ_TEST(CentresUnsoftened)
{
  checkCase<double>(makeCase("clustered", 12000, true, jz::kDirectCentreLimit + 500, 12),
    "clustered eps 0", true, 10.0, nullptr, 0.0);
  checkCase<float>(
    makeCase("duplicates", 6000, true, 0, 12), "duplicates eps 0", true, 10.0, nullptr, 0.0);
}

// Many groups: the first SO round walks a tree over the centres; the later
// rounds, with few centres left, scan the particles.
JZ_TEST(SoManyCentres)
{
  check<double>("clustered", true, true, 8000, 0, 100);
  check<float>("uniform", false, false, 8000, 0, 100);
}

// FoF masses far below the SO masses: on one rank every centre's profile is
// retried in its thread with three times the radius (HaloProperties.cpp,
// soOnGrid); on several, in rounds; both as the reference; and FoF masses so
// small that the trial radius would underflow to 0.
JZ_TEST(SoRetriesFromSmallTrialRadii)
{
  double retries = -1;
  checkCase<double>(makeCase("clustered", 6000, true), "small trial radii", true, 1e-9, &retries);
  JZ_CHECK_MSG(retries > 0, "no SO retries on one rank (" << retries << ")");
  // A FoF mass whose trial radius underflows to 0 (it could never grow).
  checkCase<double>(makeCase("clustered", 3000, true), "underflowing trial radii", false, 1e-320);
}

JZ_TEST(SoCrowdedPeriodic)
{
  checkCase<double>(crowdedCase(), "crowded", true);
  checkCase<float>(crowdedCase(), "crowded", false);
}

JZ_TEST(SoProfileDefinition)
{
  // Equal distances enter together; r = 0 passes; first failure ends it.
  const double v = 4.0 / 3.0 * kPi;
  bool failed = false;
  std::vector<std::pair<double, double>> p = { { 0, 5 }, { 1, 1 }, { 1, 1 }, { 4, 1 } };
  jz::SoResult r = jz::soFromProfile(p, 7.0 / v - 1e-9, &failed); // M(1) = 7 passes, M(2) = 8 fails
  JZ_CHECK(failed && r.count == 3 && r.mass == 7 && r.radius == 1);
  r = jz::soFromProfile(p, 7.0 / v + 1e-9, &failed); // M(1) = 7 fails: only the centre
  JZ_CHECK(failed && r.count == 1 && r.mass == 5 && r.radius == 0);
  r = jz::soFromProfile({ { 1, 1 } }, 1e9, &failed);
  JZ_CHECK(failed && r.count == 0 && r.mass == 0);
}

int main(int argc, char** argv)
{
  return jztest::runAll(argc, argv);
}

// The options' rules (one home, jz::haloOptionsError, also FriendsOfFriends'):
// each broken rule names its option, in the caller's words when given.
JZ_TEST(HaloOptionsRules)
{
  jz::HaloPropertiesOptions ok;
  ok.potentialCentres = true;
  ok.sphericalOverdensity = true;
  ok.referenceDensity = 1.0;
  JZ_CHECK(jz::haloOptionsError(ok).empty());
  auto broken = [&](auto change, const char* word)
  {
    jz::HaloPropertiesOptions o = ok;
    change(o);
    const std::string e = jz::haloOptionsError(o);
    JZ_CHECK_MSG(e.find(word) != std::string::npos, word << ": got '" << e << "'");
  };
  broken([](jz::HaloPropertiesOptions& o) { o.softening = -1; }, "softening");
  broken([](jz::HaloPropertiesOptions& o) { o.softening = NAN; }, "softening");
  broken([](jz::HaloPropertiesOptions& o) { o.gravitationalConstant = 0; }, "gravitational");
  broken([](jz::HaloPropertiesOptions& o) { o.overdensity = INFINITY; }, "overdensity");
  broken([](jz::HaloPropertiesOptions& o) { o.referenceDensity = 0; }, "reference density");
  // Rules of an option that is off do not apply.
  jz::HaloPropertiesOptions off = ok;
  off.potentialCentres = false;
  off.softening = -1;
  JZ_CHECK(jz::haloOptionsError(off).empty());
  jz::InputNames names;
  names.softening = "Softening";
  jz::HaloPropertiesOptions o = ok;
  o.softening = -2;
  JZ_CHECK(jz::haloOptionsError(o, names).find("Softening must be") == 0);
}
