#include "vtkJZParticleSnapshotReader.h"

#include "vtkJZCommunicator.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZSnapshotHDF5.h"
#include "vtkJZSnapshotLayout.h"
#include "vtkJZSnapshotShare.h"

#include "vtkCallbackCommand.h"
#include "vtkCellArray.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataArraySelection.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMPICommunicator.h"
#include "vtkMPIController.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTypeInt32Array.h"
#include "vtkTypeInt64Array.h"

#include "vtkMPI.h"

#include <sys/mman.h> // madvise

#include <algorithm>
#include <cmath>
#include <cstdlib> // posix_memalign, getenv
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZParticleSnapshotReader);

namespace
{
using vtkJZSnapshotHDF5::Handle;
using vtkJZSnapshotLayout::Field;
using vtkJZSnapshotLayout::Kind;
using vtkJZSnapshotLayout::Layout;
using vtkJZSnapshotLayout::PointSet;
using vtkJZSnapshotLayout::ValueType;

// One time step: the snapshot (any part of it) and its time.
struct Step
{
  std::string File;
  double Time = 0;
};

//------------------------------------------------------------------------------
// VTK array type and HDF5 memory type of a stored value type.
int VTKTypeOf(const ValueType& t)
{
  if (!t.Integer)
  {
    return t.Bytes == 4 ? VTK_FLOAT : VTK_DOUBLE;
  }
  switch (t.Bytes)
  {
    case 1:
      return t.Signed ? VTK_SIGNED_CHAR : VTK_UNSIGNED_CHAR;
    case 2:
      return t.Signed ? VTK_SHORT : VTK_UNSIGNED_SHORT;
    case 4:
      return t.Signed ? VTK_INT : VTK_UNSIGNED_INT;
    default:
      return t.Signed ? VTK_LONG_LONG : VTK_UNSIGNED_LONG_LONG;
  }
}

hid_t NativeTypeOf(int vtkType)
{
  switch (vtkType)
  {
    case VTK_FLOAT:
      return H5T_NATIVE_FLOAT;
    case VTK_DOUBLE:
      return H5T_NATIVE_DOUBLE;
    case VTK_SIGNED_CHAR:
      return H5T_NATIVE_SCHAR;
    case VTK_UNSIGNED_CHAR:
      return H5T_NATIVE_UCHAR;
    case VTK_SHORT:
      return H5T_NATIVE_SHORT;
    case VTK_UNSIGNED_SHORT:
      return H5T_NATIVE_USHORT;
    case VTK_INT:
      return H5T_NATIVE_INT;
    case VTK_UNSIGNED_INT:
      return H5T_NATIVE_UINT;
    case VTK_LONG_LONG:
      return H5T_NATIVE_LLONG;
    default:
      return H5T_NATIVE_ULLONG;
  }
}

//------------------------------------------------------------------------------
// Whether an entry of a selection is on; names the lists do not know yet (a
// type that appears later in a series) are read.
bool IsSelected(vtkDataArraySelection* selection, const std::string& name)
{
  return !selection->ArrayExists(name.c_str()) || selection->ArrayIsEnabled(name.c_str()) != 0;
}

// Replaces the entries of a selection by `names`, keeping the state of the
// names it already had (new ones are on).
void ResetSelection(vtkDataArraySelection* selection, const std::set<std::string>& names)
{
  std::map<std::string, bool> previous;
  for (int i = 0; i < selection->GetNumberOfArrays(); ++i)
  {
    previous[selection->GetArrayName(i)] = selection->GetArraySetting(i) != 0;
  }
  bool same = previous.size() == names.size();
  for (const std::string& name : names)
  {
    same = same && previous.count(name);
  }
  if (same)
  {
    return;
  }
  selection->RemoveAllArrays();
  for (const std::string& name : names)
  {
    const auto it = previous.find(name);
    selection->AddArray(name.c_str(), it == previous.end() ? true : it->second);
  }
}

// The point arrays a point set offers: its datasets (in a snapshot, not the
// positions, which are the points) and Masses from the MassTable.
std::vector<std::string> ArrayNames(const PointSet& set, Kind kind)
{
  std::vector<std::string> names;
  for (const Field& field : set.Fields)
  {
    if (kind == Kind::GroupCatalogue || field.Name != set.Positions)
    {
      names.push_back(field.Name);
    }
  }
  if (set.TableMass != 0 && !set.Find("Masses"))
  {
    names.emplace_back("Masses");
  }
  return names;
}

//------------------------------------------------------------------------------
// One output block being filled: its share of rows and, per field read, the
// VTK array whose memory HDF5 writes into.
struct BlockPlan
{
  const PointSet* Set = nullptr;
  vtkJZSnapshotShare::Share Share;
  vtkSmartPointer<vtkPolyData> Block;
  vtkSmartPointer<vtkDataArray> Points;
  std::vector<std::pair<const Field*, vtkSmartPointer<vtkDataArray>>> Arrays;
};

// Gives `array` (its components set) room for `values` values. Large arrays
// get 2 MiB-aligned memory advised to use transparent huge pages: reading a
// snapshot from the page cache is dominated by the first touch of fresh
// memory, which then faults once per 2 MiB instead of once per 4 KiB.
void Allocate(vtkDataArray* array, vtkIdType values)
{
  const std::size_t huge = std::size_t(2) << 20;
  const std::size_t bytes = static_cast<std::size_t>(values) * array->GetDataTypeSize();
  void* memory = nullptr;
  if (bytes < 4 * huge || posix_memalign(&memory, huge, bytes) != 0)
  {
    array->SetNumberOfValues(values);
    return;
  }
#ifdef MADV_HUGEPAGE
  madvise(memory, bytes, MADV_HUGEPAGE); // advice only: ignored where unsupported
#endif
  array->SetVoidArray(memory, values, 0, vtkAbstractArray::VTK_DATA_ARRAY_FREE);
}

vtkSmartPointer<vtkDataArray> NewArray(
  int vtkType, const std::string& name, int components, vtkIdType tuples)
{
  vtkSmartPointer<vtkDataArray> array;
  array.TakeReference(vtkDataArray::CreateDataArray(vtkType));
  array->SetName(name.c_str());
  array->SetNumberOfComponents(components);
  Allocate(array, tuples * components);
  return array;
}

// Allocates the block of one point set: points in the stored precision and
// one array per selected dataset, all sized for this piece's share.
BlockPlan PlanBlock(const PointSet& set, Kind kind, std::int64_t stride, int piece, int numPieces,
  vtkDataArraySelection* arrays)
{
  BlockPlan plan;
  plan.Set = &set;
  plan.Share = vtkJZSnapshotShare::ComputeShare(set.CountPerFile, stride, piece, numPieces);
  plan.Block = vtkSmartPointer<vtkPolyData>::New();
  const vtkIdType n = static_cast<vtkIdType>(plan.Share.NumberOfRows);
  const Field* positions = set.Find(set.Positions);
  const bool doublePoints = !positions || positions->Type.Integer || positions->Type.Bytes == 8;
  plan.Points = NewArray(doublePoints ? VTK_DOUBLE : VTK_FLOAT, "Points", 3, n);
  for (const Field& field : set.Fields)
  {
    if ((kind == Kind::Snapshot && field.Name == set.Positions) || !IsSelected(arrays, field.Name))
    {
      continue;
    }
    plan.Arrays.emplace_back(
      &field, NewArray(VTKTypeOf(field.Type), field.Name, field.Components, n));
  }
  return plan;
}

// Memory type for reading a dataset into an array of `vtkType`: the native
// type, or for an enumeration (h5py's booleans) the enumeration itself.
Handle MemoryType(hid_t dataset, int vtkType)
{
  Handle fileType(H5Dget_type(dataset), H5Tclose);
  if (fileType.Valid() && H5Tget_class(fileType.Get()) == H5T_ENUM)
  {
    return Handle(H5Tget_native_type(fileType.Get(), H5T_DIR_ASCEND), H5Tclose);
  }
  return Handle(H5Tcopy(NativeTypeOf(vtkType)), H5Tclose);
}

// Reads this piece's rows of one dataset in one part file into `array`.
void ReadField(hid_t file, const std::string& fileName, const std::string& path,
  const vtkJZSnapshotShare::FileRows& rows, std::int64_t stride, vtkDataArray* array)
{
  const std::string what = "the dataset " + path + " of '" + fileName + "'";
  Handle dataset = vtkJZSnapshotHDF5::OpenDataset(file, path, what);
  Handle memoryType = MemoryType(dataset.Get(), array->GetDataType());
  auto* target = static_cast<char*>(array->GetVoidPointer(0)) +
    rows.Offset * array->GetNumberOfComponents() * array->GetDataTypeSize();
  vtkJZSnapshotHDF5::ReadRows(dataset.Get(), static_cast<hsize_t>(rows.Start),
    static_cast<hsize_t>(rows.Count), static_cast<hsize_t>(stride), memoryType.Get(), target,
    H5P_DEFAULT, what);
}

//------------------------------------------------------------------------------
// The MPI communicator of the global controller when this is an MPI run of
// several processes, else null.
MPI_Comm* GlobalMPICommunicator()
{
  auto* controller =
    vtkMPIController::SafeDownCast(vtkMultiProcessController::GetGlobalController());
  if (!controller || controller->GetNumberOfProcesses() < 2)
  {
    return nullptr;
  }
  auto* communicator = vtkMPICommunicator::SafeDownCast(controller->GetCommunicator());
  return communicator && communicator->GetMPIComm() ? communicator->GetMPIComm()->GetHandle()
                                                    : nullptr;
}

// File access for reading: MPI-IO over `comm` when given (collective
// opens), else the default driver. A larger sieve buffer makes strided
// reads (Stride > 1) touch the disk in fewer, larger pieces.
Handle FileAccess(MPI_Comm* comm)
{
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_sieve_buf_size(fapl.Get(), 4 << 20);
  if (comm)
  {
    H5Pset_fapl_mpio(fapl.Get(), *comm, MPI_INFO_NULL);
  }
  return fapl;
}

//------------------------------------------------------------------------------
// Reads this piece's rows of every planned block, part file by part file
// (each file opened once; with MPI-IO every rank opens the one file, as the
// open is collective). Returns the first error, or "" (also when aborted).
std::string ReadPlans(vtkAlgorithm* self, const Layout& layout, std::vector<BlockPlan>& plans,
  std::int64_t stride, MPI_Comm* mpiComm, bool& aborted, jz::RunInfo& info)
{
  double filesOpened = 0;
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  std::size_t totalReads = 0, reads = 0;
  for (const BlockPlan& plan : plans)
  {
    totalReads += plan.Share.Reads.size() * (plan.Arrays.size() + 1);
  }
  try
  {
    Handle access = FileAccess(mpiComm);
    for (std::size_t file = 0; file < layout.Files.size() && !aborted; ++file)
    {
      const std::string& name = layout.Files[file];
      const bool needed = mpiComm ||
        std::any_of(plans.begin(), plans.end(),
          [&](const BlockPlan& p)
          {
            return std::any_of(p.Share.Reads.begin(), p.Share.Reads.end(),
              [&](const vtkJZSnapshotShare::FileRows& r) { return r.File == file; });
          });
      if (!needed)
      {
        continue;
      }
      Handle handle = vtkJZSnapshotHDF5::OpenFile(name, access.Get());
      ++filesOpened;
      for (BlockPlan& plan : plans)
      {
        for (const vtkJZSnapshotShare::FileRows& rows : plan.Share.Reads)
        {
          if (rows.File != file || aborted)
          {
            continue;
          }
          const std::string group = plan.Set->Name + "/";
          ReadField(handle.Get(), name, group + plan.Set->Positions, rows, stride, plan.Points);
          for (auto& entry : plan.Arrays)
          {
            ReadField(handle.Get(), name, group + entry.first->Name, rows, stride, entry.second);
            self->UpdateProgress(
              static_cast<double>(++reads) / std::max<std::size_t>(totalReads, 1));
            aborted = self->GetAbortExecute() != 0;
          }
          ++reads;
        }
      }
    }
  }
  catch (const vtkJZSnapshotHDF5::Error& e)
  {
    return e.what();
  }
  info.counters.emplace_back("files opened", filesOpened);
  info.counters.emplace_back("MPI-IO", mpiComm ? 1 : 0);
  return {};
}

//------------------------------------------------------------------------------
// One vertex cell per point, with 32-bit storage when the ids fit.
vtkSmartPointer<vtkCellArray> MakeVertices(vtkIdType n)
{
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  if (n < VTK_INT_MAX)
  {
    auto offsets = vtkSmartPointer<vtkTypeInt32Array>::New();
    auto connectivity = vtkSmartPointer<vtkTypeInt32Array>::New();
    Allocate(offsets, n + 1);
    Allocate(connectivity, n);
    std::iota(offsets->GetPointer(0), offsets->GetPointer(0) + n + 1, 0);
    std::iota(connectivity->GetPointer(0), connectivity->GetPointer(0) + n, 0);
    cells->SetData(offsets, connectivity);
  }
  else
  {
    auto offsets = vtkSmartPointer<vtkTypeInt64Array>::New();
    auto connectivity = vtkSmartPointer<vtkTypeInt64Array>::New();
    Allocate(offsets, n + 1);
    Allocate(connectivity, n);
    std::iota(offsets->GetPointer(0), offsets->GetPointer(0) + n + 1, vtkTypeInt64(0));
    std::iota(connectivity->GetPointer(0), connectivity->GetPointer(0) + n, vtkTypeInt64(0));
    cells->SetData(offsets, connectivity);
  }
  return cells;
}

// GlobalIds (vtkIdType) converted from the ParticleIDs array.
vtkSmartPointer<vtkIdTypeArray> MakeGlobalIds(vtkDataArray* particleIds)
{
  auto ids = vtkSmartPointer<vtkIdTypeArray>::New();
  ids->SetName("GlobalIds");
  const vtkIdType n = particleIds->GetNumberOfTuples();
  Allocate(ids, n);
  vtkIdType* out = ids->GetPointer(0);
  switch (particleIds->GetDataType())
  {
    vtkTemplateMacro({
      const auto* in = static_cast<const VTK_TT*>(particleIds->GetVoidPointer(0));
      std::transform(in, in + n, out, [](VTK_TT v) { return static_cast<vtkIdType>(v); });
    });
  }
  return ids;
}

// The header values as field-data arrays (one tuple each) and the format.
vtkSmartPointer<vtkFieldData> MakeFieldData(const Layout& layout)
{
  auto fieldData = vtkSmartPointer<vtkFieldData>::New();
  for (const auto& value : layout.Header)
  {
    auto array = vtkSmartPointer<vtkDoubleArray>::New();
    array->SetName(value.Name.c_str());
    array->SetNumberOfComponents(static_cast<int>(value.Values.size()));
    array->SetNumberOfTuples(1);
    std::copy(value.Values.begin(), value.Values.end(), array->GetPointer(0));
    fieldData->AddArray(array);
  }
  auto format = vtkSmartPointer<vtkStringArray>::New();
  format->SetName("SnapshotFormat");
  format->InsertNextValue(layout.Format);
  fieldData->AddArray(format);
  return fieldData;
}

void AddFieldData(vtkFieldData* source, vtkDataObject* target)
{
  for (int i = 0; i < source->GetNumberOfArrays(); ++i)
  {
    target->GetFieldData()->AddArray(source->GetAbstractArray(i));
  }
}

// Turns a filled plan into its block: points, vertices, arrays, Masses
// from the MassTable, GlobalIds.
void FinishBlock(BlockPlan& plan, vtkDataArraySelection* arrays, vtkFieldData* fieldData)
{
  vtkPolyData* block = plan.Block;
  const vtkIdType n = static_cast<vtkIdType>(plan.Share.NumberOfRows);
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetData(plan.Points);
  block->SetPoints(points);
  block->SetVerts(MakeVertices(n));
  vtkPointData* pd = block->GetPointData();
  for (auto& entry : plan.Arrays)
  {
    pd->AddArray(entry.second);
  }
  const PointSet& set = *plan.Set;
  if (set.TableMass != 0 && !set.Find("Masses") && IsSelected(arrays, "Masses"))
  {
    auto masses = vtkSmartPointer<vtkDoubleArray>::New();
    masses->SetName("Masses");
    Allocate(masses, n);
    std::fill(masses->GetPointer(0), masses->GetPointer(0) + n, set.TableMass);
    pd->AddArray(masses);
  }
  if (vtkDataArray* particleIds = pd->GetArray("ParticleIDs"))
  {
    if (particleIds->GetNumberOfComponents() == 1)
    {
      pd->SetGlobalIds(MakeGlobalIds(particleIds));
    }
  }
  AddFieldData(fieldData, block);
}
}

