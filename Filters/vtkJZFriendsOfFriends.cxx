#include "vtkJZFriendsOfFriends.h"

#include "vtkJZCommunicator.h"
#include "vtkJZFofTreeCache.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZPeriodicBox.h"

#include "vtkCellArray.h"
#include "vtkCompositeDataSet.h"
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

#include "jz/Distributed.h"
#include "jz/Fof.h"
#include "jz/HaloProperties.h"
#include "jz/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
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
  jz::HaloPropertiesOptions halo; // catalogue additions (referenceDensity: Critical, or 0 = Mean)
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

// The kernels' problem for this rank's points under the settings.
template <class T>
jz::FofProblem<T> MakeProblem(
  const Buffer<T>& coords, const Buffer<jz::GlobalId>& ids, const FofSettings& s)
{
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
  return problem;
}

// jz::problemError of this rank's piece, in the filter's words (with the
// LinkingLength property as the length: Relative mode scales it later).
template <class T>
std::string PieceError(const Buffer<T>& coords, FofSettings s, double linkingLength)
{
  s.linkingLength = linkingLength;
  return jz::problemError(MakeProblem(coords, Buffer<jz::GlobalId>(), s),
    jz::ProblemExtent::RankPiece, vtkJZKernelAdapter::PropertyNames());
}

// The catalogue additions (centres of potential, SO) for this rank's rows;
// the reference density of the Mean mode is the total mass over the box.
template <class T>
jz::HaloProperties HaloAdditions(jz::Communicator& comm, const Buffer<T>& coords,
  const Buffer<double>& masses, const Buffer<jz::GlobalId>& ids, vtkIdTypeArray* groupId,
  const jz::FofCatalogue& cat, const std::vector<jz::GlobalId>& rows, std::size_t numGroups,
  const FofSettings& s, const jz::RunControl& control)
{
  jz::HaloPropertiesInput<T> in;
  in.points = coords.data;
  in.numPoints = coords.size;
  in.masses = masses.data;
  in.ids = ids.data;
  static_assert(sizeof(vtkIdType) == sizeof(jz::GlobalId), "vtkIdType must be 64-bit");
  in.groupId =
    coords.size ? reinterpret_cast<const jz::GlobalId*>(groupId->GetPointer(0)) : nullptr;
  in.rowGroupId = rows;
  in.rowCenterOfMass = cat.centerOfMass;
  in.rowMass = cat.mass;
  in.numGroups = numGroups;
  in.periodic = s.periodic;
  for (int d = 0; d < 3; ++d)
  {
    in.boxLo[d] = s.box[2 * d];
    in.boxHi[d] = s.box[2 * d + 1];
  }
  jz::HaloPropertiesOptions options = s.halo;
  if (options.sphericalOverdensity && options.referenceDensity == 0) // Mean
  {
    double local = 0;
    for (std::size_t i = 0; i < coords.size; ++i)
    {
      local += masses.data ? masses.data[i] : 1.0;
    }
    double total = 0;
    for (const auto& b : comm.allGather(jz::toBytes(std::vector<double>{ local })))
    {
      total += jz::fromBytes<double>(b)[0];
    }
    const double volume = (s.box[1] - s.box[0]) * (s.box[3] - s.box[2]) * (s.box[5] - s.box[4]);
    options.referenceDensity = total / volume;
  }
  jz::HaloProperties out;
  jz::computeHaloProperties(comm, in, options, out, control);
  return out;
}

