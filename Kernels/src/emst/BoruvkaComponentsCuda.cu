// The component state of the GPU's Borůvka rounds (EmstCuda.cuh), the
// counterpart of BoruvkaComponents.h and EmstCpu.cpp's seedBounds /
// addLightestEdges: node labels bottom-up, the bounds' reset and seeding,
// per component the lightest choice under the total order, and the merge.
//
// The merge: every component with a choice hooks onto the component at the
// other end. Under a strict total order the only cycles of these hooks are
// pairs that chose the same edge; the smaller root of such a pair stays a
// root, and every other hook adds its edge once. Pointer jumping then gives
// every component its new root. Each step is a plain kernel over points or
// roots; the jumping stops when nothing changes and is bounded.
#include <climits>
#include <string>

#include "emst/FloatBounds.h"
#include "emst/EmstCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
constexpr unsigned kThreads = 256;
// Pointer jumping halves every path per pass: 32 passes reach any root of
// 2^32 points; more means a cycle (an internal error).
constexpr int kMaxJumpPasses = 40;

// The children of node j of plane p: points [split[j], split[j + 1]) on the
// leaf plane, nodes of plane p - 1 above it (clamped to that plane).
__device__ __forceinline__ Index childEnd(const Index* split, Index j, Index below)
{
  return split[j + 1] < below ? split[j + 1] : below;
}

// One plane's node labels from the level below (points or nodes).
__global__ void labelPlaneKernel(
  const Index* split, Index nodes, const Index* below, Index numBelow, Index* out)
{
  for (unsigned long long j = globalThread(); j < nodes; j += gridThreads())
  {
    Index label = kEmptyNode;
    for (Index i = split[j]; i < childEnd(split, Index(j), numBelow) && label != kMixedNode; ++i)
    {
      if (below[i] == kEmptyNode)
        continue;
      label = label == kEmptyNode || label == below[i] ? below[i] : kMixedNode;
    }
    out[j] = label;
  }
}

// One plane's core extremes from the level below.
__global__ void coreExtremesKernel(const Index* split, Index nodes, const double* lo,
  const double* hi, Index numBelow, double* outMin, double* outMax)
{
  for (unsigned long long j = globalThread(); j < nodes; j += gridThreads())
  {
    double mn = kInfinity, mx = 0;
    for (Index i = split[j]; i < childEnd(split, Index(j), numBelow); ++i)
    {
      mn = jzMin(mn, lo[i]);
      mx = jzMax(mx, hi[i]);
    }
    outMin[j] = mn;
    outMax[j] = mx;
  }
}

__device__ __forceinline__ void lowerBound(float* slot, double w)
{
  // Non-negative floats order as their bit patterns.
  atomicMin(reinterpret_cast<int*>(slot), __float_as_int(__double2float_ru(w)));
}

// Neighbours in z-order from different components give both a first bound
// (the CPU's seedBounds).
template <class T>
__global__ void seedBoundsKernel(const T* x, const T* y, const T* z, const Index* label,
  const double* core2, Index n, Periodicity per, float* compBound)
{
  for (unsigned long long i = globalThread(); i + 1 < n; i += gridThreads())
  {
    const Index la = label[i], lb = label[i + 1];
    if (la == lb)
      continue;
    const T pa[3] = { x[i], y[i], z[i] };
    const T pb[3] = { x[i + 1], y[i + 1], z[i + 1] };
    const double w = edgeWeight2(per, pa, pb, core2 ? core2[i] : 0.0, core2 ? core2[i + 1] : 0.0);
    lowerBound(&compBound[la], w);
    lowerBound(&compBound[lb], w);
  }
}

__global__ void iotaKernel(Index* out, Index n)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
    out[i] = Index(i);
}

// --- The lightest choice per component: four exact atomic minima ---------

__device__ __forceinline__ unsigned long long weightBits(double w2)
{
  // Non-negative doubles order as their bit patterns.
  return (unsigned long long)__double_as_longlong(w2);
}

struct ChoiceView
{
  Index n;
  const Index* label;
  const Index* choice;
  const double* weight2;
  const GlobalId* keys;
  unsigned long long* minWeight; // per root
  long long* minLo;              // per root: smaller id of the lightest edges
  long long* minHi;              // per root: larger id of those
  Index* winner;                 // per root: the point whose choice it is
};

