// LeafToLeaf of the kNN walk on the GPU (§III-D): one block per leaf,
// one thread per query point, the source leaves of the interaction list
// staged through shared memory, and a register-resident candidate list of
// KMAX = 8, 16 or 32 entries. K > 32 runs several passes; pass m keeps the
// best candidates strictly after the last (distance^2, key) of pass m - 1, so
// ties (lattices) neither repeat nor drop neighbours. Results are reduced in
// the kernel (smoothing length, density) and written in query input order;
// the N x K arrays exist only when neighbour lists are requested.
//
// Candidates are ranked exactly like jz::NeighborHeap on the CPU: squared
// distance in double from jz::distance2, ties by the smaller key.
#include <climits>

#include "WalkCuda.cuh"
#include "jz/DensityKernels.h"

namespace jz
{
namespace cuda
{
namespace
{
constexpr int kLeafThreads = 64;
constexpr Index kNoSource = 0xFFFFFFFFu;

enum Accumulate
{
  kAccNone = 0,
  kAccMass = 1, // top-hat: sum of masses
  kAccSph = 2   // SPH: sum of m W(r, h)
};

template <class T>
struct LeafArgs
{
  const Index* querySplit;
  const Index* sourceSplit;
  const Box<T>* sourceBox;
  const unsigned long long* listOffset;
  const Index* listSource;
  const double* listLow2;
  const double* rmax2;
  const T* qx;
  const T* qy;
  const T* qz;
  const Index* qInput;
  const T* sx;
  const T* sy;
  const T* sz;
  const GlobalId* keys;
  const double* masses;
  Periodicity per;
  int k;
  int done;  // ranks found by earlier passes
  int count; // ranks this pass delivers (<= KMAX)
  // Per sorted query state between passes (null for a single pass).
  double* lastD2;
  GlobalId* lastKey;
  double* acc;
  double* h2State; // the K-th squared distance (SPH series after the first)
  int accumulate;
  bool hFromState; // SPH: h from h2State (else from this pass' K-th entry)
  bool storeH2;    // last pass: store the K-th squared distance into h2State
  bool writeLists;
  bool writeSmoothing;
  bool writeDensity;
  DensityEstimator estimator;
  T* smoothingLength;
  T* density;
  GlobalId* neighborIds;
  T* neighborDistances;
};

__device__ __forceinline__ GlobalId keyOf(const GlobalId* keys, Index s)
{
  return s == kNoSource ? GlobalId(LLONG_MAX) : keys[s];
}

template <class T, int KMAX>
__global__ void __launch_bounds__(kLeafThreads) leafKernel(LeafArgs<T> a)
{
  __shared__ T shx[kLeafThreads];
  __shared__ T shy[kLeafThreads];
  __shared__ T shz[kLeafThreads];
  const Index leaf = blockIdx.x;
  const int tid = threadIdx.x;
  const Index q0 = a.querySplit[leaf], q1 = a.querySplit[leaf + 1];
  const unsigned long long e0 = a.listOffset[leaf], e1 = a.listOffset[leaf + 1];
  const double bound2 = a.rmax2[leaf];
  const bool last = a.done + a.count >= a.k;

  // Uniform across the block: every thread runs every iteration (barriers).
  for (Index qb = q0; qb < q1; qb += kLeafThreads)
  {
    const Index q = qb + tid;
    const bool active = q < q1;
    T p[3] = { T(0), T(0), T(0) };
    double lastD2 = 0;
    GlobalId lastKey = 0;
    const bool hasLast = active && a.done > 0;
    if (active)
    {
      p[0] = a.qx[q];
      p[1] = a.qy[q];
      p[2] = a.qz[q];
      if (hasLast)
      {
        lastD2 = a.lastD2[q];
        lastKey = a.lastKey[q];
      }
    }
    double hd[KMAX];
    Index hs[KMAX];
#pragma unroll
    for (int i = 0; i < KMAX; ++i)
    {
      hd[i] = bound2;
      hs[i] = kNoSource;
    }

    for (unsigned long long e = e0; e < e1; ++e)
    {
      const double w2 = hd[KMAX - 1] * (1 + kBoundSlack);
      const double low = a.listLow2[e];
      // Early exit once no thread of the block can gain from the rest.
      if (!__syncthreads_or(active && low <= w2))
        break;
      const Index s = a.listSource[e];
      const bool need = active && low <= w2 && pointBoxDistance2(p, a.sourceBox[s], a.per) <= w2;
      if (!__syncthreads_or(need))
        continue;
      const Index s0 = a.sourceSplit[s], s1 = a.sourceSplit[s + 1];
      for (Index c0 = s0; c0 < s1; c0 += kLeafThreads)
      {
        const Index m = (s1 - c0) < Index(kLeafThreads) ? (s1 - c0) : Index(kLeafThreads);
        if (Index(tid) < m)
        {
          shx[tid] = a.sx[c0 + tid];
          shy[tid] = a.sy[c0 + tid];
          shz[tid] = a.sz[c0 + tid];
        }
        __syncthreads();
        if (need)
        {
          for (Index j = 0; j < m; ++j)
          {
            const T sp[3] = { shx[j], shy[j], shz[j] };
            const double d2 = distance2(p, sp, a.per);
            if (d2 > hd[KMAX - 1])
              continue;
            const Index src = c0 + j;
            const GlobalId ck = a.keys[src];
            if (hasLast && (d2 < lastD2 || (d2 == lastD2 && ck <= lastKey)))
              continue;
            if (d2 == hd[KMAX - 1] && !(ck < keyOf(a.keys, hs[KMAX - 1])))
              continue;
            // Insert (d2, src) keeping (d2, key) ascending; constant indices
            // keep the list in registers.
            bool placed = false;
#pragma unroll
            for (int i = KMAX - 1; i > 0; --i)
            {
              if (!placed)
              {
                const bool before =
                  d2 < hd[i - 1] || (d2 == hd[i - 1] && ck < keyOf(a.keys, hs[i - 1]));
                if (before)
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
        __syncthreads();
      }
    }
    if (!active)
      continue;

    // Reduce this pass' ranks [done, done + count).
    const std::size_t out = a.qInput[q];
    const int cnt = a.count;
    double kth2 = 0; // this pass' last entry: the K-th on the last pass
    GlobalId kthKey = 0;
#pragma unroll
    for (int j = 0; j < KMAX; ++j)
    {
      if (j == cnt - 1)
      {
        kth2 = hd[j];
        kthKey = keyOf(a.keys, hs[j]);
      }
    }
    double h2 = 0;
    if (a.accumulate == kAccSph)
      h2 = a.hFromState ? a.h2State[q] : kth2;
    const double h = sqrt(h2);
    double acc = (a.done > 0 && a.acc) ? a.acc[q] : 0.0;
#pragma unroll
    for (int j = 0; j < KMAX; ++j)
    {
      if (j < cnt)
      {
        const std::size_t rank = std::size_t(a.done) + j;
        if (a.writeLists)
        {
          if (a.neighborIds)
            a.neighborIds[out * a.k + rank] = keyOf(a.keys, hs[j]);
          if (a.neighborDistances)
            a.neighborDistances[out * a.k + rank] = T(sqrt(hd[j]));
        }
        if (a.accumulate == kAccMass)
        {
          acc += (a.masses && hs[j] != kNoSource) ? a.masses[hs[j]] : 1.0;
        }
        else if (a.accumulate == kAccSph && h > 0)
        {
          const double mj = (a.masses && hs[j] != kNoSource) ? a.masses[hs[j]] : 1.0;
          acc += mj * cubicSplineW(sqrt(hd[j]), h);
        }
      }
    }
    if (!last)
    {
      a.lastD2[q] = kth2;
      a.lastKey[q] = kthKey;
      if (a.acc)
        a.acc[q] = acc;
      continue;
    }
    // Last pass: kth2 is the K-th neighbour's squared distance.
    const double hk = sqrt(kth2);
    if (a.storeH2)
      a.h2State[q] = kth2;
    if (a.writeSmoothing && a.smoothingLength)
      a.smoothingLength[out] = T(hk);
    if (a.writeDensity && a.density)
    {
      double rho;
      if (a.estimator == DensityEstimator::TopHat)
        rho = hk > 0 ? topHatDensity(acc, hk) : kInfinity;
      else
        rho = hk > 0 ? acc : kInfinity;
      a.density[out] = T(rho);
    }
  }
}

template <class T, int KMAX>
void launchLeaf(Index leaves, const LeafArgs<T>& a, cudaStream_t stream)
{
  leafKernel<T, KMAX><<<leaves, kLeafThreads, 0, stream>>>(a);
  check(cudaGetLastError(), "leafKernel");
}

template <class T>
void runPass(Index leaves, LeafArgs<T> a, cudaStream_t stream)
{
  const int rem = a.k - a.done;
  if (rem <= 8)
  {
    a.count = rem;
    launchLeaf<T, 8>(leaves, a, stream);
  }
  else if (rem <= 16)
  {
    a.count = rem;
    launchLeaf<T, 16>(leaves, a, stream);
  }
  else
  {
    a.count = rem < 32 ? rem : 32;
    launchLeaf<T, 32>(leaves, a, stream);
  }
}
} // namespace

template <class T>
void leafWalkCuda(const DeviceTree<T>& tree, int k, const DeviceList& leaves, const double* rmax2,
  const GlobalId* keys, const double* masses, const DeviceOutputs<T>& out, cudaStream_t stream)
{
  const DevicePlane<T>& plane = tree.planes[0];
  const Index numLeaves = plane.numNodes;
  if (numLeaves == 0 || tree.numQueries == 0)
    return;
  LeafArgs<T> a{};
  a.querySplit = plane.querySplit();
  a.sourceSplit = plane.sourceSplit.get();
  a.sourceBox = plane.sourceBox.get();
  a.listOffset = leaves.offset.get();
  a.listSource = leaves.source.get();
  a.listLow2 = leaves.low2.get();
  a.rmax2 = rmax2;
  a.qx = tree.qx();
  a.qy = tree.qy();
  a.qz = tree.qz();
  a.qInput = tree.qInput();
  a.sx = tree.sx.get();
  a.sy = tree.sy.get();
  a.sz = tree.sz.get();
  a.keys = keys;
  a.masses = masses;
  a.per = tree.periodicity;
  a.k = k;
  a.estimator = out.estimator;
  a.smoothingLength = out.smoothingLength;
  a.density = out.density;
  a.neighborIds = out.neighborIds;
  a.neighborDistances = out.neighborDistances;
  const bool wantLists = out.neighborIds || out.neighborDistances;
  const bool wantDensity = out.density != nullptr;
  const bool tophat = out.estimator == DensityEstimator::TopHat;

  if (k <= 32)
  {
    // One pass does everything, h from the registers.
    a.done = 0;
    a.accumulate = wantDensity ? (tophat ? kAccMass : kAccSph) : kAccNone;
    a.hFromState = false;
    a.storeH2 = false;
    a.writeLists = wantLists;
    a.writeSmoothing = true;
    a.writeDensity = wantDensity;
    runPass(numLeaves, a, stream);
    check(cudaStreamSynchronize(stream), "leaf walk");
    return;
  }

  // Several passes with per-query state.
  const Index nq = tree.numQueries;
  const bool sph = wantDensity && !tophat;
  DeviceBuffer<double> lastD2(nq, "the leaf walk state");
  DeviceBuffer<GlobalId> lastKey(nq, "the leaf walk state");
  DeviceBuffer<double> acc(nq, "the leaf walk state");
  DeviceBuffer<double> h2State;
  if (sph)
    h2State.allocate(nq, "the leaf walk state");
  a.lastD2 = lastD2.get();
  a.lastKey = lastKey.get();
  a.acc = acc.get();
  a.h2State = h2State.get();

  // Series 1: neighbour lists, smoothing length, top-hat density, and h for SPH.
  a.accumulate = (wantDensity && tophat) ? kAccMass : kAccNone;
  a.hFromState = false;
  a.storeH2 = sph;
  a.writeLists = wantLists;
  a.writeSmoothing = true;
  a.writeDensity = wantDensity && tophat;
  for (a.done = 0; a.done < k;)
  {
    runPass(numLeaves, a, stream);
    const int rem = k - a.done;
    a.done += rem <= 16 ? rem : (rem < 32 ? rem : 32);
  }
  if (sph)
  {
    // Series 2: the SPH sum in rank order with the known h.
    a.accumulate = kAccSph;
    a.hFromState = true;
    a.storeH2 = false;
    a.writeLists = false;
    a.writeSmoothing = false;
    a.writeDensity = true;
    for (a.done = 0; a.done < k;)
    {
      runPass(numLeaves, a, stream);
      const int rem = k - a.done;
      a.done += rem <= 16 ? rem : (rem < 32 ? rem : 32);
    }
  }
  check(cudaStreamSynchronize(stream), "leaf walk");
}

template void leafWalkCuda<float>(const DeviceTree<float>&, int, const DeviceList&, const double*,
  const GlobalId*, const double*, const DeviceOutputs<float>&, cudaStream_t);
template void leafWalkCuda<double>(const DeviceTree<double>&, int, const DeviceList&, const double*,
  const GlobalId*, const double*, const DeviceOutputs<double>&, cudaStream_t);
} // namespace cuda
} // namespace jz
