// SPH maps of a particle set (doc/filters/SPHProjection.md, SPHSlice.md,
// SPHVolume.md): each particle's kernel, of support radius h_j, deposited
// onto a pixel or voxel grid.
//
// - Projection: the projected (column) kernel integrated exactly over each
//   pixel (tabulated cumulative integrals, within 1e-6 m_j): surface density
//   and SurfaceDensity-weighted line-of-sight means.
// - Slice: the SPH estimate at the pixel centres of a plane.
// - Volume: the kernel integrated over each voxel (within 1e-6 m_j): density
//   and mass-weighted voxel means.
//
// The deposition runs in two steps so that ranks can reduce their partial
// maps in between: depositSphMap writes sums, finishSphMap divides them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "Backend.h"
#include "Config.h"
#include "DensityKernels.h"
#include "HugePages.h"

namespace jz
{
enum class SphMapKind
{
  Projection,
  Slice,
  Volume
};

// The grid. Regions are half-open, [min, max) on each axis. A projection's
// or slice's image has axes u = (axis + 1) % 3 and v = (axis + 2) % 3;
// pixel (iu, iv) is at index iv * resolution[0] + iu, its centre at
// region_u.min + (iu + 1/2) du. A volume's voxel (ix, iy, iz) is at
// (iz * resolution[1] + iy) * resolution[0] + ix.
struct SphGrid
{
  SphMapKind kind = SphMapKind::Projection;
  int axis = 2;                                // line of sight / slice normal
  double region[6] = { 0, 1, 0, 1, 0, 1 };     // xmin xmax ymin ymax zmin zmax
  int resolution[3] = { 512, 512, 1 };         // images use [0] and [1]
  double slicePosition = 0.5;                  // the slice plane's coordinate along axis

  std::size_t numCells() const;
  // Pixel area or voxel volume (1 for a slice: its values are samples).
  double cellMeasure() const;
};

// A mapped point array: `components` doubles per particle, input order
// (SphSmooth.h's SphField, with its name for messages, is another type).
struct SphMapField
{
  const double* values = nullptr;
  int components = 1;
};

template <class T>
struct SphParticles
{
  const T* points = nullptr; // interleaved xyz
  std::size_t numPoints = 0;
  const double* masses = nullptr;  // nullptr: unit mass
  const double* support = nullptr; // h_j, the kernel's support radius (>= 0, finite)
  const double* density = nullptr; // rho_j; needed by a slice with fields
  std::vector<SphMapField> fields;
  SphKernel kernel = SphKernel::CubicSpline;
  // Periodic box [boxLo, boxHi): every image of a particle within its
  // support contributes.
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
};

// A map's values, one per cell (x fastest): its own, or the caller's memory
// (borrow: the output array it hands on), so that a map is neither copied
// nor held twice. A copy of a borrowed one shares the caller's memory.
class SphCellValues
{
public:
  // The caller's n values from now on (assign replaces what they hold).
  void borrow(double* values, std::size_t n)
  {
    own_.clear();
    borrowed_ = values;
    borrowedSize_ = n;
  }
  // n values (a borrowed memory's own size: Error otherwise), each `value`,
  // written by all threads: fresh pages are then touched in parallel, not
  // zero-filled by one thread first.
  void assign(std::size_t n, double value);

