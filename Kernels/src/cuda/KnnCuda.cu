// computeKnn's CUDA backend: upload, z-order sort and tree build, node walks
// per plane, LeafToLeaf with in-kernel reduction, input-order output.
// Results are bit-identical to the CPU backend (same ranking, same double
// arithmetic; this file and the kernels are compiled with --fmad=false).
#include <string>

#include "../KnnBackends.h"
#include "WalkCuda.cuh"

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

void progress(const RunControl& control, double f)
{
  if (control.progress && !control.progress(f))
    throw Aborted();
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
  TempStorage temp;
  StageTimer timer(st);
  timer.mark("start");

  // Sort and tree (stages "upload", "sort", "tree").
  DeviceTree<T> tree;
  buildTreeCuda(
    problem.sources, ns, problem.queries, self ? 0 : nq, per, problem.boxLo, tree, st, temp, timer);
  progress(control, 0.3);

  // Tie-breaking keys and masses in sorted source order.
  DeviceBuffer<GlobalId> keys(ns, "the source keys");
  {
    DeviceBuffer<GlobalId> ids;
    if (problem.sourceIds)
    {
      ids.allocate(ns, "the source ids");
      ids.upload(problem.sourceIds, ns, st);
    }
    gatherKeysKernel<<<blocksFor(ns, 256), 256, 0, st>>>(
      tree.sInput.get(), ns, ids.get(), keys.get());
    JZ_CUDA_LAUNCH_CHECK("gatherKeysKernel");
    JZ_CUDA_CHECK(cudaStreamSynchronize(st));
  }
  DeviceBuffer<double> masses;
  if (problem.sourceMasses && results.density)
  {
    DeviceBuffer<double> m(ns, "the source masses");
    m.upload(problem.sourceMasses, ns, st);
    masses.allocate(ns, "the source masses");
    gatherMassKernel<<<blocksFor(ns, 256), 256, 0, st>>>(
      tree.sInput.get(), ns, m.get(), masses.get());
    JZ_CUDA_LAUNCH_CHECK("gatherMassKernel");
    JZ_CUDA_CHECK(cudaStreamSynchronize(st));
  }

  // Node walks from the virtual plane of super nodes down to the leaves.
  const int numPlanes = int(tree.planes.size());
  DeviceList list;
  DeviceBuffer<Index> parentOf, topChildSplit;
  denseTopList(tree.planes[numPlanes - 1].numNodes, 32, list, parentOf, topChildSplit, st);
  const Index* parentChildSplit = topChildSplit.get();
  DeviceBuffer<double> rmax2;
  for (int p = numPlanes - 1; p >= 0; --p)
  {
    DeviceList next;
    nodeWalkCuda(tree, p, k, parentOf.get(), parentChildSplit, list, next, rmax2, st, temp);
    list = std::move(next);
    info.counters.emplace_back("interactions plane " + std::to_string(p), double(list.size));
    if (p > 0)
    {
      parentsOfChildren(tree, p, parentOf, st);
      parentChildSplit = tree.planes[p].childSplit.get();
    }
    progress(control, 0.3 + 0.1 * double(numPlanes - p) / numPlanes);
  }
  timer.mark("node walks");

  // LeafToLeaf into device outputs in input order.
  DeviceBuffer<T> smoothing(nq, "the smoothing lengths");
  DeviceBuffer<T> density;
  DeviceBuffer<GlobalId> neighborIds;
  DeviceBuffer<T> neighborDistances;
  if (results.density)
    density.allocate(nq, "the densities");
  if (results.neighborIds)
    neighborIds.allocate(std::size_t(nq) * k, "the neighbour lists");
  if (results.neighborDistances)
    neighborDistances.allocate(std::size_t(nq) * k, "the neighbour distances");
  DeviceOutputs<T> out;
  out.estimator = results.estimator;
  out.smoothingLength = smoothing.get();
  out.density = density.get();
  out.neighborIds = neighborIds.get();
  out.neighborDistances = neighborDistances.get();
  leafWalkCuda(tree, k, list, rmax2.get(), keys.get(), masses.get(), out, st);
  timer.mark("leaf walk");

  if (results.smoothingLength)
    smoothing.download(results.smoothingLength, nq, st);
  if (results.density)
    density.download(results.density, nq, st);
  if (results.neighborIds)
    neighborIds.download(results.neighborIds, std::size_t(nq) * k, st);
  if (results.neighborDistances)
    neighborDistances.download(results.neighborDistances, std::size_t(nq) * k, st);
  timer.mark("output");
  JZ_CUDA_CHECK(cudaStreamSynchronize(st));
  timer.report(info.stageSeconds);
  progress(control, 1.0);
}

template void knnCuda<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCuda<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
