// The shared parts of the CUDA drivers (CudaDriver.cuh).
#include <string>

#include "common/Progress.h"
#include "cuda/CudaDriver.cuh"

namespace jz
{
namespace cuda
{
namespace
{
// out[s] = the input value of sorted point s (sInput[s]: its input index),
// or orNone(its input index) without an input array.
template <class V, class OrNone>
__global__ void toSortedKernel(const Index* sInput, Index n, const V* in, OrNone orNone, V* out)
{
  for (unsigned long long s = globalThread(); s < n; s += gridThreads())
  {
    const Index i = sInput[s];
    out[s] = in ? in[i] : orNone(i);
  }
}

struct InputIndexAsKey
{
  __device__ GlobalId operator()(Index i) const { return GlobalId(i); }
};

struct UnitMass
{
  __device__ double operator()(Index) const { return 1.0; }
};

template <class V, class OrNone>
DeviceBuffer<V> toSorted(
  const Index* sInput, Index n, const V* host, OrNone orNone, cudaStream_t st, const char* what)
{
  DeviceBuffer<V> out(n, st, what);
  const DeviceBuffer<V> in = uploadOptional(host, n, st, what);
  toSortedKernel<<<gridFor(n, 256), 256, 0, st>>>(sInput, n, in.get(), orNone, out.get());
  JZ_CUDA_LAUNCH_CHECK("toSortedKernel");
  return out;
}
} // namespace

void checkPointCount(std::size_t total)
{
  if (total >= std::size_t(0xFFFFFFFFu))
    throw Error("too many points for one process: " + std::to_string(total));
}

void DeviceRun::finish(RunInfo& info, const RunControl& control)
{
  JZ_CUDA_CHECK(cudaStreamSynchronize(st()));
  timer.report(info.stageSeconds);
  info.counters.emplace_back("gpu peak bytes", double(pool.peakBytes()));
  reportProgress(control, 1.0);
}

DeviceBuffer<GlobalId> sortedKeys(
  const Index* sInput, Index n, const GlobalId* ids, cudaStream_t st, const char* what)
{
  return toSorted(sInput, n, ids, InputIndexAsKey(), st, what);
}

DeviceBuffer<double> sortedMasses(
  const Index* sInput, Index n, const double* masses, cudaStream_t st, const char* what)
{
  return toSorted(sInput, n, masses, UnitMass(), st, what);
}
} // namespace cuda
} // namespace jz
