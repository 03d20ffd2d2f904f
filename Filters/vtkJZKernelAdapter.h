/**
 * @file   vtkJZKernelAdapter.h
 * @brief  Bridge between VTK data objects and the jz kernels' raw buffers.
 *
 * Shared by all tree filters (and read in order by vtkJZParticleInput): the
 * kernels take interleaved coordinates, per-point doubles and 64-bit ids in
 * caller memory, so this header hands out pointers straight into VTK arrays
 * when the layout already matches and owned copies otherwise; results go
 * back as VTK arrays split onto the pieces. Not wrapped; include it only
 * from .cxx files (it pulls in the kernel headers).
 */
#ifndef vtkJZKernelAdapter_h
#define vtkJZKernelAdapter_h

#include "vtkSmartPointer.h"
#include "vtkType.h"

#include "jz/Backend.h"
#include "jz/Config.h"
#include "jz/HugePages.h"
#include "jz/Validate.h"

#include <cstddef>
#include <initializer_list>
#include <new>
#include <string>
#include <utility>
#include <vector>

class vtkAlgorithm;
class vtkDataArray;
namespace jz
{
class Communicator;
}
class vtkDataObject;
class vtkDataSet;
class vtkInformation;

namespace vtkJZKernelAdapter
{
/// The kernel backend of a `Device` property value (vtkJZDevice): jz::Backend
/// has the property's values (unknown -> Auto).
jz::Backend ToBackend(int device);

/// The box (xmin xmax ymin ymax zmin zmax) as a kernel problem's `boxLo`
/// and `boxHi`.
void SplitBox(const double box[6], double lo[3], double hi[3]);

/// Sets a kernel problem's (or input's) `periodic`, `boxLo` and `boxHi`.
template <class Problem>
void SetPeriodicBox(bool periodic, const double box[6], Problem& problem)
{
  problem.periodic = periodic;
  SplitBox(box, problem.boxLo, problem.boxHi);
}

/// The kernels' input rules (jz/InputNames.h) in the filters' words, the
/// one home of the names: messages name the properties (NumberOfNeighbors,
/// LinkingLength, BoxBounds, Softening, ...).
jz::InputNames PropertyNames();

/// The first property whose value lies outside its range
/// (jz/ParameterRanges.h, the one home of the ranges), or an empty string.
std::string RangeError(std::initializer_list<std::pair<jz::ParameterRange, double>> properties);

/// Why `BoxBounds` (xmin xmax ymin ymax zmin zmax) is not a usable periodic
/// box, or an empty string when it is (jz::periodicBoxError).
std::string PeriodicBoxError(const double bounds[6]);

/// The point array chosen by an input-array selection (pass the filter's
/// GetInputArrayInformation(idx)), or nullptr for none: unset, empty, or
/// "None" (how the GUI and pvpython say "no array") unless some block of the
/// input really has an array called so.
const char* SelectedArrayName(vtkInformation* arrayInformation, vtkDataObject* input);

/// Read-only buffer of T: `data` points either into VTK memory or into
/// `storage`, which owns a converted copy.
template <class T>
struct Buffer
{
  const T* data = nullptr;
  std::size_t size = 0; // number of tuples
  std::vector<T> storage;

