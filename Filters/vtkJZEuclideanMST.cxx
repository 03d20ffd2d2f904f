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
#include "vtkTypeInt32Array.h"
#include "vtkTypeInt64Array.h"

#include "jz/Emst.h"
#include "jz/Geometry.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

vtkStandardNewMacro(vtkJZEuclideanMST);

namespace
{
// The Edges output in the input's precision: one line per edge with its own
// two points (the second at the nearest image of the first when periodic),
// 32-bit connectivity when the point count allows it. Filled in parallel
// through raw pointers, lengths first, so the kernel's weights can be freed
// before the points and EndpointIds are allocated.
template <class T>
class EdgeLines
{
public:
  EdgeLines(vtkIdType m, bool periodic, const double box[6])
    : m_(m)
  {
    for (int d = 0; d < 3; ++d)
    {
      period_[d] = periodic ? box[2 * d + 1] - box[2 * d] : 0.0;
    }
    length_ = vtkSmartPointer<vtkDoubleArray>::New();
    length_->SetName("Length");
    length_->SetNumberOfTuples(m);
  }

  void setLengths(const double* weight2)
  {
    double* length = length_->GetPointer(0);
#pragma omp parallel for schedule(static)
    for (vtkIdType e = 0; e < m_; ++e)
    {
      length[e] = std::sqrt(weight2[e]);
    }
  }

  // The points and EndpointIds: edge e from a(e) to b(e) (coordinates), with
  // ids idA(e) and idB(e).
  template <class EndA, class EndB, class IdA, class IdB>
  void setEnds(EndA a, EndB b, IdA idA, IdB idB)
  {
    auto points = vtkSmartPointer<vtkPoints>::New();
    points->SetDataType(std::is_same<T, float>::value ? VTK_FLOAT : VTK_DOUBLE);
    points->SetNumberOfPoints(2 * m_);
    ends_ = vtkSmartPointer<vtkIdTypeArray>::New();
    ends_->SetName("EndpointIds");
    ends_->SetNumberOfComponents(2);
    ends_->SetNumberOfTuples(m_);
    points_ = points;
    T* xyz = static_cast<T*>(points->GetVoidPointer(0));
    vtkIdType* ids = ends_->GetPointer(0);
#pragma omp parallel for schedule(static)
    for (vtkIdType e = 0; e < m_; ++e)
    {
      const T* from = a(e);
      const T* to = b(e);
      T* out = xyz + 6 * e;
      for (int d = 0; d < 3; ++d)
      {
        out[d] = from[d];
        out[3 + d] = static_cast<T>(
          double(from[d]) + jz::nearestImageOffset(double(to[d]) - double(from[d]), period_[d]));
      }
      ids[2 * e] = idA(e);
      ids[2 * e + 1] = idB(e);
    }
  }

  void finish(vtkPolyData* out)
  {
    auto lines = vtkSmartPointer<vtkCellArray>::New();
    if (2 * m_ < vtkIdType(std::numeric_limits<vtkTypeInt32>::max()))
      lines->SetData(connectivity<vtkTypeInt32Array>(), connectivity<vtkTypeInt32Array>(true));
    else
      lines->SetData(connectivity<vtkTypeInt64Array>(), connectivity<vtkTypeInt64Array>(true));
    out->SetPoints(points_);
    out->SetLines(lines);
    out->GetCellData()->AddArray(length_);
    out->GetCellData()->AddArray(ends_);
    out->GetCellData()->SetActiveScalars("Length");
  }

private:
  // Offsets 0, 2, ..., 2m, or the connectivity 0, 1, ..., 2m - 1.
  template <class A>
  vtkSmartPointer<A> connectivity(bool points = false) const
  {
    auto a = vtkSmartPointer<A>::New();
    const vtkIdType n = points ? 2 * m_ : m_ + 1;
    a->SetNumberOfTuples(n);
    typename A::ValueType* v = a->GetPointer(0);
    const vtkIdType step = points ? 1 : 2;
#pragma omp parallel for schedule(static)
    for (vtkIdType i = 0; i < n; ++i)
    {
      v[i] = static_cast<typename A::ValueType>(step * i);
    }
    return a;
  }

