#include "JZDisplayTable.h"

#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"

#include <cstring>

namespace jz_display
{
namespace
{
// One row per output. Producers that are not built yet simply never match.
// clang-format off
const Entry Table[] = {
  // producer                port  look                array             size array(s)                 noise       log    emphasis         preset
  { "KNNDensity",             0, Look::Scalars,    "Density",        "SmoothingLength",            nullptr,     true,  Emphasis::High, "Inferno (matplotlib)" },
  { "SPHSmooth",              0, Look::Scalars,    "Density",        "SmoothingLength",            nullptr,     true,  Emphasis::High, "Inferno (matplotlib)" },
  { "FriendsOfFriends",       0, Look::Categories, "GroupId",        nullptr,                      "ungrouped", false, Emphasis::High, nullptr },
  { "FriendsOfFriends",       1, Look::Spheres,    "GroupId",        "SORadius|InertiaRadius",     nullptr,     false, Emphasis::High, nullptr },
  { "HDBSCAN",                0, Look::Categories, "ClusterId",      nullptr,                      "noise",     false, Emphasis::High, nullptr },
  { "EuclideanMST",           0, Look::Faint,      nullptr,          nullptr,                      nullptr,     false, Emphasis::High, nullptr },
  { "EuclideanMST",           1, Look::Lines,      "Length",         nullptr,                      nullptr,     true,  Emphasis::Low,  "Viridis (matplotlib)" },
  // the same filters under their scripting names (EuclideanMST(...), HDBSCAN(...) in pvpython)
  { "EuclideanMSTAlias",      0, Look::Faint,      nullptr,          nullptr,                      nullptr,     false, Emphasis::High, nullptr },
  { "EuclideanMSTAlias",      1, Look::Lines,      "Length",         nullptr,                      nullptr,     true,  Emphasis::Low,  "Viridis (matplotlib)" },
  { "HDBSCANAlias",           0, Look::Categories, "ClusterId",      nullptr,                      "noise",     false, Emphasis::High, nullptr },
  { "HaloTracking",           0, Look::Categories, "TrackId",        nullptr,                      "ungrouped", false, Emphasis::High, nullptr },
  { "SubhaloFinder",          0, Look::Categories, "SubhaloId",      nullptr,                      "in no subhalo", false, Emphasis::High, nullptr },
  { "SubhaloFinder",          1, Look::Spheres,    "SubhaloId",      "RVmax",                      nullptr,     false, Emphasis::High, nullptr },
  { "TreeGravity",            0, Look::Scalars,    "Potential",      nullptr,                      nullptr,     false, Emphasis::Low,  "Viridis (matplotlib)" },
  { "SPHProjection",          0, Look::Scalars,    "SurfaceDensity", nullptr,                      nullptr,     true,  Emphasis::High, "Inferno (matplotlib)" },
  { "SPHSlice",               0, Look::Scalars,    "Density",        nullptr,                      nullptr,     true,  Emphasis::High, "Inferno (matplotlib)" },
  { "SPHVolume",              0, Look::Scalars,    "Density",        nullptr,                      nullptr,     true,  Emphasis::High, "Inferno (matplotlib)" },
  { "ParticleSnapshotReader", 0, Look::BlockTypes, nullptr,          nullptr,                      nullptr,     false, Emphasis::High, nullptr },
  // the same reader under its scripting name (ParticleSnapshotReader(...) in pvpython)
  { "ParticleSnapshotReaderAlias", 0, Look::BlockTypes, nullptr,     nullptr,                      nullptr,     false, Emphasis::High, nullptr },
};
// clang-format on
}

const Entry* FindEntry(const char* producer, int port)
{
  if (!producer)
  {
    return nullptr;
  }
  for (const Entry& entry : Table)
  {
    if (entry.Port == port && std::strcmp(entry.Producer, producer) == 0)
    {
      return &entry;
    }
  }
  return nullptr;
}

const Entry* FindEntry(vtkSMProxy* repr)
{
  if (!repr || !repr->GetProperty("Input"))
  {
    return nullptr;
  }
  vtkSMPropertyHelper input(repr, "Input", /*quiet=*/true);
  vtkSMProxy* producer = input.GetAsProxy();
  return producer ? FindEntry(producer->GetXMLName(), static_cast<int>(input.GetOutputPort()))
                  : nullptr;
}

}
