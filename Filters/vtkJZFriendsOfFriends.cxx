#include "vtkJZFriendsOfFriends.h"

#include "vtkJZFilterRun.h"
#include "vtkJZFofResultCache.h"
#include "vtkJZFofTreeCache.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "jz/StageTimer.h" // the one scoped clock of the kernels

#include "vtkCellArray.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDemandDrivenPipeline.h"
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
#include "vtkStreamingDemandDrivenPipeline.h"

#include "jz/Distributed.h"
#include "jz/Fof.h"
#include "jz/FofCatalogueColumns.h"
#include "jz/HaloProperties.h"
#include "jz/RelativeLinkingLength.h"
#include "jz/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZFriendsOfFriends);

namespace
{
using vtkJZKernelAdapter::Buffer;
using vtkJZKernelAdapter::NewArray;
using vtkJZKernelAdapter::ParticleInput;
using FofResult = vtkJZFofResultCache::Result;

struct FofSettings
{
  double linkingLength = 0;
  vtkIdType minimumGroupSize = 20;
  bool periodic = false;
  double box[6] = { 0, 1, 0, 1, 0, 1 };
  jz::Backend backend = jz::Backend::Auto;
  jz::HaloPropertiesOptions halo; // catalogue additions (referenceDensity: Critical, or 0 = Mean)
};

// The kernels' problem for this rank's points under the settings.
template <class T>
jz::FofProblem<T> MakeProblem(
  const Buffer<T>& coords, const Buffer<jz::GlobalId>& ids, const FofSettings& s)
{
  jz::FofProblem<T> problem;
  problem.points = coords.data;
  problem.numPoints = coords.size;
  problem.linkingLength = s.linkingLength;
  vtkJZKernelAdapter::SetPeriodicBox(s.periodic, s.box, problem);
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
jz::HaloProperties HaloAdditions(vtkAlgorithm* self, jz::Communicator& comm,
  const Buffer<T>& coords, const Buffer<double>& masses, const Buffer<jz::GlobalId>& ids,
  vtkIdTypeArray* groupId, const jz::FofCatalogue& cat, const std::vector<jz::GlobalId>& rows,
  std::size_t numGroups, const FofSettings& s, const jz::RunControl& control,
  std::vector<std::string>& warnings)
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
  vtkJZKernelAdapter::SetPeriodicBox(s.periodic, s.box, in);
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
  const jz::RunInfo info = jz::computeHaloProperties(comm, in, options, out, control);
  vtkJZKernelAdapter::ReportRunInfo(self, "FriendsOfFriends catalogue additions", info, comm);
  warnings = info.warnings;
  return out;
}

// Runs groups, labels and catalogue in precision T (over all ranks of `comm`
// when there are several: jz::computeFofDistributed; with one, the
// single-process kernels) into `result`. Throws on failure (the same
// jz::Error on every rank).
template <class T>
void RunFof(vtkAlgorithm* self, jz::Communicator& comm, const Buffer<T>& coords,
  const Buffer<double>& masses, const Buffer<double>& velocities, const Buffer<jz::GlobalId>& ids,
  const FofSettings& s, vtkJZFofTreeCache& cache, const vtkJZFofTreeCache::Key& key,
  FofResult& result)
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
    // The kernel writes straight into the output arrays (their pages are
    // only touched at the end, by the results sent home).
    groupId = vtkJZKernelAdapter::NewArray<vtkIdTypeArray>("GroupId", n);
    groupSize = vtkJZKernelAdapter::NewArray<vtkIdTypeArray>("GroupSize", n);
    static_assert(sizeof(vtkIdType) == sizeof(jz::GlobalId), "vtkIdType must be 64-bit");
    jz::FofDistributedOptions options;
    options.minimumGroupSize = s.minimumGroupSize;
    options.masses = masses.data;
    options.velocities = velocities.data;
    if (n > 0)
    {
      options.groupIdOut = reinterpret_cast<jz::GlobalId*>(groupId->GetPointer(0));
      options.groupSizeOut = reinterpret_cast<jz::GlobalId*>(groupSize->GetPointer(0));
    }
    jz::FofDistributedResult result;
    info = jz::computeFofDistributed<T>(problem, options, result, comm, s.backend, control);
    cat = std::move(result.catalogue);
    catalogueGroupId = std::move(result.catalogueGroupId);
    distributedGroups = result.numGroups;
  }
  else
  {
    std::size_t numGroups = 0;
    std::vector<jz::Index> reference; // per kept group, when the cut gives it
    {
      info = cache.Groups<T>(problem, key, s.backend, groupsControl);
      // The output arrays only now, after the kernel's tree is gone: this keeps
      // the peak memory below 48 bytes per point beyond the input.
      groupId = vtkJZKernelAdapter::NewArray<vtkIdTypeArray>("GroupId", n);
      groupSize = vtkJZKernelAdapter::NewArray<vtkIdTypeArray>("GroupSize", n);
      static_assert(sizeof(vtkIdType) == sizeof(jz::GlobalId), "vtkIdType must be 64-bit");
      const jz::StageTimer timer(&info, "labels");
      auto* gid = reinterpret_cast<jz::GlobalId*>(groupId->GetPointer(0));
      auto* gsize = reinterpret_cast<jz::GlobalId*>(groupSize->GetPointer(0));
      if (cache.LastWasCut())
      {
        // Straight from the cut's runs, with each group's reference member.
        numGroups = cache.LabelCut(s.minimumGroupSize, gid, gsize, &reference, catalogueControl);
      }
      else
      {
        const jz::FofGroups& groups = cache.WalkedGroups();
        numGroups = jz::labelFofGroups(groups.groupRoot.data(), groups.groupLabel.data(),
          coords.size, s.minimumGroupSize, gid, gsize, catalogueControl);
      }
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
    in.reference = reference.empty() ? nullptr : reference.data();
    vtkJZKernelAdapter::SetPeriodicBox(s.periodic, s.box, in);
    {
      const jz::StageTimer timer(&info, "catalogue");
      jz::computeFofCatalogue(in, cat, catalogueControl);
    }
    catalogueGroupId.resize(numGroups);
    for (std::size_t g = 0; g < numGroups; ++g)
    {
      catalogueGroupId[g] = static_cast<jz::GlobalId>(g);
    }
  }
  vtkJZKernelAdapter::ReportRunInfo(self, "FriendsOfFriends", info, comm);
  result.Warnings = info.warnings;

  jz::HaloProperties extra;
  if (s.halo.potentialCentres || s.halo.sphericalOverdensity)
  {
    extra = HaloAdditions(self, comm, coords, masses, ids, groupId, cat, catalogueGroupId,
      comm.size() > 1 ? distributedGroups : catalogueGroupId.size(), s, catalogueControl,
      result.AdditionsWarnings);
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
  auto catId = NewArray<vtkIdTypeArray>(jz::catalogue::kGroupId, G);
  auto count = NewArray<vtkIdTypeArray>(jz::catalogue::kCount, G);
  auto mass = NewArray<vtkDoubleArray>(jz::catalogue::kMass, G);
  auto com = NewArray<vtkDoubleArray>(jz::catalogue::kCenterOfMass, G, 3);
  auto radius = NewArray<vtkDoubleArray>(jz::catalogue::kInertiaRadius, G);
  vtkSmartPointer<vtkDoubleArray> meanVel, disp;
  if (cat.hasVelocities)
  {
    meanVel = NewArray<vtkDoubleArray>(jz::catalogue::kMeanVelocity, G, 3);
    disp = NewArray<vtkDoubleArray>(jz::catalogue::kVelocityDispersion, G);
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

  result.GroupId = groupId;
  result.GroupSize = groupSize;
  result.Backend = info.backend;
  result.Catalogue = vtkSmartPointer<vtkPolyData>::New();
  vtkPolyData* catalogueOut = result.Catalogue;
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
    auto cop = NewArray<vtkDoubleArray>(jz::catalogue::kCentreOfPotential, G, 3);
    auto mostBound = NewArray<vtkIdTypeArray>(jz::catalogue::kMostBoundId, G);
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
    auto soRadius = NewArray<vtkDoubleArray>(jz::catalogue::kSORadius, G);
    auto soMass = NewArray<vtkDoubleArray>(jz::catalogue::kSOMass, G);
    auto soCount = NewArray<vtkIdTypeArray>(jz::catalogue::kSOCount, G);
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
  cpd->SetActiveScalars(jz::catalogue::kCount);
  vtkJZKernelAdapter::AddDeviceFieldData(catalogueOut, info.backend);
}

// A reused result's warnings again, and under JZ_RUNINFO the reuse.
void ReportReuse(vtkAlgorithm* self, const FofResult& r, const jz::Communicator& comm)
{
  jz::RunInfo info;
  info.backend = r.Backend;
  info.warnings = r.Warnings;
  info.counters.emplace_back("reused the result of this time step", 1);
  vtkJZKernelAdapter::ReportRunInfo(self, "FriendsOfFriends", info, comm);
  if (!r.AdditionsWarnings.empty())
  {
    info.warnings = r.AdditionsWarnings;
    info.counters.clear();
    vtkJZKernelAdapter::ReportRunInfo(self, "FriendsOfFriends catalogue additions", info, comm);
  }
}

// The outputs of a computed or reused result: port 0 the Input with
// GroupId and GroupSize, port 1 the catalogue (sharing the result's arrays).
void ShowResult(
  vtkDataObject* input, vtkDataObject* output, vtkPolyData* catalogueOut, const FofResult& r)
{
  vtkJZKernelAdapter::AttachResults(input, output, { r.GroupId, r.GroupSize }, "GroupId");
  vtkJZKernelAdapter::AddDeviceFieldData(output, r.Backend);
  catalogueOut->ShallowCopy(r.Catalogue);
}

// Two or more time steps upstream; a single data set or step is never cached.
bool InputHasTimeSteps(vtkAlgorithm* self)
{
  vtkInformation* inInfo = self->GetInputInformation(0, 0);
  return inInfo && inInfo->Length(vtkStreamingDemandDrivenPipeline::TIME_STEPS()) >= 2;
}

// The result cache's key of this execution; drops the cache first when a
// property or anything upstream changed (the pipeline MTime).
vtkJZFofResultCache::Key StepKey(vtkAlgorithm* self, vtkJZFofResultCache& cache,
  vtkDataObject* input, const ParticleInput& in, const FofSettings& settings)
{
  auto* executive = vtkDemandDrivenPipeline::SafeDownCast(self->GetExecutive());
  cache.Validate(
    std::max(self->GetMTime(), executive ? executive->GetPipelineMTime() : vtkMTimeType(0)));
  vtkJZFofResultCache::Key key;
  vtkInformation* dataInfo = input->GetInformation();
  key.Time = dataInfo->Has(vtkDataObject::DATA_TIME_STEP())
    ? dataInfo->Get(vtkDataObject::DATA_TIME_STEP())
    : std::nan("");
  key.NumPoints = static_cast<std::size_t>(in.localPoints);
  key.Content = vtkJZFofResultCache::Hash(in);
  // The settings derived from the data (the Relative linking length, the
  // box from the field data) besides the properties.
  const jz::HaloPropertiesOptions& h = settings.halo;
  key.Settings = { settings.linkingLength, static_cast<double>(settings.minimumGroupSize),
    double(settings.periodic), static_cast<double>(settings.backend), double(in.useFloat),
    double(h.potentialCentres), h.softening, h.gravitationalConstant,
    double(h.sphericalOverdensity), h.overdensity, h.referenceDensity };
  key.Settings.insert(key.Settings.end(), settings.box, settings.box + 6);
  return key;
}
} // namespace

//------------------------------------------------------------------------------
// The catalogue additions' properties (the same on every rank).
std::string vtkJZFriendsOfFriends::HaloOptionsError() const
{
  jz::HaloPropertiesOptions options;
  options.potentialCentres = this->PotentialCentres;
  options.softening = this->Softening;
  options.gravitationalConstant = this->GravitationalConstant;
  options.sphericalOverdensity = this->SphericalOverdensity;
  options.overdensity = this->Overdensity;
  // Mean: derived from the periodic box after the input is read (the kernel
  // checks it again); only Critical takes a user value.
  options.referenceDensity =
    this->OverdensityReference == CRITICAL_DENSITY ? this->CriticalDensity : 1.0;
  const std::string error = jz::haloOptionsError(options, vtkJZKernelAdapter::PropertyNames());
  if (error.empty() && this->SphericalOverdensity && this->OverdensityReference == MEAN_DENSITY &&
    !this->Periodic)
  {
    return "OverdensityReference Mean needs Periodic: the mean density is the total mass over "
           "the periodic box volume (or choose Critical with CriticalDensity).";
  }
  return error.empty() ? error : error + ".";
}

//------------------------------------------------------------------------------
vtkJZFriendsOfFriends::vtkJZFriendsOfFriends()
  : TreeCache(new vtkJZFofTreeCache)
  , ResultCache(new vtkJZFofResultCache)
{
  this->SetNumberOfOutputPorts(2);
}

//------------------------------------------------------------------------------
vtkJZFriendsOfFriends::~vtkJZFriendsOfFriends()
{
  delete this->TreeCache;
  delete this->ResultCache;
}

//------------------------------------------------------------------------------
const char* vtkJZFriendsOfFriends::GetSelectedArrayName(int idx, vtkDataObject* input)
{
  return vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(idx), input);
}

