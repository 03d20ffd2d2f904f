#include "vtkJZQueryPointsAlgorithm.h"

#include "vtkJZCrashWatchdog.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkCompositeDataSet.h"
#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkStreamingDemandDrivenPipeline.h"

//------------------------------------------------------------------------------
vtkJZQueryPointsAlgorithm::vtkJZQueryPointsAlgorithm()
{
  this->SetNumberOfInputPorts(2);
  this->SetNumberOfOutputPorts(1);
}

//------------------------------------------------------------------------------
void vtkJZQueryPointsAlgorithm::SetQueryConnection(vtkAlgorithmOutput* output)
{
  this->SetInputConnection(1, output);
}

//------------------------------------------------------------------------------
void vtkJZQueryPointsAlgorithm::SetQueryData(vtkDataObject* data)
{
  this->SetInputData(1, data);
}

//------------------------------------------------------------------------------
// Composite data sets are accepted as such (not iterated block by block by
// the pipeline): all blocks form one particle set.
int vtkJZQueryPointsAlgorithm::FillInputPortInformation(int port, vtkInformation* info)
{
  info->Remove(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE());
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), port == 0 ? "vtkPointSet" : "vtkDataSet");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  if (port == 1)
  {
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  }
  return 1;
}

//------------------------------------------------------------------------------
// The output has the type of the Query when one is connected, else of the
// Input (e.g. vtkImageData for a query grid, vtkPolyData for particles).
int vtkJZQueryPointsAlgorithm::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  const int port = this->GetNumberOfInputConnections(1) > 0 ? 1 : 0;
  vtkDataObject* input = vtkDataObject::GetData(inputVector[port], 0);
  if (!input)
  {
    return 0;
  }
  vtkJZKernelAdapter::MatchDataObjectType(input, outputVector->GetInformationObject(0));
  return 1;
}

//------------------------------------------------------------------------------
// A structured Query decides the output's extent; the Input's does not.
int vtkJZQueryPointsAlgorithm::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkInformation* queryInfo = inputVector[1]->GetInformationObject(0);
  using SDDP = vtkStreamingDemandDrivenPipeline;
  if (queryInfo)
  {
    outInfo->CopyEntry(queryInfo, SDDP::WHOLE_EXTENT());
    outInfo->CopyEntry(queryInfo, vtkDataObject::SPACING());
    outInfo->CopyEntry(queryInfo, vtkDataObject::ORIGIN());
    outInfo->CopyEntry(queryInfo, vtkDataObject::DIRECTION());
    if (!queryInfo->Has(SDDP::WHOLE_EXTENT()))
    {
      outInfo->Remove(SDDP::WHOLE_EXTENT());
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
// Any query point may depend on any particle, so the whole Input is
// requested, and the whole extent of a structured Query.
int vtkJZQueryPointsAlgorithm::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  using SDDP = vtkStreamingDemandDrivenPipeline;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  for (int port = 0; port < 2; ++port)
  {
    vtkInformation* inInfo = inputVector[port]->GetInformationObject(0);
    if (!inInfo)
    {
      continue;
    }
    inInfo->CopyEntry(outInfo, SDDP::UPDATE_PIECE_NUMBER());
    inInfo->CopyEntry(outInfo, SDDP::UPDATE_NUMBER_OF_PIECES());
    if (inInfo->Has(SDDP::WHOLE_EXTENT()))
    {
      inInfo->Set(SDDP::UPDATE_EXTENT(), inInfo->Get(SDDP::WHOLE_EXTENT()), 6);
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZQueryPointsAlgorithm::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkJZCrashWatchdog::Arm();
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

  // Every rank takes part in every collective below, also a rank without
  // points (vtkJZParticleInput.h).
  vtkJZKernelAdapter::ParticleInput in;
  const std::string error = vtkJZKernelAdapter::ReadPieces(input, query, in);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  return this->RunQuery(input, query, output, in);
}

//------------------------------------------------------------------------------
const char* vtkJZQueryPointsAlgorithm::SelectedMassArray(vtkDataObject* input)
{
  return vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input);
}

//------------------------------------------------------------------------------
void vtkJZQueryPointsAlgorithm::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Device: " << this->Device << "\n";
}
