// jztree.sph_projection, sph_slice and sph_volume: depositSphMap then
// finishSphMap (jz/SphMaps.h), driven as vtkJZSPHMapAlgorithm drives them:
// h from the kNN when not given, rho (slice arrays) from the kNN's cubic
// spline density or sphGatherDensity, the region from the box or the points'
// bounds, and the ranks' partial sums added in rank order before finishing.
#include "Bindings.h"

#include "jz/Distributed.h"
#include "jz/Knn.h"
#include "jz/ParameterRanges.h"
#include "jz/SphMaps.h"
#include "jz/Validate.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace jzpy
{
namespace
{
// The arguments every map shares.
struct MapArgs
{
  py::object points, masses, h;
  int k = 32;
  py::object region, box;
  std::string kernel = "cubic";
  double hScale = 1;
  std::string device = "auto";
  py::dict arrays; // slice only: name -> (N,) or (N, c)
};

// The points' bounds over all ranks (empty ranks contribute nothing).
template <class T>
void globalBounds(const CArray<T>& p, jz::Communicator& comm, double region[6])
{
  double lo[3] = { jz::kInfinity, jz::kInfinity, jz::kInfinity };
  double hi[3] = { -jz::kInfinity, -jz::kInfinity, -jz::kInfinity };
  const T* x = p.data();
  for (py::ssize_t i = 0; i < p.shape(0); ++i)
    for (int d = 0; d < 3; ++d)
    {
      lo[d] = std::min(lo[d], double(x[3 * i + d]));
      hi[d] = std::max(hi[d], double(x[3 * i + d]));
    }
  comm.allReduceMin(lo, 3);
  comm.allReduceMax(hi, 3);
  for (int d = 0; d < 3; ++d)
  {
    region[2 * d] = lo[d];
    region[2 * d + 1] = hi[d];
  }
}

void parseRegion(py::handle region, double out[6])
{
  const std::vector<double> r = py::cast<std::vector<double>>(region);
  if (r.size() != 6)
    throw py::value_error("region must be (xmin, xmax, ymin, ymax, zmin, zmax), got " +
      std::to_string(r.size()) + " numbers");
  std::copy(r.begin(), r.end(), out);
}

// An array for the map's cells: [iy, ix] (+ component) or [iz, iy, ix],
// the cells' own order.
py::array_t<double> cellsArray(const jz::SphGrid& grid, int components)
{
  std::vector<py::ssize_t> shape;
  if (grid.kind == jz::SphMapKind::Volume)
    shape.push_back(grid.resolution[2]);
  shape.push_back(grid.resolution[1]);
  shape.push_back(grid.resolution[0]);
  if (components > 1)
    shape.push_back(components);
  return py::array_t<double>(shape);
}

// The map's cells as a numpy array.
py::array cellsArray(const jz::SphGrid& grid, const std::vector<double>& values, int components)
{
  py::array_t<double> a = cellsArray(grid, components);
  std::copy(values.begin(), values.end(), a.mutable_data());
  return std::move(a);
}

// The support radii h_j (given times h_scale, or the k-th neighbour distance
// of all ranks' points) and, when wanted, the densities rho_j, as the filter.
template <class T>
void supportAndDensity(const Comm& comm, const CArray<T>& p, const CArray<double>& masses,
  const CArray<double>& givenH, const MapArgs& a, jz::SphKernel kernel, const Box& box,
  jz::Backend backend, bool needDensity, std::int64_t total, std::vector<double>& h,
  std::vector<double>& rho)
{
  const std::size_t n = static_cast<std::size_t>(p.shape(0));
  h.assign(n, 0.0);
  std::vector<T> knnRho;
  const bool computeH = a.h.is_none(); // not the size: a rank may have no points
  if (computeH)
  {
    comm.agree(jz::neighbourCountError(a.k, total, inputNames()));
    const std::vector<jz::GlobalId> ids = comm.globalIds(n);
    jz::KnnProblem<T> problem;
    problem.sources = dataOrNull(p);
    problem.numSources = n;
    problem.sourceMasses = dataOrNull(masses);
    problem.sourceIds = ids.empty() ? nullptr : ids.data();
    problem.k = a.k;
    box.applyTo(problem);
    comm.agree(jz::problemError(problem, jz::ProblemExtent::RankPiece, inputNames()));
    std::vector<T> hT(n);
    knnRho.resize(n);
    jz::KnnResults<T> results;
    results.smoothingLength = hT.data();
    results.density = knnRho.data();
    runKernel([&](const jz::RunControl& control)
      { jz::computeKnnDistributed<T>(problem, results, *comm, backend, control); });
    std::copy(hT.begin(), hT.end(), h.begin());
  }
  else
  {
    for (std::size_t i = 0; i < n; ++i)
      h[i] = givenH.data()[i] * a.hScale;
    comm.agree(jz::sphSupportError(h.data(), n, box.periodic, box.lo, box.hi, "h (times h_scale)"));
  }
  if (!needDensity)
    return;
  rho.assign(n, 0.0);
  if (computeH && kernel == jz::SphKernel::CubicSpline)
  {
    std::copy(knnRho.begin(), knnRho.end(), rho.begin()); // density()'s "sph"
    return;
  }
  // All ranks' particles within reach are sources of each rank's densities.
  runKernel(
    [&](const jz::RunControl& control)
    {
      jz::sphGatherDensityDistributed<T>(*comm, dataOrNull(p), n,
        dataOrNull(masses), h.data(), kernel, box.periodic, box.lo,
        box.hi, rho.data(), control);
    });
}

// One map of all ranks' points, whole on every rank: the density image
// first, then one per array of `a.arrays` (in the dict's order).
template <class T>
std::vector<py::array> runMap(const Comm& comm, jz::SphGrid grid, const MapArgs& a,
  bool regionOnAxisIgnored)
{
  jz::Backend backend = jz::Backend::Auto;
  jz::SphKernel kernel = jz::SphKernel::CubicSpline;
  CArray<T> p;
  CArray<double> masses, givenH;
  Box box;
  std::vector<std::string> names;
  std::vector<CArray<double>> fields;
  std::vector<int> components;
  const bool regionGiven = !a.region.is_none();
  comm.local(
    [&]
    {
      backend = parseDevice(a.device);
      kernel = parseChoice<jz::SphKernel>(a.kernel,
        { { "cubic", jz::SphKernel::CubicSpline }, { "wendland", jz::SphKernel::WendlandC2 } },
        "kernel");
      p = coordinates<T>(a.points, "points");
      const std::size_t n = static_cast<std::size_t>(p.shape(0));
      masses = pointValues(a.masses, n, 1, "masses");
      if (!a.h.is_none())
        givenH = pointValues(a.h, n, 1, "h");
      box = parseBox(a.box);
      checkRange(jz::ranges::NumberOfNeighbors, a.k, "k");
      checkRange(jz::ranges::SmoothingLengthScale, a.hScale, "h_scale");
      if (regionGiven)
        parseRegion(a.region, grid.region);
      for (auto item : a.arrays)
      {
        const std::string name = py::cast<std::string>(item.first);
        if (name == "density")
          throw py::value_error("arrays may not name an output of the map (density)");
        const py::array values = asArray(item.second, name.c_str());
        const int c = values.ndim() == 2 ? static_cast<int>(values.shape(1)) : 1;
        names.push_back(name);
        components.push_back(c);
        fields.push_back(pointValues(values, n, c, name.c_str()));
      }
    });
  comm.givenOnAllOrNone(!a.h.is_none(), "h");
  const std::int64_t total = comm.total(static_cast<std::int64_t>(p.shape(0)));
  if (!regionGiven)
  {
    if (box.periodic)
    {
      for (int d = 0; d < 3; ++d)
      {
        grid.region[2 * d] = box.lo[d];
        grid.region[2 * d + 1] = box.hi[d];
      }
    }
    else if (total == 0)
    {
      std::vector<py::array> empty;
      const std::vector<py::ssize_t> shape(grid.kind == jz::SphMapKind::Volume ? 3 : 2, 0);
      for (std::size_t f = 0; f <= names.size(); ++f)
        empty.push_back(py::array_t<double>(shape)); // no region and no data
      return empty;
    }
    else
    {
      globalBounds(p, *comm, grid.region);
      // An infinite point makes the bounds infinite: it is named as the
      // point it is, not as a non-finite region (every rank looks: they
      // share the bounds).
      if (!std::all_of(grid.region, grid.region + 6, [](double r) { return std::isfinite(r); }))
        comm.agree(jz::nonFiniteCoordinateError(p.data(), std::size_t(p.shape(0)), "point"));
    }
  }
  if (regionOnAxisIgnored)
  {
    grid.region[2 * grid.axis] = 0;
    grid.region[2 * grid.axis + 1] = 1;
  }
  int fieldComponents = 0;
  for (int c : components)
    fieldComponents += c;
  comm.agree(jz::sphGridError(grid, fieldComponents));

  const bool needDensity = grid.kind == jz::SphMapKind::Slice && !names.empty();
  std::vector<double> h, rho;
  if (total > 0)
    supportAndDensity<T>(
      comm, p, masses, givenH, a, kernel, box, backend, needDensity, total, h, rho);

  jz::SphParticles<T> particles;
  particles.points = dataOrNull(p);
  particles.numPoints = static_cast<std::size_t>(p.shape(0));
  particles.masses = dataOrNull(masses);
  particles.support = h.data();
  particles.density = needDensity ? rho.data() : nullptr;
  for (std::size_t f = 0; f < fields.size(); ++f)
    particles.fields.push_back({ fields[f].data(), components[f] });
  particles.kernel = kernel;
  box.applyTo(particles);
  comm.agree(jz::sphParticlesError(particles, grid));

  // The mass deposited straight into the array returned.
  py::array_t<double> mass = cellsArray(grid, 1);
  jz::SphMapSums sums;
  sums.mass.borrow(mass.mutable_data(), grid.numCells());
  runKernel([&](const jz::RunControl& control)
    { jz::depositSphMap(particles, grid, sums, backend, control); });
  jz::reduceSphMapSums(*comm, sums);
  jz::finishSphMap(grid, sums);

  std::vector<py::array> maps{ std::move(mass) };
  for (std::size_t f = 0; f < names.size(); ++f)
    maps.push_back(cellsArray(grid, sums.fields[f], components[f]));
  return maps;
}

std::vector<py::array> mapInPrecision(
  MapArgs& a, const jz::SphGrid& grid, py::object communicator, bool regionOnAxisIgnored)
{
  const Comm comm = makeComm(communicator);
  return inPrecision(a.points, comm,
    [&](auto precision) { return runMap<decltype(precision)>(comm, grid, a, regionOnAxisIgnored); });
}

void setResolution(jz::SphGrid& grid, const std::vector<int>& resolution, std::size_t count)
{
  if (resolution.size() != count)
    throw py::value_error("resolution must have " + std::to_string(count) + " numbers, got " +
      std::to_string(resolution.size()));
  for (std::size_t d = 0; d < count; ++d)
    grid.resolution[d] = resolution[d];
}

void setAxis(jz::SphGrid& grid, int axis)
{
  checkRange(jz::ranges::SphAxis, axis, "axis");
  grid.axis = axis;
}

py::array sphProjection(py::object points, py::object masses, py::object h, int k, int axis,
  std::vector<int> resolution, py::object region, py::object box, std::string kernel,
  double hScale, const std::string& device, py::object communicator)
{
  jz::SphGrid grid;
  grid.kind = jz::SphMapKind::Projection;
  setAxis(grid, axis);
  setResolution(grid, resolution, 2);
  MapArgs a{ points, masses, h, k, region, box, kernel, hScale, device, py::dict() };
  return mapInPrecision(a, grid, communicator, false)[0];
}

py::dict sphSlice(py::object points, double position, py::object masses, py::object h, int k,
  int axis, std::vector<int> resolution, py::object region, py::object box, std::string kernel,
  double hScale, py::object arrays, const std::string& device, py::object communicator)
{
  jz::SphGrid grid;
  grid.kind = jz::SphMapKind::Slice;
  setAxis(grid, axis);
  setResolution(grid, resolution, 2);
  grid.slicePosition = position;
  MapArgs a{ points, masses, h, k, region, box, kernel, hScale, device,
    arrays.is_none() ? py::dict() : py::dict(arrays) };
  const std::vector<py::array> maps = mapInPrecision(a, grid, communicator, true);
  py::dict out;
  out["density"] = maps[0];
  std::size_t f = 1;
  for (auto item : a.arrays)
    out[item.first] = maps[f++];
  return out;
}

py::array sphVolume(py::object points, py::object masses, py::object h, int k,
  std::vector<int> resolution, py::object region, py::object box, std::string kernel,
  double hScale, const std::string& device, py::object communicator)
{
  jz::SphGrid grid;
  grid.kind = jz::SphMapKind::Volume;
  setResolution(grid, resolution, 3);
  MapArgs a{ points, masses, h, k, region, box, kernel, hScale, device, py::dict() };
  return mapInPrecision(a, grid, communicator, false)[0];
}

const char* const kCommonParams = R"(points : (N, 3) float32 or float64 array
    The particles; used in place when C-contiguous float32/float64.
masses : (N,) array, optional
    Per-particle masses m_j >= 0 (None: unit masses).
h : (N,) array, optional
    Smoothing lengths (>= 0, finite); h * h_scale is the kernel's support
    radius (with ``box``, at most the box's shortest side). None: h_j = the distance to the k-th nearest particle (all
    ranks' particles), as ``density`` computes it; h_scale is then not
    applied (the filters' SmoothingLengthArray = None).
k : int, default 32
    Neighbours for the computed h.
)";
const char* const kGridParams = R"(region : (xmin, xmax, ymin, ymax, zmin, zmax), optional
    Half-open ranges [min, max) in the points' length unit. None: the
    periodic box when ``box`` is given, else the points' bounds (all ranks).
box : None, float or (Lx, Ly, Lz)
    Periodic box [0, L): every periodic image of a particle within its
    support contributes, so kernels wrap across the box's (and a
    whole-box image's) edges.
kernel : {"cubic", "wendland"}
    The cubic spline of ``density`` (compact support h) or Wendland C2,
    W = 21/(2 pi h^3) (1 - q)^4 (1 + 4q), q = r/h <= 1.
h_scale : float, default 1.0
    Factor from the given h to the support radius (2 for TIPSY's hsmooth,
    1.825742 for SWIFT's cubic-spline SmoothingLengths).
device : {"auto", "cpu", "cuda"}
    As the other functions ("cuda" without a GPU raises). A projection is
    deposited on the GPU when the device allows it, slices and volumes on
    the CPU; the images agree up to summation order (the GPU adds its
    pixels in no fixed order).
comm : mpi4py communicator, optional
    Each rank passes its own particles; the whole map comes back on every
    rank, equal to the serial map up to summation order.
)";
const char* const kRaises = R"(
Raises
------
ValueError
    Negative or non-finite h, non-finite coordinates or masses, resolution
    below 1, an inverted, empty or non-finite region, axis outside 0..2,
    k larger than the number of points, an unknown kernel.
TypeError
    A dtype that is not real floating point.
)";

const std::string kProjectionDoc = std::string(R"(Surface density of the particles projected along an axis.

    SurfaceDensity[pixel] = sum_j m_j * (integral over the pixel of the
                            projected kernel of j) / pixel area

The projected (column) kernel is integrated exactly over each pixel (each
particle's pixel integrals within 1e-6 m_j of exact), so the units are mass
per area of the coordinates, and sum(image) * pixel area = sum_j m_j times
the fraction of j's projected kernel inside the image's area. Particles whose
coordinate along ``axis`` lies in the region's half-open range contribute
their whole projected kernel. The SPHProjection filter's definition.

Parameters
----------
)") + kCommonParams + R"(axis : int, default 2
    Line of sight (0 = x, 1 = y, 2 = z). The image's first axis is
    (axis + 1) % 3, its second (axis + 2) % 3 (axis 2: x then y).
resolution : (nx, ny), default (512, 512)
    Pixels along the image's first and second axes.
)" + kGridParams + R"(
Returns
-------
image : (ny, nx) float64 array
    image[iy, ix], row 0 at the region's low edge of the image's second
    axis; pixel (ix, iy) covers [u0 + ix du, u0 + (ix + 1) du) x
    [v0 + iy dv, v0 + (iy + 1) dv).
)" + kRaises;

const std::string kSliceDoc = std::string(R"(SPH estimates at the pixel centres of a plane.

    density(x) = sum_j m_j W(|x - x_j|, h_j)
    A(x)       = sum_j (m_j / rho_j) A_j W(|x - x_j|, h_j)

sampled at the pixel centres of the plane ``x[axis] = position`` (mass per
volume of the coordinates). rho_j = sum_k m_k W(|x_j - x_k|, h_j) over all
particles k within h_j (with h from the kNN and the cubic kernel, the
``density`` function's "sph" density). A particle with h = 0 adds nothing.
The SPHSlice filter's definition.

Parameters
----------
)") + kCommonParams + R"(position : float
    The plane's coordinate along ``axis``.
axis : int, default 2
    The plane's normal; the image's axes as in ``sph_projection``.
resolution : (nx, ny), default (512, 512)
)" + kGridParams + R"(arrays : dict of name -> (N,) or (N, c) array, optional
    Per-particle fields to interpolate (not named "density").

Returns
-------
dict
    "density": (ny, nx) float64 image, and per array its name: (ny, nx) or
    (ny, nx, c), indexed [iy, ix] as ``sph_projection``; region's range
    along ``axis`` is ignored.
)" + kRaises;

const std::string kVolumeDoc = std::string(R"(Density on a voxel grid: each kernel integrated over each voxel.

    Density[voxel] = sum_j m_j * (fraction of j's kernel inside the voxel)
                     / voxel volume

(each particle's voxel integrals within 1e-6 m_j of exact), so
sum(volume) * voxel volume = sum_j m_j times the fraction of j's kernel
inside the region. The SPHVolume filter's definition.

Parameters
----------
)") + kCommonParams + R"(resolution : (nx, ny, nz), default (128, 128, 128)
)" + kGridParams + R"(
Returns
-------
volume : (nz, ny, nx) float64 array
    volume[iz, iy, ix], index 0 at the region's low edges.
)" + kRaises;
} // namespace

JZ_PY_BINDINGS(bindSph)
{
  m.def("sph_projection", &sphProjection, kProjectionDoc.c_str(), py::arg("points"),
    py::arg("masses") = py::none(), py::arg("h") = py::none(), py::arg("k") = 32,
    py::arg("axis") = 2, py::arg("resolution") = std::vector<int>{ 512, 512 },
    py::arg("region") = py::none(), py::arg("box") = py::none(), py::arg("kernel") = "cubic",
    py::arg("h_scale") = 1.0, py::arg("device") = "auto", py::arg("comm") = py::none());
  m.def("sph_slice", &sphSlice, kSliceDoc.c_str(), py::arg("points"), py::arg("position"),
    py::arg("masses") = py::none(), py::arg("h") = py::none(), py::arg("k") = 32,
    py::arg("axis") = 2, py::arg("resolution") = std::vector<int>{ 512, 512 },
    py::arg("region") = py::none(), py::arg("box") = py::none(), py::arg("kernel") = "cubic",
    py::arg("h_scale") = 1.0, py::arg("arrays") = py::none(), py::arg("device") = "auto",
    py::arg("comm") = py::none());
  m.def("sph_volume", &sphVolume, kVolumeDoc.c_str(), py::arg("points"), py::arg("masses") = py::none(),
    py::arg("h") = py::none(), py::arg("k") = 32,
    py::arg("resolution") = std::vector<int>{ 128, 128, 128 }, py::arg("region") = py::none(),
    py::arg("box") = py::none(), py::arg("kernel") = "cubic", py::arg("h_scale") = 1.0,
    py::arg("device") = "auto", py::arg("comm") = py::none());
}
} // namespace jzpy