//------------------------------------------------------------------------------
int vtkJZFriendsOfFriends::RunParticles(
  vtkDataObject* input, const std::vector<vtkDataObject*>& outputs)
{
  vtkDataObject* output = outputs[0];
  vtkPolyData* catalogue = vtkPolyData::SafeDownCast(outputs[1]);
  this->SetProgressText(nullptr);

  // Every rank takes part in every collective below, also a rank without
  // points (vtkJZParticleInput.h).
  ParticleInput in;
  std::string error = vtkJZKernelAdapter::RangeError({ { jz::ranges::LinkingLengthMode,
                                                         this->LinkingLengthMode },
    { jz::ranges::MinimumGroupSize, static_cast<double>(this->MinimumGroupSize) },
    { jz::ranges::OverdensityReference, this->OverdensityReference },
    { jz::ranges::Device, this->Device } });
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPieces(input, nullptr, in);
  }
  if (error.empty() && in.totalPoints == 0)
  {
    return 1; // empty input, empty outputs
  }
  // The properties are the same on every rank.
  if (error.empty())
  {
    error = jz::linkingLengthError(this->LinkingLength, vtkJZKernelAdapter::PropertyNames());
  }
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPeriodicBox(
      input, this->Periodic, this->BoxFromData, this->BoxBounds, in);
  }
  FofSettings settings;
  settings.minimumGroupSize = this->MinimumGroupSize;
  settings.periodic = this->Periodic;
  std::copy(in.box, in.box + 6, settings.box);
  if (error.empty())
  {
    vtkJZKernelAdapter::PointArrayRequest arrays;
    arrays.masses = this->GetSelectedArrayName(0, input);
    arrays.velocities = this->GetSelectedArrayName(1, input);
    // The kernels' rules for this rank's piece, in the filter's words (the
    // linking length checked is the property; Relative mode scales it below).
    // Non-finite coordinates first: they would also spoil the bounding box.
    error = vtkJZKernelAdapter::ReadPoints(arrays, in,
      [&](const ParticleInput& p)
      {
        return p.useFloat ? PieceError(p.coordsF, settings, this->LinkingLength)
                          : PieceError(p.coordsD, settings, this->LinkingLength);
      });
  }
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  const bool useFloat = in.useFloat;
  const vtkIdType n = in.localPoints;
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
    // Global N and the global bounding box (or the periodic box); the same
    // branch on every rank.
    double volume = 0;
    const auto total = static_cast<std::size_t>(in.totalPoints);
    settings.linkingLength = in.useFloat
      ? jz::relativeLinkingLengthOver(*in.comm, in.coordsF.data, in.coordsF.size, total,
          this->LinkingLength, this->Periodic, in.box, &volume)
      : jz::relativeLinkingLengthOver(*in.comm, in.coordsD.data, in.coordsD.size, total,
          this->LinkingLength, this->Periodic, in.box, &volume);
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
  key.inputStamp = vtkJZFofTreeCache::Stamp(in.pieces);
  key.periodic = settings.periodic;
  std::copy(settings.box, settings.box + 6, key.box);
  key.device = this->Device;
  key.useFloat = useFloat;
  key.numPoints = static_cast<std::size_t>(n);

  // A time step computed before with the same properties and the same input
  // is reused (vtkJZFofResultCache.h). Only for an Input with time steps, a
  // branch the same on every rank (the pipeline's TIME_STEPS); then all
  // ranks reuse or all compute.
  const bool perStep = InputHasTimeSteps(this);
  vtkJZFofResultCache::Key stepKey;
  const FofResult* cached = nullptr;
  if (perStep)
  {
    stepKey = StepKey(this, *this->ResultCache, input, in, settings);
    cached = this->ResultCache->Find(stepKey);
  }
  const bool reuse = perStep && vtkJZKernelAdapter::AllRanks(*in.comm, cached != nullptr);
  return vtkJZKernelAdapter::RunInPrecision(this, "FriendsOfFriends", useFloat,
    { output, catalogue },
    [&](auto precision)
    {
      using T = decltype(precision);
      FofResult result;
      if (reuse)
      {
        result = *cached;
        this->SetProgressText(ReusingProgressText);
        ReportReuse(this, result, *in.comm);
      }
      else
      {
        this->SetProgressText(ComputingProgressText);
        RunFof<T>(this, *in.comm, in.Coordinates<T>(), in.masses, in.velocities, in.ids, settings,
          *this->TreeCache, key, result);
      }
      ShowResult(input, output, catalogue, result);
      if (perStep && !reuse && !std::isnan(stepKey.Time))
      {
        this->ResultCache->Store(stepKey, result);
      }
    });
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
  os << indent << "Cached time steps: " << this->ResultCache->Size() << "\n";
}
