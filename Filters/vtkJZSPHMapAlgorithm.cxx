#include "vtkJZSPHMapAlgorithm.h"

#include "vtkJZFilterRun.h"
#include "vtkJZKernelAdapter.h"
#include "vtkJZParticleInput.h"

#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkPointData.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "jz/Distributed.h"
#include "jz/Knn.h"
#include "jz/SphMaps.h"
#include "jz/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace
{
using vtkJZKernelAdapter::Buffer;
using vtkJZKernelAdapter::ParticleInput;

// The image's axes: u and v (the image's first and second) and w (Axis),
// for a volume x, y and z.
void MapAxes(int kind, int axis, int& u, int& v, int& w)
{
  if (kind == int(jz::SphMapKind::Volume))
  {
    u = 0, v = 1, w = 2;
    return;
  }
  w = axis < 0 || axis > 2 ? 2 : axis;
  u = (w + 1) % 3;
  v = (w + 2) % 3;
}

// The map's whole extent in VTK's (x, y, z) index space.
void WholeExtent(int kind, int axis, const int* resolution, int extent[6])
{
  int u, v, w;
  MapAxes(kind, axis, u, v, w);
  std::fill(extent, extent + 6, 0);
  extent[2 * u + 1] = resolution[0] - 1;
  extent[2 * v + 1] = resolution[1] - 1;
  extent[2 * w + 1] = kind == int(jz::SphMapKind::Volume) ? resolution[2] - 1 : 0;
}

// The points' bounds over all ranks (empty ranks contribute nothing).
template <class T>
void GlobalBounds(const Buffer<T>& c, jz::Communicator& comm, double bounds[6])
{
  double lo[3] = { jz::kInfinity, jz::kInfinity, jz::kInfinity };
  double hi[3] = { -jz::kInfinity, -jz::kInfinity, -jz::kInfinity };
  for (std::size_t i = 0; i < c.size; ++i)
    for (int d = 0; d < 3; ++d)
    {
      lo[d] = std::min(lo[d], double(c.data[3 * i + d]));
      hi[d] = std::max(hi[d], double(c.data[3 * i + d]));
    }
  comm.allReduceMin(lo, 3);
  comm.allReduceMax(hi, 3);
  for (int d = 0; d < 3; ++d)
  {
    bounds[2 * d] = lo[d];
    bounds[2 * d + 1] = hi[d];
  }
}

// The selected point arrays of every piece, concatenated as doubles: every
// block with points must have each, with one component count over all
// blocks and ranks. Returns the error (the same on every rank) or "".
std::string ReadFields(ParticleInput& in, const std::vector<std::string>& names,
  std::vector<Buffer<double>>& values, std::vector<int>& components)
{
  jz::Communicator& comm = *in.comm;
  std::string error;
  components.assign(names.size(), 0);
  for (std::size_t f = 0; f < names.size() && error.empty(); ++f)
  {
    const std::string& name = names[f];
    if (name == "Density" || name == "SurfaceDensity")
    {
      error = "PointArrays may not name an output array of the filter (" + name + ").";
      break;
    }
    for (std::size_t b = 0; b < in.pieces.size() && error.empty(); ++b)
    {
      vtkDataArray* a = in.pieces[b]->GetPointData()->GetArray(name.c_str());
      if (!a && in.pieces[b]->GetNumberOfPoints() > 0)
        error = "PointArrays: block " + std::to_string(b) + " has no point array '" + name + "'.";
      else if (a && components[f] == 0)
        components[f] = a->GetNumberOfComponents();
    }
  }
  error = vtkJZKernelAdapter::AgreeOnError(comm, error);
  if (!error.empty())
    return error;
  // One component count over the ranks.
  std::vector<double> lo(components.begin(), components.end()), hi = lo;
  for (std::size_t f = 0; f < names.size(); ++f)
    if (lo[f] == 0)
      lo[f] = jz::kInfinity;
  comm.allReduceMin(lo.data(), int(lo.size()));
  comm.allReduceMax(hi.data(), int(hi.size()));
  for (std::size_t f = 0; f < names.size() && error.empty(); ++f)
  {
    if (hi[f] == 0)
      error = "PointArrays: no point array '" + names[f] + "' in the Input.";
    else if (lo[f] != hi[f])
      error = "PointArrays: '" + names[f] + "' has different numbers of components on the ranks.";
    components[f] = int(hi[f]);
  }
  if (!error.empty())
    return error;
  values.resize(names.size());
  for (std::size_t f = 0; f < names.size() && error.empty(); ++f)
    vtkJZKernelAdapter::GetPointValues(in.pieces, names[f].c_str(), components[f],
      "PointArrays entry " + names[f], values[f], error);
  return vtkJZKernelAdapter::AgreeOnError(comm, error);
}

// An array selection by name: none for "" and for "None" (unless some
// block has an array called so), as vtkJZKernelAdapter::SelectedArrayName.
const char* SelectedName(const std::string& name, vtkDataObject* input)
{
  auto info = vtkSmartPointer<vtkInformation>::New();
  info->Set(vtkDataObject::FIELD_NAME(), name.c_str());
  const char* selected = vtkJZKernelAdapter::SelectedArrayName(info, input);
  return selected ? name.c_str() : nullptr;
}

struct MapSettings
{
  jz::SphGrid grid;
  jz::SphKernel kernel = jz::SphKernel::CubicSpline;
  int k = 32;
  double hScale = 1;
  bool periodic = false;
  const char* hArray = nullptr;
  const char* rhoArray = nullptr;
  std::vector<std::string> fieldNames;
  jz::Backend backend = jz::Backend::Auto;
  int extent[6] = { 0, -1, 0, -1, 0, -1 };
};

// The support radii of this rank's particles: the array's h times the scale
// (the array itself when the scale is 1), or the distance to the K-th nearest
// particle of all ranks; and, when `rho` is wanted and not given, with it the
// densities (the DensityArray itself when given).
template <class T>
void SupportAndDensity(vtkAlgorithm* self, ParticleInput& in, const MapSettings& s,
  bool needDensity, Buffer<double>& h, Buffer<double>& rho)
{
  jz::Communicator& comm = *in.comm;
  const Buffer<T>& c = in.Coordinates<T>();
  const std::size_t n = c.size;
  std::string error;
  if (s.hArray)
  {
    vtkJZKernelAdapter::GetPointValues(in.pieces, s.hArray, 1, "SmoothingLengthArray", h, error);
    if (error.empty() && s.hScale != 1)
    {
      const double* given = h.data;
      std::vector<double> scaled(n);
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < std::int64_t(n); ++i)
        scaled[std::size_t(i)] = given[i] * s.hScale;
      h.storage = std::move(scaled);
      h.Adopt();
    }
    double lo[3], hi[3];
    vtkJZKernelAdapter::SplitBox(in.box, lo, hi);
    if (error.empty())
      error = jz::sphSupportError(
        h.data, n, s.periodic, lo, hi, "SmoothingLengthArray (times SmoothingLengthScale)");
  }
  error = vtkJZKernelAdapter::AgreeOnError(comm, error);
  if (!error.empty())
    throw jz::Error(error);
  const bool kernelDensity = needDensity && !s.rhoArray;
  std::vector<T> knnRho;
  if (!s.hArray)
  {
    error = jz::neighbourCountError(s.k, in.totalPoints, vtkJZKernelAdapter::PropertyNames());
    if (!error.empty())
      throw jz::Error(error);
    jz::KnnProblem<T> problem;
    problem.sources = c.data;
    problem.numSources = n;
    problem.sourceMasses = in.masses.data;
    problem.sourceIds = in.ids.data;
    problem.k = s.k;
    vtkJZKernelAdapter::SetPeriodicBox(s.periodic, in.box, problem);
    std::vector<T> hT(n);
    knnRho.resize(n);
    jz::KnnResults<T> results;
    results.smoothingLength = hT.data();
    results.density = knnRho.data();
    const jz::RunInfo info = jz::computeKnnDistributed<T>(
      problem, results, comm, s.backend, vtkJZKernelAdapter::MakeRunControl(self));
    vtkJZKernelAdapter::ReportRunInfo(self, "SPH smoothing lengths", info, comm);
    h.storage.assign(hT.begin(), hT.end());
    h.Adopt();
    h.size = n;
  }
  if (!needDensity)
    return;
  if (s.rhoArray)
  {
    vtkJZKernelAdapter::GetPointValues(in.pieces, s.rhoArray, 1, "DensityArray", rho, error);
    error = vtkJZKernelAdapter::AgreeOnError(comm, error);
    if (!error.empty())
      throw jz::Error(error);
    return;
  }
  rho.size = n;
  if (kernelDensity && !s.hArray && s.kernel == jz::SphKernel::CubicSpline)
  {
    rho.storage.assign(knnRho.begin(), knnRho.end()); // KNNDensity's "SPH Cubic Spline"
    rho.Adopt();
    return;
  }
  // All ranks' particles within reach are sources of each rank's densities.
  rho.storage.assign(n, 0.0);
  rho.Adopt();
  double lo[3], hi[3];
  vtkJZKernelAdapter::SplitBox(in.box, lo, hi);
  jz::sphGatherDensityDistributed<T>(comm, c.data, n, in.masses.data, h.data, s.kernel, s.periodic,
    lo, hi, rho.storage.data(), vtkJZKernelAdapter::MakeRunControl(self));
}

