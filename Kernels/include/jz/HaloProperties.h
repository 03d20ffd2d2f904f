// What halo catalogues add to friends-of-friends groups
// (doc/filters/FriendsOfFriends.md): the centre of potential and most-bound particle
// from each group's own members, and spherical-overdensity radius, mass and
// count over all particles around the centre. One code path for one and for
// several ranks (a SerialCommunicator for one).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "Backend.h"
#include "Communicator.h"
#include "Config.h"
#include "InputNames.h"

namespace jz
{
template <class T>
struct HaloPropertiesInput
{
  // This rank's particles: interleaved xyz, masses (nullptr = unit), global
  // ids (unique over all ranks), and GroupId (0..G-1, or -1 for none).
  const T* points = nullptr;
  std::size_t numPoints = 0;
  const double* masses = nullptr;
  const GlobalId* ids = nullptr;
  const GlobalId* groupId = nullptr;
  // The catalogue rows this rank owns: their GroupIds, and their centres of
  // mass (3 per row; the SO centre when no centre of potential is computed).
  std::vector<GlobalId> rowGroupId;
  std::vector<double> rowCenterOfMass;
  std::vector<double> rowMass; // the groups' FoF masses (the first SO trial radius)
  std::size_t numGroups = 0;   // G, over all ranks
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
};

struct HaloPropertiesOptions
{
  // CentreOfPotential and MostBoundId: phi_i = -G sum_{j in group, j != i}
  // m_j / sqrt(r_ij^2 + eps^2); the member with the lowest phi, ties by the
  // smaller global id.
  bool potentialCentres = false;
  double softening = 0;
  double gravitationalConstant = 1;
  // SORadius, SOMass, SOCount (the discrete definition in doc/filters/FriendsOfFriends.md).
  bool sphericalOverdensity = false;
  double overdensity = 200;    // Delta
  double referenceDensity = 0; // rho_ref (mean or critical), > 0
};

// The first broken rule of the options (empty when they are valid):
// softening >= 0 and G > 0 with potentialCentres; overdensity > 0 and the
// reference density > 0 with sphericalOverdensity; all finite.
std::string haloOptionsError(
  const HaloPropertiesOptions& options, const InputNames& names = {});

// Per owned row, in the order of rowGroupId.
struct HaloProperties
{
  std::vector<double> centreOfPotential; // 3 per row
  std::vector<GlobalId> mostBoundId;
  std::vector<double> soRadius, soMass;
  std::vector<GlobalId> soCount;
};

// Groups up to this size get exact direct-summation potentials for every
// member where nothing cheaper applies (up to 1,024 members always; above
// that only the members a filter over the group's leaves cannot rule out
// are summed, src/halo/PotentialCentreFilter.h, unless it leaves too many);
// larger ones only the members that filter (up to 65,536 members) or a
// branch and bound over the group's kd-tree (src/halo/PotentialCentreBounds.h)
// cannot rule out: the exact argmin. A large group without a pronounced
// minimum (the bounds' work budget runs out) is ranked by tree potentials,
// its 64 lowest summed. 7168: where the symmetric pass (n^2 / 2 pair terms)
// and the branch and bound cost the same on halo-like groups.
constexpr std::size_t kDirectCentreLimit = 7168;

// Collective over comm. Throws Error on bad options (Delta <= 0, rho_ref <= 0,
// eps < 0), the same on every rank.
template <class T>
RunInfo computeHaloProperties(Communicator& comm, const HaloPropertiesInput<T>& input,
  const HaloPropertiesOptions& options, HaloProperties& out, const RunControl& control = {});

// The discrete SO definition on one centre's profile, (r^2, m) sorted by
// r^2: walking outward, particles at equal distance enter together, and the
// walk stops at the first distance r > 0 where M(<= r) / (4/3 pi r^3) falls
// below thresholdDensity (*failed = true); the result is the last distance
// passed (0 when none). *failed = false: the profile never fell below, and
// particles beyond its end may still extend it.
struct SoResult
{
  double radius = 0, mass = 0;
  GlobalId count = 0;
};
SoResult soFromProfile(const std::vector<std::pair<double, double>>& sortedProfile,
  double thresholdDensity, bool* failed);

extern template RunInfo computeHaloProperties<float>(Communicator&,
  const HaloPropertiesInput<float>&, const HaloPropertiesOptions&, HaloProperties&,
  const RunControl&);
extern template RunInfo computeHaloProperties<double>(Communicator&,
  const HaloPropertiesInput<double>&, const HaloPropertiesOptions&, HaloProperties&,
  const RunControl&);
} // namespace jz
