// The dual tree walk on the z-order planes on the GPU (§III-B, Algorithm 1),
// shared by every algorithm: the CUDA counterpart of the CPU engine
// (src/walk/DualWalk.h) with the same policy hooks, so kNN and FoF are two
// policies of it and a new walk (Borůvka EMST, tree gravity) writes only its
// own rules. doc/ARCHITECTURE.md, "CUDA", maps the two side by side.
//
// The engine owns the traversal:
//  - the super-node level above the top plane (kSuperNodeSize top nodes per
//    super node, all with all, or each unordered pair once);
//  - level by level, the list of plane p from the level above, with the
//    interaction-list pattern of §III-C: Count (every work item counts the
//    child pairs it keeps; the policy acts on accepted pairs here only),
//    an exclusive scan, and Insert (every item writes its kept pairs at its
//    offset), then a segmented sort by lower bound for sorted walks;
//  - the leaf pass: the policy's leaf kernel per receiving leaf (a block) or
//    per kept leaf pair (a warp). Query-centric leaf lists are inserted and
//    consumed in batches of leaves, so they never exist whole.
// Work items: query-centric walks (kUnorderedPairs false) take one thread per
// receiving node c of plane p, which walks its parent's list, so the lists
// come out in CSR form per receiver; unordered walks (FoF) take one thread per
// kept pair (P, Q) of the level above and expand it to the child pairs (c, d),
// d >= c when P == Q.
//
// A policy is a host object (per-node state in device buffers) with
//   static constexpr bool kUnorderedPairs, kSortedLists;
//   void beginPlane(int p);                  // before plane p's Count (host)
//   void endPlane(int p, unsigned long long n); // after its Insert (host)
//   Rules rules(int p) const;                // the device functor for plane p
// and a device functor (plain struct of device pointers, passed to the
// kernels by value) deriving from DeviceRulesDefaults:
//   EntryContext                             // per parent pair
//   template <bool kCount> double beginReceiver(Index c, const DeviceParentView&)
//       (query-centric) per receiver, its reach; beginParent of the CPU for
//       one child (kNN: FindRmax in Count, stored and read back by Insert)
//   bool enterEntry(Index P, Index Q, EntryContext&)
//   bool childMeetsEntry(Index c, Index Q, double entryLow2, const EntryContext&)
//   PairVerdict testPair(Index c, Index d, const EntryContext&, double& low2)
//   void accept(Index c, Index d, const EntryContext&)   // Count only
// One rule differs from the CPU: Count and Insert must keep the same pairs,
// so testPair may not read what accept() writes (FoF tests geometry only and
// leaves same-group pairs to enterEntry on the plane below).
#pragma once

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "walk/SuperNodes.h"
#include "walk/WalkPolicy.h"
#include "tree/TreeCuda.cuh"

namespace jz
{
namespace cuda
{
// PairVerdict (the node-pair test's answer) is the CPU engine's
// (walk/WalkPolicy.h); an Accept acts in Count only.

// A work item: a node, or a pair of a pair list (which may pass 2^32).
using Item = unsigned long long;

// A kept pair of nodes of one plane (unordered walks: a <= b).
struct NodePair
{
  Index a, b;
};

// One level's interaction lists. Query-centric: receiver i's sources are
// source[offset[i] - base .. offset[i + 1] - base) (with float lower bounds,
// rounded down, when sorted), held for a range of receivers starting at
// `base`. Unordered: the kept pairs.
struct WalkLevel
{
  int plane = 0;                     // numPlanes for the super-node level
  Index numNodes = 0;                // of this level
  const Index* childSplit = nullptr; // node i's children: [childSplit[i], childSplit[i + 1])
  DeviceBuffer<Index> split;         // the super nodes' children (the top level only)
  DeviceBuffer<Index> parentOf;      // node -> its index on the level above (query-centric)
  unsigned long long size = 0;       // entries of the whole level
  DeviceBuffer<unsigned long long> offset;
  unsigned long long base = 0;
  DeviceBuffer<Index> source;
  DeviceBuffer<float> low2;
  DeviceBuffer<NodePair> pairs;
};

// A level's lists as a kernel reads them: receiver c's entries are
// [begin(c), end(c)) of source and low2 (the stored bounds; gravity's
// acceptance marks).
struct LevelLists
{
  const unsigned long long* offset = nullptr;
  unsigned long long base = 0;
  const Index* source = nullptr;
  const float* low2 = nullptr;

