#include "vtkJZEuclideanMST.h"

#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkCellArray.h"
#include "vtkCellData.h"
#include "vtkCompositeDataSet.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"

#include "jz/Emst.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkJZEuclideanMST);

namespace
{
// One rank's edges, endpoints as coordinates, ready for the polydata.
struct EdgeRows
{
  std::vector<double> from, to; // xyz each
  std::vector<jz::GlobalId> fromId, toId;
  std::vector<double> weight2;
  std::vector<double> core2; // this rank's points
};

template <class T>
void ComputeEdges(vtkAlgorithm* self, vtkJZKernelAdapter::ParticleInput& in,
  const vtkJZKernelAdapter::Buffer<T>& coords, jz::EmstProblem<T> problem, jz::Backend backend,
  EdgeRows& rows, jz::RunInfo& info)
{
  problem.points = coords.data;
  problem.numPoints = coords.size;
  problem.ids = in.ids.data;
  const jz::RunControl control = vtkJZKernelAdapter::MakeRunControl(self);
  if (in.comm->size() > 1)
  {
    jz::EmstRankEdges<T> out;
    info = jz::computeEmstDistributed(problem, *in.comm, out, backend, control);
    rows.from.assign(out.fromPoint.begin(), out.fromPoint.end());
    rows.to.assign(out.toPoint.begin(), out.toPoint.end());
    rows.fromId = out.fromId;
    rows.toId = out.toId;
    rows.weight2 = out.weight2;
    rows.core2 = out.core2;
    return;
  }
  jz::EmstEdges edges;
  info = jz::computeEmst(problem, edges, backend, control);
  const std::size_t m = edges.size();
  rows.weight2 = edges.weight2;
  rows.core2 = edges.core2;
  for (std::size_t e = 0; e < m; ++e)
  {
    const jz::Index a = edges.from[e], b = edges.to[e];
    rows.fromId.push_back(in.ids.data ? in.ids.data[a] : jz::GlobalId(a));
    rows.toId.push_back(in.ids.data ? in.ids.data[b] : jz::GlobalId(b));
    for (int d = 0; d < 3; ++d)
    {
      rows.from.push_back(double(coords.data[3 * std::size_t(a) + d]));
      rows.to.push_back(double(coords.data[3 * std::size_t(b) + d]));
    }
  }
}

// The edges as lines; the second endpoint at the nearest image of the first.
void FillEdges(const EdgeRows& rows, bool periodic, const double box[6], vtkPolyData* out)
{
  const vtkIdType m = static_cast<vtkIdType>(rows.weight2.size());
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(2 * m);
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfTuples(m + 1);
  auto conn = vtkSmartPointer<vtkIdTypeArray>::New();
  conn->SetNumberOfTuples(2 * m);
  auto length = vtkSmartPointer<vtkDoubleArray>::New();
  length->SetName("Length");
  length->SetNumberOfTuples(m);
  auto ends = vtkSmartPointer<vtkIdTypeArray>::New();
  ends->SetName("EndpointIds");
  ends->SetNumberOfComponents(2);
  ends->SetNumberOfTuples(m);
  for (vtkIdType e = 0; e < m; ++e)
  {
    const double* a = &rows.from[3 * e];
    double b[3];
    for (int d = 0; d < 3; ++d)
    {
      double s = rows.to[3 * e + d] - a[d];
      const double L = box[2 * d + 1] - box[2 * d];
      if (periodic && L > 0)
        s -= L * std::round(s / L);
      b[d] = a[d] + s;
    }
    points->SetPoint(2 * e, a);
    points->SetPoint(2 * e + 1, b);
    offsets->SetValue(e, 2 * e);
    conn->SetValue(2 * e, 2 * e);
    conn->SetValue(2 * e + 1, 2 * e + 1);
    length->SetValue(e, std::sqrt(rows.weight2[e]));
    ends->SetTypedComponent(e, 0, rows.fromId[e]);
    ends->SetTypedComponent(e, 1, rows.toId[e]);
  }
  offsets->SetValue(m, 2 * m);
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  lines->SetData(offsets, conn);
  out->SetPoints(points);
  out->SetLines(lines);
  out->GetCellData()->AddArray(length);
  out->GetCellData()->AddArray(ends);
  out->GetCellData()->SetActiveScalars("Length");
}
}

