// Squared distances between node boxes and between points, for a periodic or
// an open box, chosen at compile time so that open boxes skip the image
// logic. The formulas are Geometry.h's; this is the one place that picks
// between the periodic and the plain ones for the walks.
#pragma once

#include <utility>

#include "jz/Geometry.h"

namespace jz
{
template <bool Periodic>
struct BoxMetric
{
  static constexpr bool kPeriodic = Periodic;
  Periodicity per;

  // d_low^2 of eq. 15: no point pair of the two boxes is closer.
  template <class T>
  double low2(const Box<T>& a, const Box<T>& b) const
  {
    return Periodic ? boxDistanceLow2(a, b, per) : boxDistanceLow2Plain(a, b);
  }

  // d_up^2 of eq. 16 (with kBoundSlack): no point pair is farther apart.
  template <class T>
  double high2(const Box<T>& a, const Box<T>& b) const
  {
    return Periodic ? boxDistanceHigh2(a, b, per) : boxDistanceHigh2Plain(a, b);
  }

  // The exact squared distance of two points (nearest image when periodic),
  // in double from the input coordinates. Host and device: the GPU's EMST
  // weighs its edges with it (emst/EmstCuda.cuh).
  template <class T>
  JZ_HD double point2(const T* p, const T* q) const
  {
    if (Periodic)
      return distance2(p, q, per);
    const double dx = double(q[0]) - double(p[0]);
    const double dy = double(q[1]) - double(p[1]);
    const double dz = double(q[2]) - double(p[2]);
    return dx * dx + dy * dy + dz * dz;
  }
};

// Calls f(BoxMetric<true>{per}) or f(BoxMetric<false>{per}): the one run-time
// to compile-time switch of a walk.
template <class F>
decltype(auto) withBoxMetric(const Periodicity& per, F&& f)
{
  if (per.enabled())
    return std::forward<F>(f)(BoxMetric<true>{ per });
  return std::forward<F>(f)(BoxMetric<false>{ per });
}
} // namespace jz
