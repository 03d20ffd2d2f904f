#include "vtkJZHaloTracking.h"

#include "vtkJZCommunicator.h"
#include "vtkJZCrashWatchdog.h"
#include "vtkJZKernelAdapter.h"

#include "vtkCompositeDataSet.h"
#include "vtkDataSet.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include "jz/HaloTracking.h"
#include "jz/StageTimer.h" // the one scoped clock of the kernels

#include <algorithm>
#include <string>
#include <vector>

namespace
{
using vtkJZKernelAdapter::Buffer;

// The input's time steps (none: a single data set, one step).
std::vector<double> InputTimes(vtkInformation* inInfo)
{
  vtkInformationDoubleVectorKey* key = vtkStreamingDemandDrivenPipeline::TIME_STEPS();
  if (!inInfo->Has(key))
  {
    return {};
  }
  const double* t = inInfo->Get(key);
  return std::vector<double>(t, t + inInfo->Length(key));
}

// The step shown at time t: the last step at or before t (the first when t
// lies before all), as readers choose their file.
int StepAt(const std::vector<double>& times, double t)
{
  const auto after = std::upper_bound(times.begin(), times.end(), t);
  return after == times.begin() ? 0 : int(after - times.begin()) - 1;
}

// The time the downstream request asks for: that of the requesting port,
// else of port 0.
bool RequestedTime(vtkInformation* request, vtkInformationVector* outputVector, double& t)
{
  int port = request->Has(vtkExecutive::FROM_OUTPUT_PORT())
    ? request->Get(vtkExecutive::FROM_OUTPUT_PORT())
    : 0;
  for (int p : { port, 0 })
  {
    vtkInformation* info = p >= 0 && p < outputVector->GetNumberOfInformationObjects()
      ? outputVector->GetInformationObject(p)
      : nullptr;
    if (info && info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP()))
    {
      t = info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
      return true;
    }
  }
  return false;
}

// One step of the input as the kernel takes it, read collectively.
struct StepPoints
{
  std::vector<vtkDataSet*> pieces;
  vtkIdType numPoints = 0;
  Buffer<jz::GlobalId> ids;
  Buffer<double> groups;
  Buffer<double> masses;
};

// Collective. The ids, GroupIds and masses of one step, with the errors of
// the Input's contract (no GlobalIds, no GroupId, an id twice) agreed on by
// every rank; "" when the step is usable.
std::string ReadStep(jz::Communicator& comm, vtkDataObject* input, const char* massArray,
  std::size_t step, StepPoints& in)
{
  std::string error;
  if (vtkJZKernelAdapter::CollectPieces(input, true, "Input", in.pieces, error))
  {
    in.numPoints = vtkJZKernelAdapter::CountPoints(in.pieces);
    if (vtkJZKernelAdapter::GetGlobalIds(in.pieces, in.ids, error) && in.numPoints > 0 &&
      !in.ids.data)
    {
      error = "The Input has no GlobalIds: HaloTracking links time steps by particle ids that "
              "persist in time (e.g. the snapshot reader's GlobalIds).";
    }
    for (vtkDataSet* piece : in.pieces)
    {
      if (error.empty() && piece->GetNumberOfPoints() > 0 &&
        !piece->GetPointData()->GetArray("GroupId"))
      {
        error = "The Input has no GroupId point array (e.g. FriendsOfFriends' output port 0).";
      }
    }
    if (error.empty() &&
      vtkJZKernelAdapter::GetPointValues(in.pieces, "GroupId", 1, "GroupId", in.groups, error))
    {
      vtkJZKernelAdapter::GetPointValues(in.pieces, massArray, 1, "MassArray", in.masses, error);
    }
  }
  error = vtkJZKernelAdapter::AgreeOnError(comm, error);
  if (error.empty())
  {
    error = jz::duplicateIdError(comm, in.ids.data, in.ids.data ? in.numPoints : 0, step);
  }
  return error.empty() ? error : "HaloTracking: " + error;
}