  void Adopt() { data = storage.data(); }
};

/// VTK_FLOAT when the data set stores its points as floats, else VTK_DOUBLE
/// (double points, other types, and implicit points such as an image grid's).
int PointPrecision(vtkDataSet* dataSet);

/// Interleaved xyz coordinates of the data set's points in precision T.
/// Zero-copy for a vtkPointSet whose points are an AOS array of T; converted
/// otherwise (the conversion float -> double is exact; callers only ask for
/// float when the points are float).
template <class T>
void GetCoordinates(vtkDataSet* dataSet, Buffer<T>& coords);

/// A point array with `numComponents` components and one tuple per point,
/// as doubles (zero-copy for a matching vtkDoubleArray). Returns false and
/// fills `error` (naming the array as `what`) when the component or tuple
/// count is wrong or a value is not finite.
bool GetPointValues(vtkDataArray* array, vtkIdType numPoints, int numComponents,
  const std::string& what, Buffer<double>& values, std::string& error);

/// The data set's global point ids: the point data's GlobalIds attribute, or
/// else an integer point array named "GlobalIds". `ids.data` stays null when
/// there are none. Returns false with `error` when they exist but do not have
/// one value per point.
bool GetGlobalIds(vtkDataSet* dataSet, Buffer<jz::GlobalId>& ids, std::string& error);

/// The data sets of an input (itself, or the leaves of a composite, see
/// GetLeaves); false with `error` naming the `port` ("Input", "Query") when
/// a piece is not a data set, or not a point set with `pointSetsOnly`.
bool CollectPieces(vtkDataObject* data, bool pointSetsOnly, const char* port,
  std::vector<vtkDataSet*>& pieces, std::string& error);

/// The pieces of a data object whose points are concatenated for the
/// kernels: the object itself, or the non-null leaves of a composite data set
/// in traversal order (the same order as a vtkCompositeDataIterator with
/// SkipEmptyNodes on, which the filters also use to scatter results back).
std::vector<vtkDataObject*> GetLeaves(vtkDataObject* data);

/// Number of points of all pieces together.
vtkIdType CountPoints(const std::vector<vtkDataSet*>& pieces);

/// VTK_FLOAT when every piece with points stores them as floats, else VTK_DOUBLE.
int PointPrecision(const std::vector<vtkDataSet*>& pieces);

/// Coordinates of several pieces, concatenated (zero-copy for one AOS piece).
template <class T>
void GetCoordinates(const std::vector<vtkDataSet*>& pieces, Buffer<T>& coords);

/// The point array `name` of every piece, concatenated as doubles; each
/// piece must have it with `numComponents` components and one tuple per
/// point (else false with `error`). A null `name` means none (data null).
bool GetPointValues(const std::vector<vtkDataSet*>& pieces, const char* name, int numComponents,
  const std::string& what, Buffer<double>& values, std::string& error);

/// Global point ids of every piece, concatenated; none (data null) when no
/// piece has them; an error when only some pieces have them.
bool GetGlobalIds(
  const std::vector<vtkDataSet*>& pieces, Buffer<jz::GlobalId>& ids, std::string& error);

/// Progress and cancellation for the kernels: reports into
/// algorithm->UpdateProgress and aborts when the algorithm is asked to.
jz::RunControl MakeRunControl(vtkAlgorithm* algorithm);

/// Adds the field-data string array `JZDevice` naming the backend that ran.
void AddDeviceFieldData(vtkDataObject* output, jz::Backend backend);

/// @name Parallel runs (collective: every rank calls them at the same point)
///@{
/// The first failing rank's message ("rank r: ..." on several ranks) when
/// any rank passes a non-empty `localError`, else an empty string. Every
/// rank gets the same answer, so all of them stop together.
std::string AgreeOnError(jz::Communicator& comm, const std::string& localError);

/// Whether `local` is true on every rank.
bool AllRanks(jz::Communicator& comm, bool local);

/// Global ids of this rank's `numLocal` points, unique over all ranks: the
/// GlobalIds already in `ids` when the ranks with points have them, else the
/// point's index in the concatenation of all ranks' points in rank order
/// (with one process `ids` then stays null: the kernels use the input index,
/// which is the same). False with `error` (the same on every rank) when only
/// some ranks have GlobalIds.
bool MakeGlobalIds(
  jz::Communicator& comm, std::size_t numLocal, Buffer<jz::GlobalId>& ids, std::string& error);
///@}

/// Makes the data object of the output information `outInfo` an instance of
/// `like`'s class (RequestDataObject: an output of the input's type).
void MatchDataObjectType(vtkDataObject* like, vtkInformation* outInfo);

/// @name Output sentinels
/// In builds with the CMake option JZ_OUTPUT_SENTINELS (on in Debug builds and
/// in CI), result arrays that a kernel writes start filled with a value no
/// kernel writes (a NaN with a payload, a negative id below -1), and
/// AttachResults fails when any survives: every output value is written on
/// every path. Without the option both are no-ops.
///@{
void FillSentinel(vtkDataArray* array);
/// Throws jz::Error naming the first array with a value left unwritten.
void CheckWritten(const std::vector<vtkDataArray*>& arrays);
///@}

/// A new result array `name` of `numTuples` tuples of `numComponents`, for
/// a kernel to write (FillSentinel), on fresh memory that is huge pages
/// throughout when large (jz::allocHugePages): its first write costs a few
/// page faults instead of thousands.
template <class ArrayT>
vtkSmartPointer<ArrayT> NewArray(const char* name, vtkIdType numTuples, int numComponents = 1)
{
  using Value = typename ArrayT::ValueType;
  auto array = vtkSmartPointer<ArrayT>::New();
  array->SetName(name);
  array->SetNumberOfComponents(numComponents);
  const vtkIdType count = numTuples * numComponents;
  void* storage = jz::allocHugePages(static_cast<std::size_t>(count) * sizeof(Value));
  if (!storage)
  {
    throw std::bad_alloc();
  }
  array->SetArray(static_cast<Value*>(storage), count, 0, ArrayT::VTK_DATA_ARRAY_FREE);
  FillSentinel(array);
  return array;
}

/// The same, filled with `values` (numTuples * numComponents of them).
template <class ArrayT, class V>
vtkSmartPointer<ArrayT> NewArray(
  const char* name, const V* values, vtkIdType numTuples, int numComponents = 1)
{
  auto array = NewArray<ArrayT>(name, numTuples, numComponents);
  const vtkIdType count = numTuples * numComponents;
  for (vtkIdType i = 0; i < count; ++i)
  {
    array->SetValue(i, static_cast<typename ArrayT::ValueType>(values[i]));
  }
  return array;
}

/// `output` becomes a shallow copy of `target` with the result arrays (one
/// tuple per point of target's pieces, concatenated in GetLeaves order) split
/// back onto the pieces; `activeScalars` names the active scalars. Checks
/// first that the arrays are written (CheckWritten).
void AttachResults(vtkDataObject* target, vtkDataObject* output,
  const std::vector<vtkDataArray*>& results, const char* activeScalars);

/// Reports the kernel's warnings (jz::RunInfo::warnings, the same on every
/// rank) as the algorithm's warnings, on rank 0. With the environment
/// variable JZ_RUNINFO set (non-empty, not 0), also prints the kernel's stage
/// times and counters to stderr, one line per entry, prefixed with the
/// filter's name and the rank (for benchmarks).
void ReportRunInfo(vtkAlgorithm* algorithm, const char* filter, const jz::RunInfo& info,
  const jz::Communicator& comm);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZKernelAdapter.h
