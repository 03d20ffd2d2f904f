// The kNN dual tree walk on the GPU (§III), two policies of the dual walk
// (DualWalkCuda.cuh): declarations shared by the node walks
// (KnnNodeWalkCuda.cu), the leaf walk (KnnLeafWalkCuda.cu) and the driver
// (KnnCuda.cu).
#pragma once

#include "TreeCuda.cuh"
#include "jz/Knn.h"

namespace jz
{
namespace cuda
{
// Interaction lists of one plane: receiving node i interacts with the source
// nodes source[offset[i] - base .. offset[i+1] - base), sorted by the lower
// bound low2 of their squared distance (a float rounded down, as on the CPU:
// half the memory of a double, and still a lower bound). The lists of a
// plane may be held for a range of receivers only (the leaf plane is walked
// in batches): base = offset[first receiver held].
struct DeviceList
{
  Index numReceivers = 0;
  DeviceBuffer<unsigned long long> offset; // numReceivers + 1, for the whole plane
  unsigned long long base = 0;
  DeviceBuffer<Index> source;
  DeviceBuffer<float> low2;
  unsigned long long size = 0; // entries of the whole plane
};

// The dense list of the virtual plane above the top plane: every super node
// (DualWalkCuda.cuh) with every other, lower bounds zero. Also fills
// parentOf / parentChildSplit of the top plane.
void denseTopList(Index topNodes, DeviceList& list, DeviceBuffer<Index>& parentOf,
  DeviceBuffer<Index>& parentChildSplit, cudaStream_t stream);

// The parents of plane p's nodes and their interaction list.
struct KnnParents
{
  const Index* parentOf;         // plane-p node -> parent index
  const Index* parentChildSplit; // parent -> its plane-p children
  const DeviceList* list;        // the parents' lists (held whole)
};

// FindRmax and Count of plane p (Algorithm 2 and 3): the K-th neighbour
// radius bound of every node into rmax2, the list offsets (scanned) into
// out.offset and the plane's total into out.size. Synchronous.
template <class T>
void knnCountPlane(const DeviceTree<T>& tree, int p, int k, const KnnParents& parents,
  DeviceList& out, DeviceBuffer<double>& rmax2, cudaStream_t stream, TempStorage& temp);

// Insert of the receivers [first, last) of plane p into out (after
// knnCountPlane), then a segmented sort of each list by lower bound.
template <class T>
void knnInsertPlane(const DeviceTree<T>& tree, int p, const KnnParents& parents,
  const double* rmax2, Index first, Index last, DeviceList& out, cudaStream_t stream,
  TempStorage& temp);

// parentOf for the children of plane p (> 0): the plane-p node owning each.
template <class T>
void parentsOfChildren(
  const DeviceTree<T>& tree, int p, DeviceBuffer<Index>& parentOf, cudaStream_t stream);

// Device-side outputs in query input order (null = not wanted).
template <class T>
struct DeviceOutputs
{
  T* smoothingLength = nullptr;
  T* density = nullptr;
  GlobalId* neighborIds = nullptr;
  T* neighborDistances = nullptr;
  DensityEstimator estimator = DensityEstimator::SphCubicSpline;
};

// LeafToLeaf of the leaves [first, last) whose lists `leaves` holds: the
// exact K nearest sources of every query point, reduced in the kernel to the
// requested outputs. keys and masses are in sorted source order (masses null
// = unit mass). Asynchronous on the stream.
template <class T>
void knnLeafWalkCuda(const DeviceTree<T>& tree, int k, Index first, Index last,
  const DeviceList& leaves, const double* rmax2, const GlobalId* keys, const double* masses,
  const DeviceOutputs<T>& out, cudaStream_t stream);
} // namespace cuda
} // namespace jz
