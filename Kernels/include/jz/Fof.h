// Friends-of-friends group finding on the jz-tree (§IV), its
// deterministic group labels and the halo catalogue (section IV-B).
//
// VTK-free public API. Two points are friends when their distance is at most
// the linking length (d <= l, compared as d^2 <= l^2 in double from the input
// coordinates, the nearest image when periodic); groups are the connected
// components of the friendship graph.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "Backend.h"
#include "Config.h"
#include "LinkingLength.h" // relativeLinkingLength, the Relative mode

namespace jz
{
// Input, all in caller memory. Coordinates are interleaved xyz (VTK layout).
template <class T>
struct FofProblem
{
  const T* points = nullptr;
  std::size_t numPoints = 0;
  double linkingLength = 0;
  // Periodic box [boxLo, boxHi); points outside are wrapped in.
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
  // Per-point global identifiers (input order); nullptr means the input index.
  const GlobalId* ids = nullptr;
};

// Per-point results in input order. computeFofGroups sizes the vectors only
// after its tree walk (so they do not add to the tree build's peak memory);
// with want* false a vector stays empty.
struct FofGroups
{
  bool wantLabel = true;
  bool wantRoot = true;
  // Canonical group label: the smallest global id (or input index) of the
  // group. Does not depend on the input order or on the partition.
  std::vector<GlobalId> groupLabel;
  // Input index of one member of the group, the same for all its members
  // (a dense handle for counting; not canonical).
  std::vector<Index> groupRoot;
};

// Validates the problem (throws Error with a clear message: non-finite
// coordinates, linking length <= 0 or not finite, bad periodic box, too many
// points) and finds the groups. Backend::Auto runs on the GPU when a usable
// one is present and falls back to the CPU when the GPU run fails (out of
// memory, driver trouble; RunInfo::note says why); Backend::CUDA runs on the
// GPU or throws Error; Backend::CPU runs on the CPU. Both backends give the
// identical partition and groupLabel. RunInfo::stageSeconds holds the time
// per stage (GPU stages prefixed "gpu ", measured with CUDA events).
template <class T>
RunInfo computeFofGroups(const FofProblem<T>& problem, FofGroups& out,
  Backend backend = Backend::Auto, const RunControl& control = {});

extern template RunInfo computeFofGroups<float>(
  const FofProblem<float>&, FofGroups&, Backend, const RunControl&);
extern template RunInfo computeFofGroups<double>(
  const FofProblem<double>&, FofGroups&, Backend, const RunControl&);

// Deterministic group numbering (FofLabels.cpp). From groupRoot and
// groupLabel of computeFofGroups (n points), writes for every point
//  - groupSize[i]: the number of members of its group (any size), and
//  - groupId[i]: 0..G-1 for groups of at least minimumGroupSize members,
//    numbered by descending size, ties broken by the smaller groupLabel
//    (the smallest global point id in the group); -1 for smaller groups.
// Either output may be null. Returns G, the number of kept groups.
std::size_t labelFofGroups(const Index* groupRoot, const GlobalId* groupLabel, std::size_t n,
  GlobalId minimumGroupSize, GlobalId* groupId, GlobalId* groupSize,
  const RunControl& control = {});

// The halo catalogue (FofCatalogue.cpp): one entry per kept group, accumulated
// in double.
struct FofCatalogue
{
  std::size_t numGroups = 0;
  std::vector<GlobalId> count;
  std::vector<double> mass;
  // Centre of mass, 3 per group. Periodic: every member is unwrapped to the
  // nearest image of a reference member of its group (its member with the
  // smallest global id) before averaging, and the result is wrapped back
  // into [boxLo, boxHi).
  std::vector<double> centerOfMass;
  // Mass-weighted rms distance of the members from the centre of mass
  // (nearest image when periodic): sqrt(sum m |x - c|^2 / M).
  std::vector<double> inertiaRadius;
  // With velocities only: the mass-weighted mean velocity (3 per group), and
  // the one-dimensional mass-weighted velocity dispersion
  // sqrt(sum m |v - v_mean|^2 / (3 M)).
  bool hasVelocities = false;
  std::vector<double> meanVelocity;
  std::vector<double> velocityDispersion;
};

template <class T>
struct FofCatalogueInput
{
  const T* points = nullptr; // interleaved xyz, n points
  std::size_t numPoints = 0;
  const GlobalId* groupId = nullptr;  // from labelFofGroups: 0..G-1 or -1
  std::size_t numGroups = 0;          // G
  const double* masses = nullptr;     // per point; nullptr = unit mass
  const double* velocities = nullptr; // interleaved xyz per point; nullptr = none
  // Global ids per point; the member with the smallest id is each group's
  // reference point for periodic unwrapping, so the catalogue does not depend
  // on the input order or the partition. nullptr = input index.
  const GlobalId* ids = nullptr;
  // Per group: its reference member (smallest id, first in input order) when
  // the caller knows it (labelFofCut); nullptr = found here.
  const Index* reference = nullptr;
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
};

template <class T>
void computeFofCatalogue(
  const FofCatalogueInput<T>& input, FofCatalogue& catalogue, const RunControl& control = {});

// The catalogue's input for the points of `problem` labelled groupId (0..G-1
// or -1), with their masses and velocities (nullable): one home of the
// mapping for every caller that labels a FofProblem's points.
template <class T>
FofCatalogueInput<T> fofCatalogueInputFor(const FofProblem<T>& problem, const GlobalId* groupId,
  std::size_t numGroups, const double* masses, const double* velocities)
{
  FofCatalogueInput<T> in;
  in.points = problem.points;
  in.numPoints = problem.numPoints;
  in.groupId = groupId;
  in.numGroups = numGroups;
  in.masses = masses;
  in.velocities = velocities;
  in.ids = problem.ids;
  in.periodic = problem.periodic;
  std::copy_n(problem.boxLo, 3, in.boxLo);
  std::copy_n(problem.boxHi, 3, in.boxHi);
  return in;
}

extern template void computeFofCatalogue<float>(
  const FofCatalogueInput<float>&, FofCatalogue&, const RunControl&);
extern template void computeFofCatalogue<double>(
  const FofCatalogueInput<double>&, FofCatalogue&, const RunControl&);

// Groups, their numbering and the catalogue in one call (FofHalos.cpp):
// computeFofGroups, labelFofGroups and computeFofCatalogue (with the
// problem's ids, periodic box and the same control), the single-process FoF.
// On the GPU (Backend::CUDA, or Auto with a usable GPU) everything stays on
// the device and only GroupId, GroupSize and the catalogue come back, equal
// bit for bit to the CPU's for any control.numThreads (the catalogue sums in
// the CPU's chunk order, which follows the group and point counts alone,
// FofCatalogueChunks.h).
// Ids must be unique (ties of equal labels are broken by a backend's roots).
struct FofHaloOptions
{
  GlobalId minimumGroupSize = 20;
  const double* masses = nullptr;     // per point; nullptr = unit mass
  const double* velocities = nullptr; // interleaved xyz per point; nullptr = none
  // Where GroupId and GroupSize go (numPoints each) when the caller has the
  // arrays (page-locked ones, cudaHostRegister, take the GPU's copy
  // directly); nullptr = into the result's vectors.
  GlobalId* groupIdOut = nullptr;
  GlobalId* groupSizeOut = nullptr;
};

struct FofHalos
{
  std::vector<GlobalId> groupId;   // empty when FofHaloOptions::groupIdOut was given
  std::vector<GlobalId> groupSize; // empty when FofHaloOptions::groupSizeOut was given
  std::size_t numGroups = 0;       // G
  FofCatalogue catalogue;
};

template <class T>
RunInfo computeFofHalos(const FofProblem<T>& problem, const FofHaloOptions& options,
  FofHalos& result, Backend backend = Backend::Auto, const RunControl& control = {});

extern template RunInfo computeFofHalos<float>(
  const FofProblem<float>&, const FofHaloOptions&, FofHalos&, Backend, const RunControl&);
extern template RunInfo computeFofHalos<double>(
  const FofProblem<double>&, const FofHaloOptions&, FofHalos&, Backend, const RunControl&);
} // namespace jz
