// The z-order plane tree in device memory (same layout as jz::ZTree on the host).
#pragma once

#include <vector>

#include "cuda/CudaCommon.cuh"
#include "jz/Geometry.h"
#include "jz/Tree.h"

namespace jz
{
namespace cuda
{
// A point during sorting: coordinates plus its joint index (sources first,
// then queries), as in the CPU build.
template <class T>
struct Record
{
  T p[kDim];
  Index id;
};

// Sorts records in exact z-order (CUB DeviceMergeSort with jz::zLess).
template <class T>
void sortRecordsCuda(Record<T>* records, Index n, cudaStream_t stream, TempStorage& temp);

template <class T>
struct DevicePlane
{
  Index numNodes = 0;
  DeviceBuffer<Index> jointSplit;    // numNodes + 1 offsets into the joint sorted order
  DeviceBuffer<Index> sourceSplit;   // numNodes + 1
  DeviceBuffer<Index> querySplitBuf; // numNodes + 1, separate queries only
  DeviceBuffer<Index> childSplit;    // numNodes + 1, planes above 0 only
  DeviceBuffer<Box<T>> sourceBox;    // numNodes
  DeviceBuffer<Box<T>> queryBoxBuf;  // numNodes, separate queries only
  bool self = true;

  const Index* querySplit() const { return self ? sourceSplit.get() : querySplitBuf.get(); }
  const Box<T>* queryBox() const { return self ? sourceBox.get() : queryBoxBuf.get(); }
};

template <class T>
struct DeviceTree
{
  bool self = true;
  Index numSources = 0;
  Index numQueries = 0; // == numSources for a self query
  Periodicity periodicity;
  // Sorted coordinates (structure of arrays) and input indices.
  DeviceBuffer<T> sx, sy, sz;
  DeviceBuffer<Index> sInput;
  DeviceBuffer<T> qxBuf, qyBuf, qzBuf;
  DeviceBuffer<Index> qInputBuf;
  std::vector<DevicePlane<T>> planes; // planes[0] = leaves
  // The sources as uploaded (interleaved xyz, input order, not wrapped), kept
  // by the build only when keepSourceInput was set before it (the FoF
  // catalogue sums these coordinates, as the CPU's does).
  bool keepSourceInput = false;
  DeviceBuffer<T> sourceInput;

  const T* qx() const { return self ? sx.get() : qxBuf.get(); }
  const T* qy() const { return self ? sy.get() : qyBuf.get(); }
  const T* qz() const { return self ? sz.get() : qzBuf.get(); }
  const Index* qInput() const { return self ? sInput.get() : qInputBuf.get(); }
};

// Sorted coordinates (structure of arrays) as a kernel reads them.
template <class T>
struct DeviceXyz
{
  const T* x = nullptr;
  const T* y = nullptr;
  const T* z = nullptr;
};

template <class T>
DeviceXyz<T> sourcesOf(const DeviceTree<T>& tree)
{
  return DeviceXyz<T>{ tree.sx.get(), tree.sy.get(), tree.sz.get() };
}

template <class T>
DeviceXyz<T> queriesOf(const DeviceTree<T>& tree)
{
  return DeviceXyz<T>{ tree.qx(), tree.qy(), tree.qz() };
}

// Builds the joint tree from host coordinates (interleaved xyz) with the
// tuning values the CPU build takes. Marks the timer stages "upload", "sort"
// and "tree". Throws Error naming the first point with a non-finite
// coordinate, as the CPU build does.
template <class T>
void buildTreeCuda(const T* sources, Index numSources, const T* queries, Index numQueries,
  const Periodicity& periodicity, const double* boxLo, const TreeBuildOptions& options,
  DeviceTree<T>& tree, cudaStream_t stream, TempStorage& temp, StageTimer& timer);
} // namespace cuda
} // namespace jz
