// SPHProjection's deposition on the GPU (depositProjectionCuda): the points,
// support radii, masses and fields uploaded as they are; one warp per
// particle, its lanes over its pixels (SphProjectionColumns.h, the per-pixel
// logic the CPU tests also run), each pixel added to the image's sums
// atomically, so that the sums equal the CPU's up to the order of the
// additions (and the contraction of products into fused multiply-adds).
#include <vector>

#include "cuda/CudaCommon.cuh"
#include "cuda/CudaDriver.cuh"
#include "sph/SphMapsBackends.h"
#include "sph/SphProjectionColumns.h"

namespace jz
{
namespace cuda
{
namespace
{
constexpr int kWarp = 32;

// A mapped field: its values per particle (input order) and its sums per
// pixel, `components` each.
struct FieldSums
{
  const double* values;
  double* sums;
  int components;
};

// Adds a pixel of particle i to the image's mass and field sums.
struct AtomicPixels
{
  double* mass;
  const FieldSums* fields;
  int numFields;
  std::size_t particle;

  __device__ void operator()(std::size_t cell, double w, double fieldWeight) const
  {
    atomicAdd(mass + cell, w);
    for (int f = 0; f < numFields; ++f)
    {
      const FieldSums& field = fields[f];
      const std::size_t nc = std::size_t(field.components);
      for (std::size_t c = 0; c < nc; ++c)
        atomicAdd(field.sums + cell * nc + c, fieldWeight * field.values[particle * nc + c]);
    }
  }
};

// One warp per particle.
template <class T>
__global__ void projectKernel(const T* points, const double* support, const double* masses,
  std::size_t n, projection::Projection g, const projection::ColumnTable table,
  const projection::Centres centres, AtomicPixels add)
{
  const int lane = int(threadIdx.x % kWarp);
  const std::size_t warps = std::size_t(gridDim.x) * blockDim.x / kWarp;
  for (std::size_t i = globalThread() / kWarp; i < n; i += warps)
  {
    add.particle = i;
    projection::projectParticle(g, table, centres, points, support, masses, i, lane, kWarp, add);
  }
}
} // namespace
} // namespace cuda

template <class T>
void depositProjectionCuda(const SphParticles<T>& P, const SphGrid& grid, const double* period,
  SphMapSums& sums, RunInfo& info, const RunControl& control)
{
  using namespace cuda;
  checkPointCount(P.numPoints);
  const std::size_t n = P.numPoints, cells = grid.numCells();
  const projection::Projection g = projection::projectionOf(grid, period);
  const SphCumulativeTable& table = SphCumulativeTable::get(P.kernel, 2);
  const projection::Centres centres = projection::centresOf(SphColumnCentres::get(P.kernel));

  DeviceRun run;
  const cudaStream_t st = run.st();
  DeviceBuffer<T> points(3 * n, st, "the particles");
  points.upload(P.points, 3 * n);
  DeviceBuffer<double> support(n, st, "the support radii");
  support.upload(P.support, n);
  const DeviceBuffer<double> masses = uploadOptional(P.masses, n, st, "the masses");
  DeviceBuffer<double> nodes(table.nodes().size(), st, "the column table");
  nodes.upload(table.nodes().data(), table.nodes().size());
  std::vector<DeviceBuffer<double>> values(P.fields.size()), fieldSums(P.fields.size());
  std::vector<FieldSums> views(P.fields.size());
  for (std::size_t f = 0; f < P.fields.size(); ++f)
  {
    const std::size_t nc = std::size_t(P.fields[f].components);
    values[f].allocate(n * nc, st, "a mapped field");
    values[f].upload(P.fields[f].values, n * nc);
    fieldSums[f].allocate(cells * nc, st, "a mapped field's sums");
    check(cudaMemsetAsync(fieldSums[f].get(), 0, cells * nc * sizeof(double), st), "memset");
    views[f] = FieldSums{ values[f].get(), fieldSums[f].get(), P.fields[f].components };
  }
  const DeviceBuffer<FieldSums> fieldViews = uploadOptional(
    views.empty() ? nullptr : views.data(), views.size(), st, "the field views");
  DeviceBuffer<double> mass(cells, st, "the image");
  check(cudaMemsetAsync(mass.get(), 0, cells * sizeof(double), st), "memset");
  run.timer.mark("upload");

  constexpr unsigned kThreads = 256;
  projectKernel<T><<<gridFor((unsigned long long)n * kWarp, kThreads), kThreads, 0, st>>>(
    points.get(), support.get(), masses.get(), n, g,
    projection::ColumnTable{ nodes.get(), table.stride(), table.intervals() }, centres,
    AtomicPixels{ mass.get(), fieldViews.get(), int(views.size()), 0 });
  JZ_CUDA_LAUNCH_CHECK("projectKernel");
  run.timer.mark("deposition");

  download(sums.mass.data(), mass.get(), cells, st);
  for (std::size_t f = 0; f < P.fields.size(); ++f)
    download(sums.fields[f].data(), fieldSums[f].get(), fieldSums[f].size(), st);
  run.timer.mark("download");
  run.finish(info, control);
}

template void depositProjectionCuda<float>(const SphParticles<float>&, const SphGrid&,
  const double*, SphMapSums&, RunInfo&, const RunControl&);
template void depositProjectionCuda<double>(const SphParticles<double>&, const SphGrid&,
  const double*, SphMapSums&, RunInfo&, const RunControl&);
} // namespace jz
