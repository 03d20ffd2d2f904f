// The SPH maps' deposition (jz/SphMaps.h): the particles whose kernel
// reaches a strip of the map, listed per strip (SphStrips.h), put
// their kernel's integral over each pixel or voxel (SphKernelTables.h) or
// its value at each pixel centre into the strip.
#include "jz/SphMaps.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <omp.h>

#include "SphImages.h"
#include "SphKernelTables.h"
#include "SphMapsBackends.h"
#include "SphPixelFactors.h"
#include "SphStrips.h"
#include "SphTree.h"
#include "SphVoxelFactors.h"
#include "common/CacheAligned.h"
#include "common/CudaFallback.h"
#include "common/FirstIndexWhere.h"
#include "common/Progress.h"
#include "distributed/RankOrderSum.h"
#include "jz/Communicator.h"
#include "jz/StageTimer.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
// Pixel rows (images) or voxel slabs (volumes) per strip, at least and at
// most. A particle's strips each redo its factors along the strip: fewer,
// wider strips repeat less, while enough of them keep the threads
// balanced. The width never changes a cell's sum (SphStrips.h).
constexpr int kImageStripRows[2] = { 16, 256 };
// Few particles reach a slice: narrow strips balance the threads.
constexpr int kSliceStripRows[2] = { 4, 4 };
constexpr int kVolumeStripSlabs[2] = { 2, 32 };
constexpr int kStripsPerThread = 2;

int stripWidth(int cells, const int (&limits)[2])
{
  const int even = cells / (kStripsPerThread * std::max(1, omp_get_max_threads()));
  return std::clamp(even, limits[0], limits[1]);
}
// Beyond this many cells a map is refused (absurd resolutions).
constexpr double kMaxCells = double(1u << 31);

// One thread's scratch for a particle: its factor differences and their
// contraction's rows (columns, volumes), a slice's rows across and kernel
// values.
struct Scratch
{
  CacheAlignedVector<double> column, previous, row;
};

// v's storage with room for n values. It only grows: resizing down for one
// particle and up for the next would zero-fill the difference every time.
inline double* room(CacheAlignedVector<double>& v, std::size_t n)
{
  if (v.size() < n)
    v.resize(n);
  return v.data();
}

// What a particle adds: `weight` times each field's values, per cell.
struct Contribution
{
  const std::vector<SphMapField>* fields;
  std::size_t index;
  void add(SphMapSums& sums, std::size_t cell, double weight, double fieldWeight) const
  {
    sums.mass[cell] += weight;
    for (std::size_t f = 0; f < fields->size(); ++f)
    {
      const SphMapField& field = (*fields)[f];
      const double* a = field.values + index * std::size_t(field.components);
      double* out = &sums.fields[f][cell * std::size_t(field.components)];
      for (int c = 0; c < field.components; ++c)
        out[c] += fieldWeight * a[c];
    }
  }
  // add() for the n cells of a row from `cell`, each with its kernel value w[i].
  void addRow(SphMapSums& sums, std::size_t cell, const double* w, std::size_t n, double weight,
    double fieldWeight) const
  {
    double* mass = sums.mass.data() + cell;
    for (std::size_t i = 0; i < n; ++i)
      mass[i] += weight * w[i];
    addFieldsRow(sums, cell, w, n, fieldWeight);
  }
  // addRow's fields alone.
  void addFieldsRow(
    SphMapSums& sums, std::size_t cell, const double* w, std::size_t n, double fieldWeight) const
  {
    for (std::size_t f = 0; f < fields->size(); ++f)
    {
      const SphMapField& field = (*fields)[f];
      const std::size_t nc = std::size_t(field.components);
      const double* a = field.values + index * nc;
      double* out = sums.fields[f].data() + cell * nc;
      if (nc == 1) // the common scalar field, as a loop the compiler vectorises
        for (std::size_t i = 0; i < n; ++i)
          out[i] += fieldWeight * w[i] * a[0];
      else
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t c = 0; c < nc; ++c)
            out[i * nc + c] += fieldWeight * w[i] * a[c];
    }
  }
};

