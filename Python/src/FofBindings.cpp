// jztree.fof: computeFofHalos on one process, computeFofDistributed under
// comm=, with the FriendsOfFriends filter's relative linking length and its
// catalogue columns (the catalogue gathered whole on every rank).
#include "Bindings.h"

#include "jz/Distributed.h"
#include "jz/Fof.h"
#include "jz/FofCatalogueColumns.h"
#include "jz/RelativeLinkingLength.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace jzpy
{
namespace
{
// l = b (V/N)^(1/3) over all ranks (RelativeLinkingLength.h), or the
// filter's error in the module's words.
template <class T>
double relativeLength(double b, const CArray<T>& points, const Box& box, std::size_t total,
  const Comm& comm)
{
  const double bounds[6] = { box.lo[0], box.hi[0], box.lo[1], box.hi[1], box.lo[2], box.hi[2] };
  double volume = 0;
  const double l = jz::relativeLinkingLengthOver(*comm, dataOrNull(points),
    static_cast<std::size_t>(points.shape(0)), total, b, box.periodic, bounds, &volume);
  if (!(l > 0) || !std::isfinite(l))
  {
    std::ostringstream msg;
    msg << "Relative linking length needs a volume: the "
        << (box.periodic ? "periodic box" : "bounding box of the points") << " has volume "
        << volume << ". Use relative=False for flat data.";
    throw py::value_error(msg.str());
  }
  return l;
}

// The catalogue columns of the filter (one row per kept group, by GroupId).
py::dict catalogueDict(const jz::FofCatalogue& cat, const std::vector<jz::GlobalId>& groupIds,
  bool velocities)
{
  const std::size_t G = groupIds.size();
  auto id = newArray<jz::GlobalId>(G);
  auto count = newArray<jz::GlobalId>(G);
  auto mass = newArray<double>(G);
  auto com = newArray<double>(G, 3);
  auto radius = newArray<double>(G);
  auto meanVelocity = newArray<double>(G, 3);
  auto dispersion = newArray<double>(G);
  jz::GlobalId* idOut = id.mutable_data();
  jz::GlobalId* countOut = count.mutable_data();
  double* massOut = mass.mutable_data();
  double* comOut = com.mutable_data();
  double* radiusOut = radius.mutable_data();
  double* meanVelocityOut = meanVelocity.mutable_data();
  double* dispersionOut = dispersion.mutable_data();
  for (std::size_t row = 0; row < G; ++row)
  {
    const std::size_t g = static_cast<std::size_t>(groupIds[row]); // rows land at their GroupId
    idOut[g] = groupIds[row];
    countOut[g] = cat.count[row];
    massOut[g] = cat.mass[row];
    radiusOut[g] = cat.inertiaRadius[row];
    std::copy_n(&cat.centerOfMass[3 * row], 3, comOut + 3 * g);
    if (velocities)
    {
      dispersionOut[g] = cat.velocityDispersion[row];
      std::copy_n(&cat.meanVelocity[3 * row], 3, meanVelocityOut + 3 * g);
    }
  }
  namespace column = jz::catalogue;
  py::dict out;
  out[column::kGroupId] = id;
  out[column::kCount] = count;
  out[column::kMass] = mass;
  out[column::kCenterOfMass] = com;
  out[column::kInertiaRadius] = radius;
  if (velocities)
  {
    out[column::kMeanVelocity] = meanVelocity;
    out[column::kVelocityDispersion] = dispersion;
  }
  return out;
}

// Every rank's catalogue rows, on every rank.
void gatherCatalogue(jz::Communicator& comm, jz::FofCatalogue& cat, std::vector<jz::GlobalId>& ids)
{
  ids = jz::allGatherConcat(comm, ids);
  cat.count = jz::allGatherConcat(comm, cat.count);
  cat.mass = jz::allGatherConcat(comm, cat.mass);
  cat.centerOfMass = jz::allGatherConcat(comm, cat.centerOfMass);
  cat.inertiaRadius = jz::allGatherConcat(comm, cat.inertiaRadius);
  cat.meanVelocity = jz::allGatherConcat(comm, cat.meanVelocity);
  cat.velocityDispersion = jz::allGatherConcat(comm, cat.velocityDispersion);
}

py::tuple fof(py::object points, double linkingLength, std::int64_t minSize, bool relative,
  py::object masses, py::object velocities, py::object box, const std::string& device,
  py::object communicator)
{
  const Comm comm = makeComm(communicator);
  return inPrecision(points, comm,
    [&](auto precision)
    {
      using T = decltype(precision);
      jz::Backend backend = jz::Backend::Auto;
      CArray<T> xyz;
      CArray<double> m, v;
      Box b;
      comm.local(
        [&]
        {
          backend = parseDevice(device);
          xyz = coordinates<T>(points, "points");
          const std::size_t count = static_cast<std::size_t>(xyz.shape(0));
          m = pointValues(masses, count, 1, "masses");
          v = pointValues(velocities, count, 3, "velocities");
          b = parseBox(box);
          checkRange(jz::ranges::MinimumGroupSize, double(minSize), "min_size");
        });
      const std::size_t n = static_cast<std::size_t>(xyz.shape(0));
      comm.givenOnAllOrNone(!velocities.is_none(), "velocities");
      auto groupId = newArray<jz::GlobalId>(n);
      auto groupSize = newArray<jz::GlobalId>(n);
      const std::int64_t total = comm.total(static_cast<std::int64_t>(n));
      if (total == 0) // empty input, empty output
        return py::make_tuple(groupId, groupSize,
          catalogueDict(jz::FofCatalogue(), {}, !velocities.is_none()));
      const std::string lengthError = jz::linkingLengthError(linkingLength, inputNames());
      if (!lengthError.empty())
        throw py::value_error(lengthError);

      const std::vector<jz::GlobalId> ids = comm.globalIds(n);
      jz::FofProblem<T> problem;
      problem.points = dataOrNull(xyz);
      problem.numPoints = n;
      problem.linkingLength = linkingLength;
      problem.ids = ids.empty() ? nullptr : ids.data();
      b.applyTo(problem);
      jz::FofDistributedOptions options;
      options.minimumGroupSize = minSize;
      options.masses = dataOrNull(m);
      options.velocities = dataOrNull(v);
      // The piece's rules (non-finite coordinates first: they would spoil
      // the bounding box), masses and velocities included.
      std::string error = jz::problemError(problem, jz::ProblemExtent::RankPiece, inputNames());
      if (error.empty() && options.masses)
        error = jz::nonFiniteValueError(options.masses, n, 1, "masses");
      if (error.empty() && options.velocities)
        error = jz::nonFiniteValueError(options.velocities, n, 3, "velocities");
      comm.agree(error);
      if (relative)
        problem.linkingLength =
          relativeLength(linkingLength, xyz, b, static_cast<std::size_t>(total), comm);

      jz::FofCatalogue cat;
      std::vector<jz::GlobalId> rows;
      if (n > 0)
      {
        options.groupIdOut = groupId.mutable_data();
        options.groupSizeOut = groupSize.mutable_data();
      }
      runKernel(
        [&](const jz::RunControl& control)
        {
          if (comm.distributed)
          {
            jz::FofDistributedResult result;
            jz::computeFofDistributed<T>(problem, options, result, *comm, backend, control);
            cat = std::move(result.catalogue);
            rows = std::move(result.catalogueGroupId);
            return;
          }
          jz::FofHaloOptions halo;
          halo.minimumGroupSize = minSize;
          halo.masses = options.masses;
          halo.velocities = options.velocities;
          halo.groupIdOut = options.groupIdOut;
          halo.groupSizeOut = options.groupSizeOut;
          jz::FofHalos halos;
          jz::computeFofHalos<T>(problem, halo, halos, backend, control);
          cat = std::move(halos.catalogue);
          rows.resize(halos.numGroups);
          for (std::size_t g = 0; g < rows.size(); ++g)
            rows[g] = static_cast<jz::GlobalId>(g);
        });
      if (comm.distributed)
        gatherCatalogue(*comm, cat, rows);
      return py::make_tuple(groupId, groupSize, catalogueDict(cat, rows, !velocities.is_none()));
    });
}

const char* const kFofDoc = R"(Friends-of-friends groups and their halo catalogue.

Two points are friends when their distance is at most the linking length l
(compared as d^2 <= l^2 in double from the input coordinates; the nearest
image in a periodic box); groups are the connected components of that
graph. These are the FriendsOfFriends filter's definitions and results.

Parameters
----------
points : (N, 3) float32 or float64 array
    Used in place when C-contiguous float32/float64.
linking_length : float
    With ``relative=True`` (the default) the parameter b of l = b (V/N)^(1/3),
    a fraction of the mean interparticle spacing, V the volume of the
    periodic box (or, without a box, of the points' bounding box) and N the
    number of points (0.2 is the usual choice for dark-matter haloes). With
    ``relative=False`` l itself, in the coordinates' length unit. > 0.
min_size : int, default 20
    Groups with fewer members get group_id -1 and no catalogue row.
relative : bool, default True
masses : (N,) array, optional
    Per-point masses for the catalogue; None: unit masses.
velocities : (N, 3) array, optional
    Per-point velocities: adds MeanVelocity and VelocityDispersion.
box : None, float or (Lx, Ly, Lz), optional
    Periodic box [0, L).
device : {"auto", "cpu", "cuda"}
comm : mpi4py communicator, optional
    Each rank passes its own points; group_id and group_size for this
    rank's points, the catalogue whole on every rank.

Returns
-------
group_id : (N,) int64 array
    0..G-1 for members of groups of at least min_size points, numbered by
    descending size, equal sizes by the smaller smallest member index; -1
    for the others. Independent of the input order's partition over ranks.
group_size : (N,) int64 array
    The number of members of the point's group (any size; 1 for a loner).
catalogue : dict of arrays, one row per kept group, row g = GroupId g
    "GroupId" (G,) int64, "Count" (G,) int64, "Mass" (G,) float64,
    "CenterOfMass" (G, 3) float64 (periodic: members unwrapped around the
    member with the smallest index, the result wrapped into the box),
    "InertiaRadius" (G,) float64: sqrt(sum m |x - c|^2 / M); with velocities
    also "MeanVelocity" (G, 3) and "VelocityDispersion" (G,), the
    one-dimensional sqrt(sum m |v - v_mean|^2 / (3 M)).

Raises
------
ValueError
    Non-finite coordinates, masses or velocities, linking_length <= 0,
    min_size < 1, masses or velocities of the wrong length, a bad box, a
    relative length without a volume (flat data).
TypeError
    A dtype that is not real floating point.
)";
} // namespace

JZ_PY_BINDINGS(bindFof)
{
  m.def("fof", &fof, kFofDoc, py::arg("points"), py::arg("linking_length"),
    py::arg("min_size") = 20, py::arg("relative") = true, py::arg("masses") = py::none(),
    py::arg("velocities") = py::none(), py::arg("box") = py::none(), py::arg("device") = "auto",
    py::arg("comm") = py::none());
}
} // namespace jzpy
