/**
 * @file   vtkJZSnapshotGadgetBinary.h
 * @brief  Gadget-1/2 binary snapshots described as a vtkJZSnapshotLayout.
 *
 * Fortran records framed by their length before and after; SnapFormat 1
 * (blocks in the fixed order POS, VEL, ID, MASS when a type has no
 * MassTable entry, then the gas blocks U, RHO, HSML) or SnapFormat 2 (each
 * block preceded by an 8-byte record with its 4-character label). The byte
 * order is the one whose first record length is 256 (SnapFormat 1) or 8
 * (SnapFormat 2). Precision (float or double) and id width (32 or 64 bits)
 * come from the block sizes. Multi-file sets `name.0`, `name.1`, ...
 * (num_files in the header) are one snapshot, whatever part is named.
 *
 * Every record is checked against its two length markers, the header's
 * counts and the file size before the layout is trusted; errors throw
 * vtkJZSnapshotHDF5::Error naming the file, the block and the byte offset.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotGadgetBinary_h
#define vtkJZSnapshotGadgetBinary_h

#include "vtkJZSnapshotLayout.h"

#include <string>

namespace vtkJZSnapshotGadgetBinary
{
/// Whether the file starts like a Gadget binary snapshot. Never throws.
bool Recognise(const std::string& fileName);

/// The checked layout of the (multi-file) snapshot the file belongs to.
vtkJZSnapshotLayout::Layout Describe(const std::string& fileName);

/// The first part's name and the header's Time, for a time series.
std::string SeriesEntry(const std::string& fileName, double& time);
}

#endif
