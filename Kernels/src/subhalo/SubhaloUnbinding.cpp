// Unbinding of one group's candidates: smallest first, each without the
// members of subhalos already found, then iterated removal of every member
// with positive energy under the potential of the current members (the
// removed members' terms taken out of it while they are few).
#include <algorithm>
#include <cmath>

#include <omp.h>

#include "SubhaloGroup.h"
#include "gravity/GravityKernelsCpu.h"
#include "jz/Gravity.h"

namespace jz
{
namespace
{
// Up to this many members the potential is summed directly (exact, and
// cheaper than building a tree for so few; a bounded block, not a quadratic
// step); above it the tree with the opening angle.
constexpr std::size_t kDirectUnbinding = 512;

// Sources in the direct sum's padded layout (a lane of massless points past
// the last: sumPotentialsSymmetricCpu reads one).
struct PaddedSources
{
  std::vector<double> x, y, z, m;
  PaddedSources(const GroupMembers& g, const std::vector<Index>& members)
  {
    const std::size_t n = members.size();
    const std::size_t padded =
      (n + kGravityLanes - 1) / kGravityLanes * kGravityLanes + kGravityLanes;
    x.assign(padded, 0.0);
    y.assign(padded, 0.0);
    z.assign(padded, 0.0);
    m.assign(padded, 0.0);
    for (std::size_t i = 0; i < n; ++i)
    {
      const Index k = members[i];
      x[i] = g.xyz[3 * k];
      y[i] = g.xyz[3 * k + 1];
      z[i] = g.xyz[3 * k + 2];
      m[i] = g.mass[k];
    }
  }
};

bool sumsDirectly(std::size_t n)
{
  return n <= kDirectUnbinding;
}

// phi of each member under the current members alone, directly.
void directPotentials(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, std::vector<double>& phi)
{
  const std::size_t n = members.size();
  const PaddedSources s(g, members);
  std::vector<double> u(s.x.size());
  sumPotentialsSymmetricCpu(
    s.x.data(), s.y.data(), s.z.data(), s.m.data(), n, o.softening * o.softening, u.data());
  for (std::size_t i = 0; i < n; ++i)
    phi[i] = -o.gravitationalConstant * u[i];
}

// phi of each member under the current members alone, by the gravity tree.
void treePotentials(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, const RunControl& control, std::vector<double>& phi)
{
  const std::size_t n = members.size();
  std::vector<double> xyz(3 * n), mass(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const Index m = members[i];
    mass[i] = g.mass[m];
    std::copy_n(&g.xyz[3 * std::size_t(m)], 3, &xyz[3 * i]);
  }
  GravityProblem<double> p;
  p.sources = xyz.data();
  p.numSources = n;
  p.sourceMasses = mass.data();
  p.openingAngle = o.openingAngle;
  p.softening = o.softening;
  p.gravitationalConstant = o.gravitationalConstant;
  GravityResults r;
  r.potential = phi.data();
  computeGravity(p, r, Backend::CPU, control);
}

// phi of each of `members` under all of them (one each).
std::vector<double> potentials(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, const RunControl& control)
{
  std::vector<double> phi(members.size());
  if (sumsDirectly(members.size()))
    directPotentials(g, members, o, phi);
  else
    treePotentials(g, members, o, control, phi);
  return phi;
}

// Whether taking the r removed members' terms out of the n members' phi
// (n r pair terms) costs less than summing their phi afresh: n^2 / 2 pair
// terms directly, or about kTreeTermsPerMember per member by the tree.
constexpr std::size_t kTreeTermsPerMember = 256;
bool subtractsRemoved(std::size_t n, std::size_t r)
{
  return sumsDirectly(n) ? 2 * r < n : r <= kTreeTermsPerMember;
}

// phi of `members` without the terms of `removed` (exact pair terms, each
// as the direct sum takes it): their potential with those members gone.
// Each removed member's terms go to all members at once (the members in
// the vector lanes: full however few were removed), in removal order.
void subtractRemoved(const GroupMembers& g, const std::vector<Index>& members,
  const std::vector<Index>& removed, const UnbindingOptions& o, const RunControl& control,
  std::vector<double>& phi)
{
  const PaddedSources t(g, members);
  const std::size_t n = members.size();
  const double eps2 = o.softening * o.softening;
  // Blocks of members, each thread its own: the terms of one member still
  // come in removal order.
  constexpr std::size_t kBlock = 1024;
  const std::ptrdiff_t blocks = std::ptrdiff_t((n + kBlock - 1) / kBlock);
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads) if (n * removed.size() > (1u << 18))
  for (std::ptrdiff_t b = 0; b < blocks; ++b)
  {
    const std::size_t i0 = std::size_t(b) * kBlock, m = std::min(kBlock, n - i0);
    double u[kBlock] = {};
    for (const Index k : removed)
      addPointPotentialCpu(
        &g.xyz[3 * std::size_t(k)], g.mass[k], &t.x[i0], &t.y[i0], &t.z[i0], m, eps2, u);
    for (std::size_t i = 0; i < m; ++i)
      phi[i0 + i] += o.gravitationalConstant * u[i];
  }
}

// Moves the members of `members` with energy 1/2 |v - vmean|^2 + phi > 0 to
// `removed` (both in their order), and their phi out of `phi`.
void removeUnbound(const GroupMembers& g, std::vector<Index>& members, std::vector<double>& phi,
  std::vector<Index>& removed)
{
  double vmean[3] = { 0, 0, 0 }, total = 0;
  for (const Index m : members)
  {
    total += g.mass[m];
    for (int d = 0; d < 3; ++d)
      vmean[d] += g.mass[m] * g.vel[3 * m + d];
  }
  for (double& v : vmean)
    v = total > 0 ? v / total : 0.0;
  removed.clear();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < members.size(); ++i)
  {
    double kinetic = 0;
    for (int d = 0; d < 3; ++d)
    {
      const double dv = g.vel[3 * members[i] + d] - vmean[d];
      kinetic += dv * dv;
    }
    if (0.5 * kinetic + phi[i] > 0)
      removed.push_back(members[i]);
    else
    {
      members[kept] = members[i];
      phi[kept++] = phi[i];
    }
  }
  members.resize(kept);
  phi.resize(kept);
}

