#include "vtkJZEuclideanMST.h"

#include "vtkJZFilterRun.h"
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
#include "jz/Geometry.h"

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
      const double period = periodic ? box[2 * d + 1] - box[2 * d] : 0.0;
      b[d] = a[d] + jz::nearestImageOffset(rows.to[3 * e + d] - a[d], period);
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
  this->SetNumberOfOutputPorts(2);
}

//------------------------------------------------------------------------------
int vtkJZEuclideanMST::RunParticles(
  vtkDataObject* input, const std::vector<vtkDataObject*>& outputs)
{
  vtkDataObject* output = outputs[0];
  vtkPolyData* edges = vtkPolyData::SafeDownCast(outputs[1]);
  const std::string rangeError = vtkJZKernelAdapter::RangeError(
    { { jz::ranges::Metric, this->Metric }, { jz::ranges::Device, this->Device } });
  vtkJZKernelAdapter::ParticleInput in;
  if (!this->CheckAndReadParticles(rangeError, input, in))
  {
    return 0;
  }
  if (in.totalPoints == 0)
  {
    return 1; // empty input, empty output
  }
  const bool mutual = this->Metric == MUTUAL_REACHABILITY;
  const std::string minSamplesError =
    mutual ? jz::minSamplesError(this->MinSamples, static_cast<std::size_t>(in.totalPoints)) : "";
  if (!minSamplesError.empty())
  {
    vtkErrorMacro(<< minSamplesError);
    return 0;
  }
  const jz::Backend backend = vtkJZKernelAdapter::ToBackend(this->Device);
  return vtkJZKernelAdapter::RunInPrecision(this, "EuclideanMST", in.useFloat, { output, edges },
    [&](auto precision)
    {
      using T = decltype(precision);
      jz::EmstProblem<T> problem;
      problem.metric = mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
      problem.minSamples = this->MinSamples;
      vtkJZKernelAdapter::SetPeriodicBox(this->Periodic, in.box, problem);
      EdgeRows rows;
      jz::RunInfo info;
      ComputeEdges(this, in, in.Coordinates<T>(), problem, backend, rows, info);
      vtkJZKernelAdapter::ReportRunInfo(this, "EuclideanMST", info, *in.comm);

      std::vector<vtkDataArray*> results;
      vtkSmartPointer<vtkDoubleArray> core;
      if (mutual)
      {
        core = vtkJZKernelAdapter::NewArray<vtkDoubleArray>("CoreDistance", in.localPoints);
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
    });
}

//------------------------------------------------------------------------------
void vtkJZEuclideanMST::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Metric: " << (this->Metric == EUCLIDEAN ? "Euclidean" : "Mutual Reachability")
     << "\n";
  os << indent << "MinSamples: " << this->MinSamples << "\n";
}