//------------------------------------------------------------------------------
struct vtkJZParticleSnapshotReader::vtkInternals
{
  std::vector<std::string> FileNames;
  std::vector<Step> Steps;
  bool TimesFromHeaders = false;
  // An error found while gathering information; reported (on every rank
  // together) by RequestData, so that no rank waits for another.
  std::string InformationError;
  bool UpdatingSelections = false;

  void BuildSteps();
  std::size_t StepFor(vtkInformation* outInfo) const;
};

//------------------------------------------------------------------------------
// One step per distinct snapshot (the parts of a multi-file set count once),
// ordered by time. When the times are missing or repeat, the steps keep the
// given order and are numbered 0, 1, ...
void vtkJZParticleSnapshotReader::vtkInternals::BuildSteps()
{
  this->Steps.clear();
  std::set<std::string> seen;
  bool allTimes = true;
  for (const std::string& name : this->FileNames)
  {
    double time = 0;
    bool hasTime = false;
    const std::string first = vtkJZSnapshotLayout::SeriesEntry(name, time, hasTime);
    allTimes = allTimes && hasTime;
    if (seen.insert(first).second)
    {
      this->Steps.push_back({ name, time });
    }
  }
  std::stable_sort(this->Steps.begin(), this->Steps.end(),
    [](const Step& a, const Step& b) { return a.Time < b.Time; });
  bool distinct = true;
  for (std::size_t i = 1; i < this->Steps.size(); ++i)
  {
    distinct = distinct && this->Steps[i].Time > this->Steps[i - 1].Time;
  }
  this->TimesFromHeaders = allTimes && distinct;
  if (!this->TimesFromHeaders)
  {
    std::vector<Step> given;
    for (const std::string& name : this->FileNames) // back to the given order
    {
      for (const Step& step : this->Steps)
      {
        if (step.File == name)
        {
          given.push_back({ name, static_cast<double>(given.size()) });
        }
      }
    }
    this->Steps = given;
  }
}

