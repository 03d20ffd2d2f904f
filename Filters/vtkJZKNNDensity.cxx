#include "vtkJZKNNDensity.h"

#include "vtkJZCommunicator.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZPeriodicBox.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSet.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "jz/Distributed.h"
#include "jz/Knn.h"
#include "jz/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZKNNDensity);

namespace
{
using vtkJZKernelAdapter::Buffer;
using Pieces = std::vector<vtkDataSet*>;

struct KnnSettings
{
  int k = 32;
  jz::DensityEstimator estimator = jz::DensityEstimator::SphCubicSpline;
  bool periodic = false;
  double box[6] = { 0, 1, 0, 1, 0, 1 };
  bool neighbors = false;
  jz::Backend backend = jz::Backend::Auto;
};

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

// Runs the kernel in precision T (over all ranks of `comm`; with one rank the
// single-process kernel) and, only when it succeeds, fills `output` with a
// shallow copy of `target` plus the result arrays. Throws jz::Error (from the
// kernel, the same on every rank) on bad input.
template <class T>
void RunKnn(vtkAlgorithm* self, jz::Communicator& comm, const Pieces& sourcePieces,
  const Pieces* queryPieces, vtkDataObject* target, const Buffer<double>& masses,
  const Buffer<jz::GlobalId>& ids, const KnnSettings& s, vtkDataObject* output)
{
  using ArrayT = vtkAOSDataArrayTemplate<T>;

  Buffer<T> sources;
  vtkJZKernelAdapter::GetCoordinates(sourcePieces, sources);
  Buffer<T> queries;
  if (queryPieces)
  {
    vtkJZKernelAdapter::GetCoordinates(*queryPieces, queries);
  }
  const vtkIdType numQueries = static_cast<vtkIdType>(queryPieces ? queries.size : sources.size);

  jz::KnnProblem<T> problem;
  problem.sources = sources.data;
  problem.numSources = sources.size;
  // A rank without query points still runs a Query search, not a self query
  // (which a null pointer would mean): it gets a non-null, unused pointer.
  static const T noQuery[3] = { 0, 0, 0 };
  problem.queries = queryPieces ? (queries.data ? queries.data : noQuery) : nullptr;
  problem.numQueries = queryPieces ? queries.size : 0;
  problem.sourceMasses = masses.data;
  problem.sourceIds = ids.data;
  problem.k = s.k;
  problem.periodic = s.periodic;
  for (int d = 0; d < 3; ++d)
  {
    problem.boxLo[d] = s.box[2 * d];
    problem.boxHi[d] = s.box[2 * d + 1];
  }

  // The kernels' rules for this rank's piece, in the filter's words; every
  // rank stops with the same message.
  const std::string error = vtkJZKernelAdapter::AgreeOnError(comm,
    jz::problemError(problem, jz::ProblemExtent::RankPiece, vtkJZKernelAdapter::PropertyNames()));
  if (!error.empty())
  {
    throw jz::Error(error);
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
  std::vector<vtkDataArray*> arrays{ smoothingLength, density };

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
    arrays.push_back(neighborIds);
    arrays.push_back(neighborDistances);
  }

  const jz::RunInfo info = jz::computeKnnDistributed<T>(
    problem, results, comm, s.backend, vtkJZKernelAdapter::MakeRunControl(self));
  vtkJZKernelAdapter::ReportRunInfo("KNNDensity", info, comm);

  vtkJZKernelAdapter::AttachResults(target, output, arrays, "Density");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZKNNDensity::vtkJZKNNDensity() = default;

//------------------------------------------------------------------------------
const char* vtkJZKNNDensity::GetMassArrayName(vtkDataObject* input)
{
  return vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input);
}

//------------------------------------------------------------------------------
int vtkJZKNNDensity::RequestData(
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
  // Whatever happens below, no partial result is left behind.
  output->Initialize();

  // Parallel runs (README, "Parallel (MPI) runs"): every rank holds its own
  // pieces and takes part in every collective below, also a rank without
  // points; errors found on one rank are agreed on before anyone returns, so
  // all ranks fail together and none waits for the others.
  std::unique_ptr<jz::Communicator> comm = vtkJZKernelAdapter::MakeCommunicator();

  std::string error;
  Pieces sourcePieces, queryPieces;
  if (CollectPieces(input, true, "Input", sourcePieces, error) && query)
  {
    CollectPieces(query, false, "Query", queryPieces, error);
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  const vtkIdType localSources = vtkJZKernelAdapter::CountPoints(sourcePieces);
  std::int64_t counts[2] = { localSources,
    query ? vtkJZKernelAdapter::CountPoints(queryPieces) : 0 };
  comm->allReduceSum(counts, 2);
  const vtkIdType numSources = counts[0]; // over all ranks
  if (numSources == 0)
  {
    return 1; // empty input, empty output
  }

  // The properties and the global counts are the same on every rank.
  const std::string countError = jz::neighbourCountError(
    this->NumberOfNeighbors, numSources, vtkJZKernelAdapter::PropertyNames());
  if (!countError.empty())
  {
    vtkErrorMacro(<< countError);
    return 0;
  }
  double box[6]; // the periodic box used (see vtkJZPeriodicBox)
  std::copy(this->BoxBounds, this->BoxBounds + 6, box);
  if (this->Periodic)
  {
    const std::string boxError =
      vtkJZPeriodicBox::Resolve(*comm, input, this->BoxFromData, this->BoxBounds, box);
    if (!boxError.empty())
    {
      vtkErrorMacro(<< boxError);
      return 0;
    }
  }

  Buffer<double> masses;
  Buffer<jz::GlobalId> ids;
  if (vtkJZKernelAdapter::GetPointValues(
        sourcePieces, this->GetMassArrayName(input), 1, "MassArray", masses, error))
  {
    vtkJZKernelAdapter::GetGlobalIds(sourcePieces, ids, error);
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty() ||
    !vtkJZKernelAdapter::MakeGlobalIds(*comm, static_cast<std::size_t>(localSources), ids, error))
  {
    vtkErrorMacro(<< error);
    return 0;
  }

  KnnSettings settings;
  settings.k = this->NumberOfNeighbors;
  settings.estimator = this->Estimator == TOP_HAT ? jz::DensityEstimator::TopHat
                                                  : jz::DensityEstimator::SphCubicSpline;
  settings.periodic = this->Periodic;
  std::copy(box, box + 6, settings.box);
  settings.neighbors = this->OutputNeighbors;
  static_assert(DEVICE_AUTO == static_cast<int>(jz::Backend::Auto) &&
      DEVICE_CPU == static_cast<int>(jz::Backend::CPU) &&
      DEVICE_CUDA == static_cast<int>(jz::Backend::CUDA),
    "the Device values are jz::Backend's");
  settings.backend = vtkJZKernelAdapter::ToBackend(this->Device);

  if (query && counts[1] == 0)
  {
    return 1; // empty query, empty output
  }
  vtkDataObject* target = query ? query : input;
  const Pieces* queries = query ? &queryPieces : nullptr;
  // float only when every coordinate (on every rank) is float; else double
  // (see header). All ranks must run the same precision.
  const bool useFloat = vtkJZKernelAdapter::AllRanks(*comm,
    vtkJZKernelAdapter::PointPrecision(sourcePieces) == VTK_FLOAT &&
      (!query || vtkJZKernelAdapter::PointPrecision(queryPieces) == VTK_FLOAT));
  try
  {
    if (useFloat)
    {
      RunKnn<float>(this, *comm, sourcePieces, queries, target, masses, ids, settings, output);
    }
    else
    {
      RunKnn<double>(this, *comm, sourcePieces, queries, target, masses, ids, settings, output);
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
  os << indent << "BoxFromData: " << this->BoxFromData << "\n";
  os << indent << "OutputNeighbors: " << this->OutputNeighbors << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
