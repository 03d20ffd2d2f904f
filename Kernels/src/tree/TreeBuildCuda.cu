// Bottom-up construction of the z-order plane tree on the GPU (§II-A..§II-E),
// the device counterpart of TreeBuildCpu.cpp + TreeLevels.cpp.
//
// The tree need not be node-for-node identical to the CPU one (neighbour
// results are exact for any valid tree), but it follows the same rules with
// the same TreeBuildOptions: a gap is a split of plane p if it is a boundary,
// if the smallest z-order cell spanning it holds more than
// leafSize * coarsening^p points of either type, or if its level exceeds the
// regularization level lvl_max(p); planes nest; never between identical
// points (isPlaneSplit, TreeLevels.h: a run of duplicates stays one node).
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <cmath>
#include <string>
#include <vector>

#include "tree/TreeLevels.h"
#include "tree/TreeCuda.cuh"
#include "jz/Validate.h"
#include "jz/ZOrder.h"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kThreads = 256;
// Level histogram of the regularization: every Morton level of float32 and
// float64 data lies in [kHistMin, kHistMin + kHistBins - 1); bin 0 holds kLevelNone.
constexpr int kHistMin = -3400;
constexpr int kHistBins = 6900;

struct WrapBox
{
  double lo[kDim];
  double length[kDim];
  bool enabled;
};

// Records of one point type; firstBad receives the smallest index of a point
// with a non-finite coordinate (reported like the CPU build: the first one).
template <class T>
__global__ void fillRecordsKernel(
  const T* xyz, Index n, Index idOffset, WrapBox box, Record<T>* out, unsigned* firstBad)
{
  const Index i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  Record<T> r;
  bool bad = false;
  for (int d = 0; d < kDim; ++d)
  {
    T x = xyz[3 * std::size_t(i) + d];
    if (!isfinite(x))
    {
      bad = true;
      x = T(0);
    }
    else if (box.enabled)
    {
      x = wrapIntoBox(x, box.lo[d], box.length[d]);
    }
    r.p[d] = x + T(0); // -0 -> +0
  }
  r.id = idOffset + i;
  out[i] = r;
  if (bad)
    atomicMin(firstBad, unsigned(i));
}

template <class T>
__global__ void gapLevelKernel(
  const Record<T>* rec, Index n, int* gapLevel, Index numSources, Index* isQuery)
{
  const Index i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n)
    return;
  if (i == 0 || i == n)
    gapLevel[i] = kLevelInfinite;
  else
    gapLevel[i] = mortonLevel(rec[i - 1].p, rec[i].p);
  if (isQuery)
    isQuery[i] = (i < n && rec[i].id >= numSources) ? 1u : 0u;
}

// Splits the sorted records into per-type structure-of-arrays.
template <class T>
__global__ void scatterKernel(const Record<T>* rec, Index n, Index numSources,
  const Index* queryPrefix, T* sx, T* sy, T* sz, Index* sIn, T* qx, T* qy, T* qz, Index* qIn)
{
  const Index i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const Record<T> r = rec[i];
  if (!queryPrefix)
  {
    sx[i] = r.p[0];
    sy[i] = r.p[1];
    sz[i] = r.p[2];
    sIn[i] = r.id;
    return;
  }
  const Index q = queryPrefix[i];
  if (r.id >= numSources)
  {
    qx[q] = r.p[0];
    qy[q] = r.p[1];
    qz[q] = r.p[2];
    qIn[q] = r.id - numSources;
  }
  else
  {
    const Index s = i - q;
    sx[s] = r.p[0];
    sy[s] = r.p[1];
    sz[s] = r.p[2];
    sIn[s] = r.id;
  }
}

