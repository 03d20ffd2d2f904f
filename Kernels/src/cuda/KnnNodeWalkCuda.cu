// Node-to-node interactions of the kNN walk on the GPU (paper III-B, III-C,
// Algorithms 2 and 3): per plane FindRmax, Count, exclusive scan, Insert, and
// a segmented sort of every node's list by lower bound for the early exit.
// Insert and sort may run for a range of receivers at a time (the leaf plane
// is walked in batches, so its lists never exist whole); the sort sorts in
// place between two buffers (CUB's DoubleBuffer), 16 bytes per entry at peak.
//
// One thread per receiving node; the children of one parent are adjacent
// threads and read the same parent list entries (broadcast loads). Bounds
// come from the host/device-shared jz::boxDistanceLow2/High2 and
// jz::RadiusOfCountHeap, so the pruning is exactly that of the CPU backend.
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <vector>

#include "KnnCuda.cuh"
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
  Index first, last; // receivers of this launch
  const Index* sourceSplit;
  const Index* querySplit;
  const Box<T>* sourceBox;
  const Box<T>* queryBox;
  const Index* parentOf;
  const Index* parentChildSplit;
  const unsigned long long* parentOffset;
  unsigned long long parentBase;
  const Index* parentSource;
  const float* parentLow2;
  Periodicity per;
  unsigned long long k;
  double* rmax2;
  unsigned long long* count;        // Count pass: per-node list length
  const unsigned long long* offset; // Insert pass: list offsets
  unsigned long long base;          // Insert pass: offset of the first entry held
  Index* outSource;
  float* outLow2;
};

template <class T, bool kInsert>
__global__ void __launch_bounds__(kThreads) nodeWalkKernel(NodeWalkArgs<T> a)
{
  const unsigned long long cc = a.first + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (cc >= a.last)
    return;
  const Index c = Index(cc);
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
  const unsigned long long e0 = a.parentOffset[pi] - a.parentBase;
  const unsigned long long e1 = a.parentOffset[pi + 1] - a.parentBase;
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
  const unsigned long long at = kInsert ? a.offset[c] - a.base : 0;
  const unsigned long long limit = kInsert ? a.offset[c + 1] - a.offset[c] : 0;
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
          a.outSource[at + n] = d;
          a.outLow2[at + n] = __double2float_rd(l2); // a lower bound still
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

// Segment offsets of the receivers [first, last] relative to the first one.
__global__ void localOffsetsKernel(
  const unsigned long long* offset, Index count, unsigned long long base, unsigned long long* out)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j <= count)
    out[j] = offset[j] - base;
}

