// Gravitationally bound substructure inside friends-of-friends groups in the
// manner of SUBFIND (Springel et al. 2001), doc/filters/SubhaloFinder.md:
// candidates from saddle points of the SPH density field among each group's
// members, unbound with the tree potential of their current members, and the
// subhalo catalogue (the FoF catalogue's columns plus Vmax, RVmax,
// HalfMassRadius and ParentSubhaloId).
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
// Input, all in caller memory. Coordinates are interleaved xyz (VTK layout).
template <class T>
struct SubhaloProblem
{
  const T* points = nullptr;
  std::size_t numPoints = 0;
  const double* masses = nullptr;     // per point, >= 0; nullptr = unit mass
  const double* velocities = nullptr; // interleaved xyz per point; required
  const GlobalId* ids = nullptr;      // unique global ids; nullptr = input index
  const GlobalId* groupId = nullptr;  // per point: its FoF group (>= 0) or -1; required
  // The SPH densities when the caller has them (the distributed driver);
  // nullptr = computed here over these points.
  const double* densities = nullptr;
  int densityNeighbors = 32; // K of the SPH density over all points
  int saddleNeighbors = 20;  // neighbours among the group's members
  GlobalId minimumSubhaloSize = 20;
  double softening = 0;
  double gravitationalConstant = 1;
  double openingAngle = 0.5; // theta of the unbinding potential; 0 = direct sum
  // Periodic box [boxLo, boxHi): groups are unwrapped around their member of
  // smallest global id, catalogue positions wrapped back in.
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
};

// The property names in messages (the filter's names by default).
struct SubhaloNames
{
  InputNames input;
  std::string velocityArray = "VelocityArray";
  std::string groupArray = "GroupId";
  std::string densityNeighbors = "DensityNeighbors";
  std::string saddleNeighbors = "SaddleNeighbors";
  std::string minimumSubhaloSize = "MinimumSubhaloSize";
};

// One row per subhalo, numbered by (GroupId, SubhaloRank).
struct SubhaloCatalogue
{
  std::size_t numSubhalos = 0;
  // The rows' SubhaloIds: 0..numSubhalos-1 from computeSubhalos; the rows a
  // rank owns from computeSubhalosDistributed.
  std::vector<GlobalId> subhaloId;
  std::vector<GlobalId> groupId, subhaloRank, count, mostBoundId, parentSubhaloId;
  std::vector<double> mass;
  std::vector<double> centreOfPotential, centerOfMass, meanVelocity; // 3 per row
  std::vector<double> velocityDispersion, vmax, rvmax, halfMassRadius;
};

struct Subhalos
{
  std::vector<GlobalId> subhaloId;   // per point; -1 in no subhalo
  std::vector<GlobalId> subhaloRank; // per point; -1 in no subhalo
  SubhaloCatalogue catalogue;
};

// The first broken rule of the problem (velocities and group ids missing,
// non-finite values, counts and constants outside jz/ParameterRanges.h,
// a bad box), or an empty string.
template <class T>
std::string subhaloProblemError(const SubhaloProblem<T>& problem, const SubhaloNames& names = {});

// Validates the problem (throws Error) and finds the subhalos. Groups are
// independent: small ones run one per thread, large ones use all threads in
// their neighbour searches and potentials. The result does not depend on the
// input order (ties go by global id).
template <class T>
RunInfo computeSubhalos(const SubhaloProblem<T>& problem, Subhalos& out,
  Backend backend = Backend::Auto, const RunControl& control = {}, const SubhaloNames& names = {});

// The same over the ranks of `comm`: every rank passes its own particles
// (problem.ids global and unique) and gets SubhaloId and SubhaloRank for
// them; densities from the distributed kNN, then each group goes whole to
// one rank (balanced by size), and the catalogue rows stay there (rows of
// consecutive SubhaloIds per rank). Identical to the serial result for any
// partition. Input errors on any rank throw the same Error on every rank.
template <class T>
RunInfo computeSubhalosDistributed(Communicator& comm, const SubhaloProblem<T>& problem,
  Subhalos& out, Backend backend = Backend::Auto, const RunControl& control = {},
  const SubhaloNames& names = {});

extern template std::string subhaloProblemError<float>(
  const SubhaloProblem<float>&, const SubhaloNames&);
extern template std::string subhaloProblemError<double>(
  const SubhaloProblem<double>&, const SubhaloNames&);
extern template RunInfo computeSubhalos<float>(
  const SubhaloProblem<float>&, Subhalos&, Backend, const RunControl&, const SubhaloNames&);
extern template RunInfo computeSubhalos<double>(
  const SubhaloProblem<double>&, Subhalos&, Backend, const RunControl&, const SubhaloNames&);
extern template RunInfo computeSubhalosDistributed<float>(Communicator&,
  const SubhaloProblem<float>&, Subhalos&, Backend, const RunControl&, const SubhaloNames&);
extern template RunInfo computeSubhalosDistributed<double>(Communicator&,
  const SubhaloProblem<double>&, Subhalos&, Backend, const RunControl&, const SubhaloNames&);
} // namespace jz
