// Tree gravity's walk on the GPU as a policy of the dual-walk engine
// (DualWalkCuda.cuh), the counterpart of GravityPolicy.h's group walk:
// query-centric, one thread per receiving node in Count and Insert.
//
// The engine acts on an accepted pair in Count only, while a multipole needs
// the receiver's points; so every pair with mass is kept, marked in its lower
// bound: 0 = open (expand its children), 1 = accepted (the node's quadrupole
// is acceptable for every point of the receiver by the CPU's criterion, or it
// is an exact point mass). The lists are sorted by that mark, and the
// receiver's reach (0.5) makes the engine's expansion of the plane below stop
// at the first accepted entry. After each plane's Insert, a kernel with a
// block per receiver applies its accepted entries to its points (M2P); at the
// leaves the same kernel also sums the open leaves' points directly (P2P).
// Massless nodes are pruned (they add exactly nothing). Every (receiver,
// source) pair is met once, as on the CPU, so every source counts exactly
// once for every query.
#include "gravity/GravityCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
// The marks in the lists' lower bounds, and the reach that stops at the
// first accepted entry.
constexpr double kOpenMark = 0.0;
constexpr double kAcceptedMark = 1.0;
constexpr double kOpenReach = 0.5;
constexpr Index kNoSource = 0xFFFFFFFFu;

// The squared distance from a receiver's box to a centre of mass (0 inside),
// in double as the CPU's GravityPolicy::testPair computes it.
template <class T>
__device__ __forceinline__ double boxToPoint2(const Box<T>& box, const double* at)
{
  double dist2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    const double below = double(box.lo[k]) - at[k];
    const double above = at[k] - double(box.hi[k]);
    const double gap = jzMax(jzMax(below, above), 0.0);
    dist2 += gap * gap;
  }
  return dist2;
}

// The device rules of plane p.
template <class T>
struct GravityNodeRules : DeviceRulesDefaults
{
  static constexpr bool kUnorderedPairs = false;
  static constexpr bool kSortedLists = true;
  const GravityMoments* moments; // of plane p
  const Box<T>* queryBox;        // of plane p
  double theta2;

  template <bool kCount>
  __device__ double beginReceiver(Index, const DeviceParentView&) const
  {
    return kOpenReach;
  }

  template <class Context>
  __device__ PairVerdict testPair(Index c, Index d, const Context&, double& low2) const
  {
    const GravityMoments& n = moments[d];
    if (!(n.mass > 0))
      return PairVerdict::Prune; // massless: contributes exactly nothing
    const bool accepted =
      n.radius2 == 0 || multipoleAcceptable(n, boxToPoint2(queryBox[c], n.com), theta2);
    low2 = accepted ? kAcceptedMark : kOpenMark;
    return PairVerdict::Keep;
  }
};

// The host side of the policy: the rules of each plane.
template <class T>
class GravityNodeWalk
{
public:
  GravityNodeWalk(const DeviceTree<T>& tree,
    const std::vector<DeviceBuffer<GravityMoments>>& moments, double theta,
    const std::function<void(int)>& planeDone)
    : tree_(tree)
    , moments_(moments)
    , theta2_(theta * theta)
    , planeDone_(planeDone)
  {
  }

  void beginPlane(int) {}
  void endPlane(int p, unsigned long long)
  {
    if (planeDone_)
      planeDone_(p);
  }

  GravityNodeRules<T> rules(int p) const
  {
    GravityNodeRules<T> r{};
    r.moments = moments_[std::size_t(p)].get();
    r.queryBox = tree_.planes[std::size_t(p)].queryBox();
    r.theta2 = theta2_;
    return r;
  }

private:
  const DeviceTree<T>& tree_;
  const std::vector<DeviceBuffer<GravityMoments>>& moments_;
  double theta2_;
  std::function<void(int)> planeDone_;
};

// What the receivers' kernel reads: one plane and its (held) lists.
template <class T>
struct ReceiverArgs
{
  bool leaves; // plane 0: the open entries are direct sums
  const Index* querySplit;
  const Index* sourceSplit;
  const GravityMoments* moments;
  LevelLists lists; // low2: the acceptance marks
  DeviceXyz<T> queries;
  DeviceXyz<T> sources;
  bool self;
  GravityWalkInputs in;
};

