// One Borůvka round's search on the GPU as a policy of the dual-walk engine
// (DualWalkCuda.cuh), the counterpart of BoruvkaNodePolicy.h and
// BoruvkaLeafSearch.h: query-centric, sorted lists.
//
// Node planes: per receiving node c, an upper bound b[c] of the lightest
// edge that can still matter for its points: its parent's, its component's
// bound when c is pure, and d_up to every source node that surely holds a
// point of another component (FindRmax with K = 1). Count computes and stores
// it, Insert reads it back, so both keep the same pairs: a pair is pruned
// when both nodes lie in one component or its lower bound exceeds b[c]. The
// component bounds are read in Count only (the leaf pass lowers them).
//
// Leaf pass: a block per receiving leaf, a thread per point of it: its own
// leaf first (when mixed), then the list's source leaves in order of lower
// bound, staged through shared memory, until no point of the block can gain.
// Every candidate of another component no heavier than the point's bound is
// weighed exactly (edgeWeight2, the CPU's formula) and compared under the
// total order (emstEdgeLess); the bound is then the weight of the choice.
// Pruning only discards candidates strictly heavier than the bound, so a
// point ends with its lightest edge to another component when that is no
// heavier than its starting bound, as on the CPU.
#include "emst/EmstEdgeOrder.h"
#include "emst/EmstCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
constexpr int kLeafThreads = 64; // points of a leaf per block pass

// A component's bound while other blocks may lower it (atomicMin): any value
// it ever held bounds the component's lightest edge, so a stale one only
// prunes less. Read through L2, where the atomics land.
__device__ __forceinline__ float loadBound(const float* slot)
{
  return __ldcg(slot);
}

// d_low^2 / d_up^2 of two nodes' boxes, with their core extremes under
// mutual reachability (the CPU's BoruvkaWeights::low2/high2).
template <class T>
__device__ __forceinline__ double nodeLow2(const Box<T>& a, const Box<T>& b, const Periodicity& per,
  const double* coreMin2, Index c, Index d)
{
  const double l = boxDistanceLow2(a, b, per);
  return coreMin2 ? jzMax(l, jzMax(coreMin2[c], coreMin2[d])) : l;
}

template <class T>
__device__ __forceinline__ double nodeHigh2(const Box<T>& a, const Box<T>& b,
  const Periodicity& per, const double* coreMax2, Index c, Index d)
{
  const double h = boxDistanceHigh2(a, b, per);
  return coreMax2 ? jzMax(h, jzMax(coreMax2[c], coreMax2[d])) : h;
}

// The device rules of plane p.
template <class T>
struct BoruvkaNodeRules : DeviceRulesDefaults
{
  static constexpr bool kUnorderedPairs = false;
  static constexpr bool kSortedLists = true;
  const Box<T>* sourceBox;
  const Index* nodeLabel; // this plane's
  const double* coreMin2; // this plane's, null when Euclidean
  const double* coreMax2;
  const double* parentBound; // the plane above's b[], null at the top plane
  double* bound;             // this plane's b[]: written by Count, read by Insert
  const float* compBound;    // per root
  const Index* label;        // per point (leaf plane: a mixed leaf's components)
  const Index* sourceSplit;  // leaf plane only
  bool leafPlane;
  double maxWeight2;
  Periodicity per;

  // A mixed leaf's points need no edge heavier than the largest bound of
  // their components (the CPU's leafComponentsBound2).
  __device__ double leafComponentsBound2(Index c) const
  {
    double b = 0;
    for (Index q = sourceSplit[c]; q < sourceSplit[c + 1]; ++q)
      b = jzMax(b, double(loadBound(&compBound[label[q]])));
    return b;
  }

  template <bool kCount>
  __device__ double beginReceiver(Index c, const DeviceParentView& parent) const
  {
    if (!kCount)
      return bound[c];
    const Index lc = nodeLabel[c];
    double b = parentBound ? parentBound[parent.parent] : maxWeight2;
    if (lc != kMixedNode && lc != kEmptyNode)
      b = jzMin(b, double(loadBound(&compBound[lc])));
    else if (leafPlane && lc == kMixedNode)
      b = jzMin(b, leafComponentsBound2(c));
    const Box<T> cb = sourceBox[c];
    for (unsigned long long e = parent.begin; e < parent.end; ++e)
    {
      if (parent.entryLow2(e) > b)
        break; // sorted: no later entry can lower b
      const Index Q = parent.source[e];
      for (Index d = parent.firstChild(Q); d < parent.endChild(Q); ++d)
      {
        // d surely holds a point of another component than each of c's
        // points: a mixed d for any c, a pure d for a pure c of another one.
        const Index ld = nodeLabel[d];
        if (ld == kEmptyNode || (ld != kMixedNode && (lc == kMixedNode || lc == ld)))
          continue;
        b = jzMin(b, nodeHigh2(cb, sourceBox[d], per, coreMax2, c, d));
      }
    }
    bound[c] = b;
    return b;
  }

