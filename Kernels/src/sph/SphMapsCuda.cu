// SPHProjection's deposition on the GPU (depositProjectionCuda): the points,
// support radii, masses and fields uploaded as they are, the same pixel
// integrals as the CPU's (SphProjectionColumns.h, the per-pixel logic the
// CPU tests also run), in two passes:
// - narrow columns: one warp per particle, its lanes over its pixels, each
//   pixel added to the image's sums atomically;
// - wide columns (most of the pixel-particle pairs): by tiles of the image
//   (SphProjectionTiles.h), each pixel owned by one thread that adds its
//   tile's columns in order, with no atomics. The tile entries are counted,
//   written and sorted stably by tile; where they would not fit in the
//   device's free memory, the wide columns go the narrow ones' way.
// The sums equal the CPU's up to the order of the additions (and the
// contraction of products into fused multiply-adds).
#include <cub/cub.cuh>

#include <cstdint>
#include <vector>

#include "cuda/CudaCommon.cuh"
#include "cuda/CudaDriver.cuh"
#include "sph/SphMapsBackends.h"
#include "sph/SphProjectionColumns.h"
#include "sph/SphProjectionTiles.h"

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

// One warp per particle, over the columns `which`.
template <class T>
__global__ void projectKernel(const T* points, const double* support, const double* masses,
  std::size_t n, projection::Projection g, const projection::PixelFactors factors,
  const projection::Centres centres, AtomicPixels add, projection::Columns which)
{
  const int lane = int(threadIdx.x % kWarp);
  const std::size_t warps = std::size_t(gridDim.x) * blockDim.x / kWarp;
  for (std::size_t i = globalThread() / kWarp; i < n; i += warps)
  {
    add.particle = i;
    projection::projectParticle(
      g, factors, centres, points, support, masses, i, lane, kWarp, add, which);
  }
}

// counts[i]: particle i's tile entries (forWideEntries).
template <class T>
__global__ void countEntriesKernel(const T* points, const double* support, std::size_t n,
  projection::Projection g, projection::TileGrid tiles, unsigned long long* counts)
{
  for (std::size_t i = globalThread(); i < n; i += gridThreads())
  {
    unsigned long long count = 0;
    projection::forWideEntries(
      g, tiles, points, support, i, [&](unsigned, std::uint64_t) { ++count; });
    counts[i] = count;
  }
}

// Particle i's entries from offsets[i] on: their tiles and codes.
template <class T>
__global__ void writeEntriesKernel(const T* points, const double* support, std::size_t n,
  projection::Projection g, projection::TileGrid tiles, const unsigned long long* offsets,
  unsigned* tileOf, std::uint64_t* codes)
{
  for (std::size_t i = globalThread(); i < n; i += gridThreads())
  {
    unsigned long long k = offsets[i];
    projection::forWideEntries(g, tiles, points, support, i,
      [&](unsigned tile, std::uint64_t code)
      {
        tileOf[k] = tile;
        codes[k] = code;
        ++k;
      });
  }
}

// starts[t]: the first of the sorted entries whose tile is t or later
// (t <= numTiles; starts[numTiles] = total).
__global__ void tileStartsKernel(const unsigned* sortedTiles, unsigned long long total,
  unsigned numTiles, unsigned long long* starts)
{
  for (unsigned long long t = globalThread(); t <= numTiles; t += gridThreads())
  {
    unsigned long long lo = 0, hi = total;
    while (lo < hi)
    {
      const unsigned long long mid = lo + (hi - lo) / 2;
      if (sortedTiles[mid] < t)
        lo = mid + 1;
      else
        hi = mid;
    }
    starts[t] = lo;
  }
}

// A thread's own pixels' field sums (no other thread writes them).
struct OwnedFieldPixels
{
  const FieldSums* fields;
  int numFields;