// A slice: the kernel's values at the pixel centres of rows [r0, r1) of a
// plane at distance dz from a particle at (x, y) in the plane, over the box
// of pixel centres within h of it (those beyond the support get exactly 0:
// cheaper than finding each row's ends).
void depositSlice(SphKernel kernel, const GridAxis& u, const GridAxis& v, double x, double y,
  double dz, double h, double m, double fieldScale, int r0, int r1, const Contribution& who,
  SphMapSums& sums, Scratch& scratch)
{
  const double rr = std::sqrt(std::fmax(0.0, h * h - dz * dz));
  int i0, i1, j0, j1;
  if (!u.centresWithin(x, rr, 0, u.cells, i0, i1) || !v.centresWithin(y, rr, r0, r1, j0, j1))
    return;
  const std::size_t n = std::size_t(i1 - i0 + 1), cells = std::size_t(u.cells);
  const int rows = j1 - j0 + 1;
  double* dyz = room(scratch.column, std::size_t(rows));
  for (int j = j0; j <= j1; ++j)
  {
    const double dy = v.lo + (j + 0.5) * v.step - y;
    dyz[std::size_t(j - j0)] = dy * dy + dz * dz;
  }
  const KernelBox box{ u.lo, u.step, x, i0, n, dyz, rows };
  const std::size_t corner = std::size_t(j0) * cells + std::size_t(i0);
  // The mass by the one call whether arrays are mapped or not (the same
  // bits); it keeps the kernel's values for the arrays.
  const bool mapped = !who.fields->empty();
  double* w = mapped ? room(scratch.row, n * std::size_t(rows)) : nullptr;
  addKernelBox(kernel, h, m, box, sums.mass.data() + corner, cells, w);
  if (!mapped)
    return;
  for (int j = 0; j < rows; ++j)
    who.addFieldsRow(sums, corner + std::size_t(j) * cells, w + std::size_t(j) * n, n, fieldScale);
}

// A projected kernel many pixels wide: its pixel integrals by the corrected
// midpoint rule (SphColumnCentres), row by row over the square of pixel
// centres within h (those beyond the support get exactly 0: cheaper than
// finding each row's ends).
void depositWideColumn(const SphColumnCentres& centres, const GridAxis& u, const GridAxis& v,
  double x, double y, double h, double m, int r0, int r1, const Contribution& who, SphMapSums& sums,
  Scratch& scratch)
{
  int i0, i1, j0, j1;
  if (!u.centresWithin(x, h, 0, u.cells, i0, i1) || !v.centresWithin(y, h, r0, r1, j0, j1))
    return;
  const SphColumnCentres::Footprint f = centres.footprint(h, u.step, v.step, m);
  const double X0 = (u.lo + (i0 + 0.5) * u.step - x) * f.invH;
  const std::size_t n = std::size_t(i1 - i0 + 1);
  const int rows = j1 - j0 + 1;
  double* dy2 = room(scratch.previous, std::size_t(rows));
  for (int j = j0; j <= j1; ++j)
  {
    const double dy = v.lo + (j + 0.5) * v.step - y;
    dy2[std::size_t(j - j0)] = dy * dy;
  }
  const std::size_t corner = std::size_t(j0) * std::size_t(u.cells) + std::size_t(i0);
  if (who.fields->empty())
    return centres.addRows(f, X0, dy2, rows, n, sums.mass.data() + corner, std::size_t(u.cells));
  double* w = room(scratch.row, n + SphColumnCentres::kLanes - 1);
  for (int j = 0; j < rows; ++j)
  {
    centres.row(f, X0, dy2[std::size_t(j)], n, w);
    who.addRow(sums, corner + std::size_t(j) * std::size_t(u.cells), w, n, 1.0, 1.0);
  }
}

// The column of a particle at (x, y) over the image rows [r0, r1): by the
// column table's separable form (SphPixelFactors), a kernel many pixels
// wide by the corrected midpoint rule instead.
void depositColumn(const SphPixelFactors& factors, const SphColumnCentres& centres,
  const GridAxis& u, const GridAxis& v, double x, double y, double h, double m, int r0, int r1,
  const Contribution& who, SphMapSums& sums, Scratch& scratch)
{
  if (h >= SphColumnCentres::kMinPixels * std::max(u.step, v.step))
    return depositWideColumn(centres, u, v, x, y, h, m, r0, r1, who, sums, scratch);
  int i0, i1, j0, j1;
  if (!u.span(x, h, 0, u.cells, i0, i1) || !v.span(y, h, r0, r1, j0, j1))
    return;
  if (h == 0)
  {
    who.add(sums, std::size_t(j0) * u.cells + i0, m, m);
    return;
  }
  constexpr int R = SphPixelFactors::kRank;
  const int nu = i1 - i0 + 1, nv = j1 - j0 + 1;
  double *du = room(scratch.previous, std::size_t(nu + nv) * R), *dv = du + std::size_t(nu) * R;
  const SphFactorCubics::Span spans[2] = { { u.lo, i0, u.step, x, nu, du },
    { v.lo, j0, v.step, y, nv, dv } };
  factors.axis().cellDifferences(spans, 2, h);
  double* column = room(scratch.column, SphPixelFactors::scratchSize(nu));
  const std::size_t corner = std::size_t(j0) * std::size_t(u.cells) + std::size_t(i0);
  if (who.fields->empty())
    return factors.pixels(
      du, nu, dv, nv, m, column, { sums.mass.data() + corner, std::size_t(u.cells), true });
  const std::size_t rowLength = std::size_t(SphPixelFactors::paddedRow(nu));
  double* row = room(scratch.row, rowLength * std::size_t(nv));
  factors.pixels(du, nu, dv, nv, m, column, { row, rowLength, false });
  for (int j = 0; j < nv; ++j)
    who.addRow(sums, corner + std::size_t(j) * std::size_t(u.cells),
      row + std::size_t(j) * rowLength, std::size_t(nu), 1.0, 1.0);
}

