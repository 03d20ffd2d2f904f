// Subhalos against known substructure: a Hernquist host with Plummer
// satellites (own bulk velocities, one through the centre, a satellite of a
// satellite, one at the resolution limit) in one FoF group. Membership recall
// and precision per satellite; boundness at opening angle 0 with a direct-sum
// potential written here; the catalogue against brute force (MostBoundId,
// Vmax, HalfMassRadius, counts, ranks, parents); rounds of removal against
// fresh direct sums each round; independence of input order,
// threads and precision; bulk duplicates, a group without substructure, tiny
// groups, empty input and bad input; the neighbours taken from the density
// search against the group's own search (periodic wrap, lattice ties,
// duplicates, ungrouped points among the members).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/Knn.h"
#include "jz/Subhalo.h"

namespace
{
constexpr double kPi = 3.14159265358979323846;

struct Halo
{
  std::vector<double> xyz, vel;
  std::vector<jz::GlobalId> group;
  std::vector<int> truth; // component per particle: 0 host, 1.. satellites, -1 elsewhere
};

std::vector<double> direction(std::mt19937_64& rng)
{
  std::normal_distribution<double> n(0, 1);
  double v[3] = { n(rng), n(rng), n(rng) };
  const double l = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return { v[0] / l, v[1] / l, v[2] / l };
}

// Adds n unit-mass particles of a bound sphere around centre with bulk
// velocity `bulk`: radii from the inverse cumulative mass, speeds a fraction
// (at most 0.6) of the local escape speed (G = 1).
template <class RadiusOf, class Phi>
void addSphere(Halo& h, std::mt19937_64& rng, std::size_t n, const double* centre,
  const double* bulk, int component, jz::GlobalId group, RadiusOf radiusOf, Phi phi)
{
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < n; ++i)
  {
    const double r = radiusOf(u(rng));
    const auto d = direction(rng), e = direction(rng);
    const double v = 0.6 * u(rng) * std::sqrt(2 * std::abs(phi(r)));
    for (int k = 0; k < 3; ++k)
    {
      h.xyz.push_back(centre[k] + r * d[std::size_t(k)]);
      h.vel.push_back(bulk[k] + v * e[std::size_t(k)]);
    }
    h.group.push_back(group);
    h.truth.push_back(component);
  }
}

// Plummer (scale b) truncated at 6 b.
void addPlummer(Halo& h, std::mt19937_64& rng, std::size_t n, double b, const double* centre,
  const double* bulk, int component, jz::GlobalId group = 0)
{
  const double M = double(n), fmax = 216.0 / std::pow(37.0, 1.5);
  addSphere(
    h, rng, n, centre, bulk, component, group,
    [&](double q)
    {
      const double f = std::pow(q * fmax, 2.0 / 3.0);
      return b * std::sqrt(f / (1 - f));
    },
    [&](double r) { return -M / std::sqrt(r * r + b * b); });
}

// Hernquist (scale a) truncated at 10 a.
void addHernquist(Halo& h, std::mt19937_64& rng, std::size_t n, double a, const double* centre,
  int component, jz::GlobalId group = 0)
{
  const double M = double(n), fmax = 100.0 / 121.0, bulk[3] = { 0, 0, 0 };
  addSphere(
    h, rng, n, centre, bulk, component, group,
    [&](double q)
    {
      const double s = std::sqrt(q * fmax);
      return a * s / (1 - s);
    },
    [&](double r) { return -M / (r + a); });
}

struct Satellite
{
  std::size_t n;
  double b, pos[3], vel[3];
  int inside; // the component it orbits (0 the host)
};