  __device__ void operator()(std::size_t cell, std::size_t particle, double w) const
  {
    for (int f = 0; f < numFields; ++f)
    {
      const FieldSums& field = fields[f];
      const std::size_t nc = std::size_t(field.components);
      for (std::size_t c = 0; c < nc; ++c)
        field.sums[cell * nc + c] += w * field.values[particle * nc + c];
    }
  }
};

// One block per tile: its entries' columns decoded a batch at a time into
// shared memory, each thread adding them to its own pixels (addTileColumns).
template <class T>
__global__ void __launch_bounds__(projection::kTileThreads) wideTilesKernel(const T* points,
  const double* support, const double* masses, projection::Projection g, projection::TileGrid tiles,
  const projection::Centres centres, const unsigned long long* starts, const std::uint64_t* codes,
  double* mass, OwnedFieldPixels field)
{
  using namespace projection;
  __shared__ WideColumn columns[kTileThreads];
  __shared__ std::size_t particles[kTileThreads];
  const unsigned tile = blockIdx.x;
  const int u = int(tile % unsigned(tiles.across)) * kTileSide + int(threadIdx.x) % kTileSide;
  const int v0 = int(tile / unsigned(tiles.across)) * kTileSide + int(threadIdx.x) / kTileSide;
  double sums[kTileRowsPerThread] = {};
  const unsigned long long end = starts[tile + 1];
  for (unsigned long long first = starts[tile]; first < end; first += kTileThreads)
  {
    const int count = int(end - first < kTileThreads ? end - first : kTileThreads);
    __syncthreads(); // the previous batch is done with
    if (int(threadIdx.x) < count)
      columns[threadIdx.x] =
        entryColumn(g, points, support, masses, codes[first + threadIdx.x], particles[threadIdx.x]);
    __syncthreads();
    addTileColumns(g, centres, columns, particles, count, u, v0, sums, field);
  }
  for (int r = 0; r < kTileRowsPerThread; ++r)
  {
    const int v = v0 + r * kTileRowStep;
    if (u < g.u.cells && v < g.v.cells)
      mass[std::size_t(v) * std::size_t(g.u.cells) + std::size_t(u)] += sums[r];
  }
}