// The map of all ranks' particles, written into `output` over s.extent.
template <class T>
void RunMap(vtkAlgorithm* self, ParticleInput& in, const MapSettings& s, vtkImageData* output)
{
  // Device CUDA without a usable GPU is an error even when no kNN runs.
  jz::resolveBackend(s.backend);
  const bool needDensity = s.grid.kind == jz::SphMapKind::Slice && !s.fieldNames.empty();
  std::vector<Buffer<double>> fieldValues;
  std::vector<int> components;
  std::string error = ReadFields(in, s.fieldNames, fieldValues, components);
  if (!error.empty())
    throw jz::Error(error);
  Buffer<double> h, rho;
  if (in.totalPoints > 0)
    SupportAndDensity<T>(self, in, s, needDensity, h, rho);

  jz::SphParticles<T> particles;
  const Buffer<T>& c = in.Coordinates<T>();
  particles.points = c.data;
  particles.numPoints = c.size;
  particles.masses = in.masses.data;
  particles.support = h.data;
  particles.density = needDensity ? rho.data : nullptr;
  for (std::size_t f = 0; f < fieldValues.size(); ++f)
    particles.fields.push_back({ fieldValues[f].data, components[f] });
  particles.kernel = s.kernel;
  vtkJZKernelAdapter::SetPeriodicBox(s.periodic, in.box, particles);
  // The output's point layout: in place in 3-D, pixel centres, the image's
  // plane along Axis; its points in VTK's order (x fastest).
  int u, v, w;
  const int kind = int(s.grid.kind);
  MapAxes(kind, s.grid.axis, u, v, w);
  const int res[3] = { s.grid.resolution[0], s.grid.resolution[1], s.grid.resolution[2] };
  std::size_t stride[3] = { 0, 0, 0 }; // a point's cell per step along x, y, z
  stride[u] = 1;
  stride[v] = std::size_t(res[0]);
  if (kind == int(jz::SphMapKind::Volume))
    stride[w] = std::size_t(res[0]) * std::size_t(res[1]);
  const std::int64_t nx = s.extent[1] - s.extent[0] + 1, ny = s.extent[3] - s.extent[2] + 1,
                     nz = s.extent[5] - s.extent[4] + 1;
  const vtkIdType count = vtkIdType(nx * ny * nz);
  auto density = vtkSmartPointer<vtkDoubleArray>::New();
  density->SetName(s.grid.kind == jz::SphMapKind::Projection ? "SurfaceDensity" : "Density");
  density->SetNumberOfTuples(count);
  // When the points are the cells in their own order (a whole extent; a
  // volume, an image across x or z), the mass is deposited straight into
  // the output.
  bool inPlace = std::size_t(count) == s.grid.numCells();
  const std::int64_t points[3] = { nx, ny, nz };
  for (std::size_t d = 0, step = 1; d < 3; step *= std::size_t(points[d]), ++d)
    inPlace = inPlace && (points[d] == 1 || stride[d] == step);

  // The deposition validates the particles first and throws before it
  // writes anything; the ranks agree on its error before they reduce.
  jz::SphMapSums sums;
  if (inPlace)
    sums.mass.borrow(density->GetPointer(0), std::size_t(count));
  jz::RunInfo info;
  try
  {
    info = jz::depositSphMap(
      particles, s.grid, sums, s.backend, vtkJZKernelAdapter::MakeRunControl(self));
  }
  catch (const jz::Aborted&)
  {
    throw;
  }
  catch (const jz::Error& e)
  {
    error = e.what();
  }
  error = vtkJZKernelAdapter::AgreeOnError(*in.comm, error);
  if (!error.empty())
    throw jz::Error(error);
  vtkJZKernelAdapter::ReportRunInfo(self, "SPH map", info, *in.comm);
  jz::reduceSphMapSums(*in.comm, sums);
  jz::finishSphMap(s.grid, sums);

  const double* region = s.grid.region;
  double origin[3], spacing[3];
  const int dims[3] = { u, v, w };
  for (int a = 0; a < 3; ++a)
  {
    const int d = dims[a];
    const int cells = a < 2 || kind == int(jz::SphMapKind::Volume) ? res[a] : 1;
    spacing[d] = (region[2 * d + 1] - region[2 * d]) / cells;
    origin[d] = region[2 * d] + 0.5 * spacing[d];
  }
  if (kind != int(jz::SphMapKind::Volume))
  {
    origin[w] = kind == int(jz::SphMapKind::Slice) ? s.grid.slicePosition : region[2 * w];
    spacing[w] = spacing[u];
  }
  output->SetOrigin(origin);
  output->SetSpacing(spacing);
  output->SetExtent(const_cast<int*>(s.extent));
  std::vector<vtkSmartPointer<vtkDoubleArray>> fields(s.fieldNames.size());
  for (std::size_t f = 0; f < fields.size(); ++f)
  {
    fields[f] = vtkSmartPointer<vtkDoubleArray>::New();
    fields[f]->SetName(s.fieldNames[f].c_str());
    fields[f]->SetNumberOfComponents(components[f]);
    fields[f]->SetNumberOfTuples(count);
  }
  // The cells in VTK's point order (x fastest), a row of points at a time,
  // the rows in parallel for large maps (a small one copies faster than
  // threads join, above all on a busy machine).
  const std::int64_t rows = count > 0 ? count / nx : 0;
  double* mapOut = density->GetPointer(0);
  std::vector<double*> fieldOut(fields.size());
  for (std::size_t f = 0; f < fields.size(); ++f)
    fieldOut[f] = fields[f]->GetPointer(0);
  constexpr vtkIdType kParallelCopyMin = vtkIdType(1) << 20;
#pragma omp parallel for schedule(static) if (count >= kParallelCopyMin)
  for (std::int64_t row = 0; row < (inPlace && fields.empty() ? 0 : rows); ++row)
  {
    const std::size_t first = std::size_t(s.extent[0]) * stride[0] +
      std::size_t(s.extent[2] + row % ny) * stride[1] +
      std::size_t(s.extent[4] + row / ny) * stride[2];
    for (std::int64_t i = 0; i < nx; ++i)
    {
      const std::size_t cell = first + std::size_t(i) * stride[0], id = std::size_t(row * nx + i);
      if (!inPlace)
        mapOut[id] = sums.mass[cell];
      for (std::size_t f = 0; f < fields.size(); ++f)
      {
        const std::size_t nc = std::size_t(components[f]);
        std::copy_n(sums.fields[f].data() + cell * nc, nc, fieldOut[f] + id * nc);
      }
    }
  }
  output->GetPointData()->AddArray(density);
  output->GetPointData()->SetActiveScalars(density->GetName());
  for (auto& f : fields)
    output->GetPointData()->AddArray(f);
  vtkJZKernelAdapter::AddDeviceFieldData(output, info.backend);
}
}

