// Node-level friends-of-friends walk on the GPU (paper IV-A): ParentToNode,
// NodeToNode with the interaction-list pattern (Link+Count, CUB exclusive
// scan, Insert) and the contraction of the plane's group pointers
// (FofLabelsCuda.cu).
//
// One thread per parent pair evaluates the child pairs exactly as
// cpu/FofCpu.cpp does, with the classification of jz/FofLinking.h. The Count
// pass also performs the links (a lock-free compare-and-swap union that points
// the higher root at the lower one); the Insert pass recomputes the same pure
// geometric classification, so both passes agree on the undecided pairs
// (pairs that meanwhile became one group are dropped at the next plane).
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <vector>

#include "FofCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kThreads = 128;

template <class T>
__global__ void initTopKernel(const Index* sourceSplit, const Box<T>* box, Index n, Periodicity per,
  double l2, Index* grp, unsigned char* linked)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
  {
    grp[i] = Index(i);
    linked[i] = (sourceSplit[i + 1] > sourceSplit[i] && fofSelfLinked(box[i], l2, per)) ? 1 : 0;
  }
}

// Eq. 19, one thread per parent node.
template <class T>
__global__ void parentToNodeKernel(const Index* childSplit, Index numParents,
  const Index* parentGrp, const unsigned char* parentLinked, const Index* sourceSplit,
  const Box<T>* box, Index numNodes, Periodicity per, double l2, Index* grp, unsigned char* linked)
{
  for (unsigned long long P = globalThread(); P < numParents; P += gridThreads())
  {
    const Index c0 = childSplit[P];
    const Index c1 = childSplit[P + 1] < numNodes ? childSplit[P + 1] : numNodes;
    if (parentLinked[P])
    {
      const Index root = parentGrp[P];
      const Index r = root < numParents ? childSplit[root] : c0;
      for (Index i = c0; i < c1; ++i)
      {
        grp[i] = r;
        linked[i] = 1;
      }
    }
    else
    {
      for (Index i = c0; i < c1; ++i)
      {
        grp[i] = i;
        linked[i] = (sourceSplit[i + 1] > sourceSplit[i] && fofSelfLinked(box[i], l2, per)) ? 1 : 0;
      }
    }
  }
}

template <class T>
struct NodeArgs
{
  unsigned long long numPairs;
  const FofPair* pairs;
  // The plane evaluated.
  Index numNodes;
  const Index* sourceSplit;
  const Box<T>* box;
  Index* grp;
  unsigned char* linked;
  // The plane above (null at the top, where super nodes of topGroup
  // consecutive nodes are the parents).
  Index numParents;
  const Index* childSplit;
  const Box<T>* parentBox;
  const Index* parentGrp;
  const unsigned char* parentLinked;
  Index topGroup;
  Periodicity per;
  double l2;
  unsigned long long* count;        // Count pass
  const unsigned long long* offset; // Insert pass
  FofPair* out;
};