// The host and its satellites (components 1..), a group with no
// substructure, one of bulk duplicates and one below MinimumSubhaloSize.
Halo makeHalo(std::size_t hostSize)
{
  std::mt19937_64 rng(7);
  Halo h;
  const double origin[3] = { 0, 0, 0 };
  addHernquist(h, rng, hostSize, 1.0, origin, 0);
  const Satellite sats[] = {
    { 2000, 0.03, { 2.0, 0, 0 }, { 0, 40, 0 }, 0 },     // 1: holds satellite 2
    { 200, 0.002, { 2.09, 0, 0 }, { 0, 40, 150 }, 1 },  // 2: satellite of satellite 1
    { 400, 0.008, { 0, 0.5, 0 }, { 0, -150, 0 }, 0 },   // 3: falling through the centre
    { 500, 0.01, { 0, 0, -1.5 }, { 30, 0, 0 }, 0 },     // 4
    { 300, 0.008, { -1, 1, 0 }, { 0, 0, 30 }, 0 },      // 5
    { 150, 0.005, { 0.5, -2, 0.5 }, { -20, 0, 0 }, 0 }, // 6
    { 30, 0.002, { -2, -0.5, 1 }, { 0, 20, 0 }, 0 },    // 7: at the resolution limit
  };
  int c = 1;
  for (const Satellite& s : sats)
    addPlummer(h, rng, s.n, s.b, s.pos, s.vel, c++);
  const double far[3] = { 50, 0, 0 }, still[3] = { 0, 0, 0 };
  addPlummer(h, rng, 400, 0.1, far, still, -1, 1); // no substructure
  for (int i = 0; i < 40; ++i)                     // bulk duplicates
  {
    const double x[3] = { 0, 50, 0 };
    for (int k = 0; k < 3; ++k)
    {
      h.xyz.push_back(x[k]);
      h.vel.push_back(0);
    }
    h.group.push_back(2);
    h.truth.push_back(-1);
  }
  const double small[3] = { 0, 0, 50 };
  addPlummer(h, rng, 12, 0.1, small, still, -1, 3); // below MinimumSubhaloSize
  return h;
}

template <class T>
struct Run
{
  std::vector<T> xyz;
  std::vector<jz::GlobalId> ids;
  jz::Subhalos out;
};

// GroupIds are the halo's times groupIdScale (1: FriendsOfFriends' dense
// numbering; large: ids beyond the point count).
template <class T>
Run<T> run(const Halo& h, double theta, int threads = 0, bool shuffle = false,
  jz::GlobalId groupIdScale = 1, jz::Backend backend = jz::Backend::CPU)
{
  const std::size_t n = h.group.size();
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t(0));
  if (shuffle)
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(3));
  Run<T> r;
  std::vector<double> vel(3 * n);
  std::vector<jz::GlobalId> group(n);
  r.xyz.resize(3 * n);
  r.ids.resize(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const std::size_t s = perm[i];
    for (int k = 0; k < 3; ++k)
    {
      r.xyz[3 * i + k] = T(h.xyz[3 * s + k]);
      vel[3 * i + k] = h.vel[3 * s + k];
    }
    group[i] = h.group[s] < 0 ? h.group[s] : h.group[s] * groupIdScale;
    r.ids[i] = jz::GlobalId(s);
  }
  jz::SubhaloProblem<T> p;
  p.points = r.xyz.data();
  p.numPoints = n;
  p.velocities = vel.data();
  p.ids = r.ids.data();
  p.groupId = group.data();
  p.openingAngle = theta;
  jz::RunControl control;
  control.numThreads = threads;
  jz::computeSubhalos(p, r.out, backend, control);
  return r;
}

// Per id: SubhaloId (runs may permute the input).
template <class T>
std::vector<jz::GlobalId> subhaloById(const Run<T>& r)
{
  std::vector<jz::GlobalId> s(r.ids.size());
  for (std::size_t i = 0; i < r.ids.size(); ++i)
    s[std::size_t(r.ids[i])] = r.out.subhaloId[i];
  return s;
}

// Recall and precision of each component with more than 100 members against
// the subhalo that holds most of it.
void checkMembership(const Halo& h, const std::vector<jz::GlobalId>& sub)
{
  std::map<int, std::map<jz::GlobalId, std::size_t>> overlap;
  std::map<int, std::size_t> size;
  std::map<jz::GlobalId, std::size_t> subSize;
  for (std::size_t i = 0; i < sub.size(); ++i)
  {
    if (h.truth[i] >= 0)
    {
      ++size[h.truth[i]];
      ++overlap[h.truth[i]][sub[i]];
    }
    if (sub[i] >= 0)
      ++subSize[sub[i]];
  }
  std::map<jz::GlobalId, int> claimed;
  for (const auto& [c, n] : size)
  {
    jz::GlobalId best = -1;
    std::size_t shared = 0;
    for (const auto& [s, k] : overlap[c])
      if (s >= 0 && k > shared)
      {
        best = s;
        shared = k;
      }
    const double recall = double(shared) / double(n);
    const double precision = best >= 0 ? double(shared) / double(subSize[best]) : 0.0;
    std::printf("  component %d (%zu members): subhalo %lld, recall %.4f, precision %.4f\n", c, n,
      static_cast<long long>(best), recall, precision);
    if (n > 100)
    {
      JZ_CHECK_MSG(recall >= 0.95 && precision >= 0.95, "component " << c);
      JZ_CHECK_MSG(best >= 0 && claimed.count(best) == 0, "component " << c << " shares a subhalo");
    }
    claimed[best] = c;
  }
}

