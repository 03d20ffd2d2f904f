/**
 * @class   vtkJZParticleSnapshotReader
 * @brief   reads Gadget / AREPO / SWIFT HDF5, Gadget binary and TIPSY particle snapshots and group catalogues
 *
 * A vtkMultiBlockDataSet with one vtkPolyData block per selected particle
 * type (`PartType<n>`; `Group`, `Subhalo` or `Groups` in catalogues), every
 * selected dataset as a point array, the header as field data. Honours
 * piece requests: piece p of P reads a contiguous 1/P share of each type's
 * rows (vtkJZSnapshotShare), through MPI-IO when the pieces are the MPI
 * ranks and the snapshot is one file without virtual datasets
 * (JZ_SNAPSHOT_MPIIO=0 switches it off, "force" forces it). Errors are agreed
 * over the ranks. User documentation (formats, outputs, field data, series,
 * parallel reads, bad input): doc/filters/ParticleSnapshotReader.md,
 * generated from Plugin/ParticleSnapshotReader.xml.
 *
 * @sa vtkJZSnapshotLayout vtkJZSnapshotSeries vtkJZSnapshotBlocks vtkJZSnapshotShare
 * vtkJZPeriodicBox
 */
#ifndef vtkJZParticleSnapshotReader_h
#define vtkJZParticleSnapshotReader_h

#include "JZTreeReaderModule.h" // for export macro
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

class JZTREEREADER_EXPORT vtkJZParticleSnapshotReader : public vtkMultiBlockDataSetAlgorithm
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

  ///@{
  /**
   * Only the particles inside the box xmin xmax ymin ymax zmin zmax
   * (half-open: min <= x < max) are read, streamed in bounded chunks; all
   * zeros (the default) reads the whole snapshot. Stride then keeps every
   * n-th particle inside, in file order.
   */
  vtkSetVector6Macro(Region, double);
  vtkGetVector6Macro(Region, double);
  ///@}

  ///@{
  /**
   * The field-data BoxSize: 0 (default) takes the file's where it stores a
   * positive one; a positive value replaces it.
   */
  vtkSetMacro(BoxSize, double);
  vtkGetMacro(BoxSize, double);
  ///@}

protected:
  vtkJZParticleSnapshotReader();
  ~vtkJZParticleSnapshotReader() override;

  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Stride = 1;
  double Region[6] = { 0, 0, 0, 0, 0, 0 };
  double BoxSize = 0;

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