// The larger per-type point count of the smallest z-order cell around each
// gap. The cell of gap i (level L) spans the points [left, right), bounded by
// the nearest gaps with a level above L. Since mortonLevel(x_a, x_b) is the
// largest gap level between a and b, "mortonLevel(x_i, x_j) > L" is monotone
// in j >= i and "mortonLevel(x_a, x_{i-1}) <= L" is monotone in a <= i - 1:
// both ends are found by galloping plus binary search.
template <class T>
__global__ void cellCountKernel(
  const Record<T>* rec, const int* gapLevel, Index n, const Index* queryPrefix, Index* cellCount)
{
  const Index i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n)
    return;
  if (i == 0 || i == n)
  {
    cellCount[i] = n;
    return;
  }
  const int L = gapLevel[i];
  const T* xi = rec[i].p;
  // right: the first j in [i + 1, n) with mortonLevel(x_i, x_j) > L, else n.
  Index lo = i, hi; // pred(lo) false, pred(hi) true (pred(n) := true)
  {
    std::size_t step = 1; // 64-bit: no wrap-around for n > 2^31
    for (;;)
    {
      const std::size_t j = std::size_t(i) + step;
      if (j >= n)
      {
        hi = n;
        break;
      }
      if (mortonLevel(xi, rec[j].p) > L)
      {
        hi = Index(j);
        break;
      }
      lo = Index(j);
      step *= 2;
    }
    while (hi - lo > 1)
    {
      const Index mid = lo + (hi - lo) / 2;
      if (mortonLevel(xi, rec[mid].p) > L)
        hi = mid;
      else
        lo = mid;
    }
  }
  const Index right = hi;
  // left: the smallest a in [0, i - 1] with mortonLevel(x_a, x_{i-1}) <= L.
  const T* xl = rec[i - 1].p;
  Index good = i - 1, bad; // pred(good) true; pred(bad) false (bad = -1 conceptually)
  bool found = false;
  {
    std::size_t step = 1;
    for (;;)
    {
      if (step > good)
      {
        // a = 0 may still be good.
        if (mortonLevel(rec[0].p, xl) <= L)
        {
          good = 0;
          found = true;
        }
        else
        {
          bad = 0;
        }
        break;
      }
      const Index a = Index(good - step);
      if (mortonLevel(rec[a].p, xl) <= L)
      {
        good = a;
        step *= 2;
      }
      else
      {
        bad = a;
        break;
      }
    }
    if (!found)
    {
      while (good - bad > 1)
      {
        const Index mid = bad + (good - bad) / 2;
        if (mortonLevel(rec[mid].p, xl) <= L)
          good = mid;
        else
          bad = mid;
      }
    }
  }
  const Index left = good;
  const Index all = right - left;
  if (!queryPrefix)
  {
    cellCount[i] = all;
  }
  else
  {
    const Index q = queryPrefix[right] - queryPrefix[left];
    cellCount[i] = q > all - q ? q : all - q;
  }
}

__global__ void sequenceKernel(Index* out, Index n)
{
  const Index i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = i;
}

__global__ void splitFlagKernel(const Index* candidates, Index numCandidates, const int* gapLevel,
  const Index* cellCount, Index n, double nmax, int maxLevel, unsigned char* flags)
{
  const Index c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= numCandidates)
    return;
  const Index g = candidates[c];
  flags[c] = isPlaneSplit(g, n, cellCount[g], gapLevel[g], nmax, maxLevel) ? 1 : 0;
}

// Node level = the largest gap level strictly inside = mortonLevel(first, last);
// the histogram of node levels weighted by point counts. Each block counts
// into its own shared histogram (32-bit: a block never sees more than the
// n < 2^32 points) and adds its non-empty bins to the global one.
template <class T>
__global__ void __launch_bounds__(kThreads)
  nodeLevelKernel(const Record<T>* rec, const Index* splits, Index nodes, unsigned long long* hist)
{
  __shared__ unsigned local[kHistBins];
  for (int b = threadIdx.x; b < kHistBins; b += blockDim.x)
    local[b] = 0;
  __syncthreads();
  for (unsigned long long j = globalThread(); j < nodes; j += gridThreads())
  {
    const Index b = splits[j], e = splits[j + 1];
    const int level = e - b >= 2 ? mortonLevel(rec[b].p, rec[e - 1].p) : kLevelNone;
    int bin = 0;
    if (level != kLevelNone)
    {
      bin = level - kHistMin + 1;
      bin = bin < 1 ? 1 : (bin >= kHistBins ? kHistBins - 1 : bin);
    }
    atomicAdd(local + bin, unsigned(e - b));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kHistBins; b += blockDim.x)
    if (local[b])
      atomicAdd(hist + b, (unsigned long long)local[b]);
}

__global__ void typeSplitKernel(
  const Index* joint, Index count, const Index* queryPrefix, Index* sourceSplit, Index* querySplit)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= count)
    return;
  const Index g = joint[j];
  const Index q = queryPrefix ? queryPrefix[g] : 0;
  sourceSplit[j] = g - q;
  if (querySplit)
    querySplit[j] = q;
}