  LevelLists() = default;
  explicit LevelLists(const WalkLevel& level)
    : offset(level.offset.get())
    , base(level.base)
    , source(level.source.get())
    , low2(level.low2.get())
  {
  }
  __device__ unsigned long long begin(Index c) const { return offset[c] - base; }
  __device__ unsigned long long end(Index c) const { return offset[c + 1] - base; }
};

// A receiver's parent as beginReceiver sees it (walk/WalkPolicy.h's
// ParentView): its list entries [begin, end) name source parents Q with
// children [firstChild(Q), endChild(Q)) on the plane walked.
struct DeviceParentView
{
  Index parent;
  const Index* source;
  const float* low2;
  unsigned long long begin, end;
  const Index* childSplit;

  __device__ Index firstChild(Index q) const { return childSplit[q]; }
  __device__ Index endChild(Index q) const { return childSplit[q + 1]; }
  __device__ double entryLow2(unsigned long long e) const { return low2 ? double(low2[e]) : 0.0; }
};

struct NoEntryContext
{
};

// The hooks a device functor may leave out.
struct DeviceRulesDefaults
{
  using EntryContext = NoEntryContext;
  template <bool kCount>
  __device__ double beginReceiver(Index, const DeviceParentView&) const
  {
    return kInfinity;
  }
  template <class Context>
  __device__ bool enterEntry(Index, Index, Context&) const
  {
    return true;
  }
  template <class Context>
  __device__ bool childMeetsEntry(Index, Index, double, const Context&) const
  {
    return true;
  }
  template <class Context>
  __device__ void accept(Index, Index, const Context&) const
  {
  }
};

// What the kernels read of the plane walked and the level above.
struct DevicePlaneView
{
  Index numNodes;
  const Index* sourceSplit;
  const Index* querySplit;
  const Index* parentOf;   // query-centric
  const Index* childSplit; // of the level above
  const unsigned long long* offset;
  unsigned long long base;
  const Index* source;
  const float* low2;
  const NodePair* pairs; // unordered

