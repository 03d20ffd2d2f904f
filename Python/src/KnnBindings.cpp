// jztree.knn and jztree.density: computeKnnDistributed (one process: a
// SerialCommunicator), as the KNNDensity filter runs it.
#include "Bindings.h"

#include "jz/Distributed.h"
#include "jz/Knn.h"

namespace jzpy
{
namespace
{
// The problem and its checks, shared by knn and density; returns false when
// there is nothing to compute (no points anywhere).
template <class T>
struct KnnCall
{
  const Comm& comm;
  CArray<T> sources, queries;
  CArray<double> masses;
  bool hasQueries = false;
  std::size_t numQueries = 0;
  std::vector<jz::GlobalId> ids;
  jz::KnnProblem<T> problem;
  jz::Backend backend = jz::Backend::Auto;

  explicit KnnCall(const Comm& c)
    : comm(c)
  {
  }

  bool prepare(py::object points, int k, py::object massArray, py::object queryPoints,
    py::object box, const std::string& device)
  {
    Box b;
    comm.local(
      [&]
      {
        backend = parseDevice(device);
        sources = coordinates<T>(points, "points");
        hasQueries = !queryPoints.is_none();
        if (hasQueries)
          queries = coordinates<T>(queryPoints, "queries");
        masses = pointValues(massArray, static_cast<std::size_t>(sources.shape(0)), 1, "masses");
        b = parseBox(box);
        checkRange(jz::ranges::NumberOfNeighbors, k, "k");
      });
    comm.givenOnAllOrNone(hasQueries, "queries");
    numQueries = hasQueries ? static_cast<std::size_t>(queries.shape(0))
                            : static_cast<std::size_t>(sources.shape(0));
    const std::int64_t totalSources = comm.total(static_cast<std::int64_t>(sources.shape(0)));
    const std::int64_t totalQueries =
      hasQueries ? comm.total(static_cast<std::int64_t>(numQueries)) : totalSources;
    if (totalSources == 0 && totalQueries == 0)
      return false; // empty input, empty output
    comm.agree(jz::neighbourCountError(k, totalSources, inputNames()));
    ids = comm.globalIds(static_cast<std::size_t>(sources.shape(0)));
    problem.sources = dataOrNull(sources);
    problem.numSources = static_cast<std::size_t>(sources.shape(0));
    // A rank without query points still runs a query search, not a self
    // query (which a null pointer would mean).
    static const T noQuery[3] = { 0, 0, 0 };
    problem.queries = hasQueries ? (numQueries ? queries.data() : noQuery) : nullptr;
    problem.numQueries = hasQueries ? numQueries : 0;
    problem.sourceMasses = dataOrNull(masses);
    problem.sourceIds = ids.empty() ? nullptr : ids.data();
    problem.k = k;
    b.applyTo(problem);
    comm.agree(jz::problemError(problem, jz::ProblemExtent::RankPiece, inputNames()));
    return true;
  }