__global__ void childSplitKernel(
  const Index* coarse, Index count, const Index* fine, Index fineCount, Index* childSplit)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= count)
    return;
  const Index g = coarse[j];
  Index lo = 0, hi = fineCount; // lower_bound in fine[0, fineCount)
  while (lo < hi)
  {
    const Index mid = lo + (hi - lo) / 2;
    if (fine[mid] < g)
      lo = mid + 1;
    else
      hi = mid;
  }
  childSplit[j] = lo;
}

// boxes[j]: the box of node j's items [split[j], split[j + 1]), each added
// by add(box, item): a leaf's points or a node's children's boxes.
template <class T, class Add>
__global__ void nodeBoxKernel(const Index* split, Index nodes, Add add, Box<T>* boxes)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= nodes)
    return;
  Box<T> b;
  boxSetEmpty(b);
  for (Index i = split[j]; i < split[j + 1]; ++i)
    add(b, i);
  boxes[j] = b;
}

template <class T>
struct AddPoint
{
  DeviceXyz<T> points;
  __device__ void operator()(Box<T>& b, Index i) const
  {
    const T p[3] = { points.x[i], points.y[i], points.z[i] };
    boxExtend(b, p);
  }
};

template <class T>
struct AddChildBox
{
  const Box<T>* below;
  __device__ void operator()(Box<T>& b, Index c) const { boxMerge(b, below[c]); }
};

// lvl_max of eq. 10 from the level histogram: the smallest nodes holding the
// options' quantile (90%) of the points define the reference; their
// point-weighted mean volume times f_max. Returns kLevelInfinite when those
// nodes have no volume.
int regularizationLevelFromHistogram(
  const std::vector<unsigned long long>& hist, const TreeBuildOptions& options)
{
  const double quantile = options.regularizationQuantile;
  double total = 0;
  for (unsigned long long h : hist)
    total += double(h);
  if (total <= 0)
    return kLevelInfinite;
  double counted = 0;
  int ref = -1;
  for (int b = 0; b < kHistBins; ++b)
  {
    if (hist[b] == 0)
      continue;
    if (counted + double(hist[b]) >= quantile * total)
    {
      ref = b;
      break;
    }
    counted += double(hist[b]);
  }
  if (ref < 0)
  {
    for (int b = kHistBins - 1; b >= 0; --b)
      if (hist[b])
      {
        ref = b;
        break;
      }
  }
  if (ref <= 0)
    return kLevelInfinite; // the reference nodes are single points
  const int reference = ref - 1 + kHistMin;
  double weighted = 0, weight = 0;
  for (int b = 0; b < ref; ++b)
  {
    const double c = double(hist[b]);
    weight += c;
    if (b > 0 && c > 0)
      weighted += c * std::ldexp(1.0, (b - 1 + kHistMin) - reference);
  }
  const double needed = std::max(1.0, std::min(double(hist[ref]), quantile * total - counted));
  weight += needed;
  weighted += needed;
  const double meanLog2 = reference + std::log2(weighted / weight);
  return int(std::floor(meanLog2 + std::log2(options.regularizationFactor)));
}

// Selects the candidates that are splits of a plane; returns their number.
Index selectSplits(const Index* candidates, Index numCandidates, const int* gapLevel,
  const Index* cellCount, Index n, double nmax, int maxLevel, unsigned char* flags, Index* out,
  Index* numSelected, cudaStream_t stream, TempStorage& temp)
{
  splitFlagKernel<<<blocksFor(numCandidates, kThreads), kThreads, 0, stream>>>(
    candidates, numCandidates, gapLevel, cellCount, n, nmax, maxLevel, flags);
  JZ_CUDA_LAUNCH_CHECK("splitFlagKernel");
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceSelect::Flagged(
    nullptr, bytes, candidates, flags, out, numSelected, (long long)numCandidates, stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceSelect::Flagged(
    storage, bytes, candidates, flags, out, numSelected, (long long)numCandidates, stream));
  return fetchValue(numSelected, stream);
}

