// Node-to-node interactions of the kNN walk on the GPU (§III-B, §III-C,
// Algorithms 2 and 3): per plane FindRmax, Count, exclusive scan, Insert, and
// a segmented sort of every node's list by lower bound for the early exit.
//
// One thread per receiving node; the children of one parent are adjacent
// threads and read the same parent list entries (broadcast loads). Bounds
// come from the host/device-shared jz::boxDistanceLow2/High2 and
// jz::RadiusOfCountHeap, so the pruning is exactly that of the CPU backend.
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <vector>

#include "WalkCuda.cuh"
#include "jz/NeighborHeap.h"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kThreads = 128;

template <class T>
struct NodeWalkArgs
{
  Index numNodes;
  const Index* sourceSplit;
  const Index* querySplit;
  const Box<T>* sourceBox;
  const Box<T>* queryBox;
  const Index* parentOf;
  const Index* parentChildSplit;
  const unsigned long long* parentOffset;
  const Index* parentSource;
  const double* parentLow2;
  Periodicity per;
  unsigned long long k;
  double* rmax2;
  unsigned long long* count;        // Count pass: per-node list length
  const unsigned long long* offset; // Insert pass: list offsets
  Index* outSource;
  double* outLow2;
};

template <class T, bool kInsert>
__global__ void __launch_bounds__(kThreads) nodeWalkKernel(NodeWalkArgs<T> a)
{
  const Index c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= a.numNodes)
    return;
  if (a.querySplit[c + 1] == a.querySplit[c])
  {
    if (!kInsert)
    {
      a.count[c] = 0;
      a.rmax2[c] = kInfinity;
    }
    return;
  }
  const Box<T> qb = a.queryBox[c];
  const Index pi = a.parentOf[c];
  const unsigned long long e0 = a.parentOffset[pi], e1 = a.parentOffset[pi + 1];
  double r2;
  if (!kInsert)
  {
    // FindRmax (Algorithm 3): an upper bound on the K-th neighbour distance.
    RadiusOfCountHeap heap;
    heap.init(a.k);
    double radius = kInfinity;
    for (unsigned long long e = e0; e < e1; ++e)
    {
      if (a.parentLow2[e] > radius)
        break; // early exit (III-D)
      const Index pj = a.parentSource[e];
      for (Index d = a.parentChildSplit[pj]; d < a.parentChildSplit[pj + 1]; ++d)
      {
        const Index ns = a.sourceSplit[d + 1] - a.sourceSplit[d];
        if (ns == 0)
          continue;
        const double dr2 = boxDistanceHigh2(qb, a.sourceBox[d], a.per);
        if (dr2 < radius)
        {
          heap.insert(dr2, ns);
          radius = heap.radius2();
        }
      }
    }
    a.rmax2[c] = radius;
    r2 = radius;
  }
  else
  {
    r2 = a.rmax2[c];
  }
  // Count / Insert: every source child whose lower bound is within the radius.
  unsigned long long n = 0;
  const unsigned long long base = kInsert ? a.offset[c] : 0;
  const unsigned long long limit = kInsert ? a.offset[c + 1] - base : 0;
  for (unsigned long long e = e0; e < e1; ++e)
  {
    if (a.parentLow2[e] > r2)
      break;
    const Index pj = a.parentSource[e];
    for (Index d = a.parentChildSplit[pj]; d < a.parentChildSplit[pj + 1]; ++d)
    {
      if (a.sourceSplit[d + 1] == a.sourceSplit[d])
        continue;
      const double l2 = boxDistanceLow2(qb, a.sourceBox[d], a.per);
      if (l2 <= r2)
      {
        if (kInsert && n < limit)
        {
          a.outSource[base + n] = d;
          a.outLow2[base + n] = l2;
        }
        ++n;
      }
    }
  }
  if (!kInsert)
    a.count[c] = n;
}

__global__ void parentOfKernel(const Index* childSplit, Index parents, Index* parentOf)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= parents)
    return;
  for (Index c = childSplit[j]; c < childSplit[j + 1]; ++c)
    parentOf[c] = j;
}
} // namespace

