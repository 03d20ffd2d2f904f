// computeFofGroups' CUDA backend: upload, z-order sort and self-query tree
// build (shared with kNN), the node walk plane by plane, the leaf-to-leaf
// point links, contraction, and the canonical labels in input order.
//
// The partition into groups equals the CPU backend's for any input: both
// decide friendship with jz::fofFriends (d^2 <= l^2 in double from the same
// wrapped coordinates; this code is compiled with --fmad=false), node pairs
// are only linked whole when every point pair is within l, and groups are
// labelled by their smallest global id (or input index).
#include <string>
#include <utility>

#include "../FofBackends.h"
#include "FofCuda.cuh"

namespace jz
{
namespace
{
void progress(const RunControl& control, double f)
{
  if (control.progress && !control.progress(f))
    throw Aborted();
}
} // namespace

template <class T>
void fofCuda(const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control)
{
  using namespace cuda;
  out.groupLabel.clear();
  out.groupRoot.clear();
  if (problem.numPoints == 0)
    return;
  if (problem.numPoints >= std::size_t(0xFFFFFFFFu))
  {
    throw Error("too many points for one process: " + std::to_string(problem.numPoints));
  }
  const Index n = Index(problem.numPoints);
  const double l2 = problem.linkingLength * problem.linkingLength;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  Stream stream;
  const cudaStream_t st = stream.get();
  PoolScope pool(st); // before every device buffer of the run
  TempStorage temp(st);
  StageTimer timer(st);
  timer.mark("start");

  // Sort and self-query tree (stages "upload", "sort", "tree").
  DeviceTree<T> tree;
  buildTreeCuda<T>(
    problem.points, n, nullptr, 0, per, problem.boxLo, TreeBuildOptions(), tree, st, temp, timer);
  progress(control, 0.2);

  // The walk from the super nodes down to the leaves' pairs, then the points.
  const int numPlanes = int(tree.planes.size());
  if (numPlanes == 0)
    throw Error("the device tree has no planes");
  FofLeafLevel leaves;
  fofNodeWalkCuda(
    tree, l2, st, temp, info,
    [&](int p) { progress(control, 0.2 + 0.3 * double(numPlanes - p) / double(numPlanes)); },
    leaves);
  timer.mark("fof node walk");
  DeviceBuffer<Index> g(n, st, "the point group pointers");
  fofLeafWalkCuda(tree, leaves, l2, g.get(), st);
  leaves = FofLeafLevel();
  timer.mark("fof leaf walk");
  progress(control, 0.8);

  // Canonical labels and roots in input order.
  DeviceBuffer<GlobalId> ids, label;
  DeviceBuffer<Index> root;
  if (out.wantLabel && problem.ids)
  {
    ids.allocate(n, st, "the global ids");
    ids.upload(problem.ids, n);
  }
  if (out.wantLabel)
    label.allocate(n, st, "the group labels");
  if (out.wantRoot)
    root.allocate(n, st, "the group roots");
  fofLabelsCuda(g.get(), tree.sInput.get(), n, ids.get(), label.get(), root.get(), st);
  timer.mark("fof labels");

  // Through pinned staging chunks, into vectors that are never zero-filled.
  if (out.wantLabel)
    downloadToVector(out.groupLabel, label.get(), n, st);
  if (out.wantRoot)
    downloadToVector(out.groupRoot, root.get(), n, st);
  timer.mark("output");
  JZ_CUDA_CHECK(cudaStreamSynchronize(st));
  timer.report(info.stageSeconds);
  info.counters.emplace_back("gpu peak bytes", double(pool.peakBytes()));
  progress(control, 1.0);
}

template void fofCuda<float>(const FofProblem<float>&, FofGroups&, RunInfo&, const RunControl&);
template void fofCuda<double>(const FofProblem<double>&, FofGroups&, RunInfo&, const RunControl&);
} // namespace jz
