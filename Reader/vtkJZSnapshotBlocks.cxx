#include "vtkJZSnapshotBlocks.h"

#include "vtkJZSnapshotHDF5.h"
#include "vtkJZSnapshotShare.h"

#include "vtkAlgorithm.h"
#include "vtkCellArray.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"
#include "vtkStringArray.h"
#include "vtkTypeInt32Array.h"
#include "vtkTypeInt64Array.h"

#include "jz/Backend.h" // jz::RunInfo

#include "jz/HugePages.h" // jz::adviseHugePages

#include <algorithm>
#include <cstdint>
#include <cstdlib> // posix_memalign
#include <functional>
#include <numeric>
#include <string>
#include <thread>

namespace
{
using vtkJZSnapshotHDF5::Handle;
using vtkJZSnapshotLayout::Field;
using vtkJZSnapshotLayout::Kind;
using vtkJZSnapshotLayout::Layout;
using vtkJZSnapshotLayout::PointSet;
using vtkJZSnapshotLayout::ValueType;

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

// Gives `array` (its components set) room for `values` values. With
// JZ_SNAPSHOT_HUGEPAGES=1, large arrays get 2 MiB-aligned memory advised to
// use transparent huge pages: one fault per 2 MiB instead of per 4 KiB, and
// a later read in the same process gets the mapped pages back. (On the
// development VM the first read is slower that way, so it is not the default.)
void Allocate(vtkDataArray* array, vtkIdType values)
{
  static const bool hugePages = std::getenv("JZ_SNAPSHOT_HUGEPAGES") &&
    std::string(std::getenv("JZ_SNAPSHOT_HUGEPAGES")) == "1";
  const std::size_t huge = std::size_t(2) << 20;
  const std::size_t bytes = static_cast<std::size_t>(values) * array->GetDataTypeSize();
  void* memory = nullptr;
  if (!hugePages || bytes < 4 * huge || posix_memalign(&memory, huge, bytes) != 0)
  {
    array->SetNumberOfValues(values);
    return;
  }
  jz::adviseHugePages(memory, bytes);
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
// Arrays of one vertex cell per point: 32-bit when the ids fit.
vtkSmartPointer<vtkDataArray> NewCellArray(vtkIdType values, vtkIdType points)
{
  vtkSmartPointer<vtkDataArray> array;
  if (points < VTK_INT_MAX)
  {
    array = vtkSmartPointer<vtkTypeInt32Array>::New();
  }
  else
  {
    array = vtkSmartPointer<vtkTypeInt64Array>::New();
  }
  Allocate(array, values);
  return array;
}

// 0, 1, 2, ... into an array of cell offsets or connectivity.
void FillIota(vtkDataArray* array)
{
  const vtkIdType n = array->GetNumberOfValues();
  if (auto* a32 = vtkTypeInt32Array::SafeDownCast(array))
  {
    std::iota(a32->GetPointer(0), a32->GetPointer(0) + n, vtkTypeInt32(0));
  }
  else if (auto* a64 = vtkTypeInt64Array::SafeDownCast(array))
  {
    std::iota(a64->GetPointer(0), a64->GetPointer(0) + n, vtkTypeInt64(0));
  }
}

// GlobalIds (vtkIdType) converted from the ParticleIDs array.
void ConvertIds(vtkDataArray* particleIds, vtkIdTypeArray* ids)
{
  const vtkIdType n = particleIds->GetNumberOfTuples();
  vtkIdType* out = ids->GetPointer(0);
  switch (particleIds->GetDataType())
  {
    vtkTemplateMacro({
      const auto* in = static_cast<const VTK_TT*>(particleIds->GetVoidPointer(0));
      std::transform(in, in + n, out, [](VTK_TT v) { return static_cast<vtkIdType>(v); });
    });
  }
}

//------------------------------------------------------------------------------
// Prepares output memory on a second thread while HDF5 reads into it: maps
// the pages of the arrays in the order they are read (MADV_POPULATE_WRITE:
// the kernel faults them in, nothing is written) and then runs the fills of
// the arrays that do not come from the file. The first touch of fresh
// memory costs about as much as the read from the page cache itself;
// overlapped, it mostly disappears. Joins when destroyed.
class MemoryPreparer
{
public:
  MemoryPreparer(std::vector<vtkDataArray*> readOrder, std::vector<std::function<void()>> fills)
    : Worker(
        [readOrder, fills]()
        {
          for (vtkDataArray* array : readOrder)
          {
            Populate(array);
          }
          for (const auto& fill : fills)
          {
            fill();
          }
        })
  {
  }
  ~MemoryPreparer() { this->Join(); }
  MemoryPreparer(const MemoryPreparer&) = delete;
  MemoryPreparer& operator=(const MemoryPreparer&) = delete;

  void Join()
  {
    if (this->Worker.joinable())
    {
      this->Worker.join();
    }
  }

private:
  static void Populate(vtkDataArray* array)
  {
#ifdef MADV_POPULATE_WRITE
    const std::uintptr_t page = 4096;
    const auto begin = reinterpret_cast<std::uintptr_t>(array->GetVoidPointer(0));
    const auto end = begin +
      static_cast<std::uintptr_t>(array->GetNumberOfValues()) *
        static_cast<std::uintptr_t>(array->GetDataTypeSize());
    const std::uintptr_t first = begin & ~(page - 1);
    if (end > first)
    {
      madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE); // advice only
    }
#else
    (void)array;
#endif
  }

  std::thread Worker;
};

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

}

