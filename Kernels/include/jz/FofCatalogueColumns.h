// The names of the halo catalogue's columns (FofCatalogue, HaloProperties):
// the FriendsOfFriends filter's port 1 arrays and the keys of jztree.fof's
// catalogue dict.
#pragma once

namespace jz
{
namespace catalogue
{
constexpr const char* kGroupId = "GroupId";
constexpr const char* kCount = "Count";
constexpr const char* kMass = "Mass";
constexpr const char* kCenterOfMass = "CenterOfMass";   // 3 components
constexpr const char* kInertiaRadius = "InertiaRadius";
constexpr const char* kMeanVelocity = "MeanVelocity";   // 3 components; with velocities
constexpr const char* kVelocityDispersion = "VelocityDispersion"; // with velocities
constexpr const char* kCentreOfPotential = "CentreOfPotential";   // 3 components
constexpr const char* kMostBoundId = "MostBoundId";
constexpr const char* kSORadius = "SORadius";
constexpr const char* kSOMass = "SOMass";
constexpr const char* kSOCount = "SOCount";
} // namespace catalogue
} // namespace jz
