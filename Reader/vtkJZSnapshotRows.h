/**
 * @file   vtkJZSnapshotRows.h
 * @brief  Reads rows of one field of a described snapshot, whatever its format.
 *
 * HDF5 datasets through hyperslabs (MPI-IO when given a communicator), raw
 * binary columns (Gadget binary, TIPSY, .iord) with checked reads, byte
 * order fixed, ASCII .iord files as they stream (one pass while the rows
 * asked for go forward), and row indices for ids that are not stored. Files are
 * opened once and kept open while this object lives. Raw reads of strided
 * or interleaved rows go through one buffer of bounded size, which also
 * serves the next field of the same records (TIPSY's fields share them).
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotRows_h
#define vtkJZSnapshotRows_h

#include "vtkJZSnapshotHDF5.h"
#include "vtkJZSnapshotLayout.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vtkJZSnapshotRawFile
{
class File;
}

class vtkJZSnapshotRows
{
public:
  /// Bytes of the raw read buffer at most.
  static constexpr std::int64_t BufferBytes = std::int64_t(64) << 20;

  /// `mpiComm`: open HDF5 files through MPI-IO over it (collective opens).
  vtkJZSnapshotRows(const vtkJZSnapshotLayout::Layout& layout, MPI_Comm* mpiComm);
  ~vtkJZSnapshotRows();
  vtkJZSnapshotRows(const vtkJZSnapshotRows&) = delete;
  vtkJZSnapshotRows& operator=(const vtkJZSnapshotRows&) = delete;

  /// Opens part file `file` now (with MPI-IO every rank must open every part).
  void Open(std::size_t file);

  /// Reads rows start, start + stride, ... (count of them) of `field` of
  /// `set` in part `file` into `target`: count x components values of VTK
  /// type `vtkType` (the field's own type; for HDF5 also a conversion).
  /// Throws vtkJZSnapshotHDF5::Error naming file and field.
  void Read(const vtkJZSnapshotLayout::PointSet& set, const vtkJZSnapshotLayout::Field& field,
    std::size_t file, std::int64_t start, std::int64_t count, std::int64_t stride, int vtkType,
    void* target);

  /// Files opened so far.
  int GetFilesOpened() const { return this->FilesOpened; }

private:
  void ReadRaw(const vtkJZSnapshotLayout::Field& field, std::size_t file, std::int64_t start,
    std::int64_t count, std::int64_t stride, void* target);
  const vtkJZSnapshotRawFile::File& RawFile(const std::string& name);
  void ReadText(const vtkJZSnapshotLayout::Field& field, std::int64_t start, std::int64_t count,
    std::int64_t stride, std::int64_t* target);
  bool NextToken(const vtkJZSnapshotRawFile::File& file, std::string& token);

  const vtkJZSnapshotLayout::Layout& Snapshot;
  MPI_Comm* Comm;
  vtkJZSnapshotHDF5::Handle Access;
  std::size_t OpenPart = static_cast<std::size_t>(-1);
  vtkJZSnapshotHDF5::Handle PartHandle;
  std::map<std::string, std::unique_ptr<vtkJZSnapshotRawFile::File>> RawFiles;
  // The raw buffer and the bytes it holds (file, first byte, length).
  std::vector<char> Buffer;
  std::string BufferFile;
  std::int64_t BufferStart = -1, BufferLength = 0;
  int FilesOpened = 0;
  // A text column read as it streams: the next value's index and where the
  // unread text starts (TextBuffer[TextPos..] then the file from TextByte).
  std::string TextFile;
  std::int64_t TextRow = -1, TextByte = 0;
  std::vector<char> TextBuffer;
  std::size_t TextPos = 0;
};

#endif
