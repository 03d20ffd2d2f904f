// computeKnn's CUDA backend: upload, z-order sort and tree build, node walks
// per plane, LeafToLeaf with in-kernel reduction, input-order output.
// Results are bit-identical to the CPU backend (same ranking, same double
// arithmetic; this file and the kernels are compiled with --fmad=false).
#include "common/Progress.h"
#include "cuda/CudaDriver.cuh"
#include "knn/KnnBackends.h"
#include "knn/KnnCuda.cuh"

namespace jz
{
template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control)
{
  using namespace cuda;
  const bool self = problem.queries == nullptr;
  const std::size_t numQueries = self ? problem.numSources : problem.numQueries;
  if (numQueries == 0)
    return;
  checkPointCount(problem.numSources + (self ? 0 : numQueries));
  const Index ns = Index(problem.numSources);
  const Index nq = Index(numQueries);
  const int k = problem.k;

  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  DeviceRun run;
  const cudaStream_t st = run.st();
  DeviceTree<T> tree;
  run.buildTree(problem.sources, ns, problem.queries, self ? 0 : nq, per, problem.boxLo,
    TreeBuildOptions(), tree);
  reportProgress(control, 0.3);

  // Tie-breaking keys and masses in sorted source order.
  const DeviceBuffer<GlobalId> keys =
    sortedKeys(tree.sInput.get(), ns, problem.sourceIds, st, "the source keys");
  DeviceBuffer<double> masses;
  if (problem.sourceMasses && results.density)
    masses = sortedMasses(tree.sInput.get(), ns, problem.sourceMasses, st, "the source masses");

  // Device outputs in input order.
  DeviceBuffer<T> smoothing(nq, st, "the smoothing lengths");
  DeviceBuffer<T> density;
  DeviceBuffer<GlobalId> neighborIds;
  DeviceBuffer<T> neighborDistances;
  if (results.density)
    density.allocate(nq, st, "the densities");
  if (results.neighborIds)
    neighborIds.allocate(std::size_t(nq) * k, st, "the neighbour lists");
  if (results.neighborDistances)
    neighborDistances.allocate(std::size_t(nq) * k, st, "the neighbour distances");
  DeviceOutputs<T> out;
  out.estimator = results.estimator;
  out.smoothingLength = smoothing.get();
  out.density = density.get();
  out.neighborIds = neighborIds.get();
  out.neighborDistances = neighborDistances.get();

  // The walk from the super nodes down; LeafToLeaf batch by batch.
  const int numPlanes = int(tree.planes.size());
  const Index numLeaves = tree.planes[0].numNodes;
  bool leafPassStarted = false;
  knnWalkCuda(
    tree, k, st, run.temp, info,
    [&](int p) { reportProgress(control, 0.3 + 0.1 * double(numPlanes - p) / numPlanes); },
    [&](const WalkLevel& leaves, Index first, Index last, const double* rmax2)
    {
      if (!leafPassStarted)
        run.timer.mark("node walks"); // with the leaf plane's radii, counts, first lists
      leafPassStarted = true;
      knnLeafWalkCuda(tree, k, first, last, leaves, rmax2, keys.get(), masses.get(), out, st);
      reportProgress(control, 0.4 + 0.5 * double(last) / double(numLeaves));
    });
  run.timer.mark("leaf walk");

  // Input-order outputs into the caller's arrays (staged unless pinned).
  if (results.smoothingLength)
    download(results.smoothingLength, smoothing.get(), nq, st);
  if (results.density)
    download(results.density, density.get(), nq, st);
  if (results.neighborIds)
    download(results.neighborIds, neighborIds.get(), std::size_t(nq) * k, st);
  if (results.neighborDistances)
    download(results.neighborDistances, neighborDistances.get(), std::size_t(nq) * k, st);
  run.timer.mark("output");
  run.finish(info, control);
}

template void knnCuda<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCuda<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
