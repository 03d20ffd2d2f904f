#include "vtkJZSPHSmooth.h"

#include "vtkJZFilterRun.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkDataSet.h"
#include "vtkDoubleArray.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"

#include "jz/SphSmooth.h"
#include "jz/Validate.h"

#include <algorithm>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZSPHSmooth);

namespace
{
using vtkJZKernelAdapter::Buffer;
using vtkJZKernelAdapter::NewArray;
using vtkJZKernelAdapter::ParticleInput;

// A selected point array, read as doubles for the kernel.
struct SmoothedArray
{
  std::string name;
  int components = 0;
  Buffer<double> values;
};

// The number of components of `name` in this rank's first piece with points
// (0 when there is none or it lacks the array: GetPointValues then says why).
int LocalComponents(const std::vector<vtkDataSet*>& pieces, const std::string& name)
{
  for (vtkDataSet* piece : pieces)
  {
    if (piece->GetNumberOfPoints() == 0)
    {
      continue;
    }
    vtkDataArray* array = piece->GetPointData()->GetArray(name.c_str());
    return array ? array->GetNumberOfComponents() : 0;
  }
  return 0;
}

// Collective. The selected arrays of every piece, with the component count
// of the ranks that have points (the same on all of them, or an error).
std::string ReadSmoothedArrays(
  const std::vector<std::string>& names, ParticleInput& in, std::vector<SmoothedArray>& arrays)
{
  for (const std::string& name : names)
  {
    SmoothedArray a;
    a.name = name;
    double components = std::max(1, LocalComponents(in.pieces, name));
    in.comm->allReduceMax(&components, 1);
    a.components = static_cast<int>(components);
    std::string error;
    vtkJZKernelAdapter::GetPointValues(
      in.pieces, name.c_str(), a.components, "PointArrays", a.values, error);
    error = vtkJZKernelAdapter::AgreeOnError(*in.comm, error);
    if (!error.empty())
    {
      return error;
    }
    arrays.push_back(std::move(a));
  }
  return {};
}

// The output arrays of one smoothed array, and the kernel's view of them.
struct FieldOutputs
{
  std::vector<vtkSmartPointer<vtkDoubleArray>> arrays;
  jz::SphFieldResults results;
};

FieldOutputs MakeFieldOutputs(const SmoothedArray& a, vtkIdType n)
{
  FieldOutputs out;
  auto add = [&](const char* suffix, int components)
  {
    const std::string name = a.name + suffix;
    out.arrays.push_back(NewArray<vtkDoubleArray>(name.c_str(), n, components));
    return out.arrays.back()->GetPointer(0);
  };
  out.results.smoothed = add("_Smoothed", a.components);
  if (a.components == 1)
  {
    out.results.gradient = add("_Gradient", 3);
  }
  if (a.components == 3)
  {
    out.results.divergence = add("_Divergence", 1);
    out.results.curl = add("_Curl", 3);
    out.results.dispersion = add("_Dispersion", 1);
  }
  return out;
}

// Runs the kernel in precision T over all ranks and, only when it
// succeeds, fills `output` with a shallow copy of `input` plus the arrays.
template <class T>
void RunSmooth(vtkJZSPHSmooth* self, const ParticleInput& in, int k, bool periodic,
  const std::vector<SmoothedArray>& arrays, jz::Backend backend, vtkDataObject* input,
  vtkDataObject* output)
{
  using ArrayT = vtkAOSDataArrayTemplate<T>;
  const Buffer<T>& points = in.Coordinates<T>();
  const vtkIdType n = static_cast<vtkIdType>(in.localPoints);
  jz::SphSmoothProblem<T> problem;
  problem.points = points.data;
  problem.numPoints = points.size;
  problem.masses = in.masses.data;
  problem.ids = in.ids.data;
  problem.k = k;
  vtkJZKernelAdapter::SetPeriodicBox(periodic, in.box, problem);

  auto smoothingLength = NewArray<ArrayT>("SmoothingLength", n);
  auto density = NewArray<ArrayT>("Density", n);
  jz::SphSmoothResults<T> results;
  results.smoothingLength = smoothingLength->GetPointer(0);
  results.density = density->GetPointer(0);
  std::vector<vtkDataArray*> outArrays{ smoothingLength, density };
  std::vector<FieldOutputs> fieldOutputs;
  for (const SmoothedArray& a : arrays)
  {
    jz::SphField field;
    field.values = a.values.data;
    field.components = a.components;
    field.name = "PointArrays '" + a.name + "'";
    problem.fields.push_back(field);
    fieldOutputs.push_back(MakeFieldOutputs(a, n));
    results.fields.push_back(fieldOutputs.back().results);
    for (const auto& array : fieldOutputs.back().arrays)
    {
      outArrays.push_back(array);
    }
  }

  const jz::RunInfo info = jz::computeSphSmooth(
    problem, results, *in.comm, backend, vtkJZKernelAdapter::MakeRunControl(self));
  vtkJZKernelAdapter::ReportRunInfo(self, "SPHSmooth", info, *in.comm);
  vtkJZKernelAdapter::AttachResults(input, output, outArrays, "Density");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZSPHSmooth::vtkJZSPHSmooth() = default;

//------------------------------------------------------------------------------
void vtkJZSPHSmooth::AddPointArray(const char* name)
{
  if (name && *name &&
    std::find(this->PointArrays.begin(), this->PointArrays.end(), name) == this->PointArrays.end())
  {
    this->PointArrays.emplace_back(name);
    this->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZSPHSmooth::ClearPointArrays()
{
  if (!this->PointArrays.empty())
  {
    this->PointArrays.clear();
    this->Modified();
  }
}

//------------------------------------------------------------------------------
int vtkJZSPHSmooth::GetNumberOfPointArrays() const
{
  return static_cast<int>(this->PointArrays.size());
}

//------------------------------------------------------------------------------
const char* vtkJZSPHSmooth::GetPointArray(int i) const
{
  return i >= 0 && i < this->GetNumberOfPointArrays() ? this->PointArrays[i].c_str() : nullptr;
}

//------------------------------------------------------------------------------
int vtkJZSPHSmooth::RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs)
{
  // The properties and the global counts are the same on every rank.
  std::string error = vtkJZKernelAdapter::RangeError({ { jz::ranges::Device, this->Device } });
  ParticleInput in;
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPieces(input, nullptr, in);
  }
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
    vtkJZKernelAdapter::PointArrayRequest request;
    request.masses =
      vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input);
    error = vtkJZKernelAdapter::ReadPoints(request, in);
  }
  std::vector<SmoothedArray> arrays;
  if (error.empty())
  {
    error = ReadSmoothedArrays(this->PointArrays, in, arrays);
  }
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
  return vtkJZKernelAdapter::RunInPrecision(this, "SPHSmooth", in.useFloat, { outputs[0] },
    [&](auto precision)
    {
      RunSmooth<decltype(precision)>(
        this, in, this->NumberOfNeighbors, this->Periodic, arrays, backend, input, outputs[0]);
    });
}

//------------------------------------------------------------------------------
void vtkJZSPHSmooth::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfNeighbors: " << this->NumberOfNeighbors << "\n";
  os << indent << "PointArrays:";
  for (const std::string& name : this->PointArrays)
  {
    os << " " << name;
  }
  os << "\n";
}