//------------------------------------------------------------------------------
vtkJZSPHMapAlgorithm::vtkJZSPHMapAlgorithm() = default;

void vtkJZSPHMapAlgorithm::AddPointArray(const char* name)
{
  if (name && *name)
  {
    this->PointArrays.emplace_back(name);
    this->Modified();
  }
}

void vtkJZSPHMapAlgorithm::SetSmoothingLengthArray(const char* name)
{
  const std::string value = name ? name : "";
  if (value != this->SmoothingLengthArray)
  {
    this->SmoothingLengthArray = value;
    this->Modified();
  }
}

void vtkJZSPHMapAlgorithm::SetDensityArray(const char* name)
{
  const std::string value = name ? name : "";
  if (value != this->DensityArray)
  {
    this->DensityArray = value;
    this->Modified();
  }
}

void vtkJZSPHMapAlgorithm::ClearPointArrays()
{
  if (!this->PointArrays.empty())
  {
    this->PointArrays.clear();
    this->Modified();
  }
}

//------------------------------------------------------------------------------
int vtkJZSPHMapAlgorithm::FillOutputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkImageData");
  return 1;
}

int vtkJZSPHMapAlgorithm::RequestDataObject(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkInformation* info = outputVector->GetInformationObject(0);
  if (!vtkImageData::SafeDownCast(vtkDataObject::GetData(info)))
  {
    info->Set(vtkDataObject::DATA_OBJECT(), vtkSmartPointer<vtkImageData>::New());
  }
  return 1;
}

