/**
 * @file   vtkJZSnapshotBlocks.h
 * @brief  The output blocks of one piece of a snapshot: allocated, read, finished.
 *
 * For every selected point set of a described snapshot (vtkJZSnapshotLayout)
 * the piece's rows (vtkJZSnapshotShare) are allocated as VTK arrays, points
 * in the stored precision and one array per selected dataset in its stored
 * type, and the files are read straight into them (vtkJZSnapshotRows).
 *
 * With a Region the output size is not known before reading: the piece's
 * candidate rows (whole files, or the SWIFT cells that overlap the region,
 * vtkJZSnapshotCells) are streamed in chunks of ChunkRows rows, positions
 * first, and only the rows inside the region (every Stride-th of them,
 * counted over the whole snapshot in file order) are appended to growing
 * output buffers, so memory stays the output plus a fixed buffer. Finishing turns
 * each into a vtkPolyData block named after its point set: one vertex per
 * point, `Masses` from the MassTable where a type has no mass dataset,
 * `GlobalIds` from `ParticleIDs`, and the header values as field data.
 *
 * Reading from the page cache is dominated by the first touch of fresh
 * output memory. The arrays that do not come from the file take none of
 * their own where they can (vtkJZSnapshotSharedMemory), and a second
 * thread fills the others (the vertex offsets; GlobalIds converted from
 * 32-bit ids, which are read first) and maps the output pages while the
 * files are read. With the
 * environment variable JZ_SNAPSHOT_HUGEPAGES=1, large arrays are also
 * advised to use transparent huge pages (faster repeated reads, e.g. of a
 * time series in one session).
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotBlocks_h
#define vtkJZSnapshotBlocks_h

#include "vtkJZSnapshotLayout.h"
#include "vtkJZSnapshotShare.h"

#include "vtk_hdf5.h" // MPI_Comm of the parallel HDF5 build

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkJZSnapshotRows;
class vtkMultiBlockDataSet;
namespace jz
{
struct RunInfo;
}

class vtkJZSnapshotBlocks
{
public:
  /// What to read of a snapshot.
  struct Request
  {
    std::function<bool(const std::string&)> TypeSelected;  // point sets by name
    std::function<bool(const std::string&)> ArraySelected; // datasets by name
    std::int64_t Stride = 1;
    int Piece = 0;
    int NumberOfPieces = 1;
    bool HasRegion = false;
    double Region[6] = { 0, 0, 0, 0, 0, 0 }; // xmin xmax ymin ymax zmin zmax, half-open
  };

  /// Rows read at once when streaming a Region, and the bytes of their
  /// positions and one array's values at most (with vtkJZSnapshotRows'
  /// buffer, the whole read buffer stays under 256 MiB).
  static constexpr std::int64_t ChunkRows = std::int64_t(1) << 20;
  static constexpr std::int64_t ChunkBytes = std::int64_t(128) << 20;

  /// Allocates the piece's blocks; `layout` must outlive this object.
  vtkJZSnapshotBlocks(const vtkJZSnapshotLayout::Layout& layout, const Request& request);
  ~vtkJZSnapshotBlocks();
  vtkJZSnapshotBlocks(const vtkJZSnapshotBlocks&) = delete;
  vtkJZSnapshotBlocks& operator=(const vtkJZSnapshotBlocks&) = delete;

  bool HasRegion() const { return this->Selection.HasRegion; }

  /// Whether Stride over a Region needs to know how many rows inside the
  /// region the pieces before this one hold (then CountInRegion, SetRowsBefore).
  bool NeedsRowsBefore() const;

  /// Counts, per block, the rows inside the Region of this piece's share
  /// (`before` false) or of all the rows before it (`before` true).
  /// Returns the first error or "".
  std::string CountInRegion(bool before, std::vector<std::int64_t>& counts);

  /// The rows inside the Region before this piece, per block.
  void SetRowsBefore(const std::vector<std::int64_t>& counts);

  /// Reads the piece's rows of every block, part file by part file (each
  /// opened once). With `mpiComm` the files are opened through MPI-IO over
  /// it, which is collective: every rank then opens every file. Reports
  /// progress to `algorithm` and stops when it is asked to abort
  /// (`aborted`). Returns the first error, naming file and dataset, or "".
  /// Adds its counters to `info`.
  std::string Read(MPI_Comm* mpiComm, vtkAlgorithm* algorithm, bool& aborted, jz::RunInfo& info);

  /// Puts the finished blocks, named, into `output`, and the header values
  /// as field data on it and on every block.
  void Finish(vtkMultiBlockDataSet* output);

  /// The piece's rows over all blocks.
  std::int64_t GetNumberOfRows() const;

private:
  struct Block;
  void ReadDirect(Block& block, vtkJZSnapshotRows& rows, vtkAlgorithm* algorithm, bool& aborted);
  std::int64_t ScanRegion(Block& block, vtkJZSnapshotRows& rows,
    const vtkJZSnapshotShare::Share& share, bool append, vtkAlgorithm* algorithm, bool& aborted);
  bool WantTableMasses(const vtkJZSnapshotLayout::PointSet& set) const;
  void Progress(vtkAlgorithm* algorithm, std::int64_t rows, bool& aborted);
  std::int64_t ProgressRows = 0, ProgressTotal = 1;
  const vtkJZSnapshotLayout::Layout& Snapshot;
  Request Selection;
  std::vector<std::unique_ptr<Block>> Blocks;
};

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotBlocks.h