  vtkIdType m_;
  double period_[3];
  vtkSmartPointer<vtkPoints> points_;
  vtkSmartPointer<vtkDoubleArray> length_;
  vtkSmartPointer<vtkIdTypeArray> ends_;
};

// The tree into `edges`; returns this rank's squared core distances (mutual
// reachability). Each kernel array is freed as soon as it is copied.
template <class T>
std::vector<double> ComputeEdges(vtkAlgorithm* self, vtkJZKernelAdapter::ParticleInput& in,
  const vtkJZKernelAdapter::Buffer<T>& coords, jz::EmstProblem<T> problem, jz::Backend backend,
  bool periodic, vtkPolyData* edges, jz::RunInfo& info)
{
  problem.points = coords.data;
  problem.numPoints = coords.size;
  problem.ids = in.ids.data;
  const jz::RunControl control = vtkJZKernelAdapter::MakeRunControl(self);
  if (in.comm->size() > 1)
  {
    jz::EmstRankEdges<T> out;
    info = jz::computeEmstDistributed(problem, *in.comm, out, backend, control);
    const vtkIdType m = static_cast<vtkIdType>(out.weight2.size());
    EdgeLines<T> lines(m, periodic, in.box);
    lines.setLengths(out.weight2.data());
    lines.setEnds([&out](vtkIdType e) { return &out.fromPoint[3 * e]; },
      [&out](vtkIdType e) { return &out.toPoint[3 * e]; },
      [&out](vtkIdType e) { return out.fromId[e]; }, [&out](vtkIdType e) { return out.toId[e]; });
    lines.finish(edges);
    return std::move(out.core2);
  }
  jz::EmstEdges out;
  info = jz::computeEmst(problem, out, backend, control);
  const vtkIdType m = static_cast<vtkIdType>(out.size());
  EdgeLines<T> lines(m, periodic, in.box);
  lines.setLengths(out.weight2.data());
  std::vector<double>().swap(out.weight2);
  const T* xyz = coords.data;
  const jz::GlobalId* ids = in.ids.data;
  auto id = [ids](jz::Index i) { return ids ? ids[i] : jz::GlobalId(i); };
  lines.setEnds([&out, xyz](vtkIdType e) { return xyz + 3 * std::size_t(out.from[e]); },
    [&out, xyz](vtkIdType e) { return xyz + 3 * std::size_t(out.to[e]); },
    [&out, id](vtkIdType e) { return id(out.from[e]); },
    [&out, id](vtkIdType e) { return id(out.to[e]); });
  std::vector<jz::Index>().swap(out.from);
  std::vector<jz::Index>().swap(out.to);
  lines.finish(edges);
  return std::move(out.core2);
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
      jz::RunInfo info;
      const std::vector<double> core2 = ComputeEdges(
        this, in, in.Coordinates<T>(), problem, backend, this->Periodic != 0, edges, info);
      vtkJZKernelAdapter::ReportRunInfo(this, "EuclideanMST", info, *in.comm);

      std::vector<vtkDataArray*> results;
      vtkSmartPointer<vtkDoubleArray> core;
      if (mutual)
      {
        core = vtkJZKernelAdapter::NewArray<vtkDoubleArray>("CoreDistance", in.localPoints);
        double* distance = core->GetPointer(0);
#pragma omp parallel for schedule(static)
        for (vtkIdType i = 0; i < in.localPoints; ++i)
        {
          distance[i] = std::sqrt(core2[i]);
        }
        results.push_back(core);
      }
      vtkJZKernelAdapter::AttachResults(input, output, results, mutual ? "CoreDistance" : nullptr);
      vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
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
