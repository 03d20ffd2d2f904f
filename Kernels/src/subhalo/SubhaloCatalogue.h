// The subhalo catalogue from the subhalos found per group: ranks and ids,
// the FoF catalogue's columns (computeFofCatalogue, computeHaloProperties on
// the subhalos' members), the circular-velocity profile and the parents.
#pragma once

#include <vector>

#include "SubhaloGroup.h"
#include "jz/Subhalo.h"

namespace jz
{
// No subhalo yet: SubhaloId and SubhaloRank -1 for each of numPoints, an
// empty catalogue; the backend that runs recorded in the RunInfo returned.
inline RunInfo noSubhalos(Subhalos& out, std::size_t numPoints, Backend backend)
{
  out = Subhalos();
  out.subhaloId.assign(numPoints, -1);
  out.subhaloRank.assign(numPoints, -1);
  RunInfo info;
  info.backend = resolveBackend(backend);
  return info;
}

// found[g]: the subhalos of the group groupIds[g] (member indices into
// memberInputs[g], the input index of each member). Fills out's per-point
// arrays (already sized, -1) and catalogue.
template <class T>
void buildSubhaloCatalogue(const SubhaloProblem<T>& p, const std::vector<GlobalId>& groupIds,
  const std::vector<std::vector<FoundSubhalo>>& found,
  const std::vector<std::vector<Index>>& memberInputs, Subhalos& out, const RunControl& control);

// Vmax = max sqrt(G M(<= r_k) / r_k) over r_k > 0, RVmax that r_k, and the
// half-mass radius (the smallest r_k with M(<= r_k) >= M / 2), from the
// members' (r, m); particles at equal r enter together.
struct CircularProfile
{
  double vmax = 0, rvmax = 0, halfMassRadius = 0;
};
CircularProfile circularProfile(std::vector<std::pair<double, double>> radiusMass, double G);
} // namespace jz
