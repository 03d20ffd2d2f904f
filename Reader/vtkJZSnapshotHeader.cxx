#include "vtkJZSnapshotHeader.h"

#include "vtkJZSnapshotHDF5.h"

#include <algorithm>
#include <string>

namespace vtkJZSnapshotHeader
{
namespace
{
using vtkJZSnapshotHDF5::Handle;
using vtkJZSnapshotLayout::HeaderValue;

// The header values written to field data, each from the first place that
// has it (group, attribute): Gadget-2/3 and AREPO keep them in the Header,
// Gadget-4 partly in Parameters, SWIFT in Cosmology and Units.
struct Canonical
{
  const char* Name;
  std::vector<std::pair<const char*, const char*>> Places;
};
const std::vector<Canonical>& CanonicalValues()
{
  static const std::vector<Canonical> values = {
    { "BoxSize", { { "Header", "BoxSize" }, { "Parameters", "BoxSize" } } },
    { "Time", { { "Header", "Time" } } },
    { "Redshift", { { "Header", "Redshift" }, { "Cosmology", "Redshift" } } },
    { "HubbleParam",
      { { "Header", "HubbleParam" }, { "Parameters", "HubbleParam" }, { "Cosmology", "h" } } },
    { "Omega0",
      { { "Header", "Omega0" }, { "Parameters", "Omega0" }, { "Cosmology", "Omega_m" } } },
    { "OmegaLambda",
      { { "Header", "OmegaLambda" }, { "Parameters", "OmegaLambda" },
        { "Cosmology", "Omega_lambda" } } },
    { "UnitLength_in_cm",
      { { "Header", "UnitLength_in_cm" }, { "Parameters", "UnitLength_in_cm" },
        { "Units", "Unit length in cgs (U_L)" } } },
    { "UnitMass_in_g",
      { { "Header", "UnitMass_in_g" }, { "Parameters", "UnitMass_in_g" },
        { "Units", "Unit mass in cgs (U_M)" } } },
    { "UnitVelocity_in_cm_per_s",
      { { "Header", "UnitVelocity_in_cm_per_s" }, { "Parameters", "UnitVelocity_in_cm_per_s" } } },
  };
  return values;
}

void AddValue(
  std::vector<HeaderValue>& header, const std::string& name, const std::vector<double>& values)
{
  const bool known =
    std::any_of(header.begin(), header.end(), [&](const HeaderValue& v) { return v.Name == name; });
  if (!values.empty() && !known)
  {
    header.push_back({ name, values });
  }
}

// Every numeric attribute of a group, under its own name.
void AddGroupAttributes(std::vector<HeaderValue>& header, hid_t file, const char* groupName)
{
  if (!vtkJZSnapshotHDF5::IsGroup(file, groupName))
  {
    return;
  }
  Handle group(H5Gopen2(file, groupName, H5P_DEFAULT), H5Gclose);
  for (const std::string& name : vtkJZSnapshotHDF5::AttributeNames(group.Get()))
  {
    std::vector<double> values;
    if (vtkJZSnapshotHDF5::ReadAttribute(group.Get(), name, values))
    {
      AddValue(header, name, values);
    }
  }
}

}

//------------------------------------------------------------------------------
std::vector<HeaderValue> ReadValues(hid_t file)
{
  std::vector<HeaderValue> header;
  for (const Canonical& value : CanonicalValues())
  {
    for (const auto& place : value.Places)
    {
      std::vector<double> values;
      if (vtkJZSnapshotHDF5::ReadAttribute(file, place.first, place.second, values))
      {
        AddValue(header, value.Name, values);
        break;
      }
    }
  }
  // SWIFT: the velocity unit is U_L / U_t; then its Units and Cosmology groups as they are.
  std::vector<double> length, time;
  if (vtkJZSnapshotHDF5::ReadAttribute(file, "Units", "Unit length in cgs (U_L)", length) &&
    vtkJZSnapshotHDF5::ReadAttribute(file, "Units", "Unit time in cgs (U_t)", time) && time[0] != 0)
  {
    AddValue(header, "UnitVelocity_in_cm_per_s", { length[0] / time[0] });
  }
  AddGroupAttributes(header, file, "Units");
  AddGroupAttributes(header, file, "Cosmology");
  return header;
}

}
