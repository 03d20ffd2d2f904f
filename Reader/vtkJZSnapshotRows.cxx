// VTK-HeaderTest-Exclude: vtkJZSnapshotRows.h
#include "vtkJZSnapshotRows.h"

#include "vtkJZSnapshotRawFile.h"

#include "vtkType.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib> // getenv, strtoll
#include <cstring>

namespace
{
using vtkJZSnapshotHDF5::Handle;

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

// Memory type for reading a dataset into values of `vtkType`: the native
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

// Whether `raw`, opened just before HDF5 opened `name` as `file`, is that
// file: the name still leads to it, and so does HDF5's own descriptor
// where its driver has one (sec2, the default; MPI-IO keeps its own).
bool SameFile(const vtkJZSnapshotRawFile::File& raw, const std::string& name, hid_t file)
{
  if (!raw.SameFileAs(name))
  {
    return false;
  }
  Handle access(H5Fget_access_plist(file), H5Pclose);
  if (!access.Valid() || H5Pget_driver(access.Get()) != H5FD_SEC2)
  {
    return true;
  }
  void* handle = nullptr;
  return H5Fget_vfd_handle(file, access.Get(), &handle) >= 0 && handle &&
    raw.SameFileAs(*static_cast<int*>(handle));
}

// Whether values of the dataset's file type are bit for bit those of
// `memoryType`: same class (integer or float), size, byte order, sign,
// precision and padding.
bool SameBytes(hid_t dataset, hid_t memoryType)
{
  Handle fileType(H5Dget_type(dataset), H5Tclose);
  if (!fileType.Valid())
  {
    return false;
  }
  const H5T_class_t typeClass = H5Tget_class(fileType.Get());
  return (typeClass == H5T_INTEGER || typeClass == H5T_FLOAT) &&
    H5Tequal(fileType.Get(), memoryType) > 0;
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
}

//------------------------------------------------------------------------------
// Where a dataset's values lie when they are one run of the file in row
// order, with no filter and no external file; Offset -1 for any other
// dataset, and when its space is not allocated (HDF5 then gives fill values).
struct vtkJZSnapshotRows::ContiguousRun
{
  std::int64_t Offset = -1;
  std::int64_t Bytes = 0;
};

//------------------------------------------------------------------------------
vtkJZSnapshotRows::ContiguousRun vtkJZSnapshotRows::FindContiguousRun(hid_t dataset)
{
  Handle create(H5Dget_create_plist(dataset), H5Pclose);
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  if (!create.Valid() || H5Pget_layout(create.Get()) != H5D_CONTIGUOUS ||
    H5Pget_nfilters(create.Get()) != 0 || H5Pget_external_count(create.Get()) != 0 ||
    H5Dget_space_status(dataset, &status) < 0 || status != H5D_SPACE_STATUS_ALLOCATED)
  {
    return {};
  }
  const haddr_t offset = H5Dget_offset(dataset);
  const hsize_t bytes = H5Dget_storage_size(dataset);
  const hsize_t limit = hsize_t(1) << 62;
  if (offset == HADDR_UNDEF || offset >= limit || bytes >= limit)
  {
    return {};
  }
  return { static_cast<std::int64_t>(offset), static_cast<std::int64_t>(bytes) };
}

//------------------------------------------------------------------------------
vtkJZSnapshotRows::vtkJZSnapshotRows(
  const vtkJZSnapshotLayout::Layout& layout, MPI_Comm* mpiComm, int readThreads)
  : Snapshot(layout)
  , Comm(mpiComm)
  , ReadThreads(readThreads)
{
  if (layout.Store == vtkJZSnapshotLayout::Storage::HDF5)
  {
    this->Access = FileAccess(mpiComm);
  }
  const char* direct = std::getenv("JZ_SNAPSHOT_DIRECT_READS");
  this->DirectReadsAllowed = !(direct && std::string(direct) == "0");
}

//------------------------------------------------------------------------------
vtkJZSnapshotRows::~vtkJZSnapshotRows() = default;

//------------------------------------------------------------------------------
void vtkJZSnapshotRows::Open(std::size_t file)
{
  if (this->Snapshot.Store != vtkJZSnapshotLayout::Storage::HDF5 || this->OpenPart == file)
  {
    return;
  }
  const std::string& name = this->Snapshot.Files[file];
  this->PartHandle.Reset();
  this->PartRaw.reset();
  this->OpenPart = static_cast<std::size_t>(-1);
  std::unique_ptr<vtkJZSnapshotRawFile::File> raw;
  if (this->DirectReadsAllowed && vtkJZSnapshotRawFile::Readable(name))
  {
    raw.reset(new vtkJZSnapshotRawFile::File(name));
  }
  this->PartHandle = vtkJZSnapshotHDF5::OpenFile(name, this->Access.Get());
  this->OpenPart = file;
  ++this->FilesOpened;
  if (raw && SameFile(*raw, name, this->PartHandle.Get()))
  {
    this->PartRaw = std::move(raw);
  }
}

//------------------------------------------------------------------------------
const vtkJZSnapshotRawFile::File& vtkJZSnapshotRows::RawFile(const std::string& name)
{
  auto& file = this->RawFiles[name];
  if (!file)
  {
    file.reset(new vtkJZSnapshotRawFile::File(name));
    ++this->FilesOpened;
  }
  return *file;
}

//------------------------------------------------------------------------------
void vtkJZSnapshotRows::Read(const vtkJZSnapshotLayout::PointSet& set,
  const vtkJZSnapshotLayout::Field& field, std::size_t file, std::int64_t start,
  std::int64_t count, std::int64_t stride, int vtkType, void* target)
{
  if (count <= 0)
  {
    return;
  }
  if (field.Raw.RowBytes > 0)
  {
    this->ReadRaw(field, file, start, count, stride, target);
    return;
  }
  this->Open(file);
  const std::string& name = this->Snapshot.Files[file];
  const std::string path = set.Name + "/" + field.Name;
  const std::string what = "the dataset " + path + " of '" + name + "'";
  Handle dataset = vtkJZSnapshotHDF5::OpenDataset(this->PartHandle.Get(), path, what);
  Handle memoryType = MemoryType(dataset.Get(), vtkType);
  const ContiguousRun run = FindContiguousRun(dataset.Get());
  hsize_t fileBytes = 0;
  if (run.Offset >= 0 && H5Fget_filesize(this->PartHandle.Get(), &fileBytes) >= 0 &&
    run.Offset + run.Bytes > static_cast<std::int64_t>(fileBytes))
  {
    // Where a file was cut (and its end address mended), the HDF5 library
    // reads zeros for the missing values.
    throw vtkJZSnapshotHDF5::Error(vtkJZSnapshotRawFile::TruncatedMessage(
      name, what, run.Offset, run.Bytes, static_cast<std::int64_t>(fileBytes)));
  }
  if (this->ReadDirect(
        dataset.Get(), memoryType.Get(), run, start, count, stride, target, what))
  {
    return;
  }
  vtkJZSnapshotHDF5::ReadRows(dataset.Get(), static_cast<hsize_t>(start),
    static_cast<hsize_t>(count), static_cast<hsize_t>(stride), memoryType.Get(), target,
    H5P_DEFAULT, what);
}

//------------------------------------------------------------------------------
// Rows start .. start + count - 1 of a dataset stored as it is in memory
// (`run`), read with positioned reads; false (nothing read) where the HDF5
// library must read.
bool vtkJZSnapshotRows::ReadDirect(hid_t dataset, hid_t memoryType, const ContiguousRun& run,
  std::int64_t start, std::int64_t count, std::int64_t stride, void* target,
  const std::string& what)
{
  if (!this->PartRaw || run.Offset < 0 || stride != 1 || !SameBytes(dataset, memoryType))
  {
    return false;
  }
  const std::vector<hsize_t> shape = vtkJZSnapshotHDF5::Shape(dataset);
  if (shape.empty() || start < 0 || static_cast<hsize_t>(start + count) > shape[0])
  {
    return false; // HDF5 reports it
  }
  // The values are shape[0] rows of rowBytes: the run holds exactly those.
  std::int64_t rowBytes = static_cast<std::int64_t>(H5Tget_size(memoryType));
  for (std::size_t d = 1; d < shape.size() && rowBytes > 0; ++d)
  {
    rowBytes = shape[d] > 0 && static_cast<hsize_t>(run.Bytes / rowBytes) >= shape[d]
      ? rowBytes * static_cast<std::int64_t>(shape[d])
      : 0;
  }
  if (rowBytes <= 0 || static_cast<hsize_t>(run.Bytes / rowBytes) != shape[0] ||
    run.Bytes % rowBytes != 0)
  {
    return false;
  }
  this->PartRaw->ReadInParallel(
    run.Offset + start * rowBytes, target, static_cast<std::size_t>(count * rowBytes), what,
    this->ReadThreads);
  ++this->DirectReads;
  return true;
}

//------------------------------------------------------------------------------
void vtkJZSnapshotRows::ReadRaw(const vtkJZSnapshotLayout::Field& field, std::size_t file,
  std::int64_t start, std::int64_t count, std::int64_t stride, void* target)
{
  const vtkJZSnapshotLayout::RawColumn& raw = field.Raw;
  if (raw.Text)
  {
    this->ReadText(field, start, count, stride, static_cast<std::int64_t*>(target));
    return;
  }
  if (raw.IndexBase >= 0)
  {
    auto* out = static_cast<std::int64_t*>(target);
    for (std::int64_t i = 0; i < count; ++i)
    {
      out[i] = raw.IndexBase + start + i * stride;
    }
    return;
  }
  const std::string& name = raw.File.empty() ? this->Snapshot.Files[file] : raw.File;
  const vtkJZSnapshotRawFile::File& source = this->RawFile(name);
  const std::string what = "the values of " + field.Name;
  const std::int64_t valueBytes = static_cast<std::int64_t>(field.Type.Bytes) * field.Components;
  const std::int64_t base = raw.Offsets[file] + start * raw.RowBytes;
  auto* out = static_cast<char*>(target);
  if (raw.RowBytes == valueBytes && raw.ByteOffset == 0 && stride == 1)
  {
    source.ReadInParallel(
      base, out, static_cast<std::size_t>(count * valueBytes), what, this->ReadThreads);
  }
  else
  {
    const std::int64_t step = stride * raw.RowBytes;
    const std::int64_t perChunk = std::max<std::int64_t>(1, BufferBytes / step);
    for (std::int64_t i = 0; i < count; i += perChunk)
    {
      const std::int64_t k = std::min(perChunk, count - i);
      const std::int64_t spanStart = base + i * step;
      const std::int64_t spanLength = (k - 1) * step + raw.RowBytes;
      if (this->BufferFile != name || this->BufferStart != spanStart ||
        this->BufferLength != spanLength)
      {
        this->BufferStart = -1; // invalid until the read succeeds
        this->Buffer.resize(static_cast<std::size_t>(spanLength));
        source.Read(spanStart, this->Buffer.data(), this->Buffer.size(), what);
        this->BufferFile = name;
        this->BufferStart = spanStart;
        this->BufferLength = spanLength;
      }
      for (std::int64_t j = 0; j < k; ++j)
      {
        std::memcpy(out + (i + j) * valueBytes, this->Buffer.data() + j * step + raw.ByteOffset,
          static_cast<std::size_t>(valueBytes));
      }
    }
  }
  if (raw.Swap && field.Type.Bytes > 1)
  {
    vtkJZSnapshotRawFile::SwapBytes(target, static_cast<std::size_t>(count * field.Components),
      field.Type.Bytes);
  }
}

//------------------------------------------------------------------------------
bool vtkJZSnapshotRows::NextToken(const vtkJZSnapshotRawFile::File& file, std::string& token)
{
  token.clear();
  for (;;)
  {
    if (this->TextPos == this->TextBuffer.size())
    {
      const std::int64_t left = file.Size() - this->TextByte;
      if (left <= 0)
      {
        return !token.empty();
      }
      this->TextBuffer.resize(static_cast<std::size_t>(std::min<std::int64_t>(left, 1 << 20)));
      file.Read(this->TextByte, this->TextBuffer.data(), this->TextBuffer.size(), "the ids");
      this->TextByte += static_cast<std::int64_t>(this->TextBuffer.size());
      this->TextPos = 0;
    }
    const char c = this->TextBuffer[this->TextPos++];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
    {
      if (!token.empty())
      {
        return true;
      }
    }
    else if (token.size() < 32)
    {
      token.push_back(c);
    }
  }
}

//------------------------------------------------------------------------------
void vtkJZSnapshotRows::ReadText(const vtkJZSnapshotLayout::Field& field, std::int64_t start,
  std::int64_t count, std::int64_t stride, std::int64_t* target)
{
  const std::string& name = field.Raw.File;
  const vtkJZSnapshotRawFile::File& file = this->RawFile(name);
  const std::int64_t first = field.Raw.IndexBase + start;
  std::string token;
  if (this->TextFile != name || this->TextRow < 0 || this->TextRow > first)
  {
    this->TextFile = name;
    this->TextByte = 0;
    this->TextBuffer.clear();
    this->TextPos = 0;
    this->TextRow = -1;
    this->NextToken(file, token); // the count
    this->TextRow = 0;
  }
  for (std::int64_t i = 0; i < count; ++i)
  {
    const std::int64_t wanted = first + i * stride;
    for (; this->TextRow <= wanted; ++this->TextRow)
    {
      char* end = nullptr;
      if (!this->NextToken(file, token))
      {
        const std::int64_t read = this->TextRow;
        this->TextRow = -1;
        throw vtkJZSnapshotHDF5::Error("'" + name + "' ends after " + std::to_string(read) +
          " ids; the snapshot has more particles.");
      }
      const long long value = std::strtoll(token.c_str(), &end, 10);
      if (*end != '\0')
      {
        this->TextRow = -1;
        throw vtkJZSnapshotHDF5::Error(
          "'" + name + "' has '" + token + "' where an integer id should be.");
      }
      if (this->TextRow == wanted)
      {
        target[i] = value;
      }
    }
  }
}
