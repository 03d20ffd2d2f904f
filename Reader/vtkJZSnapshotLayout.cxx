#include "vtkJZSnapshotLayout.h"

#include "vtkJZSnapshotHDF5.h"
#include "vtkJZSnapshotGadgetBinary.h"
#include "vtkJZSnapshotHeader.h"
#include "vtkJZSnapshotPartFiles.h"
#include "vtkJZSnapshotRawFile.h"
#include "vtkJZSnapshotTipsy.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace vtkJZSnapshotLayout
{
namespace
{
using vtkJZSnapshotHDF5::Error;
using vtkJZSnapshotHDF5::Handle;

// The point sets a group catalogue may hold: group, positions, and the
// header attributes that count its rows in one file.
struct CatalogueSet
{
  const char* Group;
  const char* Positions;
  std::vector<const char*> CountAttributes;
};
const std::vector<CatalogueSet>& CatalogueSets()
{
  static const std::vector<CatalogueSet> sets = {
    { "Group", "GroupPos", { "Ngroups_ThisFile" } }, // Gadget-4, Gadget-3/AREPO SUBFIND
    { "Subhalo", "SubhaloPos", { "Nsubhalos_ThisFile", "Nsubgroups_ThisFile" } },
    { "Groups", "Centres", { "NumGroups_ThisFile" } }, // SWIFT FOF
  };
  return sets;
}

// "PartType<n>" -> n, else -1.
int PartTypeIndex(const std::string& name)
{
  const std::string prefix = "PartType";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
    name.size() > prefix.size() + 6)
  {
    return -1;
  }
  for (std::size_t i = prefix.size(); i < name.size(); ++i)
  {
    if (!std::isdigit(static_cast<unsigned char>(name[i])))
    {
      return -1;
    }
  }
  return std::stoi(name.substr(prefix.size()));
}

std::vector<std::string> PartTypeGroups(hid_t file)
{
  std::vector<std::string> names;
  for (const std::string& name : vtkJZSnapshotHDF5::MemberNames(file))
  {
    if (PartTypeIndex(name) >= 0 && vtkJZSnapshotHDF5::IsGroup(file, name))
    {
      names.push_back(name);
    }
  }
  // PartType2 before PartType10.
  std::sort(names.begin(), names.end(),
    [](const std::string& a, const std::string& b) { return PartTypeIndex(a) < PartTypeIndex(b); });
  return names;
}

bool HasHeaderAttribute(hid_t file, const char* name)
{
  if (!vtkJZSnapshotHDF5::IsGroup(file, "Header"))
  {
    return false;
  }
  Handle header(H5Gopen2(file, "Header", H5P_DEFAULT), H5Gclose);
  return header.Valid() && H5Aexists(header.Get(), name) > 0;
}

// The kind of an open file, or false when it is neither a snapshot nor a
// catalogue (`why` says what is missing).
bool DetectKind(hid_t file, Kind& kind, std::string& why)
{
  if (!vtkJZSnapshotHDF5::IsGroup(file, "Header"))
  {
    why = "it has no Header group";
    return false;
  }
  if (!PartTypeGroups(file).empty() || HasHeaderAttribute(file, "NumPart_ThisFile"))
  {
    kind = Kind::Snapshot;
    return true;
  }
  for (const CatalogueSet& set : CatalogueSets())
  {
    bool counted = false;
    for (const char* attribute : set.CountAttributes)
    {
      counted = counted || HasHeaderAttribute(file, attribute);
    }
    if (counted || vtkJZSnapshotHDF5::IsGroup(file, set.Group))
    {
      kind = Kind::GroupCatalogue;
      return true;
    }
  }
  why = "it has a Header but no PartType<n> groups (snapshot) and no Group, Subhalo or Groups "
        "(group catalogue)";
  return false;
}

std::string FormatName(hid_t file, Kind kind)
{
  std::string code;
  if (vtkJZSnapshotHDF5::IsGroup(file, "Header"))
  {
    Handle header(H5Gopen2(file, "Header", H5P_DEFAULT), H5Gclose);
    vtkJZSnapshotHDF5::ReadAttribute(header.Get(), "Code", code);
  }
  const bool swift = code.find("SWIFT") != std::string::npos;
  if (kind == Kind::GroupCatalogue)
  {
    return swift ? "SWIFT FOF catalogue"
                 : (vtkJZSnapshotHDF5::IsGroup(file, "Config") ? "Gadget-4 group catalogue"
                                                               : "SUBFIND group catalogue");
  }
  if (swift)
  {
    return "SWIFT";
  }
  if (HasHeaderAttribute(file, "Composition_vector_length"))
  {
    return "AREPO";
  }
  if (vtkJZSnapshotHDF5::IsGroup(file, "Config") && vtkJZSnapshotHDF5::IsGroup(file, "Parameters"))
  {
    return "Gadget-4";
  }
  return "Gadget-2/3";
}

// Number of part files from the header (1 when absent).
std::int64_t NumberOfFiles(hid_t file, Kind kind)
{
  std::vector<std::int64_t> n;
  const char* first = kind == Kind::Snapshot ? "NumFilesPerSnapshot" : "NumFiles";
  const char* second = kind == Kind::Snapshot ? "NumFiles" : "NumFilesPerSnapshot";
  if (vtkJZSnapshotHDF5::ReadAttribute(file, "Header", first, n) ||
    vtkJZSnapshotHDF5::ReadAttribute(file, "Header", second, n))
  {
    return std::max<std::int64_t>(n[0], 1);
  }
  return 1;
}

std::vector<std::string> PartFiles(const std::string& fileName, std::int64_t numFiles)
{
  return vtkJZSnapshotPartFiles::Names(fileName, numFiles, "Header/NumFilesPerSnapshot");
}

bool ToValueType(hid_t type, ValueType& out)
{
  const H5T_class_t typeClass = H5Tget_class(type);
  if (typeClass == H5T_ENUM) // e.g. h5py's booleans: stored as their integer base
  {
    Handle base(H5Tget_super(type), H5Tclose);
    return base.Valid() && H5Tget_class(base.Get()) == H5T_INTEGER && ToValueType(base.Get(), out);
  }
  const std::size_t size = H5Tget_size(type);
  if (typeClass == H5T_INTEGER && (size == 1 || size == 2 || size == 4 || size == 8))
  {
    out.Integer = true;
    out.Signed = H5Tget_sign(type) == H5T_SGN_2;
    out.Bytes = static_cast<int>(size);
    return true;
  }
  if (typeClass == H5T_FLOAT)
  {
    out.Integer = false;
    out.Signed = true;
    out.Bytes = size <= 4 ? 4 : 8; // half precision widens to float, long double narrows
    return true;
  }
  return false;
}

// Dataset paths below a group (nested groups too, as "Sub/Name").
void ListDatasets(hid_t group, const std::string& prefix, int depth, std::vector<std::string>& out)
{
  for (const std::string& name : vtkJZSnapshotHDF5::MemberNames(group))
  {
    if (vtkJZSnapshotHDF5::IsDataset(group, name))
    {
      out.push_back(prefix + name);
    }
    else if (depth < 3 && vtkJZSnapshotHDF5::IsGroup(group, name))
    {
      Handle sub(H5Gopen2(group, name.c_str(), H5P_DEFAULT), H5Gclose);
      if (sub.Valid())
      {
        ListDatasets(sub.Get(), prefix + name + "/", depth + 1, out);
      }
    }
  }
}

// The fields of a point-set group (shape and type of each dataset; those
// that are not one row per point of a supported type become warnings).
std::vector<Field> ListFields(hid_t group, const std::string& where,
  std::vector<std::string>& warnings, std::map<std::string, std::vector<hsize_t>>* shapes)
{
  std::vector<std::string> paths;
  ListDatasets(group, "", 0, paths);
  std::vector<Field> fields;
  for (const std::string& path : paths)
  {
    Handle dataset = vtkJZSnapshotHDF5::OpenDataset(group, path, where + "/" + path);
    Handle type(H5Dget_type(dataset.Get()), H5Tclose);
    const std::vector<hsize_t> shape = vtkJZSnapshotHDF5::Shape(dataset.Get());
    Field field;
    field.Name = path;
    if (shape.empty() || !ToValueType(type.Get(), field.Type))
    {
      warnings.push_back(where + "/" + path + (shape.empty() ? " is a scalar" : " has a type") +
        " that is not one number per point; it is not read.");
      continue;
    }
    hsize_t components = 1;
    for (std::size_t d = 1; d < shape.size(); ++d)
    {
      components *= shape[d];
    }
    field.Components = static_cast<int>(components);
    Handle creation(H5Dget_create_plist(dataset.Get()), H5Pclose);
    field.Virtual = creation.Valid() && H5Pget_layout(creation.Get()) == H5D_VIRTUAL;
    if (shapes)
    {
      (*shapes)[path] = shape;
    }
    fields.push_back(field);
  }
  return fields;
}

// One point set's rows in one part file, checked against its datasets.
struct PartCount
{
  std::string Name;
  std::string Positions;
  std::int64_t Count = 0;
  std::string CountSource; // e.g. "Header/NumPart_ThisFile[1]"
};

// The point sets of one part file with the row counts its header gives.
// Types that the header counts but the file lacks (cut-down files) are left
// out, with a warning added to `warnings` when given.
std::vector<PartCount> CountPoints(
  hid_t file, Kind kind, const std::string& fileName, std::vector<std::string>* warnings)
{
  std::vector<PartCount> counts;
  if (kind == Kind::Snapshot)
  {
    std::vector<std::int64_t> numPart;
    const bool hasNumPart =
      vtkJZSnapshotHDF5::ReadAttribute(file, "Header", "NumPart_ThisFile", numPart);
    const std::vector<std::string> groups = PartTypeGroups(file);
    if (!hasNumPart && !groups.empty())
    {
      throw Error("'" + fileName + "': Header/NumPart_ThisFile is missing.");
    }
    for (const std::string& name : groups)
    {
      const int type = PartTypeIndex(name);
      if (type >= static_cast<int>(numPart.size()))
      {
        std::ostringstream msg;
        msg << "'" << fileName << "': there is a group " << name << " but Header/NumPart_ThisFile "
            << "has only " << numPart.size() << " entries.";
        throw Error(msg.str());
      }
      counts.push_back({ name, "Coordinates", numPart[type],
        "Header/NumPart_ThisFile[" + std::to_string(type) + "]" });
    }
    for (std::size_t type = 0; type < numPart.size(); ++type)
    {
      const std::string name = "PartType" + std::to_string(type);
      if (numPart[type] > 0 && std::find(groups.begin(), groups.end(), name) == groups.end() &&
        warnings)
      {
        std::ostringstream msg;
        msg << "'" << fileName << "': Header/NumPart_ThisFile[" << type << "] is " << numPart[type]
            << " but the file has no group " << name << " (a cut-down file?); " << name
            << " is not read.";
        warnings->push_back(msg.str());
      }
    }
    return counts;
  }
  for (const CatalogueSet& set : CatalogueSets())
  {
    PartCount count{ set.Group, set.Positions, -1, "" };
    for (const char* attribute : set.CountAttributes)
    {
      std::vector<std::int64_t> n;
      if (count.Count < 0 && vtkJZSnapshotHDF5::ReadAttribute(file, "Header", attribute, n))
      {
        count.Count = n[0];
        count.CountSource = std::string("Header/") + attribute;
      }
    }
    const bool present = vtkJZSnapshotHDF5::IsGroup(file, set.Group);
    if (!present && count.Count > 0)
    {
      std::ostringstream msg;
      msg << "'" << fileName << "': " << count.CountSource << " is " << count.Count
          << " but the file has no group " << set.Group << ".";
      throw Error(msg.str());
    }
    if (present && count.Count < 0) // no count attribute: the positions decide
    {
      const std::string path = std::string(set.Group) + "/" + set.Positions;
      count.Count = 0;
      if (vtkJZSnapshotHDF5::IsDataset(file, path))
      {
        Handle dataset = vtkJZSnapshotHDF5::OpenDataset(file, path, path);
        const std::vector<hsize_t> shape = vtkJZSnapshotHDF5::Shape(dataset.Get());
        count.Count = shape.empty() ? 0 : static_cast<std::int64_t>(shape[0]);
      }
      count.CountSource = "the rows of " + path;
    }
    if (present)
    {
      counts.push_back(count);
    }
  }
  return counts;
}

PointSet& FindOrAdd(Layout& layout, const PartCount& count)
{
  for (PointSet& set : layout.PointSets)
  {
    if (set.Name == count.Name)
    {
      return set;
    }
  }
  layout.PointSets.emplace_back();
  PointSet& set = layout.PointSets.back();
  set.Name = count.Name;
  set.Positions = count.Positions;
  set.CountPerFile.assign(layout.Files.size(), 0);
  return set;
}

// Adds one part file's points to the layout, checking every dataset against
// the header's count (and against the datasets of the parts before it).
void ScanPart(hid_t file, std::size_t part, const std::string& fileName, Layout& layout)
{
  for (const PartCount& count : CountPoints(file, layout.Type, fileName, &layout.Warnings))
  {
    PointSet& set = FindOrAdd(layout, count);
    set.CountPerFile[part] = count.Count;
    set.Total += count.Count;
    if (count.Count == 0)
    {
      continue;
    }
    const std::string where = "'" + fileName + "': " + set.Name;
    Handle group = vtkJZSnapshotHDF5::OpenGroup(file, set.Name, where);
    std::map<std::string, std::vector<hsize_t>> shapes;
    std::vector<std::string> warnings;
    std::vector<Field> fields = ListFields(group.Get(), where, warnings, &shapes);
    if (!shapes.count(set.Positions))
    {
      throw Error(
        "'" + fileName + "': the dataset " + set.Name + "/" + set.Positions + " is missing.");
    }
    if (shapes[set.Positions].size() != 2 || shapes[set.Positions][1] != 3)
    {
      throw Error("'" + fileName + "': the dataset " + set.Name + "/" + set.Positions +
        " does not have 3 columns (x, y, z).");
    }
    for (const auto& entry : shapes)
    {
      if (static_cast<std::int64_t>(entry.second[0]) != count.Count)
      {
        std::ostringstream msg;
        msg << "'" << fileName << "': the dataset " << set.Name << "/" << entry.first << " has "
            << entry.second[0] << " rows, but " << count.CountSource << " is " << count.Count
            << ".";
        throw Error(msg.str());
      }
    }
    if (set.Fields.empty())
    {
      set.Fields = fields;
      layout.Warnings.insert(layout.Warnings.end(), warnings.begin(), warnings.end());
      continue;
    }
    for (const Field& field : set.Fields) // later parts must hold every dataset
    {
      if (!shapes.count(field.Name))
      {
        throw Error("'" + fileName + "': the dataset " + set.Name + "/" + field.Name +
          " is missing (the other parts of the snapshot have it).");
      }
    }
  }
}

// The header's NumPart_Total (with NumPart_Total_HighWord, as Gadget writes
// more than 2^32) against what the files hold: the files are read, a
// mismatch is only worth a warning.
void CheckTotals(
  const std::vector<std::int64_t>& total, const std::vector<std::int64_t>& highWord, Layout& layout)
{
  for (const PointSet& set : layout.PointSets)
  {
    const int type = PartTypeIndex(set.Name);
    if (type < 0 || type >= static_cast<int>(total.size()))
    {
      continue;
    }
    const std::int64_t high = type < static_cast<int>(highWord.size()) ? highWord[type] : 0;
    const std::int64_t announced = (high << 32) + (total[type] & 0xffffffffLL);
    if (announced != set.Total)
    {
      std::ostringstream msg;
      msg << "Header/NumPart_Total (with NumPart_Total_HighWord) announces " << announced
          << " particles of " << set.Name << " but the files hold " << set.Total
          << "; reading what the files hold.";
      layout.Warnings.push_back(msg.str());
    }
  }
}

// Which reader a file goes to, by content. A file that is none of the
// formats goes to HDF5, whose error says so; one that cannot be opened too.
enum class FileFormat
{
  HDF5,
  GadgetBinary,
  Tipsy
};
FileFormat Detect(const std::string& fileName)
{
  if (!vtkJZSnapshotRawFile::Readable(fileName) || vtkJZSnapshotHDF5::HasHDF5Signature(fileName))
  {
    return FileFormat::HDF5;
  }
  if (vtkJZSnapshotGadgetBinary::Recognise(fileName))
  {
    return FileFormat::GadgetBinary;
  }
  return vtkJZSnapshotTipsy::Recognise(fileName) ? FileFormat::Tipsy : FileFormat::HDF5;
}

Handle OpenKnownFile(const std::string& fileName, Kind& kind)
{
  Handle file = vtkJZSnapshotHDF5::OpenFile(fileName);
  std::string why;
  if (!DetectKind(file.Get(), kind, why))
  {
    throw Error("'" + fileName +
      "' is not a Gadget, AREPO or SWIFT snapshot or group catalogue: " + why + ".");
  }
  return file;
}
}

