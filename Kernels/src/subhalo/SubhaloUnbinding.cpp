// Unbinding of one group's candidates: smallest first, each without the
// members of subhalos already found, then iterated removal of every member
// with positive energy under the tree potential of the current members.
#include <algorithm>

#include "SubhaloGroup.h"
#include "jz/Gravity.h"

namespace jz
{
namespace
{
// The members of `members` with energy 1/2 |v - vmean|^2 + phi <= 0.
std::vector<Index> boundMembers(const GroupMembers& g, const std::vector<Index>& members,
  const UnbindingOptions& o, Backend backend, const RunControl& control)
{
  const std::size_t n = members.size();
  std::vector<double> xyz(3 * n), mass(n), phi(n);
  double vmean[3] = { 0, 0, 0 }, total = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const Index m = members[i];
    mass[i] = g.mass[m];
    total += mass[i];
    for (int d = 0; d < 3; ++d)
    {
      xyz[3 * i + d] = g.xyz[3 * m + d];
      vmean[d] += mass[i] * g.vel[3 * m + d];
    }
  }
  for (double& v : vmean)
    v = total > 0 ? v / total : 0.0;
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