// A kernel over its voxels [first, last] on each axis, by the table's
// separable form (SphVoxelFactors): per axis the factors' differences across
// each cell, then the voxels of all three.
void depositVoxelFactors(const SphVoxelFactors& factors, const GridAxis* ax, const double* p,
  double h, double m, const int* first, const int* last, const Contribution& who, SphMapSums& sums,
  Scratch& scratch)
{
  constexpr int R = SphVoxelFactors::kRank;
  int n[3];
  std::size_t offset[4] = { 0, 0, 0, 0 };
  for (int d = 0; d < 3; ++d)
  {
    n[d] = last[d] - first[d] + 1;
    offset[d + 1] = offset[d] + std::size_t(n[d]) * R;
  }
  double* diff = room(scratch.previous, offset[3]);
  SphFactorCubics::Span spans[3];
  for (int d = 0; d < 3; ++d)
    spans[d] = { ax[d].lo, first[d], ax[d].step, p[d], n[d], diff + offset[d] };
  factors.axis().cellDifferences(spans, 3, h);
  double* column = room(scratch.column, SphVoxelFactors::scratchSize(n[0], n[1], n[2]));
  const std::size_t nx = std::size_t(ax[0].cells), ny = std::size_t(ax[1].cells);
  const std::size_t corner =
    (std::size_t(first[2]) * ny + std::size_t(first[1])) * nx + std::size_t(first[0]);
  auto contract = [&](const SphVoxelFactors::Output& to)
  {
    factors.voxels(
      diff + offset[0], n[0], diff + offset[1], n[1], diff + offset[2], n[2], m, column, to);
  };
  if (who.fields->empty())
    return contract({ sums.mass.data() + corner, nx, nx * ny, true });
  const std::size_t rowLength = std::size_t(SphVoxelFactors::paddedRow(n[0]));
  double* rows = room(scratch.row, rowLength * std::size_t(n[1]) * std::size_t(n[2]));
  contract({ rows, rowLength, rowLength * std::size_t(n[1]), false });
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      who.addRow(sums, corner + (std::size_t(k) * ny + std::size_t(j)) * nx,
        rows + (std::size_t(k) * n[1] + std::size_t(j)) * rowLength, std::size_t(n[0]), 1.0, 1.0);
}

// A kernel of at most two cells along each axis, from its first cells
// `from`, over its voxels [first, last] (SphVoxelFactors::twoCellVoxels).
void depositTwoCellVoxels(const SphVoxelFactors& factors, const GridAxis* ax, const double* p,
  double h, double m, const double* from, const double* to, const int* first, const int* last,
  const Contribution& who, SphMapSums& sums)
{
  const double inv = 1.0 / h;
  int base[3];
  double middle[3];
  for (int d = 0; d < 3; ++d)
  {
    base[d] = int(from[d]);
    // The middle edge on the unit kernel, or beyond (cellDifferences' edge to
    // its rounding: that file fuses the step's multiply-add, this one does not).
    middle[d] = to[d] > from[d] ? (ax[d].lo + (base[d] + 1) * ax[d].step - p[d]) * inv : 1.0;
  }
  alignas(kCacheLine) double values[8];
  factors.twoCellVoxels(middle, m, values);
  const std::size_t nx = std::size_t(ax[0].cells), ny = std::size_t(ax[1].cells);
  for (int k = first[2]; k <= last[2]; ++k)
    for (int j = first[1]; j <= last[1]; ++j)
      for (int i = first[0]; i <= last[0]; ++i)
      {
        const double v = values[((k - base[2]) * 2 + j - base[1]) * 2 + i - base[0]];
        const std::size_t cell = (std::size_t(k) * ny + std::size_t(j)) * nx + std::size_t(i);
        if (who.fields->empty())
          sums.mass[cell] += v;
        else
          who.add(sums, cell, v, v);
      }
}

// The kernel of a particle at (x, y, z) over the voxels of slabs [k0, k1)
// (cloned: its spans' six floors are then an instruction each).
JZ_SPH_CLONES void depositVoxels(const SphVoxelFactors& factors, const GridAxis* ax,
  const double* p, double h, double m, int k0, int k1, const Contribution& who, SphMapSums& sums,
  Scratch& scratch)
{
  int first[3], last[3];
  double from[3], to[3];
  for (int d = 0; d < 3; ++d)
  {
    ax[d].cellRange(p[d], h, from[d], to[d]);
    if (!clipCells(from[d], to[d], d == 2 ? k0 : 0, d == 2 ? k1 : ax[d].cells, first[d], last[d]))
      return;
  }
  const std::size_t nx = std::size_t(ax[0].cells), ny = std::size_t(ax[1].cells);
  if (h == 0)
  {
    who.add(sums, (std::size_t(first[2]) * ny + first[1]) * nx + first[0], m, m);
    return;
  }
  if (to[0] - from[0] <= 1 && to[1] - from[1] <= 1 && to[2] - from[2] <= 1)
    return depositTwoCellVoxels(factors, ax, p, h, m, from, to, first, last, who, sums);
  depositVoxelFactors(factors, ax, p, h, m, first, last, who, sums, scratch);
}