//------------------------------------------------------------------------------
const Field* PointSet::Find(const std::string& name) const
{
  for (const Field& field : this->Fields)
  {
    if (field.Name == name)
    {
      return &field;
    }
  }
  return nullptr;
}

//------------------------------------------------------------------------------
const HeaderValue* Layout::Find(const std::string& name) const
{
  for (const HeaderValue& value : this->Header)
  {
    if (value.Name == name)
    {
      return &value;
    }
  }
  return nullptr;
}

//------------------------------------------------------------------------------
bool Layout::HasVirtualDatasets() const
{
  for (const PointSet& set : this->PointSets)
  {
    for (const Field& field : set.Fields)
    {
      if (field.Virtual)
      {
        return true;
      }
    }
  }
  return false;
}

//------------------------------------------------------------------------------
bool CanRead(const std::string& fileName)
{
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  if (!vtkJZSnapshotHDF5::HasHDF5Signature(fileName))
  {
    return vtkJZSnapshotGadgetBinary::Recognise(fileName) || vtkJZSnapshotTipsy::Recognise(fileName);
  }
  Handle file(H5Fopen(fileName.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.Valid())
  {
    return true; // an HDF5 file HDF5 cannot open: Describe() says why
  }
  Kind kind;
  std::string why;
  return DetectKind(file.Get(), kind, why);
}

//------------------------------------------------------------------------------
// The checked layout of an HDF5 snapshot or catalogue.
static Layout DescribeHDF5(const std::string& fileName)
{
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  Layout layout;
  {
    Handle file = OpenKnownFile(fileName, layout.Type);
    layout.Format = FormatName(file.Get(), layout.Type);
    layout.Files = PartFiles(fileName, NumberOfFiles(file.Get(), layout.Type));
    layout.Header = vtkJZSnapshotHeader::ReadValues(file.Get());
    std::vector<double> massTable;
    std::vector<std::int64_t> total, highWord;
    if (layout.Type == Kind::Snapshot)
    {
      vtkJZSnapshotHDF5::ReadAttribute(file.Get(), "Header", "MassTable", massTable);
      vtkJZSnapshotHDF5::ReadAttribute(file.Get(), "Header", "NumPart_Total", total);
      vtkJZSnapshotHDF5::ReadAttribute(file.Get(), "Header", "NumPart_Total_HighWord", highWord);
    }
    for (std::size_t part = 0; part < layout.Files.size(); ++part)
    {
      const std::string& name = layout.Files[part];
      Handle partFile;
      try
      {
        Kind kind;
        partFile = name == fileName ? std::move(file) : OpenKnownFile(name, kind);
      }
      catch (const Error& e)
      {
        if (layout.Files.size() == 1)
        {
          throw;
        }
        std::ostringstream msg;
        msg << e.what() << " It is part " << part << " of the " << layout.Files.size()
            << "-file snapshot that '" << fileName << "' belongs to.";
        throw Error(msg.str());
      }
      ScanPart(partFile.Get(), part, name, layout);
    }
    for (PointSet& set : layout.PointSets)
    {
      const int type = PartTypeIndex(set.Name);
      if (type >= 0 && type < static_cast<int>(massTable.size()))
      {
        set.TableMass = massTable[type];
      }
    }
    CheckTotals(total, highWord, layout);
  }
  std::sort(layout.PointSets.begin(), layout.PointSets.end(),
    [](const PointSet& a, const PointSet& b)
    {
      const int ta = PartTypeIndex(a.Name), tb = PartTypeIndex(b.Name);
      return ta != tb ? ta < tb : a.Name < b.Name;
    });
  return layout;
}

//------------------------------------------------------------------------------
Layout Describe(const std::string& fileName)
{
  Layout layout;
  switch (Detect(fileName))
  {
    case FileFormat::GadgetBinary:
      layout = vtkJZSnapshotGadgetBinary::Describe(fileName);
      break;
    case FileFormat::Tipsy:
      layout = vtkJZSnapshotTipsy::Describe(fileName);
      break;
    default:
      layout = DescribeHDF5(fileName);
  }
  // A BoxSize of 0 (Gadget's non-periodic runs and initial conditions) is no box.
  layout.Header.erase(std::remove_if(layout.Header.begin(), layout.Header.end(),
                        [](const HeaderValue& v)
                        {
                          return v.Name == "BoxSize" &&
                            std::any_of(v.Values.begin(), v.Values.end(),
                              [](double x) { return !(x > 0); });
                        }),
    layout.Header.end());
  return layout;
}

//------------------------------------------------------------------------------
std::vector<PointSet> ListPointSets(const std::string& fileName, Kind& kind)
{
  if (Detect(fileName) != FileFormat::HDF5)
  {
    kind = Kind::Snapshot;
    return Describe(fileName).PointSets;
  }
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  Handle file = OpenKnownFile(fileName, kind);
  std::vector<PointSet> sets;
  std::vector<std::string> ignored;
  const std::vector<PartCount> counts = CountPoints(file.Get(), kind, fileName, nullptr);
  for (const PartCount& count : counts)
  {
    PointSet set;
    set.Name = count.Name;
    set.Positions = count.Positions;
    Handle group = vtkJZSnapshotHDF5::OpenGroup(file.Get(), set.Name, set.Name);
    set.Fields = ListFields(group.Get(), set.Name, ignored, nullptr);
    sets.push_back(set);
  }
  return sets;
}

//------------------------------------------------------------------------------
std::string SeriesEntry(const std::string& fileName, double& time, bool& hasTime)
{
  switch (Detect(fileName))
  {
    case FileFormat::GadgetBinary:
      hasTime = true;
      return vtkJZSnapshotGadgetBinary::SeriesEntry(fileName, time);
    case FileFormat::Tipsy:
      hasTime = true;
      return vtkJZSnapshotTipsy::SeriesEntry(fileName, time);
    default:
      break;
  }
  vtkJZSnapshotHDF5::ErrorSilencer silence;
  Kind kind;
  Handle file = OpenKnownFile(fileName, kind);
  std::vector<double> values;
  hasTime = vtkJZSnapshotHDF5::ReadAttribute(file.Get(), "Header", "Time", values);
  time = hasTime ? values[0] : 0.0;
  return PartFiles(fileName, NumberOfFiles(file.Get(), kind)).front();
}
}