// The whole extent follows from Resolution and Axis alone, so ParaView can
// split the image into extents over the ranks as it does an image source's.
int vtkJZSPHMapAlgorithm::ExecuteInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkInformation* info = outputVector->GetInformationObject(0);
  int extent[6];
  int res[3] = { std::max(this->Resolution[0], 1), std::max(this->Resolution[1], 1),
    std::max(this->Resolution[2], 1) };
  WholeExtent(this->MapKind, this->Axis, res, extent);
  info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), extent, 6);
  info->Set(vtkAlgorithm::CAN_PRODUCE_SUB_EXTENT(), 1);
  return 1;
}

// Every rank reads its own piece of the particles, whatever extent of the
// image it is asked for.
int vtkJZSPHMapAlgorithm::ComputeInputUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
  int piece = controller ? controller->GetLocalProcessId() : 0;
  int pieces = controller ? controller->GetNumberOfProcesses() : 1;
  if (outInfo->Has(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()))
  {
    piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
    pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  }
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER(), piece);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES(), pieces);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_GHOST_LEVELS(), 0);
  return 1;
}

int vtkJZSPHMapAlgorithm::RequestData(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  int res[3] = { std::max(this->Resolution[0], 1), std::max(this->Resolution[1], 1),
    std::max(this->Resolution[2], 1) };
  WholeExtent(this->MapKind, this->Axis, res, this->UpdateExtent);
  if (outInfo->Has(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT()))
  {
    int ext[6];
    outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), ext);
    if (ext[0] <= ext[1] && ext[2] <= ext[3] && ext[4] <= ext[5])
    {
      for (int d = 0; d < 3; ++d)
      {
        this->UpdateExtent[2 * d] = std::max(this->UpdateExtent[2 * d], ext[2 * d]);
        this->UpdateExtent[2 * d + 1] = std::min(this->UpdateExtent[2 * d + 1], ext[2 * d + 1]);
      }
    }
  }
  return this->Superclass::RequestData(request, inputVector, outputVector);
}

