// Node-level friends-of-friends walk on the GPU (§IV-A) as a policy of the
// dual walk (DualWalkCuda.cuh): ParentToNode (the per-node state of a plane:
// group pointers and link flags), NodeToNode over the child pairs of the
// parent plane's undecided pairs, and the contraction of the plane's group
// pointers (FofLabelsCuda.cu).
//
// The work items are the parent pairs; one thread evaluates an item's child
// pairs exactly as cpu/FofCpu.cpp does, with the classification of
// jz/FofLinking.h. The Count pass also acts on the pairs it links (a
// lock-free compare-and-swap union that points the higher root at the lower
// one); the Insert pass recomputes the same pure geometric classification,
// so both passes agree on the undecided pairs (pairs that meanwhile became
// one group are dropped at the next plane).
#include <vector>

#include "DualWalkCuda.cuh"
#include "FofCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{

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
struct FofNodePolicy
{
  using Entry = FofPair;
  const FofPair* pairs; // the parent plane's undecided pairs (the items)
  // The plane evaluated, and its per-node state.
  Index numNodes;
  const Index* sourceSplit;
  const Box<T>* box;
  Index* grp;
  unsigned char* linked;
  // The plane above (null at the top, where super nodes of kSuperNodeGroup
  // consecutive nodes are the parents).
  Index numParents;
  const Index* childSplit;
  const Box<T>* parentBox;
  const Index* parentGrp;
  const unsigned char* parentLinked;
  Periodicity per;
  double l2;
  FofPair* out; // Insert's output

  // The children [c0, c1) of parent (or super node) P.
  __device__ void children(Index P, Index& c0, Index& c1) const
  {
    if (!childSplit)
    {
      c0 = P * kSuperNodeGroup;
      c1 = c0 + kSuperNodeGroup < numNodes ? c0 + kSuperNodeGroup : numNodes;
      return;
    }
    c0 = childSplit[P];
    c1 = childSplit[P + 1] < numNodes ? childSplit[P + 1] : numNodes;
  }

  // Whether the parent plane's contraction decided the pair since it was kept.
  __device__ bool decidedAbove(const FofPair& pr) const
  {
    const Index parents =
      childSplit ? numParents : (numNodes + kSuperNodeGroup - 1) / kSuperNodeGroup;
    if (pr.a >= parents || pr.b >= parents)
      return true;
    if (!childSplit)
      return false;
    const bool la = parentLinked[pr.a] != 0;
    return pr.a == pr.b ? la : (la && parentLinked[pr.b] && parentGrp[pr.a] == parentGrp[pr.b]);
  }

  // NodeToNode: the node-pair test of every child pair of the item.
  template <bool kCount, class Emit>
  __device__ void expand(Item item, Emit& emit) const
  {
    const FofPair pr = pairs[item];
    if (decidedAbove(pr))
      return;
    Index a0, a1, b0, b1;
    children(pr.a, a0, a1);
    children(pr.b, b0, b1);
    const bool self = pr.a == pr.b;
    const bool top = childSplit == nullptr;
    // Image modes of the parent pair hold for the children's pairs.
    int mode[3] = { kFofMixed, kFofMixed, kFofMixed };
    Box<T> parentB;
    if (!top)
    {
      const Box<T> pa = parentBox[pr.a];
      parentB = parentBox[pr.b];
      for (int d = 0; d < 3; ++d)
        mode[d] = fofImageMode(pa, parentB, d, per.length[d]);
    }
    for (Index i = a0; i < a1; ++i)
    {
      if (sourceSplit[i + 1] == sourceSplit[i])
        continue;
      const Box<T> bi = box[i];
      // Child i against the whole other parent first.
      if (!top && !self &&
        classifyFofPairModes(bi, parentB, mode, l2, per) == FofPairAction::Discard)
        continue;
      for (Index j = self ? i : b0; j < b1; ++j)
      {
        FofPairAction act;
        if (j == i)
        {
          // A node with itself: undecided unless its diagonal is within l
          // (a node linked otherwise is dropped at the next plane).
          act = fofSelfLinked(bi, l2, per) ? FofPairAction::Discard : FofPairAction::Refine;
        }
        else
        {
          if (sourceSplit[j + 1] == sourceSplit[j])
            continue;
          act = classifyFofPairModes(bi, box[j], mode, l2, per);
        }
        if (act == FofPairAction::Discard)
          continue;
        if (act == FofPairAction::Link)
        {
          if (kCount)
          {
            fofUnion(grp, i, j);
            linked[i] = 1;
            linked[j] = 1;
          }
          continue;
        }
        emit(FofPair{ i, j });
      }
    }
  }

  __device__ void store(unsigned long long at, const FofPair& e) const { out[at] = e; }
};
} // namespace

void fofTopPairs(Index topNodes, FofPairList& list, cudaStream_t stream)
{
  list = FofPairList();
  const Index supers = Index(superNodeSplit(topNodes).size() - 1);
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
  const FofPlaneGroups* parent, const FofPairList& in, FofPairList& out, const Periodicity& per,
  double l2, cudaStream_t stream, TempStorage& temp)
{
  out = FofPairList();
  if (in.size == 0 || plane.numNodes == 0)
    return;
  FofNodePolicy<T> policy{};
  policy.pairs = in.pairs.get();
  policy.numNodes = plane.numNodes;
  policy.sourceSplit = plane.sourceSplit.get();
  policy.box = plane.sourceBox.get();
  policy.grp = groups.grp.get();
  policy.linked = groups.linked.get();
  policy.numParents = up ? up->numNodes : 0;
  policy.childSplit = up ? up->childSplit.get() : nullptr;
  policy.parentBox = up ? up->sourceBox.get() : nullptr;
  policy.parentGrp = parent ? parent->grp.get() : nullptr;
  policy.parentLinked = parent ? parent->linked.get() : nullptr;
  policy.per = per;
  policy.l2 = l2;

  // Link + Count, Scan; then the links are done: contract the plane's
  // pointers (Insert does not read them), and Insert.
  DeviceBuffer<unsigned long long> offset;
  out.size = countInteractions(policy, in.size, offset, stream, temp);
  fofContract(groups.grp.get(), groups.numNodes, stream);
  if (out.size == 0)
    return;
  out.pairs.allocate(out.size, stream, "the pair list");
  policy.out = out.pairs.get();
  insertInteractions(policy, 0, in.size, offset.get(), 0, stream);
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
  const DevicePlane<float>*, const FofPlaneGroups*, const FofPairList&, FofPairList&,
  const Periodicity&, double, cudaStream_t, TempStorage&);
template void fofNodeWalkCuda<double>(const DevicePlane<double>&, FofPlaneGroups&,
  const DevicePlane<double>*, const FofPlaneGroups*, const FofPairList&, FofPairList&,
  const Periodicity&, double, cudaStream_t, TempStorage&);
} // namespace cuda
} // namespace jz