// Pass 1: the smallest weight; 2: the smallest lower id among those; 3: the
// smallest higher id among those; 4: the point (unique for unique ids).
template <int kPass>
__global__ void lightestChoiceKernel(ChoiceView v)
{
  for (unsigned long long i = globalThread(); i < v.n; i += gridThreads())
  {
    const Index q = Index(i), t = v.choice[q];
    if (t == kNoEdge)
      continue;
    const Index r = v.label[q];
    const unsigned long long w = weightBits(v.weight2[q]);
    const GlobalId a = v.keys[q], b = v.keys[t];
    const long long lo = a < b ? a : b, hi = a < b ? b : a;
    if (kPass == 1)
      atomicMin(&v.minWeight[r], w);
    else if (kPass == 2 && w == v.minWeight[r])
      atomicMin(&v.minLo[r], lo);
    else if (kPass == 3 && w == v.minWeight[r] && lo == v.minLo[r])
      atomicMin(&v.minHi[r], hi);
    else if (kPass == 4 && w == v.minWeight[r] && lo == v.minLo[r] && hi == v.minHi[r])
      atomicMin(&v.winner[r], q);
  }
}

// --- The merge -----------------------------------------------------------

// hook[r]: the component at the other end of root r's lightest edge, or r.
__global__ void hookKernel(
  const Index* label, const Index* choice, const Index* winner, Index n, Index* hook)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
  {
    const Index r = Index(i);
    const Index w = label[r] == r ? winner[r] : kNoEdge;
    hook[r] = w == kNoEdge ? r : label[choice[w]];
  }
}

// link[r]: hook[r], except for the smaller root of a pair that chose the same
// edge (it stays a root); every other hook appends its edge.
__global__ void linkKernel(const Index* label, const Index* choice, const double* weight2,
  const Index* winner, const Index* hook, Index n, Index* link, RoundEdges edges)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
  {
    const Index r = Index(i), s = hook[r];
    link[r] = s;
    if (label[r] != r || s == r)
      continue;
    if (hook[s] == r && r < s)
    {
      link[r] = r;
      continue;
    }
    const Index q = winner[r];
    const unsigned long long at = atomicAdd(edges.count, 1ull);
    if (at < edges.capacity) // more is an internal error, reported by the host
    {
      edges.a[at] = q;
      edges.b[at] = choice[q];
      edges.weight2[at] = weight2[q];
    }
  }
}

// One pass of pointer jumping over the roots; *changed set when a link moved.
__global__ void jumpKernel(const Index* label, Index n, Index* link, int* changed)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
  {
    const Index r = Index(i);
    if (label[r] != r)
      continue;
    // A link read while another thread moves it is its old or new value, an
    // ancestor either way; roots never move.
    const Index up = link[r], top = link[up];
    if (top != up)
    {
      link[r] = top;
      *changed = 1;
    }
  }
}

__global__ void relabelKernel(const Index* link, Index n, Index* label)
{
  for (unsigned long long i = globalThread(); i < n; i += gridThreads())
    label[i] = link[label[i]];
}

__global__ void countRootsKernel(const Index* label, Index n, unsigned long long* count)
{
  // Whole warps iterate together (w is the warp's first index; block and
  // grid sizes are multiples of 32), so every ballot is over all lanes.
  const unsigned lane = threadIdx.x & 31;
  for (unsigned long long w = globalThread() - lane; w < n; w += gridThreads())
  {
    const unsigned long long i = w + lane;
    const bool root = i < n && label[i] == Index(i);
    const unsigned mask = __ballot_sync(0xFFFFFFFFu, root);
    if (lane == 0 && mask)
      atomicAdd(count, (unsigned long long)__popc(mask));
  }
}

template <class T>
__global__ void checkEdgesKernel(const T* x, const T* y, const T* z, const double* core2,
  Periodicity per, const Index* labelBefore, RoundEdges edges, Index from, Index to,
  unsigned long long* bad)
{
  for (unsigned long long i = from + globalThread(); i < to; i += gridThreads())
  {
    const Index a = edges.a[i], b = edges.b[i];
    const T pa[3] = { x[a], y[a], z[a] };
    const T pb[3] = { x[b], y[b], z[b] };
    const double w = edgeWeight2(per, pa, pb, core2 ? core2[a] : 0.0, core2 ? core2[b] : 0.0);
    if (labelBefore[a] == labelBefore[b] || w != edges.weight2[i])
      atomicMin(bad, i);
  }
}

template <class V>
void fillRaw(V* out, std::size_t n, V value, cudaStream_t stream)
{
  if (n == 0)
    return;
  fillKernel<<<gridFor(n, kThreads), kThreads, 0, stream>>>(out, n, value);
  JZ_CUDA_LAUNCH_CHECK("fillKernel");
}
} // namespace