void denseTopList(Index topNodes, Index group, DeviceList& list, DeviceBuffer<Index>& parentOf,
  DeviceBuffer<Index>& parentChildSplit, cudaStream_t stream)
{
  std::vector<Index> split;
  for (Index i = 0; i < topNodes; i += group)
    split.push_back(i);
  split.push_back(topNodes);
  const Index supers = Index(split.size() - 1);
  std::vector<Index> owner(topNodes);
  for (Index c = 0; c < topNodes; ++c)
    owner[c] = c / group;
  std::vector<unsigned long long> offset(std::size_t(supers) + 1);
  for (Index i = 0; i <= supers; ++i)
    offset[i] = (unsigned long long)i * supers;
  std::vector<Index> source(std::size_t(supers) * supers);
  for (std::size_t j = 0; j < source.size(); ++j)
    source[j] = Index(j % supers);
  std::vector<double> low2(source.size(), 0.0);

  list.numReceivers = supers;
  list.size = source.size();
  list.offset.allocate(offset.size(), "the top interaction list");
  list.source.allocate(source.size(), "the top interaction list");
  list.low2.allocate(low2.size(), "the top interaction list");
  list.offset.upload(offset.data(), offset.size(), stream);
  list.source.upload(source.data(), source.size(), stream);
  list.low2.upload(low2.data(), low2.size(), stream);
  parentOf.allocate(topNodes, "the parent map");
  parentOf.upload(owner.data(), owner.size(), stream);
  parentChildSplit.allocate(split.size(), "the parent map");
  parentChildSplit.upload(split.data(), split.size(), stream);
  // The host vectors die here: wait for the copies.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

template <class T>
void parentsOfChildren(
  const DeviceTree<T>& tree, int p, DeviceBuffer<Index>& parentOf, cudaStream_t stream)
{
  const DevicePlane<T>& plane = tree.planes[p];
  parentOf.allocate(tree.planes[p - 1].numNodes, "the parent map");
  parentOfKernel<<<blocksFor(plane.numNodes, kThreads), kThreads, 0, stream>>>(
    plane.childSplit.get(), plane.numNodes, parentOf.get());
  JZ_CUDA_LAUNCH_CHECK("parentOfKernel");
}

template <class T>
void nodeWalkCuda(const DeviceTree<T>& tree, int p, int k, const Index* parentOf,
  const Index* parentChildSplit, const DeviceList& parents, DeviceList& out,
  DeviceBuffer<double>& rmax2, cudaStream_t stream, TempStorage& temp)
{
  const DevicePlane<T>& plane = tree.planes[p];
  const Index nodes = plane.numNodes;
  NodeWalkArgs<T> a;
  a.numNodes = nodes;
  a.sourceSplit = plane.sourceSplit.get();
  a.querySplit = plane.querySplit();
  a.sourceBox = plane.sourceBox.get();
  a.queryBox = plane.queryBox();
  a.parentOf = parentOf;
  a.parentChildSplit = parentChildSplit;
  a.parentOffset = parents.offset.get();
  a.parentSource = parents.source.get();
  a.parentLow2 = parents.low2.get();
  a.per = tree.periodicity;
  a.k = (unsigned long long)k;

  rmax2.allocate(nodes, "the node radii");
  out = DeviceList();
  out.numReceivers = nodes;
  out.offset.allocate(std::size_t(nodes) + 1, "the interaction list offsets");
  a.rmax2 = rmax2.get();
  a.count = out.offset.get();
  a.offset = nullptr;
  a.outSource = nullptr;
  a.outLow2 = nullptr;
  // Count (with FindRmax); the extra last count is zero so the exclusive scan
  // leaves the total in offset[nodes].
  check(cudaMemsetAsync(out.offset.get() + nodes, 0, sizeof(unsigned long long), stream),
    "cudaMemsetAsync");
  nodeWalkKernel<T, false><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(a);
  JZ_CUDA_LAUNCH_CHECK("nodeWalkKernel<Count>");
  {
    std::size_t bytes = 0;
    JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      nullptr, bytes, out.offset.get(), out.offset.get(), (long long)nodes + 1, stream));
    void* storage = temp.get(bytes);
    JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      storage, bytes, out.offset.get(), out.offset.get(), (long long)nodes + 1, stream));
  }
  const unsigned long long total = fetchValue(out.offset.get() + nodes, stream);
  out.size = total;
  if (total == 0)
    return;

  // Insert into unsorted buffers, then sort each node's segment by low2.
  DeviceBuffer<Index> srcUnsorted(total, "the interaction list");
  DeviceBuffer<double> lowUnsorted(total, "the interaction list");
  a.count = nullptr;
  a.offset = out.offset.get();
  a.outSource = srcUnsorted.get();
  a.outLow2 = lowUnsorted.get();
  nodeWalkKernel<T, true><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(a);
  JZ_CUDA_LAUNCH_CHECK("nodeWalkKernel<Insert>");
  out.source.allocate(total, "the interaction list");
  out.low2.allocate(total, "the interaction list");
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(nullptr, bytes, lowUnsorted.get(),
    out.low2.get(), srcUnsorted.get(), out.source.get(), (long long)total, (long long)nodes,
    out.offset.get(), out.offset.get() + 1, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(storage, bytes, lowUnsorted.get(),
    out.low2.get(), srcUnsorted.get(), out.source.get(), (long long)total, (long long)nodes,
    out.offset.get(), out.offset.get() + 1, stream));
  // The unsorted buffers are freed on return.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

template void nodeWalkCuda<float>(const DeviceTree<float>&, int, int, const Index*, const Index*,
  const DeviceList&, DeviceList&, DeviceBuffer<double>&, cudaStream_t, TempStorage&);
template void nodeWalkCuda<double>(const DeviceTree<double>&, int, int, const Index*, const Index*,
  const DeviceList&, DeviceList&, DeviceBuffer<double>&, cudaStream_t, TempStorage&);
template void parentsOfChildren<float>(
  const DeviceTree<float>&, int, DeviceBuffer<Index>&, cudaStream_t);
template void parentsOfChildren<double>(
  const DeviceTree<double>&, int, DeviceBuffer<Index>&, cudaStream_t);
} // namespace cuda
} // namespace jz
