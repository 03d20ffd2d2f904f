#include "vtkJZTreeGravity.h"

#include "vtkJZCommunicator.h"
#include "vtkJZKernelAdapter.h"

#include "vtkDataObject.h"
#include "vtkDataSet.h"
#include "vtkDoubleArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPointSet.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "jz/Gravity.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZTreeGravity);

namespace
{
using vtkJZKernelAdapter::Buffer;
using Pieces = std::vector<vtkDataSet*>;

// The data sets of an input (itself, or the leaves of a composite); false
// with `error` when a piece is not of the required kind.
bool CollectPieces(
  vtkDataObject* data, bool pointSetsOnly, const char* port, Pieces& pieces, std::string& error)
{
  pieces.clear();
  for (vtkDataObject* leaf : vtkJZKernelAdapter::GetLeaves(data))
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

jz::GravityInputNames PropertyNames()
{
  jz::GravityInputNames names;
  names.openingAngle = "OpeningAngle";
  names.softening = "Softening";
  names.gravitationalConstant = "GravitationalConstant";
  names.masses = "MassArray";
  names.sourcePoint = "Input point";
  names.queryPoint = "Query point";
  return names;
}

// Runs the kernel in precision T over all ranks of `comm` and, only when it
// succeeds, fills `output` with a shallow copy of `target` plus the result
// arrays. Throws jz::Error (the same on every rank) on bad input.
template <class T>
void RunGravity(vtkAlgorithm* self, jz::Communicator& comm, const Pieces& sourcePieces,
  const Pieces* queryPieces, vtkDataObject* target, const Buffer<double>& masses,
  const jz::GravityProblem<T>& settings, jz::Backend backend, vtkDataObject* output)
{
  Buffer<T> sources, queries;
  vtkJZKernelAdapter::GetCoordinates(sourcePieces, sources);
  if (queryPieces)
  {
    vtkJZKernelAdapter::GetCoordinates(*queryPieces, queries);
  }
  const vtkIdType numQueries = static_cast<vtkIdType>(queryPieces ? queries.size : sources.size);

  jz::GravityProblem<T> problem = settings;
  problem.sources = sources.data;
  problem.numSources = sources.size;
  problem.sourceMasses = masses.data;
  // A rank without query points still runs a Query evaluation, not a self
  // query (which a null pointer would mean).
  static const T noQuery[3] = { 0, 0, 0 };
  problem.queries = queryPieces ? (queries.data ? queries.data : noQuery) : nullptr;
  problem.numQueries = queryPieces ? queries.size : 0;

  const std::string error =
    vtkJZKernelAdapter::AgreeOnError(comm, jz::gravityProblemError(problem, PropertyNames()));
  if (!error.empty())
  {
    throw jz::Error(error);
  }

  auto potential = vtkSmartPointer<vtkDoubleArray>::New();
  potential->SetName("Potential");
  potential->SetNumberOfTuples(numQueries);
  auto acceleration = vtkSmartPointer<vtkDoubleArray>::New();
  acceleration->SetName("Acceleration");
  acceleration->SetNumberOfComponents(3);
  acceleration->SetNumberOfTuples(numQueries);
  const jz::GravityResults results{ potential->GetPointer(0), acceleration->GetPointer(0) };

  const jz::RunInfo info = jz::computeGravityDistributed<T>(
    comm, problem, results, backend, vtkJZKernelAdapter::MakeRunControl(self));
  vtkJZKernelAdapter::ReportRunInfo("TreeGravity", info, comm);

  vtkJZKernelAdapter::AttachResults(target, output, { potential, acceleration }, "Potential");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZTreeGravity::vtkJZTreeGravity() = default;

//------------------------------------------------------------------------------
int vtkJZTreeGravity::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* query =
    this->GetNumberOfInputConnections(1) > 0 ? vtkDataObject::GetData(inputVector[1], 0) : nullptr;
  vtkDataObject* output = vtkDataObject::GetData(outputVector, 0);
  if (!output)
  {
    vtkErrorMacro("No output data object.");
    return 0;
  }
  output->Initialize(); // no partial result is ever left behind

  // Every rank takes part in every collective below, also one without points.
  std::unique_ptr<jz::Communicator> comm = vtkJZKernelAdapter::MakeCommunicator();

  std::string error;
  Pieces sourcePieces, queryPieces;
  if (CollectPieces(input, true, "Input", sourcePieces, error) && query)
  {
    CollectPieces(query, false, "Query", queryPieces, error);
  }
  Buffer<double> masses;
  if (error.empty())
  {
    vtkJZKernelAdapter::GetPointValues(sourcePieces,
      vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input), 1,
      "MassArray", masses, error);
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  std::int64_t counts[2] = { vtkJZKernelAdapter::CountPoints(sourcePieces),
    query ? vtkJZKernelAdapter::CountPoints(queryPieces) : 0 };
  comm->allReduceSum(counts, 2);
  if (counts[0] == 0 || (query && counts[1] == 0))
  {
    return 1; // empty input or query, empty output
  }

  static_assert(DEVICE_AUTO == static_cast<int>(jz::Backend::Auto) &&
      DEVICE_CPU == static_cast<int>(jz::Backend::CPU) &&
      DEVICE_CUDA == static_cast<int>(jz::Backend::CUDA),
    "the Device values are jz::Backend's");
  const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
  vtkDataObject* target = query ? query : input;
  const Pieces* queries = query ? &queryPieces : nullptr;
  // float only when every coordinate (on every rank) is float.
  const bool useFloat = vtkJZKernelAdapter::AllRanks(*comm,
    vtkJZKernelAdapter::PointPrecision(sourcePieces) == VTK_FLOAT &&
      (!query || vtkJZKernelAdapter::PointPrecision(queryPieces) == VTK_FLOAT));
  try
  {
    if (useFloat)
    {
      jz::GravityProblem<float> s;
      s.openingAngle = this->OpeningAngle;
      s.softening = this->Softening;
      s.gravitationalConstant = this->GravitationalConstant;
      RunGravity<float>(this, *comm, sourcePieces, queries, target, masses, s, backend, output);
    }
    else
    {
      jz::GravityProblem<double> s;
      s.openingAngle = this->OpeningAngle;
      s.softening = this->Softening;
      s.gravitationalConstant = this->GravitationalConstant;
      RunGravity<double>(this, *comm, sourcePieces, queries, target, masses, s, backend, output);
    }
  }
  catch (const jz::Aborted&)
  {
    output->Initialize();
    vtkWarningMacro("TreeGravity was aborted; the output is empty.");
    return 1;
  }
  catch (const std::exception& e)
  {
    output->Initialize();
    vtkErrorMacro("TreeGravity failed: " << e.what());
    return 0;
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZTreeGravity::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "OpeningAngle: " << this->OpeningAngle << "\n";
  os << indent << "Softening: " << this->Softening << "\n";
  os << indent << "GravitationalConstant: " << this->GravitationalConstant << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
