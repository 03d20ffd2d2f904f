// ScaleFrame: the power-of-two frame of kernels run at extreme scales.
#include "common/ScaleFrame.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "jz/FloatBits.h"

namespace jz
{
template <class T>
double largestMagnitude(const T* v, std::size_t n)
{
  // Without the sign bit, IEEE magnitudes order as their bit patterns: an
  // integer maximum the compiler vectorises, exact for any thread count.
  using U = typename FloatBits<T>::UInt;
  constexpr U kMagnitude = ~U(0) >> 1;
  U largest = 0;
#pragma omp parallel for schedule(static) reduction(max : largest)
  for (long long i = 0; i < (long long)n; ++i)
  {
    U u;
    std::memcpy(&u, v + i, sizeof u);
    largest = std::max<U>(largest, u & kMagnitude);
  }
  T value;
  std::memcpy(&value, &largest, sizeof value);
  return double(value);
}

double boxMagnitude(bool periodic, const double* boxLo, const double* boxHi)
{
  double m = 0;
  if (periodic)
    for (int d = 0; d < 3; ++d)
      m = std::max({ m, std::fabs(boxLo[d]), std::fabs(boxHi[d]) });
  return m;
}

ScaleFrame ScaleFrame::forMagnitude(double maxAbs)
{
  ScaleFrame f;
  if (maxAbs > 0 && std::isfinite(maxAbs) &&
    (maxAbs < std::ldexp(1.0, -kFrameWindow) || maxAbs > std::ldexp(1.0, kFrameWindow)))
    f.exponent = std::ilogb(maxAbs);
  return f;
}

ScaleFrame ScaleFrame::forMagnitude(double maxAbs, Communicator& comm)
{
  comm.allReduceMax(&maxAbs, 1);
  return forMagnitude(maxAbs);
}

template <class T>
std::vector<T> ScaleFrame::pointsToFrame(const T* xyz, std::size_t n) const
{
  std::vector<T> out(3 * n);
  const double factor = std::ldexp(1.0, -exponent);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < 3 * (long long)n; ++i)
    out[i] = T(double(xyz[i]) * factor);
  return out;
}

void ScaleFrame::boxToFrame(double* boxLo, double* boxHi) const
{
  for (int d = 0; d < 3; ++d)
  {
    boxLo[d] = toFrame(boxLo[d]);
    boxHi[d] = toFrame(boxHi[d]);
  }
}

template <class V>
std::size_t ScaleFrame::valuesFromFrame(V* values, std::size_t count, int power) const
{
  if (!values || identity())
    return 0;
  const double lowest = double(std::numeric_limits<V>::min());
  const double highest = double(std::numeric_limits<V>::max());
  const int e = power * exponent;
  std::size_t lost = 0;
#pragma omp parallel for schedule(static) reduction(+ : lost)
  for (long long i = 0; i < (long long)count; ++i)
  {
    // Infinite and zero values (a density at h = 0, a distance 0) stay
    // what they are; only finite non-zero values can leave V's range.
    const double exact = std::ldexp(double(values[i]), e);
    const double a = std::fabs(exact);
    lost += values[i] != 0 && std::isfinite(values[i]) && (a < lowest || a > highest) ? 1 : 0;
    values[i] = V(exact);
  }
  return lost;
}

template <class V>
std::string outOfRangeWarning(std::size_t count, const std::string& what)
{
  if (count == 0)
    return {};
  const char* type = sizeof(V) == sizeof(float) ? "float32" : "float64";
  return std::to_string(count) + " value(s) of " + what + " lie outside the range of " + type +
    " and were written as inf or 0 (or lost precision); input points in " +
    (sizeof(V) == sizeof(float) ? "float64, or " : "") + "other length or mass units avoid this";
}

template double largestMagnitude<float>(const float*, std::size_t);
template double largestMagnitude<double>(const double*, std::size_t);
template std::vector<float> ScaleFrame::pointsToFrame<float>(const float*, std::size_t) const;
template std::vector<double> ScaleFrame::pointsToFrame<double>(const double*, std::size_t) const;
template std::size_t ScaleFrame::valuesFromFrame<float>(float*, std::size_t, int) const;
template std::size_t ScaleFrame::valuesFromFrame<double>(double*, std::size_t, int) const;
template std::string outOfRangeWarning<float>(std::size_t, const std::string&);
template std::string outOfRangeWarning<double>(std::size_t, const std::string&);
} // namespace jz
