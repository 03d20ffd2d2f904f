/**
 * @class   vtkJZParticleSnapshotReader
 * @brief   reads Gadget / AREPO / SWIFT HDF5 particle snapshots and group catalogues
 *
 * Opens Gadget-2/3/4, AREPO and SWIFT HDF5 snapshots, recognised by content
 * (a `Header` group and `PartType<n>` groups; see vtkJZSnapshotLayout), and
 * the group catalogues of Gadget-4 / SUBFIND (`fof_tab`, `fof_subhalo_tab`)
 * and SWIFT's FOF. A multi-file snapshot (`name.0.hdf5` ... from the
 * header's `NumFilesPerSnapshot`) is read as one, whichever part is named.
 * Several file names (a numbered series, as ParaView's file dialog groups
 * them) become time steps, at the times of the headers' `Time`; the parts of
 * one multi-file snapshot among them count once.
 *
 * Output: a vtkMultiBlockDataSet with one vtkPolyData block per selected
 * particle type (block name `PartType<n>`; in catalogues `Group`, `Subhalo`
 * or `Groups`): points from `Coordinates` (`GroupPos`, ...) in their stored
 * precision, one vertex cell per point, and every selected dataset as a
 * point array of the same name and type (integer types kept, an N x k
 * dataset gives k components). A type without a `Masses` dataset gets
 * `Masses` (double) from the header's `MassTable` when its entry is
 * non-zero; `ParticleIDs` also give the `GlobalIds` attribute
 * (vtkIdTypeArray). Field data, on the multiblock and on every block:
 * `BoxSize` (1 or 3 values, one tuple), `Time`, `Redshift`, and where present
 * `HubbleParam`, `Omega0`, `OmegaLambda`, the unit attributes
 * (`UnitLength_in_cm`, `UnitMass_in_g`, `UnitVelocity_in_cm_per_s`), SWIFT's
 * `Units` and `Cosmology` attributes under their own names, and the string
 * `SnapshotFormat`.
 *
 * Parallel runs: the reader honours piece requests. Piece p of P reads a
 * contiguous 1/P share of each type's rows (vtkJZSnapshotShare) with HDF5
 * hyperslabs, so the pieces in order equal a serial read, for any P. When
 * the pieces are the MPI ranks and the snapshot is one file, the file is
 * opened through MPI-IO (parallel HDF5, independent reads) unless it holds
 * virtual datasets, which parallel HDF5 cannot read; otherwise, and should
 * MPI-IO fail, each rank opens the parts it needs on its own. The
 * environment variable JZ_SNAPSHOT_MPIIO=0 switches MPI-IO off; "force" uses
 * it on virtual datasets too (to test the fallback).
 *
 * Errors (a file that is not such a snapshot, missing or truncated files, a
 * missing `Coordinates`, header counts that do not match the datasets, an
 * unreadable part of a multi-file set): vtkErrorMacro naming the file and
 * the dataset, and an empty output, on every rank.
 *
 * @sa vtkJZSnapshotLayout vtkJZSnapshotSeries vtkJZSnapshotBlocks vtkJZSnapshotShare
 * vtkJZPeriodicBox
 */
#ifndef vtkJZParticleSnapshotReader_h
#define vtkJZParticleSnapshotReader_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkMultiBlockDataSetAlgorithm.h"

#include <memory> // for std::unique_ptr
#include <string> // for ReadBlocks

class vtkCallbackCommand;
class vtkDataArraySelection;
class vtkJZSnapshotBlocks;
namespace jz
{
class Communicator;
}
namespace vtkJZSnapshotLayout
{
struct Layout;
}

class JZTREEFILTERS_EXPORT vtkJZParticleSnapshotReader : public vtkMultiBlockDataSetAlgorithm
{
public:
  static vtkJZParticleSnapshotReader* New();
  vtkTypeMacro(vtkJZParticleSnapshotReader, vtkMultiBlockDataSetAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /**
   * The file(s) to read. One name: one snapshot (any part of a multi-file
   * set). Several: a time series, one step per snapshot.
   */
  void SetFileName(VTK_FILEPATH const char* fileName);
  void AddFileName(VTK_FILEPATH const char* fileName);
  void RemoveAllFileNames();
  int GetNumberOfFileNames();
  VTK_FILEPATH const char* GetFileName(int index);
  ///@}

  /**
   * Whether the file is a snapshot or group catalogue this reader reads,
   * judged by its content (1) or not (0). ParaView's reader factory asks
   * this, so other HDF5 files go to other readers.
   */
  int CanReadFile(VTK_FILEPATH const char* fileName);

  ///@{
  /**
   * Which particle types (PartType<n>, or the catalogue's point sets) and
   * which datasets (point arrays) to read; all by default.
   */
  vtkDataArraySelection* GetParticleTypeSelection();
  vtkDataArraySelection* GetPointArraySelection();
  ///@}

  ///@{
  /**
   * Keep every Stride-th particle of each type (default 1: all), counted
   * over the whole snapshot, so the result does not depend on the pieces.
   */
  vtkSetMacro(Stride, int);
  vtkGetMacro(Stride, int);
  ///@}

protected:
  vtkJZParticleSnapshotReader();
  ~vtkJZParticleSnapshotReader() override;

  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Stride = 1;

private:
  vtkJZParticleSnapshotReader(const vtkJZParticleSnapshotReader&) = delete;
  void operator=(const vtkJZParticleSnapshotReader&) = delete;

  static void SelectionModified(vtkObject*, unsigned long, void* self, void*);
  void UpdateSelections();
#ifndef __VTK_WRAP__
  std::string ReadBlocks(jz::Communicator& comm, const vtkJZSnapshotLayout::Layout& layout,
    vtkJZSnapshotBlocks& blocks, int piece, int numPieces, bool& aborted);
#endif

  struct vtkInternals;
  std::unique_ptr<vtkInternals> Internals;
  vtkDataArraySelection* ParticleTypeSelection;
  vtkDataArraySelection* PointArraySelection;
  vtkCallbackCommand* SelectionObserver;
};

#endif