// phi of every member of `members` from the others, directly.
template <class T>
std::vector<double> directPotential(const std::vector<T>& xyz, const std::vector<std::size_t>& m)
{
  std::vector<double> phi(m.size(), 0);
  for (std::size_t a = 0; a < m.size(); ++a)
    for (std::size_t b = 0; b < m.size(); ++b)
    {
      double r2 = 0;
      for (int k = 0; k < 3; ++k)
      {
        const double d = double(xyz[3 * m[a] + k]) - double(xyz[3 * m[b] + k]);
        r2 += d * d;
      }
      if (r2 > 0)
        phi[a] -= 1 / std::sqrt(r2);
    }
  return phi;
}

template <class T>
std::map<jz::GlobalId, std::vector<std::size_t>> members(const Run<T>& r)
{
  std::map<jz::GlobalId, std::vector<std::size_t>> m;
  for (std::size_t i = 0; i < r.out.subhaloId.size(); ++i)
    if (r.out.subhaloId[i] >= 0)
      m[r.out.subhaloId[i]].push_back(i);
  return m;
}
} // namespace

JZ_TEST(RecallPrecisionAndBoundnessAtThetaZero)
{
  const Halo h = makeHalo(8000);
  const Run<double> r = run<double>(h, 0.0);
  checkMembership(h, subhaloById(r));
  // Every member of every subhalo has energy <= 0 under the direct sum, and
  // the catalogue equals brute force.
  const jz::SubhaloCatalogue& cat = r.out.catalogue;
  const auto m = members(r);
  JZ_CHECK_EQ(m.size(), cat.numSubhalos);
  std::vector<double> vel(3 * h.group.size());
  for (std::size_t i = 0; i < h.group.size(); ++i)
    for (int k = 0; k < 3; ++k)
      vel[3 * i + k] = h.vel[3 * std::size_t(r.ids[i]) + k];
  for (const auto& [s, mem] : m)
  {
    const std::size_t row = std::size_t(s);
    const std::vector<double> phi = directPotential(r.xyz, mem);
    double vmean[3] = { 0, 0, 0 };
    for (std::size_t i : mem)
      for (int k = 0; k < 3; ++k)
        vmean[k] += vel[3 * i + k] / double(mem.size());
    std::size_t unbound = 0, lowest = 0;
    for (std::size_t a = 0; a < mem.size(); ++a)
    {
      double ke = 0;
      for (int k = 0; k < 3; ++k)
        ke += 0.5 * (vel[3 * mem[a] + k] - vmean[k]) * (vel[3 * mem[a] + k] - vmean[k]);
      if (ke + phi[a] > 1e-9 * std::abs(phi[a]))
        ++unbound;
      const auto better = [&](std::size_t x, std::size_t y)
      { return phi[x] != phi[y] ? phi[x] < phi[y] : r.ids[mem[x]] < r.ids[mem[y]]; };
      if (better(a, lowest))
        lowest = a;
    }
    JZ_CHECK_MSG(unbound == 0, "subhalo " << s << ": " << unbound << " unbound members");
    JZ_CHECK_EQ(cat.count[row], jz::GlobalId(mem.size()));
    JZ_CHECK_EQ(cat.mostBoundId[row], r.ids[mem[lowest]]);
    // Vmax and the half-mass radius from the sorted distances.
    std::vector<double> rad;
    for (std::size_t i : mem)
    {
      double r2 = 0;
      for (int k = 0; k < 3; ++k)
      {
        const double d = double(r.xyz[3 * i + k]) - cat.centreOfPotential[3 * row + k];
        r2 += d * d;
      }
      rad.push_back(std::sqrt(r2));
    }
    std::sort(rad.begin(), rad.end());
    double vmax = 0, rvmax = 0, half = -1;
    for (std::size_t k = 0; k < rad.size(); ++k)
    {
      const std::size_t enclosed =
        std::size_t(std::upper_bound(rad.begin(), rad.end(), rad[k]) - rad.begin());
      if (rad[k] > 0 && std::sqrt(double(enclosed) / rad[k]) > vmax)
      {
        vmax = std::sqrt(double(enclosed) / rad[k]);
        rvmax = rad[k];
      }
      if (half < 0 && 2 * enclosed >= rad.size())
        half = rad[k];
    }
    JZ_CHECK_MSG(std::abs(cat.vmax[row] - vmax) <= 1e-12 * vmax, s << ": " << cat.vmax[row]);
    JZ_CHECK_EQ(cat.rvmax[row], rvmax);
    JZ_CHECK_EQ(cat.halfMassRadius[row], half);
    JZ_CHECK_EQ(cat.mass[row], double(mem.size()));
  }
  // Ranks: 0 the main subhalo, then descending mass; ids by (GroupId, rank).
  for (std::size_t s = 1; s < cat.numSubhalos; ++s)
  {
    const bool sameGroup = cat.groupId[s] == cat.groupId[s - 1];
    JZ_CHECK(cat.groupId[s] >= cat.groupId[s - 1]);
    JZ_CHECK_EQ(cat.subhaloRank[s], sameGroup ? cat.subhaloRank[s - 1] + 1 : 0);
    if (sameGroup && cat.subhaloRank[s - 1] > 0)
      JZ_CHECK(cat.mass[s] <= cat.mass[s - 1]);
  }
  // The host is subhalo 0; satellite 2's parent is satellite 1's subhalo,
  // whose parent is the host's; the group without substructure has one
  // subhalo; the duplicates are one subhalo; the tiny group none.
  const auto sub = subhaloById(r);
  auto subOf = [&](int component)
  {
    std::map<jz::GlobalId, std::size_t> votes;
    for (std::size_t i = 0; i < sub.size(); ++i)
      if (h.truth[i] == component)
        ++votes[sub[i]];
    return std::max_element(
      votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
  };
  JZ_CHECK_EQ(subOf(0), 0);
  JZ_CHECK_EQ(cat.parentSubhaloId[0], -1);
  JZ_CHECK_EQ(cat.parentSubhaloId[std::size_t(subOf(2))], subOf(1));
  JZ_CHECK_EQ(cat.parentSubhaloId[std::size_t(subOf(1))], 0);
  std::map<jz::GlobalId, std::set<jz::GlobalId>> perGroup;
  for (std::size_t i = 0; i < sub.size(); ++i)
    perGroup[h.group[i]].insert(sub[i]);
  JZ_CHECK_EQ(perGroup[1].size(), 1u);
  JZ_CHECK(perGroup[1].count(-1) == 0 || perGroup[1].size() == 2);
  JZ_CHECK_EQ(perGroup[2].size(), 1u);
  JZ_CHECK(*perGroup[2].begin() >= 0);
  JZ_CHECK_EQ(perGroup[3].size(), 1u);
  JZ_CHECK_EQ(*perGroup[3].begin(), -1);
}

// A rule written once, used in both checks below: the same subhalos whatever
// the input order, the thread count and (up to the float positions'
// rounding of the membership) the precision.
JZ_TEST(IndependentOfOrderAndThreads)
{
  const Halo h = makeHalo(6000);
  const Run<double> a = run<double>(h, 0.5, 1);
  const Run<double> b = run<double>(h, 0.5, 0, true);
  JZ_CHECK(subhaloById(a) == subhaloById(b));
  JZ_CHECK(a.out.catalogue.mostBoundId == b.out.catalogue.mostBoundId);
  JZ_CHECK(a.out.catalogue.parentSubhaloId == b.out.catalogue.parentSubhaloId);
  const Run<float> f = run<float>(h, 0.5);
  checkMembership(h, subhaloById(f));
}

// GroupIds far beyond the point count (ranked, not counted, into place):
// the same subhalos, their GroupIds scaled alike.
JZ_TEST(SparseGroupIdsEqualDense)
{
  const Halo h = makeHalo(6000);
  const jz::GlobalId scale = 1000003;
  const Run<double> dense = run<double>(h, 0.5);
  const Run<double> sparse = run<double>(h, 0.5, 0, true, scale);
  JZ_CHECK(subhaloById(dense) == subhaloById(sparse));
  const jz::SubhaloCatalogue& a = dense.out.catalogue;
  const jz::SubhaloCatalogue& b = sparse.out.catalogue;
  JZ_CHECK_EQ(a.numSubhalos, b.numSubhalos);
  JZ_CHECK(a.mostBoundId == b.mostBoundId);
  JZ_CHECK(a.count == b.count);
  for (std::size_t s = 0; s < a.numSubhalos && s < b.numSubhalos; ++s)
    JZ_CHECK_EQ(a.groupId[s] * scale, b.groupId[s]);
}

// A host above the size where one group uses every thread inside.
JZ_TEST(LargeGroupAtThetaHalf)
{
  const Halo h = makeHalo(24000);
  checkMembership(h, subhaloById(run<double>(h, 0.5)));
}

// A host above the size where its densities, candidates and unbinding run
// on the run's backend: on the GPU the same subhalos and catalogue, bit for
// bit, as on the CPU (the kNN is the CPU's bits there; the unbinding stays on
// the CPU).
JZ_TEST(LargeGroupOnTheGpuEqualsTheCpu)
{
  jztest::skipOnCpu("compares the GPU's run with the CPU's");
  const Halo h = makeHalo(24000);
  const Run<double> cpu = run<double>(h, 0.5);
  const Run<double> gpu = run<double>(h, 0.5, 0, false, 1, jztest::backend());
  JZ_CHECK(cpu.out.subhaloId == gpu.out.subhaloId);
  JZ_CHECK(cpu.out.subhaloRank == gpu.out.subhaloRank);
  const jz::SubhaloCatalogue& a = cpu.out.catalogue;
  const jz::SubhaloCatalogue& b = gpu.out.catalogue;
  JZ_CHECK_EQ(a.numSubhalos, b.numSubhalos);
  JZ_CHECK(a.mostBoundId == b.mostBoundId);
  JZ_CHECK(a.count == b.count);
  JZ_CHECK(a.mass == b.mass);
  JZ_CHECK(a.vmax == b.vmax);
  JZ_CHECK(a.centreOfPotential == b.centreOfPotential);
}

// Simulated ranks, each with a slice of a shuffled input: the serial result.
JZ_TEST(DistributedEqualsSerial)
{
  const Halo h = makeHalo(3000);
  const std::size_t n = h.group.size();
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t(0));
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(5));
  std::vector<double> xyz(3 * n), vel(3 * n), mass(n);
  std::vector<jz::GlobalId> ids(n), group(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int k = 0; k < 3; ++k)
    {
      xyz[3 * i + k] = h.xyz[3 * perm[i] + k];
      vel[3 * i + k] = h.vel[3 * perm[i] + k];
    }
    mass[i] = 1.0 + double(perm[i] % 2);
    ids[i] = jz::GlobalId(perm[i]);
    group[i] = h.group[perm[i]];
  }
  jz::SubhaloProblem<double> p;
  p.points = xyz.data();
  p.numPoints = n;
  p.velocities = vel.data();
  p.masses = mass.data();
  p.ids = ids.data();
  p.groupId = group.data();
  jz::Subhalos serial;
  jz::computeSubhalos(p, serial, jz::Backend::CPU);
  JZ_CHECK(serial.catalogue.numSubhalos >= 8);
  for (int ranks : { 1, 2, 3 })
  {
    std::vector<jz::GlobalId> sid(n, -2), srank(n, -2);
    std::vector<jz::GlobalId> rowCount(serial.catalogue.numSubhalos, -1),
      rowMostBound(serial.catalogue.numSubhalos, -1), rowParent(serial.catalogue.numSubhalos, -2);
    std::mutex lock;
    jztest::ThreadWorld world(ranks);
    world.run(
      [&](jz::Communicator& comm)
      {
        const std::size_t a = n * std::size_t(comm.rank()) / std::size_t(ranks);
        const std::size_t b = n * std::size_t(comm.rank() + 1) / std::size_t(ranks);
        jz::SubhaloProblem<double> piece = p;
        piece.points = xyz.data() + 3 * a;
        piece.velocities = vel.data() + 3 * a;
        piece.masses = mass.data() + a;
        piece.ids = ids.data() + a;
        piece.groupId = group.data() + a;
        piece.numPoints = b - a;
        jz::Subhalos out;
        jz::RunControl control;
        control.numThreads = 1;
        jz::computeSubhalosDistributed(comm, piece, out, jz::Backend::CPU, control);
        std::lock_guard<std::mutex> guard(lock);
        std::copy(out.subhaloId.begin(), out.subhaloId.end(), sid.begin() + std::ptrdiff_t(a));
        std::copy(
          out.subhaloRank.begin(), out.subhaloRank.end(), srank.begin() + std::ptrdiff_t(a));
        const jz::SubhaloCatalogue& c = out.catalogue;
        for (std::size_t s = 0; s < c.numSubhalos; ++s)
        {
          const auto row = std::size_t(c.subhaloId[s]);
          if (row < rowCount.size())
          {
            rowCount[row] = c.count[s];
            rowMostBound[row] = c.mostBoundId[s];
            rowParent[row] = c.parentSubhaloId[s];
          }
        }
      });
    JZ_CHECK_MSG(sid == serial.subhaloId, ranks << " ranks: SubhaloId");
    JZ_CHECK_MSG(srank == serial.subhaloRank, ranks << " ranks: SubhaloRank");
    JZ_CHECK_MSG(rowCount == serial.catalogue.count, ranks << " ranks: Count");
    JZ_CHECK_MSG(rowMostBound == serial.catalogue.mostBoundId, ranks << " ranks: MostBoundId");
    JZ_CHECK_MSG(rowParent == serial.catalogue.parentSubhaloId, ranks << " ranks: parents");
  }
}