// The members (GroupId >= 0) of a step.
jz::TrackingMembers Members(const StepPoints& in)
{
  jz::TrackingMembers members;
  for (vtkIdType i = 0; i < in.numPoints; ++i)
  {
    if (in.groups.data[i] >= 0)
    {
      members.ids.push_back(in.ids.data[i]);
      members.groups.push_back(static_cast<jz::GlobalId>(in.groups.data[i]));
      if (in.masses.data)
      {
        members.masses.push_back(in.masses.data[i]);
      }
    }
  }
  return members;
}

template <class ArrayT>
ArrayT* AddColumn(vtkTable* table, const char* name, vtkIdType rows)
{
  auto column = vtkSmartPointer<ArrayT>::New();
  column->SetName(name);
  column->SetNumberOfTuples(rows);
  table->AddColumn(column);
  return column;
}

double TimeOf(const std::vector<double>& times, std::int64_t step)
{
  return times.empty() ? 0.0 : times[static_cast<std::size_t>(step)];
}

void FillTree(vtkTable* table, const jz::HaloTree& tree, const std::vector<double>& times)
{
  const vtkIdType n = static_cast<vtkIdType>(tree.rows.size());
  auto* step = AddColumn<vtkIntArray>(table, "TimeStep", n);
  auto* time = AddColumn<vtkDoubleArray>(table, "Time", n);
  auto* group = AddColumn<vtkIdTypeArray>(table, "GroupId", n);
  auto* track = AddColumn<vtkIdTypeArray>(table, "TrackId", n);
  auto* count = AddColumn<vtkIdTypeArray>(table, "Count", n);
  auto* mass = AddColumn<vtkDoubleArray>(table, "Mass", n);
  auto* descendant = AddColumn<vtkIdTypeArray>(table, "DescendantGroupId", n);
  auto* shared = AddColumn<vtkIdTypeArray>(table, "SharedWithDescendant", n);
  auto* isMain = AddColumn<vtkIntArray>(table, "IsMainProgenitor", n);
  for (vtkIdType r = 0; r < n; ++r)
  {
    const jz::TrackedGroup& row = tree.rows[static_cast<std::size_t>(r)];
    step->SetValue(r, static_cast<int>(row.step));
    time->SetValue(r, TimeOf(times, row.step));
    group->SetValue(r, row.group);
    track->SetValue(r, row.track);
    count->SetValue(r, row.count);
    mass->SetValue(r, row.mass);
    descendant->SetValue(r, row.descendant);
    shared->SetValue(r, row.shared);
    isMain->SetValue(r, row.isMainProgenitor ? 1 : 0);
  }
}

void FillHistory(vtkTable* table, const jz::HaloTree& tree, const std::vector<double>& times,
  jz::GlobalId selected)
{
  const jz::GlobalId track = selected >= 0 ? selected : tree.mostMassiveFinalTrack();
  const std::vector<std::size_t> rows = tree.trackRows(track);
  const vtkIdType n = static_cast<vtkIdType>(rows.size());
  auto* time = AddColumn<vtkDoubleArray>(table, "Time", n);
  auto* mass = AddColumn<vtkDoubleArray>(table, "Mass", n);
  auto* count = AddColumn<vtkIdTypeArray>(table, "Count", n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    const jz::TrackedGroup& row = tree.rows[rows[static_cast<std::size_t>(i)]];
    time->SetValue(i, TimeOf(times, row.step));
    mass->SetValue(i, row.mass);
    count->SetValue(i, row.count);
  }
  auto trackId = vtkSmartPointer<vtkIdTypeArray>::New();
  trackId->SetName("TrackId");
  trackId->InsertNextValue(track);
  table->GetFieldData()->AddArray(trackId);
}
}

//------------------------------------------------------------------------------
// The members of every step and the tree made of them, valid while the
// input's pipeline, time steps and MassArray are those of the key; and the
// pass over the time steps in progress.
class vtkJZHaloTracking::vtkInternals
{
public:
  struct Key
  {
    vtkMTimeType inputPipeline = 0;
    std::vector<double> times;
    std::string massArray;
    bool operator==(const Key& o) const
    {
      return inputPipeline == o.inputPipeline && times == o.times && massArray == o.massArray;
    }
  };

