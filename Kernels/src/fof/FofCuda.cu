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
#include <vector>

#include "common/Progress.h"
#include "cuda/CudaDriver.cuh"
#include "fof/FofBackends.h"
#include "fof/FofCatalogueChunks.h"
#include "fof/FofCuda.cuh"

namespace jz
{
namespace
{
// The groups on the device: the tree (stages "upload", "sort", "tree"), the
// node walk, the leaf walk and the contraction. g[k]: the root (smallest
// sorted index) of sorted point k's group.
template <class T>
void linkOnDevice(const FofProblem<T>& problem, cuda::DeviceRun& run, cuda::DeviceTree<T>& tree,
  cuda::DeviceBuffer<Index>& g, RunInfo& info, const RunControl& control)
{
  using namespace cuda;
  checkPointCount(problem.numPoints);
  const Index n = Index(problem.numPoints);
  const double l2 = problem.linkingLength * problem.linkingLength;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  const cudaStream_t st = run.st();
  run.buildTree(problem.points, n, static_cast<const T*>(nullptr), 0, per, problem.boxLo,
    TreeBuildOptions(), tree);
  reportProgress(control, 0.2);

  // The walk from the super nodes down to the leaves' pairs, then the points.
  const int numPlanes = int(tree.planes.size());
  if (numPlanes == 0)
    throw Error("the device tree has no planes");
  FofLeafLevel leaves;
  fofNodeWalkCuda(
    tree, l2, st, run.temp, info,
    [&](int p) { reportProgress(control, 0.2 + 0.3 * double(numPlanes - p) / double(numPlanes)); },
    leaves);
  run.timer.mark("fof node walk");
  g.allocate(n, st, "the point group pointers");
  fofLeafWalkCuda(tree, leaves, l2, g.get(), st);
  leaves = FofLeafLevel();
  run.timer.mark("fof leaf walk");
  reportProgress(control, 0.8);
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
  DeviceRun run;
  const cudaStream_t st = run.st();
  DeviceTree<T> tree;
  DeviceBuffer<Index> g;
  linkOnDevice(problem, run, tree, g, info, control);
  const Index n = Index(problem.numPoints);

  // Canonical labels and roots in input order.
  const DeviceBuffer<GlobalId> ids =
    uploadOptional(out.wantLabel ? problem.ids : nullptr, n, st, "the global ids");
  DeviceBuffer<GlobalId> label;
  DeviceBuffer<Index> root;
  if (out.wantLabel)
    label.allocate(n, st, "the group labels");
  if (out.wantRoot)
    root.allocate(n, st, "the group roots");
  fofLabelsCuda(g.get(), tree.sInput.get(), n, ids.get(), label.get(), root.get(), st);
  run.timer.mark("fof labels");

  // Through pinned staging chunks, into vectors that are never zero-filled.
  if (out.wantLabel)
    downloadToVector(out.groupLabel, label.get(), n, st);
  if (out.wantRoot)
    downloadToVector(out.groupRoot, root.get(), n, st);
  run.timer.mark("output");
  run.finish(info, control);
}

namespace
{
// The catalogue from the device's rows (computeFofCatalogue's empty one for
// no groups), each field one copy into a vector that is never zero-filled.
template <class T>
void downloadCatalogue(const FofHaloOptions& options, const cuda::FofDeviceRows& rows,
  FofCatalogue& cat, const RunControl& control, cudaStream_t st)
{
  const std::size_t G = rows.count.size();
  if (G == 0)
  {
    FofCatalogueInput<T> none;
    none.velocities = options.velocities;
    computeFofCatalogue(none, cat, control);
    return;
  }
  cat = FofCatalogue();
  cat.hasVelocities = options.velocities != nullptr;
  cat.numGroups = G;
  cuda::downloadToVector(cat.count, rows.count.get(), G, st);
  cuda::downloadToVector(cat.mass, rows.mass.get(), G, st);
  cuda::downloadToVector(cat.centerOfMass, rows.centerOfMass.get(), 3 * G, st);
  cuda::downloadToVector(cat.inertiaRadius, rows.inertiaRadius.get(), G, st);
  if (cat.hasVelocities)
  {
    cuda::downloadToVector(cat.meanVelocity, rows.meanVelocity.get(), 3 * G, st);
    cuda::downloadToVector(cat.velocityDispersion, rows.velocityDispersion.get(), G, st);
  }
}

// Downloads n values into the caller's array (directly when it is
// page-locked) or, without one, into `own` (never zero-filled).
template <class V>
void downloadOutput(V* given, std::vector<V>& own, const V* device, std::size_t n, cudaStream_t st)
{
  if (given)
    cuda::download(given, device, n, st);
  else
    cuda::downloadToVector(own, device, n, st);
}

} // namespace

template <class T>
void fofHalosCuda(const FofProblem<T>& problem, const FofHaloOptions& options, FofHalos& result,
  RunInfo& info, const RunControl& control)
{
  using namespace cuda;
  result = FofHalos();
  const std::size_t nn = problem.numPoints;
  if (nn == 0)
    return;
  DeviceRun run;
  const cudaStream_t st = run.st();
  DeviceTree<T> tree;
  tree.keepSourceInput = true; // the catalogue sums the coordinates as given
  DeviceBuffer<Index> g;
  linkOnDevice(problem, run, tree, g, info, control);
  const Index n = Index(nn);
  DeviceBuffer<T> xyz = std::move(tree.sourceInput);
  // Only the sorted points' input indices are read from here on.
  DeviceBuffer<Index> sortedInput = std::move(tree.sInput);
  tree = DeviceTree<T>();

  const DeviceBuffer<GlobalId> ids = uploadOptional(problem.ids, n, st, "the global ids");
  if (problem.ids)
    run.timer.mark("ids upload");
  FofDeviceNumbering groups;
  fofNumberGroupsCuda(
    g.get(), sortedInput.get(), n, ids.get(), options.minimumGroupSize, st, run.temp, groups);
  g.release();
  sortedInput.release();
  run.timer.mark("fof groups");
  reportProgress(control, 0.85);

  const DeviceBuffer<double> masses = uploadOptional(options.masses, nn, st, "the masses");
  const DeviceBuffer<double> velocities =
    uploadOptional(options.velocities, 3 * nn, st, "the velocities");
  FofDeviceCatalogueInput<T> in;
  in.xyz = xyz.get();
  in.n = n;
  in.ids = ids.get();
  in.masses = masses.get();
  in.velocities = velocities.get();
  in.periodicity = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  in.numChunks = fofCatalogueChunks(groups.numGroups, nn);
  DeviceBuffer<GroupMoments> sums;
  fofCatalogueSumsCuda(groups, in, st, run.temp, sums);
  FofDeviceRows rows;
  rows.make(sums, in.periodicity, problem.boxLo, st);
  sums.release();
  run.timer.mark("fof catalogue");

  // The outputs: GroupId, GroupSize and the catalogue's fields, one copy each.
  result.numGroups = groups.numGroups;
  downloadOutput(options.groupIdOut, result.groupId, groups.groupId.get(), nn, st);
  downloadOutput(options.groupSizeOut, result.groupSize, groups.groupSize.get(), nn, st);
  downloadCatalogue<T>(options, rows, result.catalogue, control, st);
  run.timer.mark("download");
  run.finish(info, control);
  info.counters.emplace_back("catalogue chunks", double(in.numChunks));
}

template void fofCuda<float>(const FofProblem<float>&, FofGroups&, RunInfo&, const RunControl&);
template void fofCuda<double>(const FofProblem<double>&, FofGroups&, RunInfo&, const RunControl&);
template void fofHalosCuda<float>(
  const FofProblem<float>&, const FofHaloOptions&, FofHalos&, RunInfo&, const RunControl&);
template void fofHalosCuda<double>(
  const FofProblem<double>&, const FofHaloOptions&, FofHalos&, RunInfo&, const RunControl&);
} // namespace jz
