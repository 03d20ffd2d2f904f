// The members of a mid-sized group that can be its most bound, by one flat
// pass over leaves of the group instead of every member's exact potential
// (doc/filters/FriendsOfFriends.md): the same contract as
// potentialCentreCandidates (PotentialCentreBounds.h), cheaper where a
// branch and bound would cost more than it prunes.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "halo/PotentialCentreBounds.h"

namespace jz
{
// With U_i = sum_{j != i} m_j / sqrt(|x_i - x_j|^2 + eps^2), returns (upper
// bound of U_i, i) for every member i whose U_i can be within a relative
// kCentreBoundMargin of max_j U_j, the largest bound first (ties: the
// smaller index); every other member's U lies below that maximum by more
// than the margin. x, y, z, m: the members (unwrapped), n of them. Returns
// false (no candidates) when more than maxCandidates remain: the group has
// no pronounced minimum, and all-pairs sums cost less.
bool potentialCentreCandidatesByLeaves(const double* x, const double* y, const double* z,
  const double* m, std::size_t n, double eps2, std::size_t maxCandidates,
  std::vector<std::pair<double, std::size_t>>& out, PotentialCentreStats* stats = nullptr);
} // namespace jz