  template <class Context>
  __device__ PairVerdict testPair(Index c, Index d, const Context&, double& low2) const
  {
    const Index lc = nodeLabel[c];
    if (lc != kMixedNode && lc == nodeLabel[d])
      return PairVerdict::Prune; // one component: no edge of the round
    low2 = nodeLow2(sourceBox[c], sourceBox[d], per, coreMin2, c, d);
    return low2 > bound[c] ? PairVerdict::Prune : PairVerdict::Keep;
  }
};

// The host side: the node bounds of every plane walked this round (a plane's
// are read by the plane below).
template <class T>
class BoruvkaNodeWalk
{
public:
  BoruvkaNodeWalk(const DeviceTree<T>& tree, const BoruvkaRoundState& s, cudaStream_t stream)
    : tree_(tree)
    , s_(s)
    , stream_(stream)
    , bound_(tree.planes.size())
  {
  }

  void beginPlane(int p)
  {
    // Receivers without points keep an infinite bound (never read).
    bound_[p].allocate(tree_.planes[p].numNodes, stream_, "the EMST node bounds");
    fill(bound_[p], kInfinity, stream_);
  }

  void endPlane(int, unsigned long long) {}

  BoruvkaNodeRules<T> rules(int p) const
  {
    const DevicePlane<T>& plane = tree_.planes[p];
    BoruvkaNodeRules<T> r{};
    r.sourceBox = plane.sourceBox.get();
    r.nodeLabel = s_.nodeLabel[p];
    r.coreMin2 = s_.core2 ? s_.coreMin2[p] : nullptr;
    r.coreMax2 = s_.core2 ? s_.coreMax2[p] : nullptr;
    r.parentBound = p + 1 < int(bound_.size()) ? bound_[p + 1].get() : nullptr;
    r.bound = bound_[p].get();
    r.compBound = s_.compBound;
    r.label = s_.label;
    r.sourceSplit = plane.sourceSplit.get();
    r.leafPlane = p == 0;
    r.maxWeight2 = s_.maxWeight2;
    r.per = tree_.periodicity;
    return r;
  }

  const double* leafBound() const { return bound_[0].get(); }

private:
  const DeviceTree<T>& tree_;
  const BoruvkaRoundState& s_;
  cudaStream_t stream_;
  std::vector<DeviceBuffer<double>> bound_;
};

// The leaf kernel (BoruvkaLeafSearch::consumeLeaf of the CPU engine).
template <class T>
struct BoruvkaLeaves
{
  static constexpr int kMaxThreads = kLeafThreads;

  // The round's state for the leaves of `level`, with the leaves' bounds.
  BoruvkaLeaves(const DeviceTree<T>& tree, const BoruvkaRoundState& s, const double* leafBounds,
    const WalkLevel& level)
    : sourceSplit(tree.planes[0].sourceSplit.get())
    , sourceBox(tree.planes[0].sourceBox.get())
    , leafLabel(s.nodeLabel[0])
    , leafBound(leafBounds)
    , lists(level)
    , points(sourcesOf(tree))
    , keys(s.keys)
    , core2(s.core2)
    , label(s.label)
    , compBound(s.compBound)
    , choice(s.choice)
    , choiceWeight2(s.choiceWeight2)
    , per(tree.periodicity)
  {
  }

  const Index* sourceSplit;
  const Box<T>* sourceBox;
  const Index* leafLabel;
  const double* leafBound;
  LevelLists lists;
  DeviceXyz<T> points;
  const GlobalId* keys;
  const double* core2; // null: Euclidean
  const Index* label;
  float* compBound;
  Index* choice;
  double* choiceWeight2;
  Periodicity per;

  __device__ void consume(Item item, const BlockGroup& block) const;
};