// A periodic box with a host and satellites across its corner, a lattice
// (every distance tied), duplicates inside a clump and ungrouped points
// everywhere: subhalos with the densities computed inside (the density
// search's neighbour lists serve the saddle rule) equal those with the same
// densities given (each group searches its own members).
template <class T>
void checkDensitySearchNeighbours()
{
  std::mt19937_64 rng(11);
  Halo h;
  const double corner[3] = { 0, 0, 0 }, still[3] = { 0, 0, 0 };
  addPlummer(h, rng, 3000, 0.3, corner, still, 0, 0);
  const double satA[3] = { 0.5, 0, 0 }, bulkA[3] = { 0, 30, 0 };
  addPlummer(h, rng, 300, 0.02, satA, bulkA, 1, 0);
  const double satB[3] = { -0.4, 0.3, 0 }, bulkB[3] = { 20, 0, 0 };
  addPlummer(h, rng, 200, 0.02, satB, bulkB, 2, 0);
  for (int i = 0; i < 12 * 12 * 12; ++i)
  {
    const int c[3] = { i % 12, (i / 12) % 12, i / 144 };
    for (int k = 0; k < 3; ++k)
    {
      h.xyz.push_back(4 + c[k] / 16.0);
      h.vel.push_back(0);
    }
    h.group.push_back(1);
    h.truth.push_back(-1);
  }
  const double clump[3] = { 6, 2, 2 };
  addPlummer(h, rng, 100, 0.05, clump, still, -1, 2);
  for (int i = 0; i < 40; ++i)
  {
    for (int k = 0; k < 3; ++k)
    {
      h.xyz.push_back(clump[k]);
      h.vel.push_back(0);
    }
    h.group.push_back(2);
    h.truth.push_back(-1);
  }
  std::uniform_real_distribution<double> u(0, 8);
  for (int i = 0; i < 2000; ++i)
  {
    for (int k = 0; k < 3; ++k)
    {
      h.xyz.push_back(u(rng));
      h.vel.push_back(0);
    }
    h.group.push_back(-1);
    h.truth.push_back(-1);
  }
  const std::size_t n = h.group.size();
  std::vector<T> xyz(3 * n);
  for (std::size_t i = 0; i < 3 * n; ++i)
    xyz[i] = T(h.xyz[i] - 8 * std::floor(h.xyz[i] / 8));
  std::vector<jz::GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = jz::GlobalId((i * 7919) % n); // not the input order
  // The defaults, and few neighbours (most members decided by the lists'
  // first entries, many lists too short).
  for (const auto& [densityK, saddleK] : { std::pair{ 32, 20 }, std::pair{ 8, 2 } })
  {
    jz::SubhaloProblem<T> p;
    p.points = xyz.data();
    p.numPoints = n;
    p.velocities = h.vel.data();
    p.ids = ids.data();
    p.groupId = h.group.data();
    p.densityNeighbors = densityK;
    p.saddleNeighbors = saddleK;
    p.periodic = true;
    for (int k = 0; k < 3; ++k)
      p.boxHi[k] = 8;
    jz::Subhalos inside;
    const jz::RunInfo insideInfo = jz::computeSubhalos(p, inside, jz::Backend::CPU);
    JZ_CHECK(inside.catalogue.numSubhalos >= 3);

    jz::KnnProblem<T> k;
    k.sources = xyz.data();
    k.numSources = n;
    k.sourceIds = ids.data();
    k.k = p.densityNeighbors;
    k.periodic = true;
    for (int d = 0; d < 3; ++d)
      k.boxHi[d] = 8;
    std::vector<T> rho(n);
    jz::KnnResults<T> r;
    r.density = rho.data();
    jz::computeKnn(k, r, jz::Backend::CPU);
    const std::vector<double> given(rho.begin(), rho.end());
    p.densities = given.data();
    jz::Subhalos own;
    const jz::RunInfo ownInfo = jz::computeSubhalos(p, own, jz::Backend::CPU);
    // Given densities: every member of the groups large enough searched in
    // its group; the lists spared most of them.
    const char* searched = "members searched within their group";
    JZ_CHECK_EQ(ownInfo.counter(searched), double(3000 + 300 + 200 + 12 * 12 * 12 + 100 + 40));
    JZ_CHECK(insideInfo.counter(searched) < 0.5 * ownInfo.counter(searched));
    JZ_CHECK_MSG(inside.subhaloId == own.subhaloId, "K " << densityK << ", " << saddleK);
    JZ_CHECK(inside.subhaloRank == own.subhaloRank);
    JZ_CHECK(inside.catalogue.count == own.catalogue.count);
    JZ_CHECK(inside.catalogue.mostBoundId == own.catalogue.mostBoundId);
  }
}