// Uploads both point types into their records (wrapped into the periodic
// box); throws Error naming the first point with a non-finite coordinate.
// keepSources (nullable) receives the sources' upload instead of freeing it.
template <class T>
void fillRecords(const T* sources, Index numSources, const T* queries, Index numQueries,
  const Periodicity& periodicity, const double* boxLo, Record<T>* records, cudaStream_t stream,
  DeviceBuffer<T>* keepSources)
{
  WrapBox box;
  box.enabled = periodicity.enabled();
  for (int d = 0; d < kDim; ++d)
  {
    box.lo[d] = boxLo ? boxLo[d] : 0.0;
    box.length[d] = periodicity.length[d];
  }
  DeviceBuffer<unsigned> firstBad(2, stream, "flags");
  JZ_CUDA_CHECK(cudaMemsetAsync(firstBad.get(), 0xFF, 2 * sizeof(unsigned), stream));
  const Index counts[2] = { numSources, numQueries };
  const T* inputs[2] = { sources, queries };
  // Double records carry 4 bytes of padding that CUB's sort copies as whole
  // words; zeroed, compute-sanitizer's initcheck sees no uninitialised reads.
  if (sizeof(Record<T>) > kDim * sizeof(T) + sizeof(Index))
    JZ_CUDA_CHECK(cudaMemsetAsync(
      records, 0, (std::size_t(numSources) + numQueries) * sizeof(Record<T>), stream));
  Index offset = 0;
  for (int t = 0; t < 2; ++t)
  {
    if (counts[t] == 0)
      continue;
    // Freed in stream order, after the kernel has read it.
    DeviceBuffer<T> xyz(3 * std::size_t(counts[t]), stream, "the input coordinates");
    xyz.upload(inputs[t], 3 * std::size_t(counts[t]));
    fillRecordsKernel<T><<<blocksFor(counts[t], kThreads), kThreads, 0, stream>>>(
      xyz.get(), counts[t], offset, box, records + offset, firstBad.get() + t);
    JZ_CUDA_LAUNCH_CHECK("fillRecordsKernel");
    if (t == 0 && keepSources)
      *keepSources = std::move(xyz);
    offset += counts[t];
  }
  unsigned bad[2] = { 0, 0 };
  JZ_CUDA_CHECK(cudaMemcpyAsync(bad, firstBad.get(), sizeof bad, cudaMemcpyDeviceToHost, stream));
  JZ_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int t = 0; t < 2; ++t)
  {
    // The message from the one rule (jz/Validate.h), which names the same
    // first point the device found.
    if (bad[t] != ~0u)
      throw Error(
        nonFiniteCoordinateError(inputs[t], counts[t], t == 0 ? "source point" : "query point"));
  }
}

// The per-gap inputs of the plane selection, over the joint sorted order.
struct GapData
{
  Index n = 0;
  DeviceBuffer<int> level;         // n + 1 Morton levels
  DeviceBuffer<Index> cellCount;   // n + 1 cell counts
  DeviceBuffer<Index> queryPrefix; // n + 1 query counts (separate queries only)
};

// Node boxes and child splits of plane p from its joint splits.
template <class T>
void fillPlane(DeviceTree<T>& tree, int p, DeviceBuffer<Index>& splits, Index count,
  const Index* queryPrefix, cudaStream_t stream)
{
  DevicePlane<T>& plane = tree.planes[p];
  plane.self = tree.self;
  const Index nodes = count - 1;
  plane.numNodes = nodes;
  plane.sourceSplit.allocate(count, stream, "the node splits");
  if (!tree.self)
  {
    plane.querySplitBuf.allocate(count, stream, "the node splits");
    plane.queryBoxBuf.allocate(nodes, stream, "the node boxes");
  }
  plane.sourceBox.allocate(nodes, stream, "the node boxes");
  typeSplitKernel<<<blocksFor(count, kThreads), kThreads, 0, stream>>>(
    splits.get(), count, queryPrefix, plane.sourceSplit.get(), plane.querySplitBuf.get());
  JZ_CUDA_LAUNCH_CHECK("typeSplitKernel");
  if (p == 0)
  {
    nodeBoxKernel<T><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(
      plane.sourceSplit.get(), nodes, AddPoint<T>{ sourcesOf(tree) }, plane.sourceBox.get());
    JZ_CUDA_LAUNCH_CHECK("nodeBoxKernel (points)");
    if (!tree.self)
    {
      const DeviceXyz<T> queries{ tree.qxBuf.get(), tree.qyBuf.get(), tree.qzBuf.get() };
      nodeBoxKernel<T><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(
        plane.querySplitBuf.get(), nodes, AddPoint<T>{ queries }, plane.queryBoxBuf.get());
      JZ_CUDA_LAUNCH_CHECK("nodeBoxKernel (points)");
    }
  }
  else
  {
    DevicePlane<T>& below = tree.planes[p - 1];
    plane.childSplit.allocate(count, stream, "the child splits");
    childSplitKernel<<<blocksFor(count, kThreads), kThreads, 0, stream>>>(
      splits.get(), count, below.jointSplit.get(), below.numNodes + 1, plane.childSplit.get());
    JZ_CUDA_LAUNCH_CHECK("childSplitKernel");
    nodeBoxKernel<T><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(plane.childSplit.get(),
      nodes, AddChildBox<T>{ below.sourceBox.get() }, plane.sourceBox.get());
    JZ_CUDA_LAUNCH_CHECK("nodeBoxKernel (children)");
    if (!tree.self)
    {
      nodeBoxKernel<T><<<blocksFor(nodes, kThreads), kThreads, 0, stream>>>(plane.childSplit.get(),
        nodes, AddChildBox<T>{ below.queryBoxBuf.get() }, plane.queryBoxBuf.get());
      JZ_CUDA_LAUNCH_CHECK("nodeBoxKernel (children)");
    }
  }
  plane.jointSplit = std::move(splits);
}

