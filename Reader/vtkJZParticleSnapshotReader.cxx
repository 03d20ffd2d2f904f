#include "vtkJZParticleSnapshotReader.h"

#include "vtkJZCrashWatchdog.h"
#include "vtkJZCommunicator.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZSnapshotBlocks.h"
#include "vtkJZSnapshotHDF5.h"
#include "vtkJZSnapshotLayout.h"
#include "vtkJZSnapshotSeries.h"

#include "vtkCallbackCommand.h"
#include "vtkDataArraySelection.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMPICommunicator.h"
#include "vtkMPIController.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "vtkMPI.h"

#include <cmath>
#include <cstdlib> // getenv
#include <cstring>
#include <algorithm>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZParticleSnapshotReader);

namespace
{
using vtkJZSnapshotLayout::Kind;
using vtkJZSnapshotLayout::PointSet;

// Whether an entry of a selection is on; names the lists do not know yet (a
// type that appears later in a series) are read.
bool IsSelected(vtkDataArraySelection* selection, const std::string& name)
{
  return !selection->ArrayExists(name.c_str()) || selection->ArrayIsEnabled(name.c_str()) != 0;
}

// Replaces the entries of a selection by `names`, keeping the state of the
// names it already had (new ones are on).
void ResetSelection(vtkDataArraySelection* selection, const std::set<std::string>& names)
{
  std::map<std::string, bool> previous;
  for (int i = 0; i < selection->GetNumberOfArrays(); ++i)
  {
    previous[selection->GetArrayName(i)] = selection->GetArraySetting(i) != 0;
  }
  bool same = previous.size() == names.size();
  for (const std::string& name : names)
  {
    same = same && previous.count(name);
  }
  if (same)
  {
    return;
  }
  selection->RemoveAllArrays();
  for (const std::string& name : names)
  {
    const auto it = previous.find(name);
    selection->AddArray(name.c_str(), it == previous.end() ? true : it->second);
  }
}

// Why a Region (xmin xmax ymin ymax zmin zmax) cannot be used, or "".
std::string RegionError(const double region[6])
{
  static const char* axes = "xyz";
  for (int axis = 0; axis < 3; ++axis)
  {
    const double lo = region[2 * axis], hi = region[2 * axis + 1];
    if (std::isnan(lo) || std::isnan(hi))
    {
      return std::string("Region: the ") + axes[axis] + " bounds are not numbers.";
    }
    if (lo > hi)
    {
      std::ostringstream msg;
      msg << "Region is inverted: " << axes[axis] << "min = " << lo << " is larger than "
          << axes[axis] << "max = " << hi << " (expected xmin xmax ymin ymax zmin zmax).";
      return msg.str();
    }
  }
  return {};
}

// The MPI communicator of the global controller when this is an MPI run of
// several processes, else null.
MPI_Comm* GlobalMPICommunicator()
{
  auto* controller =
    vtkMPIController::SafeDownCast(vtkMultiProcessController::GetGlobalController());
  if (!controller || controller->GetNumberOfProcesses() < 2)
  {
    return nullptr;
  }
  auto* communicator = vtkMPICommunicator::SafeDownCast(controller->GetCommunicator());
  return communicator && communicator->GetMPIComm() ? communicator->GetMPIComm()->GetHandle()
                                                    : nullptr;
}
}

//------------------------------------------------------------------------------
struct vtkJZParticleSnapshotReader::vtkInternals
{
  std::vector<std::string> FileNames;
  vtkJZSnapshotSeries Series;
  // An error found while gathering information; reported (on every rank
  // together) by RequestData, so that no rank waits for another.
  std::string InformationError;
  bool UpdatingSelections = false;
};

//------------------------------------------------------------------------------
vtkJZParticleSnapshotReader::vtkJZParticleSnapshotReader()
  : Internals(new vtkInternals)
  , ParticleTypeSelection(vtkDataArraySelection::New())
  , PointArraySelection(vtkDataArraySelection::New())
  , SelectionObserver(vtkCallbackCommand::New())
{
  this->SetNumberOfInputPorts(0);
  this->SelectionObserver->SetCallback(&vtkJZParticleSnapshotReader::SelectionModified);
  this->SelectionObserver->SetClientData(this);
  this->ParticleTypeSelection->AddObserver(vtkCommand::ModifiedEvent, this->SelectionObserver);
  this->PointArraySelection->AddObserver(vtkCommand::ModifiedEvent, this->SelectionObserver);
}