JZ_TEST(DensitySearchNeighboursEqualGroupSearch)
{
  checkDensitySearchNeighbours<float>();
  checkDensitySearchNeighbours<double>();
}

// Two cold lines of MinimumSubhaloSize members flying apart, joined in one
// group: with 2 MinimumSubhaloSize members no recorded candidate can hold a
// subhalo (the group queries no density, the whole group unbinds to
// nothing); one more member between them, the lowest in density, merges
// the lines there, and the smaller line is a subhalo of its own.
// The members left after every unbound one is removed, round after round,
// with fresh direct sums each round: the definition, written plainly.
// `rounds` counts the rounds that removed someone.
std::vector<std::size_t> boundByFreshSums(
  const std::vector<double>& xyz, const std::vector<double>& vel, int& rounds)
{
  std::vector<std::size_t> m(xyz.size() / 3);
  std::iota(m.begin(), m.end(), std::size_t(0));
  for (rounds = 0;; ++rounds)
  {
    const std::vector<double> phi = directPotential(xyz, m);
    double vmean[3] = { 0, 0, 0 };
    for (std::size_t i : m)
      for (int k = 0; k < 3; ++k)
        vmean[k] += vel[3 * i + k] / double(m.size());
    std::vector<std::size_t> kept;
    for (std::size_t a = 0; a < m.size(); ++a)
    {
      double ke = 0;
      for (int k = 0; k < 3; ++k)
        ke += 0.5 * (vel[3 * m[a] + k] - vmean[k]) * (vel[3 * m[a] + k] - vmean[k]);
      if (!(ke + phi[a] > 0))
        kept.push_back(m[a]);
    }
    if (kept.size() == m.size())
      return m;
    m.swap(kept);
  }
}

