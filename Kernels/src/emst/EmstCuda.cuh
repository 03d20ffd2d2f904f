// The Borůvka EMST on the GPU (ArborX EMST paper §3), the CUDA counterpart of
// EmstCpu.cpp: declarations shared by the round's search
// (BoruvkaWalkCuda.cu: a policy of the dual-walk engine and its leaf
// kernel), the component kernels (BoruvkaComponentsCuda.cu: labels, bounds,
// the per-component lightest edge, the merge) and the driver (EmstCuda.cu).
#pragma once

#include <vector>

#include "walk/BoxMetric.h"
#include "walk/DualWalkCuda.cuh"
#include "jz/Emst.h"

namespace jz
{
namespace cuda
{
// Markers of the GPU's round state (the CPU's are BoruvkaComponents.h's).
constexpr Index kNoEdge = 0xFFFFFFFFu;    // a point or component without a choice
constexpr Index kMixedNode = 0xFFFFFFFFu; // a node with points of several components
constexpr Index kEmptyNode = 0xFFFFFFFEu; // a node without points

// The squared weight of edge (a, b) of sorted points: the CPU's formula
// (EmstCpu.cpp's edgeWeight2 and BoruvkaLeafSearch.h: BoxMetric::point2 with
// a the searching point, then the maximum with both core distances), so the
// weights are bit for bit the CPU's (this code is compiled with --fmad=false).
template <class T>
__device__ __forceinline__ double edgeWeight2(
  const Periodicity& per, const T* pa, const T* pb, double coreA2, double coreB2)
{
  const double d2 =
    per.enabled() ? BoxMetric<true>{ per }.point2(pa, pb) : BoxMetric<false>{ per }.point2(pa, pb);
  return jzMax(d2, jzMax(coreA2, coreB2));
}

// What a round reads and writes, all device memory indexed by sorted point
// (per-plane arrays: one pointer per plane, planes[0] = leaves).
struct BoruvkaRoundState
{
  Index n = 0;
  double maxWeight2 = kInfinity;
  const GlobalId* keys = nullptr;                // global id per sorted point (the tie rule)
  const double* core2 = nullptr;                 // squared core distances; null = Euclidean
  std::vector<const double*> coreMin2, coreMax2; // per plane and node (mutual only)
  Index* label = nullptr;                        // per point: its component's root (a sorted index)
  std::vector<Index*> nodeLabel;   // per plane and node: the label, kMixedNode or kEmptyNode
  float* compBound = nullptr;      // per root: upper bound of its lightest edge (rounded up)
  Index* choice = nullptr;         // per point: the other end of its lightest edge, or kNoEdge
  double* choiceWeight2 = nullptr; // per point: that edge's squared weight
};

// The round's search (BoruvkaWalkCuda.cu): every point's lightest edge to
// another component that is no heavier than its component's bound, into
// choice / choiceWeight2 (kNoEdge: none), lowering compBound on the way.
template <class T>
void boruvkaSearchCuda(const DeviceTree<T>& tree, const BoruvkaRoundState& s, cudaStream_t stream,
  TempStorage& temp, RunInfo& info);

// The component kernels (BoruvkaComponentsCuda.cu).

// Per plane and node the smallest and largest core distance below it.
template <class T>
void coreExtremesCuda(const DeviceTree<T>& tree, const double* core2,
  std::vector<DeviceBuffer<double>>& coreMin2, std::vector<DeviceBuffer<double>>& coreMax2,
  cudaStream_t stream);

// label[i] = i: every point its own component.
void initialLabelsCuda(Index* label, Index n, cudaStream_t stream);

// Before a round's search: node labels bottom-up, every bound reset to the
// maximum weight and then lowered by the z-order neighbours of different
// components (the CPU's seedBounds), every choice cleared.
template <class T>
void beginRoundCuda(const DeviceTree<T>& tree, const BoruvkaRoundState& s, cudaStream_t stream);

// The edge list the rounds fill: sorted endpoints (a: the point whose choice
// it was) and the squared weight the search compared.
struct RoundEdges
{
  Index* a = nullptr;
  Index* b = nullptr;
  double* weight2 = nullptr;
  Index capacity = 0;                  // n - 1
  unsigned long long* count = nullptr; // device counter
};

// After the search: per component the lightest choice under the total order
// (weight, smaller id, larger id), deterministic (four atomic-minimum passes
// over exact keys); the components joined along them (mutual choices are
// one edge, kept once), the edges appended, the labels set to the new roots
// by pointer jumping. Returns the number of edges added. Throws Error when
// the merge does not converge (an internal error; never loops unbounded).
Index mergeComponentsCuda(
  const BoruvkaRoundState& s, const RoundEdges& edges, cudaStream_t stream, TempStorage& temp);

// The number of components (points that are their own root).
Index countComponentsCuda(const Index* label, Index n, cudaStream_t stream);

// Device asserts: the edges [from, to) of the list join points of different
// components under `labelBefore` and carry the weight the formula gives.
template <class T>
void checkRoundEdgesCuda(const DeviceTree<T>& tree, const BoruvkaRoundState& s,
  const Index* labelBefore, const RoundEdges& edges, Index from, Index to, cudaStream_t stream);
} // namespace cuda
} // namespace jz