template <class T, bool kInsert>
__global__ void __launch_bounds__(kThreads) nodeToNodeKernel(NodeArgs<T> a)
{
  for (unsigned long long k = globalThread(); k < a.numPairs; k += gridThreads())
  {
    const FofPair pr = a.pairs[k];
    unsigned long long n = 0;
    const unsigned long long base = kInsert ? a.offset[k] : 0;
    const unsigned long long limit = kInsert ? a.offset[k + 1] - base : 0;
    const bool top = a.childSplit == nullptr;
    const Index numParents = top ? (a.numNodes + a.topGroup - 1) / a.topGroup : a.numParents;
    bool skip = pr.a >= numParents || pr.b >= numParents;
    if (!skip && !top)
    {
      // The parent plane's contraction may have decided the pair since it
      // was kept.
      const bool la = a.parentLinked[pr.a] != 0;
      skip =
        pr.a == pr.b ? la : (la && a.parentLinked[pr.b] && a.parentGrp[pr.a] == a.parentGrp[pr.b]);
    }
    if (!skip)
    {
      Index a0, a1, b0, b1;
      if (top)
      {
        a0 = pr.a * a.topGroup;
        a1 = a0 + a.topGroup < a.numNodes ? a0 + a.topGroup : a.numNodes;
        b0 = pr.b * a.topGroup;
        b1 = b0 + a.topGroup < a.numNodes ? b0 + a.topGroup : a.numNodes;
      }
      else
      {
        a0 = a.childSplit[pr.a];
        a1 = a.childSplit[pr.a + 1] < a.numNodes ? a.childSplit[pr.a + 1] : a.numNodes;
        b0 = a.childSplit[pr.b];
        b1 = a.childSplit[pr.b + 1] < a.numNodes ? a.childSplit[pr.b + 1] : a.numNodes;
      }
      const bool self = pr.a == pr.b;
      // Image modes of the parent pair hold for the children's pairs.
      int mode[3] = { kFofMixed, kFofMixed, kFofMixed };
      Box<T> parentB;
      if (!top)
      {
        const Box<T> pa = a.parentBox[pr.a];
        parentB = a.parentBox[pr.b];
        for (int d = 0; d < 3; ++d)
          mode[d] = fofImageMode(pa, parentB, d, a.per.length[d]);
      }
      for (Index i = a0; i < a1; ++i)
      {
        if (a.sourceSplit[i + 1] == a.sourceSplit[i])
          continue;
        const Box<T> bi = a.box[i];
        // Child i against the whole other parent first.
        if (!top && !self &&
          classifyFofPairModes(bi, parentB, mode, a.l2, a.per) == FofPairAction::Discard)
        {
          continue;
        }
        for (Index j = self ? i : b0; j < b1; ++j)
        {
          FofPairAction act;
          if (j == i)
          {
            // A node with itself: undecided unless its diagonal is within l
            // (a node linked otherwise is dropped at the next plane).
            act = fofSelfLinked(bi, a.l2, a.per) ? FofPairAction::Discard : FofPairAction::Refine;
          }
          else
          {
            if (a.sourceSplit[j + 1] == a.sourceSplit[j])
              continue;
            act = classifyFofPairModes(bi, a.box[j], mode, a.l2, a.per);
          }
          if (act == FofPairAction::Discard)
            continue;
          if (act == FofPairAction::Link)
          {
            if (!kInsert)
            {
              fofUnion(a.grp, i, j);
              a.linked[i] = 1;
              a.linked[j] = 1;
            }
            continue;
          }
          if (kInsert && n < limit)
            a.out[base + n] = FofPair{ i, j };
          ++n;
        }
      }
    }
    if (!kInsert)
      a.count[k] = n;
  }
}
} // namespace

