// computeEmst's CUDA backend (the CPU's: EmstCpu.cpp): upload, z-order
// sort and tree (the CUDA tree of kNN, FoF and gravity), the global ids in
// sorted order, core distances from the CUDA kNN walk under mutual
// reachability, then Borůvka rounds until one component (or, with a finite
// maximum length, until no component has an edge left): per round the
// search (BoruvkaWalkCuda.cu) and the merge (BoruvkaComponentsCuda.cu).
// The edges are sorted on the device in the public order (weight, smaller
// id, larger id) and copied out as input indices. The edge set is the
// unique minimum under that order, with the CPU's weights bit for bit.
// Stage times from CUDA events into RunInfo.stageSeconds.
// Not on the GPU (they change the work, not the result): the CPU's first
// round from the kNN walk with K = 2, settled points, per-point lower bounds
// and runs of duplicates joined up front (emst/EmstCpu.cpp). If an edge ever
// differs from the CPU's, look at the pruning (BoruvkaNodeRules'
// beginReceiver and testPair, the leaf kernel's `low > bound` and
// `lq != leafLabel[d]` skips; the bound set to maxWeight2 everywhere
// isolates them), the ties (emstEdgeLess, the four passes of
// lightestChoiceKernel), the merge (hookKernel, linkKernel) and the core
// distances (coreDistances2, the kNN's kth2Sorted).
#include <cub/device/device_merge_sort.cuh>

#include <string>

#include "common/Progress.h"
#include "cuda/CudaDriver.cuh"
#include "emst/EmstBackends.h"
#include "emst/EmstCuda.cuh"
#include "knn/KnnCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
// At most this many rounds: every round at least halves the components that
// still have an edge, so 2^32 points need at most 33.
constexpr int kMaxRounds = 64;

// An edge of the output: squared weight, the endpoints' global ids (lo < hi)
// and input indices (a has id lo).
struct EdgeRecord
{
  double weight2;
  GlobalId lo, hi;
  Index a, b;
};

// The public order (EmstEdges): weight, smaller id, larger id.
struct EdgeRecordLess
{
  __device__ __forceinline__ bool operator()(const EdgeRecord& x, const EdgeRecord& y) const
  {
    if (x.weight2 != y.weight2)
      return x.weight2 < y.weight2;
    return x.lo != y.lo ? x.lo < y.lo : x.hi < y.hi;
  }
};

__global__ void edgeRecordsKernel(
  RoundEdges edges, Index m, const GlobalId* keys, const Index* sInput, EdgeRecord* out)
{
  for (unsigned long long i = globalThread(); i < m; i += gridThreads())
  {
    Index a = edges.a[i], b = edges.b[i];
    if (keys[b] < keys[a])
    {
      const Index t = a;
      a = b;
      b = t;
    }
    out[i] = EdgeRecord{ edges.weight2[i], keys[a], keys[b], sInput[a], sInput[b] };
  }
}

// core2 from sorted into input order.
__global__ void toInputOrderKernel(const Index* sInput, Index n, const double* sorted, double* out)
{
  for (unsigned long long s = globalThread(); s < n; s += gridThreads())
    out[sInput[s]] = sorted[s];
}

// The tree of the GPU's rounds: the CUDA kNN's leaves (the leaf kernel takes
// a block of 64 threads per leaf; tuning is for the GPU session).
TreeBuildOptions emstTreeOptionsCuda()
{
  return TreeBuildOptions();
}

// Squared distance to the minSamples-th nearest other point (the point
// itself counted first: K = minSamples + 1), per sorted point, exact.
template <class T>
void coreDistances2(const DeviceTree<T>& tree, int minSamples, const GlobalId* keys, double* core2,
  cudaStream_t st, TempStorage& temp, RunInfo& info)
{
  const int k = minSamples + 1;
  DeviceOutputs<T> out;
  out.kth2Sorted = core2;
  knnWalkCuda(tree, k, st, temp, info, std::function<void(int)>(),
    [&](const WalkLevel& leaves, Index first, Index last, const double* rmax2)
    { knnLeafWalkCuda(tree, k, first, last, leaves, rmax2, keys, nullptr, out, st); });
}

// The rounds' device state, owned.
struct RoundBuffers
{
  DeviceBuffer<Index> label;
  std::vector<DeviceBuffer<Index>> nodeLabel;
  std::vector<DeviceBuffer<double>> coreMin2, coreMax2;
  DeviceBuffer<float> compBound;
  DeviceBuffer<Index> choice;
  DeviceBuffer<double> choiceWeight2;
};