template <class T>
void coreExtremesCuda(const DeviceTree<T>& tree, const double* core2,
  std::vector<DeviceBuffer<double>>& coreMin2, std::vector<DeviceBuffer<double>>& coreMax2,
  cudaStream_t stream)
{
  const std::size_t planes = tree.planes.size();
  coreMin2.resize(planes);
  coreMax2.resize(planes);
  for (std::size_t p = 0; p < planes; ++p)
  {
    const DevicePlane<T>& plane = tree.planes[p];
    const Index nodes = plane.numNodes;
    coreMin2[p].allocate(nodes, stream, "the EMST core extremes");
    coreMax2[p].allocate(nodes, stream, "the EMST core extremes");
    if (nodes == 0)
      continue;
    const Index* split = p == 0 ? plane.sourceSplit.get() : plane.childSplit.get();
    const double* lo = p == 0 ? core2 : coreMin2[p - 1].get();
    const double* hi = p == 0 ? core2 : coreMax2[p - 1].get();
    const Index below = p == 0 ? tree.numSources : tree.planes[p - 1].numNodes;
    coreExtremesKernel<<<gridFor(nodes, kThreads), kThreads, 0, stream>>>(
      split, nodes, lo, hi, below, coreMin2[p].get(), coreMax2[p].get());
    JZ_CUDA_LAUNCH_CHECK("coreExtremesKernel");
  }
}

template <class T>
void beginRoundCuda(const DeviceTree<T>& tree, const BoruvkaRoundState& s, cudaStream_t stream)
{
  for (std::size_t p = 0; p < tree.planes.size(); ++p)
  {
    const DevicePlane<T>& plane = tree.planes[p];
    if (plane.numNodes == 0)
      continue;
    const Index* split = p == 0 ? plane.sourceSplit.get() : plane.childSplit.get();
    const Index* below = p == 0 ? s.label : s.nodeLabel[p - 1];
    const Index numBelow = p == 0 ? s.n : tree.planes[p - 1].numNodes;
    labelPlaneKernel<<<gridFor(plane.numNodes, kThreads), kThreads, 0, stream>>>(
      split, plane.numNodes, below, numBelow, s.nodeLabel[p]);
    JZ_CUDA_LAUNCH_CHECK("labelPlaneKernel");
  }
  fillRaw(s.compBound, s.n, roundUpToFloat(s.maxWeight2), stream);
  seedBoundsKernel<<<gridFor(s.n, kThreads), kThreads, 0, stream>>>(tree.sx.get(), tree.sy.get(),
    tree.sz.get(), s.label, s.core2, s.n, tree.periodicity, s.compBound);
  JZ_CUDA_LAUNCH_CHECK("seedBoundsKernel");
  fillRaw(s.choice, s.n, kNoEdge, stream);
}

void initialLabelsCuda(Index* label, Index n, cudaStream_t stream)
{
  if (n == 0)
    return;
  iotaKernel<<<gridFor(n, kThreads), kThreads, 0, stream>>>(label, n);
  JZ_CUDA_LAUNCH_CHECK("iotaKernel");
}

