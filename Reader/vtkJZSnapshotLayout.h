/**
 * @file   vtkJZSnapshotLayout.h
 * @brief  What a Gadget / AREPO / SWIFT HDF5 snapshot or group catalogue holds.
 *
 * Format detection and validation, separate from the VTK reader that uses
 * it (vtkJZParticleSnapshotReader). Recognised by content:
 *  - particle snapshots (Gadget-2/3/4, AREPO, SWIFT): a `Header` group with
 *    `PartType<n>` groups (or the `NumPart_ThisFile` attribute); one point set
 *    per `PartType<n>`, positions `Coordinates`;
 *  - group catalogues: Gadget-4 (and Gadget-3 / AREPO SUBFIND) `fof_tab` and
 *    `fof_subhalo_tab` files, point sets `Group` (positions `GroupPos`) and
 *    `Subhalo` (`SubhaloPos`); SWIFT's own FOF output, point set `Groups`
 *    (positions `Centres`).
 * A multi-file set (`name.0.hdf5` ... `name.N-1.hdf5`, N from the header's
 * `NumFilesPerSnapshot`, or `NumFiles` in catalogues) is described as one
 * snapshot whatever part is named. Describe() opens every part and checks
 * that every dataset has one row per particle of its file's header counts,
 * so reading can trust the layout. Errors throw vtkJZSnapshotHDF5::Error
 * naming the file and the dataset.
 *
 * Binary formats (vtkJZSnapshotGadgetBinary, vtkJZSnapshotTipsy) are
 * recognised by content too and described in the same Layout, their fields
 * pointing into the files (RawColumn). A type that the header counts but
 * whose group is absent (cut-down files) is left out with a warning.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotLayout_h
#define vtkJZSnapshotLayout_h

#include <cstdint>
#include <string>
#include <vector>

namespace vtkJZSnapshotLayout
{
enum class Kind
{
  Snapshot,
  GroupCatalogue
};

/// How one value of a dataset is stored, reduced to what the reader keeps:
/// integers keep size and sign, floats become 4 or 8 bytes.
struct ValueType
{
  bool Integer = false;
  bool Signed = true;
  int Bytes = 0; // 1, 2, 4, 8

  bool operator==(const ValueType& o) const
  {
    return this->Integer == o.Integer && this->Signed == o.Signed && this->Bytes == o.Bytes;
  }
};

/// Where the values of a field of a binary snapshot (Gadget binary,
/// TIPSY) lie: row r of part file f is the record at byte Offsets[f] + r *
/// RowBytes of that part (or of `File` when set, e.g. a TIPSY .iord file
/// beside the snapshot), its values ByteOffset bytes into the record.
/// RowBytes 0: an HDF5 dataset. IndexBase >= 0: not stored, the value of
/// row r is IndexBase + r (TIPSY ids without a .iord); with Text, the value
/// of row r is integer IndexBase + r of the text file `File`, after its
/// first (a count; an ASCII TIPSY .iord).
struct RawColumn
{
  bool Text = false;
  std::string File;
  std::vector<std::int64_t> Offsets;
  std::int64_t RowBytes = 0;
  std::int64_t ByteOffset = 0;
  bool Swap = false; // stored in the other byte order
  std::int64_t IndexBase = -1;
};

/// One dataset of a point set: one row per point.
struct Field
{
  std::string Name;   // path below the point set's group, e.g. "Velocities"
  int Components = 1; // product of the dimensions after the first
  ValueType Type;
  bool Virtual = false;       // an HDF5 virtual dataset (SWIFT's meta-snapshots)
  bool GlobalIdsOnly = false; // becomes the GlobalIds, not an array of its own
  RawColumn Raw;
};

/// The points of one particle type (or of the groups of a catalogue).
struct PointSet
{
  std::string Name;                       // "PartType1", "Group", ...: the group and the block name
  std::string Positions;                  // "Coordinates", "GroupPos", ...
  std::vector<std::int64_t> CountPerFile; // rows in each part file
  std::int64_t Total = 0;
  std::vector<Field> Fields; // every dataset, positions included, in name order
  double TableMass = 0;      // the header's MassTable entry (0: none)

  const Field* Find(const std::string& name) const;
};

/// A named numeric header value for the output's field data.
struct HeaderValue
{
  std::string Name;
  std::vector<double> Values;
};

/// How the values are stored: HDF5 datasets, or raw binary columns.
enum class Storage
{
  HDF5,
  Raw
};

struct Layout
{
  Kind Type = Kind::Snapshot;
  Storage Store = Storage::HDF5;
  std::string Format;                // "Gadget-4", "SWIFT", "Gadget-4 group catalogue", ...
  std::vector<std::string> Files;    // the parts, in order
  std::vector<PointSet> PointSets;   // in name order
  std::vector<HeaderValue> Header;   // BoxSize, Time, Redshift, ... (doc/filters/ParticleSnapshotReader.md)
  std::vector<std::string> Warnings; // oddities that do not stop reading

  const HeaderValue* Find(const std::string& name) const;
  /// Whether any dataset is virtual: parallel HDF5 (1.10) cannot read those.
  bool HasVirtualDatasets() const;
};

/// Whether the file is a snapshot or group catalogue this reader reads (by
/// content: HDF5, Gadget binary or TIPSY; also true for an HDF5 file too
/// damaged to open, so that opening it reports why). Never throws.
bool CanRead(const std::string& fileName);

/// The layout of the (possibly multi-file) snapshot or catalogue the file
/// belongs to, checked. Throws vtkJZSnapshotHDF5::Error.
Layout Describe(const std::string& fileName);

/// The point sets of one file only, with their datasets but no counts (for
/// the reader's selection lists; cheap), and the file's kind. Throws
/// vtkJZSnapshotHDF5::Error.
std::vector<PointSet> ListPointSets(const std::string& fileName, Kind& kind);

/// Identity of a file for a time series: the name of the first part of its
/// multi-file set (the file itself when single), and the header's `Time`
/// (`hasTime` false when absent). Throws vtkJZSnapshotHDF5::Error.
std::string SeriesEntry(const std::string& fileName, double& time, bool& hasTime);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotLayout.h
