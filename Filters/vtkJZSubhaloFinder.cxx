#include "vtkJZSubhaloFinder.h"

#include "vtkJZFilterRun.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkCellArray.h"
#include "vtkDataObject.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"

#include "jz/Subhalo.h"

#include <cmath>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZSubhaloFinder);

namespace
{
using vtkJZKernelAdapter::Buffer;
using vtkJZKernelAdapter::NewArray;
using vtkJZKernelAdapter::ParticleInput;

// The kernel's names: the filter's properties.
jz::SubhaloNames PropertyNames()
{
  jz::SubhaloNames names;
  names.input = vtkJZKernelAdapter::PropertyNames();
  return names;
}

// The message for a GroupId that is not -1 or a group number.
std::string BadGroupId(std::size_t point)
{
  return "GroupId of point " + std::to_string(point) + " is not -1 or a group number.";
}

// GroupId as the kernel's integers; an error for a value that is not a
// whole number. FriendsOfFriends' own (one vtkIdTypeArray) is read in place.
std::string ReadGroupIds(const ParticleInput& in, Buffer<jz::GlobalId>& groupId)
{
  vtkDataArray* array =
    in.pieces.size() == 1 ? in.pieces[0]->GetPointData()->GetArray("GroupId") : nullptr;
  static_assert(sizeof(vtkIdType) == sizeof(jz::GlobalId), "vtkIdType must be 64-bit");
  auto* ids = vtkIdTypeArray::FastDownCast(array);
  if (ids && ids->GetNumberOfComponents() == 1 &&
    ids->GetNumberOfTuples() == in.pieces[0]->GetNumberOfPoints())
  {
    groupId.data = reinterpret_cast<const jz::GlobalId*>(ids->GetPointer(0));
    groupId.size = static_cast<std::size_t>(ids->GetNumberOfTuples());
    for (std::size_t i = 0; i < groupId.size; ++i)
    {
      if (groupId.data[i] < -1)
      {
        return BadGroupId(i);
      }
    }
    return {};
  }
  Buffer<double> values;
  std::string error;
  if (!vtkJZKernelAdapter::GetPointValues(
        in.pieces, "GroupId", 1, "The GroupId array (run FriendsOfFriends first)", values, error))
  {
    return error;
  }
  groupId.storage.resize(values.size);
  groupId.size = values.size;
  for (std::size_t i = 0; i < values.size; ++i)
  {
    const double g = values.data[i];
    if (g != std::floor(g) || g < -1 || g > 9.0e15)
    {
      return BadGroupId(i);
    }
    groupId.storage[i] = static_cast<jz::GlobalId>(g);
  }
  groupId.Adopt();
  return {};
}

// Port 1: one vertex per subhalo at its centre of potential, with the columns.
void FillCatalogue(const jz::SubhaloCatalogue& cat, vtkPolyData* out)
{
  const vtkIdType S = static_cast<vtkIdType>(cat.numSubhalos);
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(S);
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfTuples(S + 1);
  auto conn = vtkSmartPointer<vtkIdTypeArray>::New();
  conn->SetNumberOfTuples(S);
  for (vtkIdType s = 0; s < S; ++s)
  {
    points->SetPoint(s, &cat.centreOfPotential[3 * s]);
    offsets->SetValue(s, s);
    conn->SetValue(s, s);
  }
  offsets->SetValue(S, S);
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  verts->SetData(offsets, conn);
  out->SetPoints(points);
  out->SetVerts(verts);
  vtkPointData* pd = out->GetPointData();
  pd->AddArray(NewArray<vtkIdTypeArray>("SubhaloId", cat.subhaloId.data(), S));
  pd->AddArray(NewArray<vtkIdTypeArray>("GroupId", cat.groupId.data(), S));
  pd->AddArray(NewArray<vtkIdTypeArray>("SubhaloRank", cat.subhaloRank.data(), S));
  pd->AddArray(NewArray<vtkIdTypeArray>("Count", cat.count.data(), S));
  pd->AddArray(NewArray<vtkDoubleArray>("Mass", cat.mass.data(), S));
  pd->AddArray(NewArray<vtkDoubleArray>("CentreOfPotential", cat.centreOfPotential.data(), S, 3));
  pd->AddArray(NewArray<vtkIdTypeArray>("MostBoundId", cat.mostBoundId.data(), S));
  pd->AddArray(NewArray<vtkDoubleArray>("CenterOfMass", cat.centerOfMass.data(), S, 3));
  pd->AddArray(NewArray<vtkDoubleArray>("MeanVelocity", cat.meanVelocity.data(), S, 3));
  pd->AddArray(NewArray<vtkDoubleArray>("VelocityDispersion", cat.velocityDispersion.data(), S));
  pd->AddArray(NewArray<vtkDoubleArray>("Vmax", cat.vmax.data(), S));
  pd->AddArray(NewArray<vtkDoubleArray>("RVmax", cat.rvmax.data(), S));
  pd->AddArray(NewArray<vtkDoubleArray>("HalfMassRadius", cat.halfMassRadius.data(), S));
  pd->AddArray(NewArray<vtkIdTypeArray>("ParentSubhaloId", cat.parentSubhaloId.data(), S));
  pd->SetActiveScalars("SubhaloId");
}
} // namespace

