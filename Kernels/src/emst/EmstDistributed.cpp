// The distributed EMST: a Borůvka over all ranks on the z-order
// decomposition (EmstPhases.h). No rank holds more than its range of the
// points and the few edges between components that span ranks; each edge
// is output by the rank whose input holds its smaller-id endpoint. With one
// rank it is the single-process tree.
#include <string>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "emst/EmstInFrame.h"
#include "emst/EmstPhases.h"
#include "emst/FloatBounds.h"
#include "jz/Communicator.h"
#include "jz/Emst.h"
#include "jz/StageTimer.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
// The single-process tree as one rank's share (every edge is this rank's).
template <class T>
RunInfo emstOnOneRank(const EmstProblem<T>& piece, EmstRankEdges<T>& out, Backend backend,
  const RunControl& control)
{
  EmstEdges edges;
  const RunInfo info = computeEmst(piece, edges, backend, control);
  auto id = [&](Index i) { return piece.ids ? piece.ids[i] : GlobalId(i); };
  for (std::size_t e = 0; e < edges.size(); ++e)
  {
    const Index a = edges.from[e], b = edges.to[e];
    out.fromId.push_back(id(a));
    out.toId.push_back(id(b));
    out.fromLocal.push_back(a);
    out.weight2.push_back(edges.weight2[e]);
    for (int d = 0; d < 3; ++d)
    {
      out.fromPoint.push_back(piece.points[3 * std::size_t(a) + d]);
      out.toPoint.push_back(piece.points[3 * std::size_t(b) + d]);
    }
  }
  out.core2 = std::move(edges.core2);
  return info;
}

// The serial rules on every rank's piece, MinSamples against the global count.
template <class T>
void checkPieces(const EmstProblem<T>& piece, Backend backend, Communicator& comm)
{
  EmstProblem<T> local = piece;
  local.metric = EmstMetric::Euclidean;
  agreeOnErrors(comm, emstProblemError(local));
  const std::int64_t total = allSum(comm, std::int64_t(piece.numPoints));
  if (piece.metric == EmstMetric::MutualReachability)
  {
    const std::string error = minSamplesError(piece.minSamples, std::size_t(total));
    if (!error.empty())
      throw Error(error);
    // The core distances list each local point's MinSamples nearest (a
    // sorted index and an id each): refused, on every rank alike, where a
    // rank's lists cannot fit in its memory.
    InputNames names;
    names.neighbourCount = "MinSamples";
    agreeOnErrors(comm,
      neighbourListsMemoryError(
        piece.numPoints, piece.minSamples, sizeof(Index) + sizeof(GlobalId), names));
  }
  if (backend == Backend::CUDA)
    throw Error("the EMST over several MPI ranks runs on the CPU only: use Device CPU or Auto");
}

struct RestoreThreads
{
  int n;
  ~RestoreThreads() { omp_set_num_threads(n); }
};
} // namespace

template <class T>
RunInfo computeEmstDistributed(const EmstProblem<T>& piece, Communicator& comm,
  EmstRankEdges<T>& out, Backend backend, const RunControl& control)
{
  out = EmstRankEdges<T>{};
  if (comm.size() == 1)
    return emstOnOneRank(piece, out, backend, control);
  checkPieces(piece, backend, comm);
  const ScaleFrame frame = ScaleFrame::forMagnitude(largestMagnitude(piece), comm);
  if (!frame.identity())
  {
    const RunInfo info = runEmstInFrame(piece, frame,
      [&](const EmstProblem<T>& scaled)
      { return computeEmstDistributed(scaled, comm, out, backend, control); });
    emstEdgesFromFrame(frame, out.weight2, out.core2);
    frame.valuesFromFrame(out.fromPoint.data(), out.fromPoint.size(), 1);
    frame.valuesFromFrame(out.toPoint.data(), out.toPoint.size(), 1);
    return info;
  }
  RunInfo info;
  info.backend = Backend::CPU;
  const RestoreThreads restore{ omp_get_max_threads() };
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  omp_set_num_threads(threads);

  EmstTraffic traffic;
  StageTimer decomposeTimer(&info, "decomposition+tree");
  const EmstRankPoints<T> points = decomposeEmstPoints(piece, comm, traffic);
  decomposeTimer.stop();
  agreeOnProgress(control, 0.1, comm);
  const double afterDecomposition = traffic.bytesReceived;
  std::vector<double> core2;
  if (piece.metric == EmstMetric::MutualReachability)
  {
    StageTimer timer(&info, "core distances");
    core2 = emstCoreDistances(points, piece.minSamples + 1, threads, comm, traffic);
    timer.stop();
    agreeOnProgress(control, 0.2, comm);
  }
  const double afterCores = traffic.bytesReceived;
  const double coreQueries = traffic.pointsSearched;
  StageTimer roundsTimer(&info, "boruvka");
  // The serial search keeps a float bound rounded up: the same edges pass.
  const double maxBound2 = double(roundUpToFloat(piece.maxLength * piece.maxLength));
  const std::vector<EmstEmitted<T>> edges = runDistributedBoruvka(points, piece,
    core2.empty() ? nullptr : core2.data(), maxBound2, threads, control, comm, traffic, info);
  roundsTimer.stop();
  agreeOnProgress(control, 0.9, comm);
  const double afterRounds = traffic.bytesReceived;
  StageTimer homeTimer(&info, "edges home");
  sendEmstEdgesHome(points, edges, core2, piece, comm, out, traffic);
  homeTimer.stop();
  try
  {
    agreeOnProgress(control, 1.0, comm);
  }
  catch (const Aborted&)
  {
    out = EmstRankEdges<T>{}; // no partial output
    throw;
  }
  info.counters.emplace_back("bytes received", traffic.bytesReceived);
  info.counters.emplace_back("bytes received: decomposition", afterDecomposition);
  info.counters.emplace_back("bytes received: core distances", afterCores - afterDecomposition);
  info.counters.emplace_back("bytes received: rounds", afterRounds - afterCores);
  info.counters.emplace_back("bytes received: edges home", traffic.bytesReceived - afterRounds);
  info.counters.emplace_back("boundary queries", traffic.boundaryQueries);
  info.counters.emplace_back("points received: decomposition", traffic.pointsMoved);
  info.counters.emplace_back("points received: searches", traffic.pointsSearched);
  info.counters.emplace_back("points received: core distances' searches", coreQueries);
  return info;
}

template RunInfo computeEmstDistributed<float>(
  const EmstProblem<float>&, Communicator&, EmstRankEdges<float>&, Backend, const RunControl&);
template RunInfo computeEmstDistributed<double>(
  const EmstProblem<double>&, Communicator&, EmstRankEdges<double>&, Backend, const RunControl&);
} // namespace jz
