// The members of one group that can be its most bound
// (doc/filters/FriendsOfFriends.md), found by a node-level branch and bound instead of a
// potential for every member: only they need exact direct sums.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace jz
{
// What the search did (counters of the benchmark).
struct PotentialCentreStats
{
  double nodes = 0;       // target nodes bounded
  double leaves = 0;      // leaves whose members got bounds of their own
  double nearPairs = 0;   // member pairs summed directly for those bounds
  double exactNear = 0;   // members whose near sources were summed directly
  double exact = 0;       // members whose U was then summed exactly
  double fallbacks = 0;   // groups left to the tree ranking
  double refinements = 0; // passes opening the kept sources of a target
};

// With U_i = sum_{j != i} m_j / sqrt(|x_i - x_j|^2 + eps^2) (the potential is
// -G U), returns (upper bound of U_i, i) for every member i whose U_i can be
// within a relative kCentreBoundMargin of max_j U_j, the largest bound first;
// every other member's U lies below that maximum by more than the margin.
// x, y, z, m: the members (unwrapped), n of them. Gives up (returns false,
// no candidates) once its work passes kCentreBoundWork per member: in a group
// without a pronounced potential minimum (nearly uniform density, lattices)
// the bounds separate few members and the search would approach n^2.
bool potentialCentreCandidates(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, double eps2, std::vector<std::pair<double, std::size_t>>& out,
  PotentialCentreStats* stats = nullptr);

// The candidates' order, one home for the three searches (this one, the
// leaf filter and the float pass): the largest bound first, ties by the
// smaller index.
void sortCandidates(std::vector<std::pair<double, std::size_t>>& candidates);

// Work (sources examined + member pairs summed) per member before giving up;
// the halo benchmark's groups need at most about 60.
constexpr double kCentreBoundWork = 128;

// Relative margin between the bounds and the largest U: far above the
// rounding of any double sum of n <= 2^32 positive terms (n * 2^-53 < 5e-7),
// so a member left out cannot tie the exact sums' best.
constexpr double kCentreBoundMargin = 1e-6;
} // namespace jz