// What the deposition reads of a particle.
struct MapParticle
{
  double x[3], h, m;
  std::size_t input;
};

// The particles of a map in rank order, packed (fresh memory costs its page
// faults): a projection's as 4 values (its place on the image u, v, h, m;
// its depth is not kept), the others' as 5 (x, y, z, h, m); their input
// indices only where asked.
class RankedParticles
{
public:
  RankedParticles(bool projection, int u, int v, int depth)
    : projection_(projection)
    , u_(u)
    , v_(v)
    , depth_(depth)
    , stride_(projection ? 4 : 5)
  {
  }

  void allocate(std::size_t n, bool indexed)
  {
    values_.reset(new double[n * stride_]); // every rank written by put
    if (indexed)
      inputs_.reset(new Index[n]);
  }

  void put(std::size_t r, const MapParticle& p)
  {
    double* to = values_.get() + r * stride_;
    if (projection_)
      to[0] = p.x[u_], to[1] = p.x[v_], to[2] = p.h, to[3] = p.m;
    else
      to[0] = p.x[0], to[1] = p.x[1], to[2] = p.x[2], to[3] = p.h, to[4] = p.m;
    if (inputs_)
      inputs_[r] = Index(p.input);
  }

  // Particle r (a projection's depth 0, its input 0 where not kept).
  MapParticle get(std::size_t r) const
  {
    const double* from = values_.get() + r * stride_;
    MapParticle p;
    p.input = inputs_ ? inputs_[r] : 0;
    if (projection_)
    {
      p.x[u_] = from[0], p.x[v_] = from[1], p.x[depth_] = 0, p.h = from[2], p.m = from[3];
      return p;
    }
    p.x[0] = from[0], p.x[1] = from[1], p.x[2] = from[2], p.h = from[3], p.m = from[4];
    return p;
  }

private:
  bool projection_;
  int u_, v_, depth_;
  std::size_t stride_;
  std::unique_ptr<double[]> values_;
  std::unique_ptr<Index[]> inputs_;
};

// The strips in decreasing order of their particles, the order the threads
// take them in: the largest first, so that a few wide strips still share
// out evenly (each strip's sums are the same in any order).
std::vector<int> stripsByLoad(const SphStrips& strips)
{
  std::vector<int> order(std::size_t(strips.numStrips()));
  std::vector<std::size_t> load(order.size());
  for (int s = 0; s < strips.numStrips(); ++s)
  {
    order[std::size_t(s)] = s;
    load[std::size_t(s)] =
      std::size_t(strips.end(s) - strips.begin(s)) + strips.endOwn(s) - strips.firstOwn(s);
  }
  std::stable_sort(order.begin(), order.end(),
    [&](int a, int b) { return load[std::size_t(a)] > load[std::size_t(b)]; });
  return order;
}

// Whether an image of a particle at x along the slice normal lies within h
// of the plane.
bool reachesPlane(double x, double h, double plane, double period)
{
  // Most particles lie far from the plane: a cheap test first (within one
  // period of it, the nearest image), its margin beyond the rounding.
  if (period > 0 && h < 0.25 * period)
  {
    const double d = std::fabs(x - plane);
    const double nearest = d > 0.5 * period ? std::fabs(d - period) : d;
    if (d < 1.5 * period && nearest > h + 1e-14 * (d + period))
      return false;
  }
  const ImageShifts sa(x, h, plane, plane, period);
  for (int k = sa.first; k <= sa.last; ++k)
    if (std::fabs(x + k * period - plane) < h)
      return true;
  return false;
}

