// What the CUDA drivers of kNN, FoF, gravity and the EMST share around their
// walks: the run's stream, memory-pool scope, CUB scratch and stage timer
// (DeviceRun), the tree of the uploaded points, the per-point inputs in
// sorted order, and the end of the run (stage times, peak memory).
#pragma once

#include <cstddef>

#include "jz/Backend.h"
#include "jz/Config.h"
#include "tree/TreeCuda.cuh"

namespace jz
{
namespace cuda
{
// Throws Error when one process has more points than an Index can count.
void checkPointCount(std::size_t total);

// One run on the device. The members are constructed in the order the pool
// needs (the stream, then the pool scope, before any device buffer) and
// destroyed after every buffer the driver declares after the run.
struct DeviceRun
{
  Stream stream;
  PoolScope pool{ stream.get() };
  TempStorage temp{ stream.get() };
  StageTimer timer{ stream.get() };

  DeviceRun() { timer.mark("start"); }
  cudaStream_t st() const { return stream.get(); }

  // The joint tree of the points (stages "upload", "sort", "tree").
  template <class T>
  void buildTree(const T* sources, Index numSources, const T* queries, Index numQueries,
    const Periodicity& periodicity, const double* boxLo, const TreeBuildOptions& options,
    DeviceTree<T>& tree)
  {
    buildTreeCuda(sources, numSources, queries, numQueries, periodicity, boxLo, options, tree, st(),
      temp, timer);
  }

  // Waits for the stream; the stage times and the peak device memory into
  // info; progress 1.
  void finish(RunInfo& info, const RunControl& control);
};

// A host array on the device, or an empty buffer for none.
template <class V>
DeviceBuffer<V> uploadOptional(const V* host, std::size_t n, cudaStream_t st, const char* what)
{
  DeviceBuffer<V> buffer;
  if (host)
  {
    buffer.allocate(n, st, what);
    buffer.upload(host, n);
  }
  return buffer;
}

// Per sorted source (sInput: its input index): its tie-breaking key, the
// global id from `ids` (host, nullable) or else the input index.
DeviceBuffer<GlobalId> sortedKeys(
  const Index* sInput, Index n, const GlobalId* ids, cudaStream_t st, const char* what);

// Per sorted source: its mass from `masses` (host, nullable; 1 without).
DeviceBuffer<double> sortedMasses(
  const Index* sInput, Index n, const double* masses, cudaStream_t st, const char* what);
} // namespace cuda
} // namespace jz