//------------------------------------------------------------------------------
// The step at the requested time: the last one not after it.
std::size_t vtkJZParticleSnapshotReader::vtkInternals::StepFor(vtkInformation* outInfo) const
{
  using SDDP = vtkStreamingDemandDrivenPipeline;
  if (this->Steps.empty() || !outInfo->Has(SDDP::UPDATE_TIME_STEP()))
  {
    return 0;
  }
  const double time = outInfo->Get(SDDP::UPDATE_TIME_STEP());
  std::size_t step = 0;
  for (std::size_t i = 0; i < this->Steps.size(); ++i)
  {
    const double t = this->Steps[i].Time;
    if (t <= time + 1e-12 * std::max(1.0, std::abs(t)))
    {
      step = i;
    }
  }
  return step;
}

//------------------------------------------------------------------------------
vtkJZParticleSnapshotReader::vtkJZParticleSnapshotReader()
  : Internals(new vtkInternals)
  , ParticleTypeSelection(vtkDataArraySelection::New())
  , PointArraySelection(vtkDataArraySelection::New())
  , SelectionObserver(vtkCallbackCommand::New())
{
  this->SetNumberOfInputPorts(0);
  this->SelectionObserver->SetCallback(&vtkJZParticleSnapshotReader::SelectionModified);
  this->SelectionObserver->SetClientData(this);
  this->ParticleTypeSelection->AddObserver(vtkCommand::ModifiedEvent, this->SelectionObserver);
  this->PointArraySelection->AddObserver(vtkCommand::ModifiedEvent, this->SelectionObserver);
}

