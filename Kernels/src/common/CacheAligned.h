// Vectors whose data start on a cache line. The maps' row vectors are 64
// bytes: a load from an unaligned start spans two lines and costs two load
// slots, which halves the rate of the multiply-adds that read them.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace jz
{
constexpr std::size_t kCacheLine = 64;

template <class T>
struct CacheAlignedAllocator
{
  using value_type = T;

  CacheAlignedAllocator() = default;
  template <class U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) noexcept
  {
  }

  T* allocate(std::size_t n)
  {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLine)));
  }
  void deallocate(T* p, std::size_t) noexcept
  {
    ::operator delete(p, std::align_val_t(kCacheLine));
  }

  template <class U>
  bool operator==(const CacheAlignedAllocator<U>&) const noexcept
  {
    return true;
  }
  template <class U>
  bool operator!=(const CacheAlignedAllocator<U>&) const noexcept
  {
    return false;
  }
};

template <class T>
using CacheAlignedVector = std::vector<T, CacheAlignedAllocator<T>>;
} // namespace jz
