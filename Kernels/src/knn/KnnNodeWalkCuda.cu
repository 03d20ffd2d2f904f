// The kNN walk's node planes on the GPU as a policy of the dual-walk engine
// (DualWalkCuda.cuh; §III-B, §III-C, Algorithms 2 and 3), the counterpart of
// KnnNodePolicy.h: query-centric, sorted lists. Per receiving node,
// FindRmax bounds the K-th neighbour radius from its parent's list (the
// per-node state, computed in Count and read back by Insert); a child pair is
// kept when its lower bound is within the receiver's radius, and lists are
// sorted by lower bound so that every scan may stop early (§III-D).
//
// One thread per receiving node; the children of one parent are adjacent
// threads and read the same parent list entries (broadcast loads). Bounds
// come from the host/device-shared jz::boxDistanceLow2/High2 and
// jz::RadiusOfCountHeap, so the pruning is exactly that of the CPU backend.
#include "walk/DualWalkCuda.cuh"
#include "knn/KnnCuda.cuh"
#include "jz/NeighborHeap.h"

namespace jz
{
namespace cuda
{
namespace
{
// The device rules of plane p.
template <class T>
struct KnnNodeRules : DeviceRulesDefaults
{
  static constexpr bool kUnorderedPairs = false;
  static constexpr bool kSortedLists = true;
  const Index* sourceSplit;
  const Box<T>* sourceBox;
  const Box<T>* queryBox;
  Periodicity per;
  unsigned long long k;
  double* rmax2; // per receiver: written by Count, read by Insert

  // FindRmax (Algorithm 3): an upper bound on the K-th neighbour distance of
  // every query point of receiver c. The reach of its list.
  template <bool kCount>
  __device__ double beginReceiver(Index c, const DeviceParentView& parent) const
  {
    if (!kCount)
      return rmax2[c];
    const Box<T> qb = queryBox[c];
    RadiusOfCountHeap heap;
    heap.init(k);
    double radius = kInfinity;
    for (unsigned long long e = parent.begin; e < parent.end; ++e)
    {
      if (parent.entryLow2(e) > radius)
        break; // early exit (§III-D)
      const Index q = parent.source[e];
      for (Index d = parent.firstChild(q); d < parent.endChild(q); ++d)
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
    rmax2[c] = radius;
    return radius;
  }

  template <class Context>
  __device__ PairVerdict testPair(Index c, Index d, const Context&, double& low2) const
  {
    low2 = boxDistanceLow2(queryBox[c], sourceBox[d], per);
    return low2 <= rmax2[c] ? PairVerdict::Keep : PairVerdict::Prune;
  }
};

// The host side: the radii of the plane being walked.
template <class T>
class KnnNodeWalk
{
public:
  KnnNodeWalk(const DeviceTree<T>& tree, int k, cudaStream_t stream,
    const std::function<void(int)>& planeDone)
    : tree_(tree)
    , k_(k)
    , stream_(stream)
    , planeDone_(planeDone)
  {
  }

  void beginPlane(int p)
  {
    // Receivers without queries keep an infinite radius.
    rmax2_.allocate(tree_.planes[p].numNodes, stream_, "the node radii");
    fill(rmax2_, kInfinity, stream_);
  }

  void endPlane(int p, unsigned long long)
  {
    if (planeDone_)
      planeDone_(p);
  }

  KnnNodeRules<T> rules(int p) const
  {
    const DevicePlane<T>& plane = tree_.planes[p];
    KnnNodeRules<T> r{};
    r.sourceSplit = plane.sourceSplit.get();
    r.sourceBox = plane.sourceBox.get();
    r.queryBox = plane.queryBox();
    r.per = tree_.periodicity;
    r.k = (unsigned long long)k_;
    r.rmax2 = rmax2_.get();
    return r;
  }

  const double* rmax2() const { return rmax2_.get(); }

private:
  const DeviceTree<T>& tree_;
  int k_;
  cudaStream_t stream_;
  std::function<void(int)> planeDone_;
  DeviceBuffer<double> rmax2_;
};
} // namespace

template <class T>
void knnWalkCuda(const DeviceTree<T>& tree, int k, cudaStream_t stream, TempStorage& temp,
  RunInfo& info, const std::function<void(int)>& planeDone, const KnnLeafConsumer& consume)
{
  KnnNodeWalk<T> policy(tree, k, stream, planeDone);
  DualWalkCuda<T, KnnNodeWalk<T>> walk(tree, policy, stream, temp, &info);
  const WalkLevel up = walk.walkDownTo(1);
  const std::size_t batches = walk.leafPass(up,
    [&](const WalkLevel& leaves, Index first, Index last)
    { consume(leaves, first, last, policy.rmax2()); });
  info.counters.emplace_back("gpu leaf batches", double(batches));
}

template void knnWalkCuda<float>(const DeviceTree<float>&, int, cudaStream_t, TempStorage&,
  RunInfo&, const std::function<void(int)>&, const KnnLeafConsumer&);
template void knnWalkCuda<double>(const DeviceTree<double>&, int, cudaStream_t, TempStorage&,
  RunInfo&, const std::function<void(int)>&, const KnnLeafConsumer&);
} // namespace cuda
} // namespace jz
