// computeKnn's CUDA backend: upload, z-order sort and tree build, node walks
// per plane, LeafToLeaf with in-kernel reduction, input-order output.
// Results are bit-identical to the CPU backend (same ranking, same double
// arithmetic; this file and the kernels are compiled with --fmad=false).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "../KnnBackends.h"
#include "KnnCuda.cuh"

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

// Entries of the leaf plane's interaction lists held at once: the leaves are
// walked in batches whose lists fit (16 bytes per entry while sorting, so at
// most 1 GiB), and a large N needs no more GPU memory per point than a small
// one. JZ_CUDA_LEAF_BATCH_ENTRIES overrides it (tests, tuning).
unsigned long long leafListBudget()
{
  const char* env = std::getenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
  const unsigned long long v = env ? std::strtoull(env, nullptr, 10) : 0;
  return v > 0 ? v : (1ull << 26);
}

// Batches [cuts[b], cuts[b+1]) of the leaves whose lists fit the budget (a
// leaf with a longer list forms a batch of its own).
std::vector<Index> leafBatches(const DeviceList& list, cudaStream_t stream)
{
  const Index leaves = list.numReceivers;
  const unsigned long long budget = leafListBudget();
  if (list.size <= budget)
    return { 0, leaves };
  std::vector<unsigned long long> offset(std::size_t(leaves) + 1);
  download(offset.data(), list.offset.get(), offset.size(), stream);
  std::vector<Index> cuts{ 0 };
  for (Index b = 0; b < leaves;)
  {
    const auto end = std::upper_bound(offset.begin() + b + 1, offset.end(), offset[b] + budget);
    Index e = Index(end - offset.begin()) - 1;
    if (e <= b)
      e = b + 1;
    cuts.push_back(e);
    b = e;
  }
  return cuts;
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
  progress(control, 0.3);

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

  // Node walks from the virtual plane of super nodes down to the leaves'
  // radii and list lengths.
  const int numPlanes = int(tree.planes.size());
  DeviceList list, leafList;
  DeviceBuffer<Index> parentOf, topChildSplit;
  denseTopList(tree.planes[numPlanes - 1].numNodes, list, parentOf, topChildSplit, st);
  const Index* parentChildSplit = topChildSplit.get();
  DeviceBuffer<double> rmax2;
  for (int p = numPlanes - 1; p >= 0; --p)
  {
    const KnnParents parents{ parentOf.get(), parentChildSplit, &list };
    DeviceList& next = p == 0 ? leafList : list;
    DeviceList counted;
    knnCountPlane(tree, p, k, parents, counted, rmax2, st, temp);
    info.counters.emplace_back("interactions plane " + std::to_string(p), double(counted.size));
    if (p > 0)
      knnInsertPlane(tree, p, parents, rmax2.get(), 0, counted.numReceivers, counted, st, temp);
    next = std::move(counted);
    if (p > 0)
    {
      parentsOfChildren(tree, p, parentOf, st);
      parentChildSplit = tree.planes[p].childSplit.get();
    }
    progress(control, 0.3 + 0.1 * double(numPlanes - p) / numPlanes);
  }
  timer.mark("node walks");

  // LeafToLeaf into device outputs in input order, batch by batch.
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
  const std::vector<Index> cuts = leafBatches(leafList, st);
  info.counters.emplace_back("gpu leaf batches", double(cuts.size() - 1));
  const KnnParents leafParents{ parentOf.get(), parentChildSplit, &list };
  for (std::size_t b = 0; b + 1 < cuts.size(); ++b)
  {
    knnInsertPlane(tree, 0, leafParents, rmax2.get(), cuts[b], cuts[b + 1], leafList, st, temp);
    knnLeafWalkCuda(
      tree, k, cuts[b], cuts[b + 1], leafList, rmax2.get(), keys.get(), masses.get(), out, st);
    progress(control, 0.4 + 0.5 * double(b + 1) / double(cuts.size() - 1));
  }
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
  progress(control, 1.0);
}

template void knnCuda<float>(
  const KnnProblem<float>&, const KnnResults<float>&, RunInfo&, const RunControl&);
template void knnCuda<double>(
  const KnnProblem<double>&, const KnnResults<double>&, RunInfo&, const RunControl&);
} // namespace jz
