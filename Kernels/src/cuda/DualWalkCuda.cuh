// The plane-by-plane dual tree walk on the GPU (§III and §IV-A), shared by
// every algorithm: kNN and friends-of-friends are two policies of it, and a
// new walk (Borůvka EMST, tree gravity) writes only its own rules.
//
// A plane's walk turns the interaction list of the plane above into the list
// of this plane. Each *work item* (a receiving node, or a pair of nodes) of
// the plane is expanded by one thread into its children's node pairs, and the
// policy's *node-pair test* decides each: discard it, act on it now (link two
// groups, tighten a radius), or keep it for the plane below. The skeleton
// runs that expansion twice, the interaction-list pattern of §III-C:
//   Count    every item counts its kept pairs; acting happens here only;
//   Scan     an exclusive sum of the counts gives every item its offset;
//   Insert   every item writes its kept pairs at its offset (compaction).
// The kept pairs of one item are contiguous, so a list whose items are the
// receiving nodes is already in CSR form (offset[i] .. offset[i + 1]). Insert
// may run for a range of items at a time, into a buffer that starts at
// offset[first] (the kNN leaf plane is inserted and walked in batches).
//
// At the leaves the kept pairs go to the policy's *leaf pass*: a group of
// threads (a warp, or a block) per item evaluates the point pairs.
//
// The top of the walk is the virtual plane of *super nodes* (NGR of §III-B):
// groups of kSuperNodeGroup consecutive top nodes, all with all.
//
// A node policy is a device-copyable functor:
//   struct NodePolicy
//   {
//     using Entry = ...;                                  // one kept pair
//     template <bool kCount, class Emit>
//     __device__ void expand(Item item, Emit& emit) const;  // emit(entry) keeps
//     __device__ void store(unsigned long long at, const Entry& e) const;
//   };
// and a leaf policy:
//   struct LeafPolicy
//   {
//     static constexpr int kMaxThreads = ...;             // block size bound
//     __device__ void leaf(Item item, const Group& group) const;
//   };
// Per-node state (kNN's radius bounds, FoF's group pointers) lives in the
// policy's device arrays; the host code of each algorithm moves it from
// plane to plane (FoF's ParentToNode and contraction, kNN's parent maps).
#pragma once

#include <cub/device/device_scan.cuh>

#include <vector>

#include "CudaCommon.cuh"