//------------------------------------------------------------------------------
vtkJZParticleSnapshotReader::~vtkJZParticleSnapshotReader()
{
  this->ParticleTypeSelection->RemoveObserver(this->SelectionObserver);
  this->PointArraySelection->RemoveObserver(this->SelectionObserver);
  this->ParticleTypeSelection->Delete();
  this->PointArraySelection->Delete();
  this->SelectionObserver->Delete();
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::SelectionModified(vtkObject*, unsigned long, void* self, void*)
{
  auto* reader = static_cast<vtkJZParticleSnapshotReader*>(self);
  if (!reader->Internals->UpdatingSelections)
  {
    reader->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::SetFileName(const char* fileName)
{
  std::vector<std::string> names;
  if (fileName && *fileName)
  {
    names.emplace_back(fileName);
  }
  if (names != this->Internals->FileNames)
  {
    this->Internals->FileNames = names;
    this->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::AddFileName(const char* fileName)
{
  if (fileName && *fileName)
  {
    this->Internals->FileNames.emplace_back(fileName);
    this->Modified();
  }
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::RemoveAllFileNames()
{
  if (!this->Internals->FileNames.empty())
  {
    this->Internals->FileNames.clear();
    this->Modified();
  }
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::GetNumberOfFileNames()
{
  return static_cast<int>(this->Internals->FileNames.size());
}

//------------------------------------------------------------------------------
const char* vtkJZParticleSnapshotReader::GetFileName(int index)
{
  const auto& names = this->Internals->FileNames;
  return index >= 0 && index < static_cast<int>(names.size()) ? names[index].c_str() : nullptr;
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::CanReadFile(const char* fileName)
{
  return fileName && vtkJZSnapshotLayout::CanRead(fileName) ? 1 : 0;
}

//------------------------------------------------------------------------------
vtkDataArraySelection* vtkJZParticleSnapshotReader::GetParticleTypeSelection()
{
  return this->ParticleTypeSelection;
}

//------------------------------------------------------------------------------
vtkDataArraySelection* vtkJZParticleSnapshotReader::GetPointArraySelection()
{
  return this->PointArraySelection;
}

//------------------------------------------------------------------------------
// The selection lists: the point sets and datasets of the first part of
// every step (in a snapshot, Coordinates are the points, and Masses may
// come from the MassTable).
void vtkJZParticleSnapshotReader::UpdateSelections()
{
  std::set<std::string> types, arrays;
  for (const vtkJZSnapshotSeries::Step& step : this->Internals->Series.GetSteps())
  {
    Kind kind;
    for (const PointSet& set : vtkJZSnapshotLayout::ListPointSets(step.File, kind))
    {
      types.insert(set.Name);
      for (const auto& field : set.Fields)
      {
        if (!field.GlobalIdsOnly && (kind == Kind::GroupCatalogue || field.Name != set.Positions))
        {
          arrays.insert(field.Name);
        }
      }
      if (kind == Kind::Snapshot)
      {
        arrays.insert("Masses");
      }
    }
  }
  this->Internals->UpdatingSelections = true;
  ResetSelection(this->ParticleTypeSelection, types);
  ResetSelection(this->PointArraySelection, arrays);
  this->Internals->UpdatingSelections = false;
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkJZCrashWatchdog::Arm();
  using SDDP = vtkStreamingDemandDrivenPipeline;
  vtkInternals& internals = *this->Internals;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  outInfo->Remove(SDDP::TIME_STEPS());
  outInfo->Remove(SDDP::TIME_RANGE());
  outInfo->Set(vtkAlgorithm::CAN_HANDLE_PIECE_REQUEST(), 1);
  internals.InformationError = internals.FileNames.empty() ? "No FileName is set." : "";
  try
  {
    internals.Series.Build(internals.FileNames);
    this->UpdateSelections();
  }
  catch (const vtkJZSnapshotHDF5::Error& e)
  {
    internals.InformationError = e.what();
  }
  const auto& steps = internals.Series.GetSteps();
  if (!internals.InformationError.empty() || steps.empty())
  {
    return 1;
  }
  if (!internals.Series.GetTimesFromHeaders() && steps.size() > 1)
  {
    vtkWarningMacro("The snapshots have no distinct Header/Time values; their time steps are "
                    "numbered 0, 1, ... in the order given.");
  }
  if (internals.Series.GetTimesFromHeaders() || steps.size() > 1)
  {
    std::vector<double> times;
    for (const auto& step : steps)
    {
      times.push_back(step.Time);
    }
    outInfo->Set(SDDP::TIME_STEPS(), times.data(), static_cast<int>(times.size()));
    const double range[2] = { times.front(), times.back() };
    outInfo->Set(SDDP::TIME_RANGE(), range, 2);
  }
  return 1;
}

//------------------------------------------------------------------------------
// Reads the blocks, through parallel HDF5 when the pieces are the ranks and
// there is one file that it can read (no virtual datasets); should it fail
// all the same, the ranks read again on their own. Collective.
std::string vtkJZParticleSnapshotReader::ReadBlocks(jz::Communicator& comm,
  const vtkJZSnapshotLayout::Layout& layout, vtkJZSnapshotBlocks& blocks, int piece, int numPieces,
  bool& aborted)
{
  MPI_Comm* mpiComm = GlobalMPICommunicator();
  const char* setting = std::getenv("JZ_SNAPSHOT_MPIIO");
  const std::string mpiio = setting ? setting : "";
  const bool useMPIIO = vtkJZKernelAdapter::AllRanks(comm,
    mpiComm && layout.Store == vtkJZSnapshotLayout::Storage::HDF5 && !blocks.HasRegion() &&
      layout.Files.size() == 1 && (!layout.HasVirtualDatasets() || mpiio == "force") &&
      numPieces == comm.size() && piece == comm.rank() && mpiio != "0");
  std::string error;
  if (blocks.NeedsRowsBefore()) // Stride over a Region counts from the pieces before
  {
    const bool ranks = numPieces == comm.size() && piece == comm.rank();
    std::vector<std::int64_t> counts;
    error = vtkJZKernelAdapter::AgreeOnError(comm, blocks.CountInRegion(!ranks, counts));
    if (!error.empty())
    {
      return error;
    }
    if (ranks)
    {
      std::vector<char> mine(counts.size() * sizeof(std::int64_t));
      std::memcpy(mine.data(), counts.data(), mine.size());
      const std::vector<std::vector<char>> all = comm.allGather(mine);
      std::vector<std::int64_t> before(counts.size(), 0);
      for (int r = 0; r < piece; ++r)
      {
        for (std::size_t b = 0; b < before.size(); ++b)
        {
          std::int64_t n;
          std::memcpy(&n, all[r].data() + b * sizeof(n), sizeof(n));
          before[b] += n;
        }
      }
      counts = before;
    }
    blocks.SetRowsBefore(counts);
  }
  jz::RunInfo info;
  error = blocks.Read(useMPIIO ? mpiComm : nullptr, this, aborted, info);
  error = vtkJZKernelAdapter::AgreeOnError(comm, error);
  if (useMPIIO && !error.empty())
  {
    if (comm.rank() == 0)
    {
      vtkWarningMacro(
        "Parallel HDF5 (MPI-IO) could not read the snapshot; reading it independently. (" << error
                                                                                          << ")");
    }
    info = jz::RunInfo();
    error = blocks.Read(nullptr, this, aborted, info);
    error = vtkJZKernelAdapter::AgreeOnError(comm, error);
  }
  if (error.empty())
  {
    vtkJZKernelAdapter::ReportRunInfo(this, "ParticleSnapshotReader", info, comm);
  }
  return error;
}

//------------------------------------------------------------------------------
int vtkJZParticleSnapshotReader::RequestData(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkJZCrashWatchdog::Arm();
  using SDDP = vtkStreamingDemandDrivenPipeline;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkMultiBlockDataSet* output = vtkMultiBlockDataSet::GetData(outInfo);
  if (!output)
  {
    vtkErrorMacro("No output data object.");
    return 0;
  }
  output->Initialize();
  vtkInternals& internals = *this->Internals;
  const int piece =
    outInfo->Has(SDDP::UPDATE_PIECE_NUMBER()) ? outInfo->Get(SDDP::UPDATE_PIECE_NUMBER()) : 0;
  const int numPieces = outInfo->Has(SDDP::UPDATE_NUMBER_OF_PIECES())
    ? outInfo->Get(SDDP::UPDATE_NUMBER_OF_PIECES())
    : 1;

  // Every rank takes part in each agreement below, so that an error on one
  // fails all of them together and none waits for the others.
  std::unique_ptr<jz::Communicator> comm = vtkJZKernelAdapter::MakeCommunicator();
  std::string error = internals.InformationError;
  if (error.empty())
  {
    error = vtkJZKernelAdapter::RangeError(
      { { jz::ranges::Stride, this->Stride }, { jz::ranges::SnapshotBoxSize, this->BoxSize } });
  }
  if (error.empty())
  {
    error = RegionError(this->Region);
  }
  vtkJZSnapshotLayout::Layout layout;
  std::size_t step = 0;
  if (error.empty())
  {
    try
    {
      const double time =
        outInfo->Has(SDDP::UPDATE_TIME_STEP()) ? outInfo->Get(SDDP::UPDATE_TIME_STEP()) : 0.0;
      step = internals.Series.StepAt(time);
      layout = vtkJZSnapshotLayout::Describe(internals.Series.GetSteps()[step].File);
    }
    catch (const vtkJZSnapshotHDF5::Error& e)
    {
      error = e.what();
    }
  }
  error = vtkJZKernelAdapter::AgreeOnError(*comm, error);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  for (const std::string& warning :
    comm->rank() == 0 ? layout.Warnings : std::vector<std::string>())
  {
    vtkWarningMacro(<< warning);
  }

  if (this->BoxSize > 0)
  {
    auto& header = layout.Header;
    header.erase(std::remove_if(header.begin(), header.end(),
                   [](const vtkJZSnapshotLayout::HeaderValue& v) { return v.Name == "BoxSize"; }),
      header.end());
    header.insert(header.begin(), { "BoxSize", { this->BoxSize } });
  }

  vtkJZSnapshotBlocks::Request request;
  request.TypeSelected = [this](const std::string& name)
  { return IsSelected(this->ParticleTypeSelection, name); };
  request.ArraySelected = [this](const std::string& name)
  { return IsSelected(this->PointArraySelection, name); };
  request.Stride = this->Stride;
  request.Piece = piece;
  request.NumberOfPieces = numPieces;
  request.HasRegion = std::any_of(this->Region, this->Region + 6, [](double v) { return v != 0; });
  std::copy(this->Region, this->Region + 6, request.Region);
  vtkJZSnapshotBlocks blocks(layout, request);
  bool aborted = false;
  error = this->ReadBlocks(*comm, layout, blocks, piece, numPieces, aborted);
  aborted = !vtkJZKernelAdapter::AllRanks(*comm, !aborted);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  if (aborted)
  {
    vtkWarningMacro("Reading was aborted; the output is empty.");
    return 1;
  }
  blocks.Finish(output);
  if (internals.Series.GetTimesFromHeaders() || internals.Series.GetSteps().size() > 1)
  {
    output->GetInformation()->Set(
      vtkDataObject::DATA_TIME_STEP(), internals.Series.GetSteps()[step].Time);
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZParticleSnapshotReader::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FileNames:";
  for (const std::string& name : this->Internals->FileNames)
  {
    os << " " << name;
  }
  os << "\n" << indent << "Stride: " << this->Stride << "\n";
  os << indent << "Region:";
  for (double v : this->Region)
  {
    os << " " << v;
  }
  os << "\n" << indent << "BoxSize: " << this->BoxSize << "\n";
  os << indent << "ParticleTypeSelection:\n";
  this->ParticleTypeSelection->PrintSelf(os, indent.GetNextIndent());
  os << indent << "PointArraySelection:\n";
  this->PointArraySelection->PrintSelf(os, indent.GetNextIndent());
}