template <class T>
void depositStrips(const SphParticles<T>& P, const SphGrid& grid, const double* period,
  SphMapSums& sums, const RunControl& control, RunInfo& info)
{
  StageTimer listing(&info, "strip lists");
  const bool volume = grid.kind == SphMapKind::Volume;
  const int a = volume ? 2 : grid.axis, ud = volume ? 0 : (a + 1) % 3, vd = volume ? 1 : (a + 2) % 3;
  GridAxis ax[3];
  ax[0] = makeAxis(grid, ud, grid.resolution[0], period[ud]);
  ax[1] = makeAxis(grid, vd, grid.resolution[1], period[vd]);
  ax[2] = makeAxis(grid, a, volume ? grid.resolution[2] : 1, period[a]);
  const GridAxis &u = ax[0], &v = ax[1], &w = ax[2];
  const GridAxis& stripAxis = volume ? w : v;
  auto position = [&](std::size_t i, int d) { return double(P.points[3 * i + std::size_t(d)]); };
  auto particleOf = [&](std::size_t i)
  {
    return MapParticle{ { position(i, 0), position(i, 1), position(i, 2) }, P.support[i],
      P.masses ? P.masses[i] : 1.0, i };
  };

  // A slice reaches few particles: they are picked first (in input order),
  // so that only they are listed, from their copies rather than from all
  // particles' scattered arrays.
  const bool slice = grid.kind == SphMapKind::Slice;
  const bool projection = grid.kind == SphMapKind::Projection;
  std::vector<MapParticle> picked;
  StageTimer picking(&info, "slice: particles reaching it");
  if (slice)
    picked = pickInOrder<MapParticle>(P.numPoints,
      [&](std::size_t i, MapParticle& particle)
      {
        const double h = P.support[i];
        if (!(h > 0 && reachesPlane(position(i, a), h, grid.slicePosition, period[a])))
          return false;
        particle = particleOf(i);
        return true;
      });
  picking.stop();
  auto xOf = [&](std::size_t k, int d) { return slice ? picked[k].x[d] : position(k, d); };
  auto hOf = [&](std::size_t k) { return slice ? picked[k].h : P.support[k]; };

  // The particles that reach the map, in rank order, written as the strips
  // rank them (one scattered write each, rather than a scattered read of
  // each of their arrays for each strip they reach); a projection's mass
  // times its images in the depth. Their input indices only where arrays
  // are mapped or a slice reads densities.
  RankedParticles ranked(projection, ud, vd, a);
  auto prepare = [&](std::size_t numRanked)
  { ranked.allocate(numRanked, slice || !P.fields.empty()); };
  auto place = [&](std::size_t k, std::size_t r)
  {
    MapParticle p = slice ? picked[k] : particleOf(k);
    if (projection)
      p.m = p.m * imagesInside(p.x[a], w.lo, w.hi, period[a]);
    ranked.put(r, p);
  };

  // The strips each particle reaches; particles off the map (outside the
  // projected depth, beside the region) in none. The cells of a particle
  // at x (along the stripped axis) that reach the map, a range per image:
  auto stripRanges = [&](double x, double h, auto&& range)
  {
    const ImageShifts ss(x, h, stripAxis.lo, stripAxis.hi, stripAxis.period);
    for (int s = ss.first; s <= ss.last; ++s)
    {
      int first, last;
      if (stripAxis.span(x + s * stripAxis.period, h, 0, stripAxis.cells, first, last))
        range(first, last);
    }
  };
  SphStrips strips;
  const int(&widths)[2] = volume ? kVolumeStripSlabs : slice ? kSliceStripRows : kImageStripRows;
  const int width = stripWidth(stripAxis.cells, widths);
  strips.build(
    slice ? picked.size() : P.numPoints, stripAxis.cells, width,
    [&](std::size_t k, auto&& range)
    {
      const double h = hOf(k);
      if (projection && imagesInside(xOf(k, a), w.lo, w.hi, period[a]) == 0)
        return;
      auto beside = [&](const GridAxis& g)
      {
        const double x = xOf(k, g.dim);
        if (x >= g.lo && x <= g.hi) // its own image meets the map: no division
          return false;
        const ImageShifts s(x, h, g.lo, g.hi, g.period);
        return s.first > s.last;
      };
      if (beside(u) || (volume && beside(v)))
        return;
      stripRanges(xOf(k, stripAxis.dim), h, range);
    },
    prepare, place,
    [&](std::size_t r, auto&& range)
    {
      const MapParticle p = ranked.get(r); // the same values as its input's
      stripRanges(p.x[stripAxis.dim], p.h, range);
    });
  reportProgress(control, 0.2);
  listing.stop();
  StageTimer depositing(&info, "deposition");
  const SphPixelFactors* pixelFactors = nullptr;
  const SphColumnCentres* centres = nullptr;
  const SphVoxelFactors* factors = volume ? &SphVoxelFactors::get(P.kernel) : nullptr;
  if (grid.kind == SphMapKind::Projection)
  {
    pixelFactors = &SphPixelFactors::get(P.kernel);
    centres = &SphColumnCentres::get(P.kernel);
  }
  const int numStrips = strips.numStrips(), stripCells = strips.width();
  const std::vector<int> byLoad = stripsByLoad(strips);

#pragma omp parallel
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int next = 0; next < numStrips; ++next)
    {
      const int strip = byLoad[std::size_t(next)];
      const int c0 = strip * stripCells, c1 = std::min(stripAxis.cells, c0 + stripCells);
      const double lo = stripAxis.edge(c0), hi = stripAxis.edge(c1);
      auto deposit = [&](const MapParticle& particle)
      {
        const std::size_t i = particle.input;
        const double* x = particle.x;
        const double h = particle.h, m = particle.m;
        const Contribution who{ &P.fields, i };
        if (projection)
        {
          const ImageShifts su(x[ud], h, u.lo, u.hi, period[ud]);
          const ImageShifts sv(x[vd], h, lo, hi, period[vd]);
          for (int ku = su.first; ku <= su.last; ++ku)
            for (int kv = sv.first; kv <= sv.last; ++kv)
              depositColumn(*pixelFactors, *centres, u, v, x[ud] + ku * period[ud],
                x[vd] + kv * period[vd], h, m, c0, c1, who, sums, scratch);
        }
        else if (grid.kind == SphMapKind::Slice)
        {
          const double rho = P.density ? P.density[i] : 0.0;
          const double fieldScale = rho > 0 ? m / rho : 0.0;
          const ImageShifts sa(x[a], h, grid.slicePosition, grid.slicePosition, period[a]);
          for (int ka = sa.first; ka <= sa.last; ++ka)
          {
            const double dz = x[a] + ka * period[a] - grid.slicePosition;
            if (!(std::fabs(dz) < h))
              continue;
            const ImageShifts su(x[ud], h, u.lo, u.hi, period[ud]);
            const ImageShifts sv(x[vd], h, lo, hi, period[vd]);
            for (int ku = su.first; ku <= su.last; ++ku)
              for (int kv = sv.first; kv <= sv.last; ++kv)
                depositSlice(P.kernel, u, v, x[ud] + ku * period[ud], x[vd] + kv * period[vd], dz,
                  h, m, fieldScale, c0, c1, who, sums, scratch);
          }
        }
        else
        {
          const ImageShifts sh[3] = { ImageShifts(x[0], h, u.lo, u.hi, period[0]),
            ImageShifts(x[1], h, v.lo, v.hi, period[1]), ImageShifts(x[2], h, lo, hi, period[2]) };
          for (int kx = sh[0].first; kx <= sh[0].last; ++kx)
            for (int ky = sh[1].first; ky <= sh[1].last; ++ky)
              for (int kz = sh[2].first; kz <= sh[2].last; ++kz)
              {
                const double p[3] = { x[0] + kx * period[0], x[1] + ky * period[1],
                  x[2] + kz * period[2] };
                depositVoxels(*factors, ax, p, h, m, c0, c1, who, sums, scratch);
              }
        }
      };
      for (const Index* e = strips.begin(strip); e != strips.end(strip); ++e)
        deposit(ranked.get(*e));
      for (std::size_t r = strips.firstOwn(strip); r < strips.endOwn(strip); ++r)
        deposit(ranked.get(r));
    }
  }
  depositing.stop();
  info.counters.emplace_back("strip entries", double(strips.numEntries()));
  reportProgress(control, 1.0);
}
} // namespace

