// jztree.gravity: computeGravityDistributed (one process: a
// SerialCommunicator), as the TreeGravity filter runs it.
#include "Bindings.h"

#include "jz/Gravity.h"

namespace jzpy
{
namespace
{
// The Python argument names in the kernels' messages.
jz::InputNames gravityNames()
{
  jz::InputNames names = inputNames();
  names.openingAngle = "theta";
  names.softening = "softening";
  names.gravitationalConstant = "G";
  return names;
}

py::tuple gravity(py::object points, py::object masses, double theta, double softening,
  double G, py::object queries, const std::string& device, py::object communicator)
{
  const Comm comm = makeComm(communicator);
  return inPrecision(points, comm,
    [&](auto precision)
    {
      using T = decltype(precision);
      jz::Backend backend = jz::Backend::Auto;
      CArray<T> sources, q;
      CArray<double> m;
      const bool hasQueries = !queries.is_none();
      comm.local(
        [&]
        {
          backend = parseDevice(device);
          sources = coordinates<T>(points, "points");
          if (hasQueries)
            q = coordinates<T>(queries, "queries");
          m = pointValues(masses, static_cast<std::size_t>(sources.shape(0)), 1, "masses");
        });
      comm.givenOnAllOrNone(hasQueries, "queries");
      const std::size_t n = static_cast<std::size_t>(sources.shape(0));
      const std::size_t numQueries = hasQueries ? static_cast<std::size_t>(q.shape(0)) : n;

      jz::GravityProblem<T> problem;
      problem.sources = dataOrNull(sources);
      problem.numSources = n;
      problem.sourceMasses = dataOrNull(m);
      static const T noQuery[3] = { 0, 0, 0 }; // a query run on a rank without queries
      problem.queries = hasQueries ? (numQueries ? q.data() : noQuery) : nullptr;
      problem.numQueries = hasQueries ? numQueries : 0;
      problem.openingAngle = theta;
      problem.softening = softening;
      problem.gravitationalConstant = G;
      comm.agree(jz::gravityProblemError(problem, gravityNames()));

      auto potential = newArray<double>(numQueries);
      auto acceleration = newArray<double>(numQueries, 3);
      const std::int64_t total =
        comm.total(static_cast<std::int64_t>(n)) + comm.total(static_cast<std::int64_t>(numQueries));
      if (total > 0)
      {
        const jz::GravityResults results{ potential.mutable_data(), acceleration.mutable_data() };
        runKernel([&](const jz::RunControl& control)
          { jz::computeGravityDistributed<T>(*comm, problem, results, backend, control); });
      }
      return py::make_tuple(potential, acceleration);
    });
}

const char* const kGravityDoc = R"(Gravitational potential and acceleration (tree code, isolated).

    phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2)
    a_i   = -G sum_{j != i} m_j (x_i - x_j) / (r_ij^2 + eps^2)^(3/2)

Barnes-Hut with multipoles up to quadrupole on the jz-tree's planes, or
direct summation at theta = 0; isolated boundaries (no periodic box). A pair
at distance 0 with eps = 0 is skipped. These are the TreeGravity filter's
definitions and results.

Parameters
----------
points : (N, 3) float32 or float64 array
    The sources; used in place when C-contiguous float32/float64.
masses : (N,) array, optional
    Per-point masses >= 0; None: unit masses.
theta : float, default 0.5
    Opening angle (0: exact direct summation).
softening : float, default 0.0
    Plummer softening length eps (>= 0), in the coordinates' length unit.
G : float, default 1.0
    The gravitational constant, in the units of the inputs.
queries : (M, 3) array, optional
    Where to evaluate (e.g. a grid); None: at the points, each excluding
    itself.
device : {"auto", "cpu", "cuda"}
comm : mpi4py communicator, optional
    Each rank passes its own points (and queries); results for this rank's
    queries.

Returns
-------
potential : (M,) float64 array
acceleration : (M, 3) float64 array

Raises
------
ValueError
    Non-finite coordinates, negative or non-finite masses, masses of the
    wrong length, theta < 0, softening < 0.
TypeError
    A dtype that is not real floating point.
)";
} // namespace

JZ_PY_BINDINGS(bindGravity)
{
  m.def("gravity", &gravity, kGravityDoc, py::arg("points"), py::arg("masses") = py::none(),
    py::arg("theta") = 0.5, py::arg("softening") = 0.0, py::arg("G") = 1.0,
    py::arg("queries") = py::none(), py::arg("device") = "auto", py::arg("comm") = py::none());
}
} // namespace jzpy
