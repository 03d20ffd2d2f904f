#include "vtkJZHDBSCAN.h"

#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkCompositeDataSet.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkSmartPointer.h"

#include "jz/Hdbscan.h"

#include <cstring>
#include <exception>
#include <string>

vtkStandardNewMacro(vtkJZHDBSCAN);

namespace
{
template <class T>
jz::RunInfo RunHdbscan(vtkAlgorithm* self, vtkJZKernelAdapter::ParticleInput& in,
  const vtkJZKernelAdapter::Buffer<T>& coords, jz::EmstProblem<T> problem,
  const jz::HdbscanOptions& options, jz::Backend backend, jz::HdbscanResult& result)
{
  problem.points = coords.data;
  problem.numPoints = coords.size;
  problem.ids = in.ids.data;
  const jz::RunControl control = vtkJZKernelAdapter::MakeRunControl(self);
  if (in.comm->size() > 1)
    return jz::computeHdbscanDistributed(problem, options, *in.comm, result, backend, control);
  return jz::computeHdbscan(problem, options, result, backend, control);
}
}

//------------------------------------------------------------------------------
int vtkJZHDBSCAN::FillInputPortInformation(int port, vtkInformation* info)
{
  if (!this->Superclass::FillInputPortInformation(port, info))
  {
    return 0;
  }
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZHDBSCAN::FillOutputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkDataObject");
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZHDBSCAN::RequestDataObject(
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
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZHDBSCAN::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, 0);
  if (!output)
  {
    vtkErrorMacro("No output data object.");
    return 0;
  }
  output->Initialize();
  jz::HdbscanOptions options;
  options.minClusterSize = this->MinClusterSize;
  options.minSamples = this->MinSamples;
  options.selection = this->ClusterSelectionMethod == LEAF ? jz::ClusterSelection::Leaf
                                                           : jz::ClusterSelection::ExcessOfMass;
  options.allowSingleCluster = this->AllowSingleCluster;
  const std::string optionError = jz::hdbscanOptionsError(options);
  if (!optionError.empty())
  {
    vtkErrorMacro(<< optionError);
    return 0;
  }
  vtkJZKernelAdapter::ParticleInput in;
  std::string error = vtkJZKernelAdapter::ReadParticleInput(
    input, this->Periodic, this->BoxFromData, this->BoxBounds, in);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  if (in.totalPoints == 0)
  {
    return 1;
  }
  jz::HdbscanResult result;
  jz::RunInfo info;
  try
  {
    const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
    auto setup = [&](auto& problem)
    {
      problem.periodic = this->Periodic;
      for (int d = 0; d < 3; ++d)
      {
        problem.boxLo[d] = in.box[2 * d];
        problem.boxHi[d] = in.box[2 * d + 1];
      }
    };
    if (in.useFloat)
    {
      jz::EmstProblem<float> problem;
      setup(problem);
      info = RunHdbscan(this, in, in.coordsF, problem, options, backend, result);
    }
    else
    {
      jz::EmstProblem<double> problem;
      setup(problem);
      info = RunHdbscan(this, in, in.coordsD, problem, options, backend, result);
    }
  }
  catch (const jz::Aborted&)
  {
    output->Initialize();
    vtkWarningMacro("HDBSCAN was aborted; the output is empty.");
    return 1;
  }
  catch (const std::exception& e)
  {
    output->Initialize();
    vtkErrorMacro("HDBSCAN failed: " << e.what());
    return 0;
  }
  vtkJZKernelAdapter::ReportRunInfo("HDBSCAN", info, *in.comm);

  const vtkIdType n = in.localPoints;
  auto clusterId = vtkSmartPointer<vtkIdTypeArray>::New();
  clusterId->SetName("ClusterId");
  clusterId->SetNumberOfTuples(n);
  auto probability = vtkSmartPointer<vtkDoubleArray>::New();
  probability->SetName("Probability");
  probability->SetNumberOfTuples(n);
  auto score = vtkSmartPointer<vtkDoubleArray>::New();
  score->SetName("OutlierScore");
  score->SetNumberOfTuples(n);
  auto core = vtkSmartPointer<vtkDoubleArray>::New();
  core->SetName("CoreDistance");
  core->SetNumberOfTuples(n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    clusterId->SetValue(i, result.clusterId[i]);
    probability->SetValue(i, result.probability[i]);
    score->SetValue(i, result.outlierScore[i]);
    core->SetValue(i, result.coreDistance[i]);
  }
  vtkJZKernelAdapter::AttachResults(
    input, output, { clusterId, probability, score, core }, "ClusterId");
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZHDBSCAN::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "MinClusterSize: " << this->MinClusterSize << "\n";
  os << indent << "MinSamples: " << this->MinSamples << "\n";
  os << indent << "ClusterSelectionMethod: "
     << (this->ClusterSelectionMethod == LEAF ? "Leaf" : "Excess of Mass") << "\n";
  os << indent << "AllowSingleCluster: " << this->AllowSingleCluster << "\n";
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
