#include "vtkJZSnapshotBlocks.h"

#include "vtkJZSnapshotCells.h"
#include "vtkJZSnapshotHDF5.h"
#include "vtkJZSnapshotRawFile.h"
#include "vtkJZSnapshotRows.h"
#include "vtkJZSnapshotShare.h"
#include "vtkJZSnapshotSharedMemory.h"

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
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib> // posix_memalign, realloc
#include <cstring>
#include <functional>
#include <limits>
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

// begin, begin + 1, ..., end - 1 into values [begin, end) of an array of
// cell offsets or connectivity.
void FillIota(vtkDataArray* array, vtkIdType begin, vtkIdType end)
{
  if (auto* a32 = vtkTypeInt32Array::SafeDownCast(array))
  {
    std::iota(a32->GetPointer(begin), a32->GetPointer(0) + end, static_cast<vtkTypeInt32>(begin));
  }
  else if (auto* a64 = vtkTypeInt64Array::SafeDownCast(array))
  {
    std::iota(a64->GetPointer(begin), a64->GetPointer(0) + end, static_cast<vtkTypeInt64>(begin));
  }
}

// Whether values of `vtkType` are GlobalIds (vtkIdType) bit for bit.
bool SameBitsAsIds(int vtkType)
{
  switch (vtkType)
  {
    case VTK_LONG_LONG:
    case VTK_UNSIGNED_LONG_LONG:
    case VTK_LONG:
    case VTK_UNSIGNED_LONG:
    case VTK_ID_TYPE:
      return vtkDataArray::GetDataTypeSize(vtkType) == sizeof(vtkIdType);
    default:
      return false;
  }
}

// GlobalIds (vtkIdType) [begin, end) converted from the ParticleIDs array.
void ConvertIds(vtkDataArray* particleIds, vtkIdTypeArray* ids, vtkIdType begin, vtkIdType end)
{
  vtkIdType* out = ids->GetPointer(begin);
  switch (particleIds->GetDataType())
  {
    vtkTemplateMacro({
      const auto* in = static_cast<const VTK_TT*>(particleIds->GetVoidPointer(0));
      std::transform(in + begin, in + end, out, [](VTK_TT v) { return static_cast<vtkIdType>(v); });
    });
  }
}

//------------------------------------------------------------------------------
// An output array of unknown final size (a Region's rows): grows by
// doubling with realloc (large blocks are remapped, not copied) and is
// handed to VTK at its exact size.
class GrowingArray
{
public:
  GrowingArray() = default;
  GrowingArray(const GrowingArray&) = delete;
  GrowingArray& operator=(const GrowingArray&) = delete;
  ~GrowingArray() { std::free(this->Data); }

  // Appends rows `keep` of `rows` (each `rowBytes` bytes).
  void Append(const char* rows, const std::vector<std::int32_t>& keep, std::size_t rowBytes)
  {
    const std::size_t needed = this->Bytes + keep.size() * rowBytes;
    if (needed > this->Capacity)
    {
      const std::size_t capacity = std::max(needed, 2 * this->Capacity);
      void* grown = std::realloc(this->Data, capacity);
      if (!grown)
      {
        throw vtkJZSnapshotHDF5::Error("Out of memory for the particles inside the Region.");
      }
      this->Data = static_cast<char*>(grown);
      this->Capacity = capacity;
    }
    for (const std::int32_t row : keep)
    {
      std::memcpy(this->Data + this->Bytes, rows + row * rowBytes, rowBytes);
      this->Bytes += rowBytes;
    }
  }

  // Gives the memory to `array` (its type and components set).
  void MoveInto(vtkDataArray* array)
  {
    const vtkIdType values = static_cast<vtkIdType>(this->Bytes / array->GetDataTypeSize());
    if (values == 0)
    {
      array->SetNumberOfTuples(0);
      return;
    }
    void* exact = std::realloc(this->Data, this->Bytes);
    array->SetVoidArray(exact ? exact : this->Data, values, 0, vtkAbstractArray::VTK_DATA_ARRAY_FREE);
    this->Data = nullptr;
    this->Bytes = this->Capacity = 0;
  }

private:
  char* Data = nullptr;
  std::size_t Bytes = 0, Capacity = 0;
};

