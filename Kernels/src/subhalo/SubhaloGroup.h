// One FoF group's subhalo search (doc/filters/SubhaloFinder.md): its members
// in density order, the saddle-point candidates, and their unbinding.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <algorithm>

#include "jz/Backend.h"
#include "jz/Config.h"
#include "jz/Knn.h"
#include "jz/Subhalo.h"

namespace jz
{
// The density problem of the subhalo problem's points (SPH, K =
// densityNeighbors, masses, ids and box): the serial and distributed drivers'.
// Only grouped points query, so the leaves hold twice the points of the
// engine's choice for a full self query (up to its largest, 192): about as
// many queries per leaf, each source leaf visited once for them.
template <class T>
KnnProblem<T> densityProblem(const SubhaloProblem<T>& p)
{
  KnnProblem<T> k;
  k.leafSize = std::clamp(6144 / std::max(p.densityNeighbors, 1), 2 * kLeafSize, 192);
  k.sources = p.points;
  k.numSources = p.numPoints;
  k.sourceMasses = p.masses;
  k.sourceIds = p.ids;
  k.k = p.densityNeighbors;
  k.periodic = p.periodic;
  std::copy_n(p.boxLo, 3, k.boxLo);
  std::copy_n(p.boxHi, 3, k.boxHi);
  return k;
}

// Whether the density order of a group of n members can matter: a recorded
// candidate is the smaller of two disjoint ones beside the member that joins
// them, so it has at most (n - 1) / 2 members; up to n = 2 minimumSize none
// can hold a subhalo, and the group's own candidate (all of it) is the only
// one, whatever the order.
inline bool densityOrderMatters(std::size_t n, GlobalId minimumSize)
{
  return GlobalId(n) > 2 * minimumSize;
}

// A group's members, densest first (ties: smaller global id), so a member's
// index is its density rank: "denser" is "smaller index"; by global id alone
// where the density order cannot matter. Positions are unwrapped around the
// member of smallest global id when periodic.
struct GroupMembers
{
  std::vector<Index> input;  // input index of each member
  std::vector<GlobalId> id;  // global id
  std::vector<double> xyz;   // 3 per member
  std::vector<double> given; // 3 per member: the positions as given (not unwrapped)
  std::vector<double> vel;  // 3 per member
  std::vector<double> mass; // 1 per member
  std::size_t size() const { return input.size(); }
};

// A candidate: the members at [start, start + length) of GroupCandidates::order.
struct Candidate
{
  std::size_t start = 0, length = 0;
  GlobalId densestId = 0; // its densest member's global id (the tie rule)
  bool wholeGroup = false;
};

struct GroupCandidates
{
  std::vector<Index> order;          // member indices; every candidate is a run of it
  std::vector<Candidate> candidates; // the recorded ones, then the whole group
  std::size_t searchedInGroup = 0;   // members whose neighbours the group's own search found
};

// What the whole-input density search saw of each member's neighbourhood:
// the first `listed` + 1 other members among its K nearest points, in that
// search's order, and the distance of its K-th point. Members whose denser
// pair this proves (two denser among their nearest members, or all
// saddleNeighbors of them listed) are spared the group's own search.
struct DensityNeighbours
{
  std::size_t listed = 0;
  std::vector<Index> members; // listed + 1 per member, kNoMember after the last
  std::vector<double> radius; // per member
  double period = 0;          // the largest period (0: open box)
  static constexpr Index kNoMember = Index(-1);
};

// The saddle-point rule over each member's saddleNeighbors nearest members
// (itself excluded; by distance, then global id). Candidates smaller than
// minimumSize are not recorded (they cannot hold a subhalo); where the
// density order cannot matter the whole group is the only candidate and no
// neighbour is searched. `seen` may be null (every member searched within
// the group).
// `saddleName` names saddleNeighbors in the error for lists that cannot fit
// in memory.
GroupCandidates findCandidates(const GroupMembers& group, int saddleNeighbors, GlobalId minimumSize,
  const DensityNeighbours* seen, Backend backend, const RunControl& control,
  const std::string& saddleName);

struct UnbindingOptions
{
  GlobalId minimumSize = 20;
  double softening = 0, gravitationalConstant = 1, openingAngle = 0.5;
};

// A subhalo's catalogue columns (SubhaloProperties.h).
struct SubhaloRow
{
  GlobalId count = 0, mostBoundId = -1;
  double mass = 0, velocityDispersion = 0, vmax = 0, rvmax = 0, halfMassRadius = 0;
  double centreOfPotential[3] = { 0, 0, 0 }, centerOfMass[3] = { 0, 0, 0 },
         meanVelocity[3] = { 0, 0, 0 };
};

// A subhalo of the group: its members (member indices, ascending), the
// candidate it came from, the members that can have its lowest potential
// when the unbinding summed the potentials directly (those within rounding
// of the lowest; empty where the tree summed them), and its row.
struct FoundSubhalo
{
  std::vector<Index> members;
  Candidate candidate;
  std::vector<Index> lowestPotential;
  SubhaloRow row;
};

// Candidates by increasing size (ties: larger densest id first), each without
// the members of smaller subhalos, unbound until every member has energy
// 1/2 |v - vmean|^2 + phi <= 0; those with at least minimumSize members left.
// On the CPU whatever the run's backend: the GPU's tree potentials are not
// the CPU's bits, and a member at the margin of boundness would then differ
// between the backends.
std::vector<FoundSubhalo> unbindCandidates(const GroupMembers& group,
  const GroupCandidates& candidates, const UnbindingOptions& options, const RunControl& control);
} // namespace jz
