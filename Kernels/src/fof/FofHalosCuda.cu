// Friends-of-friends after the links, on the GPU: the groups numbered as
// labelFofGroups numbers them, GroupId and GroupSize per point, and the
// catalogue's per-group sums, bit for bit the CPU's.
//
// Numbering: members counted per root, the kept roots compacted, sorted by
// the one order rule (jz::fofGroupBefore, FofGroupOrder.h, with CUB's merge
// sort), ranked. Catalogue: the kept points sorted by GroupId with a stable
// radix sort, so each group's members lie together in input order; then a
// warp per group sums them with jz::GroupMoments in the CPU's order
// (FofCatalogueChunks.h): chunk by chunk of the input order, each chunk from
// the group's reference member, merged in chunk order. The CPU's summation
// order is thus followed exactly, so the sums agree bit for bit (this file is
// compiled with --fmad=false, as the CPU with -ffp-contract=off).
//
// Kernels are plain grid-stride loops; the only atomics are integer
// (counts, minima), so their order does not matter.
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "fof/FofGroupSums.h"
#include "fof/FofCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr Index kNone = 0xFFFFFFFFu;

// count[r] += members of root r. The lanes of a warp that share a root (most
// do: groups are runs in z-order) add once, through their lowest lane. The
// loop is warp-uniform (__match_any_sync over the full warp).
__global__ void countMembersKernel(const Index* g, Index n, Index* count)
{
  forEachWarpItem(n,
    [&](unsigned long long k, bool valid, unsigned lane)
    {
      const Index r = valid ? g[k] : kNone;
      const unsigned peers = __match_any_sync(kFull, r);
      if (valid && int(lane) == __ffs(peers) - 1)
        atomicAdd(count + r, Index(__popc(peers)));
    });
}

// The roots of kept groups: roots (g[k] == k) with at least minimumSize
// members.
struct KeptRoot
{
  const Index* g;
  const Index* count;
  GlobalId minimumSize;
  __device__ bool operator()(Index k) const
  {
    return g[k] == k && GlobalId(count[k]) >= minimumSize;
  }
};

// Points of kept groups (input order).
struct KeptPoint
{
  const GlobalId* groupId;
  __device__ bool operator()(Index i) const { return groupId[i] >= 0; }
};

template <class Pred>
__global__ void flagKernel(Index n, Pred keep, Index* flag)
{
  for (unsigned long long k = globalThread(); k < n; k += gridThreads())
    flag[k] = keep(Index(k)) ? 1 : 0;
}

template <class Pred>
__global__ void scatterSelectedKernel(Index n, Pred keep, const Index* position, Index* out)
{
  for (unsigned long long k = globalThread(); k < n; k += gridThreads())
    if (keep(Index(k)))
      out[position[k]] = Index(k);
}

// The indices k < n with keep(k), ascending, into out (a fresh buffer of
// exactly their number); returns that number. Synchronises the stream.
template <class Pred>
Index selectIndices(
  Index n, Pred keep, cudaStream_t stream, TempStorage& temp, DeviceBuffer<Index>& out)
{
  DeviceBuffer<Index> position(std::size_t(n) + 1, stream, "the selection offsets");
  flagKernel<<<gridFor(n, 256), 256, 0, stream>>>(n, keep, position.get());
  JZ_CUDA_LAUNCH_CHECK("flagKernel");
  JZ_CUDA_CHECK(cudaMemsetAsync(position.get() + n, 0, sizeof(Index), stream));
  Index* p = position.get();
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, p, p, (long long)n + 1, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage, bytes, p, p, (long long)n + 1, stream));
  const Index total = fetchValue(p + n, stream);
  out.allocate(total, stream, "the selected indices");
  if (total > 0)
  {
    scatterSelectedKernel<<<gridFor(n, 256), 256, 0, stream>>>(n, keep, p, out.get());
    JZ_CUDA_LAUNCH_CHECK("scatterSelectedKernel");
  }
  return total;
}

// One row per kept root (in sorted-index order): its group and its root.
__global__ void keptGroupsKernel(const Index* keptRoot, Index G, const Index* count,
  const GlobalId* minKey, const Index* sortedInput, FofKeptGroup* kept, Index* root)
{
  for (unsigned long long j = globalThread(); j < G; j += gridThreads())
  {
    const Index r = keptRoot[j];
    FofKeptGroup k;
    k.label = minKey[r];
    k.count = count[r];
    k.root = sortedInput[r];
    kept[j] = k;
    root[j] = r;
  }
}

