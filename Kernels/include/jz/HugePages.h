// Large fresh buffers on transparent huge pages. The first touch of fresh
// memory costs one page fault per 4 KiB page, which on virtual machines is
// often slower than the work done in the buffer (0.12-0.15 GB/s on the
// development VM under load, ~7 us a fault); advised buffers fault once per
// 2 MiB (there 0.3 GB/s where the host backs fresh memory, 1.4-9 GB/s
// otherwise). This matters for the tree build, FoF's scratch and outputs and
// the blocks that travel between ranks.
// Only advice: contents and results do not change, and it is ignored where
// unsupported (THP "never", non-Linux). JZ_HUGEPAGES=0 turns it off.
// The one home of this rule: every advised buffer goes through this file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace jz
{
// Below this a buffer gains little and is likely recycled heap memory.
constexpr std::size_t kHugePageAdviceMin = std::size_t(2) << 20;

inline bool hugePagesEnabled()
{
  static const bool enabled = []
  {
    const char* env = std::getenv("JZ_HUGEPAGES");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return enabled;
}

// Advises the whole 2 MiB pages inside [p, p + bytes); call it before the
// buffer is first written.
inline void adviseHugePages(const void* p, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t(1) << 21;
  if (!p || bytes < kHugePageAdviceMin || !hugePagesEnabled())
    return;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin)
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Fresh storage of `bytes` that starts on a 2 MiB boundary and is padded to
// whole 2 MiB pages, advised before its first touch: every page of it can be
// huge (an unaligned advised buffer keeps 4 KiB pages at both ends, up to
// 1024 faults). Released with std::free; null when out of memory.
inline void* allocHugePages(std::size_t bytes)
{
  constexpr std::size_t kHuge = std::size_t(1) << 21;
  if (bytes < kHugePageAdviceMin || !hugePagesEnabled())
    return std::malloc(bytes ? bytes : 1);
  const std::size_t padded = (bytes + kHuge - 1) & ~(kHuge - 1);
  void* p = nullptr;
  if (posix_memalign(&p, kHuge, padded) != 0)
    return nullptr;
  adviseHugePages(p, padded);
  return p;
}

// An uninitialised array of n trivially constructible values, advised.
template <class V>
std::unique_ptr<V[]> newHugeArray(std::size_t n)
{
  std::unique_ptr<V[]> a(new V[n]);
  adviseHugePages(a.get(), n * sizeof(V));
  return a;
}

// An allocator whose resize() leaves trivially constructible values
// uninitialised, so that a buffer a parallel loop fills is first touched
// there, by the threads that write it, not zero-filled by the caller first.
template <class V>
struct UninitialisedAllocator : std::allocator<V>
{
  template <class U>
  struct rebind
  {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept
  {
  }
  template <class U>
  void construct(U* p) noexcept
  {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args)
  {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class V>
using UninitialisedVector = std::vector<V, UninitialisedAllocator<V>>;

// v.reserve(n), with huge pages asked for before anything is written.
template <class V, class A>
void reserveHugePages(std::vector<V, A>& v, std::size_t n)
{
  v.reserve(n);
  adviseHugePages(v.data(), v.capacity() * sizeof(V));
}

// v.resize(n) of a vector not yet written, with huge pages.
template <class V, class A>
void resizeHugePages(std::vector<V, A>& v, std::size_t n)
{
  reserveHugePages(v, n);
  v.resize(n);
}

// v.assign(n, value) into fresh advised storage when v's is too small
// (its old contents are dropped either way).
template <class Vector>
void assignOnHugePages(Vector& v, std::size_t n, const typename Vector::value_type& value)
{
  if (v.capacity() < n)
  {
    Vector().swap(v);
    v.reserve(n);
    adviseHugePages(v.data(), n * sizeof(typename Vector::value_type));
  }
  v.assign(n, value);
}
} // namespace jz
