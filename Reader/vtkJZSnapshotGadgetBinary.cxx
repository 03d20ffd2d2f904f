// VTK-HeaderTest-Exclude: vtkJZSnapshotGadgetBinary.h
#include "vtkJZSnapshotGadgetBinary.h"

#include "vtkJZSnapshotHDF5.h" // Error
#include "vtkJZSnapshotPartFiles.h"
#include "vtkJZSnapshotRawFile.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <sstream>

namespace vtkJZSnapshotGadgetBinary
{
namespace
{
using vtkJZSnapshotHDF5::Error;
using vtkJZSnapshotLayout::Field;
using vtkJZSnapshotLayout::Layout;
using vtkJZSnapshotLayout::PointSet;
using vtkJZSnapshotLayout::ValueType;
using vtkJZSnapshotRawFile::Decode;

constexpr int NumTypes = 6;
constexpr std::int64_t HeaderBytes = 256;

// The 256-byte header, as Gadget-2's io.c writes it.
struct Header
{
  std::array<std::int64_t, NumTypes> NumPart{};
  std::array<double, NumTypes> Mass{};
  double Time = 0, Redshift = 0, BoxSize = 0, Omega0 = 0, OmegaLambda = 0, HubbleParam = 0;
  std::array<std::int64_t, NumTypes> Total{};
  std::int64_t NumFiles = 1;
};

Header DecodeHeader(const char* h, bool swap)
{
  Header header;
  for (int t = 0; t < NumTypes; ++t)
  {
    header.NumPart[t] = Decode<std::int32_t>(h + 4 * t, swap);
    header.Mass[t] = Decode<double>(h + 24 + 8 * t, swap);
    header.Total[t] = static_cast<std::int64_t>(Decode<std::uint32_t>(h + 96 + 4 * t, swap)) +
      (static_cast<std::int64_t>(Decode<std::uint32_t>(h + 168 + 4 * t, swap)) << 32);
  }
  header.Time = Decode<double>(h + 72, swap);
  header.Redshift = Decode<double>(h + 80, swap);
  header.NumFiles = std::max<std::int64_t>(Decode<std::int32_t>(h + 124, swap), 1);
  header.BoxSize = Decode<double>(h + 128, swap);
  header.Omega0 = Decode<double>(h + 136, swap);
  header.OmegaLambda = Decode<double>(h + 144, swap);
  header.HubbleParam = Decode<double>(h + 152, swap);
  return header;
}

// How a file starts: SnapFormat (1 or 2) and byte order, or false.
bool DetectStart(const vtkJZSnapshotRawFile::File& file, int& format, bool& swap)
{
  if (file.Size() < HeaderBytes + 8)
  {
    return false;
  }
  char head[24];
  file.Read(0, head, sizeof(head), "the first record");
  for (const bool s : { false, true })
  {
    const std::uint32_t first = Decode<std::uint32_t>(head, s);
    if (first == HeaderBytes)
    {
      std::uint32_t after;
      file.Read(4 + HeaderBytes, &after, 4, "the header's closing length");
      if (Decode<std::uint32_t>(&after, s) == HeaderBytes)
      {
        format = 1;
        swap = s;
        return true;
      }
    }
    if (first == 8 && Decode<std::uint32_t>(head + 12, s) == 8 &&
      std::string(head + 4, 4) == "HEAD" && Decode<std::uint32_t>(head + 16, s) == HeaderBytes)
    {
      format = 2;
      swap = s;
      return true;
    }
  }
  return false;
}

// One data record of a file: its label (SnapFormat 2) and where its bytes are.
struct Record
{
  std::string Label;
  std::int64_t Data = 0;
  std::int64_t Bytes = 0;
};

// The records of a file, every length marker checked against its partner
// and the file size.
std::vector<Record> ScanRecords(const vtkJZSnapshotRawFile::File& file, int format, bool swap)
{
  std::vector<Record> records;
  std::int64_t pos = 0;
  std::string label;
  while (pos < file.Size())
  {
    std::uint32_t marker;
    file.Read(pos, &marker, 4, "the record length at byte " + std::to_string(pos));
    const std::int64_t bytes = Decode<std::uint32_t>(&marker, swap);
    if (bytes > file.Size() - pos - 8)
    {
      std::ostringstream msg;
      msg << "'" << file.Name() << "' is truncated or damaged: the record at byte " << pos
          << (label.empty() ? "" : " (block " + label + ")") << " says it holds " << bytes
          << " bytes, but the file ends at byte " << file.Size() << ".";
      throw Error(msg.str());
    }
    std::uint32_t closing;
    file.Read(pos + 4 + bytes, &closing, 4, "a record's closing length");
    if (Decode<std::uint32_t>(&closing, swap) != bytes)
    {
      std::ostringstream msg;
      msg << "'" << file.Name() << "' is damaged: the record at byte " << pos
          << (label.empty() ? "" : " (block " + label + ")") << " has the length markers "
          << bytes << " before and " << Decode<std::uint32_t>(&closing, swap)
          << " after its data (Fortran record markers that disagree).";
      throw Error(msg.str());
    }
    const std::int64_t data = pos + 4;
    pos += bytes + 8;
    if (format == 2 && label.empty())
    {
      char text[4];
      if (bytes != 8)
      {
        throw Error("'" + file.Name() + "' is damaged: a SnapFormat 2 block label record at byte " +
          std::to_string(data - 4) + " has " + std::to_string(bytes) + " bytes instead of 8.");
      }
      file.Read(data, text, 4, "a block label");
      label.assign(text, 4);
      label.erase(label.find_last_not_of(' ') + 1);
      label = label.empty() ? "?" : label;
      continue;
    }
    records.push_back({ label, data, bytes });
    label.clear();
  }
  if (!label.empty())
  {
    throw Error("'" + file.Name() + "' is truncated: the block label " + label +
      " is not followed by its data.");
  }
  return records;
}

// SnapFormat 1 has no labels: the blocks come in Gadget-2's fixed order.
void NameByOrder(std::vector<Record>& records, const Header& header, std::int64_t variableMass)
{
  std::vector<std::string> names = { "HEAD", "POS", "VEL", "ID" };
  if (variableMass > 0)
  {
    names.emplace_back("MASS");
  }
  if (header.NumPart[0] > 0)
  {
    names.insert(names.end(), { "U", "RHO", "HSML" });
  }
  for (std::size_t i = 0; i < records.size(); ++i)
  {
    records[i].Label = i < names.size() ? names[i] : "";
  }
}

// The value size of a block of `rows` rows of `components` values each (4
// or 8 bytes); throws naming the block when the size fits neither.
int ValueBytes(const Record& record, std::int64_t rows, int components, const std::string& fileName,
  const std::string& counted)
{
  const std::int64_t values = rows * components;
  if (values > 0 && record.Bytes == 4 * values)
  {
    return 4;
  }
  if (values > 0 && record.Bytes == 8 * values)
  {
    return 8;
  }
  if (values == 0 && record.Bytes == 0)
  {
    return 0;
  }
  std::ostringstream msg;
  msg << "'" << fileName << "': the block " << record.Label << " at byte " << record.Data - 4
      << " has " << record.Bytes << " bytes, but the header counts " << counted << " ("
      << rows << " rows of " << components << " values of 4 or 8 bytes).";
  throw Error(msg.str());
}

// One file, opened and checked.
struct Part
{
  Header Head;
  std::map<std::string, Record> Blocks;
};

Part ReadPart(const std::string& fileName, int& format, bool& swap, bool first)
{
  vtkJZSnapshotRawFile::File file(fileName);
  int partFormat = 0;
  bool partSwap = false;
  if (!DetectStart(file, partFormat, partSwap))
  {
    throw Error("'" + fileName + "' is not a Gadget binary snapshot: it does not start with a " +
      "256-byte header record (SnapFormat 1) or a HEAD label record (SnapFormat 2).");
  }
  if (!first && (partFormat != format || partSwap != swap))
  {
    throw Error("'" + fileName + "' is not written like the first part of its snapshot " +
      "(SnapFormat or byte order differ).");
  }
  format = partFormat;
  swap = partSwap;
  std::vector<Record> records = ScanRecords(file, format, swap);
  char head[HeaderBytes];
  file.Read(records.front().Data, head, HeaderBytes, "the header");
  Part part;
  part.Head = DecodeHeader(head, swap);
  std::int64_t total = 0, variableMass = 0;
  for (int t = 0; t < NumTypes; ++t)
  {
    const std::int64_t n = part.Head.NumPart[t];
    if (n < 0 || n > file.Size() / 12)
    {
      std::ostringstream msg;
      msg << "'" << fileName << "' is damaged: its header counts " << n << " particles of type "
          << t << ", which a file of " << file.Size() << " bytes cannot hold.";
      throw Error(msg.str());
    }
    total += n;
    variableMass += part.Head.Mass[t] == 0 ? n : 0;
  }
  if (format == 1)
  {
    NameByOrder(records, part.Head, variableMass);
  }
  for (const Record& record : records)
  {
    if (!record.Label.empty() && !part.Blocks.count(record.Label))
    {
      part.Blocks[record.Label] = record;
    }
  }
  for (const char* required : { "POS", "VEL", "ID" })
  {
    if (!part.Blocks.count(required) && (format == 1 || std::string(required) == "POS"))
    {
      throw Error("'" + fileName + "' has no " + required + " block (SnapFormat 1 always has " +
        "POS, VEL and ID): it is truncated or not a Gadget snapshot.");
    }
  }
  if (variableMass > 0 && !part.Blocks.count("MASS"))
  {
    throw Error("'" + fileName + "': the header's MassTable is 0 for a type with particles, " +
      "but the file has no MASS block.");
  }
  return part;
}

// The rows a block holds in one part, and the rows before those of `type`.
struct BlockRows
{
  std::int64_t Rows = 0;
  std::int64_t Before = 0;
  bool Holds = false; // whether this block has rows of the type
};

BlockRows RowsOf(const std::string& block, const Header& h, int type)
{
  BlockRows rows;
  for (int t = 0; t < NumTypes; ++t)
  {
    const bool member = block == "MASS" ? h.Mass[t] == 0 : (block == "POS" || block == "VEL" ||
                                                             block == "ID" || t == 0);
    if (!member)
    {
      continue;
    }
    rows.Before += t < type ? h.NumPart[t] : 0;
    rows.Rows += h.NumPart[t];
    rows.Holds = rows.Holds || t == type;
  }
  return rows;
}

// The arrays a block gives, with its number of components.
struct BlockArray
{
  const char* Block;
  const char* Array;
  int Components;
  bool Integer;
};
const std::vector<BlockArray>& BlockArrays()
{
  static const std::vector<BlockArray> arrays = {
    { "POS", "Coordinates", 3, false },
    { "VEL", "Velocities", 3, false },
    { "ID", "ParticleIDs", 1, true },
    { "MASS", "Masses", 1, false },
    { "U", "InternalEnergy", 1, false },
    { "RHO", "Density", 1, false },
    { "HSML", "SmoothingLength", 1, false },
  };
  return arrays;
}

void AddHeaderValues(const Header& h, Layout& layout)
{
  if (h.BoxSize > 0)
  {
    layout.Header.push_back({ "BoxSize", { h.BoxSize } });
  }
  layout.Header.push_back({ "Time", { h.Time } });
  layout.Header.push_back({ "Redshift", { h.Redshift } });
  layout.Header.push_back({ "HubbleParam", { h.HubbleParam } });
  layout.Header.push_back({ "Omega0", { h.Omega0 } });
  layout.Header.push_back({ "OmegaLambda", { h.OmegaLambda } });
}

// Adds one part's rows of every type and block to the layout.
void AddPart(const Part& part, std::size_t index, const std::string& fileName, bool swap,
  std::map<int, PointSet>& sets)
{
  for (int t = 0; t < NumTypes; ++t)
  {
    PointSet& set = sets[t];
    set.CountPerFile[index] = part.Head.NumPart[t];
    set.Total += part.Head.NumPart[t];
    for (const BlockArray& ba : BlockArrays())
    {
      const auto it = part.Blocks.find(ba.Block);
      const BlockRows rows = RowsOf(ba.Block, part.Head, t);
      if (it == part.Blocks.end() || !rows.Holds)
      {
        continue;
      }
      const int bytes = ValueBytes(it->second, rows.Rows, ba.Components, fileName,
        std::string("the particles this block covers (NumPart, MassTable)"));
      Field* field = nullptr;
      for (Field& f : set.Fields)
      {
        field = f.Name == ba.Array ? &f : field;
      }
      if (!field)
      {
        set.Fields.emplace_back();
        field = &set.Fields.back();
        field->Name = ba.Array;
        field->Components = ba.Components;
        field->Type.Integer = ba.Integer;
        field->Type.Signed = !ba.Integer;
        field->Raw.Swap = swap;
        field->Raw.Offsets.assign(set.CountPerFile.size(), -1);
      }
      if (bytes == 0)
      {
        continue;
      }
      if (field->Type.Bytes != 0 && field->Type.Bytes != bytes)
      {
        throw Error("'" + fileName + "': the block " + ba.Block +
          " has another precision than in the other parts of the snapshot.");
      }
      field->Type.Bytes = bytes;
      field->Raw.RowBytes = static_cast<std::int64_t>(bytes) * ba.Components;
      field->Raw.Offsets[index] = it->second.Data + rows.Before * field->Raw.RowBytes;
    }
  }
}
}

//------------------------------------------------------------------------------
bool Recognise(const std::string& fileName)
{
  try
  {
    vtkJZSnapshotRawFile::File file(fileName);
    int format;
    bool swap;
    return DetectStart(file, format, swap);
  }
  catch (const Error&)
  {
    return false;
  }
}

//------------------------------------------------------------------------------
Layout Describe(const std::string& fileName)
{
  int format = 0;
  bool swap = false;
  const Part named = ReadPart(fileName, format, swap, true);
  Layout layout;
  layout.Store = vtkJZSnapshotLayout::Storage::Raw;
  layout.Files = vtkJZSnapshotPartFiles::Names(fileName, named.Head.NumFiles, "num_files");
  layout.Format = "Gadget-2 binary (SnapFormat " + std::to_string(format) + ", " +
    ((vtkJZSnapshotRawFile::HostIsBigEndian() != swap) ? "big" : "little") + "-endian)";
  std::map<int, PointSet> sets;
  for (int t = 0; t < NumTypes; ++t)
  {
    sets[t].Name = "PartType" + std::to_string(t);
    sets[t].Positions = "Coordinates";
    sets[t].CountPerFile.assign(layout.Files.size(), 0);
    sets[t].TableMass = named.Head.Mass[t];
  }
  for (std::size_t i = 0; i < layout.Files.size(); ++i)
  {
    const std::string& name = layout.Files[i];
    if (name == fileName)
    {
      AddPart(named, i, name, swap, sets);
      continue;
    }
    try
    {
      AddPart(ReadPart(name, format, swap, false), i, name, swap, sets);
    }
    catch (const Error& e)
    {
      std::ostringstream msg;
      msg << e.what() << " It is part " << i << " of the " << layout.Files.size()
          << "-file snapshot that '" << fileName << "' belongs to.";
      throw Error(msg.str());
    }
  }
  bool announced = false;
  for (int t = 0; t < NumTypes; ++t)
  {
    announced = announced || named.Head.Total[t] != 0;
  }
  for (auto& entry : sets)
  {
    PointSet& set = entry.second;
    if (set.Total == 0)
    {
      continue;
    }
    if (announced && named.Head.Total[entry.first] != set.Total)
    {
      layout.Warnings.push_back("The header's npartTotal announces " +
        std::to_string(named.Head.Total[entry.first]) + " particles of " + set.Name +
        " but the files hold " + std::to_string(set.Total) + "; reading what the files hold.");
    }
    if (set.TableMass != 0)
    {
      set.Fields.erase(std::remove_if(set.Fields.begin(), set.Fields.end(),
                         [](const Field& f) { return f.Name == "Masses"; }),
        set.Fields.end());
    }
    set.Fields.erase(std::remove_if(set.Fields.begin(), set.Fields.end(),
                       [](const Field& f) { return f.Type.Bytes == 0; }),
      set.Fields.end());
    for (const Field& field : set.Fields) // every part with rows of the type has the block
    {
      for (std::size_t i = 0; i < layout.Files.size(); ++i)
      {
        if (set.CountPerFile[i] > 0 && field.Raw.Offsets[i] < 0)
        {
          throw Error("'" + layout.Files[i] + "' has no block for " + set.Name + "/" + field.Name +
            " (the other parts of the snapshot have it).");
        }
      }
    }
    std::sort(set.Fields.begin(), set.Fields.end(),
      [](const Field& a, const Field& b) { return a.Name < b.Name; });
    layout.PointSets.push_back(set);
  }
  AddHeaderValues(named.Head, layout);
  return layout;
}

//------------------------------------------------------------------------------
std::string SeriesEntry(const std::string& fileName, double& time)
{
  int format = 0;
  bool swap = false;
  vtkJZSnapshotRawFile::File file(fileName);
  if (!DetectStart(file, format, swap))
  {
    throw Error("'" + fileName + "' is not a Gadget binary snapshot.");
  }
  char head[HeaderBytes];
  file.Read(format == 1 ? 4 : 20, head, HeaderBytes, "the header");
  const Header header = DecodeHeader(head, swap);
  time = header.Time;
  return vtkJZSnapshotPartFiles::Names(fileName, header.NumFiles, "num_files").front();
}
}