void SphCellValues::assign(std::size_t n, double value)
{
  if (borrowed_ && n != borrowedSize_)
    throw Error("A map of " + std::to_string(n) + " cells into memory for " +
      std::to_string(borrowedSize_) + ".");
  if (!borrowed_)
    own_.resize(n);
  double* values = data();
  const std::int64_t count = std::int64_t(n);
#pragma omp parallel for schedule(static) if (n >= kSphParallelMin)
  for (std::int64_t i = 0; i < count; ++i)
    values[i] = value;
}

std::size_t SphGrid::numCells() const
{
  const std::size_t n = std::size_t(resolution[0]) * std::size_t(resolution[1]);
  return kind == SphMapKind::Volume ? n * std::size_t(resolution[2]) : n;
}

double SphGrid::cellMeasure() const
{
  if (kind == SphMapKind::Slice)
    return 1.0;
  if (kind == SphMapKind::Volume)
    return (region[1] - region[0]) / resolution[0] * ((region[3] - region[2]) / resolution[1]) *
      ((region[5] - region[4]) / resolution[2]);
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  return (region[2 * u + 1] - region[2 * u]) / resolution[0] *
    ((region[2 * v + 1] - region[2 * v]) / resolution[1]);
}

std::string sphGridError(const SphGrid& grid, int fieldComponents)
{
  const bool volume = grid.kind == SphMapKind::Volume;
  if (!volume && (grid.axis < 0 || grid.axis > 2))
    return "Axis must be X, Y or Z.";
  const int dims = volume ? 3 : 2;
  double cells = 1;
  for (int d = 0; d < dims; ++d)
  {
    if (grid.resolution[d] < 1)
      return "Resolution must be at least 1 on every axis (got " +
        std::to_string(grid.resolution[d]) + ").";
    cells *= grid.resolution[d];
  }
  if (cells > kMaxCells)
    return "Resolution asks for more than 2^31 cells.";
  static const char* names[3] = { "x", "y", "z" };
  for (int d = 0; d < 3; ++d)
  {
    if (grid.kind == SphMapKind::Slice && d == grid.axis)
      continue;
    const double lo = grid.region[2 * d], hi = grid.region[2 * d + 1];
    if (!std::isfinite(lo) || !std::isfinite(hi))
      return std::string("Region is not finite on ") + names[d] + ".";
    if (!(lo < hi))
      return std::string("Region is inverted or empty on ") + names[d] + " (min " +
        std::to_string(lo) + " >= max " + std::to_string(hi) + ").";
  }
  if (grid.kind == SphMapKind::Slice && !std::isfinite(grid.slicePosition))
    return "SlicePosition is not finite.";
  // The sums, then the caller's output arrays: two doubles per cell and value.
  const double values = 1.0 + fieldComponents;
  return memoryError(2 * sizeof(double) * values * cells,
    "A map of " + std::to_string(std::size_t(cells)) + " cells" +
      (fieldComponents > 0 ? " of " + std::to_string(fieldComponents + 1) + " values" : ""),
    "lower the resolution or map fewer arrays.");
}