struct GroupBefore
{
  __device__ bool operator()(const FofKeptGroup& a, const FofKeptGroup& b) const
  {
    return fofGroupBefore(a, b);
  }
};

// rank[root of group j] = j + 1 (rank is zero elsewhere).
__global__ void rankKernel(const Index* root, Index G, Index* rank)
{
  for (unsigned long long j = globalThread(); j < G; j += gridThreads())
    rank[root[j]] = Index(j + 1);
}

// GroupId and GroupSize per point, in input order.
__global__ void pointOutputKernel(const Index* g, const Index* sortedInput, Index n,
  const Index* rank, const Index* count, GlobalId* groupId, GlobalId* groupSize)
{
  for (unsigned long long k = globalThread(); k < n; k += gridThreads())
  {
    const Index r = g[k], in = sortedInput[k];
    groupId[in] = GlobalId(rank[r]) - 1;
    groupSize[in] = GlobalId(count[r]);
  }
}

// sortKey[t] = GroupId of member t.
__global__ void groupOfMemberKernel(
  const Index* member, Index m, const GlobalId* groupId, Index* sortKey)
{
  for (unsigned long long t = globalThread(); t < m; t += gridThreads())
    sortKey[t] = Index(groupId[member[t]]);
}

// offset[j] = members of group j (offset[G] = 0), before the exclusive scan.
__global__ void groupCountKernel(const FofKeptGroup* kept, Index G, Index* offset)
{
  for (unsigned long long j = globalThread(); j <= G; j += gridThreads())
    offset[j] = j < G ? kept[j].count : 0;
}

// reference[j] = the smallest input index among the members whose key is
// the group's label (its smallest key): computeFofCatalogue's reference.
__global__ void referenceKernel(const Index* member, const Index* groupOf, Index m,
  const FofKeptGroup* kept, const GlobalId* ids, Index* reference)
{
  for (unsigned long long t = globalThread(); t < m; t += gridThreads())
  {
    const Index i = member[t], j = groupOf[t];
    const GlobalId key = ids ? ids[i] : GlobalId(i);
    if (key == kept[j].label)
      atomicMin(reference + j, i);
  }
}

// The sums of each group, a warp per group: the lanes compute 32 members'
// addends at a time (the divisions of the nearest-image offsets are most of
// the work), then lane 0 sums them in input order through jz::FofChunkFold,
// the CPU's order (FofGroupSums.h). One thread per group is slow on a large
// group: its sums are a chain, its addends not.
constexpr int kSumWarpsPerBlock = 4;

template <class T>
__global__ void __launch_bounds__(32 * kSumWarpsPerBlock) groupSumsKernel(const Index* member,
  const Index* offset, const Index* reference, Index G, const T* xyz, const double* masses,
  const double* velocities, Index n, Index numChunks, Periodicity per, GroupMoments* sums)
{
  __shared__ GroupMoments::Terms terms[kSumWarpsPerBlock][32];
  __shared__ Index input[kSumWarpsPerBlock][32];
  const unsigned lane = threadIdx.x & 31u, w = threadIdx.x >> 5;
  const unsigned long long warps = gridThreads() >> 5;
  for (unsigned long long j = globalThread() >> 5; j < G; j += warps)
  {
    const Index begin = offset[j], count = offset[j + 1] - begin, r = reference[j];
    double x[kDim];
    for (int d = 0; d < kDim; ++d)
      x[d] = double(xyz[3 * std::size_t(r) + d]);
    const GroupMoments empty =
      GroupMoments::around(GlobalId(j), x, velocities ? velocities + 3 * std::size_t(r) : nullptr);
    FofChunkFold fold(empty, n, numChunks);
    for (Index b = 0; b < count; b += 32)
    {
      const Index t = b + lane;
      if (t < count)
      {
        const std::size_t i = member[begin + t];
        double p[kDim];
        for (int d = 0; d < kDim; ++d)
          p[d] = double(xyz[3 * i + d]);
        terms[w][lane] = empty.terms(
          p, masses ? masses[i] : 1.0, velocities ? velocities + 3 * i : nullptr, per.length);
        input[w][lane] = Index(i);
      }
      __syncwarp();
      if (lane == 0)
      {
        const Index batch = count - b < 32 ? count - b : 32;
        for (Index l = 0; l < batch; ++l)
          fold.add(input[w][l], terms[w][l], per.length);
      }
      __syncwarp();
    }
    if (lane == 0)
      sums[j] = fold.finish(per.length);
  }
}