// Whether a position is inside the half-open box [min, max) of `region`.
template <class T>
bool Inside(const T* p, const double* region)
{
  return region[0] <= p[0] && p[0] < region[1] && region[2] <= p[1] && p[1] < region[3] &&
    region[4] <= p[2] && p[2] < region[5];
}

//------------------------------------------------------------------------------
// Prepares output memory while HDF5 reads into it. The first touch of fresh
// memory costs about as much as the read from the page cache itself, and
// the arrays that do not come from the file are about as large again, so a
// second thread first fills those, then maps the pages of the arrays read
// (MADV_POPULATE_WRITE: the kernel faults them in, nothing is written) from
// the last one backwards, to meet the reading thread rather than race it
// over the same pages. The work is a list of slices of bounded size: the
// reading thread, once done, takes the fills left (Finish) instead of
// waiting for them. Joins when destroyed.
class MemoryPreparer
{
public:
  using Task = std::function<void()>;
  static constexpr vtkIdType SliceBytes = vtkIdType(8) << 20;

  // The tasks of `fills`, then populating `readOrder` backwards in slices.
  MemoryPreparer(const std::vector<vtkDataArray*>& readOrder, std::vector<Task> fills)
    : Tasks(std::move(fills))
  {
    for (auto array = readOrder.rbegin(); array != readOrder.rend(); ++array)
    {
      std::vector<Task> slices;
      vtkDataArray* a = *array;
      const std::atomic<bool>* read = &this->Read;
      ForSlices(a, 0,
        [a, read](vtkIdType begin, vtkIdType end)
        {
          if (!*read)
          {
            Populate(a, begin, end);
          }
        },
        slices);
      this->Tasks.insert(this->Tasks.end(), std::make_move_iterator(slices.rbegin()),
        std::make_move_iterator(slices.rend()));
    }
    this->Worker = std::thread([this]() { this->Work(); });
  }
  ~MemoryPreparer() { this->Finish(); }
  MemoryPreparer(const MemoryPreparer&) = delete;
  MemoryPreparer& operator=(const MemoryPreparer&) = delete;

  // After reading: runs the fills no thread has taken yet (the pages read
  // are mapped by now), then waits for the worker.
  void Finish()
  {
    this->Read = true;
    this->Work();
    if (this->Worker.joinable())
    {
      this->Worker.join();
    }
  }

  // Calls `slice(begin, end)` over the values of `array` from `first` on,
  // slices of about SliceBytes.
  template <class Slice>
  static void ForSlices(vtkDataArray* array, vtkIdType first, Slice&& slice, std::vector<Task>& out)
  {
    const vtkIdType n = array->GetNumberOfValues();
    const vtkIdType step = std::max<vtkIdType>(1, SliceBytes / array->GetDataTypeSize());
    for (vtkIdType begin = first; begin < n; begin += step)
    {
      const vtkIdType end = std::min(n, begin + step);
      out.emplace_back([slice, begin, end]() { slice(begin, end); });
    }
  }

  // Maps the pages of values [begin, end) of `array`.
  static void Populate(vtkDataArray* array, vtkIdType begin, vtkIdType end)
  {
    const auto size = static_cast<std::size_t>(array->GetDataTypeSize());
    vtkJZSnapshotRawFile::PopulatePages(static_cast<char*>(array->GetVoidPointer(0)) +
        static_cast<std::size_t>(begin) * size,
      static_cast<std::size_t>(end - begin) * size);
  }

private:
  void Work()
  {
    for (std::size_t i = this->Next++; i < this->Tasks.size(); i = this->Next++)
    {
      this->Tasks[i]();
    }
  }

