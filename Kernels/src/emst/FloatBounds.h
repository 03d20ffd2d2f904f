// Bounds kept as floats (4 bytes per point instead of 8), rounded outward so
// that they only ever prune less, never wrongly: an upper bound rounds up, a
// lower bound down.
#pragma once

#include <cmath>
#include <limits>

namespace jz
{
inline float roundUpToFloat(double v)
{
  float f = float(v);
  if (double(f) < v)
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

inline float roundDownToFloat(double v)
{
  float f = float(v);
  if (double(f) > v)
    f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}
} // namespace jz