// A Plummer sphere whose speeds straddle the escape speed, so that each
// round's removals unbind more in the next: the unbinding, which takes the
// removed members' terms out of the potential instead of summing it afresh,
// keeps the members the definition keeps. One group of at most twice
// MinimumSubhaloSize, so the whole group is the only candidate; below and
// above the size summed directly at any opening angle (theta 0: exact).
JZ_TEST(UnbindingRoundsEqualFreshSums)
{
  for (const std::size_t n : { std::size_t(400), std::size_t(1500) })
  {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> xyz, vel;
    for (std::size_t i = 0; i < n; ++i)
    {
      const double r = 1 / std::sqrt(std::pow(0.05 + 0.9 * u(rng), -2.0 / 3.0) - 1);
      const double escape = std::sqrt(2.0 * double(n) / std::sqrt(r * r + 1));
      const double speed = (0.2 + 0.9 * u(rng)) * escape;
      const std::vector<double> d = direction(rng), e = direction(rng);
      for (int k = 0; k < 3; ++k)
      {
        xyz.push_back(r * d[k]);
        vel.push_back(speed * e[k]);
      }
    }
    int rounds = 0;
    const std::vector<std::size_t> expected = boundByFreshSums(xyz, vel, rounds);
    std::printf("  %zu members: %zu bound after %d rounds of removal\n", n, expected.size(), rounds);
    JZ_CHECK(rounds >= 3);
    std::vector<jz::GlobalId> group(n, 0);
    jz::SubhaloProblem<double> p;
    p.points = xyz.data();
    p.numPoints = n;
    p.velocities = vel.data();
    p.groupId = group.data();
    p.openingAngle = 0;
    p.minimumSubhaloSize = jz::GlobalId(n / 2);
    jz::Subhalos out;
    jz::computeSubhalos(p, out, jz::Backend::CPU);
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < n; ++i)
      if (out.subhaloId[i] == 0)
        found.push_back(i);
    JZ_CHECK_EQ(out.catalogue.numSubhalos, std::size_t(expected.size() >= n / 2 ? 1 : 0));
    JZ_CHECK(found == expected);
  }
}