template <class T>
__device__ void BoruvkaLeaves<T>::consume(Item item, const BlockGroup& block) const
{
  const Index c = Index(item);
  __shared__ T shx[kLeafThreads];
  __shared__ T shy[kLeafThreads];
  __shared__ T shz[kLeafThreads];
  __shared__ Index shLabel[kLeafThreads];
  __shared__ GlobalId shKey[kLeafThreads];
  __shared__ double shCore[kLeafThreads];
  const int tid = block.rank();
  const Index q0 = sourceSplit[c], q1 = sourceSplit[c + 1];
  const unsigned long long e0 = lists.begin(c);
  const unsigned long long e1 = lists.end(c);
  const bool ownLeafMixed = leafLabel[c] == kMixedNode;

  // Uniform across the block: every thread runs every iteration (barriers).
  for (Index qb = q0; qb < q1; qb += kLeafThreads)
  {
    const Index q = qb + Index(tid);
    const bool active = q < q1;
    T p[3] = { T(0), T(0), T(0) };
    Index lq = kNoEdge;
    GlobalId kq = 0;
    double coreQ = 0;
    double bound = -1; // negative: this thread does not search
    if (active)
    {
      p[0] = points.x[q];
      p[1] = points.y[q];
      p[2] = points.z[q];
      lq = label[q];
      kq = keys[q];
      coreQ = core2 ? core2[q] : 0.0;
      bound = jzMin(leafBound[c], double(loadBound(&compBound[lq])));
      if (coreQ > bound)
        bound = -1; // every edge of q is heavier than its component's best
    }
    Index best = kNoEdge;
    GlobalId kBest = 0;

    // Source 0 is the own leaf (searched when mixed), source i > 0 the
    // list's entry e0 + i - 1.
    for (unsigned long long i = 0; i <= e1 - e0; ++i)
    {
      const bool own = i == 0;
      const Index d = own ? c : lists.source[e0 + i - 1];
      const double low = own ? 0.0 : double(lists.low2[e0 + i - 1]);
      // Early exit once no thread of the block can gain from the rest.
      if (!__syncthreads_or(bound >= 0 && !(low > bound)))
        break;
      if ((own && !ownLeafMixed) || (!own && d == c))
        continue; // uniform: the same d for the whole block
      const bool need = bound >= 0 && !(low > bound) && lq != leafLabel[d] &&
        !(pointBoxDistance2(p, sourceBox[d], per) > bound * (1 + kBoundSlack));
      if (!__syncthreads_or(need))
        continue;
      const Index s0 = sourceSplit[d], s1 = sourceSplit[d + 1];
      for (Index t0 = s0; t0 < s1; t0 += kLeafThreads)
      {
        const Index m = (s1 - t0) < Index(kLeafThreads) ? (s1 - t0) : Index(kLeafThreads);
        if (Index(tid) < m)
        {
          const Index t = t0 + Index(tid);
          shx[tid] = points.x[t];
          shy[tid] = points.y[t];
          shz[tid] = points.z[t];
          shLabel[tid] = label[t];
          shKey[tid] = keys[t];
          shCore[tid] = core2 ? core2[t] : 0.0;
        }
        block.sync();
        if (need)
        {
          for (Index j = 0; j < m; ++j)
          {
            if (shLabel[j] == lq)
              continue;
            const T pt[3] = { shx[j], shy[j], shz[j] };
            const double w = edgeWeight2(per, p, pt, coreQ, shCore[j]);
            if (w > bound)
              continue;
            if (best == kNoEdge || emstEdgeLess(w, kq, shKey[j], bound, kq, kBest))
            {
              best = t0 + j;
              kBest = shKey[j];
              bound = w;
            }
          }
        }
        block.sync();
      }
    }
    if (!active)
      continue;
    choice[q] = best;
    if (best != kNoEdge)
    {
      choiceWeight2[q] = bound;
      // Non-negative floats order as their bit patterns.
      atomicMin(reinterpret_cast<int*>(&compBound[lq]), __float_as_int(__double2float_ru(bound)));
    }
  }
}
} // namespace

template <class T>
void boruvkaSearchCuda(const DeviceTree<T>& tree, const BoruvkaRoundState& s, cudaStream_t stream,
  TempStorage& temp, RunInfo& info)
{
  BoruvkaNodeWalk<T> policy(tree, s, stream);
  DualWalkCuda<T, BoruvkaNodeWalk<T>> walk(tree, policy, stream, temp);
  const WalkLevel up = walk.walkDownTo(1);
  const std::size_t batches = walk.leafPass(up,
    [&](const WalkLevel& level, Index first, Index last)
    {
      const BoruvkaLeaves<T> leaf(tree, s, policy.leafBound(), level);
      blockLeafPass(leaf, first, last, kLeafThreads, 0, stream);
    });
  info.counters.emplace_back("gpu boruvka leaf batches", double(batches));
}

template void boruvkaSearchCuda<float>(
  const DeviceTree<float>&, const BoruvkaRoundState&, cudaStream_t, TempStorage&, RunInfo&);
template void boruvkaSearchCuda<double>(
  const DeviceTree<double>&, const BoruvkaRoundState&, cudaStream_t, TempStorage&, RunInfo&);
} // namespace cuda
} // namespace jz