void fofTopPairs(Index topNodes, Index group, FofPairList& list, cudaStream_t stream)
{
  list = FofPairList();
  const Index supers = (topNodes + group - 1) / group;
  std::vector<FofPair> pairs;
  pairs.reserve(std::size_t(supers) * (supers + 1) / 2);
  for (Index s = 0; s < supers; ++s)
    for (Index t = s; t < supers; ++t)
      pairs.push_back(FofPair{ s, t });
  list.size = pairs.size();
  if (pairs.empty())
    return;
  list.pairs.allocate(pairs.size(), stream, "the top pair list");
  list.pairs.upload(pairs.data(), pairs.size());
  // The host vector dies here: wait for the copy.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

template <class T>
void fofInitTopGroups(const DevicePlane<T>& plane, const Periodicity& per, double l2,
  FofPlaneGroups& out, cudaStream_t stream)
{
  const Index n = plane.numNodes;
  out.numNodes = n;
  out.grp.allocate(n, stream, "the node group pointers");
  out.linked.allocate(n, stream, "the node link flags");
  if (n == 0)
    return;
  initTopKernel<T><<<gridFor(n, 256), 256, 0, stream>>>(
    plane.sourceSplit.get(), plane.sourceBox.get(), n, per, l2, out.grp.get(), out.linked.get());
  JZ_CUDA_LAUNCH_CHECK("initTopKernel");
}

template <class T>
void fofParentToNode(const DevicePlane<T>& up, const FofPlaneGroups& parent,
  const DevicePlane<T>& plane, const Periodicity& per, double l2, FofPlaneGroups& out,
  cudaStream_t stream)
{
  const Index n = plane.numNodes;
  out.numNodes = n;
  out.grp.allocate(n, stream, "the node group pointers");
  out.linked.allocate(n, stream, "the node link flags");
  if (n == 0 || up.numNodes == 0)
    return;
  parentToNodeKernel<T><<<gridFor(up.numNodes, 256), 256, 0, stream>>>(up.childSplit.get(),
    up.numNodes, parent.grp.get(), parent.linked.get(), plane.sourceSplit.get(),
    plane.sourceBox.get(), n, per, l2, out.grp.get(), out.linked.get());
  JZ_CUDA_LAUNCH_CHECK("parentToNodeKernel");
}

template <class T>
void fofNodeWalkCuda(const DevicePlane<T>& plane, FofPlaneGroups& groups, const DevicePlane<T>* up,
  const FofPlaneGroups* parent, Index topGroup, const FofPairList& in, FofPairList& out,
  const Periodicity& per, double l2, cudaStream_t stream, TempStorage& temp)
{
  out = FofPairList();
  if (in.size == 0 || plane.numNodes == 0)
    return;
  NodeArgs<T> a;
  a.numPairs = in.size;
  a.pairs = in.pairs.get();
  a.numNodes = plane.numNodes;
  a.sourceSplit = plane.sourceSplit.get();
  a.box = plane.sourceBox.get();
  a.grp = groups.grp.get();
  a.linked = groups.linked.get();
  a.numParents = up ? up->numNodes : 0;
  a.childSplit = up ? up->childSplit.get() : nullptr;
  a.parentBox = up ? up->sourceBox.get() : nullptr;
  a.parentGrp = parent ? parent->grp.get() : nullptr;
  a.parentLinked = parent ? parent->linked.get() : nullptr;
  a.topGroup = topGroup > 0 ? topGroup : 1;
  a.per = per;
  a.l2 = l2;
  a.offset = nullptr;
  a.out = nullptr;

  // Link + Count; the extra last count is zero so the exclusive scan leaves
  // the total in offset[numPairs].
  DeviceBuffer<unsigned long long> offset(in.size + 1, stream, "the pair list offsets");
  a.count = offset.get();
  check(cudaMemsetAsync(offset.get() + in.size, 0, sizeof(unsigned long long), stream),
    "cudaMemsetAsync");
  nodeToNodeKernel<T, false><<<gridFor(in.size, kThreads), kThreads, 0, stream>>>(a);
  JZ_CUDA_LAUNCH_CHECK("nodeToNodeKernel<Count>");
  {
    std::size_t bytes = 0;
    JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      nullptr, bytes, offset.get(), offset.get(), (long long)in.size + 1, stream));
    void* storage = temp.get(bytes);
    JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      storage, bytes, offset.get(), offset.get(), (long long)in.size + 1, stream));
  }
  // The links are done: contract the plane's pointers (Insert does not read them).
  fofContract(groups.grp.get(), groups.numNodes, stream);
  const unsigned long long total = fetchValue(offset.get() + in.size, stream);
  out.size = total;
  if (total == 0)
    return;
  out.pairs.allocate(total, stream, "the pair list");
  a.count = nullptr;
  a.offset = offset.get();
  a.out = out.pairs.get();
  nodeToNodeKernel<T, true><<<gridFor(in.size, kThreads), kThreads, 0, stream>>>(a);
  JZ_CUDA_LAUNCH_CHECK("nodeToNodeKernel<Insert>");
  // `offset` is freed in stream order, after the kernel.
}

template void fofInitTopGroups<float>(
  const DevicePlane<float>&, const Periodicity&, double, FofPlaneGroups&, cudaStream_t);
template void fofInitTopGroups<double>(
  const DevicePlane<double>&, const Periodicity&, double, FofPlaneGroups&, cudaStream_t);
template void fofParentToNode<float>(const DevicePlane<float>&, const FofPlaneGroups&,
  const DevicePlane<float>&, const Periodicity&, double, FofPlaneGroups&, cudaStream_t);
template void fofParentToNode<double>(const DevicePlane<double>&, const FofPlaneGroups&,
  const DevicePlane<double>&, const Periodicity&, double, FofPlaneGroups&, cudaStream_t);
template void fofNodeWalkCuda<float>(const DevicePlane<float>&, FofPlaneGroups&,
  const DevicePlane<float>*, const FofPlaneGroups*, Index, const FofPairList&, FofPairList&,
  const Periodicity&, double, cudaStream_t, TempStorage&);
template void fofNodeWalkCuda<double>(const DevicePlane<double>&, FofPlaneGroups&,
  const DevicePlane<double>*, const FofPlaneGroups*, Index, const FofPairList&, FofPairList&,
  const Periodicity&, double, cudaStream_t, TempStorage&);
} // namespace cuda
} // namespace jz