  double* data() { return borrowed_ ? borrowed_ : own_.data(); }
  const double* data() const { return borrowed_ ? borrowed_ : own_.data(); }
  std::size_t size() const { return borrowed_ ? borrowedSize_ : own_.size(); }
  bool empty() const { return size() == 0; }
  double& operator[](std::size_t i) { return data()[i]; }
  const double& operator[](std::size_t i) const { return data()[i]; }
  double* begin() { return data(); }
  double* end() { return data() + size(); }
  const double* begin() const { return data(); }
  const double* end() const { return data() + size(); }
  bool operator==(const SphCellValues& other) const
  {
    return size() == other.size() && std::equal(begin(), end(), other.begin());
  }

private:
  UninitialisedVector<double> own_;
  double* borrowed_ = nullptr;
  std::size_t borrowedSize_ = 0;
};

// Per cell: `mass` (projection and volume: the mass of the kernels inside the
// cell; slice: sum m_j W) and per field the matching weighted sums
// (projection and volume: mass-weighted; slice: sum m_j / rho_j A_j W),
// interleaved by component.
struct SphMapSums
{
  SphCellValues mass;
  std::vector<std::vector<double>> fields;
};

// Why the grid or the particles cannot be mapped (resolution below 1, an
// inverted or empty or non-finite region, axis outside 0..2, a map and its
// copy in the caller's output larger than the machine's memory, a negative
// or non-finite h, a non-finite density, slice fields without densities),
// or "". fieldComponents: the mapped arrays' components in all, as far as
// the caller knows them yet (sphParticlesError counts them all).
std::string sphGridError(const SphGrid& grid, int fieldComponents = 0);
template <class T>
std::string sphParticlesError(const SphParticles<T>& particles, const SphGrid& grid);
// Why support radii cannot be used, or "": a negative or non-finite radius,
// or, in a periodic box, one beyond the box's shortest side, whose images
// would be counted by the million. `name` names the radii in the message.
std::string sphSupportError(const double* support, std::size_t n, bool periodic,
  const double* boxLo, const double* boxHi, const std::string& name);

// Deposits the particles' sums into `sums` (resized and zeroed). Pixels are
// shared out in strips; each particle is listed in the strips its support
// reaches (a slice: only those reaching its plane), and each strip takes its
// particles in one fixed order, so the sums do not depend on the number of
// threads. Throws Error on bad input.
template <class T>
RunInfo depositSphMap(const SphParticles<T>& particles, const SphGrid& grid, SphMapSums& sums,
  const RunControl& control = {});
// The same on `backend`: a projection on the GPU (Auto: when one is usable)
// adds the same pixel integrals atomically, so its sums equal the CPU's up to
// summation order; slices and volumes deposit on the CPU whatever the
// backend. RunInfo::backend says where it ran.
template <class T>
RunInfo depositSphMap(const SphParticles<T>& particles, const SphGrid& grid, SphMapSums& sums,
  Backend backend, const RunControl& control = {});

// Turns sums (reduced over ranks, or one rank's) into the map in place:
// projection: mass / pixel area = SurfaceDensity, fields / mass; slice:
// unchanged (mass = Density); volume: mass / voxel volume = Density, fields /
// mass. A field is 0 where the mass is 0.
void finishSphMap(const SphGrid& grid, SphMapSums& sums);

// The sums of all ranks added in rank order (the same on every rank, for
// any partition up to summation order), before finishSphMap.
class Communicator;
void reduceSphMapSums(Communicator& comm, SphMapSums& sums);

// The per-particle inputs the maps need when none are given:
// support radii = the distance to the k-th nearest particle (jz/Knn.h), and
// densities rho_j = sum_k m_k W(|x_j - x_k|, h_j) over all sources k within
// h_j (periodic: every image). queries (nullptr: the sources) are the
// particles whose values are wanted, with their own support radii.
template <class T>
void sphGatherDensity(const T* sources, std::size_t numSources, const double* sourceMasses,
  const T* queries, std::size_t numQueries, const double* querySupport, SphKernel kernel,
  bool periodic, const double* boxLo, const double* boxHi, double* density,
  const RunControl& control = {});

// sphGatherDensity of this rank's particles (queries and sources) with the
// particles of all ranks as sources; each rank receives only the others'
// particles within reach of its own. Collective.
template <class T>
void sphGatherDensityDistributed(Communicator& comm, const T* points, std::size_t numPoints,
  const double* masses, const double* support, SphKernel kernel, bool periodic,
  const double* boxLo, const double* boxHi, double* density, const RunControl& control = {});

extern template std::string sphParticlesError<float>(const SphParticles<float>&, const SphGrid&);
extern template std::string sphParticlesError<double>(const SphParticles<double>&, const SphGrid&);
extern template RunInfo depositSphMap<float>(
  const SphParticles<float>&, const SphGrid&, SphMapSums&, const RunControl&);
extern template RunInfo depositSphMap<double>(
  const SphParticles<double>&, const SphGrid&, SphMapSums&, const RunControl&);
extern template RunInfo depositSphMap<float>(
  const SphParticles<float>&, const SphGrid&, SphMapSums&, Backend, const RunControl&);
extern template RunInfo depositSphMap<double>(
  const SphParticles<double>&, const SphGrid&, SphMapSums&, Backend, const RunControl&);
extern template void sphGatherDensity<float>(const float*, std::size_t, const double*,
  const float*, std::size_t, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
extern template void sphGatherDensity<double>(const double*, std::size_t, const double*,
  const double*, std::size_t, const double*, SphKernel, bool, const double*, const double*,
  double*, const RunControl&);
extern template void sphGatherDensityDistributed<float>(Communicator&, const float*, std::size_t,
  const double*, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
extern template void sphGatherDensityDistributed<double>(Communicator&, const double*,
  std::size_t, const double*, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
} // namespace jz