//------------------------------------------------------------------------------
int vtkJZSPHMapAlgorithm::RunParticles(
  vtkDataObject* input, const std::vector<vtkDataObject*>& outputs)
{
  auto* output = vtkImageData::SafeDownCast(outputs[0]);
  ParticleInput in;
  std::string error = vtkJZKernelAdapter::RangeError({ { jz::ranges::NumberOfNeighbors,
                                                         this->NumberOfNeighbors },
    { jz::ranges::SphKernel, this->Kernel }, { jz::ranges::SmoothingLengthScale,
                                                this->SmoothingLengthScale },
    { jz::ranges::SphAxis, this->Axis }, { jz::ranges::Device, this->Device } });
  const std::string pieceError = vtkJZKernelAdapter::ReadPieces(input, nullptr, in);
  if (error.empty())
  {
    error = pieceError;
  }
  if (error.empty())
  {
    error = vtkJZKernelAdapter::ReadPeriodicBox(
      input, this->Periodic, this->BoxFromData, this->BoxBounds, in);
  }
  if (error.empty() && in.totalPoints > 0)
  {
    vtkJZKernelAdapter::PointArrayRequest arrays;
    arrays.masses = vtkJZKernelAdapter::SelectedArrayName(this->GetInputArrayInformation(0), input);
    error = vtkJZKernelAdapter::ReadPoints(arrays, in);
  }
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  MapSettings s;
  s.grid.kind = jz::SphMapKind(this->MapKind);
  s.grid.axis = this->Axis;
  s.grid.slicePosition = this->SlicePosition;
  std::copy(this->Resolution, this->Resolution + 3, s.grid.resolution);
  std::copy(this->UpdateExtent, this->UpdateExtent + 6, s.extent);
  const bool fromData = std::all_of(this->Region, this->Region + 6, [](double r) { return r == 0; });
  if (!fromData)
  {
    std::copy(this->Region, this->Region + 6, s.grid.region);
  }
  else if (this->Periodic)
  {
    std::copy(in.box, in.box + 6, s.grid.region);
  }
  else if (in.totalPoints == 0)
  {
    return 1; // no region and no data: an empty image
  }
  else
  {
    if (in.useFloat)
    {
      GlobalBounds(in.Coordinates<float>(), *in.comm, s.grid.region);
    }
    else
    {
      GlobalBounds(in.Coordinates<double>(), *in.comm, s.grid.region);
    }
    // An infinite point makes the bounds infinite: it is named as the point
    // it is, not as a non-finite region (the ranks share the bounds, so all
    // of them look).
    if (!std::all_of(s.grid.region, s.grid.region + 6, [](double r) { return std::isfinite(r); }))
    {
      error = vtkJZKernelAdapter::AgreeOnError(*in.comm,
        in.useFloat ? jz::nonFiniteCoordinateError(
                        in.Coordinates<float>().data, in.Coordinates<float>().size, "point")
                    : jz::nonFiniteCoordinateError(
                        in.Coordinates<double>().data, in.Coordinates<double>().size, "point"));
      if (!error.empty())
      {
        vtkErrorMacro(<< error);
        return 0;
      }
    }
  }
  if (s.grid.kind == jz::SphMapKind::Slice)
  {
    // The slice's range along Axis is ignored: any non-empty one.
    s.grid.region[2 * s.grid.axis] = 0;
    s.grid.region[2 * s.grid.axis + 1] = 1;
  }
  error = jz::sphGridError(s.grid);
  if (!error.empty())
  {
    vtkErrorMacro(<< error);
    return 0;
  }
  s.kernel = this->Kernel == WENDLAND_C2 ? jz::SphKernel::WendlandC2 : jz::SphKernel::CubicSpline;
  s.k = this->NumberOfNeighbors;
  s.hScale = this->SmoothingLengthScale;
  s.periodic = this->Periodic;
  s.hArray = SelectedName(this->SmoothingLengthArray, input);
  s.rhoArray = SelectedName(this->DensityArray, input);
  s.fieldNames = this->PointArrays;
  s.backend = vtkJZKernelAdapter::ToBackend(this->Device);
  return vtkJZKernelAdapter::RunInPrecision(this, this->FilterName, in.useFloat, { output },
    [&](auto precision) { RunMap<decltype(precision)>(this, in, s, output); });
}

//------------------------------------------------------------------------------
void vtkJZSPHMapAlgorithm::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfNeighbors: " << this->NumberOfNeighbors << "\n";
  os << indent << "Kernel: " << (this->Kernel == WENDLAND_C2 ? "Wendland C2" : "Cubic Spline")
     << "\n";
  os << indent << "SmoothingLengthScale: " << this->SmoothingLengthScale << "\n";
  os << indent << "Axis: " << this->Axis << "\n";
  os << indent << "SlicePosition: " << this->SlicePosition << "\n";
  os << indent << "Resolution: " << this->Resolution[0] << " " << this->Resolution[1] << " "
     << this->Resolution[2] << "\n";
  os << indent << "Region:";
  for (double r : this->Region)
  {
    os << " " << r;
  }
  os << "\n";
  os << indent << "SmoothingLengthArray: " << this->SmoothingLengthArray << "\n";
  os << indent << "DensityArray: " << this->DensityArray << "\n";
  os << indent << "PointArrays:";
  for (const std::string& name : this->PointArrays)
  {
    os << " " << name;
  }
  os << "\n";
}
