// The kNN dual tree walk on the GPU (§III) on the dual-walk engine
// (DualWalkCuda.cuh): declarations shared by the node walks
// (KnnNodeWalkCuda.cu), the leaf walk (KnnLeafWalkCuda.cu) and the driver
// (KnnCuda.cu).
#pragma once

#include <functional>

#include "walk/DualWalkCuda.cuh"
#include "jz/Knn.h"

namespace jz
{
namespace cuda
{
// The leaf pass's consumer: the leaves [first, last) of `leaves` with their
// lists held (sorted by lower bound) and the leaves' K-th radius bounds.
using KnnLeafConsumer =
  std::function<void(const WalkLevel& leaves, Index first, Index last, const double* rmax2)>;

// The kNN walk (KnnNodeWalkCuda.cu): the node planes from the super nodes
// down, then the leaf plane batch by batch into `consume`. planeDone(p) runs
// after each plane (progress; may throw Aborted).
template <class T>
void knnWalkCuda(const DeviceTree<T>& tree, int k, cudaStream_t stream, TempStorage& temp,
  RunInfo& info, const std::function<void(int)>& planeDone, const KnnLeafConsumer& consume);

// Device-side outputs in query input order (null = not wanted).
template <class T>
struct DeviceOutputs
{
  T* smoothingLength = nullptr;
  T* density = nullptr;
  GlobalId* neighborIds = nullptr;
  T* neighborDistances = nullptr;
  // The K-th squared distance per query in sorted query order, exact (the
  // EMST's core distances, emst/EmstCuda.cu).
  double* kth2Sorted = nullptr;
  DensityEstimator estimator = DensityEstimator::SphCubicSpline;
};

// LeafToLeaf of the leaves [first, last) whose lists `leaves` holds: the
// exact K nearest sources of every query point, reduced in the kernel to the
// requested outputs. keys and masses are in sorted source order (masses null
// = unit mass). Asynchronous on the stream.
template <class T>
void knnLeafWalkCuda(const DeviceTree<T>& tree, int k, Index first, Index last,
  const WalkLevel& leaves, const double* rmax2, const GlobalId* keys, const double* masses,
  const DeviceOutputs<T>& out, cudaStream_t stream);
} // namespace cuda
} // namespace jz
