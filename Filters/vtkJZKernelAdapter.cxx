#include "vtkJZKernelAdapter.h"

#include "vtkJZDevice.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkAlgorithm.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSet.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkPoints.h"
#include "vtkSmartPointer.h"
#include "vtkStringArray.h"
#include "vtkVariant.h"

#include "jz/Communicator.h"
#include "jz/HugePages.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <type_traits>

// vtkIdType and jz::GlobalId are both signed 64-bit integers (long long vs
// long), so id arrays are shared between them without copying.
static_assert(sizeof(vtkIdType) == sizeof(jz::GlobalId) && std::is_signed<vtkIdType>::value,
  "the JZTree filters need 64-bit vtkIdType");

static_assert(vtkJZDevice::DEVICE_AUTO == static_cast<int>(jz::Backend::Auto) &&
    vtkJZDevice::DEVICE_CPU == static_cast<int>(jz::Backend::CPU) &&
    vtkJZDevice::DEVICE_CUDA == static_cast<int>(jz::Backend::CUDA),
  "the Device values are jz::Backend's");

namespace vtkJZKernelAdapter
{
//------------------------------------------------------------------------------
jz::Backend ToBackend(int device)
{
  switch (device)
  {
    case static_cast<int>(jz::Backend::CPU):
      return jz::Backend::CPU;
    case static_cast<int>(jz::Backend::CUDA):
      return jz::Backend::CUDA;
    default:
      return jz::Backend::Auto;
  }
}

//------------------------------------------------------------------------------
void SplitBox(const double box[6], double lo[3], double hi[3])
{
  for (int d = 0; d < 3; ++d)
  {
    lo[d] = box[2 * d];
    hi[d] = box[2 * d + 1];
  }
}

//------------------------------------------------------------------------------
jz::InputNames PropertyNames()
{
  jz::InputNames names;
  names.neighbourCount = "NumberOfNeighbors (K)";
  names.linkingLength = "LinkingLength";
  names.periodicBox = "BoxBounds";
  names.point = names.sourcePoint = "Input point";
  names.queryPoint = "Query point";
  names.sourceMasses = "MassArray";
  names.openingAngle = "OpeningAngle";
  names.softening = "Softening";
  names.gravitationalConstant = "GravitationalConstant";
  names.overdensity = "Overdensity";
  // Only a critical reference density is a property; the mean one is derived.
  names.referenceDensity = "CriticalDensity";
  return names;
}

//------------------------------------------------------------------------------
std::string RangeError(std::initializer_list<std::pair<jz::ParameterRange, double>> properties)
{
  for (const auto& property : properties)
  {
    std::string error = jz::rangeError(property.first, property.second);
    if (!error.empty())
    {
      return error;
    }
  }
  return std::string();
}

//------------------------------------------------------------------------------
std::string PeriodicBoxError(const double bounds[6])
{
  double lo[3], hi[3];
  SplitBox(bounds, lo, hi);
  return jz::periodicBoxError(true, lo, hi, PropertyNames());
}

//------------------------------------------------------------------------------
const char* SelectedArrayName(vtkInformation* info, vtkDataObject* input)
{
  const char* name = info && info->Has(vtkDataObject::FIELD_NAME())
    ? info->Get(vtkDataObject::FIELD_NAME())
    : nullptr;
  if (!name || !*name)
  {
    return nullptr;
  }
  if (std::strcmp(name, "None") == 0)
  {
    for (vtkDataObject* leaf : GetLeaves(input))
    {
      auto* ds = vtkDataSet::SafeDownCast(leaf);
      if (ds && ds->GetPointData()->GetAbstractArray(name))
      {
        return name;
      }
    }
    return nullptr;
  }
  return name;
}

//------------------------------------------------------------------------------
int PointPrecision(vtkDataSet* dataSet)
{
  auto* pointSet = vtkPointSet::SafeDownCast(dataSet);
  if (pointSet && pointSet->GetPoints() && pointSet->GetPoints()->GetDataType() == VTK_FLOAT)
  {
    return VTK_FLOAT;
  }
  return VTK_DOUBLE;
}

//------------------------------------------------------------------------------
template <class T>
void GetCoordinates(vtkDataSet* dataSet, Buffer<T>& coords)
{
  coords = Buffer<T>();
  const vtkIdType n = dataSet ? dataSet->GetNumberOfPoints() : 0;
  coords.size = static_cast<std::size_t>(n);
  if (n == 0)
  {
    return;
  }
  auto* pointSet = vtkPointSet::SafeDownCast(dataSet);
  vtkDataArray* array =
    pointSet && pointSet->GetPoints() ? pointSet->GetPoints()->GetData() : nullptr;
  if (auto* aos = vtkAOSDataArrayTemplate<T>::FastDownCast(array))
  {
    if (aos->GetNumberOfComponents() == 3)
    {
      coords.data = aos->GetPointer(0);
      return;
    }
  }
  coords.storage.resize(3 * coords.size);
  double p[3];
  for (vtkIdType i = 0; i < n; ++i)
  {
    if (array)
    {
      array->GetTuple(i, p);
    }
    else
    {
      dataSet->GetPoint(i, p); // implicit points, e.g. vtkImageData
    }
    for (int d = 0; d < 3; ++d)
    {
      coords.storage[3 * i + d] = static_cast<T>(p[d]);
    }
  }
  coords.Adopt();
}

template void GetCoordinates<float>(vtkDataSet*, Buffer<float>&);
template void GetCoordinates<double>(vtkDataSet*, Buffer<double>&);

//------------------------------------------------------------------------------
// The first out.size() values of `in` into `out`; true (the conversion ran).
template <class V>
static bool CopyAsDoubles(const V* in, std::vector<double>& out)
{
  std::copy_n(in, out.size(), out.begin());
  return true;
}

//------------------------------------------------------------------------------
bool GetPointValues(vtkDataArray* array, vtkIdType numPoints, int numComponents,
  const std::string& what, Buffer<double>& values, std::string& error)
{
  values = Buffer<double>();
  if (!array)
  {
    return true;
  }
  std::ostringstream msg;
  const std::string name = array->GetName() ? array->GetName() : "";
  if (array->GetNumberOfComponents() != numComponents)
  {
    msg << what << " '" << name << "' has " << array->GetNumberOfComponents()
        << " components; it must have " << numComponents << ".";
    error = msg.str();
    return false;
  }
  if (array->GetNumberOfTuples() != numPoints)
  {
    msg << what << " '" << name << "' has " << array->GetNumberOfTuples()
        << " tuples, but the input has " << numPoints << " points.";
    error = msg.str();
    return false;
  }
  values.size = static_cast<std::size_t>(numPoints);
  const std::size_t count = values.size * numComponents;
  if (auto* aos = vtkAOSDataArrayTemplate<double>::FastDownCast(array))
  {
    values.data = aos->GetPointer(0);
  }
  else
  {
    values.storage.resize(count);
    // Contiguous values of another numeric type: converted in one typed loop
    // (the same values as GetComponent's, without a virtual call each).
    bool typed = false;
    if (array->HasStandardMemoryLayout())
    {
      switch (array->GetDataType())
      {
        vtkTemplateMacro(typed = CopyAsDoubles(
                           static_cast<const VTK_TT*>(array->GetVoidPointer(0)), values.storage));
      }
    }
    if (!typed)
    {
      for (std::size_t i = 0; i < count; ++i)
      {
        values.storage[i] = array->GetComponent(
          static_cast<vtkIdType>(i / numComponents), static_cast<int>(i % numComponents));
      }
    }
    values.Adopt();
  }
  const std::string nonFinite =
    jz::nonFiniteValueError(values.data, values.size, numComponents, what + " '" + name + "'");
  if (!nonFinite.empty())
  {
    error = nonFinite;
    values = Buffer<double>();
    return false;
  }
  return true;
}

//------------------------------------------------------------------------------
static bool IsIntegerType(int type)
{
  switch (type)
  {
    case VTK_CHAR:
    case VTK_SIGNED_CHAR:
    case VTK_UNSIGNED_CHAR:
    case VTK_SHORT:
    case VTK_UNSIGNED_SHORT:
    case VTK_INT:
    case VTK_UNSIGNED_INT:
    case VTK_LONG:
    case VTK_UNSIGNED_LONG:
    case VTK_LONG_LONG:
    case VTK_UNSIGNED_LONG_LONG:
    case VTK_ID_TYPE:
      return true;
    default:
      return false;
  }
}

//------------------------------------------------------------------------------
bool GetGlobalIds(vtkDataSet* dataSet, Buffer<jz::GlobalId>& ids, std::string& error)
{
  ids = Buffer<jz::GlobalId>();
  vtkPointData* pd = dataSet ? dataSet->GetPointData() : nullptr;
  if (!pd)
  {
    return true;
  }
  vtkDataArray* array = pd->GetGlobalIds();
  if (!array)
  {
    array = pd->GetArray("GlobalIds");
  }
  // Only integer arrays are identifiers; a float array that happens to be
  // called GlobalIds is ignored.
  if (!array || !IsIntegerType(array->GetDataType()))
  {
    return true;
  }
  const vtkIdType n = dataSet->GetNumberOfPoints();
  if (array->GetNumberOfComponents() != 1 || array->GetNumberOfTuples() != n)
  {
    std::ostringstream msg;
    msg << "The GlobalIds point array '" << (array->GetName() ? array->GetName() : "") << "' has "
        << array->GetNumberOfTuples() << " tuples of " << array->GetNumberOfComponents()
        << " components; it must have one value for each of the " << n << " points.";
    error = msg.str();
    return false;
  }
  ids.size = static_cast<std::size_t>(n);
  if (auto* idArray = vtkIdTypeArray::FastDownCast(array))
  {
    ids.data = reinterpret_cast<const jz::GlobalId*>(idArray->GetPointer(0));
    return true;
  }
  ids.storage.resize(ids.size);
  if (array->HasStandardMemoryLayout())
  {
    // Contiguous values of an integer type: converted in one typed loop.
    switch (array->GetDataType())
    {
      vtkTemplateMacro(
        std::copy_n(static_cast<const VTK_TT*>(array->GetVoidPointer(0)), n, ids.storage.begin()));
    }
  }
  else
  {
    for (vtkIdType i = 0; i < n; ++i)
    {
      // Exact for every integer type up to 64 bits (GetComponent would go
      // through double and round ids above 2^53).
      ids.storage[i] = static_cast<jz::GlobalId>(array->GetVariantValue(i).ToTypeInt64());
    }
  }
  ids.Adopt();
  return true;
}

//------------------------------------------------------------------------------
std::vector<vtkDataObject*> GetLeaves(vtkDataObject* data)
{
  std::vector<vtkDataObject*> leaves;
  if (auto* composite = vtkCompositeDataSet::SafeDownCast(data))
  {
    vtkSmartPointer<vtkCompositeDataIterator> it;
    it.TakeReference(composite->NewIterator());
    it->SkipEmptyNodesOn();
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
    {
      leaves.push_back(it->GetCurrentDataObject());
    }
  }
  else if (data)
  {
    leaves.push_back(data);
  }
  return leaves;
}

//------------------------------------------------------------------------------
bool CollectPieces(vtkDataObject* data, bool pointSetsOnly, const char* port,
  std::vector<vtkDataSet*>& pieces, std::string& error)
{
  pieces.clear();
  for (vtkDataObject* leaf : GetLeaves(data))
  {
    auto* ds = vtkDataSet::SafeDownCast(leaf);
    if (!ds || (pointSetsOnly && !vtkPointSet::SafeDownCast(ds)))
    {
      error = std::string("The ") + port + " holds a " + leaf->GetClassName() + "; it must be " +
        (pointSetsOnly ? "a point set (e.g. vtkPolyData)." : "a data set.");
      return false;
    }
    pieces.push_back(ds);
  }
  return true;
}

//------------------------------------------------------------------------------
vtkIdType CountPoints(const std::vector<vtkDataSet*>& pieces)
{
  vtkIdType n = 0;
  for (vtkDataSet* piece : pieces)
  {
    n += piece->GetNumberOfPoints();
  }
  return n;
}

//------------------------------------------------------------------------------
int PointPrecision(const std::vector<vtkDataSet*>& pieces)
{
  for (vtkDataSet* piece : pieces)
  {
    if (piece->GetNumberOfPoints() > 0 && PointPrecision(piece) != VTK_FLOAT)
    {
      return VTK_DOUBLE;
    }
  }
  return VTK_FLOAT;
}

//------------------------------------------------------------------------------
template <class T>
void GetCoordinates(const std::vector<vtkDataSet*>& pieces, Buffer<T>& coords)
{
  if (pieces.size() == 1)
  {
    GetCoordinates(pieces[0], coords);
    return;
  }
  coords = Buffer<T>();
  coords.size = static_cast<std::size_t>(CountPoints(pieces));
  coords.storage.resize(3 * coords.size);
  std::size_t offset = 0;
  for (vtkDataSet* piece : pieces)
  {
    Buffer<T> part;
    GetCoordinates(piece, part);
    std::copy(part.data, part.data + 3 * part.size, coords.storage.data() + 3 * offset);
    offset += part.size;
  }
  coords.Adopt();
}

template void GetCoordinates<float>(const std::vector<vtkDataSet*>&, Buffer<float>&);
template void GetCoordinates<double>(const std::vector<vtkDataSet*>&, Buffer<double>&);

//------------------------------------------------------------------------------
bool GetPointValues(const std::vector<vtkDataSet*>& pieces, const char* name, int numComponents,
  const std::string& what, Buffer<double>& values, std::string& error)
{
  values = Buffer<double>();
  if (!name)
  {
    return true;
  }
  std::vector<Buffer<double>> parts(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i)
  {
    vtkDataArray* array = pieces[i]->GetPointData()->GetArray(name);
    if (!array && pieces[i]->GetNumberOfPoints() == 0)
    {
      continue; // an empty piece (e.g. of a rank without particles) may lack it
    }
    if (!array)
    {
      std::ostringstream msg;
      msg << what << " '" << name << "' is not a numeric point array of the input";
      if (pieces.size() > 1)
      {
        msg << " (missing in block " << i << ")";
      }
      msg << ".";
      error = msg.str();
      return false;
    }
    if (!GetPointValues(
          array, pieces[i]->GetNumberOfPoints(), numComponents, what, parts[i], error))
    {
      return false;
    }
  }
  if (parts.size() == 1)
  {
    values = std::move(parts[0]);
    if (!values.storage.empty())
    {
      values.Adopt();
    }
    return true;
  }
  values.size = static_cast<std::size_t>(CountPoints(pieces));
  values.storage.reserve(values.size * numComponents);
  for (const Buffer<double>& part : parts)
  {
    if (!part.data)
    {
      continue;
    }
    values.storage.insert(values.storage.end(), part.data, part.data + part.size * numComponents);
  }
  values.Adopt();
  return true;
}

//------------------------------------------------------------------------------
bool GetGlobalIds(
  const std::vector<vtkDataSet*>& pieces, Buffer<jz::GlobalId>& ids, std::string& error)
{
  if (pieces.size() == 1)
  {
    return GetGlobalIds(pieces[0], ids, error);
  }
  ids = Buffer<jz::GlobalId>();
  std::vector<Buffer<jz::GlobalId>> parts(pieces.size());
  std::size_t with = 0, without = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i)
  {
    if (!GetGlobalIds(pieces[i], parts[i], error))
    {
      return false;
    }
    if (pieces[i]->GetNumberOfPoints() > 0)
    {
      (parts[i].data ? with : without) += 1;
    }
  }
  if (with == 0)
  {
    return true;
  }
  if (without > 0)
  {
    error = "GlobalIds are present in some blocks of the input but not in others.";
    return false;
  }
  ids.size = static_cast<std::size_t>(CountPoints(pieces));
  ids.storage.reserve(ids.size);
  for (const Buffer<jz::GlobalId>& part : parts)
  {
    if (part.data)
    {
      ids.storage.insert(ids.storage.end(), part.data, part.data + part.size);
    }
  }
  ids.Adopt();
  return true;
}

