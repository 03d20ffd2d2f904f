// The friends-of-friends walk's node planes on the GPU as a policy of the
// dual-walk engine (DualWalkCuda.cuh; §IV-A), the counterpart of
// FofNodePolicy.h: each unordered node pair once, a thread per kept pair
// of the plane above.
//
// Per plane every node carries a group pointer grp[i] <= i into its own plane
// and a flag linked[i] meaning "all points of the node are known to be in one
// group":
//  - beginPlane, ParentToNode (eq. 19): a child of a linked parent points at
//    the first child of its parent's root and is linked; other children are
//    their own root and linked when their box diagonal is at most l;
//  - enterEntry drops a pair the plane above decided since it was kept, and
//    sets the pair's nearest-image modes; childMeetsEntry tests a child
//    against the whole other parent;
//  - testPair: prune (d_low > l, or a node with itself whose diagonal is
//    within l), accept = link whole (d_up <= l; the compare-and-swap union in
//    Count), or keep. Geometry only, so Count and Insert keep the same pairs;
//  - endPlane: the contraction of the plane's pointers (FofLabelsCuda.cu).
// The classification is jz/FofLinking.h's, shared with the CPU.
#include <utility>

#include "fof/FofCuda.cuh"
#include "fof/FofPairVerdict.h"

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

// The device rules of plane p.
template <class T>
struct FofNodeRules : DeviceRulesDefaults
{
  static constexpr bool kUnorderedPairs = true;
  static constexpr bool kSortedLists = false;

  // Per pair (P, Q) of the plane above: its nearest-image modes, which hold
  // for its children's pairs, and Q's box for a first test of each child.
  struct EntryContext
  {
    int mode[3];
    Box<T> sourceParentBox;
    bool atTop;
    bool sameParent;
  };

  // The plane walked and its state.
  const Box<T>* box;
  Index* grp;
  unsigned char* linked;
  // The plane above (null at the super nodes) and its contracted state.
  Index numParents;
  const Box<T>* parentBox;
  const Index* parentGrp;
  const unsigned char* parentLinked;
  Periodicity per;
  double l2;

  __device__ bool enterEntry(Index P, Index Q, EntryContext& context) const
  {
    context.atTop = parentBox == nullptr;
    context.sameParent = P == Q;
    for (int d = 0; d < 3; ++d)
      context.mode[d] = kFofMixed;
    if (context.atTop)
      return true; // the super nodes: no parent state, general image logic
    if (P >= numParents || Q >= numParents)
      return false;
    // The plane above's contraction may have decided the pair since it was kept.
    const bool lp = parentLinked[P] != 0;
    if (P == Q ? lp : (lp && parentLinked[Q] && parentGrp[P] == parentGrp[Q]))
      return false;
    const Box<T> pa = parentBox[P];
    context.sourceParentBox = parentBox[Q];
    for (int d = 0; d < 3; ++d)
      context.mode[d] = fofImageMode(pa, context.sourceParentBox, d, per.length[d]);
    return true;
  }

  // Child c against the whole source parent first.
  __device__ bool childMeetsEntry(Index c, Index, double, const EntryContext& context) const
  {
    return context.atTop || context.sameParent ||
      classifyFofPairModes(box[c], context.sourceParentBox, context.mode, l2, per) !=
      FofPairAction::Discard;
  }

  __device__ PairVerdict testPair(Index c, Index d, const EntryContext& context, double&) const
  {
    const Box<T> bc = box[c];
    if (c == d) // undecided unless its diagonal is within l (linked ones drop a plane below)
      return fofSelfLinked(bc, l2, per) ? PairVerdict::Prune : PairVerdict::Keep;
    return fofPairVerdict(classifyFofPairModes(bc, box[d], context.mode, l2, per));
  }

  // Every point pair of (c, d) is within l: one group.
  __device__ void accept(Index c, Index d, const EntryContext&) const
  {
    fofUnion(grp, c, d);
    linked[c] = 1;
    linked[d] = 1;
  }
};