//------------------------------------------------------------------------------
// One output block being filled: its share of rows and, per field read, the
// VTK array whose memory HDF5 writes into.
struct vtkJZSnapshotBlocks::Block
{
  const PointSet* Set = nullptr;
  vtkJZSnapshotShare::Share Share;
  vtkSmartPointer<vtkDataArray> Points;
  std::vector<std::pair<const Field*, vtkSmartPointer<vtkDataArray>>> Arrays;
  // Not from the file: one vertex per point, Masses from the MassTable,
  // GlobalIds from ParticleIDs (null when not made).
  vtkSmartPointer<vtkDataArray> Offsets, Connectivity;
  vtkSmartPointer<vtkDoubleArray> TableMasses;
  vtkSmartPointer<vtkIdTypeArray> GlobalIds;
  vtkDataArray* ParticleIds = nullptr;
};

//------------------------------------------------------------------------------
// Allocates the block of every selected point set: points in the stored
// precision and one array per selected dataset (in a snapshot the positions
// are the points only; in a catalogue also an array), sized for the share.
vtkJZSnapshotBlocks::vtkJZSnapshotBlocks(const Layout& layout, const Request& request)
  : Snapshot(layout)
  , Selection(request)
{
  for (const PointSet& set : layout.PointSets)
  {
    if (!request.TypeSelected(set.Name))
    {
      continue;
    }
    auto block = std::unique_ptr<Block>(new Block);
    block->Set = &set;
    block->Share = vtkJZSnapshotShare::ComputeShare(
      set.CountPerFile, request.Stride, request.Piece, request.NumberOfPieces);
    const vtkIdType n = static_cast<vtkIdType>(block->Share.NumberOfRows);
    const Field* positions = set.Find(set.Positions);
    const bool doublePoints = !positions || positions->Type.Integer || positions->Type.Bytes == 8;
    block->Points = NewArray(doublePoints ? VTK_DOUBLE : VTK_FLOAT, "Points", 3, n);
    for (const Field& field : set.Fields)
    {
      if ((layout.Type == Kind::Snapshot && field.Name == set.Positions) ||
        !request.ArraySelected(field.Name))
      {
        continue;
      }
      block->Arrays.emplace_back(
        &field, NewArray(VTKTypeOf(field.Type), field.Name, field.Components, n));
      if (field.Name == "ParticleIDs" && field.Components == 1)
      {
        block->ParticleIds = block->Arrays.back().second;
        block->GlobalIds = vtkSmartPointer<vtkIdTypeArray>::New();
        block->GlobalIds->SetName("GlobalIds");
        Allocate(block->GlobalIds, n);
      }
    }
    block->Offsets = NewCellArray(n + 1, n);
    block->Connectivity = NewCellArray(n, n);
    if (set.TableMass != 0 && !set.Find("Masses") && request.ArraySelected("Masses"))
    {
      block->TableMasses = vtkSmartPointer<vtkDoubleArray>::New();
      block->TableMasses->SetName("Masses");
      Allocate(block->TableMasses, n);
    }
    this->Blocks.push_back(std::move(block));
  }
}

//------------------------------------------------------------------------------
vtkJZSnapshotBlocks::~vtkJZSnapshotBlocks() = default;

//------------------------------------------------------------------------------
std::int64_t vtkJZSnapshotBlocks::GetNumberOfRows() const
{
  std::int64_t rows = 0;
  for (const auto& block : this->Blocks)
  {
    rows += block->Share.NumberOfRows;
  }
  return rows;
}

