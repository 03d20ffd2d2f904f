#include "vtkJZParticleAlgorithm.h"

#include "vtkJZCrashWatchdog.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"

//------------------------------------------------------------------------------
vtkJZParticleAlgorithm::vtkJZParticleAlgorithm()
{
  this->SetNumberOfInputPorts(1);
}

//------------------------------------------------------------------------------
// Composite data sets are accepted as such (not iterated block by block by
// the pipeline): all blocks form one particle set.
int vtkJZParticleAlgorithm::FillInputPortInformation(int port, vtkInformation* info)
{
  if (!this->Superclass::FillInputPortInformation(port, info))
  {
    return 0;
  }
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

//------------------------------------------------------------------------------
// Port 0 has the Input's type: a point set or a composite of point sets.
int vtkJZParticleAlgorithm::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkDataObject" : "vtkPolyData");
  return 1;
}

//------------------------------------------------------------------------------
// Port 0 has the Input's type, every further port is a vtkPolyData.
int vtkJZParticleAlgorithm::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  if (!input)
  {
    return 0;
  }
  vtkJZKernelAdapter::MatchDataObjectType(input, outputVector->GetInformationObject(0));
  for (int port = 1; port < this->GetNumberOfOutputPorts(); ++port)
  {
    vtkInformation* info = outputVector->GetInformationObject(port);
    if (!vtkPolyData::SafeDownCast(vtkDataObject::GetData(info)))
    {
      info->Set(vtkDataObject::DATA_OBJECT(), vtkSmartPointer<vtkPolyData>::New());
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZParticleAlgorithm::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkJZCrashWatchdog::Arm();
  std::vector<vtkDataObject*> outputs;
  for (int port = 0; port < this->GetNumberOfOutputPorts(); ++port)
  {
    outputs.push_back(vtkDataObject::GetData(outputVector, port));
    if (!outputs.back())
    {
      vtkErrorMacro("No output data object" << (this->GetNumberOfOutputPorts() > 1 ? "s." : "."));
      return 0;
    }
  }
  for (vtkDataObject* output : outputs)
  {
    output->Initialize();
  }
  return this->RunParticles(vtkDataObject::GetData(inputVector[0], 0), outputs);
}

//------------------------------------------------------------------------------
bool vtkJZParticleAlgorithm::ReadParticles(
  vtkDataObject* input, vtkJZKernelAdapter::ParticleInput& in)
{
  const std::string error = vtkJZKernelAdapter::ReadParticleInput(
    input, this->Periodic, this->BoxFromData, this->BoxBounds, in);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return false;
  }
  return true;
}

//------------------------------------------------------------------------------
bool vtkJZParticleAlgorithm::CheckAndReadParticles(
  const std::string& error, vtkDataObject* input, vtkJZKernelAdapter::ParticleInput& in)
{
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return false;
  }
  return this->ReadParticles(input, in);
}

//------------------------------------------------------------------------------
void vtkJZParticleAlgorithm::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "BoxBounds: " << this->BoxBounds[0] << " " << this->BoxBounds[1] << " "
     << this->BoxBounds[2] << " " << this->BoxBounds[3] << " " << this->BoxBounds[4] << " "
     << this->BoxBounds[5] << "\n";
  os << indent << "BoxFromData: " << this->BoxFromData << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
