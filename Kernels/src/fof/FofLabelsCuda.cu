// Friends-of-friends group pointers on the GPU after the links: the
// contraction (every pointer becomes its root) and the canonical input-order
// labels (the smallest key of the group).
//
// The contraction is the CPU's, jz::fofContract (jz/FofLinking.h): path
// halving by compare-and-swap from the value read, so a pointer only ever
// moves towards its root and a racing compression cannot put back a stale
// ancestor over a root another thread has just stored.
#include <climits>

#include "fof/FofCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr Index kNoRoot = 0xFFFFFFFFu;

__global__ void contractKernel(Index* g, Index n)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
    jz::fofContract(g, Index(i));
}

// Post-condition of a contraction: g[g[i]] == g[i] for every i.
__global__ void checkRootsKernel(const Index* g, Index n, unsigned* bad)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
  {
    const Index r = g[i];
    if (r >= n || !jz::fofIsRoot(g, r) || r > i)
      *bad = 1;
  }
}

__device__ __forceinline__ GlobalId keyOf(const GlobalId* ids, Index input)
{
  return ids ? ids[input] : GlobalId(input);
}

// Every point's own key (so minKey of any index, root or not, is defined).
__global__ void ownKeyKernel(
  const Index* sortedInput, Index n, const GlobalId* ids, GlobalId* minKey)
{
  for (unsigned long long k = globalThread(); k < n; k += gridThreads())
    minKey[k] = keyOf(ids, sortedInput[k]);
}

// minKey[root] = the smallest key of the root's group. Members of a group
// are mostly consecutive in z-order, so each warp first reduces runs of
// lanes with the same root (a segmented minimum by shuffles) and only the
// head lane of a run does the atomic. The loop is warp-uniform (shuffles).
__global__ void memberKeyKernel(
  const Index* g, const Index* sortedInput, Index n, const GlobalId* ids, GlobalId* minKey)
{
  static_assert(sizeof(GlobalId) == sizeof(long long), "GlobalId is 64-bit");
  forEachWarpItem(n,
    [&](unsigned long long k, bool valid, unsigned lane)
    {
      const Index r = valid ? g[k] : kNoRoot;
      long long key = valid ? (long long)keyOf(ids, sortedInput[k]) : LLONG_MAX;
      const Index before = __shfl_up_sync(kFull, r, 1);
      const bool head = lane == 0 || before != r;
      const unsigned heads = __ballot_sync(kFull, head);
      // The run of this lane: the highest head at or below it.
      const int run = 31 - __clz(heads & (kFull >> (31 - lane)));
      for (unsigned offset = 1; offset < 32; offset <<= 1)
      {
        const long long other = __shfl_down_sync(kFull, key, offset);
        const int otherRun = __shfl_down_sync(kFull, run, offset);
        if (lane + offset < 32 && otherRun == run && other < key)
          key = other;
      }
      // A run that is only the root itself changes nothing.
      const bool alone = lane == 31 || ((heads >> (lane + 1)) & 1u);
      if (valid && head && !(alone && r == Index(k)))
        atomicMin(reinterpret_cast<long long*>(minKey + r), key);
    });
}

__global__ void outputKernel(const Index* g, const Index* sortedInput, Index n,
  const GlobalId* minKey, GlobalId* label, Index* root)
{
  for (unsigned long long k = globalThread(); k < n; k += gridThreads())
  {
    const Index r = g[k];
    const Index in = sortedInput[k];
    if (label)
      label[in] = minKey[r];
    if (root)
      root[in] = sortedInput[r];
  }
}
} // namespace

void fofContract(Index* g, Index n, cudaStream_t stream)
{
  if (n == 0)
    return;
  contractKernel<<<gridFor(n, 256), 256, 0, stream>>>(g, n);
  JZ_CUDA_LAUNCH_CHECK("contractKernel");
  if (!kDeviceAsserts)
    return;
  DeviceBuffer<unsigned> bad(1, stream, "a flag");
  JZ_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned), stream));
  checkRootsKernel<<<gridFor(n, 256), 256, 0, stream>>>(g, n, bad.get());
  JZ_CUDA_LAUNCH_CHECK("checkRootsKernel");
  if (fetchValue(bad.get(), stream))
    throw Error("internal error: a friends-of-friends group pointer is not a root after the "
                "contraction");
}

void fofMinKeysCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId* minKey, cudaStream_t stream)
{
  if (n == 0)
    return;
  ownKeyKernel<<<gridFor(n, 256), 256, 0, stream>>>(sortedInput, n, ids, minKey);
  JZ_CUDA_LAUNCH_CHECK("ownKeyKernel");
  memberKeyKernel<<<gridFor(n, 256), 256, 0, stream>>>(g, sortedInput, n, ids, minKey);
  JZ_CUDA_LAUNCH_CHECK("memberKeyKernel");
}

void fofLabelsCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId* label, Index* root, cudaStream_t stream)
{
  if (n == 0 || !(label || root))
    return;
  DeviceBuffer<GlobalId> minKey;
  if (label)
  {
    minKey.allocate(n, stream, "the group labels");
    fofMinKeysCuda(g, sortedInput, n, ids, minKey.get(), stream);
  }
  outputKernel<<<gridFor(n, 256), 256, 0, stream>>>(g, sortedInput, n, minKey.get(), label, root);
  JZ_CUDA_LAUNCH_CHECK("outputKernel");
  // minKey is freed in stream order, after outputKernel.
}
} // namespace cuda
} // namespace jz
