// computeKnn's CUDA backend: upload, z-order sort and tree build, node walks
// per plane, LeafToLeaf with in-kernel reduction, input-order output.
// Results are bit-identical to the CPU backend (same ranking, same double
// arithmetic; this file and the kernels are compiled with --fmad=false).
#include <string>

#include "common/Progress.h"
#include "knn/KnnBackends.h"
#include "knn/KnnCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
__global__ void gatherKeysKernel(const Index* sInput, Index n, const GlobalId* ids, GlobalId* keys)
{
  const Index s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n)
    return;
  const Index in = sInput[s];
  keys[s] = ids ? ids[in] : GlobalId(in);
}

__global__ void gatherMassKernel(const Index* sInput, Index n, const double* m, double* out)
{
  const Index s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n)
    return;
  out[s] = m[sInput[s]];
}

} // namespace
} // namespace cuda

template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control)
{
  using namespace cuda;
  const bool self = problem.queries == nullptr;
  const std::size_t numQueries = self ? problem.numSources : problem.numQueries;
  if (numQueries == 0)
    return;
  const std::size_t total = problem.numSources + (self ? 0 : numQueries);
  if (total >= std::size_t(0xFFFFFFFFu))
  {
    throw Error("too many points for one process: " + std::to_string(total));
  }
  const Index ns = Index(problem.numSources);
  const Index nq = Index(numQueries);
  const int k = problem.k;

  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  Stream stream;
  const cudaStream_t st = stream.get();
  PoolScope pool(st); // before every device buffer of the run
  TempStorage temp(st);
  StageTimer timer(st);
  timer.mark("start");

  // Sort and tree (stages "upload", "sort", "tree").
  DeviceTree<T> tree;
  buildTreeCuda(problem.sources, ns, problem.queries, self ? 0 : nq, per, problem.boxLo,
    TreeBuildOptions(), tree, st, temp, timer);
  reportProgress(control, 0.3);

  // Tie-breaking keys and masses in sorted source order.
  DeviceBuffer<GlobalId> keys(ns, st, "the source keys");
  {
    DeviceBuffer<GlobalId> ids;
    if (problem.sourceIds)
    {
      ids.allocate(ns, st, "the source ids");
      ids.upload(problem.sourceIds, ns);
    }
    gatherKeysKernel<<<blocksFor(ns, 256), 256, 0, st>>>(
      tree.sInput.get(), ns, ids.get(), keys.get());
    JZ_CUDA_LAUNCH_CHECK("gatherKeysKernel");
  }
  DeviceBuffer<double> masses;
  if (problem.sourceMasses && results.density)
  {
    DeviceBuffer<double> m(ns, st, "the source masses");
    m.upload(problem.sourceMasses, ns);
    masses.allocate(ns, st, "the source masses");
    gatherMassKernel<<<blocksFor(ns, 256), 256, 0, st>>>(
      tree.sInput.get(), ns, m.get(), masses.get());
    JZ_CUDA_LAUNCH_CHECK("gatherMassKernel");
  }

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
    tree, k, st, temp, info,
    [&](int p) { reportProgress(control, 0.3 + 0.1 * double(numPlanes - p) / numPlanes); },
    [&](const WalkLevel& leaves, Index first, Index last, const double* rmax2)
    {
      if (!leafPassStarted)
        timer.mark("node walks"); // with the leaf plane's radii, counts, first lists
      leafPassStarted = true;
      knnLeafWalkCuda(tree, k, first, last, leaves, rmax2, keys.get(), masses.get(), out, st);
      reportProgress(control, 0.4 + 0.5 * double(last) / double(numLeaves));
    });
  timer.mark("leaf walk");

  // Input-order outputs into the caller's arrays (staged unless pinned).
  if (results.smoothingLength)
    download(results.smoothingLength, smoothing.get(), nq, st);
  if (results.density)
    download(results.density, density.get(), nq, st);
  if (results.neighborIds)
    download(results.neighborIds, neighborIds.get(), std::size_t(nq) * k, st);
  if (results.neighborDistances)
    download(results.neighborDistances, neighborDistances.get(), std::size_t(nq) * k, st);
  timer.mark("output");
  JZ_CUDA_CHECK(cudaStreamSynchronize(st));
  timer.report(info.stageSeconds);
  info.counters.emplace_back("gpu peak bytes", double(pool.peakBytes()));
  reportProgress(control, 1.0);
}

template void knnCuda<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCuda<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