// The members whose phi lies within `tolerance` of the lowest.
std::vector<Index> nearLowest(
  const std::vector<Index>& members, const std::vector<double>& phi, double tolerance)
{
  const double lowest = *std::min_element(phi.begin(), phi.end());
  std::vector<Index> near;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (phi[i] <= lowest + tolerance)
      near.push_back(members[i]);
  return near;
}

// The members left of `members` once every unbound one is removed, round
// after round; fewer than minimumSize when they fall below it. The first
// round's phi is summed afresh; later rounds take the removed members' terms
// out of it, or sum afresh where that costs less. Where the sums are direct,
// `lowest` gets the bound members that can have the lowest exact potential:
// each phi is a double sum of at most 2 kDirectUnbinding terms, none larger
// than the first round's largest |phi|, so its rounding stays orders of
// magnitude below the tolerance.
std::vector<Index> boundMembers(const GroupMembers& g, std::vector<Index> members,
  const UnbindingOptions& o, const RunControl& control, std::vector<Index>& lowest)
{
  constexpr double kRoundingTolerance = 1e-9;
  lowest.clear();
  if (GlobalId(members.size()) < o.minimumSize)
    return members;
  const bool direct = sumsDirectly(members.size());
  std::vector<double> phi = potentials(g, members, o, control);
  double largest = 0;
  for (const double v : phi)
    largest = std::max(largest, std::abs(v));
  std::vector<Index> removed;
  for (;;)
  {
    const std::size_t before = members.size();
    removeUnbound(g, members, phi, removed);
    if (GlobalId(members.size()) < o.minimumSize)
      return members;
    if (removed.empty())
    {
      if (direct)
        lowest = nearLowest(members, phi, kRoundingTolerance * largest);
      return members;
    }
    if (subtractsRemoved(before, removed.size()))
      subtractRemoved(g, members, removed, o, control, phi);
    else
      phi = potentials(g, members, o, control);
  }
}
} // namespace

std::vector<FoundSubhalo> unbindCandidates(const GroupMembers& g, const GroupCandidates& cands,
  const UnbindingOptions& o, const RunControl& control)
{
  std::vector<Candidate> bySize = cands.candidates;
  std::stable_sort(bySize.begin(), bySize.end(),
    [](const Candidate& a, const Candidate& b)
    { return a.length != b.length ? a.length < b.length : a.densestId > b.densestId; });
  std::vector<char> taken(g.size(), 0);
  std::vector<FoundSubhalo> found;
  for (const Candidate& c : bySize)
  {
    if (GlobalId(c.length) < o.minimumSize)
      continue;
    std::vector<Index> members;
    for (std::size_t i = c.start; i < c.start + c.length; ++i)
      if (!taken[cands.order[i]])
        members.push_back(cands.order[i]);
    std::vector<Index> lowest;
    members = boundMembers(g, std::move(members), o, control, lowest);
    if (GlobalId(members.size()) < o.minimumSize)
      continue;
    for (Index m : members)
      taken[m] = 1;
    std::sort(members.begin(), members.end());
    found.push_back({ std::move(members), c, std::move(lowest), SubhaloRow() });
  }
  return found;
}
} // namespace jz