// The wide columns by tiles (after the narrow ones, on the same stream);
// false, with nothing done, when their entries would not fit in the
// device's free memory or their images in an entry's code.
template <class T>
bool depositWideTiles(DeviceRun& run, const T* points, const double* support, const double* masses,
  std::size_t n, const projection::Projection& g, const projection::Centres& centres, double* mass,
  OwnedFieldPixels field)
{
  const cudaStream_t st = run.st();
  const projection::TileGrid tiles = projection::tileGridOf(g);
  const unsigned long long numTiles = (unsigned long long)tiles.across * tiles.down;
  if (!projection::imagesFitEntryCodes(g) || numTiles >= (1ull << 31))
    return false;
  DeviceBuffer<unsigned long long> offsets(n + 1, st, "the tile entries' offsets");
  unsigned long long* o = offsets.get();
  countEntriesKernel<T><<<gridFor(n, 256), 256, 0, st>>>(points, support, n, g, tiles, o);
  JZ_CUDA_LAUNCH_CHECK("countEntriesKernel");
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, o, o, (long long)n + 1, st));
  void* storage = run.temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage, bytes, o, o, (long long)n + 1, st));
  const unsigned long long total = fetchValue(o + n, st);
  run.timer.mark("tile entries counted");
  if (total == 0)
    return true;
  // The entries' tiles and codes twice over (the sort's double buffers), and
  // a margin for the sort's scratch and the tile starts.
  const double need =
    1.1 * double(total) * 2 * double(sizeof(unsigned) + sizeof(std::uint64_t)) + 64e6;
  std::size_t freeBytes = 0, deviceBytes = 0;
  JZ_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &deviceBytes));
  if (need > double(freeBytes))
    return false;

  DeviceBuffer<unsigned> tileOf(total, st, "the tile entries"),
    tileAlt(total, st, "the tile entries");
  DeviceBuffer<std::uint64_t> codes(total, st, "the tile entries"),
    codesAlt(total, st, "the tile entries");
  writeEntriesKernel<T>
    <<<gridFor(n, 256), 256, 0, st>>>(points, support, n, g, tiles, o, tileOf.get(), codes.get());
  JZ_CUDA_LAUNCH_CHECK("writeEntriesKernel");
  offsets.release();
  cub::DoubleBuffer<unsigned> keys(tileOf.get(), tileAlt.get());
  cub::DoubleBuffer<std::uint64_t> values(codes.get(), codesAlt.get());
  const int endBit = bitsBelow(numTiles);
  bytes = 0;
  JZ_CUDA_CHECK(
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, (long long)total, 0, endBit, st));
  storage = run.temp.get(bytes);
  JZ_CUDA_CHECK(
    cub::DeviceRadixSort::SortPairs(storage, bytes, keys, values, (long long)total, 0, endBit, st));
  DeviceBuffer<unsigned long long> starts(numTiles + 1, st, "the tiles' first entries");
  tileStartsKernel<<<gridFor(numTiles + 1, 256), 256, 0, st>>>(
    keys.Current(), total, unsigned(numTiles), starts.get());
  JZ_CUDA_LAUNCH_CHECK("tileStartsKernel");
  run.timer.mark("tile entries sorted");

  wideTilesKernel<T><<<unsigned(numTiles), projection::kTileThreads, 0, st>>>(
    points, support, masses, g, tiles, centres, starts.get(), values.Current(), mass, field);
  JZ_CUDA_LAUNCH_CHECK("wideTilesKernel");
  run.timer.mark("wide tiles");
  return true;
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
  const SphPixelFactors& pixelFactors = SphPixelFactors::get(P.kernel);
  const projection::Centres centres = projection::centresOf(SphColumnCentres::get(P.kernel));

  DeviceRun run;
  const cudaStream_t st = run.st();
  DeviceBuffer<T> points(3 * n, st, "the particles");
  points.upload(P.points, 3 * n);
  DeviceBuffer<double> support(n, st, "the support radii");
  support.upload(P.support, n);
  const DeviceBuffer<double> masses = uploadOptional(P.masses, n, st, "the masses");
  // The separable form's cubics, u(1) and weights, one buffer.
  const auto& cubic = pixelFactors.axis().cubic();
  constexpr std::size_t R = SphPixelFactors::kRank;
  std::vector<double> form(cubic.begin(), cubic.end());
  form.insert(form.end(), pixelFactors.axis().end(), pixelFactors.axis().end() + R);
  form.insert(form.end(), pixelFactors.weights(), pixelFactors.weights() + R);
  DeviceBuffer<double> formOnDevice(form.size(), st, "the column table's separable form");
  formOnDevice.upload(form.data(), form.size());
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
  const double* f = formOnDevice.get();
  const projection::PixelFactors columns{
    FactorCubicsView{ f, f + cubic.size(), pixelFactors.axis().intervals() }, f + cubic.size() + R
  };
  const AtomicPixels atomic{ mass.get(), fieldViews.get(), int(views.size()), 0 };
  auto columnsAtomically = [&](projection::Columns which)
  {
    projectKernel<T><<<gridFor((unsigned long long)n * kWarp, kThreads), kThreads, 0, st>>>(
      points.get(), support.get(), masses.get(), n, g, columns, centres, atomic, which);
    JZ_CUDA_LAUNCH_CHECK("projectKernel");
  };
  columnsAtomically(projection::Columns::Narrow);
  run.timer.mark("narrow columns");
  if (!depositWideTiles(run, points.get(), support.get(), masses.get(), n, g, centres, mass.get(),
        OwnedFieldPixels{ fieldViews.get(), int(views.size()) }))
  {
    columnsAtomically(projection::Columns::Wide);
    run.timer.mark("wide columns");
  }

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