// Selects the splits of every plane from the gaps and builds the planes.
template <class T>
void buildPlanes(DeviceTree<T>& tree, const Record<T>* records, const GapData& gaps,
  const TreeBuildOptions& options, cudaStream_t stream, TempStorage& temp)
{
  const Index n = gaps.n;
  const int numPlanes = numberOfPlanes(
    std::max<std::size_t>(tree.numSources, tree.self ? 0 : tree.numQueries), options);
  tree.planes.clear();
  tree.planes.resize(numPlanes);
  DeviceBuffer<Index> candidates(std::size_t(n) + 1, stream, "the split candidates");
  sequenceKernel<<<blocksFor(std::size_t(n) + 1, kThreads), kThreads, 0, stream>>>(
    candidates.get(), n + 1);
  JZ_CUDA_LAUNCH_CHECK("sequenceKernel");
  Index numCandidates = n + 1;
  DeviceBuffer<unsigned char> flags(std::size_t(n) + 1, stream, "the split flags");
  DeviceBuffer<Index> numSelected(1, stream, "a counter");
  DeviceBuffer<unsigned long long> hist(kHistBins, stream, "the level histogram");
  std::vector<unsigned long long> histHost(kHistBins);
  double nmax = options.leafSize;
  for (int p = 0; p < numPlanes; ++p, nmax *= options.coarsening)
  {
    DeviceBuffer<Index> splits(numCandidates, stream, "the plane splits");
    Index count =
      selectSplits(candidates.get(), numCandidates, gaps.level.get(), gaps.cellCount.get(), n, nmax,
        kLevelInfinite, flags.get(), splits.get(), numSelected.get(), stream, temp);
    if (options.regularize && n > 0 && count >= 2)
    {
      JZ_CUDA_CHECK(cudaMemsetAsync(hist.get(), 0, kHistBins * sizeof(unsigned long long), stream));
      const unsigned grid = std::min(blocksFor(count - 1, kThreads), 1024u);
      nodeLevelKernel<T>
        <<<grid, kThreads, 0, stream>>>(records, splits.get(), count - 1, hist.get());
      JZ_CUDA_LAUNCH_CHECK("nodeLevelKernel");
      JZ_CUDA_CHECK(cudaMemcpyAsync(histHost.data(), hist.get(),
        kHistBins * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
      JZ_CUDA_CHECK(cudaStreamSynchronize(stream));
      const int maxLevel = regularizationLevelFromHistogram(histHost, options);
      if (maxLevel != kLevelInfinite)
      {
        DeviceBuffer<Index> regular(numCandidates, stream, "the plane splits");
        const Index c2 =
          selectSplits(candidates.get(), numCandidates, gaps.level.get(), gaps.cellCount.get(), n,
            nmax, maxLevel, flags.get(), regular.get(), numSelected.get(), stream, temp);
        if (c2 != count)
        {
          splits = std::move(regular);
          count = c2;
        }
      }
    }
    // The next plane chooses among this plane's splits (planes nest).
    JZ_CUDA_CHECK(cudaMemcpyAsync(
      candidates.get(), splits.get(), count * sizeof(Index), cudaMemcpyDeviceToDevice, stream));
    numCandidates = count;
    fillPlane(tree, p, splits, count, gaps.queryPrefix.get(), stream);
  }
}
} // namespace

template <class T>
void buildTreeCuda(const T* sources, Index numSources, const T* queries, Index numQueries,
  const Periodicity& periodicity, const double* boxLo, const TreeBuildOptions& options,
  DeviceTree<T>& tree, cudaStream_t stream, TempStorage& temp, StageTimer& timer)
{
  tree.self = queries == nullptr;
  if (tree.self)
    numQueries = 0;
  tree.periodicity = periodicity;
  tree.numSources = numSources;
  tree.numQueries = tree.self ? numSources : numQueries;
  const std::size_t total = std::size_t(numSources) + numQueries;
  if (total >= std::size_t(0xFFFFFFFFu))
  {
    throw Error("too many points for one process: " + std::to_string(total));
  }
  const Index n = Index(total);

  // 1. Records, then the z-order sort.
  DeviceBuffer<Record<T>> records(n, stream, "the sort records");
  tree.sourceInput.release();
  fillRecords(sources, numSources, queries, numQueries, periodicity, boxLo, records.get(), stream,
    tree.keepSourceInput ? &tree.sourceInput : nullptr);
  timer.mark("upload");
  sortRecordsCuda(records.get(), n, stream, temp);
  temp.release(); // the merge sort's scratch is as large as the records
  timer.mark("sort");

  // 2. Gap levels, per-type prefix counts, and the per-type sorted points.
  GapData gaps;
  gaps.n = n;
  gaps.level.allocate(std::size_t(n) + 1, stream, "the gap levels");
  if (!tree.self)
    gaps.queryPrefix.allocate(std::size_t(n) + 1, stream, "the query prefix counts");
  gapLevelKernel<T><<<blocksFor(std::size_t(n) + 1, kThreads), kThreads, 0, stream>>>(
    records.get(), n, gaps.level.get(), numSources, gaps.queryPrefix.get());
  JZ_CUDA_LAUNCH_CHECK("gapLevelKernel");
  if (!tree.self)
  {
    Index* qp = gaps.queryPrefix.get();
    std::size_t bytes = 0;
    JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, qp, qp, (long long)n + 1, stream));
    void* storage = temp.get(bytes);
    JZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage, bytes, qp, qp, (long long)n + 1, stream));
  }
  tree.sx.allocate(numSources, stream, "sorted sources");
  tree.sy.allocate(numSources, stream, "sorted sources");
  tree.sz.allocate(numSources, stream, "sorted sources");
  tree.sInput.allocate(numSources, stream, "sorted sources");
  if (!tree.self)
  {
    tree.qxBuf.allocate(numQueries, stream, "sorted queries");
    tree.qyBuf.allocate(numQueries, stream, "sorted queries");
    tree.qzBuf.allocate(numQueries, stream, "sorted queries");
    tree.qInputBuf.allocate(numQueries, stream, "sorted queries");
  }
  scatterKernel<T><<<blocksFor(n, kThreads), kThreads, 0, stream>>>(records.get(), n, numSources,
    gaps.queryPrefix.get(), tree.sx.get(), tree.sy.get(), tree.sz.get(), tree.sInput.get(),
    tree.qxBuf.get(), tree.qyBuf.get(), tree.qzBuf.get(), tree.qInputBuf.get());
  JZ_CUDA_LAUNCH_CHECK("scatterKernel");

  // 3. Cell counts around every gap, then the planes.
  gaps.cellCount.allocate(std::size_t(n) + 1, stream, "the cell counts");
  cellCountKernel<T><<<blocksFor(std::size_t(n) + 1, kThreads), kThreads, 0, stream>>>(
    records.get(), gaps.level.get(), n, gaps.queryPrefix.get(), gaps.cellCount.get());
  JZ_CUDA_LAUNCH_CHECK("cellCountKernel");
  buildPlanes(tree, records.get(), gaps, options, stream, temp);
  JZ_CUDA_CHECK(cudaStreamSynchronize(stream));
  timer.mark("tree");
}

template void buildTreeCuda<float>(const float*, Index, const float*, Index, const Periodicity&,
  const double*, const TreeBuildOptions&, DeviceTree<float>&, cudaStream_t, TempStorage&,
  StageTimer&);
template void buildTreeCuda<double>(const double*, Index, const double*, Index, const Periodicity&,
  const double*, const TreeBuildOptions&, DeviceTree<double>&, cudaStream_t, TempStorage&,
  StageTimer&);
} // namespace cuda
} // namespace jz