// Runs groups, labels and catalogue in precision T (over all ranks of `comm`
// when there are several: jz::computeFofDistributed; with one, the
// single-process kernels); fills the outputs only when everything succeeded.
// Throws on failure (the same jz::Error on every rank).
template <class T>
void RunFof(vtkAlgorithm* self, jz::Communicator& comm, vtkDataObject* input,
  const Buffer<T>& coords, const Buffer<double>& masses, const Buffer<double>& velocities,
  const Buffer<jz::GlobalId>& ids, const FofSettings& s, vtkDataObject* output,
  vtkPolyData* catalogueOut, vtkJZFofTreeCache& cache,
  const vtkJZFofTreeCache::Key& key)
{
  const vtkIdType n = static_cast<vtkIdType>(coords.size);
  const jz::FofProblem<T> problem = MakeProblem(coords, ids, s);

  const jz::RunControl control = vtkJZKernelAdapter::MakeRunControl(self);
  // Progress: groups 0..0.85, labels and catalogue 0.85..1.
  auto scaled = [&control](double lo, double hi)
  {
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
  jz::FofCatalogue cat;
  std::vector<jz::GlobalId> catalogueGroupId; // GroupId of each catalogue row
  std::size_t distributedGroups = 0;          // G over all ranks (parallel runs)
  jz::RunInfo info;
  if (comm.size() > 1)
  {
    jz::FofDistributedOptions options;
    options.minimumGroupSize = s.minimumGroupSize;
    options.masses = masses.data;
    options.velocities = velocities.data;
    jz::FofDistributedResult result;
    info = jz::computeFofDistributed<T>(problem, options, result, comm, s.backend, control);
    groupId = NewIdArray("GroupId", n);
    groupSize = NewIdArray("GroupSize", n);
    if (n > 0)
    {
      std::copy(result.groupId.begin(), result.groupId.end(), groupId->GetPointer(0));
      std::copy(result.groupSize.begin(), result.groupSize.end(), groupSize->GetPointer(0));
    }
    cat = std::move(result.catalogue);
    catalogueGroupId = std::move(result.catalogueGroupId);
    distributedGroups = result.numGroups;
  }
  else
  {
    std::size_t numGroups = 0;
    {
      jz::FofGroups groups;
      info = cache.Groups<T>(problem, key, s.backend, groupsControl, groups);
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
    // The member with the smallest global id is each group's reference point
    // for periodic unwrapping, as in parallel runs.
    in.ids = ids.data;
    in.periodic = s.periodic;
    for (int d = 0; d < 3; ++d)
    {
      in.boxLo[d] = s.box[2 * d];
      in.boxHi[d] = s.box[2 * d + 1];
    }
    jz::computeFofCatalogue(in, cat, catalogueControl);
    catalogueGroupId.resize(numGroups);
    for (std::size_t g = 0; g < numGroups; ++g)
    {
      catalogueGroupId[g] = static_cast<jz::GlobalId>(g);
    }
  }
  vtkJZKernelAdapter::ReportRunInfo("FriendsOfFriends", info, comm);

  jz::HaloProperties extra;
  if (s.halo.potentialCentres || s.halo.sphericalOverdensity)
  {
    extra = HaloAdditions(comm, coords, masses, ids, groupId, cat, catalogueGroupId,
      comm.size() > 1 ? distributedGroups : catalogueGroupId.size(), s, catalogueControl);
  }

  // Catalogue: one vertex per kept group (that this rank owns) at its centre
  // of mass.
  const vtkIdType G = static_cast<vtkIdType>(cat.count.size());
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
    catId->SetValue(g, catalogueGroupId[g]);
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

  vtkJZKernelAdapter::AttachResults(input, output, { groupId, groupSize }, "GroupId");
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
  if (s.halo.potentialCentres)
  {
    auto cop = NewDoubleArray("CentreOfPotential", 3, G);
    auto mostBound = NewIdArray("MostBoundId", G);
    for (vtkIdType g = 0; g < G; ++g)
    {
      cop->SetTypedTuple(g, &extra.centreOfPotential[3 * g]);
      mostBound->SetValue(g, extra.mostBoundId[g]);
    }
    cpd->AddArray(cop);
    cpd->AddArray(mostBound);
  }
  if (s.halo.sphericalOverdensity)
  {
    auto soRadius = NewDoubleArray("SORadius", 1, G);
    auto soMass = NewDoubleArray("SOMass", 1, G);
    auto soCount = NewIdArray("SOCount", G);
    for (vtkIdType g = 0; g < G; ++g)
    {
      soRadius->SetValue(g, extra.soRadius[g]);
      soMass->SetValue(g, extra.soMass[g]);
      soCount->SetValue(g, extra.soCount[g]);
    }
    cpd->AddArray(soRadius);
    cpd->AddArray(soMass);
    cpd->AddArray(soCount);
  }
  cpd->SetActiveScalars("Count");
  vtkJZKernelAdapter::AddDeviceFieldData(catalogueOut, info.backend);
}
} // namespace

//------------------------------------------------------------------------------
// The catalogue additions' properties (the same on every rank).
std::string vtkJZFriendsOfFriends::HaloOptionsError() const
{
  auto finite = [](double v) { return std::isfinite(v); };
  if (this->PotentialCentres && !(finite(this->Softening) && this->Softening >= 0))
  {
    return "Softening must be finite and >= 0 (got " + std::to_string(this->Softening) + ").";
  }
  if (this->PotentialCentres &&
    !(finite(this->GravitationalConstant) && this->GravitationalConstant > 0))
  {
    return "GravitationalConstant must be finite and > 0 (got " +
      std::to_string(this->GravitationalConstant) + ").";
  }
  if (!this->SphericalOverdensity)
  {
    return {};
  }
  if (!(finite(this->Overdensity) && this->Overdensity > 0))
  {
    return "Overdensity must be finite and > 0 (got " + std::to_string(this->Overdensity) + ").";
  }
  if (this->OverdensityReference == MEAN_DENSITY && !this->Periodic)
  {
    return "OverdensityReference Mean needs Periodic: the mean density is the total mass over "
           "the periodic box volume (or choose Critical with CriticalDensity).";
  }
  if (this->OverdensityReference == CRITICAL_DENSITY &&
    !(finite(this->CriticalDensity) && this->CriticalDensity > 0))
  {
    return "CriticalDensity must be finite and > 0 (got " + std::to_string(this->CriticalDensity) +
      ").";
  }
  return {};
}

//------------------------------------------------------------------------------
vtkJZFriendsOfFriends::vtkJZFriendsOfFriends()
  : TreeCache(new vtkJZFofTreeCache)
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
}