// The Borůvka rounds into `edges`; returns the number of edges.
template <class T>
Index boruvkaRounds(const DeviceTree<T>& tree, const EmstProblem<T>& problem, const GlobalId* keys,
  const double* core2, const RoundEdges& edges, cudaStream_t st, TempStorage& temp,
  StageTimer& timer, RunInfo& info, const RunControl& control)
{
  const Index n = tree.numSources;
  RoundBuffers b;
  b.label.allocate(n, st, "the EMST labels");
  b.compBound.allocate(n, st, "the EMST component bounds");
  b.choice.allocate(n, st, "the EMST choices");
  b.choiceWeight2.allocate(n, st, "the EMST choices");
  BoruvkaRoundState s;
  s.n = n;
  s.maxWeight2 = problem.maxLength * problem.maxLength;
  s.keys = keys;
  s.core2 = core2;
  s.label = b.label.get();
  s.compBound = b.compBound.get();
  s.choice = b.choice.get();
  s.choiceWeight2 = b.choiceWeight2.get();
  for (const DevicePlane<T>& plane : tree.planes)
  {
    b.nodeLabel.emplace_back(plane.numNodes, st, "the EMST node labels");
    s.nodeLabel.push_back(b.nodeLabel.back().get());
  }
  if (core2)
  {
    coreExtremesCuda(tree, core2, b.coreMin2, b.coreMax2, st);
    for (std::size_t p = 0; p < tree.planes.size(); ++p)
    {
      s.coreMin2.push_back(b.coreMin2[p].get());
      s.coreMax2.push_back(b.coreMax2[p].get());
    }
  }
  initialLabelsCuda(s.label, n, st);
  DeviceBuffer<Index> labelBefore; // device asserts only
  if (kDeviceAsserts)
    labelBefore.allocate(n, st, "the EMST label check");

  Index components = n, found = 0;
  int round = 0;
  for (;; ++round)
  {
    if (components <= 1)
      break;
    if (round == kMaxRounds)
      throw Error("internal error: the CUDA EMST has " + std::to_string(components) +
        " components after " + std::to_string(kMaxRounds) + " Borůvka rounds");
    reportProgress(control, 0.3 + 0.65 * double(found) / double(n));
    const std::string name = "round " + std::to_string(round);
    beginRoundCuda(tree, s, st);
    boruvkaSearchCuda(tree, s, st, temp, info);
    timer.mark((name + " search").c_str());
    if (kDeviceAsserts)
      JZ_CUDA_CHECK(cudaMemcpyAsync(
        labelBefore.get(), s.label, n * sizeof(Index), cudaMemcpyDeviceToDevice, st));
    const Index added = mergeComponentsCuda(s, edges, st, temp);
    if (kDeviceAsserts)
      checkRoundEdgesCuda(tree, s, labelBefore.get(), edges, found, found + added, st);
    const Index after = countComponentsCuda(s.label, n, st);
    timer.mark((name + " merge").c_str());
    info.counters.emplace_back("components " + std::to_string(round), double(components));
    // Every edge joins two components: a forest of merges, never a cycle.
    if (after != components - added)
      throw Error("internal error: a CUDA EMST round added " + std::to_string(added) +
        " edges but went from " + std::to_string(components) + " to " + std::to_string(after) +
        " components");
    components = after;
    found += added;
    if (added == 0)
    {
      if (s.maxWeight2 < kInfinity)
        break; // every component is final: the forest is complete
      throw Error("internal error: a CUDA EMST round added no edge");
    }
  }
  info.counters.emplace_back("boruvka rounds", double(round));
  if (s.maxWeight2 == kInfinity && found + 1 != n)
    throw Error("internal error: the CUDA EMST has " + std::to_string(found) + " edges for " +
      std::to_string(n) + " points");
  return found;
}

// The edges as output records (endpoints as input indices, smaller id first).
DeviceBuffer<EdgeRecord> edgeRecords(
  const RoundEdges& edges, Index m, const GlobalId* keys, const Index* sInput, cudaStream_t st)
{
  DeviceBuffer<EdgeRecord> records(m, st, "the EMST edges");
  if (m > 0)
  {
    edgeRecordsKernel<<<gridFor(m, 256), 256, 0, st>>>(edges, m, keys, sInput, records.get());
    JZ_CUDA_LAUNCH_CHECK("edgeRecordsKernel");
  }
  return records;
}

