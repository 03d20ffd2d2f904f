// Host side of CudaCommon.cuh: the run's memory-pool scope, stream-ordered
// allocation with a clear out-of-memory message, and staged downloads.
#include <cstring>
#include <mutex>
#include <string>

#include "cuda/CudaCommon.cuh"

namespace jz
{
namespace cuda
{
PoolScope::PoolScope(cudaStream_t stream)
  : stream_(stream)
{
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int pools = 0;
  check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device),
    "cudaDeviceGetAttribute");
  if (!pools)
    throw Error("the GPU (or its driver) has no stream-ordered memory pools");
  check(cudaDeviceGetDefaultMemPool(&pool_, device), "cudaDeviceGetDefaultMemPool");
  check(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &oldThreshold_),
    "cudaMemPoolGetAttribute");
  std::uint64_t keep = ~std::uint64_t(0);
  check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep),
    "cudaMemPoolSetAttribute");
  std::uint64_t zero = 0;
  check(
    cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero), "cudaMemPoolSetAttribute");
}

PoolScope::~PoolScope()
{
  // Errors here cannot be reported (a destructor, possibly during an
  // exception); a sticky device error surfaces at the next call anyway.
  cudaStreamSynchronize(stream_);
  cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &oldThreshold_);
  cudaMemPoolTrimTo(pool_, 0);
  cudaGetLastError();
}

std::size_t PoolScope::peakBytes() const
{
  std::uint64_t v = 0;
  check(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &v), "cudaMemPoolGetAttribute");
  return std::size_t(v);
}

void* allocateDevice(std::size_t bytes, cudaStream_t stream, const char* what)
{
  void* p = nullptr;
  cudaError_t err = cudaMallocAsync(&p, bytes, stream);
  if (err == cudaErrorMemoryAllocation)
  {
    // Memory other streams freed may still be cached in the pool: wait for
    // the device, hand the cache back, and try once more.
    cudaGetLastError();
    cudaDeviceSynchronize();
    int device = 0;
    cudaMemPool_t pool;
    if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
      cudaMemPoolTrimTo(pool, 0);
    err = cudaMallocAsync(&p, bytes, stream);
  }
  if (err != cudaSuccess)
  {
    cudaGetLastError();
    std::size_t freeBytes = 0, totalBytes = 0;
    cudaMemGetInfo(&freeBytes, &totalBytes);
    cudaGetLastError();
    throw Error(std::string("not enough GPU memory for ") + what + ": need " +
      std::to_string(bytes >> 20) + " MiB more, " + std::to_string(freeBytes >> 20) +
      " MiB free of " + std::to_string(totalBytes >> 20) + " MiB (" + cudaGetErrorString(err) +
      ")");
  }
  return p;
}

namespace detail
{
namespace
{
std::mutex stagingMutex;
Staging* staging = nullptr; // lives until the process ends
} // namespace

Staging& lockStaging()
{
  stagingMutex.lock();
  if (!staging)
  {
    Staging* s = new Staging();
    s->chunk[0] = s->chunk[1] = nullptr;
    s->ready[0] = s->ready[1] = nullptr;
    cudaError_t err = cudaMallocHost(&s->chunk[0], 2 * Staging::kChunkBytes);
    if (err == cudaSuccess)
    {
      s->chunk[1] = s->chunk[0] + Staging::kChunkBytes;
      err = cudaEventCreateWithFlags(&s->ready[0], cudaEventDisableTiming);
    }
    if (err == cudaSuccess)
      err = cudaEventCreateWithFlags(&s->ready[1], cudaEventDisableTiming);
    if (err != cudaSuccess)
    {
      if (s->chunk[0])
        cudaFreeHost(s->chunk[0]);
      if (s->ready[0])
        cudaEventDestroy(s->ready[0]);
      delete s;
      stagingMutex.unlock();
      check(err, "the pinned staging buffers");
    }
    staging = s;
  }
  return *staging;
}

void unlockStaging(cudaStream_t stream)
{
  cudaStreamSynchronize(stream);
  stagingMutex.unlock();
}
} // namespace detail

void downloadBytes(void* host, const void* device, std::size_t bytes, cudaStream_t stream)
{
  if (bytes == 0)
    return;
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, host) == cudaSuccess && attr.type == cudaMemoryTypeHost)
  {
    // Page-locked (cudaHostRegister or cudaMallocHost): the copy engine
    // writes there directly.
    check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream), "download");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return;
  }
  cudaGetLastError();
  unsigned char* out = static_cast<unsigned char*>(host);
  downloadChunks(device, bytes, stream,
    [&](const void* chunk, std::size_t len)
    {
      std::memcpy(out, chunk, len);
      out += len;
    });
}
} // namespace cuda
} // namespace jz
