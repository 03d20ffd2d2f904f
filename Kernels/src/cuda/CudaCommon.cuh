// Shared helpers of the CUDA backend: checked calls, RAII device buffers,
// free-memory checks and stage timing with CUDA events.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "jz/Backend.h"
#include "jz/Config.h"

namespace jz
{
namespace cuda
{
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

// Throws jz::Error when `bytes` more device memory is not available.
inline void requireFree(std::size_t bytes, const char* what)
{
  std::size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  // Keep a margin for CUB temporaries and the runtime.
  const std::size_t margin = std::size_t(64) << 20;
  if (bytes + margin > freeBytes)
  {
    throw Error(std::string("not enough GPU memory for ") + what + ": need " +
      std::to_string((bytes + margin) >> 20) + " MiB, " + std::to_string(freeBytes >> 20) +
      " MiB free of " + std::to_string(totalBytes >> 20) + " MiB");
  }
}

// An owning device array; allocation checks free memory first.
template <class V>
class DeviceBuffer
{
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n, const char* what = "a device buffer") { allocate(n, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(o.ptr_)
    , size_(o.size_)
  {
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
  {
    if (this != &o)
    {
      release();
      ptr_ = o.ptr_;
      size_ = o.size_;
      o.ptr_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }

  void allocate(std::size_t n, const char* what = "a device buffer")
  {
    release();
    if (n == 0)
      return;
    requireFree(n * sizeof(V), what);
    void* p = nullptr;
    check(cudaMalloc(&p, n * sizeof(V)), what);
    ptr_ = static_cast<V*>(p);
    size_ = n;
  }
  void release()
  {
    if (ptr_)
      cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  V* get() const { return ptr_; }
  std::size_t size() const { return size_; }

  void upload(const V* host, std::size_t n, cudaStream_t stream)
  {
    if (n)
      check(cudaMemcpyAsync(ptr_, host, n * sizeof(V), cudaMemcpyHostToDevice, stream), "upload");
  }
  void download(V* host, std::size_t n, cudaStream_t stream) const
  {
    if (n)
      check(cudaMemcpyAsync(host, ptr_, n * sizeof(V), cudaMemcpyDeviceToHost, stream), "download");
  }

private:
  V* ptr_ = nullptr;
  std::size_t size_ = 0;
};

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

// Raw temporary storage for CUB algorithms, grown on demand.
class TempStorage
{
public:
  void* get(std::size_t bytes)
  {
    if (bytes > buffer_.size())
      buffer_.allocate(bytes + bytes / 4 + 256, "CUB temporary storage");
    return buffer_.get();
  }

private:
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
} // namespace cuda
} // namespace jz
