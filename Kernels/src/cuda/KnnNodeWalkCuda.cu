// Node-to-node interactions of the kNN walk on the GPU (§III-B, §III-C,
// Algorithms 2 and 3) as a policy of the dual walk (DualWalkCuda.cuh): the
// work items are a plane's receiving nodes, so the lists come out in CSR form.
// The Count pass runs FindRmax first (the K-th neighbour radius bound of the
// node, its per-node state), the node-pair test keeps every source child
// whose lower bound is within that radius, and after Insert a segmented sort
// orders each node's list by lower bound for the early exit (§III-D). Insert
// and sort may run for a range of receivers at a time (the leaf plane is
// walked in batches, so its lists never exist whole); the sort sorts in place
// between two buffers (CUB's DoubleBuffer), 16 bytes per entry at peak.
//
// One thread per receiving node; the children of one parent are adjacent
// threads and read the same parent list entries (broadcast loads). Bounds
// come from the host/device-shared jz::boxDistanceLow2/High2 and
// jz::RadiusOfCountHeap, so the pruning is exactly that of the CPU backend.
#include <cub/device/device_segmented_sort.cuh>

#include <vector>

#include "DualWalkCuda.cuh"
#include "KnnCuda.cuh"
#include "jz/NeighborHeap.h"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kThreads = 128;

// One kept pair: a source node of the plane and its lower bound.
struct KnnEntry
{
  Index source;
  float low2;
};

template <class T>
struct KnnNodePolicy
{
  using Entry = KnnEntry;
  // The plane walked.
  const Index* sourceSplit;
  const Index* querySplit;
  const Box<T>* sourceBox;
  const Box<T>* queryBox;
  // The parents' plane and list.
  const Index* parentOf;
  const Index* parentChildSplit;
  const unsigned long long* parentOffset;
  unsigned long long parentBase;
  const Index* parentSource;
  const float* parentLow2;
  Periodicity per;
  unsigned long long k;
  // Per-node state: the radius bound, written by Count, read by Insert.
  double* rmax2;
  // Insert's output.
  Index* outSource;
  float* outLow2;

  // FindRmax (Algorithm 3): an upper bound on the K-th neighbour distance of
  // every query point of the node with box qb.
  __device__ double findRmax(const Box<T>& qb, unsigned long long e0, unsigned long long e1) const
  {
    RadiusOfCountHeap heap;
    heap.init(k);
    double radius = kInfinity;
    for (unsigned long long e = e0; e < e1; ++e)
    {
      if (parentLow2[e] > radius)
        break; // early exit (§III-D)
      const Index pj = parentSource[e];
      for (Index d = parentChildSplit[pj]; d < parentChildSplit[pj + 1]; ++d)
      {
        const Index ns = sourceSplit[d + 1] - sourceSplit[d];
        if (ns == 0)
          continue;
        const double dr2 = boxDistanceHigh2(qb, sourceBox[d], per);
        if (dr2 < radius)
        {
          heap.insert(dr2, ns);
          radius = heap.radius2();
        }
      }
    }
    return radius;
  }

  // The source children of the parent's list within the node's radius.
  template <bool kCount, class Emit>
  __device__ void expand(Item item, Emit& emit) const
  {
    const Index c = Index(item);
    if (querySplit[c + 1] == querySplit[c])
    {
      if (kCount)
        rmax2[c] = kInfinity;
      return;
    }
    const Box<T> qb = queryBox[c];
    const Index pi = parentOf[c];
    const unsigned long long e0 = parentOffset[pi] - parentBase;
    const unsigned long long e1 = parentOffset[pi + 1] - parentBase;
    double r2;
    if (kCount)
    {
      r2 = findRmax(qb, e0, e1);
      rmax2[c] = r2;
    }
    else
    {
      r2 = rmax2[c];
    }
    for (unsigned long long e = e0; e < e1; ++e)
    {
      if (parentLow2[e] > r2)
        break;
      const Index pj = parentSource[e];
      for (Index d = parentChildSplit[pj]; d < parentChildSplit[pj + 1]; ++d)
      {
        if (sourceSplit[d + 1] == sourceSplit[d])
          continue;
        const double l2 = boxDistanceLow2(qb, sourceBox[d], per);
        if (l2 <= r2)
          emit(KnnEntry{ d, __double2float_rd(l2) }); // a lower bound still
      }
    }
  }

  __device__ void store(unsigned long long at, const KnnEntry& e) const
  {
    outSource[at] = e.source;
    outLow2[at] = e.low2;
  }
};

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
KnnNodePolicy<T> nodePolicy(const DeviceTree<T>& tree, int p, const KnnParents& parents, int k)
{
  const DevicePlane<T>& plane = tree.planes[p];
  KnnNodePolicy<T> a{};
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

void denseTopList(Index topNodes, DeviceList& list, DeviceBuffer<Index>& parentOf,
  DeviceBuffer<Index>& parentChildSplit, cudaStream_t stream)
{
  const std::vector<Index> split = superNodeSplit(topNodes);
  const Index supers = Index(split.size() - 1);
  std::vector<Index> owner(topNodes);
  for (Index c = 0; c < topNodes; ++c)
    owner[c] = c / kSuperNodeGroup;
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
  rmax2.allocate(nodes, stream, "the node radii");
  KnnNodePolicy<T> policy = nodePolicy(tree, p, parents, k);
  policy.rmax2 = rmax2.get();
  out.size = countInteractions(policy, nodes, out.offset, stream, temp);
}

template <class T>
void knnInsertPlane(const DeviceTree<T>& tree, int p, const KnnParents& parents,
  const double* rmax2, Index first, Index last, DeviceList& out, cudaStream_t stream,
  TempStorage& temp)
{
  const EntryRange range = entryRange(out.offset.get(), first, last, stream);
  const unsigned long long entries = range.end - range.begin;
  out.base = range.begin;
  out.source.release();
  out.low2.release();
  if (entries == 0)
    return;
  // Insert into one pair of buffers, then sort each list by lower bound
  // between the two (overwriting; CUB's scratch is then small).
  DeviceBuffer<Index> sourceA(entries, stream, "the interaction list");
  DeviceBuffer<float> lowA(entries, stream, "the interaction list");
  KnnNodePolicy<T> policy = nodePolicy(tree, p, parents, 0);
  policy.rmax2 = const_cast<double*>(rmax2); // read only by Insert
  policy.outSource = sourceA.get();
  policy.outLow2 = lowA.get();
  insertInteractions(policy, first, last, out.offset.get(), out.base, stream);

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
