// The member of lowest potential of one group, its centre of potential:
// exact direct sums of U_i = sum_{j != i} m_j / sqrt(r_ij^2 + eps^2) (the
// potential is -G U), for as few members as filters and bounds allow. The
// home of the rule for the FoF catalogue's centres (HaloProperties.cpp) and
// the subhalos' (SubhaloProperties.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "halo/PotentialCentreBounds.h"
#include "jz/Config.h"

namespace jz
{
// A member of the group: its position (unwrapped around the group's first
// member), mass, global id and group.
struct PotentialMember
{
  double x[3];
  double m;
  GlobalId id;
  GlobalId group;
};

// The index in `mem` of the member with the lowest potential (ties: the
// smaller id; members are sorted by id and unwrapped around the first):
// exact direct sums for every member of the smallest groups; for a larger
// one only for the candidates the float pass (PotentialCentreFloatSums.h), a
// filter over leaves (PotentialCentreFilter.h) or, for the largest groups or
// where the filter leaves too many, a branch and bound leaves
// (PotentialCentreBounds.h); where the float pass gives up (members closer
// than float resolves, or no pronounced minimum) the double pass; where the
// bounds would cost too much (no pronounced minimum), the tree ranking.
// `threads` share the exact sums; the answer does not depend on them.
std::size_t mostBound(const std::vector<PotentialMember>& mem, double softening, double G,
  int threads, PotentialCentreStats* stats);

// The same where the caller knows members that hold it (`candidates`,
// indices into `mem`): each of them summed exactly, the lowest returned.
std::size_t mostBoundAmong(const std::vector<PotentialMember>& mem,
  const std::vector<std::size_t>& candidates, double softening, double G, int threads);
} // namespace jz
