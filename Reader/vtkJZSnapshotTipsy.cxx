// VTK-HeaderTest-Exclude: vtkJZSnapshotTipsy.h
#include "vtkJZSnapshotTipsy.h"

#include "vtkJZSnapshotHDF5.h" // Error
#include "vtkJZSnapshotRawFile.h"

#include <algorithm>
#include <cmath>
#include <cstdlib> // strtoll
#include <sstream>

namespace vtkJZSnapshotTipsy
{
namespace
{
using vtkJZSnapshotHDF5::Error;
using vtkJZSnapshotLayout::Field;
using vtkJZSnapshotLayout::Layout;
using vtkJZSnapshotLayout::PointSet;
using vtkJZSnapshotRawFile::Decode;

constexpr std::int64_t HeaderBytes = 32;

struct Header
{
  double Time = 0;
  std::int64_t Bodies = 0, Gas = 0, Dark = 0, Stars = 0;
  bool Swap = false; // stored in the other byte order than this machine's
};

// The header in one byte order, if its counts are consistent.
bool DecodeHeader(const char* h, bool swap, Header& header)
{
  header.Time = Decode<double>(h, swap);
  header.Bodies = Decode<std::int32_t>(h + 8, swap);
  const std::int32_t dimensions = Decode<std::int32_t>(h + 12, swap);
  header.Gas = Decode<std::int32_t>(h + 16, swap);
  header.Dark = Decode<std::int32_t>(h + 20, swap);
  header.Stars = Decode<std::int32_t>(h + 24, swap);
  header.Swap = swap;
  return std::isfinite(header.Time) && dimensions == 3 && header.Gas >= 0 && header.Dark >= 0 &&
    header.Stars >= 0 && header.Gas + header.Dark + header.Stars == header.Bodies;
}

// XDR (big-endian) first, as the standard format; then the other order.
bool ReadHeader(const vtkJZSnapshotRawFile::File& file, Header& header)
{
  if (file.Size() < HeaderBytes)
  {
    return false;
  }
  char h[HeaderBytes];
  file.Read(0, h, HeaderBytes, "the header");
  const bool big = vtkJZSnapshotRawFile::HostIsBigEndian();
  return DecodeHeader(h, !big, header) || DecodeHeader(h, big, header);
}

// A family: its name, floats per record, and the fields at float offsets.
struct Family
{
  const char* Name;
  int Floats;
  std::vector<std::pair<const char*, int>> Fields; // name, first float (Velocities: 3)
};
const std::vector<Family>& Families()
{
  static const std::vector<Family> families = {
    { "gas", 12,
      { { "Masses", 0 }, { "Coordinates", 1 }, { "Velocities", 4 }, { "Density", 7 },
        { "Temperature", 8 }, { "SmoothingLength", 9 }, { "Metals", 10 }, { "Potential", 11 } } },
    { "dark", 9,
      { { "Masses", 0 }, { "Coordinates", 1 }, { "Velocities", 4 }, { "Softening", 7 },
        { "Potential", 8 } } },
    { "star", 11,
      { { "Masses", 0 }, { "Coordinates", 1 }, { "Velocities", 4 }, { "Metals", 7 },
        { "FormationTime", 8 }, { "Softening", 9 }, { "Potential", 10 } } },
  };
  return families;
}

// The ids field: from `<file>.iord` when it is a binary TIPSY array of one
// id per particle, else the index in the file (with a warning when an
// .iord is there but unusable).
Field IdsField(const std::string& fileName, std::int64_t bodies, Layout& layout)
{
  Field ids;
  ids.Name = "GlobalIds";
  ids.GlobalIdsOnly = true;
  ids.Type.Integer = true;
  ids.Type.Signed = true;
  ids.Type.Bytes = 8;
  ids.Raw.IndexBase = 0;
  ids.Raw.RowBytes = 8;
  const std::string iord = fileName + ".iord";
  if (!vtkJZSnapshotRawFile::Readable(iord))
  {
    return ids;
  }
  vtkJZSnapshotRawFile::File file(iord);
  char count[4] = { 0, 0, 0, 0 };
  if (file.Size() >= 4)
  {
    file.Read(0, count, 4, "the count");
  }
  for (const bool swap : { !vtkJZSnapshotRawFile::HostIsBigEndian(), false, true })
  {
    const std::int64_t n = Decode<std::int32_t>(count, swap);
    for (const int bytes : { 4, 8 })
    {
      if (n == bodies && file.Size() == 4 + bytes * n)
      {
        ids.Raw.File = iord;
        ids.Raw.IndexBase = -1;
        ids.Raw.Offsets = { 4 };
        ids.Raw.RowBytes = bytes;
        ids.Raw.Swap = swap;
        ids.Type.Bytes = bytes;
        return ids;
      }
    }
  }
  // An ASCII array: the count, then one integer per particle (read as it streams).
  char text[32] = { 0 };
  file.Read(0, text, static_cast<std::size_t>(std::min<std::int64_t>(file.Size(), 31)), "the count");
  char* end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  if (end != text && n == bodies && (*end == '\n' || *end == ' ' || *end == '\r' || *end == '\t'))
  {
    ids.Raw.File = iord;
    ids.Raw.Text = true;
    ids.Raw.Offsets = { 0 };
    return ids;
  }
  layout.Warnings.push_back("'" + iord + "' is not a TIPSY array of " + std::to_string(bodies) +
    " ids (a count, then one integer per particle, binary or ASCII); " +
    "GlobalIds are the particles' indices in the file.");
  return ids;
}
}

//------------------------------------------------------------------------------
bool Recognise(const std::string& fileName)
{
  try
  {
    vtkJZSnapshotRawFile::File file(fileName);
    Header header;
    return ReadHeader(file, header);
  }
  catch (const Error&)
  {
    return false;
  }
}

//------------------------------------------------------------------------------
Layout Describe(const std::string& fileName)
{
  vtkJZSnapshotRawFile::File file(fileName);
  Header h;
  if (!ReadHeader(file, h))
  {
    throw Error("'" + fileName + "' is not a TIPSY snapshot: its header's counts are not " +
      "consistent (ndim 3, nsph + ndark + nstar = nbodies).");
  }
  const std::int64_t counts[3] = { h.Gas, h.Dark, h.Stars };
  std::int64_t expected = HeaderBytes;
  for (int f = 0; f < 3; ++f)
  {
    expected += counts[f] * 4 * Families()[f].Floats;
  }
  if (file.Size() != expected)
  {
    std::ostringstream msg;
    msg << "'" << fileName << "' is " << (file.Size() < expected ? "truncated" : "damaged")
        << ": its TIPSY header counts " << h.Gas << " gas, " << h.Dark << " dark and " << h.Stars
        << " star particles, which take " << expected << " bytes, but the file has "
        << file.Size() << " bytes.";
    throw Error(msg.str());
  }
  Layout layout;
  layout.Store = vtkJZSnapshotLayout::Storage::Raw;
  layout.Files = { fileName };
  const bool big = vtkJZSnapshotRawFile::HostIsBigEndian() != h.Swap;
  layout.Format = big ? "TIPSY (XDR, big-endian)" : "TIPSY (native, little-endian)";
  layout.Header.push_back({ "Time", { h.Time } });
  const Field ids = IdsField(fileName, h.Bodies, layout);
  std::int64_t start = HeaderBytes, before = 0;
  for (int f = 0; f < 3; ++f)
  {
    const Family& family = Families()[f];
    if (counts[f] > 0)
    {
      PointSet set;
      set.Name = family.Name;
      set.Positions = "Coordinates";
      set.CountPerFile = { counts[f] };
      set.Total = counts[f];
      for (const auto& entry : family.Fields)
      {
        Field field;
        field.Name = entry.first;
        field.Components = entry.second == 1 || entry.second == 4 ? 3 : 1;
        field.Type.Bytes = 4;
        field.Raw.Offsets = { start };
        field.Raw.ByteOffset = 4 * entry.second;
        field.Raw.RowBytes = 4 * family.Floats;
        field.Raw.Swap = h.Swap;
        set.Fields.push_back(field);
      }
      Field familyIds = ids;
      if (familyIds.Raw.IndexBase >= 0 || familyIds.Raw.Text)
      {
        familyIds.Raw.IndexBase = before;
      }
      else
      {
        familyIds.Raw.Offsets = { 4 + before * familyIds.Raw.RowBytes };
      }
      set.Fields.push_back(familyIds);
      std::sort(set.Fields.begin(), set.Fields.end(),
        [](const Field& a, const Field& b) { return a.Name < b.Name; });
      layout.PointSets.push_back(set);
    }
    start += counts[f] * 4 * family.Floats;
    before += counts[f];
  }
  return layout;
}

//------------------------------------------------------------------------------
std::string SeriesEntry(const std::string& fileName, double& time)
{
  vtkJZSnapshotRawFile::File file(fileName);
  Header h;
  if (!ReadHeader(file, h))
  {
    throw Error("'" + fileName + "' is not a TIPSY snapshot.");
  }
  time = h.Time;
  return fileName;
}
}
