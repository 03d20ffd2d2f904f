#include "vtkJZHDBSCAN.h"

#include "vtkJZFilterRun.h"
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

static_assert(vtkJZHDBSCAN::EXCESS_OF_MASS == static_cast<int>(jz::ClusterSelection::ExcessOfMass) &&
    vtkJZHDBSCAN::LEAF == static_cast<int>(jz::ClusterSelection::Leaf),
  "ClusterSelectionMethod's values are jz::ClusterSelection's");

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
int vtkJZHDBSCAN::RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs)
{
  vtkDataObject* output = outputs[0];
  jz::HdbscanOptions options;
  options.minClusterSize = this->MinClusterSize;
  options.minSamples = this->MinSamples;
  options.selection = static_cast<jz::ClusterSelection>(this->ClusterSelectionMethod);
  options.allowSingleCluster = this->AllowSingleCluster;
  std::string optionError = jz::hdbscanOptionsError(options);
  if (optionError.empty())
  {
    optionError = vtkJZKernelAdapter::RangeError({ { jz::ranges::Device, this->Device } });
  }
  vtkJZKernelAdapter::ParticleInput in;
  if (!this->CheckAndReadParticles(optionError, input, in))
  {
    return 0;
  }
  if (in.totalPoints == 0)
  {
    return 1; // empty input, empty output
  }
  const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
  return vtkJZKernelAdapter::RunInPrecision(this, "HDBSCAN", in.useFloat, { output },
    [&](auto precision)
    {
      using T = decltype(precision);
      jz::EmstProblem<T> problem;
      vtkJZKernelAdapter::SetPeriodicBox(this->Periodic, in.box, problem);
      jz::HdbscanResult result;
      const jz::RunInfo info =
        RunHdbscan(this, in, in.Coordinates<T>(), problem, options, backend, result);
      vtkJZKernelAdapter::ReportRunInfo(this, "HDBSCAN", info, *in.comm);

      using vtkJZKernelAdapter::NewArray;
      const vtkIdType n = in.localPoints;
      vtkJZKernelAdapter::AttachResults(input, output,
        { NewArray<vtkIdTypeArray>("ClusterId", result.clusterId.data(), n),
          NewArray<vtkDoubleArray>("Probability", result.probability.data(), n),
          NewArray<vtkDoubleArray>("OutlierScore", result.outlierScore.data(), n),
          NewArray<vtkDoubleArray>("CoreDistance", result.coreDistance.data(), n) },
        "ClusterId");
      vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
    });
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
}
