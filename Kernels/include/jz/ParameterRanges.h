// The valid range of every numeric parameter: the one home of those rules.
//
// The kernels check their inputs with rangeError(), the ParaView filters
// check their properties with the same entries before anything runs, and
// Plugin/*.xml declare the same ranges in their IntRangeDomain,
// DoubleRangeDomain and EnumerationDomain elements (the test plugin.ranges
// compares them with this table, printed by jz_parameter_ranges).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace jz
{
struct ParameterRange
{
  const char* name;    // the property name, as the filters and the XML spell it
  const char* filters; // the filters (proxies) that have it, space-separated
  double min;          // inclusive, or exclusive with minExclusive
  double max;          // inclusive; infinity for none
  bool minExclusive;
  bool integer;
};

namespace ranges
{
constexpr double kNone = std::numeric_limits<double>::infinity();
constexpr double kIntMax = double(std::numeric_limits<int>::max());

// Counts.
constexpr ParameterRange NumberOfNeighbors{ "NumberOfNeighbors",
  "KNNDensity SPHSmooth SPHProjection SPHSlice SPHVolume", 1, kIntMax, false, true };
constexpr ParameterRange MinimumGroupSize{ "MinimumGroupSize", "FriendsOfFriends", 1, kIntMax,
  false, true };
constexpr ParameterRange EmstMinSamples{ "MinSamples", "EuclideanMST", 1, kIntMax, false, true };
// The hdbscan library's rules: min_cluster_size > 1; min_samples >= 1, here
// 0 standing for "= MinClusterSize".
constexpr ParameterRange MinClusterSize{ "MinClusterSize", "HDBSCAN", 2, kIntMax, false, true };
constexpr ParameterRange HdbscanMinSamples{ "MinSamples", "HDBSCAN", 0, kIntMax, false, true };
constexpr ParameterRange DensityNeighbors{ "DensityNeighbors", "SubhaloFinder", 1, kIntMax, false,
  true };
constexpr ParameterRange SaddleNeighbors{ "SaddleNeighbors", "SubhaloFinder", 1, kIntMax, false,
  true };
constexpr ParameterRange MinimumSubhaloSize{ "MinimumSubhaloSize", "SubhaloFinder", 1, kIntMax,
  false, true };
constexpr ParameterRange Stride{ "Stride", "ParticleSnapshotReader", 1, kIntMax, false, true };
constexpr ParameterRange MinimumShared{ "MinimumShared", "HaloTracking", 1, kIntMax, false, true };
// A TrackId, or -1 for "the most massive track at the last step".
constexpr ParameterRange SelectedTrackId{ "SelectedTrackId", "HaloTracking", -1, kIntMax, false,
  true };
// The reader's box override: 0 keeps the file's.
constexpr ParameterRange SnapshotBoxSize{ "BoxSize", "ParticleSnapshotReader", 0, kNone, false,
  false };

// Lengths and physical constants: finite, and positive or non-negative.
constexpr ParameterRange LinkingLength{ "LinkingLength", "FriendsOfFriends", 0, kNone, true,
  false };
constexpr ParameterRange Softening{ "Softening", "FriendsOfFriends TreeGravity SubhaloFinder", 0,
  kNone, false, false };
constexpr ParameterRange GravitationalConstant{ "GravitationalConstant",
  "FriendsOfFriends TreeGravity SubhaloFinder", 0, kNone, true, false };
constexpr ParameterRange Overdensity{ "Overdensity", "FriendsOfFriends", 0, kNone, true, false };
constexpr ParameterRange CriticalDensity{ "CriticalDensity", "FriendsOfFriends", 0, kNone, true,
  false };
// Beyond 1.5 a node is accepted at a distance shorter than its own size:
// the multipoles are then no approximation at all.
constexpr ParameterRange OpeningAngle{ "OpeningAngle", "TreeGravity SubhaloFinder", 0, 1.5, false,
  false };

// Enumerations: their values are 0 .. max.
constexpr ParameterRange Estimator{ "Estimator", "KNNDensity", 0, 1, false, true };
constexpr ParameterRange LinkingLengthMode{ "LinkingLengthMode", "FriendsOfFriends", 0, 1, false,
  true };
constexpr ParameterRange OverdensityReference{ "OverdensityReference", "FriendsOfFriends", 0, 1,
  false, true };
constexpr ParameterRange Metric{ "Metric", "EuclideanMST", 0, 1, false, true };
constexpr ParameterRange ClusterSelectionMethod{ "ClusterSelectionMethod", "HDBSCAN", 0, 1, false,
  true };
constexpr ParameterRange Device{ "Device",
  "KNNDensity FriendsOfFriends EuclideanMST HDBSCAN TreeGravity SubhaloFinder SPHSmooth "
  "SPHProjection SPHSlice SPHVolume",
  0, 2, false, true };

// The SPH maps (SphMaps.h): their kernels and axes, and the factor from a
// smoothing-length array to the kernel's support radius.
constexpr ParameterRange SphKernel{ "Kernel", "SPHProjection SPHSlice SPHVolume", 0, 1, false,
  true };
constexpr ParameterRange SphAxis{ "Axis", "SPHProjection SPHSlice", 0, 2, false, true };
constexpr ParameterRange SmoothingLengthScale{ "SmoothingLengthScale",
  "SPHProjection SPHSlice SPHVolume", 0, kNone, true, false };
constexpr ParameterRange SphResolution{ "Resolution", "SPHProjection SPHSlice SPHVolume", 1,
  kIntMax, false, true };

constexpr ParameterRange kAll[] = { NumberOfNeighbors, MinimumGroupSize, EmstMinSamples,
  MinClusterSize, HdbscanMinSamples, DensityNeighbors, SaddleNeighbors, MinimumSubhaloSize, Stride, SnapshotBoxSize, MinimumShared, SelectedTrackId,
  LinkingLength, Softening, GravitationalConstant, Overdensity, CriticalDensity, OpeningAngle,
  Estimator, LinkingLengthMode, OverdensityReference, Metric, ClusterSelectionMethod, Device,
  SphKernel, SphAxis, SmoothingLengthScale, SphResolution };
} // namespace ranges

// Why `value` is outside the range, naming the parameter as `name` (the
// range's own name when empty); an empty string when it is inside.
std::string rangeError(const ParameterRange& range, double value, const std::string& name = {});
} // namespace jz
