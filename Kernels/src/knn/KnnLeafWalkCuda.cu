// LeafToLeaf of the kNN walk on the GPU (§III-D), the leaf kernel of the dual
// walk (DualWalkCuda.cuh) with a block per leaf: every query point of the
// leaf against the source leaves of its interaction list (sorted by lower
// bound, so the walk stops early), reduced in the kernel to the requested
// outputs in query input order. The N x K arrays exist only when neighbour
// lists are requested.
//
// Two candidate-list layouts, one pass each, for any K:
//  - K <= 32: one thread per query, its list in registers (KMAX = 8, 16 or
//    32 slots; the K slots in use are the last K, the first KMAX - K hold a
//    -1 that no distance displaces, so slot KMAX - 1 is always the K-th
//    candidate the walk prunes with). Source leaves are staged through shared
//    memory for the whole block (§III-D), converted to double once there:
//    a conversion to or from a 64-bit type runs at a quarter of the rate of
//    double arithmetic, so converting each pair's coordinates would bound
//    the loop. The distances are the same bits (float to double is exact).
//  - K > 32: one warp per query, its list of K entries in shared memory
//    (global memory past the device's shared-memory limit). The warp takes
//    32 sources at a time; the candidates among them are sorted across the
//    lanes (bitonic) and merged into the list cooperatively.
//
// Candidates are ranked exactly like jz::NeighborHeap on the CPU: squared
// distance in double from jz::distance2, ties by the smaller key. Densities
// are summed in rank order, as the CPU sums them.
#include <climits>

#include "knn/KnnCuda.cuh"
#include "jz/DensityKernels.h"

namespace jz
{
namespace cuda
{
namespace
{
constexpr int kLeafThreads = 64; // register lists: queries per block pass
constexpr int kListWarps = 4;    // shared lists: queries per block (a warp each)
constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr Index kNoSource = 0xFFFFFFFFu;
constexpr GlobalId kNoKey = LLONG_MAX;
// Bytes of one list entry: d2 (double), key (GlobalId), source (Index).
constexpr std::size_t kEntryBytes = 8 + 8 + 4;

template <class T>
struct LeafArgs
{
  Index first, last; // leaves of this launch
  const Index* querySplit;
  const Box<T>* queryBox;
  const Index* sourceSplit;
  const Box<T>* sourceBox;
  LevelLists lists;
  const double* rmax2;
  DeviceXyz<T> queries;
  const Index* qInput;
  DeviceXyz<T> sources;
  const GlobalId* keys;
  const double* masses;
  Periodicity per;
  int k;
  DensityEstimator estimator;
  T* smoothingLength;
  T* density;
  GlobalId* neighborIds;
  T* neighborDistances;
  double* kth2Sorted;
};

// The strict (distance^2, key) order of jz::NeighborHeap.
__device__ __forceinline__ bool before(double ad2, GlobalId akey, double bd2, GlobalId bkey)
{
  return ad2 < bd2 || (ad2 == bd2 && akey < bkey);
}

__device__ __forceinline__ GlobalId keyOf(const GlobalId* keys, Index s)
{
  return s == kNoSource ? kNoKey : keys[s];
}

// End of the queries of a leaf that are searched: a run of duplicate
// queries (a point box) is searched for its first query only, and
// copyRunResultsKernel hands that result to the others (as on the CPU,
// KnnLeafSearch::consumeLeaf).
template <class T>
__device__ __forceinline__ Index searchedQueryEnd(const LeafArgs<T>& a, Index leaf)
{
  const Index q0 = a.querySplit[leaf], q1 = a.querySplit[leaf + 1];
  return q1 - q0 > 1 && boxIsPoint(a.queryBox[leaf]) ? q0 + 1 : q1;
}

// Rank j's contribution to the density sum with smoothing length h.
template <class T>
__device__ __forceinline__ double densityTerm(const LeafArgs<T>& a, double d2, Index src, double h)
{
  const double m = (a.masses && src != kNoSource) ? a.masses[src] : 1.0;
  if (a.estimator == DensityEstimator::TopHat)
    return m;
  return h > 0 ? m * cubicSplineW(sqrt(d2), h) : 0.0;
}

// Smoothing length and density of query q from the K-th squared distance
// and the rank-order sum of the density terms.
template <class T>
__device__ __forceinline__ void writeQuery(const LeafArgs<T>& a, Index q, double kth2, double sum)
{
  const std::size_t out = a.qInput[q];
  const double h = sqrt(kth2);
  if (a.kth2Sorted)
    a.kth2Sorted[q] = kth2;
  if (a.smoothingLength)
    a.smoothingLength[out] = T(h);
  if (a.density)
  {
    double rho = kInfinity; // all K neighbours coincide with the point
    if (h > 0)
      rho = a.estimator == DensityEstimator::TopHat ? topHatDensity(sum, h) : sum;
    a.density[out] = T(rho);
  }
}

// --- K <= 32: one thread per query, the list in registers ------------------

template <class T, int KMAX>
struct RegisterListLeaves
{
  static constexpr int kMaxThreads = kLeafThreads;
  LeafArgs<T> a;