  std::vector<Task> Tasks;
  std::atomic<std::size_t> Next{ 0 };
  std::atomic<bool> Read{ false };
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
// VTK array whose memory the reads write into (with a Region: a growing
// buffer, moved into the array when reading ends).
struct vtkJZSnapshotBlocks::Block
{
  const PointSet* Set = nullptr;
  const Field* Positions = nullptr;
  std::vector<vtkJZSnapshotShare::Range> Candidates; // with a Region
  vtkJZSnapshotShare::Share Share;
  std::int64_t RowsBefore = 0; // with a Region: its rows in the pieces before
  std::int64_t Rows = 0;       // rows of this piece
  vtkSmartPointer<vtkDataArray> Points;
  std::vector<std::pair<const Field*, vtkSmartPointer<vtkDataArray>>> Arrays;
  std::vector<std::unique_ptr<GrowingArray>> Growing; // Points, then Arrays
  // Not from the file: one vertex per point, Masses from the MassTable,
  // GlobalIds from ParticleIDs (null when not made). Where they can, they
  // take no fresh memory (vtkJZSnapshotSharedMemory): the connectivity is
  // the start of the offsets, 64-bit GlobalIds are the ParticleIDs' memory,
  // table masses one mapped constant; the others are filled.
  vtkSmartPointer<vtkDataArray> Offsets, Connectivity;
  vtkSmartPointer<vtkDoubleArray> TableMasses;
  vtkSmartPointer<vtkIdTypeArray> GlobalIds;
  vtkDataArray* ParticleIds = nullptr;
  bool IdsOnly = false; // ParticleIds is not an output array of its own
  bool ConnectivityFilled = false, MassesFilled = false, IdsConverted = false;
  // When GlobalIds are converted while reading: the rows whose ParticleIDs
  // are read (the ids are read first; the preparing thread converts behind).
  bool IdsConvertedWhileReading = false;
  std::atomic<std::int64_t> IdsRowsRead{ 0 };

  // Allocates the arrays that are not read, for `Rows` rows.
  void AllocateMade(bool wantTableMasses)
  {
    const vtkIdType n = static_cast<vtkIdType>(this->Rows);
    if (this->IdsOnly && vtkIdTypeArray::SafeDownCast(this->ParticleIds))
    {
      this->GlobalIds = vtkIdTypeArray::SafeDownCast(this->ParticleIds);
    }
    else if (this->ParticleIds)
    {
      this->GlobalIds = vtkSmartPointer<vtkIdTypeArray>::New();
      this->GlobalIds->SetName("GlobalIds");
      this->IdsConverted = !(SameBitsAsIds(this->ParticleIds->GetDataType()) &&
        vtkJZSnapshotSharedMemory::ShareMemory(this->ParticleIds, this->GlobalIds, n));
      if (this->IdsConverted)
      {
        Allocate(this->GlobalIds, n);
      }
    }
    this->Offsets = NewCellArray(n + 1, n);
    this->Connectivity = NewCellArray(0, n);
    this->ConnectivityFilled =
      !vtkJZSnapshotSharedMemory::ShareMemory(this->Offsets, this->Connectivity, n);
    if (this->ConnectivityFilled)
    {
      Allocate(this->Connectivity, n);
    }
    if (wantTableMasses)
    {
      this->TableMasses = vtkSmartPointer<vtkDoubleArray>::New();
      this->TableMasses->SetName("Masses");
      const double mass = this->Set->TableMass;
      this->MassesFilled = !vtkJZSnapshotSharedMemory::MapConstant(this->TableMasses, n, &mass);
      if (this->MassesFilled)
      {
        Allocate(this->TableMasses, n);
      }
    }
  }

  // The fills of the arrays not read, in slices, each mapping its pages
  // first (faster than faulting them one by one).
  void FillSlices(std::vector<MemoryPreparer::Task>& out) const
  {
    for (vtkDataArray* cells : { static_cast<vtkDataArray*>(this->Offsets),
           static_cast<vtkDataArray*>(this->ConnectivityFilled ? this->Connectivity : nullptr) })
    {
      if (!cells)
      {
        continue;
      }
      MemoryPreparer::ForSlices(cells, 0,
        [cells](vtkIdType begin, vtkIdType end)
        {
          MemoryPreparer::Populate(cells, begin, end);
          FillIota(cells, begin, end);
        },
        out);
    }
    if (vtkDoubleArray* masses = this->MassesFilled ? this->TableMasses : nullptr)
    {
      const double mass = this->Set->TableMass;
      MemoryPreparer::ForSlices(masses, 0,
        [masses, mass](vtkIdType begin, vtkIdType end)
        {
          MemoryPreparer::Populate(masses, begin, end);
          std::fill(masses->GetPointer(begin), masses->GetPointer(0) + end, mass);
        },
        out);
    }
  }