template <class T>
void launchGroupSums(const Index* member, const Index* offset, const Index* reference, Index G,
  const FofDeviceCatalogueInput<T>& in, GroupMoments* sums, cudaStream_t stream)
{
  constexpr int threads = 32 * kSumWarpsPerBlock;
  groupSumsKernel<T><<<gridFor(std::size_t(G) * 32, threads), threads, 0, stream>>>(member, offset,
    reference, G, in.xyz, in.masses, in.velocities, in.n, Index(in.numChunks), in.periodicity,
    sums);
  JZ_CUDA_LAUNCH_CHECK("groupSumsKernel");
}

// The catalogue's rows (GroupMoments::row, the CPU's formula), by field.
__global__ void rowsKernel(const GroupMoments* sums, Index G, Periodicity per, Box<double> box,
  GlobalId* count, double* mass, double* centerOfMass, double* inertiaRadius, double* meanVelocity,
  double* velocityDispersion)
{
  for (unsigned long long j = globalThread(); j < G; j += gridThreads())
  {
    const GroupMoments::Row r = sums[j].row(box.lo, per.length);
    count[j] = r.count;
    mass[j] = r.mass;
    inertiaRadius[j] = r.inertiaRadius;
    velocityDispersion[j] = r.velocityDispersion;
    for (int d = 0; d < kDim; ++d)
    {
      centerOfMass[3 * j + d] = r.centerOfMass[d];
      meanVelocity[3 * j + d] = r.meanVelocity[d];
    }
  }
}

} // namespace

void fofNumberGroupsCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId minimumGroupSize, cudaStream_t stream, TempStorage& temp, FofDeviceNumbering& out)
{
  out = FofDeviceNumbering();
  if (n == 0)
    return;
  DeviceBuffer<Index> count(n, stream, "the group member counts");
  JZ_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, std::size_t(n) * sizeof(Index), stream));
  countMembersKernel<<<gridFor(n, 256), 256, 0, stream>>>(g, n, count.get());
  JZ_CUDA_LAUNCH_CHECK("countMembersKernel");

  DeviceBuffer<Index> keptRoot;
  const Index G =
    selectIndices(n, KeptRoot{ g, count.get(), minimumGroupSize }, stream, temp, keptRoot);
  out.numGroups = G;
  DeviceBuffer<Index> rank(n, stream, "the group ranks");
  JZ_CUDA_CHECK(cudaMemsetAsync(rank.get(), 0, std::size_t(n) * sizeof(Index), stream));
  if (G > 0)
  {
    DeviceBuffer<GlobalId> minKey(n, stream, "the group labels");
    fofMinKeysCuda(g, sortedInput, n, ids, minKey.get(), stream);
    out.kept.allocate(G, stream, "the kept groups");
    DeviceBuffer<Index> root(G, stream, "the kept roots");
    keptGroupsKernel<<<gridFor(G, 256), 256, 0, stream>>>(
      keptRoot.get(), G, count.get(), minKey.get(), sortedInput, out.kept.get(), root.get());
    JZ_CUDA_LAUNCH_CHECK("keptGroupsKernel");
    keptRoot.release();
    minKey.release();
    std::size_t bytes = 0;
    JZ_CUDA_CHECK(cub::DeviceMergeSort::SortPairs(
      nullptr, bytes, out.kept.get(), root.get(), (long long)G, GroupBefore(), stream));
    void* storage = temp.get(bytes);
    JZ_CUDA_CHECK(cub::DeviceMergeSort::SortPairs(
      storage, bytes, out.kept.get(), root.get(), (long long)G, GroupBefore(), stream));
    rankKernel<<<gridFor(G, 256), 256, 0, stream>>>(root.get(), G, rank.get());
    JZ_CUDA_LAUNCH_CHECK("rankKernel");
  }
  out.groupId.allocate(n, stream, "the GroupIds");
  out.groupSize.allocate(n, stream, "the GroupSizes");
  pointOutputKernel<<<gridFor(n, 256), 256, 0, stream>>>(
    g, sortedInput, n, rank.get(), count.get(), out.groupId.get(), out.groupSize.get());
  JZ_CUDA_LAUNCH_CHECK("pointOutputKernel");
}

