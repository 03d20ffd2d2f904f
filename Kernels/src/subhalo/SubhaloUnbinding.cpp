// Unbinding of one group's candidates: smallest first, each without the
// members of subhalos already found, then iterated removal of every member
// with positive energy under the tree potential of the current members.
#include <algorithm>

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

// phi of each member under the current members alone, directly: the pair sum
// over padded lanes (sumPotentialsSymmetricCpu reads a lane past n).
void directPotentials(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, std::vector<double>& phi)
{
  const std::size_t n = members.size();
  const std::size_t padded =
    (n + kGravityLanes - 1) / kGravityLanes * kGravityLanes + kGravityLanes;
  std::vector<double> x(padded, 0.0), y(padded, 0.0), z(padded, 0.0), m(padded, 0.0);
  for (std::size_t i = 0; i < n; ++i)
  {
    const Index k = members[i];
    x[i] = g.xyz[3 * k];
    y[i] = g.xyz[3 * k + 1];
    z[i] = g.xyz[3 * k + 2];
    m[i] = g.mass[k];
  }
  std::vector<double> u(padded);
  sumPotentialsSymmetricCpu(
    x.data(), y.data(), z.data(), m.data(), n, o.softening * o.softening, u.data());
  for (std::size_t i = 0; i < n; ++i)
    phi[i] = -o.gravitationalConstant * u[i];
}

// phi of each member under the current members alone, by the gravity tree.
void treePotentials(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, Backend backend, const RunControl& control, std::vector<double>& phi)
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
  computeGravity(p, r, backend, control);
}

// The members of `members` with energy 1/2 |v - vmean|^2 + phi <= 0.
std::vector<Index> boundMembers(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, Backend backend, const RunControl& control)
{
  const std::size_t n = members.size();
  std::vector<double> phi(n);
  double vmean[3] = { 0, 0, 0 }, total = 0;
  for (const Index m : members)
  {
    total += g.mass[m];
    for (int d = 0; d < 3; ++d)
      vmean[d] += g.mass[m] * g.vel[3 * m + d];
  }
  for (double& v : vmean)
    v = total > 0 ? v / total : 0.0;
  if (n <= kDirectUnbinding && backend != Backend::CUDA)
    directPotentials(g, members, o, phi);
  else
    treePotentials(g, members, o, backend, control, phi);
  std::vector<Index> bound;
  bound.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    double kinetic = 0;
    for (int d = 0; d < 3; ++d)
    {
      const double dv = g.vel[3 * members[i] + d] - vmean[d];
      kinetic += dv * dv;
    }
    if (!(0.5 * kinetic + phi[i] > 0))
      bound.push_back(members[i]);
  }
  return bound;
}
} // namespace

std::vector<FoundSubhalo> unbindCandidates(const GroupMembers& g, const GroupCandidates& cands,
  const UnbindingOptions& o, Backend backend, const RunControl& control)
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
    while (GlobalId(members.size()) >= o.minimumSize)
    {
      std::vector<Index> bound = boundMembers(g, members, o, backend, control);
      const bool done = bound.size() == members.size();
      members.swap(bound);
      if (done)
        break;
    }
    if (GlobalId(members.size()) < o.minimumSize)
      continue;
    for (Index m : members)
      taken[m] = 1;
    std::sort(members.begin(), members.end());
    found.push_back({ std::move(members), c });
  }
  return found;
}
} // namespace jz
