#include "vtkJZFriendsOfFriends.h"

#include "vtkJZKernelAdapter.h"

#include "vtkCellArray.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"

#include "jz/Fof.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <vector>

vtkStandardNewMacro(vtkJZFriendsOfFriends);

namespace
{
using vtkJZKernelAdapter::Buffer;

struct FofSettings
{
  double linkingLength = 0;
  vtkIdType minimumGroupSize = 20;
  bool periodic = false;
  double box[6] = { 0, 1, 0, 1, 0, 1 };
  jz::Backend backend = jz::Backend::Auto;
};

vtkSmartPointer<vtkDoubleArray> NewDoubleArray(const char* name, int numComponents, vtkIdType n)
{
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(numComponents);
  a->SetNumberOfTuples(n);
  return a;
}

vtkSmartPointer<vtkIdTypeArray> NewIdArray(const char* name, vtkIdType n)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(n);
  return a;
}

// Runs groups, labels and catalogue in precision T; fills the outputs only
// when everything succeeded. Throws on failure.
template <class T>
void RunFof(vtkAlgorithm* self, vtkPointSet* input, const Buffer<T>& coords,
  const Buffer<double>& masses, const Buffer<double>& velocities,
  const Buffer<jz::GlobalId>& ids, const FofSettings& s, vtkPointSet* output,
  vtkPolyData* catalogueOut)
{
  const vtkIdType n = static_cast<vtkIdType>(coords.size);
  jz::FofProblem<T> problem;
  problem.points = coords.data;
  problem.numPoints = coords.size;
  problem.linkingLength = s.linkingLength;
  problem.periodic = s.periodic;
  for (int d = 0; d < 3; ++d)
  {
    problem.boxLo[d] = s.box[2 * d];
    problem.boxHi[d] = s.box[2 * d + 1];
  }
  problem.ids = ids.data;

  const jz::RunControl control = vtkJZKernelAdapter::MakeRunControl(self);
  // Progress: groups 0..0.85, labels and catalogue 0.85..1.
  auto scaled = [&control](double lo, double hi) {
    jz::RunControl c = control;
    if (control.progress)
    {
      c.progress = [&control, lo, hi](double f) { return control.progress(lo + (hi - lo) * f); };
    }
    return c;
  };
  const jz::RunControl groupsControl = scaled(0.0, 0.85);
  const jz::RunControl catalogueControl = scaled(0.85, 1.0);
  vtkSmartPointer<vtkIdTypeArray> groupId, groupSize;
  std::size_t numGroups = 0;
  jz::RunInfo info;
  {
    jz::FofGroups groups;
    info = jz::computeFofGroups<T>(problem, groups, s.backend, groupsControl);
    const std::vector<jz::GlobalId>& label = groups.groupLabel;
    const std::vector<jz::Index>& root = groups.groupRoot;
    // The output arrays only now, after the kernel's tree is gone: this keeps
    // the peak memory below 48 bytes per point beyond the input.
    groupId = NewIdArray("GroupId", n);
    groupSize = NewIdArray("GroupSize", n);
    static_assert(sizeof(vtkIdType) == sizeof(jz::GlobalId), "vtkIdType must be 64-bit");
    numGroups = jz::labelFofGroups(root.data(), label.data(), coords.size, s.minimumGroupSize,
      reinterpret_cast<jz::GlobalId*>(groupId->GetPointer(0)),
      reinterpret_cast<jz::GlobalId*>(groupSize->GetPointer(0)), catalogueControl);
  }

  jz::FofCatalogueInput<T> in;
  in.points = coords.data;
  in.numPoints = coords.size;
  in.groupId = reinterpret_cast<const jz::GlobalId*>(groupId->GetPointer(0));
  in.numGroups = numGroups;
  in.masses = masses.data;
  in.velocities = velocities.data;
  in.periodic = s.periodic;
  for (int d = 0; d < 3; ++d)
  {
    in.boxLo[d] = s.box[2 * d];
    in.boxHi[d] = s.box[2 * d + 1];
  }
  jz::FofCatalogue cat;
  jz::computeFofCatalogue(in, cat, catalogueControl);

  // Catalogue: one vertex per kept group at its centre of mass.
  const vtkIdType G = static_cast<vtkIdType>(numGroups);
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(G);
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfTuples(G + 1);
  auto conn = vtkSmartPointer<vtkIdTypeArray>::New();
  conn->SetNumberOfTuples(G);
  auto catId = NewIdArray("GroupId", G);
  auto count = NewIdArray("Count", G);
  auto mass = NewDoubleArray("Mass", 1, G);
  auto com = NewDoubleArray("CenterOfMass", 3, G);
  auto radius = NewDoubleArray("InertiaRadius", 1, G);
  vtkSmartPointer<vtkDoubleArray> meanVel, disp;
  if (cat.hasVelocities)
  {
    meanVel = NewDoubleArray("MeanVelocity", 3, G);
    disp = NewDoubleArray("VelocityDispersion", 1, G);
  }
  for (vtkIdType g = 0; g < G; ++g)
  {
    points->SetPoint(g, &cat.centerOfMass[3 * g]);
    offsets->SetValue(g, g);
    conn->SetValue(g, g);
    catId->SetValue(g, g);
    count->SetValue(g, cat.count[g]);
    mass->SetValue(g, cat.mass[g]);
    com->SetTypedTuple(g, &cat.centerOfMass[3 * g]);
    radius->SetValue(g, cat.inertiaRadius[g]);
    if (cat.hasVelocities)
    {
      meanVel->SetTypedTuple(g, &cat.meanVelocity[3 * g]);
      disp->SetValue(g, cat.velocityDispersion[g]);
    }
  }
  offsets->SetValue(G, G);
  verts->SetData(offsets, conn);

  output->ShallowCopy(input);
  output->GetPointData()->AddArray(groupId);
  output->GetPointData()->AddArray(groupSize);
  output->GetPointData()->SetActiveScalars("GroupId");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);

  catalogueOut->SetPoints(points);
  catalogueOut->SetVerts(verts);
  vtkPointData* cpd = catalogueOut->GetPointData();
  cpd->AddArray(catId);
  cpd->AddArray(count);
  cpd->AddArray(mass);
  cpd->AddArray(com);
  cpd->AddArray(radius);
  if (cat.hasVelocities)
  {
    cpd->AddArray(meanVel);
    cpd->AddArray(disp);
  }
  cpd->SetActiveScalars("Count");
  vtkJZKernelAdapter::AddDeviceFieldData(catalogueOut, info.backend);
}
} // namespace