// The first accepted entry of [e0, e1) (the list is sorted by mark).
__device__ __forceinline__ unsigned long long firstAccepted(
  const float* mark, unsigned long long e0, unsigned long long e1)
{
  while (e0 < e1)
  {
    const unsigned long long mid = e0 + (e1 - e0) / 2;
    if (double(mark[mid]) < kOpenReach)
      e0 = mid + 1;
    else
      e1 = mid;
  }
  return e0;
}

// An accepted node at query point x: an exact point mass (less the query's
// own mass when it is one of its points; a pair at s = 0 is skipped), or its
// quadrupole. The CPU's acceptPointMass and M2P terms, in double.
// Returns the mass it added (for the device asserts' check).
__device__ __forceinline__ double addNode(GravitySum& sum, const GravityMoments& n, Index first,
  Index end, Index own, const double* x, const GravityWalkInputs& in)
{
  if (n.radius2 == 0)
  {
    double m = n.mass;
    if (own != kNoSource && own >= first && own < end)
      m -= in.mass[own];
    addPointTerm(sum, n.com[0] - x[0], n.com[1] - x[1], n.com[2] - x[2], m, in.eps2);
    return m;
  }
  addMultipoleTerm(sum, n, x, in.eps2);
  return n.mass;
}

// The leaf kernel of the engine (blockLeafPass): a block per receiver, a
// thread per query point (kThreads at a time), the sources and the accepted
// nodes staged through shared memory for the whole block. The receivers of
// one launch are disjoint, so every query's sums belong to one thread.
template <class T, int kThreads>
struct ReceiverTerms
{
  static constexpr int kMaxThreads = kThreads;
  ReceiverArgs<T> a;

  __device__ void consume(Item item, const BlockGroup& block) const
  {
    __shared__ double shx[kThreads];
    __shared__ double shy[kThreads];
    __shared__ double shz[kThreads];
    __shared__ double shm[kThreads];
    __shared__ alignas(GravityMoments) unsigned char nodeBytes[kThreads * sizeof(GravityMoments)];
    __shared__ Index nodeFirst[kThreads];
    __shared__ Index nodeEnd[kThreads];
    GravityMoments* nodes = reinterpret_cast<GravityMoments*>(nodeBytes);

    const Index c = Index(item);
    const int tid = block.rank();
    const Index q0 = a.querySplit[c], q1 = a.querySplit[c + 1];
    const unsigned long long e0 = a.lists.begin(c);
    const unsigned long long e1 = a.lists.end(c);
    const unsigned long long eAccepted = firstAccepted(a.lists.low2, e0, e1);
    const unsigned long long eDirectEnd = a.leaves ? eAccepted : e0;
    if (eDirectEnd == e0 && eAccepted == e1)
      return; // nothing for this receiver (uniform over the block)

    // Uniform over the block: every thread runs every iteration (barriers).
    for (Index qb = q0; qb < q1; qb += Index(kThreads))
    {
      const Index q = qb + Index(tid);
      const bool active = q < q1;
      double x[3] = { 0.0, 0.0, 0.0 };
      Index own = kNoSource;
      if (active)
      {
        x[0] = double(a.queries.x[q]);
        x[1] = double(a.queries.y[q]);
        x[2] = double(a.queries.z[q]);
        own = a.in.ownSource ? a.in.ownSource[q] : (a.self ? q : kNoSource);
      }
      GravitySum sum;
      double seen = 0; // the mass of the terms added (device asserts)
      // P2P: the open source leaves' points (leaves only).
      for (unsigned long long e = e0; e < eDirectEnd; ++e)
      {
        const Index d = a.lists.source[e];
        const Index s0 = a.sourceSplit[d], s1 = a.sourceSplit[d + 1];
        for (Index c0 = s0; c0 < s1; c0 += Index(kThreads))
        {
          const Index m = s1 - c0 < Index(kThreads) ? s1 - c0 : Index(kThreads);
          if (Index(tid) < m)
          {
            shx[tid] = double(a.sources.x[c0 + tid]);
            shy[tid] = double(a.sources.y[c0 + tid]);
            shz[tid] = double(a.sources.z[c0 + tid]);
            shm[tid] = a.in.mass[c0 + tid];
          }
          block.sync();
          if (active)
            for (Index j = 0; j < m; ++j)
              if (c0 + j != own) // the query's own source adds nothing
              {
                addPointTerm(sum, shx[j] - x[0], shy[j] - x[1], shz[j] - x[2], shm[j], a.in.eps2);
                seen += shm[j];
              }
          block.sync();
        }
      }
      // M2P: the accepted nodes, kThreads at a time.
      for (unsigned long long eb = eAccepted; eb < e1; eb += kThreads)
      {
        const int m = e1 - eb < (unsigned long long)kThreads ? int(e1 - eb) : kThreads;
        if (tid < m)
        {
          const Index d = a.lists.source[eb + tid];
          nodes[tid] = a.moments[d];
          nodeFirst[tid] = a.sourceSplit[d];
          nodeEnd[tid] = a.sourceSplit[d + 1];
        }
        block.sync();
        if (active)
          for (int j = 0; j < m; ++j)
            seen += addNode(sum, nodes[j], nodeFirst[j], nodeEnd[j], own, x, a.in);
        block.sync();
      }
      if (active)
      {
        a.in.u[q] += sum.u;
        a.in.gx[q] += sum.g[0];
        a.in.gy[q] += sum.g[1];
        a.in.gz[q] += sum.g[2];
        if (a.in.massSeen)
          a.in.massSeen[q] += seen;
      }
    }
  }
};