  bool Valid = false;
  Key Cached;
  std::vector<jz::TrackingMembers> Steps;
  bool HaveTree = false;
  int TreeMinimumShared = 0;
  jz::HaloTree Tree;

  // The pass: the steps to read, the requested one last (its data is then
  // the input when the pass ends), and the key it will validate.
  std::vector<int> Visit;
  std::size_t VisitAt = 0;
  Key Pending;

  void StartPass(const Key& key, int numSteps, int requested)
  {
    this->Valid = false;
    this->HaveTree = false;
    this->Steps.assign(static_cast<std::size_t>(numSteps), jz::TrackingMembers());
    this->Visit.clear();
    for (int s = 0; s < numSteps; ++s)
    {
      if (s != requested)
      {
        this->Visit.push_back(s);
      }
    }
    this->Visit.push_back(requested);
    this->VisitAt = 0;
    this->Pending = key;
  }

  // Keeps the members of the pass's current step; whether the pass goes on
  // (else the cache is now valid).
  bool KeepStep(int step, const StepPoints& points)
  {
    this->Steps[static_cast<std::size_t>(step)] = Members(points);
    if (++this->VisitAt < this->Visit.size())
    {
      return true;
    }
    this->Visit.clear();
    this->Valid = true;
    this->Cached = this->Pending;
    return false;
  }

  // Collective. Links the cached members again when they or MinimumShared
  // changed; the error, or "".
  std::string UpdateTree(jz::Communicator& comm, int minimumShared)
  {
    if (this->HaveTree && this->TreeMinimumShared == minimumShared)
    {
      return std::string();
    }
    try
    {
      jz::TrackingOptions options;
      options.minimumShared = minimumShared;
      this->Tree = jz::trackHalos(comm, this->Steps, options);
      this->HaveTree = true;
      this->TreeMinimumShared = minimumShared;
      return std::string();
    }
    catch (const std::exception& e)
    {
      return std::string("HaloTracking: ") + e.what();
    }
  }

  void Drop()
  {
    this->Valid = false;
    this->HaveTree = false;
    this->Steps.clear();
    this->Visit.clear();
    this->VisitAt = 0;
  }
};

vtkStandardNewMacro(vtkJZHaloTracking);

//------------------------------------------------------------------------------
vtkJZHaloTracking::vtkJZHaloTracking()
  : Internals(new vtkInternals)
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(3);
}

//------------------------------------------------------------------------------
vtkJZHaloTracking::~vtkJZHaloTracking()
{
  delete this->Internals;
}