//------------------------------------------------------------------------------
jz::RunControl MakeRunControl(vtkAlgorithm* algorithm)
{
  jz::RunControl control;
  control.progress = [algorithm](double fraction)
  {
    algorithm->UpdateProgress(fraction);
    return !algorithm->CheckAbort();
  };
  return control;
}

//------------------------------------------------------------------------------
void AddDeviceFieldData(vtkDataObject* output, jz::Backend backend)
{
  vtkNew<vtkStringArray> device;
  device->SetName("JZDevice");
  device->InsertNextValue(jz::backendName(backend));
  vtkFieldData* fd = output->GetFieldData();
  if (!fd)
  {
    vtkNew<vtkFieldData> newFd;
    output->SetFieldData(newFd);
    fd = newFd;
  }
  fd->AddArray(device);
}

//------------------------------------------------------------------------------
std::string AgreeOnError(jz::Communicator& comm, const std::string& localError)
{
  try
  {
    jz::agreeOnErrors(comm, localError);
  }
  catch (const jz::Error& e)
  {
    return e.what();
  }
  return std::string();
}

//------------------------------------------------------------------------------
bool AllRanks(jz::Communicator& comm, bool local)
{
  std::int64_t notHere = local ? 0 : 1;
  comm.allReduceSum(&notHere, 1);
  return notHere == 0;
}