  void run(const jz::KnnResults<T>& results)
  {
    runKernel([&](const jz::RunControl& control)
      { jz::computeKnnDistributed<T>(problem, results, *comm, backend, control); });
  }
};

py::tuple knn(py::object points, int k, py::object queries, py::object box,
  const std::string& device, py::object communicator)
{
  const Comm comm = makeComm(communicator);
  return inPrecision(points, comm,
    [&](auto precision)
    {
      using T = decltype(precision);
      KnnCall<T> call(comm);
      const bool any = call.prepare(points, k, py::none(), queries, box, device);
      comm.agree(jz::neighbourListsMemoryError(
        call.numQueries, k, sizeof(jz::GlobalId) + sizeof(T), inputNames()));
      auto ids = newArray<jz::GlobalId>(call.numQueries, static_cast<std::size_t>(std::max(k, 1)));
      auto distances = newArray<T>(call.numQueries, static_cast<std::size_t>(std::max(k, 1)));
      if (any)
      {
        jz::KnnResults<T> results;
        results.neighborIds = ids.mutable_data();
        results.neighborDistances = distances.mutable_data();
        call.run(results);
      }
      return py::make_tuple(ids, distances);
    });
}

py::tuple density(py::object points, int k, py::object masses, const std::string& estimator,
  py::object queries, py::object box, const std::string& device, py::object communicator)
{
  const jz::DensityEstimator kind = parseChoice<jz::DensityEstimator>(estimator,
    { { "sph", jz::DensityEstimator::SphCubicSpline }, { "tophat", jz::DensityEstimator::TopHat } },
    "estimator");
  const Comm comm = makeComm(communicator);
  return inPrecision(points, comm,
    [&](auto precision)
    {
      using T = decltype(precision);
      KnnCall<T> call(comm);
      const bool any = call.prepare(points, k, masses, queries, box, device);
      auto h = newArray<T>(call.numQueries);
      auto rho = newArray<T>(call.numQueries);
      if (any)
      {
        jz::KnnResults<T> results;
        results.estimator = kind;
        results.smoothingLength = h.mutable_data();
        results.density = rho.mutable_data();
        call.run(results);
      }
      return py::make_tuple(h, rho);
    });
}

const char* const kKnnDoc = R"(Exact k nearest neighbours.

Parameters
----------
points : (N, 3) float32 or float64 array
    The source points. A C-contiguous float32/float64 array is used in place
    (no copy); any other layout or real floating dtype is converted once.
    Integer, complex or boolean dtypes raise TypeError.
k : int
    Neighbours per query, 1 <= k <= N (all ranks' N under ``comm``).
queries : (M, 3) array, optional
    Query points, converted to the dtype of ``points``. Without them the
    points query themselves, and each point is its own first neighbour at
    distance 0.
box : None, float or (Lx, Ly, Lz), optional
    Periodic box [0, L) per axis (distances to the nearest image; points
    outside are wrapped in). None: open boundaries.
device : {"auto", "cpu", "cuda"}
    "auto" runs on a usable GPU, else on the CPU; "cuda" raises
    jztree.DeviceError (a RuntimeError and a ValueError) when there is no
    usable GPU.
comm : mpi4py communicator, optional
    Each rank passes its own points (and queries); the result is that of the
    serial call on the points of all ranks concatenated in rank order, for
    this rank's queries. Neighbour ids are indices into that concatenation.

Returns
-------
ids : (M, k) int64 array
    Neighbour indices into ``points``, nearest first; equal distances are
    ordered by the smaller index.
distances : (M, k) array of the points' dtype
    Euclidean distances (same units as the coordinates), nearest first.

Raises
------
ValueError
    Non-finite coordinates, k < 1 or k > N, a bad box (the kernels' messages).
TypeError
    A dtype that is not real floating point.
KeyboardInterrupt
    Ctrl-C during the call: the kernel stops at its next progress check.
)";

const char* const kDensityDoc = R"(Smoothing lengths and densities from the k nearest neighbours.

The smoothing length h of a query is the distance to its k-th nearest source
(itself included for a self query). The density is, with masses m_j:

- ``estimator="sph"``: rho_i = sum_j m_j W(r_ij, h_i), W the cubic (M4)
  spline with compact support h_i, normalised to 1 in 3D:
  W(r, h) = 8 / (pi h^3) * (1 - 6 q^2 + 6 q^3) for q = r / h <= 1/2,
  16 / (pi h^3) * (1 - q)^3 for 1/2 < q <= 1, and 0 beyond;
- ``estimator="tophat"``: rho_i = sum_j m_j / (4/3 pi h_i^3) over the k
  neighbours.

Units: h in the coordinates' length unit, rho in mass per length^3. These
are the KNNDensity filter's definitions and results.

Parameters
----------
points : (N, 3) float32 or float64 array
    The sources, used in place when C-contiguous float32/float64.
k : int, default 32
    Neighbours per query, 1 <= k <= N.
masses : (N,) array, optional
    Per-point masses (float64 used in place; other real dtypes converted).
    None: unit masses.
estimator : {"sph", "tophat"}
queries : (M, 3) array, optional
    Where to estimate; None: at the points themselves.
box : None, float or (Lx, Ly, Lz), optional
    Periodic box [0, L).
device : {"auto", "cpu", "cuda"}
comm : mpi4py communicator, optional
    Each rank passes its own points; results for this rank's queries.

Returns
-------
h : (M,) array of the points' dtype
rho : (M,) array of the points' dtype

Raises
------
ValueError
    Non-finite coordinates or masses, k out of range, masses of the wrong
    length, a bad box or estimator.
TypeError
    A dtype that is not real floating point.
)";
} // namespace

JZ_PY_BINDINGS(bindKnn)
{
  m.def("knn", &knn, kKnnDoc, py::arg("points"), py::arg("k"), py::arg("queries") = py::none(),
    py::arg("box") = py::none(), py::arg("device") = "auto", py::arg("comm") = py::none());
  m.def("density", &density, kDensityDoc, py::arg("points"), py::arg("k") = 32,
    py::arg("masses") = py::none(), py::arg("estimator") = "sph",
    py::arg("queries") = py::none(), py::arg("box") = py::none(), py::arg("device") = "auto",
    py::arg("comm") = py::none());
}
} // namespace jzpy
