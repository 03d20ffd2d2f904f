#include "vtkJZKNNDensity.h"

#include "vtkJZKernelAdapter.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSet.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "jz/Knn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <sstream>

vtkStandardNewMacro(vtkJZKNNDensity);

namespace
{
using vtkJZKernelAdapter::Buffer;

struct KnnSettings
{
  int k = 32;
  jz::DensityEstimator estimator = jz::DensityEstimator::SphCubicSpline;
  bool periodic = false;
  double box[6] = { 0, 1, 0, 1, 0, 1 };
  bool neighbors = false;
  jz::Backend backend = jz::Backend::Auto;
};

// Runs the kernel in precision T and, only when it succeeds, fills `output`
// with a shallow copy of `target` plus the result arrays. Throws jz::Error
// (from the kernel) on bad input.
template <class T>
void RunKnn(vtkAlgorithm* self, vtkDataSet* input, vtkDataSet* query, vtkDataSet* target,
  const Buffer<double>& masses, const Buffer<jz::GlobalId>& ids, const KnnSettings& s,
  vtkDataSet* output)
{
  using ArrayT = vtkAOSDataArrayTemplate<T>;

  Buffer<T> sources;
  vtkJZKernelAdapter::GetCoordinates(input, sources);
  Buffer<T> queries;
  if (query)
  {
    vtkJZKernelAdapter::GetCoordinates(query, queries);
  }
  const vtkIdType numQueries = static_cast<vtkIdType>(query ? queries.size : sources.size);

  jz::KnnProblem<T> problem;
  problem.sources = sources.data;
  problem.numSources = sources.size;
  problem.queries = query ? queries.data : nullptr;
  problem.numQueries = query ? queries.size : 0;
  problem.sourceMasses = masses.data;
  problem.sourceIds = ids.data;
  problem.k = s.k;
  problem.periodic = s.periodic;
  for (int d = 0; d < 3; ++d)
  {
    problem.boxLo[d] = s.box[2 * d];
    problem.boxHi[d] = s.box[2 * d + 1];
  }

  auto smoothingLength = vtkSmartPointer<ArrayT>::New();
  smoothingLength->SetName("SmoothingLength");
  smoothingLength->SetNumberOfTuples(numQueries);
  auto density = vtkSmartPointer<ArrayT>::New();
  density->SetName("Density");
  density->SetNumberOfTuples(numQueries);

  jz::KnnResults<T> results;
  results.estimator = s.estimator;
  results.smoothingLength = smoothingLength->GetPointer(0);
  results.density = density->GetPointer(0);

  // Only allocated when asked for: N x K arrays dominate memory otherwise.
  vtkSmartPointer<vtkIdTypeArray> neighborIds;
  vtkSmartPointer<ArrayT> neighborDistances;
  if (s.neighbors)
  {
    neighborIds = vtkSmartPointer<vtkIdTypeArray>::New();
    neighborIds->SetName("NeighborIds");
    neighborIds->SetNumberOfComponents(s.k);
    neighborIds->SetNumberOfTuples(numQueries);
    neighborDistances = vtkSmartPointer<ArrayT>::New();
    neighborDistances->SetName("NeighborDistances");
    neighborDistances->SetNumberOfComponents(s.k);
    neighborDistances->SetNumberOfTuples(numQueries);
    results.neighborIds = reinterpret_cast<jz::GlobalId*>(neighborIds->GetPointer(0));
    results.neighborDistances = neighborDistances->GetPointer(0);
  }

  const jz::RunInfo info = jz::computeKnn<T>(
    problem, results, s.backend, vtkJZKernelAdapter::MakeRunControl(self));

  output->ShallowCopy(target);
  vtkPointData* pd = output->GetPointData();
  pd->AddArray(smoothingLength);
  pd->AddArray(density);
  pd->SetActiveScalars("Density");
  if (s.neighbors)
  {
    pd->AddArray(neighborIds);
    pd->AddArray(neighborDistances);
  }
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZKNNDensity::vtkJZKNNDensity()
{
  this->SetNumberOfInputPorts(2);
  this->SetNumberOfOutputPorts(1);
  // No mass array unless one is selected (unit masses).
}

//------------------------------------------------------------------------------
void vtkJZKNNDensity::SetQueryConnection(vtkAlgorithmOutput* output)
{
  this->SetInputConnection(1, output);
}

//------------------------------------------------------------------------------
void vtkJZKNNDensity::SetQueryData(vtkDataObject* data)
{
  this->SetInputData(1, data);
}

//------------------------------------------------------------------------------
int vtkJZKNNDensity::FillInputPortInformation(int port, vtkInformation* info)
{
  if (port == 0)
  {
    info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkPointSet");
  }
  else
  {
    info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  }
  return 1;
}

//------------------------------------------------------------------------------
// The output has the type of the Query when one is connected, else of the
// Input (e.g. vtkImageData for a query grid, vtkPolyData for particles).
int vtkJZKNNDensity::RequestDataObject(
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
int vtkJZKNNDensity::RequestInformation(
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
// The neighbours of any query point may be any Input point, so the whole
// Input is requested, and the whole extent of a structured Query.
int vtkJZKNNDensity::RequestUpdateExtent(
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
bool vtkJZKNNDensity::GetMassArray(vtkDataSet* input, vtkDataArray*& masses, std::string& error)
{
  masses = nullptr;
  vtkInformation* info = this->GetInputArrayInformation(0);
  const char* name =
    info && info->Has(vtkDataObject::FIELD_NAME()) ? info->Get(vtkDataObject::FIELD_NAME()) : nullptr;
  if (!name || !*name)
  {
    return true;
  }
  vtkAbstractArray* array = input->GetPointData()->GetAbstractArray(name);
  if (!array)
  {
    // "None" is how the GUI and pvpython say "no mass array".
    if (std::strcmp(name, "None") == 0)
    {
      return true;
    }
    error = std::string("MassArray '") + name + "' is not a point array of the Input.";
    return false;
  }
  masses = vtkDataArray::SafeDownCast(array);
  if (!masses)
  {
    error = std::string("MassArray '") + name + "' is not a numeric array.";
    return false;
  }
  return true;
}

//------------------------------------------------------------------------------
int vtkJZKNNDensity::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataSet* input = vtkDataSet::GetData(inputVector[0], 0);
  vtkDataSet* query =
    this->GetNumberOfInputConnections(1) > 0 ? vtkDataSet::GetData(inputVector[1], 0) : nullptr;
  vtkDataSet* output = vtkDataSet::GetData(outputVector, 0);
  if (!output)
  {
    vtkErrorMacro("No output data set.");
    return 0;
  }
  // Whatever happens below, no partial result is left behind.
  output->Initialize();

  // Per-rank answers would be silently wrong (neighbours on other ranks are
  // missed), so refuse. No communication happens here: every rank stops.
  if (vtkJZKernelAdapter::IsParallelRun())
  {
    vtkErrorMacro("KNNDensity: parallel runs are not supported yet: this run has "
      << vtkJZKernelAdapter::NumberOfProcesses() << " MPI processes. Run on a single process.");
    return 0;
  }
  if (!input || input->GetNumberOfPoints() == 0)
  {
    return 1; // empty input, empty output
  }
  const vtkIdType numSources = input->GetNumberOfPoints();

  if (this->NumberOfNeighbors < 1)
  {
    vtkErrorMacro("NumberOfNeighbors must be at least 1; it is " << this->NumberOfNeighbors
                                                                  << ".");
    return 0;
  }
  if (this->NumberOfNeighbors > numSources)
  {
    vtkErrorMacro("NumberOfNeighbors (K = " << this->NumberOfNeighbors
                                            << ") is larger than the number of Input points ("
                                            << numSources << ").");
    return 0;
  }
  if (this->Periodic)
  {
    for (int d = 0; d < 3; ++d)
    {
      const double lo = this->BoxBounds[2 * d];
      const double hi = this->BoxBounds[2 * d + 1];
      if (!(hi > lo) || !std::isfinite(hi - lo))
      {
        vtkErrorMacro("BoxBounds must give a positive, finite periodic box; dimension "
          << "xyz"[d] << " spans [" << lo << ", " << hi << "].");
        return 0;
      }
    }
  }

  std::string error;
  vtkDataArray* massArray = nullptr;
  Buffer<double> masses;
  if (!this->GetMassArray(input, massArray, error) ||
    !vtkJZKernelAdapter::GetPointValues(massArray, numSources, 1, "MassArray", masses, error))
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  Buffer<jz::GlobalId> ids;
  if (!vtkJZKernelAdapter::GetGlobalIds(input, ids, error))
  {
    vtkErrorMacro(<< error);
    return 0;
  }

  KnnSettings settings;
  settings.k = this->NumberOfNeighbors;
  settings.estimator = this->Estimator == TOP_HAT ? jz::DensityEstimator::TopHat
                                                  : jz::DensityEstimator::SphCubicSpline;
  settings.periodic = this->Periodic;
  std::copy(this->BoxBounds, this->BoxBounds + 6, settings.box);
  settings.neighbors = this->OutputNeighbors;
  settings.backend = vtkJZKernelAdapter::ToBackend(this->Device);

  vtkDataSet* target = query ? query : input;
  if (query && query->GetNumberOfPoints() == 0)
  {
    return 1; // empty query, empty output
  }
  // float only when every coordinate is float; else double (see header).
  const bool useFloat = vtkJZKernelAdapter::PointPrecision(input) == VTK_FLOAT &&
    (!query || vtkJZKernelAdapter::PointPrecision(query) == VTK_FLOAT);
  try
  {
    if (useFloat)
    {
      RunKnn<float>(this, input, query, target, masses, ids, settings, output);
    }
    else
    {
      RunKnn<double>(this, input, query, target, masses, ids, settings, output);
    }
  }
  catch (const jz::Aborted&)
  {
    output->Initialize();
    vtkWarningMacro("KNNDensity was aborted; the output is empty.");
    return 1;
  }
  catch (const std::exception& e)
  {
    // jz::Error carries a message meant for the user (bad input, no GPU).
    output->Initialize();
    vtkErrorMacro("KNNDensity failed: " << e.what());
    return 0;
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZKNNDensity::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfNeighbors: " << this->NumberOfNeighbors << "\n";
  os << indent << "Estimator: " << (this->Estimator == TOP_HAT ? "Top Hat" : "SPH Cubic Spline")
     << "\n";
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "BoxBounds: " << this->BoxBounds[0] << " " << this->BoxBounds[1] << " "
     << this->BoxBounds[2] << " " << this->BoxBounds[3] << " " << this->BoxBounds[4] << " "
     << this->BoxBounds[5] << "\n";
  os << indent << "OutputNeighbors: " << this->OutputNeighbors << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
