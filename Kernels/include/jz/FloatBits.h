// Bit-level view of IEEE-754 binary32/binary64 values, host and device.
#pragma once

#include <cstdint>
#include <type_traits>

#include "Config.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include <cstring>
#endif

namespace jz
{
// T is float or double; the two formats differ only in their widths.
template <class T>
struct FloatBits
{
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
    "FloatBits is for float and double");
  static constexpr bool kSingle = sizeof(T) == 4;

  using UInt = std::conditional_t<kSingle, std::uint32_t, std::uint64_t>;
  static constexpr int kMantissaBits = kSingle ? 23 : 52;
  static constexpr int kExponentBias = kSingle ? 127 : 1023;
  // One above the largest exponent (EMAX of §II-A, eq. 2): the "bit" that differs
  // when two values have opposite signs.
  static constexpr int kExponentMax = kExponentBias + 1;
  // Bit position of the least significant mantissa bit of a subnormal
  // (-149, -1074).
  static constexpr int kMinBit = 1 - kExponentBias - kMantissaBits;

  JZ_HD static UInt bits(T x)
  {
#if defined(__CUDA_ARCH__)
    if constexpr (kSingle)
      return __float_as_uint(x);
    else
      return static_cast<UInt>(__double_as_longlong(x));
#else
    UInt u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#endif
  }
  JZ_HD static int clz(UInt x)
  {
#if defined(__CUDA_ARCH__)
    if constexpr (kSingle)
      return __clz(x);
    else
      return __clzll(static_cast<long long>(x));
#else
    if constexpr (kSingle)
      return __builtin_clz(x);
    else
      return __builtin_clzll(x);
#endif
  }
};
} // namespace jz