//------------------------------------------------------------------------------
vtkJZFriendsOfFriends::vtkJZFriendsOfFriends()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
}

//------------------------------------------------------------------------------
int vtkJZFriendsOfFriends::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == 1)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkPolyData");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

//------------------------------------------------------------------------------
// Port 0 has the Input's type, port 1 is always vtkPolyData.
int vtkJZFriendsOfFriends::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
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
  vtkInformation* catInfo = outputVector->GetInformationObject(1);
  if (!vtkPolyData::SafeDownCast(vtkDataObject::GetData(catInfo)))
  {
    auto poly = vtkSmartPointer<vtkPolyData>::New();
    catInfo->Set(vtkDataObject::DATA_OBJECT(), poly);
  }
  return 1;
}

//------------------------------------------------------------------------------
bool vtkJZFriendsOfFriends::GetSelectedArray(
  int idx, const char* what, vtkDataSet* input, vtkDataArray*& array, std::string& error)
{
  array = nullptr;
  vtkInformation* info = this->GetInputArrayInformation(idx);
  const char* name =
    info && info->Has(vtkDataObject::FIELD_NAME()) ? info->Get(vtkDataObject::FIELD_NAME()) : nullptr;
  if (!name || !*name)
  {
    return true;
  }
  vtkAbstractArray* abstractArray = input->GetPointData()->GetAbstractArray(name);
  if (!abstractArray)
  {
    if (std::strcmp(name, "None") == 0)
    {
      return true;
    }
    error = std::string(what) + " '" + name + "' is not a point array of the Input.";
    return false;
  }
  array = vtkDataArray::SafeDownCast(abstractArray);
  if (!array)
  {
    error = std::string(what) + " '" + name + "' is not a numeric array.";
    return false;
  }
  return true;
}