// The host side: the group pointers of the plane walked and the plane above.
template <class T>
class FofNodeWalk
{
public:
  FofNodeWalk(const DeviceTree<T>& tree, double l2, cudaStream_t stream,
    const std::function<void(int)>& planeDone)
    : tree_(tree)
    , l2_(l2)
    , stream_(stream)
    , top_(int(tree.planes.size()) - 1)
    , planeDone_(planeDone)
  {
  }

  void beginPlane(int p)
  {
    const DevicePlane<T>& plane = tree_.planes[p];
    std::swap(parent_, current_);
    current_.numNodes = plane.numNodes;
    current_.grp.allocate(plane.numNodes, stream_, "the node group pointers");
    current_.linked.allocate(plane.numNodes, stream_, "the node link flags");
    if (plane.numNodes == 0)
      return;
    if (p == top_)
    {
      initTopKernel<T><<<gridFor(plane.numNodes, 256), 256, 0, stream_>>>(plane.sourceSplit.get(),
        plane.sourceBox.get(), plane.numNodes, tree_.periodicity, l2_, current_.grp.get(),
        current_.linked.get());
      JZ_CUDA_LAUNCH_CHECK("initTopKernel");
      return;
    }
    const DevicePlane<T>& up = tree_.planes[p + 1];
    parentToNodeKernel<T><<<gridFor(up.numNodes, 256), 256, 0, stream_>>>(up.childSplit.get(),
      up.numNodes, parent_.grp.get(), parent_.linked.get(), plane.sourceSplit.get(),
      plane.sourceBox.get(), plane.numNodes, tree_.periodicity, l2_, current_.grp.get(),
      current_.linked.get());
    JZ_CUDA_LAUNCH_CHECK("parentToNodeKernel");
  }

  void endPlane(int p, unsigned long long)
  {
    fofContract(current_.grp.get(), current_.numNodes, stream_);
    if (planeDone_)
      planeDone_(p);
  }

  FofNodeRules<T> rules(int p) const
  {
    FofNodeRules<T> r{};
    r.box = tree_.planes[p].sourceBox.get();
    r.grp = current_.grp.get();
    r.linked = current_.linked.get();
    if (p < top_)
    {
      r.numParents = tree_.planes[p + 1].numNodes;
      r.parentBox = tree_.planes[p + 1].sourceBox.get();
      r.parentGrp = parent_.grp.get();
      r.parentLinked = parent_.linked.get();
    }
    r.per = tree_.periodicity;
    r.l2 = l2_;
    return r;
  }

  // The groups of the last plane walked (the leaves after walkDownTo(0)).
  FofPlaneGroups& groups() { return current_; }

private:
  const DeviceTree<T>& tree_;
  double l2_;
  cudaStream_t stream_;
  int top_;
  std::function<void(int)> planeDone_;
  FofPlaneGroups parent_, current_;
};
} // namespace

template <class T>
void fofNodeWalkCuda(const DeviceTree<T>& tree, double l2, cudaStream_t stream, TempStorage& temp,
  RunInfo& info, const std::function<void(int)>& planeDone, FofLeafLevel& leaves)
{
  FofNodeWalk<T> policy(tree, l2, stream, planeDone);
  DualWalkCuda<T, FofNodeWalk<T>> walk(tree, policy, stream, temp, &info);
  leaves.pairs = walk.walkDownTo(0);
  leaves.groups = std::move(policy.groups());
  info.counters.emplace_back("fof leaf pairs", double(leaves.pairs.size));
}

template void fofNodeWalkCuda<float>(const DeviceTree<float>&, double, cudaStream_t, TempStorage&,
  RunInfo&, const std::function<void(int)>&, FofLeafLevel&);
template void fofNodeWalkCuda<double>(const DeviceTree<double>&, double, cudaStream_t, TempStorage&,
  RunInfo&, const std::function<void(int)>&, FofLeafLevel&);
} // namespace cuda
} // namespace jz