  __device__ bool hasSources(Index i) const { return sourceSplit[i + 1] > sourceSplit[i]; }
  __device__ bool hasQueries(Index i) const { return querySplit[i + 1] > querySplit[i]; }
};

// Where Insert writes.
struct DeviceOutput
{
  Index* source;
  float* low2;
  NodePair* pairs;
};

// --- Emitters: what keeping a pair does in each pass -------------------------

struct CountEmit
{
  unsigned long long n = 0;
  __device__ __forceinline__ void operator()(Index, Index, double) { ++n; }
};

template <bool kUnordered, bool kSorted>
struct StoreEmit
{
  const DeviceOutput& out;
  unsigned long long at, end;
  __device__ __forceinline__ void operator()(Index c, Index d, double low2)
  {
    if (at < end)
    {
      if (kUnordered)
      {
        out.pairs[at] = NodePair{ c, d };
      }
      else
      {
        out.source[at] = d;
        if (kSorted)
          out.low2[at] = __double2float_rd(low2); // a lower bound still
      }
    }
    ++at;
  }
};

// --- The expansion of one work item ------------------------------------------

// The child pairs (c, d), d a child of Q, of receiver c and one entry.
template <bool kCount, class Rules, class Emit>
__device__ __forceinline__ void expandEntry(const Rules& rules, const DevicePlaneView& v, Index c,
  Index Q, Index dFirst, const typename Rules::EntryContext& context, Emit& emit)
{
  for (Index d = dFirst; d < v.childSplit[Q + 1] && d < v.numNodes; ++d)
  {
    if (!v.hasSources(d))
      continue;
    double low2 = 0;
    const PairVerdict verdict = rules.testPair(c, d, context, low2);
    if (verdict == PairVerdict::Keep)
      emit(c, d, low2);
    else if (kCount && verdict == PairVerdict::Accept)
      rules.accept(c, d, context);
  }
}

// Query-centric: receiver c against its parent's list.
template <bool kCount, class Rules, class Emit>
__device__ void expandReceiver(const Rules& rules, const DevicePlaneView& v, Index c, Emit& emit)
{
  if (!v.hasQueries(c))
    return;
  const Index P = v.parentOf[c];
  const DeviceParentView parent{ P, v.source, v.low2, v.offset[P] - v.base,
    v.offset[P + 1] - v.base, v.childSplit };
  const double reach = rules.template beginReceiver<kCount>(c, parent);
  for (unsigned long long e = parent.begin; e < parent.end; ++e)
  {
    const double entryLow2 = parent.entryLow2(e);
    if (entryLow2 > reach)
    {
      if (Rules::kSortedLists)
        break; // sorted: nothing closer follows (§III-D)
      continue;
    }
    const Index Q = v.source[e];
    typename Rules::EntryContext context{};
    if (!rules.enterEntry(P, Q, context) || !rules.childMeetsEntry(c, Q, entryLow2, context))
      continue;
    expandEntry<kCount>(rules, v, c, Q, v.childSplit[Q], context, emit);
  }
}

// Unordered: the kept pair (P, Q) of the level above.
template <bool kCount, class Rules, class Emit>
__device__ void expandPair(const Rules& rules, const DevicePlaneView& v, NodePair pq, Emit& emit)
{
  typename Rules::EntryContext context{};
  if (!rules.enterEntry(pq.a, pq.b, context))
    return;
  const Index c1 = v.childSplit[pq.a + 1] < v.numNodes ? v.childSplit[pq.a + 1] : v.numNodes;
  for (Index c = v.childSplit[pq.a]; c < c1; ++c)
  {
    if (!v.hasQueries(c) || !rules.childMeetsEntry(c, pq.b, 0.0, context))
      continue;
    expandEntry<kCount>(rules, v, c, pq.b, pq.a == pq.b ? c : v.childSplit[pq.b], context, emit);
  }
}

template <bool kCount, class Rules, class Emit>
__device__ __forceinline__ void expandItem(
  const Rules& rules, const DevicePlaneView& v, Item item, Emit& emit)
{
  if (Rules::kUnorderedPairs)
    expandPair<kCount>(rules, v, v.pairs[item], emit);
  else
    expandReceiver<kCount>(rules, v, Index(item), emit);
}

template <class Rules>
__global__ void countKernel(
  Rules rules, DevicePlaneView v, Item numItems, unsigned long long* count)
{
  for (Item i = globalThread(); i < numItems; i += gridThreads())
  {
    CountEmit emit;
    expandItem<true>(rules, v, i, emit);
    count[i] = emit.n;
  }
}

template <class Rules>
__global__ void insertKernel(Rules rules, DevicePlaneView v, Item first, Item last,
  const unsigned long long* offset, unsigned long long base, DeviceOutput out)
{
  for (Item i = first + globalThread(); i < last; i += gridThreads())
  {
    StoreEmit<Rules::kUnorderedPairs, Rules::kSortedLists> emit{ out, offset[i] - base,
      offset[i + 1] - base };
    expandItem<false>(rules, v, i, emit);
  }
}

// DualWalkCuda.cu: parentOf[c] = P for the children c of every P; segment
// offsets of the receivers [first, first + count] relative to `base`.
__global__ void parentOfKernel(
  const Index* childSplit, Index parents, Index numNodes, Index* parentOf);
__global__ void localOffsetsKernel(
  const unsigned long long* offset, Index count, unsigned long long base, unsigned long long* out);

// --- The leaf pass -------------------------------------------------------------

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

// A leaf kernel: `consume(item, group)` for every item, a block (or a warp)
// per item; the item loop is uniform over the group.
template <class Leaf>
__global__ void __launch_bounds__(Leaf::kMaxThreads, 1)
  blockLeafKernel(Leaf leaf, Item first, Item last)
{
  for (Item item = first + blockIdx.x; item < last; item += gridDim.x)
    leaf.consume(item, BlockGroup{});
}

template <class Leaf>
__global__ void __launch_bounds__(Leaf::kMaxThreads, 1) warpLeafKernel(Leaf leaf, Item numItems)
{
  const Item warps = gridThreads() >> 5;
  for (Item i = globalThread() >> 5; i < numItems; i += warps)
    leaf.consume(i, WarpGroup{});
}

// The leaf pass with a block per item over the items [first, last).
template <class Leaf>
void blockLeafPass(const Leaf& leaf, Item first, Item last, unsigned threads,
  std::size_t sharedBytes, cudaStream_t stream, unsigned maxBlocks = 0)
{
  if (last <= first)
    return;
  if (sharedBytes > 48 * 1024)
  {
    check(cudaFuncSetAttribute(
            blockLeafKernel<Leaf>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)),
      "cudaFuncSetAttribute");
  }
  Item blocks = std::min<Item>(last - first, (1ull << 31) - 1);
  if (maxBlocks && blocks > maxBlocks)
    blocks = maxBlocks;
  blockLeafKernel<<<unsigned(blocks), threads, sharedBytes, stream>>>(leaf, first, last);
  JZ_CUDA_LAUNCH_CHECK("blockLeafKernel");
}

// The leaf pass with a warp per item over numItems items.
template <class Leaf>
void warpLeafPass(const Leaf& leaf, Item numItems, cudaStream_t stream)
{
  if (numItems == 0)
    return;
  constexpr unsigned threads = Leaf::kMaxThreads;
  warpLeafKernel<<<gridFor(numItems * 32, threads), threads, 0, stream>>>(leaf, numItems);
  JZ_CUDA_LAUNCH_CHECK("warpLeafKernel");
}

// --- The engine ------------------------------------------------------------------

// Leaf-list entries held at once in the leaf pass of a query-centric walk
// (16 bytes an entry while sorting; at most 1 GiB). JZ_CUDA_LEAF_BATCH_ENTRIES
// overrides it (tests, tuning).
unsigned long long leafBatchEntries();

// Batches [cuts[b], cuts[b + 1]) of the receivers of `level` whose lists fit
// `budget` entries (a longer list forms a batch of its own).
std::vector<Index> receiverBatches(
  const WalkLevel& level, unsigned long long budget, cudaStream_t stream);

template <class T, class Policy>
class DualWalkCuda
{
public:
  using Rules = decltype(std::declval<const Policy&>().rules(0));