namespace jz
{
namespace cuda
{
// A work item: a node index, or the index of a pair in a pair list (which
// may pass 2^32 entries).
using Item = unsigned long long;

// Top nodes per super node (NGR of §III-B), as on the CPU.
constexpr Index kSuperNodeGroup = 32;

// Boundaries of the super nodes over topNodes top nodes.
inline std::vector<Index> superNodeSplit(Index topNodes)
{
  std::vector<Index> split;
  for (Index i = 0; i < topNodes; i += kSuperNodeGroup)
    split.push_back(i);
  split.push_back(topNodes);
  return split;
}

// --- Emitters: what `emit(entry)` does in each pass ------------------------

// Count: counts the kept pairs.
struct CountEmit
{
  unsigned long long n = 0;
  template <class Entry>
  __device__ __forceinline__ void operator()(const Entry&)
  {
    ++n;
  }
};

// Insert: stores the kept pairs at the item's offset.
template <class Policy>
struct StoreEmit
{
  const Policy& policy;
  unsigned long long at, end;
  template <class Entry>
  __device__ __forceinline__ void operator()(const Entry& e)
  {
    if (at < end)
      policy.store(at, e);
    ++at;
  }
};

// --- Thread groups of the leaf pass ----------------------------------------

// The whole block works on one item (may synchronise with sync()).
struct BlockGroup
{
  __device__ __forceinline__ int rank() const { return threadIdx.x; }
  __device__ __forceinline__ int size() const { return blockDim.x; }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

// One warp works on one item.
struct WarpGroup
{
  __device__ __forceinline__ int rank() const { return threadIdx.x & 31; }
  __device__ __forceinline__ int size() const { return 32; }
  __device__ __forceinline__ void sync() const { __syncwarp(); }
};

// --- Kernels ---------------------------------------------------------------

template <class Policy>
__global__ void countKernel(Policy policy, Item numItems, unsigned long long* count)
{
  for (Item i = globalThread(); i < numItems; i += gridThreads())
  {
    CountEmit emit;
    policy.template expand<true>(i, emit);
    count[i] = emit.n;
  }
}

template <class Policy>
__global__ void insertKernel(
  Policy policy, Item first, Item last, const unsigned long long* offset, unsigned long long base)
{
  for (Item i = first + globalThread(); i < last; i += gridThreads())
  {
    StoreEmit<Policy> emit{ policy, offset[i] - base, offset[i + 1] - base };
    policy.template expand<false>(i, emit);
  }
}

template <class Policy>
__global__ void __launch_bounds__(Policy::kMaxThreads, 1)
  blockLeafKernel(Policy policy, Item first, Item last)
{
  for (Item item = first + blockIdx.x; item < last; item += gridDim.x)
    policy.leaf(item, BlockGroup{});
}

// The item loop is warp-uniform (the leaf pass may use warp collectives).
template <class Policy>
__global__ void __launch_bounds__(Policy::kMaxThreads, 1)
  warpLeafKernel(Policy policy, Item numItems)
{
  const Item warps = gridThreads() >> 5;
  for (Item i = globalThread() >> 5; i < numItems; i += warps)
    policy.leaf(i, WarpGroup{});
}

// --- Host side ---------------------------------------------------------------

// Count and Scan over the plane's items: offset (numItems + 1 entries,
// allocated here) holds each item's first entry, offset[numItems] the total,
// which is returned (the stream is synchronised for it).
template <class Policy>
unsigned long long countInteractions(const Policy& policy, Item numItems,
  DeviceBuffer<unsigned long long>& offset, cudaStream_t stream, TempStorage& temp)
{
  offset.allocate(std::size_t(numItems) + 1, stream, "the interaction list offsets");
  // The extra last count is zero, so the exclusive scan leaves the total there.
  check(cudaMemsetAsync(offset.get() + numItems, 0, sizeof(unsigned long long), stream),
    "cudaMemsetAsync");
  if (numItems > 0)
  {
    countKernel<<<gridFor(numItems, 128), 128, 0, stream>>>(policy, numItems, offset.get());
    JZ_CUDA_LAUNCH_CHECK("countKernel");
  }
  unsigned long long* o = offset.get();
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(
    cub::DeviceScan::ExclusiveSum(nullptr, bytes, o, o, (long long)numItems + 1, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(
    cub::DeviceScan::ExclusiveSum(storage, bytes, o, o, (long long)numItems + 1, stream));
  return fetchValue(o + numItems, stream);
}

// The entries [offset[first], offset[last]) of the items [first, last).
struct EntryRange
{
  unsigned long long begin, end;
};

inline EntryRange entryRange(
  const unsigned long long* offset, Item first, Item last, cudaStream_t stream)
{
  EntryRange r;
  check(cudaMemcpyAsync(&r.begin, offset + first, sizeof r.begin, cudaMemcpyDeviceToHost, stream),
    "entryRange");
  check(cudaMemcpyAsync(&r.end, offset + last, sizeof r.end, cudaMemcpyDeviceToHost, stream),
    "entryRange");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return r;
}

// Insert of the items [first, last): the policy stores entry offset[i] + j of
// item i at position offset[i] + j - base of its output. Asynchronous.
template <class Policy>
void insertInteractions(const Policy& policy, Item first, Item last,
  const unsigned long long* offset, unsigned long long base, cudaStream_t stream)
{
  if (last <= first)
    return;
  insertKernel<<<gridFor(last - first, 128), 128, 0, stream>>>(policy, first, last, offset, base);
  JZ_CUDA_LAUNCH_CHECK("insertKernel");
}

// The leaf pass with a block per item over the items [first, last).
template <class Policy>
void blockLeafPass(const Policy& policy, Item first, Item last, unsigned threads,
  std::size_t sharedBytes, cudaStream_t stream, unsigned maxBlocks = 0)
{
  if (last <= first)
    return;
  if (sharedBytes > 48 * 1024)
  {
    check(cudaFuncSetAttribute(
            blockLeafKernel<Policy>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)),
      "cudaFuncSetAttribute");
  }
  Item blocks = last - first;
  if (blocks > (1ull << 31) - 1)
    blocks = (1ull << 31) - 1;
  if (maxBlocks && blocks > maxBlocks)
    blocks = maxBlocks;
  blockLeafKernel<<<unsigned(blocks), threads, sharedBytes, stream>>>(policy, first, last);
  JZ_CUDA_LAUNCH_CHECK("blockLeafKernel");
}

// The leaf pass with a warp per item over numItems items.
template <class Policy>
void warpLeafPass(const Policy& policy, Item numItems, cudaStream_t stream)
{
  if (numItems == 0)
    return;
  constexpr unsigned threads = Policy::kMaxThreads;
  warpLeafKernel<<<gridFor(numItems * 32, threads), threads, 0, stream>>>(policy, numItems);
  JZ_CUDA_LAUNCH_CHECK("warpLeafKernel");
}
} // namespace cuda
} // namespace jz
