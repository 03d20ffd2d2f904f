/**
 * @file   vtkJZSnapshotRows.h
 * @brief  Reads rows of one field of a described snapshot, whatever its format.
 *
 * HDF5 datasets through hyperslabs (MPI-IO when given a communicator), or,
 * where a dataset's values lie in the file as they are in memory (stored
 * contiguous, no filter, not external, the file type the memory type's
 * bytes), with positioned reads of its bytes straight into the target, in
 * parallel (the HDF5 library reads with one thread); raw binary columns (Gadget binary, TIPSY, .iord) with checked reads, byte
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
  /// `readThreads`: threads of one large positioned read at most.
  vtkJZSnapshotRows(
    const vtkJZSnapshotLayout::Layout& layout, MPI_Comm* mpiComm, int readThreads = 1);
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

  /// HDF5 dataset reads done with positioned reads (not the HDF5 library).
  int GetDirectReads() const { return this->DirectReads; }

private:
  struct ContiguousRun;
  static ContiguousRun FindContiguousRun(hid_t dataset);
  bool ReadDirect(hid_t dataset, hid_t memoryType, const ContiguousRun& run, std::int64_t start,
    std::int64_t count, std::int64_t stride, void* target, const std::string& what);
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
  // The open part once more, for positioned reads (null when it could not
  // be shown to be the file HDF5 opened, or JZ_SNAPSHOT_DIRECT_READS=0).
  std::unique_ptr<vtkJZSnapshotRawFile::File> PartRaw;
  bool DirectReadsAllowed = true;
  int ReadThreads = 1;
  int DirectReads = 0;
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