JZ_TEST(GroupsOfTwiceTheMinimumHaveOnlyTheirOwnCandidate)
{
  constexpr int m = 10;
  std::vector<double> xyz, vel;
  std::vector<jz::GlobalId> group;
  for (jz::GlobalId g = 0; g < 2; ++g)
  {
    const double y = 10.0 * double(g);
    for (int side = -1; side <= 1; side += 2)
      for (int i = 0; i < m; ++i)
      {
        xyz.insert(xyz.end(), { side * (1.0 + 0.1 * i), y, 0.0 });
        vel.insert(vel.end(), { 0.0, 100.0 * side, 0.0 });
        group.push_back(g);
      }
    if (g == 1)
    {
      xyz.insert(xyz.end(), { 0.0, y, 0.0 });
      vel.insert(vel.end(), { 0.0, 0.0, 0.0 });
      group.push_back(g);
    }
  }
  jz::SubhaloProblem<double> p;
  p.points = xyz.data();
  p.numPoints = group.size();
  p.velocities = vel.data();
  p.groupId = group.data();
  p.densityNeighbors = 8;
  p.saddleNeighbors = 2; // fewer than a line: each line's densest member starts its candidate
  p.minimumSubhaloSize = m;
  jz::Subhalos out;
  const jz::RunInfo info = jz::computeSubhalos(p, out, jz::Backend::CPU);
  JZ_CHECK_EQ(info.counter("density queries"), double(2 * m + 1));
  const jz::SubhaloCatalogue& cat = out.catalogue;
  JZ_CHECK_EQ(cat.numSubhalos, std::size_t(1));
  if (cat.numSubhalos == 1)
  {
    JZ_CHECK_EQ(cat.groupId[0], jz::GlobalId(1));
    JZ_CHECK_EQ(cat.count[0], jz::GlobalId(m));
  }
  for (std::size_t i = 0; i < 2 * m; ++i)
    JZ_CHECK_EQ(out.subhaloId[i], jz::GlobalId(-1));
}

