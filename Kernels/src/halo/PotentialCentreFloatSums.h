// The members of a small or mid-sized group that can be its most bound, by
// one single-precision pass over all pairs with a rigorous error bound
// (doc/filters/FriendsOfFriends.md): the same contract as
// potentialCentreCandidates (PotentialCentreBounds.h), for the groups where
// all pairs cost less than any tree, at a fraction of the double pass.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace jz
{
// With U_i = sum_{j != i} m_j / sqrt(|x_i - x_j|^2 + eps^2), returns (upper
// bound of U_i, i) for every member i whose U_i can be within a relative
// kCentreBoundMargin of max_j U_j, the largest bound first (ties: the
// smaller index); every other member's U lies below that maximum by more
// than the margin. x, y, z, m: the members (unwrapped), n of them. Returns
// false (no candidates) when two members are closer than single precision
// resolves (about 2e-6 of the group's extent, eps included; without
// softening, members at one point in double are no such pair) or more than
// maxCandidates remain.
bool potentialCentreCandidatesByFloatSums(const double* x, const double* y, const double* z,
  const double* m, std::size_t n, double eps2, std::size_t maxCandidates,
  std::vector<std::pair<double, std::size_t>>& out);
} // namespace jz