//------------------------------------------------------------------------------
bool MakeGlobalIds(
  jz::Communicator& comm, std::size_t numLocal, Buffer<jz::GlobalId>& ids, std::string& error)
{
  std::int64_t counts[2] = { numLocal > 0 && ids.data ? 1 : 0, numLocal > 0 && !ids.data ? 1 : 0 };
  comm.allReduceSum(counts, 2);
  if (counts[0] > 0 && counts[1] > 0)
  {
    std::ostringstream msg;
    msg << "GlobalIds are present on " << counts[0] << " rank(s) but missing on " << counts[1]
        << " other rank(s) with points; give every point a GlobalId or none.";
    error = msg.str();
    return false;
  }
  if (counts[0] > 0 || comm.size() == 1)
  {
    return true;
  }
  // No GlobalIds anywhere: the index in the concatenation of all ranks' points.
  const std::vector<std::int64_t> all =
    jz::allGatherConcat(comm, std::vector<std::int64_t>{ static_cast<std::int64_t>(numLocal) });
  std::int64_t offset = 0;
  for (int r = 0; r < comm.rank(); ++r)
  {
    offset += all[r];
  }
  ids = Buffer<jz::GlobalId>();
  ids.size = numLocal;
  // Fresh memory written once: on huge pages, and not zero-filled first.
  jz::reserveHugePages(ids.storage, numLocal);
  for (std::size_t i = 0; i < numLocal; ++i)
  {
    ids.storage.push_back(static_cast<jz::GlobalId>(offset + static_cast<std::int64_t>(i)));
  }
  ids.Adopt();
  return true;
}

