// Point-level friends-of-friends on the GPU (§IV-A): ParentToNode from the
// leaves into the point group pointers, the leaf pass of the dual walk
// (DualWalkCuda.cuh) with a warp per undecided leaf pair linking points with
// the compare-and-swap union, and the final contraction (FofLabelsCuda.cu).
//
// Friends are decided by jz::fofFriends (d^2 <= l^2 in double from the
// stored coordinates, nearest image), the very predicate of the CPU backend;
// this file is compiled with --fmad=false.
#include "fof/FofCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kFull = 0xFFFFFFFFu;

// One thread per leaf: linked leaves point at the first point of their root
// leaf, the others' points are their own roots.
__global__ void pointInitKernel(const Index* sourceSplit, Index numLeaves, Index numPoints,
  const Index* grp, const unsigned char* linked, Index* g)
{
  for (unsigned long long i = globalThread(); i < numLeaves; i += gridThreads())
  {
    const Index s0 = sourceSplit[i];
    const Index s1 = sourceSplit[i + 1] < numPoints ? sourceSplit[i + 1] : numPoints;
    Index r = 0;
    const bool l = linked[i] != 0;
    if (l)
    {
      const Index root = grp[i] < numLeaves ? grp[i] : Index(i);
      r = sourceSplit[root];
      // A root leaf is never empty in a self tree; be safe anyway.
      if (r >= numPoints || root == i)
        r = s0;
    }
    for (Index k = s0; k < s1; ++k)
      g[k] = l ? r : k;
  }
}

// Lower bound of the separation (as Geometry.h's separation() computes it)
// between coordinate x and any coordinate in [lo, hi], given the pair's image
// mode in this dimension. Rounding is monotone, so the direct and wrapped
// forms never exceed any rounded separation; the mixed case (rare: a pair
// straddling half the period) is not filtered.
__device__ __forceinline__ double pointGap(double x, double lo, double hi, int mode, double L)
{
  if (mode == kFofDirect)
    return jzMax(0.0, jzMax(lo - x, x - hi));
  if (mode == kFofWrap)
    return jzMax(0.0, L - jzMax(jzAbs(x - lo), jzAbs(x - hi)));
  return 0.0;
}

// Whether a point may have a friend inside box b (never false for a point
// that has one).
template <class T>
__device__ __forceinline__ bool mayHaveFriend(
  const T* p, const Box<T>& b, const int* mode, const Periodicity& per, double l2)
{
  double s = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double gd =
      pointGap(double(p[d]), double(b.lo[d]), double(b.hi[d]), mode[d], per.length[d]);
    s += gd * gd;
  }
  return s <= l2;
}

template <class T>
struct LeafArgs
{
  const NodePair* pairs;
  Index numLeaves;
  Index numPoints;
  const Index* sourceSplit;
  const Box<T>* box;
  const Index* grp;
  const unsigned char* linked;
  DeviceXyz<T> points;
  Periodicity per;
  double l2;
  Index* g;
};

// End of the points of leaf X that may link it: a linked run of duplicates
// (one group, all at one place) links through its first point (as on the CPU,
// FofLeafLinks::memberEnd).
template <class T>
__device__ __forceinline__ Index memberEnd(const LeafArgs<T>& a, Index X, bool linkedX)
{
  const Index s0 = a.sourceSplit[X];
  return linkedX && boxIsPoint(a.box[X]) ? s0 + 1 : a.sourceSplit[X + 1];
}

template <class T>
__device__ void leafSelf(const LeafArgs<T>& a, Index s0, Index s1, bool run, unsigned lane)
{
  if (run)
  {
    // A run of duplicates: every point is a friend of the first.
    for (Index k = s0 + 1 + lane; k < s1; k += 32)
      fofUnion(a.g, s0, k);
    return;
  }
  // Every pair (k, m), k < m: lane owns k, walks m (coalesced across lanes).
  for (Index c = s0; c < s1; c += 32)
  {
    const Index k = c + lane;
    if (k >= s1)
      continue;
    const T p[3] = { a.points.x[k], a.points.y[k], a.points.z[k] };
    for (Index m = k + 1; m < s1; ++m)
    {
      const T q[3] = { a.points.x[m], a.points.y[m], a.points.z[m] };
      if (fofFriends(p, q, a.l2, a.per))
        fofUnion(a.g, k, m);
    }
  }
}

// Point k (zero past `end`, as the lanes beyond a leaf's last point) and
// whether it may have a friend in `other` (the other leaf's box).
template <class T>
__device__ __forceinline__ bool loadCandidate(
  const LeafArgs<T>& a, Index k, Index end, const Box<T>& other, const int* mode, T* p)
{
  p[0] = p[1] = p[2] = T(0);
  if (k >= end)
    return false;
  p[0] = a.points.x[k];
  p[1] = a.points.y[k];
  p[2] = a.points.z[k];
  return mayHaveFriend(p, other, mode, a.per, a.l2);
}