  __device__ void consume(Item item, const BlockGroup& block) const;
};

// The leaf kernel of receiving leaf `item` (consumeLeaf of the CPU engine).
template <class T, int KMAX>
__device__ void RegisterListLeaves<T, KMAX>::consume(Item item, const BlockGroup& block) const
{
  const Index leaf = Index(item);
  __shared__ double shx[kLeafThreads];
  __shared__ double shy[kLeafThreads];
  __shared__ double shz[kLeafThreads];
  const int tid = block.rank();
  const Index q0 = a.querySplit[leaf], q1 = searchedQueryEnd(a, leaf);
  const unsigned long long e0 = a.lists.begin(leaf);
  const unsigned long long e1 = a.lists.end(leaf);
  const double bound2 = a.rmax2[leaf];
  const int pad = KMAX - a.k; // slots [0, pad) are unused

  // Uniform across the block: every thread runs every iteration (barriers).
  for (Index qb = q0; qb < q1; qb += kLeafThreads)
  {
    const Index q = qb + tid;
    const bool active = q < q1;
    T p[3] = { T(0), T(0), T(0) };
    if (active)
    {
      p[0] = a.queries.x[q];
      p[1] = a.queries.y[q];
      p[2] = a.queries.z[q];
    }
    const double pd[3] = { double(p[0]), double(p[1]), double(p[2]) };
    double hd[KMAX];
    Index hs[KMAX];
#pragma unroll
    for (int i = 0; i < KMAX; ++i)
    {
      hd[i] = i < pad ? -1.0 : bound2;
      hs[i] = kNoSource;
    }

    for (unsigned long long e = e0; e < e1; ++e)
    {
      const double w2 = hd[KMAX - 1] * (1 + kBoundSlack); // the K-th candidate
      const double low = a.lists.low2[e];
      // Early exit once no thread of the block can gain from the rest.
      if (!__syncthreads_or(active && low <= w2))
        break;
      const Index s = a.lists.source[e];
      const bool need = active && low <= w2 && pointBoxDistance2(p, a.sourceBox[s], a.per) <= w2;
      if (!__syncthreads_or(need))
        continue;
      const Index s0 = a.sourceSplit[s], s1 = a.sourceSplit[s + 1];
      for (Index c0 = s0; c0 < s1; c0 += kLeafThreads)
      {
        const Index m = (s1 - c0) < Index(kLeafThreads) ? (s1 - c0) : Index(kLeafThreads);
        if (Index(tid) < m)
        {
          shx[tid] = double(a.sources.x[c0 + tid]);
          shy[tid] = double(a.sources.y[c0 + tid]);
          shz[tid] = double(a.sources.z[c0 + tid]);
        }
        block.sync();
        if (need)
        {
          for (Index j = 0; j < m; ++j)
          {
            const double sp[3] = { shx[j], shy[j], shz[j] };
            const double d2 = distance2(pd, sp, a.per);
            if (d2 > hd[KMAX - 1])
              continue;
            const Index src = c0 + j;
            const GlobalId ck = a.keys[src];
            if (d2 == hd[KMAX - 1] && !(ck < keyOf(a.keys, hs[KMAX - 1])))
              continue;
            // Insert (d2, src) keeping (d2, key) ascending; constant indices
            // keep the list in registers. The -1 slots are never passed.
            bool placed = false;
#pragma unroll
            for (int i = KMAX - 1; i > 0; --i)
            {
              if (!placed)
              {
                // The key is looked up on a distance tie only.
                if (d2 < hd[i - 1] || (d2 == hd[i - 1] && ck < keyOf(a.keys, hs[i - 1])))
                {
                  hd[i] = hd[i - 1];
                  hs[i] = hs[i - 1];
                }
                else
                {
                  hd[i] = d2;
                  hs[i] = src;
                  placed = true;
                }
              }
            }
            if (!placed)
            {
              hd[0] = d2;
              hs[0] = src;
            }
          }
        }
        block.sync();
      }
    }
    if (!active)
      continue;

    // Ranks 0..K-1 are slots pad..KMAX-1.
    const std::size_t out = a.qInput[q];
    const double kth2 = hd[KMAX - 1];
    const double h = sqrt(kth2);
    double sum = 0;
#pragma unroll
    for (int i = 0; i < KMAX; ++i)
    {
      if (i >= pad)
      {
        const std::size_t at = out * a.k + std::size_t(i - pad);
        if (a.neighborIds)
          a.neighborIds[at] = keyOf(a.keys, hs[i]);
        if (a.neighborDistances)
          a.neighborDistances[at] = T(sqrt(hd[i]));
        if (a.density)
          sum += densityTerm(a, hd[i], hs[i], h);
      }
    }
    writeQuery(a, q, kth2, sum);
  }
}

// --- K > 32: one warp per query, the list in shared memory -----------------

// A warp's list of K entries, sorted by (d2, key); unused entries are
// sentinels that sort last.
struct WarpList
{
  double* d2;
  GlobalId* key;
  Index* src;
};

// Sorts the lanes' (d2, key, src) ascending across the warp (bitonic).
__device__ __forceinline__ void sortAcrossWarp(double& d2, GlobalId& key, Index& src, int lane)
{
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1)
  {
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1)
    {
      const double od2 = __shfl_xor_sync(kFull, d2, stride);
      const GlobalId okey = __shfl_xor_sync(kFull, key, stride);
      const Index osrc = __shfl_xor_sync(kFull, src, stride);
      const bool ascending = (lane & size) == 0;
      const bool lower = (lane & stride) == 0;
      const bool otherFirst = before(od2, okey, d2, key);
      // The lower lane of an ascending pair keeps the smaller entry.
      if (lower == ascending ? otherFirst : !otherFirst)
      {
        d2 = od2;
        key = okey;
        src = osrc;
      }
    }
  }
}

// How many of the m sorted candidates in lanes 0..m-1 come before (xd2, xkey).
__device__ __forceinline__ int candidatesBefore(
  double cd2, GlobalId ckey, int m, double xd2, GlobalId xkey)
{
  int pos = 0;
#pragma unroll
  for (int step = 16; step > 0; step >>= 1)
  {
    const int probe = pos + step - 1;
    const double pd2 = __shfl_sync(kFull, cd2, probe);
    const GlobalId pkey = __shfl_sync(kFull, ckey, probe);
    if (probe < m && before(pd2, pkey, xd2, xkey))
      pos += step;
  }
  const double pd2 = __shfl_sync(kFull, cd2, pos);
  const GlobalId pkey = __shfl_sync(kFull, ckey, pos);
  if (pos < m && before(pd2, pkey, xd2, xkey))
    ++pos;
  return pos;
}

// How many list entries come before (d2, key) (a binary search by one lane).
__device__ __forceinline__ int listRank(const WarpList& L, int k, double d2, GlobalId key)
{
  int lo = 0, hi = k;
  while (lo < hi)
  {
    const int mid = (lo + hi) >> 1;
    if (before(L.d2[mid], L.key[mid], d2, key))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Merges the candidate lanes (mask) into the list, keeping its K best, and
// returns the new K-th entry in worstD2/worstKey. Lanes outside the mask must
// hold the sentinel (+inf, kNoKey).
__device__ __forceinline__ void mergeCandidates(const WarpList& L, int k, unsigned mask, double d2,
  GlobalId key, Index src, int lane, double& worstD2, GlobalId& worstKey)
{
  const int m = __popc(mask);
  if (m == 1)
  {
    const int from = __ffs(mask) - 1;
    d2 = __shfl_sync(kFull, d2, from);
    key = __shfl_sync(kFull, key, from);
    src = __shfl_sync(kFull, src, from);
    if (lane != 0)
    {
      d2 = kInfinity;
      key = kNoKey;
      src = kNoSource;
    }
  }
  else
  {
    sortAcrossWarp(d2, key, src, lane);
  }
  // Candidate i goes to i + (entries before it); entry j to j + (candidates
  // before it). Entries move up only, so the list is shifted from the top
  // down, 32 entries at a time, each chunk read whole before it is written.
  const int rank = lane < m ? listRank(L, k, d2, key) : k;
  const int firstMoved = __shfl_sync(kFull, rank, 0);
  for (int top = k - 1; top >= firstMoved; top -= 32)
  {
    const int j = top - lane;
    const bool moves = j >= firstMoved;
    double ed2 = kInfinity;
    GlobalId ekey = kNoKey;
    Index esrc = kNoSource;
    if (moves)
    {
      ed2 = L.d2[j];
      ekey = L.key[j];
      esrc = L.src[j];
    }
    const int to = j + candidatesBefore(d2, key, m, ed2, ekey);
    __syncwarp();
    if (moves && to < k)
    {
      L.d2[to] = ed2;
      L.key[to] = ekey;
      L.src[to] = esrc;
    }
    __syncwarp();
  }
  if (lane < m && lane + rank < k)
  {
    L.d2[lane + rank] = d2;
    L.key[lane + rank] = key;
    L.src[lane + rank] = src;
  }
  __syncwarp();
  worstD2 = L.d2[k - 1];
  worstKey = L.key[k - 1];
}

// The K nearest sources of query q into the warp's list, then its outputs.
template <class T>
__device__ __forceinline__ void warpQuery(const LeafArgs<T>& a, const WarpList& L, Index q,
  unsigned long long e0, unsigned long long e1, double bound2, int lane)
{
  const int k = a.k;
  const T p[3] = { a.queries.x[q], a.queries.y[q], a.queries.z[q] };
  // Sentinels just above the bound: a source at exactly the bound is taken,
  // as NeighborHeap takes it.
  const double sentinel = nextafter(bound2, kInfinity);
  for (int i = lane; i < k; i += 32)
  {
    L.d2[i] = sentinel;
    L.key[i] = kNoKey;
    L.src[i] = kNoSource;
  }
  __syncwarp();
  double worstD2 = sentinel;
  GlobalId worstKey = kNoKey;
  for (unsigned long long e = e0; e < e1; ++e)
  {
    const double w2 = worstD2 * (1 + kBoundSlack);
    if (double(a.lists.low2[e]) > w2)
      break; // sorted by lower bound: nothing closer follows
    const Index s = a.lists.source[e];
    if (pointBoxDistance2(p, a.sourceBox[s], a.per) > w2)
      continue;
    const Index s1 = a.sourceSplit[s + 1];
    for (Index c = a.sourceSplit[s]; c < s1; c += 32)
    {
      const Index j = c + Index(lane);
      double d2 = kInfinity;
      GlobalId key = kNoKey;
      bool candidate = false;
      if (j < s1)
      {
        const T sp[3] = { a.sources.x[j], a.sources.y[j], a.sources.z[j] };
        d2 = distance2(p, sp, a.per);
        if (d2 <= worstD2)
        {
          key = a.keys[j];
          candidate = before(d2, key, worstD2, worstKey);
        }
      }
      const unsigned mask = __ballot_sync(kFull, candidate);
      if (mask == 0)
        continue;
      if (!candidate)
      {
        d2 = kInfinity;
        key = kNoKey;
      }
      mergeCandidates(L, k, mask, d2, key, candidate ? j : kNoSource, lane, worstD2, worstKey);
    }
  }

  // Outputs: the lists by all lanes, then the density terms in parallel and
  // their sum in rank order by lane 0.
  const std::size_t out = a.qInput[q];
  if (a.neighborIds || a.neighborDistances)
  {
    for (int r = lane; r < k; r += 32)
    {
      if (a.neighborIds)
        a.neighborIds[out * k + r] = L.key[r];
      if (a.neighborDistances)
        a.neighborDistances[out * k + r] = T(sqrt(L.d2[r]));
    }
  }
  const double kth2 = L.d2[k - 1];
  if (a.density)
  {
    const double h = sqrt(kth2);
    __syncwarp();
    for (int r = lane; r < k; r += 32)
      L.d2[r] = densityTerm(a, L.d2[r], L.src[r], h);
    __syncwarp();
  }
  if (lane == 0)
  {
    double sum = 0;
    if (a.density)
      for (int r = 0; r < k; ++r)
        sum += L.d2[r];
    writeQuery(a, q, kth2, sum);
  }
  __syncwarp(); // the list is reused by the next query
}

// kGlobal: the lists live in `scratch` (one slice per block, blocks loop
// over leaves) because they exceed the shared memory of a block.
template <class T, bool kGlobal>
struct WarpListLeaves
{
  static constexpr int kMaxThreads = kListWarps * 32;
  LeafArgs<T> a;
  unsigned char* scratch;

  // The leaf kernel of receiving leaf `item` (consumeLeaf of the CPU engine).
  __device__ void consume(Item item, const BlockGroup& block) const
  {
    const Index leaf = Index(item);
    extern __shared__ __align__(16) unsigned char sharedLists[];
    const int warps = block.size() >> 5, warp = block.rank() >> 5, lane = block.rank() & 31;
    const std::size_t n = std::size_t(warps) * std::size_t(a.k);
    unsigned char* base = kGlobal ? scratch + blockIdx.x * n * kEntryBytes : sharedLists;
    WarpList L;
    L.d2 = reinterpret_cast<double*>(base) + std::size_t(warp) * a.k;
    L.key = reinterpret_cast<GlobalId*>(base + n * 8) + std::size_t(warp) * a.k;
    L.src = reinterpret_cast<Index*>(base + n * 16) + std::size_t(warp) * a.k;
    const Index q0 = a.querySplit[leaf], q1 = searchedQueryEnd(a, leaf);
    const unsigned long long e0 = a.lists.begin(leaf);
    const unsigned long long e1 = a.lists.end(leaf);
    const double bound2 = a.rmax2[leaf];
    for (Index q = q0 + Index(warp); q < q1; q += Index(warps))
      warpQuery(a, L, q, e0, e1, bound2, lane);
  }
};

// Every query of a run leaf after the first gets the first one's outputs
// (identical points have identical neighbours). A block per leaf.
template <class T>
__global__ void copyRunResultsKernel(LeafArgs<T> a)
{
  for (Index leaf = a.first + blockIdx.x; leaf < a.last; leaf += gridDim.x)
  {
    const Index q0 = a.querySplit[leaf], q1 = a.querySplit[leaf + 1];
    if (searchedQueryEnd(a, leaf) == q1)
      continue;
    const std::size_t from = a.qInput[q0];
    for (Index q = q0 + 1 + threadIdx.x; q < q1; q += blockDim.x)
    {
      const std::size_t to = a.qInput[q];
      if (a.kth2Sorted)
        a.kth2Sorted[q] = a.kth2Sorted[q0];
      if (a.smoothingLength)
        a.smoothingLength[to] = a.smoothingLength[from];
      if (a.density)
        a.density[to] = a.density[from];
      for (int r = 0; r < a.k; ++r)
      {
        if (a.neighborIds)
          a.neighborIds[to * a.k + r] = a.neighborIds[from * a.k + r];
        if (a.neighborDistances)
          a.neighborDistances[to * a.k + r] = a.neighborDistances[from * a.k + r];
      }
    }
  }
}

template <class T>
void launchWarpLists(const LeafArgs<T>& a, cudaStream_t stream)
{
  int device = 0, optin = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
    "cudaDeviceGetAttribute");
  check(
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const std::size_t perWarp = std::size_t(a.k) * kEntryBytes;
  const int warps = int(std::min<std::size_t>(kListWarps, std::size_t(optin) / perWarp));
  if (warps >= 1)
  {
    const WarpListLeaves<T, false> policy{ a, nullptr };
    blockLeafPass(policy, a.first, a.last, warps * 32, std::size_t(warps) * perWarp, stream);
    return;
  }
  const unsigned grid = unsigned(std::min<std::size_t>(a.last - a.first, std::size_t(4) * sms));
  DeviceBuffer<unsigned char> scratch(
    std::size_t(grid) * kListWarps * perWarp, stream, "the neighbour candidate lists");
  const WarpListLeaves<T, true> policy{ a, scratch.get() };
  blockLeafPass(policy, a.first, a.last, kListWarps * 32, 0, stream, grid);
}
} // namespace

template <class T>
void knnLeafWalkCuda(const DeviceTree<T>& tree, int k, Index first, Index last,
  const WalkLevel& leaves, const double* rmax2, const GlobalId* keys, const double* masses,
  const DeviceOutputs<T>& out, cudaStream_t stream)
{
  const DevicePlane<T>& plane = tree.planes[0];
  if (last <= first || tree.numQueries == 0)
    return;
  LeafArgs<T> a{};
  a.first = first;
  a.last = last;
  a.querySplit = plane.querySplit();
  a.queryBox = plane.queryBox();
  a.sourceSplit = plane.sourceSplit.get();
  a.sourceBox = plane.sourceBox.get();
  a.lists = LevelLists(leaves);
  a.rmax2 = rmax2;
  a.queries = queriesOf(tree);
  a.qInput = tree.qInput();
  a.sources = sourcesOf(tree);
  a.keys = keys;
  a.masses = masses;
  a.per = tree.periodicity;
  a.k = k;
  a.estimator = out.estimator;
  a.smoothingLength = out.smoothingLength;
  a.density = out.density;
  a.neighborIds = out.neighborIds;
  a.neighborDistances = out.neighborDistances;
  a.kth2Sorted = out.kth2Sorted;
  if (k <= 8)
    blockLeafPass(RegisterListLeaves<T, 8>{ a }, first, last, kLeafThreads, 0, stream);
  else if (k <= 16)
    blockLeafPass(RegisterListLeaves<T, 16>{ a }, first, last, kLeafThreads, 0, stream);
  else if (k <= 32)
    blockLeafPass(RegisterListLeaves<T, 32>{ a }, first, last, kLeafThreads, 0, stream);
  else
    launchWarpLists(a, stream);
  const unsigned runBlocks = unsigned(std::min<std::size_t>(last - first, 1024));
  copyRunResultsKernel<<<runBlocks, 128, 0, stream>>>(a);
  JZ_CUDA_LAUNCH_CHECK("copyRunResultsKernel");
}

template void knnLeafWalkCuda<float>(const DeviceTree<float>&, int, Index, Index, const WalkLevel&,
  const double*, const GlobalId*, const double*, const DeviceOutputs<float>&, cudaStream_t);
template void knnLeafWalkCuda<double>(const DeviceTree<double>&, int, Index, Index,
  const WalkLevel&, const double*, const GlobalId*, const double*, const DeviceOutputs<double>&,
  cudaStream_t);
} // namespace cuda
} // namespace jz