//------------------------------------------------------------------------------
void MatchDataObjectType(vtkDataObject* like, vtkInformation* outInfo)
{
  vtkDataObject* output = vtkDataObject::GetData(outInfo);
  if (!output || std::strcmp(output->GetClassName(), like->GetClassName()) != 0)
  {
    vtkDataObject* newOutput = like->NewInstance();
    outInfo->Set(vtkDataObject::DATA_OBJECT(), newOutput);
    newOutput->Delete();
  }
}

//------------------------------------------------------------------------------
namespace
{
// Values no kernel writes: NaNs with a payload, and an id below -1.
constexpr std::uint32_t kFloatSentinel = 0x7FC5E47Du;
constexpr std::uint64_t kDoubleSentinel = 0x7FF85E475E475E47ull;
constexpr vtkIdType kIdSentinel = -0x5E475E47;

template <class V, class Bits>
vtkIdType CountBits(vtkDataArray* array, Bits bits)
{
  const V* values = static_cast<const V*>(array->GetVoidPointer(0));
  const vtkIdType n = array->GetNumberOfValues();
  vtkIdType count = 0;
  for (vtkIdType i = 0; i < n; ++i)
  {
    Bits b;
    std::memcpy(&b, values + i, sizeof b);
    count += b == bits ? 1 : 0;
  }
  return count;
}

template <class V, class Bits>
void FillBits(vtkDataArray* array, Bits bits)
{
  V value;
  std::memcpy(&value, &bits, sizeof value);
  V* values = static_cast<V*>(array->GetVoidPointer(0));
  std::fill(values, values + array->GetNumberOfValues(), value);
}
}