//------------------------------------------------------------------------------
vtkJZSubhaloFinder::vtkJZSubhaloFinder()
{
  this->SetNumberOfOutputPorts(2);
}

//------------------------------------------------------------------------------
int vtkJZSubhaloFinder::RunParticles(
  vtkDataObject* input, const std::vector<vtkDataObject*>& outputs)
{
  vtkDataObject* output = outputs[0];
  vtkPolyData* catalogue = vtkPolyData::SafeDownCast(outputs[1]);
  ParticleInput in;
  std::string error =
    vtkJZKernelAdapter::RangeError({ { jz::ranges::DensityNeighbors, this->DensityNeighbors },
      { jz::ranges::SaddleNeighbors, this->SaddleNeighbors },
      { jz::ranges::MinimumSubhaloSize, static_cast<double>(this->MinimumSubhaloSize) },
      { jz::ranges::OpeningAngle, this->OpeningAngle }, { jz::ranges::Softening, this->Softening },
      { jz::ranges::GravitationalConstant, this->GravitationalConstant },
      { jz::ranges::Device, this->Device } });
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPieces(input, nullptr, in);
  }
  if (error.empty() && in.totalPoints == 0)
  {
    return 1; // empty input, empty outputs
  }
  const char* velocities =
    vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(1), input);
  if (error.empty() && !velocities)
  {
    error = "SubhaloFinder needs a VelocityArray (three components): subhalos are bound by "
            "their kinetic energy. Choose the particles' velocity array.";
  }
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPeriodicBox(
      input, this->Periodic, this->BoxFromData, this->BoxBounds, in);
  }
  if (error.empty())
  {
    vtkJZKernelAdapter::PointArrayRequest arrays;
    arrays.masses = vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input);
    arrays.velocities = velocities;
    error = vtkJZKernelAdapter::ReadPoints(arrays, in);
  }
  Buffer<jz::GlobalId> groupId;
  if (error.empty())
  {
    error = ReadGroupIds(in, groupId);
  }
  if (in.comm)
  {
    // GroupId is read per rank: every rank stops when one cannot go on.
    error = vtkJZKernelAdapter::AgreeOnError(*in.comm, error);
  }
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  return vtkJZKernelAdapter::RunInPrecision(this, "SubhaloFinder", in.useFloat,
    { output, catalogue },
    [&](auto precision)
    {
      using T = decltype(precision);
      const Buffer<T>& coords = in.Coordinates<T>();
      jz::SubhaloProblem<T> p;
      p.points = coords.data;
      p.numPoints = coords.size;
      p.masses = in.masses.data;
      p.velocities = in.velocities.data;
      p.ids = in.ids.data;
      p.groupId = groupId.data;
      p.densityNeighbors = this->DensityNeighbors;
      p.saddleNeighbors = this->SaddleNeighbors;
      p.minimumSubhaloSize = this->MinimumSubhaloSize;
      p.softening = this->Softening;
      p.gravitationalConstant = this->GravitationalConstant;
      p.openingAngle = this->OpeningAngle;
      vtkJZKernelAdapter::SetPeriodicBox(this->Periodic, in.box, p);
      jz::Subhalos result;
      const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
      const jz::RunControl control = vtkJZKernelAdapter::MakeRunControl(this);
      // Under MPI each group goes whole to one rank; the catalogue rows stay there.
      const jz::RunInfo info = in.comm->size() > 1
        ? jz::computeSubhalosDistributed(*in.comm, p, result, backend, control, PropertyNames())
        : jz::computeSubhalos(p, result, backend, control, PropertyNames());
      vtkJZKernelAdapter::ReportRunInfo(this, "SubhaloFinder", info, *in.comm);
      const vtkIdType n = static_cast<vtkIdType>(coords.size);
      auto subhaloId = NewArray<vtkIdTypeArray>("SubhaloId", result.subhaloId.data(), n);
      auto subhaloRank = NewArray<vtkIdTypeArray>("SubhaloRank", result.subhaloRank.data(), n);
      FillCatalogue(result.catalogue, catalogue);
      vtkJZKernelAdapter::AttachResults(input, output, { subhaloId, subhaloRank }, "SubhaloId");
      vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
      vtkJZKernelAdapter::AddDeviceFieldData(catalogue, info.backend);
    });
}

//------------------------------------------------------------------------------
void vtkJZSubhaloFinder::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "DensityNeighbors: " << this->DensityNeighbors << "\n";
  os << indent << "SaddleNeighbors: " << this->SaddleNeighbors << "\n";
  os << indent << "MinimumSubhaloSize: " << this->MinimumSubhaloSize << "\n";
  os << indent << "Softening: " << this->Softening << "\n";
  os << indent << "GravitationalConstant: " << this->GravitationalConstant << "\n";
  os << indent << "OpeningAngle: " << this->OpeningAngle << "\n";
}
