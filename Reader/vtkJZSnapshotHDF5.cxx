#include "vtkJZSnapshotHDF5.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace vtkJZSnapshotHDF5
{
//------------------------------------------------------------------------------
Handle& Handle::operator=(Handle&& other) noexcept
{
  if (this != &other)
  {
    this->Reset();
    this->Id = other.Id;
    this->Close = other.Close;
    other.Id = H5I_INVALID_HID;
  }
  return *this;
}

//------------------------------------------------------------------------------
void Handle::Reset()
{
  if (this->Id >= 0 && this->Close)
  {
    this->Close(this->Id);
  }
  this->Id = H5I_INVALID_HID;
}

//------------------------------------------------------------------------------
ErrorSilencer::ErrorSilencer()
{
  H5Eget_auto2(H5E_DEFAULT, &this->Function, &this->Data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

//------------------------------------------------------------------------------
ErrorSilencer::~ErrorSilencer()
{
  H5Eset_auto2(H5E_DEFAULT, this->Function, this->Data);
}

//------------------------------------------------------------------------------
namespace
{
herr_t KeepInnermost(unsigned, const H5E_error2_t* error, void* message)
{
  if (error && error->desc && *error->desc)
  {
    *static_cast<std::string*>(message) = error->desc;
  }
  return 0;
}

herr_t CollectHardLink(hid_t, const char* name, const H5L_info_t* info, void* names)
{
  if (info->type == H5L_TYPE_HARD)
  {
    static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  }
  return 0;
}

herr_t CollectAttribute(hid_t, const char* name, const H5A_info_t*, void* names)
{
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

template <class T>
bool ReadGroupAttribute(
  hid_t file, const std::string& group, const std::string& name, std::vector<T>& values)
{
  if (!IsGroup(file, group))
  {
    return false;
  }
  Handle g(H5Gopen2(file, group.c_str(), H5P_DEFAULT), H5Gclose);
  return g.Valid() && ReadAttribute(g.Get(), name, values) && !values.empty();
}

std::string WithReason(const std::string& message)
{
  const std::string reason = LastHDF5Message();
  return reason.empty() ? message : message + " (HDF5: " + reason + ")";
}

// Opens an attribute when it exists (invalid handle otherwise).
Handle OpenAttribute(hid_t object, const std::string& name)
{
  if (H5Aexists(object, name.c_str()) <= 0)
  {
    return {};
  }
  return { H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose };
}

// Number of elements of an attribute, with its type's class.
hssize_t AttributeSize(hid_t attribute, H5T_class_t& typeClass)
{
  Handle type(H5Aget_type(attribute), H5Tclose);
  Handle space(H5Aget_space(attribute), H5Sclose);
  if (!type.Valid() || !space.Valid())
  {
    return -1;
  }
  typeClass = H5Tget_class(type.Get());
  return H5Sget_simple_extent_npoints(space.Get());
}

// Whether a link resolves to an object of the given identifier type.
bool IsObjectOfType(hid_t location, const std::string& path, H5I_type_t kind)
{
  if (!Exists(location, path))
  {
    return false;
  }
  Handle object(H5Oopen(location, path.c_str(), H5P_DEFAULT), H5Oclose);
  return object.Valid() && H5Iget_type(object.Get()) == kind;
}
}

//------------------------------------------------------------------------------
std::string LastHDF5Message()
{
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, KeepInnermost, &message);
  return message;
}

//------------------------------------------------------------------------------
bool HasHDF5Signature(const std::string& fileName)
{
  static const char signature[8] = { '\211', 'H', 'D', 'F', '\r', '\n', '\032', '\n' };
  std::ifstream file(fileName, std::ios::binary);
  // The superblock may start at 0, 512, 1024, 2048, ... (a user block before it).
  for (std::streamoff offset = 0; file && offset < (std::streamoff(1) << 40);
       offset = offset ? offset * 2 : 512)
  {
    char head[8];
    file.seekg(offset);
    if (!file.read(head, 8))
    {
      return false;
    }
    if (std::memcmp(head, signature, 8) == 0)
    {
      return true;
    }
  }
  return false;
}

//------------------------------------------------------------------------------
Handle OpenFile(const std::string& fileName, hid_t fapl)
{
  if (!std::ifstream(fileName, std::ios::binary))
  {
    throw Error("Cannot open '" + fileName + "': the file does not exist or is not readable.");
  }
  Handle file(H5Fopen(fileName.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
  if (!file.Valid())
  {
    const std::string reason = LastHDF5Message();
    std::string message = "Cannot open '" + fileName + "' as HDF5: ";
    message += HasHDF5Signature(fileName)
      ? "the file is damaged or truncated" + (reason.empty() ? "" : " (HDF5: " + reason + ")")
      : std::string("it is not an HDF5 file (nor a Gadget binary or TIPSY snapshot)");
    throw Error(message + ".");
  }
  return file;
}

//------------------------------------------------------------------------------
bool Exists(hid_t location, const std::string& path)
{
  // H5Lexists fails (rather than answering no) when an intermediate group is
  // missing, so the path is checked one component at a time.
  std::size_t end = 0;
  while (end != std::string::npos)
  {
    end = path.find('/', end + 1);
    const std::string prefix = path.substr(0, end);
    if (!prefix.empty() && H5Lexists(location, prefix.c_str(), H5P_DEFAULT) <= 0)
    {
      return false;
    }
  }
  return true;
}

//------------------------------------------------------------------------------
bool IsGroup(hid_t location, const std::string& path)
{
  return IsObjectOfType(location, path, H5I_GROUP);
}

//------------------------------------------------------------------------------
bool IsDataset(hid_t location, const std::string& path)
{
  return IsObjectOfType(location, path, H5I_DATASET);
}

//------------------------------------------------------------------------------
Handle OpenGroup(hid_t location, const std::string& path, const std::string& what)
{
  Handle group(H5Gopen2(location, path.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.Valid())
  {
    throw Error(WithReason("Cannot open the group " + what));
  }
  return group;
}

//------------------------------------------------------------------------------
Handle OpenDataset(hid_t location, const std::string& path, const std::string& what)
{
  Handle dataset(H5Dopen2(location, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.Valid())
  {
    throw Error(WithReason("Cannot open the dataset " + what));
  }
  return dataset;
}

//------------------------------------------------------------------------------
std::vector<std::string> MemberNames(hid_t group)
{
  std::vector<std::string> names;
  hsize_t index = 0;
  H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, CollectHardLink, &names);
  return names;
}

//------------------------------------------------------------------------------
std::vector<std::string> AttributeNames(hid_t object)
{
  std::vector<std::string> names;
  hsize_t index = 0;
  H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &index, CollectAttribute, &names);
  return names;
}

//------------------------------------------------------------------------------
bool ReadAttribute(hid_t object, const std::string& name, std::vector<double>& values)
{
  Handle attribute = OpenAttribute(object, name);
  H5T_class_t typeClass = H5T_NO_CLASS;
  const hssize_t n = attribute.Valid() ? AttributeSize(attribute.Get(), typeClass) : -1;
  if (n < 0 || (typeClass != H5T_INTEGER && typeClass != H5T_FLOAT))
  {
    return false;
  }
  values.assign(static_cast<std::size_t>(n), 0.0);
  return n == 0 || H5Aread(attribute.Get(), H5T_NATIVE_DOUBLE, values.data()) >= 0;
}

//------------------------------------------------------------------------------
bool ReadAttribute(hid_t object, const std::string& name, std::vector<std::int64_t>& values)
{
  Handle attribute = OpenAttribute(object, name);
  H5T_class_t typeClass = H5T_NO_CLASS;
  const hssize_t n = attribute.Valid() ? AttributeSize(attribute.Get(), typeClass) : -1;
  if (n < 0 || typeClass != H5T_INTEGER)
  {
    return false;
  }
  values.assign(static_cast<std::size_t>(n), 0);
  return n == 0 || H5Aread(attribute.Get(), H5T_NATIVE_INT64, values.data()) >= 0;
}

//------------------------------------------------------------------------------
bool ReadAttribute(
  hid_t file, const std::string& group, const std::string& name, std::vector<double>& values)
{
  return ReadGroupAttribute(file, group, name, values);
}

//------------------------------------------------------------------------------
bool ReadAttribute(
  hid_t file, const std::string& group, const std::string& name, std::vector<std::int64_t>& values)
{
  return ReadGroupAttribute(file, group, name, values);
}

//------------------------------------------------------------------------------
bool ReadAttribute(hid_t object, const std::string& name, std::string& value)
{
  Handle attribute = OpenAttribute(object, name);
  H5T_class_t typeClass = H5T_NO_CLASS;
  const hssize_t n = attribute.Valid() ? AttributeSize(attribute.Get(), typeClass) : -1;
  if (n < 1 || typeClass != H5T_STRING)
  {
    return false;
  }
  Handle fileType(H5Aget_type(attribute.Get()), H5Tclose);
  Handle memoryType(H5Tcopy(H5T_C_S1), H5Tclose);
  if (H5Tis_variable_str(fileType.Get()) > 0)
  {
    H5Tset_size(memoryType.Get(), H5T_VARIABLE);
    std::vector<char*> strings(static_cast<std::size_t>(n), nullptr);
    if (H5Aread(attribute.Get(), memoryType.Get(), strings.data()) < 0)
    {
      return false;
    }
    value = strings[0] ? strings[0] : "";
    for (char* s : strings)
    {
      H5free_memory(s);
    }
    return true;
  }
  // One more byte than stored: the memory type is null-terminated, and a
  // null-padded string that fills its size would lose its last character.
  const std::size_t size = H5Tget_size(fileType.Get()) + 1;
  H5Tset_size(memoryType.Get(), size);
  std::vector<char> buffer(size * static_cast<std::size_t>(n), '\0');
  if (H5Aread(attribute.Get(), memoryType.Get(), buffer.data()) < 0)
  {
    return false;
  }
  value.assign(buffer.data(), strnlen(buffer.data(), size));
  return true;
}

//------------------------------------------------------------------------------
std::vector<hsize_t> Shape(hid_t dataset)
{
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int rank = space.Valid() ? H5Sget_simple_extent_ndims(space.Get()) : -1;
  std::vector<hsize_t> dims(rank > 0 ? rank : 0);
  if (rank > 0)
  {
    H5Sget_simple_extent_dims(space.Get(), dims.data(), nullptr);
  }
  return dims;
}

//------------------------------------------------------------------------------
void ReadRows(hid_t dataset, hsize_t start, hsize_t count, hsize_t stride, hid_t memoryType,
  void* buffer, hid_t transfer, const std::string& what)
{
  if (count == 0)
  {
    return;
  }
  Handle fileSpace(H5Dget_space(dataset), H5Sclose);
  const int rank = fileSpace.Valid() ? H5Sget_simple_extent_ndims(fileSpace.Get()) : -1;
  if (rank < 1)
  {
    throw Error(WithReason("Cannot read the shape of " + what));
  }
  std::vector<hsize_t> dims(rank), offset(rank, 0), step(rank, 1), counts(rank);
  H5Sget_simple_extent_dims(fileSpace.Get(), dims.data(), nullptr);
  if (start + (count - 1) * stride >= dims[0])
  {
    std::ostringstream msg;
    msg << "Rows " << start << " to " << start + (count - 1) * stride << " of " << what
        << " do not exist; it has " << dims[0] << " rows.";
    throw Error(msg.str());
  }
  counts = dims;
  offset[0] = start;
  step[0] = stride;
  counts[0] = count;
  Handle memorySpace(H5Screate_simple(rank, counts.data(), nullptr), H5Sclose);
  if (H5Sselect_hyperslab(
        fileSpace.Get(), H5S_SELECT_SET, offset.data(), step.data(), counts.data(), nullptr) < 0 ||
    H5Dread(dataset, memoryType, memorySpace.Get(), fileSpace.Get(), transfer, buffer) < 0)
  {
    throw Error(WithReason("Cannot read " + what));
  }
}
}