//------------------------------------------------------------------------------
// A point set or a composite whose blocks form one particle set.
int vtkJZHaloTracking::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkPointSet");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZHaloTracking::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkDataObject" : "vtkTable");
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZHaloTracking::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  if (!input)
  {
    return 0;
  }
  vtkJZKernelAdapter::MatchDataObjectType(input, outputVector->GetInformationObject(0));
  for (int port = 1; port < 3; ++port)
  {
    vtkInformation* info = outputVector->GetInformationObject(port);
    if (!vtkTable::SafeDownCast(vtkDataObject::GetData(info)))
    {
      info->Set(vtkDataObject::DATA_OBJECT(), vtkSmartPointer<vtkTable>::New());
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
// Outside a pass: starts one when the cache does not hold (on any rank),
// else asks for the requested step only. Inside: asks for the pass's next step.
int vtkJZHaloTracking::RequestUpdateExtent(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  const std::vector<double> times = InputTimes(inInfo);
  double t = 0;
  const int requested =
    !times.empty() && RequestedTime(request, outputVector, t) ? StepAt(times, t) : 0;
  vtkInternals& in = *this->Internals;
  if (in.Visit.empty())
  {
    vtkInternals::Key key;
    auto* upstream = vtkDemandDrivenPipeline::SafeDownCast(this->GetInputExecutive(0, 0));
    key.inputPipeline = upstream ? upstream->GetPipelineMTime() : 0;
    key.times = times;
    vtkInformation* massInfo = this->GetInputArrayInformation(0);
    if (massInfo && massInfo->Has(vtkDataObject::FIELD_NAME()))
    {
      key.massArray = massInfo->Get(vtkDataObject::FIELD_NAME());
    }
    auto comm = vtkJZKernelAdapter::MakeCommunicator();
    if (!vtkJZKernelAdapter::AllRanks(*comm, in.Valid && key == in.Cached))
    {
      in.StartPass(key, std::max<int>(1, static_cast<int>(times.size())), requested);
    }
  }
  const int step = in.Visit.empty() ? requested : in.Visit[in.VisitAt];
  if (!times.empty())
  {
    inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP(), times[step]);
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZHaloTracking::RequestData(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkJZCrashWatchdog::Arm();
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkDataObject* input = vtkDataObject::GetData(inInfo);
  vtkDataObject* outputs[3];
  for (int port = 0; port < 3; ++port)
  {
    outputs[port] = vtkDataObject::GetData(outputVector, port);
    if (!outputs[port])
    {
      vtkErrorMacro("No output data objects.");
      return 0;
    }
    outputs[port]->Initialize();
  }
  vtkInternals& in = *this->Internals;
  auto comm = vtkJZKernelAdapter::MakeCommunicator();
  const char* massArray =
    vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input);
  const std::vector<double> times = InputTimes(inInfo);
  const bool inPass = !in.Visit.empty();
  const int step = inPass ? in.Visit[in.VisitAt] : 0;
  double t = 0;
  const int shown = inPass
    ? step
    : (!times.empty() && RequestedTime(request, outputVector, t) ? StepAt(times, t) : 0);

  jz::RunInfo info;
  jz::StageTimer reading(&info, "read step");
  StepPoints points;
  std::string error = ReadStep(*comm, input, massArray, static_cast<std::size_t>(shown), points);
  reading.stop();
  if (error.empty() && inPass && in.KeepStep(step, points))
  {
    this->UpdateProgress(static_cast<double>(in.VisitAt) / static_cast<double>(in.Visit.size()));
    vtkJZKernelAdapter::ReportRunInfo(this, "HaloTracking", info, *comm);
    request->Set(vtkStreamingDemandDrivenPipeline::CONTINUE_EXECUTING(), 1);
    return 1;
  }
  request->Remove(vtkStreamingDemandDrivenPipeline::CONTINUE_EXECUTING());
  if (error.empty())
  {
    error = vtkJZKernelAdapter::RangeError(
      { { jz::ranges::MinimumShared, static_cast<double>(this->MinimumShared) },
        { jz::ranges::SelectedTrackId, static_cast<double>(this->SelectedTrackId) } });
  }
  if (error.empty())
  {
    const jz::StageTimer linking(&info, "link");
    error = in.UpdateTree(*comm, this->MinimumShared);
  }
  if (!error.empty())
  {
    in.Drop();
    vtkErrorMacro(<< error);
    return 0;
  }

  auto trackIds = vtkJZKernelAdapter::NewArray<vtkIdTypeArray>("TrackId", points.numPoints);
  for (vtkIdType i = 0; i < points.numPoints; ++i)
  {
    const double g = points.groups.data[i];
    trackIds->SetValue(i, g >= 0 ? in.Tree.trackOf(shown, static_cast<jz::GlobalId>(g)) : -1);
  }
  vtkJZKernelAdapter::AttachResults(input, outputs[0], { trackIds }, "TrackId");
  // The tables on rank 0; the other ranks' have the same columns and no
  // rows (what ParaView's delivery of tables merges).
  const jz::HaloTree none;
  const jz::HaloTree& shownTree = comm->rank() == 0 ? in.Tree : none;
  FillTree(vtkTable::SafeDownCast(outputs[1]), shownTree, times);
  FillHistory(vtkTable::SafeDownCast(outputs[2]), shownTree, times, this->SelectedTrackId);
  vtkJZKernelAdapter::ReportRunInfo(this, "HaloTracking", info, *comm);
  if (!times.empty())
  {
    for (vtkDataObject* output : outputs)
    {
      output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), times[shown]);
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZHaloTracking::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "MinimumShared: " << this->MinimumShared << "\n";
  os << indent << "SelectedTrackId: " << this->SelectedTrackId << "\n";
}
