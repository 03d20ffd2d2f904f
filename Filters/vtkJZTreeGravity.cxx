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
vtkJZTreeGravity::vtkJZTreeGravity()
{
  this->SetNumberOfInputPorts(2);
  this->SetNumberOfOutputPorts(1);
}

//------------------------------------------------------------------------------
void vtkJZTreeGravity::SetQueryConnection(vtkAlgorithmOutput* output)
{
  this->SetInputConnection(1, output);
}

//------------------------------------------------------------------------------
void vtkJZTreeGravity::SetQueryData(vtkDataObject* data)
{
  this->SetInputData(1, data);
}

//------------------------------------------------------------------------------
// Composite data sets are accepted whole: all blocks form one particle set.
int vtkJZTreeGravity::FillInputPortInformation(int port, vtkInformation* info)
{
  info->Remove(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE());
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), port == 0 ? "vtkPointSet" : "vtkDataSet");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  if (port == 1)
  {
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  }
  return 1;
}

//------------------------------------------------------------------------------
// The output has the type of the Query when one is connected, else of the Input.
int vtkJZTreeGravity::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  const int port = this->GetNumberOfInputConnections(1) > 0 ? 1 : 0;
  vtkDataObject* input = vtkDataObject::GetData(inputVector[port], 0);
  if (!input)
  {
    return 0;
  }
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkDataObject* output = vtkDataObject::GetData(outInfo);
  if (!output || std::strcmp(output->GetClassName(), input->GetClassName()) != 0)
  {
    vtkDataObject* newOutput = input->NewInstance();
    outInfo->Set(vtkDataObject::DATA_OBJECT(), newOutput);
    newOutput->Delete();
  }
  return 1;
}

//------------------------------------------------------------------------------
// A structured Query decides the output's extent; the Input's does not.
int vtkJZTreeGravity::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkInformation* queryInfo = inputVector[1]->GetInformationObject(0);
  using SDDP = vtkStreamingDemandDrivenPipeline;
  if (queryInfo)
  {
    outInfo->CopyEntry(queryInfo, SDDP::WHOLE_EXTENT());
    outInfo->CopyEntry(queryInfo, vtkDataObject::SPACING());
    outInfo->CopyEntry(queryInfo, vtkDataObject::ORIGIN());
    outInfo->CopyEntry(queryInfo, vtkDataObject::DIRECTION());
    if (!queryInfo->Has(SDDP::WHOLE_EXTENT()))
    {
      outInfo->Remove(SDDP::WHOLE_EXTENT());
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
// Every query point feels every particle: the whole Input is requested, and
// the whole extent of a structured Query.
int vtkJZTreeGravity::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  using SDDP = vtkStreamingDemandDrivenPipeline;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  for (int port = 0; port < 2; ++port)
  {
    vtkInformation* inInfo = inputVector[port]->GetInformationObject(0);
    if (!inInfo)
    {
      continue;
    }
    inInfo->CopyEntry(outInfo, SDDP::UPDATE_PIECE_NUMBER());
    inInfo->CopyEntry(outInfo, SDDP::UPDATE_NUMBER_OF_PIECES());
    if (inInfo->Has(SDDP::WHOLE_EXTENT()))
    {
      inInfo->Set(SDDP::UPDATE_EXTENT(), inInfo->Get(SDDP::WHOLE_EXTENT()), 6);
    }
  }
  return 1;
}

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
