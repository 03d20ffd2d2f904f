// jztree.emst and jztree.hdbscan: computeEmst / computeHdbscan on one
// process, their distributed drivers under comm= (as the EuclideanMST and
// HDBSCAN filters run them).
#include "Bindings.h"

#include "jz/Emst.h"
#include "jz/Hdbscan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace jzpy
{
namespace
{
// The points as an EmstProblem (global ids under comm=), checked on every rank.
template <class T>
struct EmstCall
{
  const Comm& comm;
  CArray<T> xyz;
  std::size_t n = 0;
  std::int64_t total = 0;
  std::vector<jz::GlobalId> ids;
  jz::EmstProblem<T> problem;
  jz::Backend backend = jz::Backend::Auto;

  EmstCall(const Comm& c, py::object points, py::object box, const std::string& device)
    : comm(c)
  {
    Box b;
    comm.local(
      [&]
      {
        backend = parseDevice(device);
        xyz = coordinates<T>(points, "points");
        b = parseBox(box);
      });
    n = static_cast<std::size_t>(xyz.shape(0));
    total = comm.total(static_cast<std::int64_t>(n));
    ids = comm.globalIds(n);
    problem.points = dataOrNull(xyz);
    problem.numPoints = n;
    problem.ids = ids.empty() ? nullptr : ids.data();
    b.applyTo(problem);
  }

  // The piece's rules, the same error on every rank.
  void check()
  {
    jz::EmstProblem<T> piece = problem;
    piece.metric = jz::EmstMetric::Euclidean; // MinSamples is checked against all ranks' points
    comm.agree(jz::emstProblemError(piece));
  }
};

py::tuple emst(py::object points, py::object minSamples, py::object box,
  const std::string& device, py::object communicator)
{
  const Comm comm = makeComm(communicator);
  return inPrecision(points, comm,
    [&](auto precision)
    {
      using T = decltype(precision);
      EmstCall<T> call(comm, points, box, device);
      const bool mutual = !minSamples.is_none();
      if (mutual)
      {
        call.problem.metric = jz::EmstMetric::MutualReachability;
        call.problem.minSamples = optionalCount(minSamples, "min_samples", 0);
        checkRange(jz::ranges::EmstMinSamples, call.problem.minSamples, "min_samples");
      }
      std::vector<jz::GlobalId> from, to;
      std::vector<double> weight2;
      if (call.total > 0)
      {
        if (mutual)
        {
          const std::string e = jz::minSamplesError(
            call.problem.minSamples, static_cast<std::size_t>(call.total));
          if (!e.empty())
            throw py::value_error(e);
        }
        call.check();
        runKernel(
          [&](const jz::RunControl& control)
          {
            if (call.comm.distributed)
            {
              jz::EmstRankEdges<T> out;
              jz::computeEmstDistributed(call.problem, *call.comm, out, call.backend, control);
              from = std::move(out.fromId);
              to = std::move(out.toId);
              weight2 = std::move(out.weight2);
              return;
            }
            jz::EmstEdges edges;
            jz::computeEmst(call.problem, edges, call.backend, control);
            from.assign(edges.from.begin(), edges.from.end());
            to.assign(edges.to.begin(), edges.to.end());
            weight2 = std::move(edges.weight2);
          });
      }
      std::vector<std::size_t> order(weight2.size());
      std::iota(order.begin(), order.end(), std::size_t(0));
      if (call.comm.distributed)
      {
        // Every rank's edges on every rank, in the serial tree's order:
        // (weight, smaller id, larger id).
        from = jz::allGatherConcat(*call.comm, from);
        to = jz::allGatherConcat(*call.comm, to);
        weight2 = jz::allGatherConcat(*call.comm, weight2);
        order.resize(weight2.size());
        std::iota(order.begin(), order.end(), std::size_t(0));
        std::sort(order.begin(), order.end(),
          [&](std::size_t a, std::size_t b)
          {
            if (weight2[a] != weight2[b])
              return weight2[a] < weight2[b];
            return from[a] != from[b] ? from[a] < from[b] : to[a] < to[b];
          });
      }
      auto edges = newArray<jz::GlobalId>(order.size(), 2);
      auto lengths = newArray<double>(order.size());
      for (std::size_t e = 0; e < order.size(); ++e)
      {
        edges.mutable_data()[2 * e] = from[order[e]];
        edges.mutable_data()[2 * e + 1] = to[order[e]];
        lengths.mutable_data()[e] = std::sqrt(weight2[order[e]]);
      }
      return py::make_tuple(edges, lengths);
    });
}

py::tuple hdbscan(py::object points, int minClusterSize, py::object minSamples,
  const std::string& method, bool allowSingleCluster, py::object box, const std::string& device,
  py::object communicator)
{
  jz::HdbscanOptions options;
  options.minClusterSize = minClusterSize;
  options.minSamples = optionalCount(minSamples, "min_samples", 0); // 0: min_cluster_size
  options.selection = parseChoice<jz::ClusterSelection>(method,
    { { "eom", jz::ClusterSelection::ExcessOfMass }, { "leaf", jz::ClusterSelection::Leaf } },
    "method");
  options.allowSingleCluster = allowSingleCluster;
  const std::string optionError = jz::hdbscanOptionsError(options);
  if (!optionError.empty())
    throw py::value_error(optionError);
  const Comm comm = makeComm(communicator);
  return inPrecision(points, comm,
    [&](auto precision)
    {
      using T = decltype(precision);
      EmstCall<T> call(comm, points, box, device);
      auto labels = newArray<jz::GlobalId>(call.n);
      auto probabilities = newArray<double>(call.n);
      auto scores = newArray<double>(call.n);
      if (call.total > 0)
      {
        call.check();
        jz::HdbscanResult result;
        runKernel(
          [&](const jz::RunControl& control)
          {
            if (call.comm.distributed)
              jz::computeHdbscanDistributed(
                call.problem, options, *call.comm, result, call.backend, control);
            else
              jz::computeHdbscan(call.problem, options, result, call.backend, control);
          });
        std::copy(result.clusterId.begin(), result.clusterId.end(), labels.mutable_data());
        std::copy(
          result.probability.begin(), result.probability.end(), probabilities.mutable_data());
        std::copy(result.outlierScore.begin(), result.outlierScore.end(), scores.mutable_data());
      }
      return py::make_tuple(labels, probabilities, scores);
    });
}

const char* const kEmstDoc = R"(Euclidean minimum spanning tree (or forest of mutual reachability).

Parameters
----------
points : (N, 3) float32 or float64 array
    Used in place when C-contiguous float32/float64.
min_samples : int, optional
    None: Euclidean weights |a - b|. Given: the mutual reachability of
    HDBSCAN*, max(core(a), core(b), |a - b|), core(p) the distance to the
    min_samples-th nearest other point (1 <= min_samples <= N - 1).
box : None, float or (Lx, Ly, Lz), optional
    Periodic box [0, L) (nearest-image distances).
device : {"auto", "cpu", "cuda"}
comm : mpi4py communicator, optional
    Each rank passes its own points; the whole tree on every rank, with
    indices into the concatenation of all ranks' points in rank order.

Returns
-------
edges : (N - 1, 2) int64 array
    Point indices, the smaller first; sorted by (length, smaller index,
    larger index). Weights are compared exactly (squared, in double), and
    ties are broken by that order, so the tree is unique and the same on
    every device and partition.
lengths : (N - 1,) float64 array
    Edge weights in the coordinates' length unit.

Raises
------
ValueError
    Non-finite coordinates, a bad box, min_samples out of range.
TypeError
    A dtype that is not real floating point.
)";

const char* const kHdbscanDoc = R"(HDBSCAN* density-based clusters.

The semantics of the reference library hdbscan 0.8.33 (Campello, Moulavi,
Zimek, Sander 2015): the mutual-reachability minimum spanning tree, its
single-linkage hierarchy, the condensed tree, and cluster selection.

Parameters
----------
points : (N, 3) float32 or float64 array
min_cluster_size : int, default 20
    The smallest cluster (>= 2).
min_samples : int, optional
    Neighbours defining the core distance; None: min_cluster_size (the
    library's min(N - 1, .) applies).
method : {"eom", "leaf"}
    Cluster selection by excess of mass or the leaves of the condensed tree.
allow_single_cluster : bool, default False
box : None, float or (Lx, Ly, Lz), optional
    Periodic box [0, L).
device : {"auto", "cpu", "cuda"}
comm : mpi4py communicator, optional
    Each rank passes its own points; results for this rank's points.

Returns
-------
labels : (N,) int64 array
    -1 for noise; clusters 0..C-1 by descending size, equal sizes by the
    smaller smallest member index.
probabilities : (N,) float64 array
    Membership strength in [0, 1].
outlier_scores : (N,) float64 array
    GLOSH outlier scores.

Raises
------
ValueError
    Non-finite coordinates, min_cluster_size < 2, min_samples < 0, a bad
    method or box.
TypeError
    A dtype that is not real floating point.
)";
} // namespace

JZ_PY_BINDINGS(bindEmst)
{
  m.def("emst", &emst, kEmstDoc, py::arg("points"), py::arg("min_samples") = py::none(),
    py::arg("box") = py::none(), py::arg("device") = "auto", py::arg("comm") = py::none());
  m.def("hdbscan", &hdbscan, kHdbscanDoc, py::arg("points"), py::arg("min_cluster_size") = 20,
    py::arg("min_samples") = py::none(), py::arg("method") = "eom",
    py::arg("allow_single_cluster") = false, py::arg("box") = py::none(),
    py::arg("device") = "auto", py::arg("comm") = py::none());
}
} // namespace jzpy
