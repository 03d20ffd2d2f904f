// One subhalo's catalogue columns (SubhaloProperties.h).
#include "SubhaloProperties.h"

#include <algorithm>
#include <cmath>

#include "fof/GroupMoments.h"
#include "halo/MostBound.h"
#include "jz/Geometry.h"

namespace jz
{
CircularProfile circularProfile(std::vector<std::pair<double, double>> rm, double G)
{
  CircularProfile c;
  std::sort(rm.begin(), rm.end());
  double total = 0;
  for (const auto& e : rm)
    total += e.second;
  double enclosed = 0;
  bool half = false;
  for (std::size_t i = 0; i < rm.size();)
  {
    const double r = rm[i].first;
    for (; i < rm.size() && rm[i].first == r; ++i)
      enclosed += rm[i].second;
    if (!half && enclosed >= 0.5 * total)
    {
      c.halfMassRadius = r;
      half = true;
    }
    if (r > 0)
    {
      const double v = std::sqrt(G * enclosed / r);
      if (v > c.vmax)
      {
        c.vmax = v;
        c.rvmax = r;
      }
    }
  }
  return c;
}

namespace
{
// The position of member k as given (before the group's unwrapping).
const double* given(const GroupMembers& g, Index k)
{
  return &g.given[3 * std::size_t(k)];
}

// The member of lowest potential among `byId` (the subhalo's members by
// global id), as the FoF catalogue's centres take it: unwrapped around the
// first, the exact sums of MostBound.h.
Index lowestPotential(const GroupMembers& g, const FoundSubhalo& s, const std::vector<Index>& byId,
  const SubhaloRowFrame& f, int threads)
{
  // The unbinding's direct sums left one member within rounding of the
  // lowest: it is the lowest, whatever the exact sums.
  if (s.lowestPotential.size() == 1)
    return s.lowestPotential[0];
  std::vector<PotentialMember> mem(byId.size());
  const double* first = given(g, byId[0]);
  for (std::size_t i = 0; i < byId.size(); ++i)
  {
    const Index k = byId[i];
    for (int d = 0; d < 3; ++d)
      mem[i].x[d] = first[d] + nearestImageOffset(given(g, k)[d] - first[d], f.period[d]);
    mem[i].m = g.mass[k];
    mem[i].id = g.id[k];
    mem[i].group = 0;
  }
  const double G = f.gravitationalConstant;
  if (s.lowestPotential.empty())
  {
    PotentialCentreStats stats;
    return byId[mostBound(mem, f.softening, G, threads, &stats)];
  }
  std::vector<std::size_t> at;
  for (const Index k : s.lowestPotential)
    at.push_back(std::size_t(std::lower_bound(byId.begin(), byId.end(), k,
                               [&](Index a, Index b) { return g.id[a] < g.id[b]; }) -
      byId.begin()));
  return byId[mostBoundAmong(mem, at, f.softening, G, threads)];
}
} // namespace

SubhaloRow subhaloRow(
  const GroupMembers& g, const FoundSubhalo& s, const SubhaloRowFrame& f, int threads)
{
  std::vector<Index> byId = s.members;
  std::sort(byId.begin(), byId.end(), [&](Index a, Index b) { return g.id[a] < g.id[b]; });
  SubhaloRow row;
  GroupMoments sums = GroupMoments::around(0, given(g, byId[0]), &g.vel[3 * byId[0]]);
  for (const Index k : byId)
    sums.add(given(g, k), g.mass[k], &g.vel[3 * std::size_t(k)], f.period);
  const GroupMoments::Row moments = sums.row(f.boxLo, f.period);
  row.count = moments.count;
  row.mass = moments.mass;
  row.velocityDispersion = moments.velocityDispersion;
  std::copy_n(moments.centerOfMass, 3, row.centerOfMass);
  std::copy_n(moments.meanVelocity, 3, row.meanVelocity);
  const Index centre = lowestPotential(g, s, byId, f, threads);
  row.mostBoundId = g.id[centre];
  std::copy_n(given(g, centre), 3, row.centreOfPotential);
  std::vector<std::pair<double, double>> rm;
  rm.reserve(byId.size());
  for (const Index k : byId)
  {
    double r2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      const double dx = nearestImageOffset(given(g, k)[d] - row.centreOfPotential[d], f.period[d]);
      r2 += dx * dx;
    }
    rm.push_back({ std::sqrt(r2), g.mass[k] });
  }
  const CircularProfile c = circularProfile(std::move(rm), f.gravitationalConstant);
  row.vmax = c.vmax;
  row.rvmax = c.rvmax;
  row.halfMassRadius = c.halfMassRadius;
  return row;
}
} // namespace jz
