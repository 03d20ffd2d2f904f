// Bit-level view of IEEE-754 binary32/binary64 values, host and device.
#pragma once

#include "Config.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include <cstring>
#endif

namespace jz
{
template <class T>
struct FloatBits;

template <>
struct FloatBits<float>
{
  using UInt = std::uint32_t;
  static constexpr int kMantissaBits = 23;
  static constexpr int kExponentBias = 127;
  // One above the largest exponent (EMAX of §II-A, eq. 2): the "bit" that differs
  // when two values have opposite signs.
  static constexpr int kExponentMax = 128;
  // Bit position of the least significant mantissa bit of a subnormal.
  static constexpr int kMinBit = 1 - kExponentBias - kMantissaBits; // -149

  JZ_HD static UInt bits(float x)
  {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    UInt u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#endif
  }
  JZ_HD static int clz(UInt x)
  {
#if defined(__CUDA_ARCH__)
    return __clz(x);
#else
    return __builtin_clz(x);
#endif
  }
};

template <>
struct FloatBits<double>
{
  using UInt = std::uint64_t;
  static constexpr int kMantissaBits = 52;
  static constexpr int kExponentBias = 1023;
  static constexpr int kExponentMax = 1024;
  static constexpr int kMinBit = 1 - kExponentBias - kMantissaBits; // -1074

  JZ_HD static UInt bits(double x)
  {
#if defined(__CUDA_ARCH__)
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
    return __clzll(static_cast<long long>(x));
#else
    return __builtin_clzll(x);
#endif
  }
};
} // namespace jz