//------------------------------------------------------------------------------
vtkJZFriendsOfFriends::~vtkJZFriendsOfFriends()
{
  delete this->TreeCache;
}

//------------------------------------------------------------------------------
int vtkJZFriendsOfFriends::FillOutputPortInformation(int port, vtkInformation* info)
{
  // Port 0 has the Input's type: a point set or a composite of point sets.
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 1 ? "vtkPolyData" : "vtkDataObject");
  return 1;
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
// Composite data sets are accepted as such (not iterated block by block by
// the pipeline): all blocks form one particle set.
int vtkJZFriendsOfFriends::FillInputPortInformation(int port, vtkInformation* info)
{
  if (!this->Superclass::FillInputPortInformation(port, info))
  {
    return 0;
  }
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

//------------------------------------------------------------------------------
const char* vtkJZFriendsOfFriends::GetSelectedArrayName(int idx, vtkDataObject* input)
{
  return vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(idx), input);
}

//------------------------------------------------------------------------------
int vtkJZFriendsOfFriends::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, 0);
  vtkPolyData* catalogue = vtkPolyData::GetData(outputVector, 1);
  if (!output || !catalogue)
  {
    vtkErrorMacro("No output data objects.");
    return 0;
  }
  output->Initialize();
  catalogue->Initialize();

  // Parallel runs (README, "Parallel (MPI) runs"): every rank holds its own
  // pieces and takes part in every collective below, also a rank without
  // points; errors found on one rank are agreed on before anyone returns, so
  // all ranks fail together and none waits for the others.
  std::unique_ptr<jz::Communicator> comm = vtkJZKernelAdapter::MakeCommunicator();

  std::string error;
  std::vector<vtkDataSet*> pieces;
  for (vtkDataObject* leaf : vtkJZKernelAdapter::GetLeaves(input))
  {
    auto* ps = vtkPointSet::SafeDownCast(leaf);
    if (!ps)
    {
      error = std::string("The Input holds a ") + leaf->GetClassName() +
        "; it must be a point set (e.g. vtkPolyData).";
      break;
    }
    pieces.push_back(ps);
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  const vtkIdType n = vtkJZKernelAdapter::CountPoints(pieces); // on this rank
  const std::int64_t totalPoints = jz::allSum(*comm, n);
  if (totalPoints == 0)
  {
    return 1; // empty input, empty outputs
  }

  // The properties are the same on every rank.
  const std::string lengthError =
    jz::linkingLengthError(this->LinkingLength, vtkJZKernelAdapter::PropertyNames());
  if (!lengthError.empty())
  {
    vtkErrorMacro(<< lengthError);
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
  // All ranks must run the same precision: float only when every rank's
  // points are float.
  const bool useFloat =
    vtkJZKernelAdapter::AllRanks(*comm, vtkJZKernelAdapter::PointPrecision(pieces) == VTK_FLOAT);

  Buffer<double> masses, velocities;
  Buffer<jz::GlobalId> ids;
  if (vtkJZKernelAdapter::GetPointValues(
        pieces, this->GetSelectedArrayName(0, input), 1, "MassArray", masses, error) &&
    vtkJZKernelAdapter::GetPointValues(
      pieces, this->GetSelectedArrayName(1, input), 3, "VelocityArray", velocities, error))
  {
    vtkJZKernelAdapter::GetGlobalIds(pieces, ids, error);
  }

  Buffer<float> coordsF;
  Buffer<double> coordsD;
  if (useFloat)
  {
    vtkJZKernelAdapter::GetCoordinates(pieces, coordsF);
  }
  else
  {
    vtkJZKernelAdapter::GetCoordinates(pieces, coordsD);
  }

  FofSettings settings;
  settings.minimumGroupSize = this->MinimumGroupSize;
  settings.periodic = this->Periodic;
  std::copy(box, box + 6, settings.box);
  // The kernels' rules for this rank's piece, in the filter's words (the
  // linking length checked is the property; Relative mode scales it below).
  // Non-finite coordinates first: they would also spoil the bounding box.
  if (error.empty())
  {
    error = useFloat ? PieceError(coordsF, settings, this->LinkingLength)
                     : PieceError(coordsD, settings, this->LinkingLength);
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty() ||
    !vtkJZKernelAdapter::MakeGlobalIds(*comm, static_cast<std::size_t>(n), ids, error))
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  // Bounds as (-min, max) so that one reduction gives the global box.
  double negLoHi[6] = { -VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX,
    -VTK_DOUBLE_MAX, -VTK_DOUBLE_MAX };
  for (vtkIdType i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
    {
      const double x = useFloat ? double(coordsF.data[3 * i + d]) : coordsD.data[3 * i + d];
      negLoHi[2 * d] = std::max(negLoHi[2 * d], -x);
      negLoHi[2 * d + 1] = std::max(negLoHi[2 * d + 1], x);
    }
  }
  comm->allReduceMax(negLoHi, 6);
  const double bounds[6] = { -negLoHi[0], negLoHi[1], -negLoHi[2], negLoHi[3], -negLoHi[4],
    negLoHi[5] };

  static_assert(DEVICE_AUTO == static_cast<int>(jz::Backend::Auto) &&
      DEVICE_CPU == static_cast<int>(jz::Backend::CPU) &&
      DEVICE_CUDA == static_cast<int>(jz::Backend::CUDA),
    "the Device values are jz::Backend's");
  settings.backend = vtkJZKernelAdapter::ToBackend(this->Device);
  const std::string haloError = this->HaloOptionsError();
  if (!haloError.empty())
  {
    vtkErrorMacro(<< haloError);
    return 0;
  }
  settings.halo.potentialCentres = this->PotentialCentres;
  settings.halo.softening = this->Softening;
  settings.halo.gravitationalConstant = this->GravitationalConstant;
  settings.halo.sphericalOverdensity = this->SphericalOverdensity;
  settings.halo.overdensity = this->Overdensity;
  settings.halo.referenceDensity =
    this->OverdensityReference == CRITICAL_DENSITY ? this->CriticalDensity : 0.0;
  if (this->LinkingLengthMode == RELATIVE)
  {
    // Global N and the global bounding box (or the periodic box).
    const double* b = this->Periodic ? box : bounds;
    const double volume = (b[1] - b[0]) * (b[3] - b[2]) * (b[5] - b[4]);
    settings.linkingLength =
      jz::relativeLinkingLength(this->LinkingLength, volume, static_cast<std::size_t>(totalPoints));
    if (!(settings.linkingLength > 0) || !std::isfinite(settings.linkingLength))
    {
      vtkErrorMacro("Relative linking length needs a volume: the "
        << (this->Periodic ? "periodic box" : "bounding box of the Input") << " has volume "
        << volume << ". Use LinkingLengthMode Absolute for flat data.");
      return 0;
    }
  }
  else
  {
    settings.linkingLength = this->LinkingLength;
  }

  // What the cached tree depends on besides LinkingLength and MinimumGroupSize.
  vtkJZFofTreeCache::Key key;
  key.inputStamp = vtkJZFofTreeCache::Stamp(pieces);
  key.periodic = settings.periodic;
  std::copy(settings.box, settings.box + 6, key.box);
  key.device = this->Device;
  key.useFloat = useFloat;
  key.numPoints = static_cast<std::size_t>(n);
  try
  {
    if (useFloat)
    {
      RunFof<float>(this, *comm, input, coordsF, masses, velocities, ids, settings, output,
        catalogue, *this->TreeCache, key);
    }
    else
    {
      RunFof<double>(this, *comm, input, coordsD, masses, velocities, ids, settings, output,
        catalogue, *this->TreeCache, key);
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
  os << indent
     << "LinkingLengthMode: " << (this->LinkingLengthMode == ABSOLUTE ? "Absolute" : "Relative")
     << "\n";
  os << indent << "LinkingLength: " << this->LinkingLength << "\n";
  os << indent << "MinimumGroupSize: " << this->MinimumGroupSize << "\n";
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "BoxBounds: " << this->BoxBounds[0] << " " << this->BoxBounds[1] << " "
     << this->BoxBounds[2] << " " << this->BoxBounds[3] << " " << this->BoxBounds[4] << " "
     << this->BoxBounds[5] << "\n";
  os << indent << "BoxFromData: " << this->BoxFromData << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