template <class T>
__device__ void leafCross(
  const LeafArgs<T>& a, Index A, Index B, bool linkedA, bool linkedB, unsigned lane)
{
  const bool bothConnected = linkedA && linkedB;
  const Index a0 = a.sourceSplit[A], a1 = memberEnd(a, A, linkedA);
  const Index b0 = a.sourceSplit[B], b1 = memberEnd(a, B, linkedB);
  const Box<T> boxA = a.box[A], boxB = a.box[B];
  int mode[3];
  for (int d = 0; d < 3; ++d)
    mode[d] = fofImageMode(boxA, boxB, d, a.per.length[d]);
  for (Index ca = a0; ca < a1; ca += 32)
  {
    const Index i = ca + lane;
    T p[3];
    const bool candA = loadCandidate(a, i, a1, boxB, mode, p);
    if (__ballot_sync(kFull, candA) == 0)
      continue;
    for (Index cb = b0; cb < b1; cb += 32)
    {
      const Index j = cb + lane;
      T q[3];
      const bool candB = loadCandidate(a, j, b1, boxA, mode, q);
      unsigned maskB = __ballot_sync(kFull, candB);
      bool linkedHere = false;
      while (maskB)
      {
        const int src = __ffs(maskB) - 1;
        maskB &= maskB - 1;
        const T r[3] = { __shfl_sync(kFull, q[0], src), __shfl_sync(kFull, q[1], src),
          __shfl_sync(kFull, q[2], src) };
        if (candA && fofFriends(p, r, a.l2, a.per))
        {
          fofUnion(a.g, i, cb + Index(src));
          linkedHere = true;
        }
      }
      // Two leaves that are each one group: one link joins them.
      if (bothConnected && __any_sync(kFull, linkedHere))
        return;
    }
  }
}

// The leaf-pair kernel: a warp per undecided leaf pair (the lanes take the
// points; every branch below is warp-uniform).
template <class T>
struct FofLeafPolicy
{
  static constexpr int kMaxThreads = 256;
  LeafArgs<T> a;

  __device__ void consume(Item k, const WarpGroup& warp) const
  {
    const unsigned lane = unsigned(warp.rank());
    const NodePair pr = a.pairs[k];
    if (pr.a >= a.numLeaves || pr.b >= a.numLeaves)
      return;
    if (a.sourceSplit[pr.a + 1] > a.numPoints || a.sourceSplit[pr.b + 1] > a.numPoints)
      return;
    const bool la = a.linked[pr.a] != 0, lb = a.linked[pr.b] != 0;
    if (pr.a == pr.b)
    {
      if (!la)
        leafSelf(a, a.sourceSplit[pr.a], a.sourceSplit[pr.a + 1], boxIsPoint(a.box[pr.a]), lane);
      return;
    }
    if (la && lb && a.grp[pr.a] == a.grp[pr.b])
      return;
    leafCross(a, pr.a, pr.b, la, lb, lane);
  }
};
} // namespace

template <class T>
void fofLeafWalkCuda(const DeviceTree<T>& tree, const FofLeafLevel& leafLevel, double l2, Index* g,
  cudaStream_t stream)
{
  const DevicePlane<T>& leaves = tree.planes[0];
  const FofPlaneGroups& groups = leafLevel.groups;
  const Index n = tree.numSources;
  if (n == 0 || leaves.numNodes == 0)
    return;
  pointInitKernel<<<gridFor(leaves.numNodes, 256), 256, 0, stream>>>(
    leaves.sourceSplit.get(), leaves.numNodes, n, groups.grp.get(), groups.linked.get(), g);
  JZ_CUDA_LAUNCH_CHECK("pointInitKernel");
  LeafArgs<T> a;
  a.pairs = leafLevel.pairs.pairs.get();
  a.numLeaves = leaves.numNodes;
  a.numPoints = n;
  a.sourceSplit = leaves.sourceSplit.get();
  a.box = leaves.sourceBox.get();
  a.grp = groups.grp.get();
  a.linked = groups.linked.get();
  a.points = sourcesOf(tree);
  a.per = tree.periodicity;
  a.l2 = l2;
  a.g = g;
  warpLeafPass(FofLeafPolicy<T>{ a }, leafLevel.pairs.size, stream);
  fofContract(g, n, stream);
}

template void fofLeafWalkCuda<float>(
  const DeviceTree<float>&, const FofLeafLevel&, double, Index*, cudaStream_t);
template void fofLeafWalkCuda<double>(
  const DeviceTree<double>&, const FofLeafLevel&, double, Index*, cudaStream_t);
} // namespace cuda
} // namespace jz