void FillSentinel(vtkDataArray* array)
{
#if JZ_OUTPUT_SENTINELS
  switch (array->GetDataType())
  {
    case VTK_FLOAT:
      FillBits<float>(array, kFloatSentinel);
      break;
    case VTK_DOUBLE:
      FillBits<double>(array, kDoubleSentinel);
      break;
    case VTK_ID_TYPE:
      FillBits<vtkIdType>(array, kIdSentinel);
      break;
    default:
      break;
  }
#else
  static_cast<void>(array);
#endif
}

void CheckWritten(const std::vector<vtkDataArray*>& arrays)
{
#if JZ_OUTPUT_SENTINELS
  for (vtkDataArray* array : arrays)
  {
    vtkIdType left = 0;
    switch (array->GetDataType())
    {
      case VTK_FLOAT:
        left = CountBits<float>(array, kFloatSentinel);
        break;
      case VTK_DOUBLE:
        left = CountBits<double>(array, kDoubleSentinel);
        break;
      case VTK_ID_TYPE:
        left = CountBits<vtkIdType>(array, kIdSentinel);
        break;
      default:
        break;
    }
    if (left > 0)
    {
      throw jz::Error(std::to_string(left) + " values of " + array->GetName() +
        " were not written (internal error)");
    }
  }
#else
  static_cast<void>(arrays);
#endif
}