  DualWalkCuda(const DeviceTree<T>& tree, Policy& policy, cudaStream_t stream, TempStorage& temp,
    RunInfo* info = nullptr)
    : tree_(tree)
    , policy_(policy)
    , stream_(stream)
    , temp_(temp)
    , info_(info)
  {
  }

  int numPlanes() const { return int(tree_.planes.size()); }

  // Algorithm 1 lines 1-2: the super nodes and their list.
  WalkLevel top() const;

  // Algorithm 1 line 4: the list of plane up.plane - 1 from the level above.
  WalkLevel descend(const WalkLevel& up)
  {
    WalkLevel out = count(up);
    insert(up, out, 0, itemsOf(up, out));
    policy_.endPlane(out.plane, out.size);
    return out;
  }

  // From the super nodes down to `plane`.
  WalkLevel walkDownTo(int plane) { return walkDown(*this, plane); }

  // The leaf pass of a query-centric walk from the level above the leaves:
  // the leaves' lists are counted, then inserted (sorted) and handed to
  // consume(leaves, first, last) batch by batch; the policy's endPlane(0)
  // follows. Returns the number of batches.
  template <class Consume>
  std::size_t leafPass(const WalkLevel& up, Consume&& consume)
  {
    static_assert(!Rules::kUnorderedPairs, "unordered walks store their leaf pairs");
    WalkLevel leaves = count(up);
    const std::vector<Index> cuts = receiverBatches(leaves, leafBatchEntries(), stream_);
    for (std::size_t b = 0; b + 1 < cuts.size(); ++b)
    {
      insert(up, leaves, cuts[b], cuts[b + 1]);
      consume(leaves, cuts[b], cuts[b + 1]);
    }
    policy_.endPlane(0, leaves.size);
    return cuts.size() - 1;
  }

private:
  // Items of the level below `up`: its receivers, or up's kept pairs.
  static Item itemsOf(const WalkLevel& up, const WalkLevel& out)
  {
    return Rules::kUnorderedPairs ? up.size : out.numNodes;
  }