//------------------------------------------------------------------------------
vtkJZParticleSnapshotReader::~vtkJZParticleSnapshotReader()
{
  this->ParticleTypeSelection->RemoveObserver(this->SelectionObserver);
  this->PointArraySelection->RemoveObserver(this->SelectionObserver);
  this->ParticleTypeSelection->Delete();
  this->PointArraySelection->Delete();
  this->SelectionObserver->Delete();
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::SelectionModified(vtkObject*, unsigned long, void* self, void*)
{
  auto* reader = static_cast<vtkJZParticleSnapshotReader*>(self);
  if (!reader->Internals->UpdatingSelections)
  {
    reader->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::SetFileName(const char* fileName)
{
  std::vector<std::string> names;
  if (fileName && *fileName)
  {
    names.emplace_back(fileName);
  }
  if (names != this->Internals->FileNames)
  {
    this->Internals->FileNames = names;
    this->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::AddFileName(const char* fileName)
{
  if (fileName && *fileName)
  {
    this->Internals->FileNames.emplace_back(fileName);
    this->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::RemoveAllFileNames()
{
  if (!this->Internals->FileNames.empty())
  {
    this->Internals->FileNames.clear();
    this->Modified();
  }
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::GetNumberOfFileNames()
{
  return static_cast<int>(this->Internals->FileNames.size());
}

//------------------------------------------------------------------------------
const char* vtkJZParticleSnapshotReader::GetFileName(int index)
{
  const auto& names = this->Internals->FileNames;
  return index >= 0 && index < static_cast<int>(names.size()) ? names[index].c_str() : nullptr;
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::CanReadFile(const char* fileName)
{
  return fileName && vtkJZSnapshotLayout::CanRead(fileName) ? 1 : 0;
}

//------------------------------------------------------------------------------
vtkDataArraySelection* vtkJZParticleSnapshotReader::GetParticleTypeSelection()
{
  return this->ParticleTypeSelection;
}

//------------------------------------------------------------------------------
vtkDataArraySelection* vtkJZParticleSnapshotReader::GetPointArraySelection()
{
  return this->PointArraySelection;
}

//------------------------------------------------------------------------------
// The time steps, and the types and datasets the selections offer (from the
// first part of every step).
int vtkJZParticleSnapshotReader::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  using SDDP = vtkStreamingDemandDrivenPipeline;
  vtkInternals& internals = *this->Internals;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  outInfo->Remove(SDDP::TIME_STEPS());
  outInfo->Remove(SDDP::TIME_RANGE());
  outInfo->Set(vtkAlgorithm::CAN_HANDLE_PIECE_REQUEST(), 1);
  internals.InformationError.clear();
  internals.Steps.clear();
  if (internals.FileNames.empty())
  {
    internals.InformationError = "No FileName is set.";
    return 1;
  }
  std::set<std::string> types, arrays;
  bool snapshots = false;
  try
  {
    internals.BuildSteps();
    for (const Step& step : internals.Steps)
    {
      Kind kind;
      for (const PointSet& set : vtkJZSnapshotLayout::ListPointSets(step.File, kind))
      {
        types.insert(set.Name);
        snapshots = snapshots || kind == Kind::Snapshot;
        for (const std::string& name : ArrayNames(set, kind))
        {
          arrays.insert(name);
        }
      }
    }
  }
  catch (const vtkJZSnapshotHDF5::Error& e)
  {
    internals.InformationError = e.what();
    internals.Steps.clear();
    return 1;
  }
  // ListPointSets does not read the MassTable: offer Masses anyway for
  // snapshots, where it may come from there.
  if (snapshots)
  {
    arrays.insert("Masses");
  }
  internals.UpdatingSelections = true;
  ResetSelection(this->ParticleTypeSelection, types);
  ResetSelection(this->PointArraySelection, arrays);
  internals.UpdatingSelections = false;

  if (internals.TimesFromHeaders)
  {
    std::vector<double> times;
    for (const Step& step : internals.Steps)
    {
      times.push_back(step.Time);
    }
    outInfo->Set(SDDP::TIME_STEPS(), times.data(), static_cast<int>(times.size()));
    const double range[2] = { times.front(), times.back() };
    outInfo->Set(SDDP::TIME_RANGE(), range, 2);
  }
  else if (internals.Steps.size() > 1)
  {
    vtkWarningMacro("The snapshots have no distinct Header/Time values; their time steps are "
                    "numbered 0, 1, ... in the order given.");
    std::vector<double> times;
    for (const Step& step : internals.Steps)
    {
      times.push_back(step.Time);
    }
    outInfo->Set(SDDP::TIME_STEPS(), times.data(), static_cast<int>(times.size()));
    const double range[2] = { times.front(), times.back() };
    outInfo->Set(SDDP::TIME_RANGE(), range, 2);
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::RequestData(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  using SDDP = vtkStreamingDemandDrivenPipeline;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkMultiBlockDataSet* output = vtkMultiBlockDataSet::GetData(outInfo);
  if (!output)
  {
    vtkErrorMacro("No output data object.");
    return 0;
  }
  output->Initialize();
  vtkInternals& internals = *this->Internals;
  const int piece =
    outInfo->Has(SDDP::UPDATE_PIECE_NUMBER()) ? outInfo->Get(SDDP::UPDATE_PIECE_NUMBER()) : 0;
  const int numPieces = outInfo->Has(SDDP::UPDATE_NUMBER_OF_PIECES())
    ? outInfo->Get(SDDP::UPDATE_NUMBER_OF_PIECES())
    : 1;

  // Every rank takes part in each agreement below, so that an error on one
  // fails all of them together and none waits for the others.
  std::unique_ptr<jz::Communicator> comm = vtkJZKernelAdapter::MakeCommunicator();
  std::string error = internals.InformationError;
  Layout layout;
  std::size_t step = 0;
  if (error.empty())
  {
    try
    {
      step = internals.StepFor(outInfo);
      layout = vtkJZSnapshotLayout::Describe(internals.Steps[step].File);
    }
    catch (const vtkJZSnapshotHDF5::Error& e)
    {
      error = e.what();
    }
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  if (comm->rank() == 0)
  {
    for (const std::string& warning : layout.Warnings)
    {
      vtkWarningMacro(<< warning);
    }
  }

  std::vector<BlockPlan> plans;
  for (const PointSet& set : layout.PointSets)
  {
    if (IsSelected(this->ParticleTypeSelection, set.Name))
    {
      plans.push_back(
        PlanBlock(set, layout.Type, this->Stride, piece, numPieces, this->PointArraySelection));
    }
  }

  // Parallel HDF5 when the pieces are the ranks and there is one file that
  // it can read (no virtual datasets); should it fail all the same, the
  // ranks read again on their own.
  MPI_Comm* mpiComm = GlobalMPICommunicator();
  const std::string mpiio =
    std::getenv("JZ_SNAPSHOT_MPIIO") ? std::getenv("JZ_SNAPSHOT_MPIIO") : "";
  const bool useMPIIO = vtkJZKernelAdapter::AllRanks(*comm,
    mpiComm && layout.Files.size() == 1 && (!layout.HasVirtualDatasets() || mpiio == "force") &&
      numPieces == comm->size() && piece == comm->rank() && mpiio != "0");
  bool aborted = false;
  jz::RunInfo info;
  error = ReadPlans(this, layout, plans, this->Stride, useMPIIO ? mpiComm : nullptr, aborted, info);
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (useMPIIO && !error.empty())
  {
    if (comm->rank() == 0)
    {
      const std::string why = error;
      vtkWarningMacro("Parallel HDF5 (MPI-IO) could not read the snapshot; reading it "
                      "independently. ("
        << why << ")");
    }
    info = jz::RunInfo();
    error = ReadPlans(this, layout, plans, this->Stride, nullptr, aborted, info);
    error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  }
  aborted = !vtkJZKernelAdapter::AllRanks(*comm, !aborted);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  if (aborted)
  {
    vtkWarningMacro("Reading was aborted; the output is empty.");
    return 1;
  }

  vtkSmartPointer<vtkFieldData> fieldData = MakeFieldData(layout);
  output->SetNumberOfBlocks(static_cast<unsigned int>(plans.size()));
  for (std::size_t i = 0; i < plans.size(); ++i)
  {
    FinishBlock(plans[i], this->PointArraySelection, fieldData);
    const auto index = static_cast<unsigned int>(i);
    output->SetBlock(index, plans[i].Block);
    output->GetMetaData(index)->Set(vtkCompositeDataSet::NAME(), plans[i].Set->Name.c_str());
  }
  AddFieldData(fieldData, output);
  double rows = 0;
  for (const BlockPlan& plan : plans)
  {
    rows += static_cast<double>(plan.Share.NumberOfRows);
  }
  info.counters.emplace_back("rows", rows);
  vtkJZKernelAdapter::ReportRunInfo("ParticleSnapshotReader", info, *comm);
  if (internals.Steps.size() > 1 || internals.TimesFromHeaders)
  {
    output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), internals.Steps[step].Time);
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FileNames:";
  for (const std::string& name : this->Internals->FileNames)
  {
    os << " " << name;
  }
  os << "\n" << indent << "Stride: " << this->Stride << "\n";
  os << indent << "ParticleTypeSelection:\n";
  this->ParticleTypeSelection->PrintSelf(os, indent.GetNextIndent());
  os << indent << "PointArraySelection:\n";
  this->PointArraySelection->PrintSelf(os, indent.GetNextIndent());
}
