// The kNN dual tree walk on the GPU (§III): declarations shared
// by the node walks, the leaf walk and the driver.
#pragma once

#include "TreeCuda.cuh"
#include "jz/Knn.h"

namespace jz
{
namespace cuda
{
// Interaction list of one plane: receiving node i interacts with the source
// nodes source[offset[i] .. offset[i+1]), sorted by the lower bound low2.
struct DeviceList
{
  Index numReceivers = 0;
  DeviceBuffer<unsigned long long> offset; // numReceivers + 1
  DeviceBuffer<Index> source;
  DeviceBuffer<double> low2;
  unsigned long long size = 0;
};

// The dense list of the virtual plane above the top plane: every super node
// (group of `group` top nodes) with every other, lower bounds zero. Also
// fills parentOf / parentChildSplit of the top plane.
void denseTopList(Index topNodes, Index group, DeviceList& list, DeviceBuffer<Index>& parentOf,
  DeviceBuffer<Index>& parentChildSplit, cudaStream_t stream);

// Node-to-node walk of plane p (FindRmax, Count, scan, Insert, segmented sort
// by lower bound). parentOf maps plane-p nodes to parent entries of `parents`,
// parentChildSplit gives the plane-p children of each parent.
template <class T>
void nodeWalkCuda(const DeviceTree<T>& tree, int p, int k, const Index* parentOf,
  const Index* parentChildSplit, const DeviceList& parents, DeviceList& out,
  DeviceBuffer<double>& rmax2, cudaStream_t stream, TempStorage& temp);

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

// LeafToLeaf: the exact K nearest sources of every query point, reduced in
// the kernel to the requested outputs. keys and masses are in sorted source
// order (masses null = unit mass).
template <class T>
void leafWalkCuda(const DeviceTree<T>& tree, int k, const DeviceList& leaves, const double* rmax2,
  const GlobalId* keys, const double* masses, const DeviceOutputs<T>& out, cudaStream_t stream);
} // namespace cuda
} // namespace jz
