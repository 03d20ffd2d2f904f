#include "vtkJZTreeGravity.h"

#include "vtkJZFilterRun.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

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
using vtkJZKernelAdapter::NewArray;
using vtkJZKernelAdapter::ParticleInput;

// Runs the kernel in precision T over all ranks of `comm` and, only when it
// succeeds, fills `output` with a shallow copy of `target` plus the result
// arrays. Throws jz::Error (the same on every rank) on bad input.
template <class T>
void RunGravity(vtkAlgorithm* self, const ParticleInput& in, vtkDataObject* target,
  jz::GravityProblem<T> problem, jz::Backend backend, vtkDataObject* output)
{
  const Buffer<T>& sources = in.Coordinates<T>();
  const Buffer<T>& queries = in.QueryCoordinates<T>();
  const vtkIdType numQueries = static_cast<vtkIdType>(in.hasQuery ? queries.size : sources.size);

  problem.sources = sources.data;
  problem.numSources = sources.size;
  problem.sourceMasses = in.masses.data;
  // A rank without query points still runs a Query evaluation, not a self
  // query (which a null pointer would mean).
  static const T noQuery[3] = { 0, 0, 0 };
  problem.queries = in.hasQuery ? (queries.data ? queries.data : noQuery) : nullptr;
  problem.numQueries = in.hasQuery ? queries.size : 0;

  const std::string error =
    vtkJZKernelAdapter::AgreeOnError(*in.comm, jz::gravityProblemError(problem, vtkJZKernelAdapter::PropertyNames()));
  if (!error.empty())
  {
    throw jz::Error(error);
  }

  auto potential = NewArray<vtkDoubleArray>("Potential", numQueries);
  auto acceleration = NewArray<vtkDoubleArray>("Acceleration", numQueries, 3);
  const jz::GravityResults results{ potential->GetPointer(0), acceleration->GetPointer(0) };

  const jz::RunInfo info = jz::computeGravityDistributed<T>(
    *in.comm, problem, results, backend, vtkJZKernelAdapter::MakeRunControl(self));
  vtkJZKernelAdapter::ReportRunInfo(self, "TreeGravity", info, *in.comm);

  vtkJZKernelAdapter::AttachResults(target, output, { potential, acceleration }, "Potential");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZTreeGravity::vtkJZTreeGravity() = default;

//------------------------------------------------------------------------------
int vtkJZTreeGravity::RunQuery(
  vtkDataObject* input, vtkDataObject* query, vtkDataObject* output, ParticleInput& in)
{
  vtkJZKernelAdapter::PointArrayRequest arrays;
  arrays.masses = this->SelectedMassArray(input);
  arrays.globalIds = false; // gravity needs no ids
  std::string error = vtkJZKernelAdapter::RangeError({ { jz::ranges::Device, this->Device } });
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPoints(arrays, in);
  }
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  if (in.totalPoints == 0 || (query && in.totalQueries == 0))
  {
    return 1; // empty input or query, empty output
  }

  const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
  vtkDataObject* target = query ? query : input;
  // float only when every coordinate (on every rank) is float.
  return vtkJZKernelAdapter::RunInPrecision(this, "TreeGravity", in.useFloat, { output },
    [&](auto precision)
    {
      jz::GravityProblem<decltype(precision)> problem;
      problem.openingAngle = this->OpeningAngle;
      problem.softening = this->Softening;
      problem.gravitationalConstant = this->GravitationalConstant;
      RunGravity(this, in, target, problem, backend, output);
    });
}

//------------------------------------------------------------------------------
void vtkJZTreeGravity::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "OpeningAngle: " << this->OpeningAngle << "\n";
  os << indent << "Softening: " << this->Softening << "\n";
  os << indent << "GravitationalConstant: " << this->GravitationalConstant << "\n";
}
