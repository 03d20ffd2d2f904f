/**
 * @file   vtkJZSnapshotBlocks.h
 * @brief  The output blocks of one piece of a snapshot: allocated, read, finished.
 *
 * For every selected point set of a described snapshot (vtkJZSnapshotLayout)
 * the piece's rows (vtkJZSnapshotShare) are allocated as VTK arrays, points
 * in the stored precision and one array per selected dataset in its stored
 * type, and HDF5 reads the part files straight into them. Finishing turns
 * each into a vtkPolyData block named after its point set: one vertex per
 * point, `Masses` from the MassTable where a type has no mass dataset,
 * `GlobalIds` from `ParticleIDs`, and the header values as field data.
 *
 * Reading from the page cache is dominated by the first touch of fresh
 * output memory, so a second thread maps the output pages and fills the
 * arrays that do not come from the file while HDF5 reads. With the
 * environment variable JZ_SNAPSHOT_HUGEPAGES=1, large arrays are also
 * advised to use transparent huge pages (faster repeated reads, e.g. of a
 * time series in one session).
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotBlocks_h
#define vtkJZSnapshotBlocks_h

#include "vtkJZSnapshotLayout.h"

#include "vtk_hdf5.h" // MPI_Comm of the parallel HDF5 build

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class vtkAlgorithm;
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
  };

  /// Allocates the piece's blocks; `layout` must outlive this object.
  vtkJZSnapshotBlocks(const vtkJZSnapshotLayout::Layout& layout, const Request& request);
  ~vtkJZSnapshotBlocks();
  vtkJZSnapshotBlocks(const vtkJZSnapshotBlocks&) = delete;
  vtkJZSnapshotBlocks& operator=(const vtkJZSnapshotBlocks&) = delete;

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
  const vtkJZSnapshotLayout::Layout& Snapshot;
  Request Selection;
  std::vector<std::unique_ptr<Block>> Blocks;
};

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotBlocks.h