std::string sphSupportError(const double* support, std::size_t n, bool periodic,
  const double* boxLo, const double* boxHi, const std::string& name)
{
  double side = kInfinity;
  for (int d = 0; periodic && d < 3; ++d)
    side = std::min(side, boxHi[d] - boxLo[d]);
  // Bad: negative, NaN, infinite, or wider than the box (side is infinite
  // when not periodic).
  const std::size_t i = firstIndexWhere(n,
    [&](std::size_t j)
    { return !(support[j] >= 0) || !(support[j] < kInfinity) || support[j] > side; });
  if (i == n)
    return "";
  const double h = support[i];
  if (!(h >= 0) || !std::isfinite(h))
    return name + " of point " + std::to_string(i) + " is negative or not finite (" +
      std::to_string(h) + ").";
  return name + " of point " + std::to_string(i) + " (" + std::to_string(h) +
    ") exceeds the periodic box's shortest side (" + std::to_string(side) +
    "): a kernel wider than the box is not supported.";
}

template <class T>
std::string sphParticlesError(const SphParticles<T>& P, const SphGrid& grid)
{
  int fieldComponents = 0;
  for (const SphMapField& f : P.fields)
    fieldComponents += f.components;
  // The points before the grid: a default region is the points' bounds,
  // and a non-finite point must be named as such, not as a non-finite region.
  std::string e = pointCountError(P.numPoints);
  if (e.empty())
    e = periodicBoxError(P.periodic, P.boxLo, P.boxHi);
  if (e.empty())
    e = nonFiniteCoordinateError(P.points, P.numPoints, "point");
  if (e.empty())
    e = sphGridError(grid, fieldComponents);
  if (e.empty() && P.masses)
    e = nonFiniteValueError(P.masses, P.numPoints, 1, "MassArray");
  if (e.empty() && P.numPoints > 0 && !P.support)
    return "No smoothing lengths.";
  if (e.empty())
    e = sphSupportError(P.support, P.numPoints, P.periodic, P.boxLo, P.boxHi, "SmoothingLength");
  for (std::size_t f = 0; e.empty() && f < P.fields.size(); ++f)
    e = nonFiniteValueError(P.fields[f].values, P.numPoints, P.fields[f].components,
      "PointArrays entry " + std::to_string(f));
  if (e.empty() && grid.kind == SphMapKind::Slice && !P.fields.empty())
  {
    if (P.numPoints > 0 && !P.density)
      return "No densities for the slice's arrays.";
    const std::size_t i =
      firstIndexWhere(P.numPoints, [&](std::size_t j) { return !(P.density[j] >= 0); });
    if (i < P.numPoints)
      return "Density of point " + std::to_string(i) + " is negative or NaN.";
  }
  return e;
}

template <class T>
RunInfo depositSphMap(const SphParticles<T>& P, const SphGrid& grid, SphMapSums& sums,
  const RunControl& control)
{
  return depositSphMap(P, grid, sums, Backend::CPU, control);
}