// Threads per receiver: a leaf holds at most a few tens of query points, an
// upper node many.
constexpr int kLeafThreads = 64;
constexpr int kNodeThreads = 128;

template <class T>
ReceiverArgs<T> receiverArgs(const DeviceTree<T>& tree,
  const std::vector<DeviceBuffer<GravityMoments>>& moments, const GravityWalkInputs& in,
  const WalkLevel& level)
{
  const DevicePlane<T>& plane = tree.planes[std::size_t(level.plane)];
  ReceiverArgs<T> a{};
  a.leaves = level.plane == 0;
  a.querySplit = plane.querySplit();
  a.sourceSplit = plane.sourceSplit.get();
  a.moments = moments[std::size_t(level.plane)].get();
  a.lists = LevelLists(level);
  a.queries = queriesOf(tree);
  a.sources = sourcesOf(tree);
  a.self = tree.self;
  a.in = in;
  return a;
}
} // namespace

template <class T>
void gravityWalkCuda(const DeviceTree<T>& tree,
  const std::vector<DeviceBuffer<GravityMoments>>& moments, const GravityWalkInputs& in,
  cudaStream_t stream, TempStorage& temp, RunInfo& info, const std::function<void(int)>& planeDone)
{
  GravityNodeWalk<T> policy(tree, moments, in.theta, planeDone);
  DualWalkCuda<T, GravityNodeWalk<T>> walk(tree, policy, stream, temp, &info);
  WalkLevel level = walk.top();
  while (level.plane > 1)
  {
    level = walk.descend(level);
    // The plane's whole list is held (base 0): its accepted multipoles.
    if (level.size > 0)
      blockLeafPass(ReceiverTerms<T, kNodeThreads>{ receiverArgs(tree, moments, in, level) }, 0,
        level.numNodes, kNodeThreads, 0, stream);
  }
  const std::size_t batches = walk.leafPass(level,
    [&](const WalkLevel& leaves, Index first, Index last)
    {
      if (leaves.size == 0)
        return; // no list: nothing attracts any leaf (all sources massless)
      blockLeafPass(ReceiverTerms<T, kLeafThreads>{ receiverArgs(tree, moments, in, leaves) },
        first, last, kLeafThreads, 0, stream);
    });
  info.counters.emplace_back("gpu leaf batches", double(batches));
}

template void gravityWalkCuda<float>(const DeviceTree<float>&,
  const std::vector<DeviceBuffer<GravityMoments>>&, const GravityWalkInputs&, cudaStream_t,
  TempStorage&, RunInfo&, const std::function<void(int)>&);
template void gravityWalkCuda<double>(const DeviceTree<double>&,
  const std::vector<DeviceBuffer<GravityMoments>>&, const GravityWalkInputs&, cudaStream_t,
  TempStorage&, RunInfo&, const std::function<void(int)>&);
} // namespace cuda
} // namespace jz