//------------------------------------------------------------------------------
std::string vtkJZSnapshotBlocks::Read(
  MPI_Comm* mpiComm, vtkAlgorithm* algorithm, bool& aborted, jz::RunInfo& info)
{
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  double filesOpened = 0;
  std::size_t totalReads = 0, reads = 0;
  for (const auto& block : this->Blocks)
  {
    totalReads += block->Share.Reads.size() * (block->Arrays.size() + 1);
  }
  const std::int64_t stride = this->Selection.Stride;
  std::vector<vtkDataArray*> readOrder, made;
  std::vector<std::function<void()>> fills;
  for (const auto& block : this->Blocks)
  {
    readOrder.push_back(block->Points);
    for (const auto& entry : block->Arrays)
    {
      readOrder.push_back(entry.second);
    }
    made.insert(made.end(), { block->Offsets, block->Connectivity, block->GlobalIds });
    fills.emplace_back(
      [&block]()
      {
        FillIota(block->Offsets);
        FillIota(block->Connectivity);
        if (vtkDoubleArray* masses = block->TableMasses)
        {
          std::fill(masses->GetPointer(0), masses->GetPointer(0) + masses->GetNumberOfValues(),
            block->Set->TableMass);
        }
      });
  }
  for (vtkDataArray* array : made)
  {
    if (array)
    {
      readOrder.push_back(array);
    }
  }
  MemoryPreparer preparer(readOrder, fills);
  try
  {
    Handle access = FileAccess(mpiComm);
    for (std::size_t file = 0; file < this->Snapshot.Files.size() && !aborted; ++file)
    {
      const std::string& name = this->Snapshot.Files[file];
      const bool needed = mpiComm ||
        std::any_of(this->Blocks.begin(), this->Blocks.end(),
          [&](const std::unique_ptr<Block>& b)
          {
            return std::any_of(b->Share.Reads.begin(), b->Share.Reads.end(),
              [&](const vtkJZSnapshotShare::FileRows& r) { return r.File == file; });
          });
      if (!needed)
      {
        continue;
      }
      Handle handle = vtkJZSnapshotHDF5::OpenFile(name, access.Get());
      ++filesOpened;
      for (const auto& block : this->Blocks)
      {
        for (const vtkJZSnapshotShare::FileRows& rows : block->Share.Reads)
        {
          if (rows.File != file || aborted)
          {
            continue;
          }
          const std::string group = block->Set->Name + "/";
          ReadField(handle.Get(), name, group + block->Set->Positions, rows, stride, block->Points);
          for (auto& entry : block->Arrays)
          {
            ReadField(handle.Get(), name, group + entry.first->Name, rows, stride, entry.second);
            algorithm->UpdateProgress(
              static_cast<double>(++reads) / std::max<std::size_t>(totalReads, 1));
            aborted = algorithm->GetAbortExecute() != 0;
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
  info.counters.emplace_back("rows", static_cast<double>(this->GetNumberOfRows()));
  return {};
}

//------------------------------------------------------------------------------
void vtkJZSnapshotBlocks::Finish(vtkMultiBlockDataSet* output)
{
  vtkSmartPointer<vtkFieldData> fieldData = MakeFieldData(this->Snapshot);
  output->SetNumberOfBlocks(static_cast<unsigned int>(this->Blocks.size()));
  for (std::size_t i = 0; i < this->Blocks.size(); ++i)
  {
    const Block& b = *this->Blocks[i];
    const PointSet& set = *b.Set;
    auto block = vtkSmartPointer<vtkPolyData>::New();
    auto points = vtkSmartPointer<vtkPoints>::New();
    points->SetData(b.Points);
    block->SetPoints(points);
    auto vertices = vtkSmartPointer<vtkCellArray>::New();
    vertices->SetData(b.Offsets, b.Connectivity);
    block->SetVerts(vertices);
    vtkPointData* pd = block->GetPointData();
    for (const auto& entry : b.Arrays)
    {
      pd->AddArray(entry.second);
    }
    if (b.TableMasses)
    {
      pd->AddArray(b.TableMasses);
    }
    if (b.GlobalIds)
    {
      ConvertIds(b.ParticleIds, b.GlobalIds);
      pd->SetGlobalIds(b.GlobalIds);
    }
    AddFieldData(fieldData, block);
    const auto index = static_cast<unsigned int>(i);
    output->SetBlock(index, block);
    output->GetMetaData(index)->Set(vtkCompositeDataSet::NAME(), set.Name.c_str());
  }
  AddFieldData(fieldData, output);
}