template <class T>
RunInfo depositSphMap(const SphParticles<T>& P, const SphGrid& grid, SphMapSums& sums,
  Backend backend, const RunControl& control)
{
  const std::string error = sphParticlesError(P, grid);
  if (!error.empty())
    throw Error(error);
  RunInfo info;
  const std::size_t cells = grid.numCells();
  auto zero = [&]
  {
    sums.mass.assign(cells, 0.0);
    sums.fields.resize(P.fields.size());
    for (std::size_t f = 0; f < P.fields.size(); ++f)
      sums.fields[f].assign(cells * std::size_t(P.fields[f].components), 0.0);
  };
  zero();
  if (grid.kind != SphMapKind::Projection)
    backend = Backend::CPU;
  info.backend = resolveBackend(backend);
  if (P.numPoints == 0)
    return info;
  const int threadsBefore = omp_get_max_threads();
  if (control.numThreads > 0)
    omp_set_num_threads(control.numThreads);
  struct RestoreThreads
  {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{ threadsBefore };
  const Periodicity per = Periodicity::of(P.periodic, P.boxLo, P.boxHi);
  runOnBackend(
    backend, info, [&] { depositProjectionCuda(P, grid, per.length, sums, info, control); }, zero,
    [&] { depositStrips(P, grid, per.length, sums, control, info); });
  return info;
}

void finishSphMap(const SphGrid& grid, SphMapSums& sums)
{
  if (grid.kind == SphMapKind::Slice)
    return;
  const double measure = grid.cellMeasure();
  const std::int64_t cells = std::int64_t(sums.mass.size());
  for (std::vector<double>& field : sums.fields)
  {
    const std::size_t comps = cells ? field.size() / std::size_t(cells) : 0;
#pragma omp parallel for schedule(static) if (cells >= std::int64_t(kSphParallelMin))
    for (std::int64_t c = 0; c < cells; ++c)
      for (std::size_t k = 0; k < comps; ++k)
      {
        double& value = field[std::size_t(c) * comps + k];
        value = sums.mass[std::size_t(c)] != 0 ? value / sums.mass[std::size_t(c)] : 0.0;
      }
  }
  double* mass = sums.mass.data();
#pragma omp parallel for schedule(static) if (cells >= std::int64_t(kSphParallelMin))
  for (std::int64_t c = 0; c < cells; ++c)
    mass[c] /= measure;
}

template <class T>
void sphGatherDensity(const T* sources, std::size_t numSources, const double* sourceMasses,
  const T* queries, std::size_t numQueries, const double* querySupport, SphKernel kernel,
  bool periodic, const double* boxLo, const double* boxHi, double* density,
  const RunControl& control)
{
  if (!queries)
  {
    queries = sources;
    numQueries = numSources;
  }
  if (numQueries == 0)
    return;
  std::vector<double> zero(numSources, 0.0);
  SupportTree<T> st;
  st.build(sources, numSources, zero.data(), periodic, boxLo, boxHi, control);
  const SortedPoints<T>& sp = st.tree.sources;
  const std::int64_t n = std::int64_t(numQueries);
#pragma omp parallel
  {
    DescentStack stack;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t q = 0; q < n; ++q)
    {
      const double h = querySupport[q];
      if (!(h > 0))
      {
        density[q] = kInfinity; // all within a zero support: a point mass
        continue;
      }
      double x[3];
      for (int d = 0; d < 3; ++d)
        x[d] = double(queries[3 * q + d]);
      ImageShifts sh[3] = { ImageShifts(x[0], h, boxLo[0], boxHi[0], st.period[0]),
        ImageShifts(x[1], h, boxLo[1], boxHi[1], st.period[1]),
        ImageShifts(x[2], h, boxLo[2], boxHi[2], st.period[2]) };
      if (!periodic)
        for (auto& s : sh)
          s.first = s.last = 0;
      double rho = 0;
      const bool grow[3] = { false, false, false };
      const double noPeriods[3] = { 0, 0, 0 };
      for (int kx = sh[0].first; kx <= sh[0].last; ++kx)
        for (int ky = sh[1].first; ky <= sh[1].last; ++ky)
          for (int kz = sh[2].first; kz <= sh[2].last; ++kz)
          {
            const double c[3] = { x[0] + kx * st.period[0], x[1] + ky * st.period[1],
              x[2] + kz * st.period[2] };
            const double lo[3] = { c[0] - h, c[1] - h, c[2] - h };
            const double hi[3] = { c[0] + h, c[1] + h, c[2] + h };
            // Each image is explicit here: the tree's test must not wrap again.
            st.forPointsReaching(lo, hi, grow, stack,
              [&](Index s)
              {
                const double dx = double(sp.x[s]) - c[0], dy = double(sp.y[s]) - c[1],
                             dz = double(sp.z[s]) - c[2];
                const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
                if (r < h)
                  rho += (sourceMasses ? sourceMasses[sp.inputIndex[s]] : 1.0) *
                    sphKernelW(kernel, r, h);
              },
              noPeriods);
          }
      density[q] = rho;
    }
  }
}

void reduceSphMapSums(Communicator& comm, SphMapSums& sums)
{
  sumInRankOrder(comm, sums.mass.data(), sums.mass.size());
  for (std::vector<double>& f : sums.fields)
    sumInRankOrder(comm, f);
}

template std::string sphParticlesError<float>(const SphParticles<float>&, const SphGrid&);
template std::string sphParticlesError<double>(const SphParticles<double>&, const SphGrid&);
template RunInfo depositSphMap<float>(
  const SphParticles<float>&, const SphGrid&, SphMapSums&, const RunControl&);
template RunInfo depositSphMap<double>(
  const SphParticles<double>&, const SphGrid&, SphMapSums&, const RunControl&);
template RunInfo depositSphMap<float>(
  const SphParticles<float>&, const SphGrid&, SphMapSums&, Backend, const RunControl&);
template RunInfo depositSphMap<double>(
  const SphParticles<double>&, const SphGrid&, SphMapSums&, Backend, const RunControl&);
template void sphGatherDensity<float>(const float*, std::size_t, const double*, const float*,
  std::size_t, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
template void sphGatherDensity<double>(const double*, std::size_t, const double*, const double*,
  std::size_t, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
} // namespace jz