//------------------------------------------------------------------------------
vtkJZEuclideanMST::vtkJZEuclideanMST()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
}

//------------------------------------------------------------------------------
int vtkJZEuclideanMST::FillInputPortInformation(int port, vtkInformation* info)
{
  if (!this->Superclass::FillInputPortInformation(port, info))
  {
    return 0;
  }
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZEuclideanMST::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 1 ? "vtkPolyData" : "vtkDataObject");
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZEuclideanMST::RequestDataObject(
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
  vtkInformation* edgeInfo = outputVector->GetInformationObject(1);
  if (!vtkPolyData::SafeDownCast(vtkDataObject::GetData(edgeInfo)))
  {
    edgeInfo->Set(vtkDataObject::DATA_OBJECT(), vtkSmartPointer<vtkPolyData>::New());
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkJZEuclideanMST::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, 0);
  vtkPolyData* edges = vtkPolyData::GetData(outputVector, 1);
  if (!output || !edges)
  {
    vtkErrorMacro("No output data objects.");
    return 0;
  }
  output->Initialize();
  edges->Initialize();

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
  const bool mutual = this->Metric == MUTUAL_REACHABILITY;
  if (mutual && (this->MinSamples < 1 || this->MinSamples >= in.totalPoints))
  {
    vtkErrorMacro("MinSamples must be between 1 and the number of points - 1 ("
      << in.totalPoints - 1 << "); it is " << this->MinSamples << ".");
    return 0;
  }
  EdgeRows rows;
  jz::RunInfo info;
  try
  {
    const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
    auto setup = [&](auto& problem)
    {
      problem.metric = mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
      problem.minSamples = this->MinSamples;
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
      ComputeEdges(this, in, in.coordsF, problem, backend, rows, info);
    }
    else
    {
      jz::EmstProblem<double> problem;
      setup(problem);
      ComputeEdges(this, in, in.coordsD, problem, backend, rows, info);
    }
  }
  catch (const jz::Aborted&)
  {
    output->Initialize();
    edges->Initialize();
    vtkWarningMacro("EuclideanMST was aborted; the outputs are empty.");
    return 1;
  }
  catch (const std::exception& e)
  {
    output->Initialize();
    edges->Initialize();
    vtkErrorMacro("EuclideanMST failed: " << e.what());
    return 0;
  }
  vtkJZKernelAdapter::ReportRunInfo("EuclideanMST", info, *in.comm);

  std::vector<vtkDataArray*> results;
  auto core = vtkSmartPointer<vtkDoubleArray>::New();
  if (mutual)
  {
    core->SetName("CoreDistance");
    core->SetNumberOfTuples(in.localPoints);
    for (vtkIdType i = 0; i < in.localPoints; ++i)
    {
      core->SetValue(i, std::sqrt(rows.core2[i]));
    }
    results.push_back(core);
  }
  vtkJZKernelAdapter::AttachResults(input, output, results, mutual ? "CoreDistance" : nullptr);
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
  FillEdges(rows, this->Periodic, in.box, edges);
  vtkJZKernelAdapter::AddDeviceFieldData(edges, info.backend);
  return 1;
}

//------------------------------------------------------------------------------
void vtkJZEuclideanMST::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Metric: " << (this->Metric == EUCLIDEAN ? "Euclidean" : "Mutual Reachability")
     << "\n";
  os << indent << "MinSamples: " << this->MinSamples << "\n";
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "BoxFromData: " << this->BoxFromData << "\n";
  os << indent << "Device: " << this->Device << "\n";
}
