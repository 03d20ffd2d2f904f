// Shared helpers of the CUDA backend: checked calls, a stream, device buffers
// from the stream-ordered memory pool, staged host transfers, stage timing
// with CUDA events, and the switch for device-side post-conditions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jz/Backend.h"
#include "jz/Config.h"

namespace jz
{
namespace cuda
{
// Device-side post-conditions (FofLabelsCuda.cu: "every group pointer is a
// root"): on in Debug builds and with -DJZ_CUDA_ASSERTS=ON.
#if defined(JZ_CUDA_ASSERTS) || !defined(NDEBUG)
constexpr bool kDeviceAsserts = true;
#else
constexpr bool kDeviceAsserts = false;
#endif

// Throws jz::Error with the CUDA error string when a runtime call fails.
inline void check(cudaError_t err, const char* what)
{
  if (err != cudaSuccess)
  {
    cudaGetLastError(); // clear non-sticky errors
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
  }
}

#define JZ_CUDA_CHECK(call) ::jz::cuda::check((call), #call)
// After a kernel launch: launch configuration errors.
#define JZ_CUDA_LAUNCH_CHECK(what) ::jz::cuda::check(cudaGetLastError(), what)

// An owning non-blocking CUDA stream.
class Stream
{
public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

private:
  cudaStream_t s_ = nullptr;
};

// One run's use of the device's stream-ordered memory pool: while it lives,
// freed device memory stays in the pool (no cudaMalloc/cudaFree, and so no
// device-wide synchronisation, per plane); on destruction the pool is trimmed,
// so an idle ParaView session holds no GPU memory. Declare it after the
// Stream and before every DeviceBuffer of the run.
class PoolScope
{
public:
  explicit PoolScope(cudaStream_t stream);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;
  // The most device memory the run had allocated at once, in bytes.
  std::size_t peakBytes() const;

private:
  cudaStream_t stream_;
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t oldThreshold_ = 0;
};

// Stream-ordered allocation from the device's pool; throws Error naming
// `what` (and the free memory) when the device is out of memory.
void* allocateDevice(std::size_t bytes, cudaStream_t stream, const char* what);

// An owning device array, allocated and freed in stream order on its stream.
template <class V>
class DeviceBuffer
{
public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, cudaStream_t stream, const char* what) { allocate(n, stream, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr))
    , size_(std::exchange(o.size_, 0))
    , stream_(o.stream_)
  {
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
  {
    if (this != &o)
    {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }

  void allocate(std::size_t n, cudaStream_t stream, const char* what)
  {
    release();
    stream_ = stream;
    if (n == 0)
      return;
    ptr_ = static_cast<V*>(allocateDevice(n * sizeof(V), stream, what));
    size_ = n;
  }
  void release()
  {
    if (ptr_)
      cudaFreeAsync(ptr_, stream_);
    ptr_ = nullptr;
    size_ = 0;
  }
  V* get() const { return ptr_; }
  std::size_t size() const { return size_; }

  // Asynchronous copies on the buffer's stream; the host memory must stay
  // valid until the stream has passed them.
  void upload(const V* host, std::size_t n)
  {
    if (n)
      check(cudaMemcpyAsync(ptr_, host, n * sizeof(V), cudaMemcpyHostToDevice, stream_), "upload");
  }

private:
  V* ptr_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Raw temporary storage for CUB algorithms, grown on demand.
class TempStorage
{
public:
  explicit TempStorage(cudaStream_t stream)
    : stream_(stream)
  {
  }
  void* get(std::size_t bytes)
  {
    if (bytes > buffer_.size())
      buffer_.allocate(bytes + bytes / 4 + 256, stream_, "CUB temporary storage");
    return buffer_.get();
  }
  // Hands a large scratch (the z-order sort's) back once it is done.
  void release() { buffer_.release(); }

private:
  cudaStream_t stream_;
  DeviceBuffer<unsigned char> buffer_;
};

// Copies one value from the device (synchronous on the stream).
template <class V>
V fetchValue(const V* devicePtr, cudaStream_t stream)
{
  V v{};
  check(cudaMemcpyAsync(&v, devicePtr, sizeof(V), cudaMemcpyDeviceToHost, stream), "fetchValue");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return v;
}

// Device-to-host copies of the results (CudaCommon.cu). Pageable host
// memory goes through two pinned staging chunks, so the copy engine and the
// host copy overlap; page-locked destinations are copied into directly.
// Both return when the data is on the host.
void downloadBytes(void* host, const void* device, std::size_t bytes, cudaStream_t stream);
// Appends bytes (a whole number of elements of elementSize) to a growing
// host array without first zero-filling it: append(chunk, bytes) is called
// per staged chunk, in order.
template <class Append>
void downloadChunks(const void* device, std::size_t bytes, cudaStream_t stream, Append&& append);

template <class V>
void download(V* host, const V* device, std::size_t n, cudaStream_t stream)
{
  downloadBytes(host, device, n * sizeof(V), stream);
}

// Fills `out` (emptied first) with n device values; the vector is never
// zero-filled (reserve, then one append per staged chunk).
template <class V>
void downloadToVector(std::vector<V>& out, const V* device, std::size_t n, cudaStream_t stream)
{
  out.clear();
  out.reserve(n);
  downloadChunks(device, n * sizeof(V), stream,
    [&](const void* chunk, std::size_t bytes)
    {
      const V* v = static_cast<const V*>(chunk);
      out.insert(out.end(), v, v + bytes / sizeof(V));
    });
}

// Stage timing with CUDA events on one stream.
class StageTimer
{
public:
  explicit StageTimer(cudaStream_t stream)
    : stream_(stream)
  {
  }
  ~StageTimer()
  {
    for (auto& m : marks_)
      cudaEventDestroy(m.second);
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

  // Marks the end of the stage `name` (the first mark is the start).
  void mark(const char* name)
  {
    cudaEvent_t e;
    check(cudaEventCreate(&e), "cudaEventCreate");
    marks_.emplace_back(name, e);
    check(cudaEventRecord(e, stream_), "cudaEventRecord");
  }
  // Appends the stage times (seconds) after synchronising.
  void report(std::vector<std::pair<std::string, double>>& out)
  {
    if (marks_.empty())
      return;
    check(cudaEventSynchronize(marks_.back().second), "cudaEventSynchronize");
    for (std::size_t i = 1; i < marks_.size(); ++i)
    {
      float ms = 0;
      check(
        cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second), "cudaEventElapsedTime");
      out.emplace_back(std::string("gpu ") + marks_[i].first, double(ms) * 1e-3);
    }
  }

private:
  cudaStream_t stream_;
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;
};

inline unsigned blocksFor(std::size_t n, unsigned threads)
{
  return unsigned((n + threads - 1) / threads);
}

#if defined(__CUDACC__)
template <class V>
__global__ void fillKernel(V* out, std::size_t n, V value)
{
  for (std::size_t i = (std::size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    out[i] = value;
}

// Every element of the buffer set to value (asynchronous).
template <class V>
void fill(DeviceBuffer<V>& buffer, V value, cudaStream_t stream)
{
  if (buffer.size() == 0)
    return;
  const unsigned blocks = unsigned(std::min<std::size_t>((buffer.size() + 255) / 256, 4096));
  fillKernel<<<blocks, 256, 0, stream>>>(buffer.get(), buffer.size(), value);
  check(cudaGetLastError(), "fillKernel");
}
#endif

// The number of low bits that hold every value below `count` (at least 1,
// at most 32): a radix sort's end bit for keys below count.
inline int bitsBelow(std::uint64_t count)
{
  int bits = 1;
  while (bits < 32 && (std::uint64_t(1) << bits) < count)
    ++bits;
  return bits;
}

// A grid for grid-stride loops over n items: at least one block, at most 2^20.
inline unsigned gridFor(unsigned long long n, unsigned threads)
{
  const unsigned long long blocks = (n + threads - 1) / threads;
  return unsigned(blocks < 1 ? 1 : (blocks > (1ull << 20) ? (1ull << 20) : blocks));
}

#if defined(__CUDACC__)
__device__ __forceinline__ unsigned long long globalThread()
{
  return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ unsigned long long gridThreads()
{
  return (unsigned long long)gridDim.x * blockDim.x;
}

// A grid-stride loop over n items in which each warp takes 32 consecutive
// items at a time, lane i the i-th, and every lane runs every iteration
// (valid: k < n), so that the body may use warp collectives:
// body(k, valid, lane).
template <class Body>
__device__ __forceinline__ void forEachWarpItem(unsigned long long n, Body&& body)
{
  const unsigned lane = threadIdx.x & 31u;
  const unsigned long long warps = gridThreads() >> 5;
  for (unsigned long long base = (globalThread() >> 5) << 5; base < n; base += warps << 5)
    body(base + lane, base + lane < n, lane);
}
#endif

// --- Staged transfers (template part) -------------------------------------
namespace detail
{
// The process's two pinned staging chunks (allocated once, on first use) and
// the lock that serialises their users.
struct Staging
{
  static constexpr std::size_t kChunkBytes = std::size_t(16) << 20;
  unsigned char* chunk[2];
  cudaEvent_t ready[2];
};
Staging& lockStaging();
void unlockStaging(cudaStream_t stream);
} // namespace detail

template <class Append>
void downloadChunks(const void* device, std::size_t bytes, cudaStream_t stream, Append&& append)
{
  if (bytes == 0)
    return;
  detail::Staging& st = detail::lockStaging();
  struct Unlock
  {
    cudaStream_t stream;
    // Nothing may still be copying into the chunks (append may throw).
    ~Unlock() { detail::unlockStaging(stream); }
  } unlock{ stream };
  const std::size_t chunk = detail::Staging::kChunkBytes;
  const unsigned char* src = static_cast<const unsigned char*>(device);
  const std::size_t numChunks = (bytes + chunk - 1) / chunk;
  // Chunk c goes to staging buffer c % 2; chunk c + 1 is in flight while the
  // host appends chunk c.
  auto enqueue = [&](std::size_t c)
  {
    const std::size_t at = c * chunk, len = bytes - at < chunk ? bytes - at : chunk;
    check(
      cudaMemcpyAsync(st.chunk[c % 2], src + at, len, cudaMemcpyDeviceToHost, stream), "download");
    check(cudaEventRecord(st.ready[c % 2], stream), "cudaEventRecord");
  };
  enqueue(0);
  for (std::size_t c = 0; c < numChunks; ++c)
  {
    if (c + 1 < numChunks)
      enqueue(c + 1);
    check(cudaEventSynchronize(st.ready[c % 2]), "cudaEventSynchronize");
    const std::size_t at = c * chunk, len = bytes - at < chunk ? bytes - at : chunk;
    append(static_cast<const void*>(st.chunk[c % 2]), len);
  }
}
} // namespace cuda
} // namespace jz
