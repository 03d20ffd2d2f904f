#include "vtkJZKNNDensity.h"

#include "vtkJZFilterRun.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

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
using vtkJZKernelAdapter::NewArray;
using vtkJZKernelAdapter::ParticleInput;

struct KnnSettings
{
  int k = 32;
  jz::DensityEstimator estimator = jz::DensityEstimator::SphCubicSpline;
  bool periodic = false;
  bool neighbors = false;
  jz::Backend backend = jz::Backend::Auto;
};

// Runs the kernel in precision T (over all ranks of `comm`; with one rank the
// single-process kernel) and, only when it succeeds, fills `output` with a
// shallow copy of `target` plus the result arrays. Throws jz::Error (from the
// kernel, the same on every rank) on bad input.
template <class T>
void RunKnn(vtkAlgorithm* self, const ParticleInput& in, vtkDataObject* target,
  const KnnSettings& s, vtkDataObject* output)
{
  using ArrayT = vtkAOSDataArrayTemplate<T>;
  jz::Communicator& comm = *in.comm;
  const Buffer<T>& sources = in.Coordinates<T>();
  const Buffer<T>& queries = in.QueryCoordinates<T>();
  const vtkIdType numQueries = static_cast<vtkIdType>(in.hasQuery ? queries.size : sources.size);

  jz::KnnProblem<T> problem;
  problem.sources = sources.data;
  problem.numSources = sources.size;
  // A rank without query points still runs a Query search, not a self query
  // (which a null pointer would mean): it gets a non-null, unused pointer.
  static const T noQuery[3] = { 0, 0, 0 };
  problem.queries = in.hasQuery ? (queries.data ? queries.data : noQuery) : nullptr;
  problem.numQueries = in.hasQuery ? queries.size : 0;
  problem.sourceMasses = in.masses.data;
  problem.sourceIds = in.ids.data;
  problem.k = s.k;
  vtkJZKernelAdapter::SetPeriodicBox(s.periodic, in.box, problem);

  // The kernels' rules for this rank's piece, in the filter's words; every
  // rank stops with the same message.
  std::string local =
    jz::problemError(problem, jz::ProblemExtent::RankPiece, vtkJZKernelAdapter::PropertyNames());
  if (local.empty() && s.neighbors)
  {
    local = jz::neighbourListsMemoryError(std::size_t(numQueries), s.k,
      sizeof(vtkIdType) + sizeof(T), vtkJZKernelAdapter::PropertyNames());
  }
  const std::string error = vtkJZKernelAdapter::AgreeOnError(comm, local);
  if (!error.empty())
  {
    throw jz::Error(error);
  }

  auto smoothingLength = NewArray<ArrayT>("SmoothingLength", numQueries);
  auto density = NewArray<ArrayT>("Density", numQueries);
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
    neighborIds = NewArray<vtkIdTypeArray>("NeighborIds", numQueries, s.k);
    neighborDistances = NewArray<ArrayT>("NeighborDistances", numQueries, s.k);
    results.neighborIds = reinterpret_cast<jz::GlobalId*>(neighborIds->GetPointer(0));
    results.neighborDistances = neighborDistances->GetPointer(0);
    arrays.push_back(neighborIds);
    arrays.push_back(neighborDistances);
  }

  const jz::RunInfo info = jz::computeKnnDistributed<T>(
    problem, results, comm, s.backend, vtkJZKernelAdapter::MakeRunControl(self));
  vtkJZKernelAdapter::ReportRunInfo(self, "KNNDensity", info, comm);

  vtkJZKernelAdapter::AttachResults(target, output, arrays, "Density");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZKNNDensity::vtkJZKNNDensity() = default;

//------------------------------------------------------------------------------
int vtkJZKNNDensity::RunQuery(
  vtkDataObject* input, vtkDataObject* query, vtkDataObject* output, ParticleInput& in)
{
  // The properties and the global counts are the same on every rank.
  std::string error = vtkJZKernelAdapter::RangeError(
    { { jz::ranges::Estimator, this->Estimator }, { jz::ranges::Device, this->Device } });
  if (error.empty() && in.totalPoints == 0)
  {
    return 1; // empty input, empty output
  }
  if (error.empty())
  {
    error = jz::neighbourCountError(
      this->NumberOfNeighbors, in.totalPoints, vtkJZKernelAdapter::PropertyNames());
  }
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPeriodicBox(
      input, this->Periodic, this->BoxFromData, this->BoxBounds, in);
  }
  if (error.empty())
  {
    vtkJZKernelAdapter::PointArrayRequest arrays;
    arrays.masses = this->SelectedMassArray(input);
    error = vtkJZKernelAdapter::ReadPoints(arrays, in);
  }
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  if (query && in.totalQueries == 0)
  {
    return 1; // empty query, empty output
  }

  KnnSettings settings;
  settings.k = this->NumberOfNeighbors;
  settings.estimator = this->Estimator == TOP_HAT ? jz::DensityEstimator::TopHat
                                                  : jz::DensityEstimator::SphCubicSpline;
  settings.periodic = this->Periodic;
  settings.neighbors = this->OutputNeighbors;
  settings.backend = vtkJZKernelAdapter::ToBackend(this->Device);
  vtkDataObject* target = query ? query : input;
  // float only when every coordinate (on every rank) is float; else double
  // (see header).
  return vtkJZKernelAdapter::RunInPrecision(this, "KNNDensity", in.useFloat, { output },
    [&](auto precision) { RunKnn<decltype(precision)>(this, in, target, settings, output); });
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
}