template <class T>
void fofCatalogueSumsCuda(const FofDeviceNumbering& groups, const FofDeviceCatalogueInput<T>& in,
  cudaStream_t stream, TempStorage& temp, DeviceBuffer<GroupMoments>& sums)
{
  const Index G = groups.numGroups;
  sums.release();
  if (G == 0 || in.n == 0)
    return;
  if (in.numChunks < 1)
    throw Error("internal error: the GPU catalogue needs at least one chunk");
  // The kept points in input order, then stably by GroupId: each group's
  // members together, in input order.
  DeviceBuffer<Index> member;
  const Index m = selectIndices(in.n, KeptPoint{ groups.groupId.get() }, stream, temp, member);
  DeviceBuffer<Index> memberAlt(m, stream, "the sorted members");
  DeviceBuffer<Index> key(m, stream, "the members' GroupIds");
  DeviceBuffer<Index> keyAlt(m, stream, "the members' GroupIds");
  groupOfMemberKernel<<<gridFor(m, 256), 256, 0, stream>>>(
    member.get(), m, groups.groupId.get(), key.get());
  JZ_CUDA_LAUNCH_CHECK("groupOfMemberKernel");
  cub::DoubleBuffer<Index> keys(key.get(), keyAlt.get());
  cub::DoubleBuffer<Index> values(member.get(), memberAlt.get());
  const int endBit = bitsBelow(G);
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, (long long)m, 0, endBit, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(
    cub::DeviceRadixSort::SortPairs(storage, bytes, keys, values, (long long)m, 0, endBit, stream));

  // Each group's members start at offset[j] (exclusive sum of the counts).
  DeviceBuffer<Index> offset(std::size_t(G) + 1, stream, "the group offsets");
  groupCountKernel<<<gridFor(std::size_t(G) + 1, 256), 256, 0, stream>>>(
    groups.kept.get(), G, offset.get());
  JZ_CUDA_LAUNCH_CHECK("groupCountKernel");
  Index* o = offset.get();
  bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, o, o, (long long)G + 1, stream));
  storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage, bytes, o, o, (long long)G + 1, stream));
  if (kDeviceAsserts && fetchValue(o + G, stream) != m)
    throw Error("internal error: the GPU catalogue's group counts do not add up to its members");

  DeviceBuffer<Index> reference(G, stream, "the reference members");
  JZ_CUDA_CHECK(cudaMemsetAsync(reference.get(), 0xFF, std::size_t(G) * sizeof(Index), stream));
  referenceKernel<<<gridFor(m, 256), 256, 0, stream>>>(
    values.Current(), keys.Current(), m, groups.kept.get(), in.ids, reference.get());
  JZ_CUDA_LAUNCH_CHECK("referenceKernel");
  key.release();
  keyAlt.release();

  sums.allocate(G, stream, "the group sums");
  launchGroupSums(values.Current(), o, reference.get(), G, in, sums.get(), stream);
}

void FofDeviceRows::make(const DeviceBuffer<GroupMoments>& sums, const Periodicity& per,
  const double* boxLo, cudaStream_t stream)
{
  const std::size_t G = sums.size();
  count.allocate(G, stream, "the catalogue's counts");
  mass.allocate(G, stream, "the catalogue's masses");
  centerOfMass.allocate(3 * G, stream, "the catalogue's centres");
  inertiaRadius.allocate(G, stream, "the catalogue's radii");
  meanVelocity.allocate(3 * G, stream, "the catalogue's velocities");
  velocityDispersion.allocate(G, stream, "the catalogue's dispersions");
  if (G == 0)
    return;
  Box<double> box;
  for (int d = 0; d < kDim; ++d)
    box.lo[d] = box.hi[d] = boxLo[d];
  rowsKernel<<<gridFor(G, 256), 256, 0, stream>>>(sums.get(), Index(G), per, box, count.get(),
    mass.get(), centerOfMass.get(), inertiaRadius.get(), meanVelocity.get(),
    velocityDispersion.get());
  JZ_CUDA_LAUNCH_CHECK("rowsKernel");
}

template void fofCatalogueSumsCuda<float>(const FofDeviceNumbering&,
  const FofDeviceCatalogueInput<float>&, cudaStream_t, TempStorage&, DeviceBuffer<GroupMoments>&);
template void fofCatalogueSumsCuda<double>(const FofDeviceNumbering&,
  const FofDeviceCatalogueInput<double>&, cudaStream_t, TempStorage&, DeviceBuffer<GroupMoments>&);
} // namespace cuda
} // namespace jz
