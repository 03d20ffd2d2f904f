/**
 * @file   vtkJZSnapshotHDF5.h
 * @brief  Small RAII layer over the HDF5 C library for the snapshot reader.
 *
 * Every hid_t the reader opens is owned by a vtkJZSnapshotHDF5::Handle that
 * closes it with the matching H5?close, so no early return or exception
 * leaks a file, group, dataset, dataspace, type, attribute or property list.
 * Failures become vtkJZSnapshotHDF5::Error exceptions whose message names
 * the file and the object, with the innermost message of HDF5's own error
 * stack appended (e.g. "truncated file: eof = ..."). While an ErrorSilencer
 * lives, HDF5 does not print its error stack to stderr.
 *
 * The library is the one ParaView links (vtk_hdf5.h; Debian: the MPI build
 * libhdf5_openmpi), so files can also be opened through MPI-IO.
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotHDF5_h
#define vtkJZSnapshotHDF5_h

#include "vtk_hdf5.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtkJZSnapshotHDF5
{
/// A problem with a snapshot file; the message is meant for the user.
class Error : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/// Owns one HDF5 identifier and closes it with `close` (move-only).
class Handle
{
public:
  using CloseFunction = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, CloseFunction close)
    : Id(id)
    , Close(close)
  {
  }
  Handle(Handle&& other) noexcept
    : Id(other.Id)
    , Close(other.Close)
  {
    other.Id = H5I_INVALID_HID;
  }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { this->Reset(); }

  hid_t Get() const { return this->Id; }
  bool Valid() const { return this->Id >= 0; }
  void Reset();

private:
  hid_t Id = H5I_INVALID_HID;
  CloseFunction Close = nullptr;
};

/// While alive, HDF5 prints nothing on errors (the reader reports them).
class ErrorSilencer
{
public:
  ErrorSilencer();
  ~ErrorSilencer();
  ErrorSilencer(const ErrorSilencer&) = delete;
  ErrorSilencer& operator=(const ErrorSilencer&) = delete;

private:
  H5E_auto2_t Function = nullptr;
  void* Data = nullptr;
};

/// The innermost message of HDF5's current error stack ("" when empty).
std::string LastHDF5Message();

/// Whether the file starts with the HDF5 signature (at 0, 512, 1024, ...).
bool HasHDF5Signature(const std::string& fileName);

/// Opens a file read-only; `fapl` is a file-access property list or
/// H5P_DEFAULT. Throws Error naming the file (and HDF5's reason).
Handle OpenFile(const std::string& fileName, hid_t fapl = H5P_DEFAULT);

/// Whether `path` (relative to `location`) names an existing link.
bool Exists(hid_t location, const std::string& path);

/// Whether `path` is a group, a dataset (false when missing or another type).
bool IsGroup(hid_t location, const std::string& path);
bool IsDataset(hid_t location, const std::string& path);

/// Opens a group or a dataset; throws Error naming `what` when impossible.
Handle OpenGroup(hid_t location, const std::string& path, const std::string& what);
Handle OpenDataset(hid_t location, const std::string& path, const std::string& what);

/// Names of the hard links of a group (its members, soft links left out),
/// in HDF5's name order.
std::vector<std::string> MemberNames(hid_t group);

/// Names of the attributes of an object, in creation order where tracked.
std::vector<std::string> AttributeNames(hid_t object);

/// Reads a numeric attribute (any integer or float type, any shape) as
/// doubles; false when it does not exist or is not numeric.
bool ReadAttribute(hid_t object, const std::string& name, std::vector<double>& values);

/// Reads an integer attribute exactly (int64; unsigned values above 2^63
/// are clamped); false when it does not exist or is not an integer.
bool ReadAttribute(hid_t object, const std::string& name, std::vector<std::int64_t>& values);

/// The same for an attribute of the group `group` of `file`; false also
/// when the group is missing or the attribute has no values.
bool ReadAttribute(
  hid_t file, const std::string& group, const std::string& name, std::vector<double>& values);
bool ReadAttribute(
  hid_t file, const std::string& group, const std::string& name, std::vector<std::int64_t>& values);

/// Reads a string attribute (fixed or variable length, the first element);
/// false when it does not exist or is not a string.
bool ReadAttribute(hid_t object, const std::string& name, std::string& value);

/// Shape of a dataset (empty for a scalar dataset).
std::vector<hsize_t> Shape(hid_t dataset);

/// Reads `count` rows starting at row `start`, every `stride`-th, of a
/// dataset of shape (rows, ...) into `buffer` (count x components values of
/// `memoryType`). `transfer` is a data-transfer property list or H5P_DEFAULT.
/// Throws Error naming `what`.
void ReadRows(hid_t dataset, hsize_t start, hsize_t count, hsize_t stride, hid_t memoryType,
  void* buffer, hid_t transfer, const std::string& what);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotHDF5.h