  DevicePlaneView view(const WalkLevel& up, const WalkLevel& out) const
  {
    const DevicePlane<T>& plane = tree_.planes[out.plane];
    DevicePlaneView v{};
    v.numNodes = plane.numNodes;
    v.sourceSplit = plane.sourceSplit.get();
    v.querySplit = plane.querySplit();
    v.parentOf = out.parentOf.get();
    v.childSplit = up.childSplit;
    v.offset = up.offset.get();
    v.base = up.base;
    v.source = up.source.get();
    v.low2 = up.low2.get();
    v.pairs = up.pairs.get();
    return v;
  }

  // beginPlane, the parents of the plane's nodes, Count and Scan.
  WalkLevel count(const WalkLevel& up)
  {
    WalkLevel out;
    out.plane = up.plane - 1;
    const DevicePlane<T>& plane = tree_.planes[out.plane];
    out.numNodes = plane.numNodes;
    out.childSplit = out.plane > 0 ? plane.childSplit.get() : nullptr;
    policy_.beginPlane(out.plane);
    if (!Rules::kUnorderedPairs && out.numNodes > 0)
    {
      out.parentOf.allocate(out.numNodes, stream_, "the parent map");
      parentOfKernel<<<blocksFor(up.numNodes, 128), 128, 0, stream_>>>(
        up.childSplit, up.numNodes, out.numNodes, out.parentOf.get());
      JZ_CUDA_LAUNCH_CHECK("parentOfKernel");
    }
    const Item items = itemsOf(up, out);
    out.offset.allocate(items + 1, stream_, "the interaction list offsets");
    // The extra last count is zero, so the exclusive scan leaves the total there.
    check(cudaMemsetAsync(out.offset.get() + items, 0, sizeof(unsigned long long), stream_),
      "cudaMemsetAsync");
    if (items > 0 && out.numNodes > 0)
    {
      countKernel<<<gridFor(items, 128), 128, 0, stream_>>>(
        policy_.rules(out.plane), view(up, out), items, out.offset.get());
      JZ_CUDA_LAUNCH_CHECK("countKernel");
    }
    else if (items > 0)
    {
      check(cudaMemsetAsync(out.offset.get(), 0, items * sizeof(unsigned long long), stream_),
        "cudaMemsetAsync");
    }
    unsigned long long* o = out.offset.get();
    std::size_t bytes = 0;
    JZ_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, bytes, o, o, (long long)items + 1, stream_));
    void* storage = temp_.get(bytes);
    JZ_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(storage, bytes, o, o, (long long)items + 1, stream_));
    out.size = fetchValue(o + items, stream_);
    if (info_)
    {
      info_->counters.emplace_back(
        "interactions plane " + std::to_string(out.plane), double(out.size));
    }
    return out;
  }

  // Insert of the items [first, last) (and the sort of their lists).
  void insert(const WalkLevel& up, WalkLevel& out, Item first, Item last);

  const DeviceTree<T>& tree_;
  Policy& policy_;
  cudaStream_t stream_;
  TempStorage& temp_;
  RunInfo* info_;
};

template <class T, class Policy>
WalkLevel DualWalkCuda<T, Policy>::top() const
{
  const Index topNodes = numPlanes() > 0 ? tree_.planes[numPlanes() - 1].numNodes : 0;
  const std::vector<Index> split = superNodeSplit(topNodes); // as on the CPU
  const Index supers = Index(split.size() - 1);
  WalkLevel level;
  level.plane = numPlanes();
  level.numNodes = supers;
  level.split.allocate(split.size(), stream_, "the super nodes");
  level.split.upload(split.data(), split.size());
  level.childSplit = level.split.get();
  std::vector<unsigned long long> offset(std::size_t(supers) + 1, 0);
  std::vector<Index> source;
  std::vector<NodePair> pairs;
  std::vector<float> zeros;
  for (Index s = 0; s < supers; ++s)
  {
    for (Index t = Rules::kUnorderedPairs ? s : 0; t < supers; ++t)
    {
      source.push_back(t);
      pairs.push_back(NodePair{ s, t });
    }
    offset[s + 1] = source.size();
  }
  level.size = source.size();
  if (Rules::kUnorderedPairs)
  {
    level.pairs.allocate(pairs.size(), stream_, "the super-node list");
    level.pairs.upload(pairs.data(), pairs.size());
  }
  else
  {
    level.offset.allocate(offset.size(), stream_, "the super-node list");
    level.offset.upload(offset.data(), offset.size());
    level.source.allocate(source.size(), stream_, "the super-node list");
    level.source.upload(source.data(), source.size());
    if (Rules::kSortedLists)
    {
      zeros.assign(source.size(), 0.0f);
      level.low2.allocate(zeros.size(), stream_, "the super-node list");
      level.low2.upload(zeros.data(), zeros.size());
    }
  }
  // The host vectors die here: wait for the copies.
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return level;
}