//------------------------------------------------------------------------------
int vtkJZFriendsOfFriends::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkPointSet* input = vtkPointSet::GetData(inputVector[0], 0);
  vtkPointSet* output = vtkPointSet::GetData(outputVector, 0);
  vtkPolyData* catalogue = vtkPolyData::GetData(outputVector, 1);
  if (!output || !catalogue)
  {
    vtkErrorMacro("No output data objects.");
    return 0;
  }
  output->Initialize();
  catalogue->Initialize();

  if (vtkJZKernelAdapter::IsParallelRun())
  {
    vtkErrorMacro("FriendsOfFriends: parallel runs are not supported yet: this run has "
      << vtkJZKernelAdapter::NumberOfProcesses() << " MPI processes. Run on a single process.");
    return 0;
  }
  if (!input || input->GetNumberOfPoints() == 0)
  {
    return 1; // empty input, empty outputs
  }
  const vtkIdType n = input->GetNumberOfPoints();

  if (!std::isfinite(this->LinkingLength) || !(this->LinkingLength > 0))
  {
    vtkErrorMacro("LinkingLength must be a positive finite number; it is "
      << this->LinkingLength << ".");
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
  vtkDataArray* velocityArray = nullptr;
  Buffer<double> masses, velocities;
  if (!this->GetSelectedArray(0, "MassArray", input, massArray, error) ||
    !vtkJZKernelAdapter::GetPointValues(massArray, n, 1, "MassArray", masses, error) ||
    !this->GetSelectedArray(1, "VelocityArray", input, velocityArray, error) ||
    !vtkJZKernelAdapter::GetPointValues(velocityArray, n, 3, "VelocityArray", velocities, error))
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

  const bool useFloat = vtkJZKernelAdapter::PointPrecision(input) == VTK_FLOAT;
  Buffer<float> coordsF;
  Buffer<double> coordsD;
  if (useFloat)
  {
    vtkJZKernelAdapter::GetCoordinates(input, coordsF);
  }
  else
  {
    vtkJZKernelAdapter::GetCoordinates(input, coordsD);
  }

  // Non-finite coordinates first: they would also spoil the bounding box.
  double bounds[6] = { VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX, VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX,
    VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX };
  for (vtkIdType i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
    {
      const double x = useFloat ? double(coordsF.data[3 * i + d]) : coordsD.data[3 * i + d];
      if (!std::isfinite(x))
      {
        vtkErrorMacro("Point " << i << " has a non-finite coordinate.");
        return 0;
      }
      bounds[2 * d] = std::min(bounds[2 * d], x);
      bounds[2 * d + 1] = std::max(bounds[2 * d + 1], x);
    }
  }

  FofSettings settings;
  settings.minimumGroupSize = this->MinimumGroupSize;
  settings.periodic = this->Periodic;
  std::copy(this->BoxBounds, this->BoxBounds + 6, settings.box);
  settings.backend = vtkJZKernelAdapter::ToBackend(this->Device);
  if (this->LinkingLengthMode == RELATIVE)
  {
    const double* b = this->Periodic ? this->BoxBounds : bounds;
    const double volume = (b[1] - b[0]) * (b[3] - b[2]) * (b[5] - b[4]);
    settings.linkingLength =
      jz::relativeLinkingLength(this->LinkingLength, volume, static_cast<std::size_t>(n));
    if (!(settings.linkingLength > 0) || !std::isfinite(settings.linkingLength))
    {
      vtkErrorMacro("Relative linking length needs a volume: the "
        << (this->Periodic ? "periodic box" : "bounding box of the Input")
        << " has volume " << volume << ". Use LinkingLengthMode Absolute for flat data.");
      return 0;
    }
  }
  else
  {
    settings.linkingLength = this->LinkingLength;
  }

  try
  {
    if (useFloat)
    {
      RunFof<float>(this, input, coordsF, masses, velocities, ids, settings, output, catalogue);
    }
    else
    {
      RunFof<double>(this, input, coordsD, masses, velocities, ids, settings, output, catalogue);
    }
  }
  catch (const jz::Aborted&)
  {
    output->Initialize();
    catalogue->Initialize();
    vtkWarningMacro("FriendsOfFriends was aborted; the outputs are empty.");
    return 1;
  }
  catch (const std::exception& e)
  {
    output->Initialize();
    catalogue->Initialize();
    vtkErrorMacro("FriendsOfFriends failed: " << e.what());
    return 0;
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZFriendsOfFriends::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "LinkingLengthMode: "
     << (this->LinkingLengthMode == ABSOLUTE ? "Absolute" : "Relative") << "\n";
  os << indent << "LinkingLength: " << this->LinkingLength << "\n";
  os << indent << "MinimumGroupSize: " << this->MinimumGroupSize << "\n";
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "BoxBounds: " << this->BoxBounds[0] << " " << this->BoxBounds[1] << " "
     << this->BoxBounds[2] << " " << this->BoxBounds[3] << " " << this->BoxBounds[4] << " "
     << this->BoxBounds[5] << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
