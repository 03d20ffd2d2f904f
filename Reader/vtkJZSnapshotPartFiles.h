/**
 * @file   vtkJZSnapshotPartFiles.h
 * @brief  The names of the parts of a multi-file snapshot.
 *
 * Any part names the set: `dir/snap_062.3.hdf5` of N parts gives
 * `dir/snap_062.0.hdf5` ... `dir/snap_062.<N-1>.hdf5`, and a name without
 * extension (Gadget binary, `dir/snap_062.3`) gives `dir/snap_062.0` ...
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotPartFiles_h
#define vtkJZSnapshotPartFiles_h

#include <cstdint>
#include <string>
#include <vector>

namespace vtkJZSnapshotPartFiles
{
/// More parts than any simulation writes: a damaged header.
constexpr std::int64_t MaximumParts = std::int64_t(1) << 20;

/// The `numFiles` part names of the set `fileName` belongs to (the file
/// itself when numFiles <= 1). Throws vtkJZSnapshotHDF5::Error when the name
/// has no part number or N exceeds MaximumParts; `countSource` names the
/// header value that gave N.
std::vector<std::string> Names(
  const std::string& fileName, std::int64_t numFiles, const std::string& countSource);
}

#endif