//------------------------------------------------------------------------------
void AttachResults(vtkDataObject* target, vtkDataObject* output,
  const std::vector<vtkDataArray*>& results, const char* activeScalars)
{
  CheckWritten(results);
  auto* composite = vtkCompositeDataSet::SafeDownCast(target);
  if (!composite)
  {
    output->ShallowCopy(target);
    vtkPointData* pd = vtkDataSet::SafeDownCast(output)->GetPointData();
    for (vtkDataArray* array : results)
    {
      pd->AddArray(array);
    }
    pd->SetActiveScalars(activeScalars);
    return;
  }
  auto* outComposite = vtkCompositeDataSet::SafeDownCast(output);
  outComposite->CopyStructure(composite);
  vtkSmartPointer<vtkCompositeDataIterator> it;
  it.TakeReference(composite->NewIterator());
  it->SkipEmptyNodesOn(); // the traversal of GetLeaves
  vtkIdType offset = 0;
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
  {
    auto* piece = vtkDataSet::SafeDownCast(it->GetCurrentDataObject());
    auto copy = vtkSmartPointer<vtkDataSet>::Take(piece->NewInstance());
    copy->ShallowCopy(piece);
    const vtkIdType n = piece->GetNumberOfPoints();
    for (vtkDataArray* array : results)
    {
      auto slice = vtkSmartPointer<vtkDataArray>::Take(array->NewInstance());
      slice->SetName(array->GetName());
      slice->SetNumberOfComponents(array->GetNumberOfComponents());
      slice->SetNumberOfTuples(n);
      const std::size_t tupleBytes =
        static_cast<std::size_t>(array->GetNumberOfComponents()) * array->GetDataTypeSize();
      if (n > 0)
      {
        std::memcpy(slice->GetVoidPointer(0),
          static_cast<const char*>(array->GetVoidPointer(0)) + offset * tupleBytes, n * tupleBytes);
      }
      copy->GetPointData()->AddArray(slice);
    }
    copy->GetPointData()->SetActiveScalars(activeScalars);
    outComposite->SetDataSet(it, copy);
    offset += n;
  }
}

//------------------------------------------------------------------------------
void ReportRunInfo(vtkAlgorithm* algorithm, const char* filter, const jz::RunInfo& info,
  const jz::Communicator& comm)
{
  if (comm.rank() == 0)
  {
    for (const std::string& warning : info.warnings)
    {
      vtkWarningWithObjectMacro(algorithm, << filter << ": " << warning << ".");
    }
  }
  const char* env = std::getenv("JZ_RUNINFO");
  if (!env || !*env || std::strcmp(env, "0") == 0)
  {
    return;
  }
  std::ostringstream out;
  const std::string prefix = std::string("JZRUNINFO ") + filter + " rank " +
    std::to_string(comm.rank()) + "/" + std::to_string(comm.size()) + " ";
  out << prefix << "backend " << jz::backendName(info.backend) << "\n";
  for (const auto& s : info.stageSeconds)
  {
    out << prefix << "seconds \"" << s.first << "\" " << s.second << "\n";
  }
  for (const auto& c : info.counters)
  {
    out << prefix << "counter \"" << c.first << "\" " << c.second << "\n";
  }
  const std::string text = out.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}
}