Index mergeComponentsCuda(
  const BoruvkaRoundState& s, const RoundEdges& edges, cudaStream_t stream, TempStorage&)
{
  const Index n = s.n;
  const unsigned blocks = gridFor(n, kThreads);
  DeviceBuffer<unsigned long long> minWeight(n, stream, "the EMST component minima");
  DeviceBuffer<long long> minLo(n, stream, "the EMST component minima");
  DeviceBuffer<long long> minHi(n, stream, "the EMST component minima");
  DeviceBuffer<Index> winner(n, stream, "the EMST component minima");
  fill(minWeight, ~0ull, stream);
  fill(minLo, (long long)LLONG_MAX, stream);
  fill(minHi, (long long)LLONG_MAX, stream);
  fill(winner, kNoEdge, stream);
  const ChoiceView v{ n, s.label, s.choice, s.choiceWeight2, s.keys, minWeight.get(), minLo.get(),
    minHi.get(), winner.get() };
  lightestChoiceKernel<1><<<blocks, kThreads, 0, stream>>>(v);
  lightestChoiceKernel<2><<<blocks, kThreads, 0, stream>>>(v);
  lightestChoiceKernel<3><<<blocks, kThreads, 0, stream>>>(v);
  lightestChoiceKernel<4><<<blocks, kThreads, 0, stream>>>(v);
  JZ_CUDA_LAUNCH_CHECK("lightestChoiceKernel");
  minWeight.release();
  minLo.release();
  minHi.release();

  const unsigned long long before = fetchValue(edges.count, stream);
  DeviceBuffer<Index> hook(n, stream, "the EMST hooks");
  DeviceBuffer<Index> link(n, stream, "the EMST hooks");
  hookKernel<<<blocks, kThreads, 0, stream>>>(s.label, s.choice, winner.get(), n, hook.get());
  JZ_CUDA_LAUNCH_CHECK("hookKernel");
  linkKernel<<<blocks, kThreads, 0, stream>>>(
    s.label, s.choice, s.choiceWeight2, winner.get(), hook.get(), n, link.get(), edges);
  JZ_CUDA_LAUNCH_CHECK("linkKernel");
  const unsigned long long after = fetchValue(edges.count, stream);
  if (after > edges.capacity)
    throw Error("internal error: the CUDA EMST found " + std::to_string(after) + " edges for " +
      std::to_string(n) + " points");
  hook.release();
  winner.release();

  DeviceBuffer<int> changed(1, stream, "a flag");
  int pass = 0;
  for (;; ++pass)
  {
    if (pass == kMaxJumpPasses)
      throw Error("internal error: the CUDA EMST's merge did not converge (a cycle of components)");
    JZ_CUDA_CHECK(cudaMemsetAsync(changed.get(), 0, sizeof(int), stream));
    jumpKernel<<<blocks, kThreads, 0, stream>>>(s.label, n, link.get(), changed.get());
    JZ_CUDA_LAUNCH_CHECK("jumpKernel");
    if (fetchValue(changed.get(), stream) == 0)
      break;
  }
  relabelKernel<<<blocks, kThreads, 0, stream>>>(link.get(), n, s.label);
  JZ_CUDA_LAUNCH_CHECK("relabelKernel");
  return Index(after - before);
}

Index countComponentsCuda(const Index* label, Index n, cudaStream_t stream)
{
  if (n == 0)
    return 0;
  DeviceBuffer<unsigned long long> count(1, stream, "a counter");
  JZ_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
  countRootsKernel<<<gridFor(n, kThreads), kThreads, 0, stream>>>(label, n, count.get());
  JZ_CUDA_LAUNCH_CHECK("countRootsKernel");
  return Index(fetchValue(count.get(), stream));
}

template <class T>
void checkRoundEdgesCuda(const DeviceTree<T>& tree, const BoruvkaRoundState& s,
  const Index* labelBefore, const RoundEdges& edges, Index from, Index to, cudaStream_t stream)
{
  if (to <= from)
    return;
  DeviceBuffer<unsigned long long> bad(1, stream, "a flag");
  JZ_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xFF, sizeof(unsigned long long), stream)); // none
  checkEdgesKernel<<<gridFor(to - from, kThreads), kThreads, 0, stream>>>(tree.sx.get(),
    tree.sy.get(), tree.sz.get(), s.core2, tree.periodicity, labelBefore, edges, from, to,
    bad.get());
  JZ_CUDA_LAUNCH_CHECK("checkEdgesKernel");
  const unsigned long long i = fetchValue(bad.get(), stream);
  if (i != ~0ull)
    throw Error("internal error: the CUDA EMST's edge " + std::to_string(i) +
      " joins one component or carries another weight than the formula's");
}

template void coreExtremesCuda<float>(const DeviceTree<float>&, const double*,
  std::vector<DeviceBuffer<double>>&, std::vector<DeviceBuffer<double>>&, cudaStream_t);
template void coreExtremesCuda<double>(const DeviceTree<double>&, const double*,
  std::vector<DeviceBuffer<double>>&, std::vector<DeviceBuffer<double>>&, cudaStream_t);
template void beginRoundCuda<float>(
  const DeviceTree<float>&, const BoruvkaRoundState&, cudaStream_t);
template void beginRoundCuda<double>(
  const DeviceTree<double>&, const BoruvkaRoundState&, cudaStream_t);
template void checkRoundEdgesCuda<float>(const DeviceTree<float>&, const BoruvkaRoundState&,
  const Index*, const RoundEdges&, Index, Index, cudaStream_t);
template void checkRoundEdgesCuda<double>(const DeviceTree<double>&, const BoruvkaRoundState&,
  const Index*, const RoundEdges&, Index, Index, cudaStream_t);
} // namespace cuda
} // namespace jz