template <class T, class Policy>
void DualWalkCuda<T, Policy>::insert(const WalkLevel& up, WalkLevel& out, Item first, Item last)
{
  out.source.release();
  out.low2.release();
  out.pairs.release();
  out.base = 0;
  if (last <= first || out.size == 0)
    return;
  unsigned long long entries = out.size;
  if (!Rules::kUnorderedPairs)
  {
    // The entries of the receivers [first, last).
    unsigned long long range[2];
    check(cudaMemcpyAsync(
            range, out.offset.get() + first, sizeof range[0], cudaMemcpyDeviceToHost, stream_),
      "offsets");
    check(cudaMemcpyAsync(
            range + 1, out.offset.get() + last, sizeof range[1], cudaMemcpyDeviceToHost, stream_),
      "offsets");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    out.base = range[0];
    entries = range[1] - range[0];
    if (entries == 0)
      return;
  }
  DeviceOutput o{};
  DeviceBuffer<Index> sourceB;
  DeviceBuffer<float> lowB;
  if (Rules::kUnorderedPairs)
  {
    out.pairs.allocate(entries, stream_, "the pair list");
    o.pairs = out.pairs.get();
  }
  else
  {
    out.source.allocate(entries, stream_, "the interaction list");
    o.source = out.source.get();
    if (Rules::kSortedLists)
    {
      out.low2.allocate(entries, stream_, "the interaction list");
      o.low2 = out.low2.get();
    }
  }
  insertKernel<<<gridFor(last - first, 128), 128, 0, stream_>>>(
    policy_.rules(out.plane), view(up, out), first, last, out.offset.get(), out.base, o);
  JZ_CUDA_LAUNCH_CHECK("insertKernel");
  if (Rules::kUnorderedPairs || !Rules::kSortedLists)
    return;

  // Each receiver's list by lower bound, sorted in place between two
  // buffers (CUB's DoubleBuffer: its scratch is then small).
  const Index segments = Index(last - first);
  DeviceBuffer<unsigned long long> local;
  const unsigned long long* segmentOffset = out.offset.get() + first;
  if (out.base != 0)
  {
    local.allocate(std::size_t(segments) + 1, stream_, "the list offsets");
    localOffsetsKernel<<<blocksFor(std::size_t(segments) + 1, 128), 128, 0, stream_>>>(
      out.offset.get() + first, segments, out.base, local.get());
    JZ_CUDA_LAUNCH_CHECK("localOffsetsKernel");
    segmentOffset = local.get();
  }
  sourceB.allocate(entries, stream_, "the interaction list");
  lowB.allocate(entries, stream_, "the interaction list");
  cub::DoubleBuffer<float> keys(out.low2.get(), lowB.get());
  cub::DoubleBuffer<Index> values(out.source.get(), sourceB.get());
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(nullptr, bytes, keys, values,
    (long long)entries, (long long)segments, segmentOffset, segmentOffset + 1, stream_));
  void* storage = temp_.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(storage, bytes, keys, values,
    (long long)entries, (long long)segments, segmentOffset, segmentOffset + 1, stream_));
  // Keep the buffers the sort ended in; the others are freed in stream order.
  if (keys.Current() != out.low2.get())
    out.low2 = std::move(lowB);
  if (values.Current() != out.source.get())
    out.source = std::move(sourceB);
}
} // namespace cuda
} // namespace jz
