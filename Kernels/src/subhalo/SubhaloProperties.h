// One subhalo's catalogue columns, computed where its group is searched (its
// members are at hand there, and groups run in parallel): the FoF
// catalogue's sums (GroupMoments), the centre of potential (MostBound.h) and
// the circular-velocity profile around it.
#pragma once

#include <utility>
#include <vector>

#include "SubhaloGroup.h"

namespace jz
{
// Vmax = max sqrt(G M(<= r_k) / r_k) over r_k > 0, RVmax that r_k, and the
// half-mass radius (the smallest r_k with M(<= r_k) >= M / 2), from the
// members' (r, m); particles at equal r enter together.
struct CircularProfile
{
  double vmax = 0, rvmax = 0, halfMassRadius = 0;
};
CircularProfile circularProfile(std::vector<std::pair<double, double>> radiusMass, double G);

// What the columns depend on beyond the members.
struct SubhaloRowFrame
{
  double boxLo[3] = { 0, 0, 0 };
  double period[3] = { 0, 0, 0 }; // 0: open along that axis
  double softening = 0, gravitationalConstant = 1;
};

// The row of subhalo s of group g: count, mass, centre of mass, mean
// velocity and velocity dispersion as in the FoF catalogue (summed in
// global-id order around the member of smallest id); MostBoundId and
// CentreOfPotential, the member of lowest exact potential under the
// subhalo's own members (among s.lowestPotential when the unbinding's direct
// sums narrowed it down); Vmax, RVmax and the half-mass radius around it.
// `threads` share the potential sums; the row does not depend on them.
SubhaloRow subhaloRow(
  const GroupMembers& g, const FoundSubhalo& s, const SubhaloRowFrame& frame, int threads);
} // namespace jz