template <class T>
NodeWalkArgs<T> nodeWalkArgs(const DeviceTree<T>& tree, int p, const KnnParents& parents, int k)
{
  const DevicePlane<T>& plane = tree.planes[p];
  NodeWalkArgs<T> a{};
  a.sourceSplit = plane.sourceSplit.get();
  a.querySplit = plane.querySplit();
  a.sourceBox = plane.sourceBox.get();
  a.queryBox = plane.queryBox();
  a.parentOf = parents.parentOf;
  a.parentChildSplit = parents.parentChildSplit;
  a.parentOffset = parents.list->offset.get();
  a.parentBase = parents.list->base;
  a.parentSource = parents.list->source.get();
  a.parentLow2 = parents.list->low2.get();
  a.per = tree.periodicity;
  a.k = (unsigned long long)k;
  return a;
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
  std::vector<float> low2(source.size(), 0.0f);

  list = DeviceList();
  list.numReceivers = supers;
  list.size = source.size();
  list.offset.allocate(offset.size(), stream, "the top interaction list");
  list.source.allocate(source.size(), stream, "the top interaction list");
  list.low2.allocate(low2.size(), stream, "the top interaction list");
  list.offset.upload(offset.data(), offset.size());
  list.source.upload(source.data(), source.size());
  list.low2.upload(low2.data(), low2.size());
  parentOf.allocate(topNodes, stream, "the parent map");
  parentOf.upload(owner.data(), owner.size());
  parentChildSplit.allocate(split.size(), stream, "the parent map");
  parentChildSplit.upload(split.data(), split.size());
  // The host vectors die here: wait for the copies.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

template <class T>
void parentsOfChildren(
  const DeviceTree<T>& tree, int p, DeviceBuffer<Index>& parentOf, cudaStream_t stream)
{
  const DevicePlane<T>& plane = tree.planes[p];
  parentOf.allocate(tree.planes[p - 1].numNodes, stream, "the parent map");
  parentOfKernel<<<blocksFor(plane.numNodes, kThreads), kThreads, 0, stream>>>(
    plane.childSplit.get(), plane.numNodes, parentOf.get());
  JZ_CUDA_LAUNCH_CHECK("parentOfKernel");
}

template <class T>
void knnCountPlane(const DeviceTree<T>& tree, int p, int k, const KnnParents& parents,
  DeviceList& out, DeviceBuffer<double>& rmax2, cudaStream_t stream, TempStorage& temp)
{
  const Index nodes = tree.planes[p].numNodes;
  out = DeviceList();
  out.numReceivers = nodes;
  out.offset.allocate(std::size_t(nodes) + 1, stream, "the interaction list offsets");
  rmax2.allocate(nodes, stream, "the node radii");
  NodeWalkArgs<T> a = nodeWalkArgs(tree, p, parents, k);
  a.first = 0;
  a.last = nodes;
  a.rmax2 = rmax2.get();
  a.count = out.offset.get();
  // The extra last count is zero so the exclusive scan leaves the total in
  // offset[nodes].
  check(cudaMemsetAsync(out.offset.get() + nodes, 0, sizeof(unsigned long long), stream),
    "cudaMemsetAsync");
  if (nodes > 0)
  {
    nodeWalkKernel<T, false><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(a);
    JZ_CUDA_LAUNCH_CHECK("nodeWalkKernel<Count>");
  }
  unsigned long long* offset = out.offset.get();
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(
    cub::DeviceScan::ExclusiveSum(nullptr, bytes, offset, offset, (long long)nodes + 1, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(
    cub::DeviceScan::ExclusiveSum(storage, bytes, offset, offset, (long long)nodes + 1, stream));
  out.size = fetchValue(offset + nodes, stream);
}

template <class T>
void knnInsertPlane(const DeviceTree<T>& tree, int p, const KnnParents& parents,
  const double* rmax2, Index first, Index last, DeviceList& out, cudaStream_t stream,
  TempStorage& temp)
{
  unsigned long long range[2];
  JZ_CUDA_CHECK(cudaMemcpyAsync(
    range, out.offset.get() + first, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  JZ_CUDA_CHECK(cudaMemcpyAsync(range + 1, out.offset.get() + last, sizeof(unsigned long long),
    cudaMemcpyDeviceToHost, stream));
  JZ_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned long long entries = range[1] - range[0];
  out.base = range[0];
  out.source.release();
  out.low2.release();
  if (entries == 0)
    return;
  // Insert into one pair of buffers, then sort each list by lower bound
  // between the two (overwriting; CUB's scratch is then small).
  DeviceBuffer<Index> sourceA(entries, stream, "the interaction list");
  DeviceBuffer<float> lowA(entries, stream, "the interaction list");
  NodeWalkArgs<T> a = nodeWalkArgs(tree, p, parents, 0);
  a.first = first;
  a.last = last;
  a.rmax2 = const_cast<double*>(rmax2); // read only in the Insert pass
  a.offset = out.offset.get();
  a.base = out.base;
  a.outSource = sourceA.get();
  a.outLow2 = lowA.get();
  nodeWalkKernel<T, true><<<blocksFor(last - first, kThreads), kThreads, 0, stream>>>(a);
  JZ_CUDA_LAUNCH_CHECK("nodeWalkKernel<Insert>");

  const Index segments = last - first;
  DeviceBuffer<unsigned long long> local;
  const unsigned long long* segmentOffset = out.offset.get() + first;
  if (out.base != 0)
  {
    local.allocate(std::size_t(segments) + 1, stream, "the list offsets");
    localOffsetsKernel<<<blocksFor(std::size_t(segments) + 1, kThreads), kThreads, 0, stream>>>(
      out.offset.get() + first, segments, out.base, local.get());
    JZ_CUDA_LAUNCH_CHECK("localOffsetsKernel");
    segmentOffset = local.get();
  }
  DeviceBuffer<Index> sourceB(entries, stream, "the interaction list");
  DeviceBuffer<float> lowB(entries, stream, "the interaction list");
  cub::DoubleBuffer<float> keys(lowA.get(), lowB.get());
  cub::DoubleBuffer<Index> values(sourceA.get(), sourceB.get());
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(nullptr, bytes, keys, values,
    (long long)entries, (long long)segments, segmentOffset, segmentOffset + 1, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(storage, bytes, keys, values,
    (long long)entries, (long long)segments, segmentOffset, segmentOffset + 1, stream));
  // Keep the buffers the sort ended in; the others are freed in stream order.
  out.low2 = std::move(keys.Current() == lowA.get() ? lowA : lowB);
  out.source = std::move(values.Current() == sourceA.get() ? sourceA : sourceB);
}

template void knnCountPlane<float>(const DeviceTree<float>&, int, int, const KnnParents&,
  DeviceList&, DeviceBuffer<double>&, cudaStream_t, TempStorage&);
template void knnCountPlane<double>(const DeviceTree<double>&, int, int, const KnnParents&,
  DeviceList&, DeviceBuffer<double>&, cudaStream_t, TempStorage&);
template void knnInsertPlane<float>(const DeviceTree<float>&, int, const KnnParents&, const double*,
  Index, Index, DeviceList&, cudaStream_t, TempStorage&);
template void knnInsertPlane<double>(const DeviceTree<double>&, int, const KnnParents&,
  const double*, Index, Index, DeviceList&, cudaStream_t, TempStorage&);
template void parentsOfChildren<float>(
  const DeviceTree<float>&, int, DeviceBuffer<Index>&, cudaStream_t);
template void parentsOfChildren<double>(
  const DeviceTree<double>&, int, DeviceBuffer<Index>&, cudaStream_t);
} // namespace cuda
} // namespace jz
