// Large buffers that are written once, fresh: on this kind of machine (a VM)
// a first touch costs a page fault per 4 KiB page, several microseconds each,
// which dominates the cost of moving points between ranks. Transparent huge
// pages (2 MiB, where the kernel allows them on request) take one fault per
// 2 MiB. Nothing changes but speed: where huge pages are unavailable the
// advice is ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace jz
{
// Asks for huge pages over the whole 2 MiB blocks inside [data, data + bytes).
inline void adviseHugePages(const void* data, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t lo = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t hi = (begin + bytes) & ~(kHuge - 1);
  if (data && hi > lo)
    madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

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
} // namespace jz