// The sorted records' fields, one array each, for the host's vectors.
__global__ void splitRecordsKernel(
  const EdgeRecord* records, Index m, Index* from, Index* to, double* weight2)
{
  for (unsigned long long i = globalThread(); i < m; i += gridThreads())
  {
    const EdgeRecord r = records[i];
    from[i] = r.a;
    to[i] = r.b;
    weight2[i] = r.weight2;
  }
}

// The records sorted in the public order, into `out`: split on the device
// and copied straight into the output vectors (half the bytes of the
// records, and no host-side copy of them).
void publishEdges(
  DeviceBuffer<EdgeRecord>& records, EmstEdges& out, cudaStream_t st, TempStorage& temp)
{
  const std::size_t m = records.size();
  if (m == 0)
    return;
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceMergeSort::SortKeys(
    nullptr, bytes, records.get(), (long long)m, EdgeRecordLess(), st));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceMergeSort::SortKeys(
    storage, bytes, records.get(), (long long)m, EdgeRecordLess(), st));
  DeviceBuffer<Index> from(m, st, "the EMST edges"), to(m, st, "the EMST edges");
  DeviceBuffer<double> weight2(m, st, "the EMST edges");
  splitRecordsKernel<<<gridFor(m, 256), 256, 0, st>>>(
    records.get(), Index(m), from.get(), to.get(), weight2.get());
  JZ_CUDA_LAUNCH_CHECK("splitRecordsKernel");
  records.release();
  downloadToVector(out.from, from.get(), m, st);
  downloadToVector(out.to, to.get(), m, st);
  downloadToVector(out.weight2, weight2.get(), m, st);
}
} // namespace
} // namespace cuda

template <class T>
void emstCuda(
  const EmstProblem<T>& problem, EmstEdges& out, RunInfo& info, const RunControl& control)
{
  using namespace cuda;
  out = EmstEdges{};
  if (problem.numPoints == 0)
    return;
  checkPointCount(problem.numPoints);
  const Index n = Index(problem.numPoints);
  const bool mutual = problem.metric == EmstMetric::MutualReachability;
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  DeviceRun run;
  const cudaStream_t st = run.st();
  DeviceTree<T> tree;
  run.buildTree(problem.points, n, static_cast<const T*>(nullptr), 0, per, problem.boxLo,
    emstTreeOptionsCuda(), tree);
  reportProgress(control, 0.2);

  const DeviceBuffer<GlobalId> keys =
    sortedKeys(tree.sInput.get(), n, problem.ids, st, "the EMST keys");
  DeviceBuffer<double> core2;
  if (mutual)
  {
    core2.allocate(n, st, "the core distances");
    coreDistances2(tree, problem.minSamples, keys.get(), core2.get(), st, run.temp, info);
    run.timer.mark("core distances");
  }
  reportProgress(control, 0.3);

  const Index capacity = n - 1;
  DeviceBuffer<Index> edgeA(capacity, st, "the EMST edges");
  DeviceBuffer<Index> edgeB(capacity, st, "the EMST edges");
  DeviceBuffer<double> edgeW(capacity, st, "the EMST edges");
  DeviceBuffer<unsigned long long> count(1, st, "the EMST edge count");
  JZ_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), st));
  const RoundEdges edges{ edgeA.get(), edgeB.get(), edgeW.get(), capacity, count.get() };
  const Index m = boruvkaRounds(
    tree, problem, keys.get(), core2.get(), edges, st, run.temp, run.timer, info, control);

  DeviceBuffer<EdgeRecord> records = edgeRecords(edges, m, keys.get(), tree.sInput.get(), st);
  edgeA.release(); // the lists are records now: a lower peak for the sort
  edgeB.release();
  edgeW.release();
  publishEdges(records, out, st, run.temp);
  if (mutual)
  {
    DeviceBuffer<double> inputCore2(n, st, "the core distances");
    toInputOrderKernel<<<gridFor(n, 256), 256, 0, st>>>(
      tree.sInput.get(), n, core2.get(), inputCore2.get());
    JZ_CUDA_LAUNCH_CHECK("toInputOrderKernel");
    downloadToVector(out.core2, inputCore2.get(), n, st);
  }
  run.timer.mark("publish");
  run.finish(info, control);
}

template void emstCuda<float>(const EmstProblem<float>&, EmstEdges&, RunInfo&, const RunControl&);
template void emstCuda<double>(const EmstProblem<double>&, EmstEdges&, RunInfo&, const RunControl&);
} // namespace jz