JZ_TEST(EmptyAndBadInput)
{
  jz::Subhalos out;
  jz::SubhaloProblem<double> p;
  jz::computeSubhalos(p, out, jz::Backend::CPU);
  JZ_CHECK(out.subhaloId.empty() && out.catalogue.numSubhalos == 0);
  std::vector<double> xyz(3 * 50, 0.0), vel(3 * 50, 0.0);
  for (std::size_t i = 0; i < xyz.size(); ++i)
    xyz[i] = double(i % 7);
  std::vector<jz::GlobalId> group(50, -1);
  p.points = xyz.data();
  p.numPoints = 50;
  p.groupId = group.data();
  JZ_CHECK(jz::subhaloProblemError(p).find("VelocityArray") != std::string::npos);
  JZ_CHECK_THROWS(jz::computeSubhalos(p, out, jz::Backend::CPU));
  p.velocities = vel.data();
  jz::computeSubhalos(p, out, jz::Backend::CPU); // no groups: nothing found
  JZ_CHECK(out.catalogue.numSubhalos == 0 && out.subhaloId == std::vector<jz::GlobalId>(50, -1));
  p.saddleNeighbors = 0;
  JZ_CHECK(jz::subhaloProblemError(p).find("SaddleNeighbors") != std::string::npos);
  p.saddleNeighbors = 20;
  p.openingAngle = -1;
  JZ_CHECK(!jz::subhaloProblemError(p).empty());
  p.openingAngle = 0.5;
  vel[7] = std::nan("");
  JZ_CHECK(jz::subhaloProblemError(p).find("VelocityArray") != std::string::npos);
  vel[7] = 0;
  p.densityNeighbors = 64; // more than the points
  JZ_CHECK_THROWS(jz::computeSubhalos(p, out, jz::Backend::CPU));
}

JZ_TEST_MAIN()