  void FillMade() const
  {
    std::vector<MemoryPreparer::Task> fills;
    this->FillSlices(fills);
    for (const auto& fill : fills)
    {
      fill();
    }
  }
};

//------------------------------------------------------------------------------
// Allocates the block of every selected point set: points in the stored
// precision and one array per selected dataset (in a snapshot the positions
// are the points only; in a catalogue also an array), sized for the share
// (with a Region: empty, to grow while reading).
vtkJZSnapshotBlocks::vtkJZSnapshotBlocks(const Layout& layout, const Request& request)
  : Snapshot(layout)
  , Selection(request)
{
  const bool region = request.HasRegion;
  for (const PointSet& set : layout.PointSets)
  {
    if (!request.TypeSelected(set.Name))
    {
      continue;
    }
    auto block = std::unique_ptr<Block>(new Block);
    block->Set = &set;
    block->Positions = set.Find(set.Positions);
    if (region)
    {
      block->Candidates = vtkJZSnapshotCells::CandidateRows(layout, set, request.Region);
      block->Share = vtkJZSnapshotShare::ComputeShare(
        block->Candidates, 1, request.Piece, request.NumberOfPieces);
    }
    else
    {
      block->Share = vtkJZSnapshotShare::ComputeShare(vtkJZSnapshotShare::WholeFiles(set.CountPerFile),
        request.Stride, request.Piece, request.NumberOfPieces);
      block->Rows = block->Share.NumberOfRows;
    }
    const vtkIdType n = region ? 0 : static_cast<vtkIdType>(block->Rows);
    const Field* positions = block->Positions;
    const bool doublePoints = !positions || positions->Type.Integer || positions->Type.Bytes == 8;
    block->Points = NewArray(doublePoints ? VTK_DOUBLE : VTK_FLOAT, "Points", 3, n);
    for (const Field& field : set.Fields)
    {
      if ((layout.Type == Kind::Snapshot && field.Name == set.Positions) ||
        (!request.ArraySelected(field.Name) && !field.GlobalIdsOnly))
      {
        continue;
      }
      // Ids that are only the GlobalIds and already 64-bit signed are read
      // straight into the vtkIdTypeArray.
      const bool idsInPlace = field.GlobalIdsOnly && field.Type.Integer && field.Type.Signed &&
        field.Type.Bytes == 8 && field.Components == 1;
      block->Arrays.emplace_back(&field,
        NewArray(idsInPlace ? VTK_ID_TYPE : VTKTypeOf(field.Type), field.Name, field.Components, n));
      if ((field.Name == "ParticleIDs" || field.GlobalIdsOnly) && field.Components == 1)
      {
        block->ParticleIds = block->Arrays.back().second;
        block->IdsOnly = field.GlobalIdsOnly;
      }
    }
    if (!region)
    {
      block->AllocateMade(this->WantTableMasses(set));
    }
    this->Blocks.push_back(std::move(block));
  }
}

//------------------------------------------------------------------------------
vtkJZSnapshotBlocks::~vtkJZSnapshotBlocks() = default;

//------------------------------------------------------------------------------
bool vtkJZSnapshotBlocks::WantTableMasses(const PointSet& set) const
{
  return set.TableMass != 0 && !set.Find("Masses") && this->Selection.ArraySelected("Masses");
}

//------------------------------------------------------------------------------
std::int64_t vtkJZSnapshotBlocks::GetNumberOfRows() const
{
  std::int64_t rows = 0;
  for (const auto& block : this->Blocks)
  {
    rows += block->Rows;
  }
  return rows;
}

//------------------------------------------------------------------------------
bool vtkJZSnapshotBlocks::NeedsRowsBefore() const
{
  return this->Selection.HasRegion && this->Selection.Stride > 1 &&
    this->Selection.NumberOfPieces > 1;
}

//------------------------------------------------------------------------------
std::string vtkJZSnapshotBlocks::CountInRegion(bool before, std::vector<std::int64_t>& counts)
{
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  counts.assign(this->Blocks.size(), 0);
  try
  {
    vtkJZSnapshotRows rows(this->Snapshot, nullptr);
    for (std::size_t i = 0; i < this->Blocks.size(); ++i)
    {
      Block& block = *this->Blocks[i];
      vtkJZSnapshotShare::Share share = block.Share;
      if (before) // the rows of the pieces before this one
      {
        std::int64_t begin = 0;
        for (int p = 0; p < this->Selection.Piece; ++p)
        {
          begin += vtkJZSnapshotShare::ComputeShare(
            block.Candidates, 1, p, this->Selection.NumberOfPieces)
                     .NumberOfRows;
        }
        share = vtkJZSnapshotShare::Slice(block.Candidates, 0, begin);
      }
      bool aborted = false;
      counts[i] = this->ScanRegion(block, rows, share, false, nullptr, aborted);
    }
  }
  catch (const vtkJZSnapshotHDF5::Error& e)
  {
    return e.what();
  }
  return {};
}

//------------------------------------------------------------------------------
void vtkJZSnapshotBlocks::SetRowsBefore(const std::vector<std::int64_t>& counts)
{
  for (std::size_t i = 0; i < this->Blocks.size() && i < counts.size(); ++i)
  {
    this->Blocks[i]->RowsBefore = counts[i];
  }
}

//------------------------------------------------------------------------------
void vtkJZSnapshotBlocks::Progress(vtkAlgorithm* algorithm, std::int64_t rows, bool& aborted)
{
  this->ProgressRows += rows;
  if (algorithm)
  {
    algorithm->UpdateProgress(static_cast<double>(this->ProgressRows) /
      static_cast<double>(std::max<std::int64_t>(this->ProgressTotal, 1)));
    aborted = aborted || algorithm->GetAbortExecute() != 0;
  }
}

//------------------------------------------------------------------------------
// Reads the share's rows straight into the output arrays: HDF5 one
// hyperslab per range and field; raw files in chunks, every field of a
// chunk in turn, so that interleaved records (TIPSY) are read once.
void vtkJZSnapshotBlocks::ReadDirect(
  Block& block, vtkJZSnapshotRows& rows, vtkAlgorithm* algorithm, bool& aborted)
{
  const std::int64_t stride = this->Selection.Stride;
  const bool raw = this->Snapshot.Store == vtkJZSnapshotLayout::Storage::Raw;
  std::int64_t recordBytes = 1;
  for (const Field& field : block.Set->Fields)
  {
    recordBytes = std::max(recordBytes, field.Raw.RowBytes);
  }
  const std::int64_t chunk = raw
    ? std::max<std::int64_t>(1, vtkJZSnapshotRows::BufferBytes / (stride * recordBytes))
    : std::numeric_limits<std::int64_t>::max();
  for (const vtkJZSnapshotShare::FileRows& read : block.Share.Reads)
  {
    rows.Open(read.File);
    for (std::int64_t i = 0; i < read.Count && !aborted; i += chunk)
    {
      const std::int64_t k = std::min(chunk, read.Count - i);
      const std::int64_t start = read.Start + i * stride;
      auto into = [&](vtkDataArray* array)
      {
        return static_cast<char*>(array->GetVoidPointer(0)) +
          (read.Offset + i) * array->GetNumberOfComponents() * array->GetDataTypeSize();
      };
      auto readArray = [&](const std::pair<const Field*, vtkSmartPointer<vtkDataArray>>& entry)
      {
        rows.Read(*block.Set, *entry.first, read.File, start, k, stride,
          entry.second->GetDataType(), into(entry.second));
      };
      for (auto& entry : block.Arrays) // the ids first, for their conversion
      {
        if (entry.second == block.ParticleIds && block.IdsConvertedWhileReading)
        {
          readArray(entry);
          block.IdsRowsRead = read.Offset + i + k;
        }
      }
      if (block.Positions)
      {
        rows.Read(*block.Set, *block.Positions, read.File, start, k, stride,
          block.Points->GetDataType(), into(block.Points));
      }
      for (auto& entry : block.Arrays)
      {
        if (!(entry.second == block.ParticleIds && block.IdsConvertedWhileReading))
        {
          readArray(entry);
        }
      }
      this->Progress(algorithm, k, aborted);
    }
  }
}

//------------------------------------------------------------------------------
// Streams the rows of `share` in chunks and keeps those inside the Region:
// with `append`, every Stride-th of them (counted from RowsBefore) goes to
// the growing outputs; returns how many rows were inside (kept or not).
std::int64_t vtkJZSnapshotBlocks::ScanRegion(Block& block, vtkJZSnapshotRows& rows,
  const vtkJZSnapshotShare::Share& share, bool append, vtkAlgorithm* algorithm, bool& aborted)
{
  const double* region = this->Selection.Region;
  const std::int64_t stride = this->Selection.Stride;
  const int pointType = block.Points->GetDataType();
  const std::size_t pointBytes = 3 * static_cast<std::size_t>(block.Points->GetDataTypeSize());
  std::size_t rowBytes = pointBytes;
  for (const auto& entry : block.Arrays)
  {
    rowBytes = std::max(rowBytes,
      static_cast<std::size_t>(entry.second->GetNumberOfComponents() * entry.second->GetDataTypeSize()));
  }
  // At most ChunkRows rows, and at most ChunkBytes for the positions and one
  // array's values together, however many components an array has.
  const std::int64_t chunkRows = std::max<std::int64_t>(1,
    std::min<std::int64_t>(ChunkRows, ChunkBytes / static_cast<std::int64_t>(pointBytes + rowBytes)));
  const std::size_t chunk = static_cast<std::size_t>(chunkRows);
  std::vector<char> positions(block.Positions ? chunk * pointBytes : 0), values(chunk * rowBytes);
  std::vector<std::int32_t> keep;
  std::int64_t inside = 0, kept = 0;
  for (const vtkJZSnapshotShare::FileRows& read : share.Reads)
  {
    rows.Open(read.File);
    for (std::int64_t i = 0; i < read.Count && block.Positions && !aborted; i += chunkRows)
    {
      const std::int64_t k = std::min(chunkRows, read.Count - i);
      rows.Read(*block.Set, *block.Positions, read.File, read.Start + i, k, 1, pointType,
        positions.data());
      keep.clear();
      for (std::int64_t j = 0; j < k; ++j)
      {
        const bool in = pointType == VTK_FLOAT
          ? Inside(reinterpret_cast<const float*>(positions.data()) + 3 * j, region)
          : Inside(reinterpret_cast<const double*>(positions.data()) + 3 * j, region);
        if (in && (block.RowsBefore + inside++) % stride == 0)
        {
          keep.push_back(static_cast<std::int32_t>(j));
        }
      }
      if (append && !keep.empty())
      {
        kept += static_cast<std::int64_t>(keep.size());
        block.Growing[0]->Append(positions.data(), keep, pointBytes);
        for (std::size_t a = 0; a < block.Arrays.size(); ++a)
        {
          vtkDataArray* array = block.Arrays[a].second;
          rows.Read(*block.Set, *block.Arrays[a].first, read.File, read.Start + i, k, 1,
            array->GetDataType(), values.data());
          block.Growing[a + 1]->Append(values.data(), keep,
            static_cast<std::size_t>(array->GetNumberOfComponents() * array->GetDataTypeSize()));
        }
      }
      this->Progress(algorithm, k, aborted);
    }
  }
  return append ? kept : inside;
}

//------------------------------------------------------------------------------
std::string vtkJZSnapshotBlocks::Read(
  MPI_Comm* mpiComm, vtkAlgorithm* algorithm, bool& aborted, jz::RunInfo& info)
{
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  const bool region = this->Selection.HasRegion;
  this->ProgressRows = 0;
  this->ProgressTotal = 0;
  for (const auto& block : this->Blocks)
  {
    for (const auto& read : block->Share.Reads)
    {
      this->ProgressTotal += read.Count;
    }
  }
  std::vector<vtkDataArray*> readOrder;
  std::vector<MemoryPreparer::Task> fills;
  for (const auto& block : this->Blocks)
  {
    if (region)
    {
      break;
    }
    // GlobalIds converted while reading: their ids are read first.
    block->IdsConvertedWhileReading = block->GlobalIds && block->IdsConverted;
    if (block->IdsConvertedWhileReading)
    {
      readOrder.push_back(block->ParticleIds);
    }
    readOrder.push_back(block->Points);
    for (const auto& entry : block->Arrays)
    {
      if (!(block->IdsConvertedWhileReading && entry.second == block->ParticleIds))
      {
        readOrder.push_back(entry.second);
      }
    }
    block->FillSlices(fills);
  }
  for (const auto& block : this->Blocks)
  {
    // GlobalIds converted by the preparing thread, each slice once its ids are read.
    Block* b = block.get();
    vtkIdTypeArray* ids = b->GlobalIds;
    if (b->IdsConvertedWhileReading)
    {
      b->IdsRowsRead = 0;
      MemoryPreparer::ForSlices(ids, 0,
        [b, ids](vtkIdType begin, vtkIdType end)
        {
          while (b->IdsRowsRead.load() < end)
          {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
          }
          MemoryPreparer::Populate(ids, begin, end);
          ConvertIds(b->ParticleIds, ids, begin, end);
        },
        fills);
    }
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  MemoryPreparer preparer(readOrder, std::move(fills));
  // Destroyed before the preparer (also on errors): no slice waits for ids
  // that will not be read.
  struct ReleaseWaiters
  {
    std::vector<std::unique_ptr<Block>>& Blocks;
    void Release() const
    {
      for (const auto& block : this->Blocks)
      {
        block->IdsRowsRead = std::numeric_limits<std::int64_t>::max();
      }
    }
    ~ReleaseWaiters() { this->Release(); }
  } releaseWaiters{ this->Blocks };
  int filesOpened = 0, directReads = 0;
  try
  {
    // The pieces are assumed to share one machine's cores (never more threads than cores).
    vtkJZSnapshotRows rows(this->Snapshot, mpiComm,
      vtkJZSnapshotRawFile::File::ReadThreads(this->Selection.NumberOfPieces));
    if (mpiComm) // MPI-IO opens are collective: every rank opens every part
    {
      for (std::size_t file = 0; file < this->Snapshot.Files.size(); ++file)
      {
        rows.Open(file);
      }
    }
    for (const auto& block : this->Blocks)
    {
      if (aborted)
      {
        break;
      }
      if (!region)
      {
        this->ReadDirect(*block, rows, algorithm, aborted);
        continue;
      }
      block->Growing.clear();
      for (std::size_t a = 0; a <= block->Arrays.size(); ++a)
      {
        block->Growing.emplace_back(new GrowingArray);
      }
      block->Rows = this->ScanRegion(*block, rows, block->Share, true, algorithm, aborted);
      block->Growing[0]->MoveInto(block->Points);
      for (std::size_t a = 0; a < block->Arrays.size(); ++a)
      {
        block->Growing[a + 1]->MoveInto(block->Arrays[a].second);
      }
      block->Growing.clear();
      block->AllocateMade(this->WantTableMasses(*block->Set));
      block->FillMade();
    }
    filesOpened = rows.GetFilesOpened();
    directReads = rows.GetDirectReads();
    const Clock::time_point read = Clock::now();
    releaseWaiters.Release(); // after an abort, ids not read
    preparer.Finish();
    info.stageSeconds.emplace_back("read", std::chrono::duration<double>(read - start).count());
    info.stageSeconds.emplace_back(
      "fill after reading", std::chrono::duration<double>(Clock::now() - read).count());
  }
  catch (const vtkJZSnapshotHDF5::Error& e)
  {
    return e.what();
  }
  info.counters.emplace_back("files opened", filesOpened);
  info.counters.emplace_back("MPI-IO", mpiComm ? 1 : 0);
  info.counters.emplace_back("HDF5 datasets read directly", directReads);
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
      if (!(b.IdsOnly && entry.second == b.ParticleIds))
      {
        pd->AddArray(entry.second);
      }
    }
    if (b.TableMasses)
    {
      pd->AddArray(b.TableMasses);
    }
    if (b.GlobalIds)
    {
      if (b.IdsConverted && !b.IdsConvertedWhileReading)
      {
        ConvertIds(b.ParticleIds, b.GlobalIds, 0, b.GlobalIds->GetNumberOfValues());
      }
      pd->SetGlobalIds(b.GlobalIds);
    }

    AddFieldData(fieldData, block);
    const auto index = static_cast<unsigned int>(i);
    output->SetBlock(index, block);
    output->GetMetaData(index)->Set(vtkCompositeDataSet::NAME(), set.Name.c_str());
  }
  AddFieldData(fieldData, output);
}
