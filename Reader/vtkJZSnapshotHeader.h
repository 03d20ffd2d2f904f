/**
 * @file   vtkJZSnapshotHeader.h
 * @brief  The header values of a snapshot that the reader writes as field data.
 *
 * `BoxSize`, `Time`, `Redshift`, `HubbleParam`, `Omega0`, `OmegaLambda`,
 * `UnitLength_in_cm`, `UnitMass_in_g`, `UnitVelocity_in_cm_per_s`, each from
 * the first place that has it: Gadget-2/3 and AREPO keep them in the
 * `Header`, Gadget-4 partly in `Parameters`, SWIFT in its `Cosmology` (`h`,
 * `Omega_m`, `Omega_lambda`) and `Units` groups (the velocity unit being
 * U_L / U_t). Then every numeric attribute of SWIFT's `Units` and
 * `Cosmology` groups under its own name.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotHeader_h
#define vtkJZSnapshotHeader_h

#include "vtkJZSnapshotLayout.h" // HeaderValue

#include "vtk_hdf5.h"

#include <vector>

namespace vtkJZSnapshotHeader
{
/// The values of an open snapshot or catalogue file, in the order above;
/// those the file does not have are left out.
std::vector<vtkJZSnapshotLayout::HeaderValue> ReadValues(hid_t file);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotHeader.h
