// The one home of the rule "any scale the input precision can represent".
//
// The walks compare squared distances in the points' own precision, and
// the density reductions cube lengths: with float coordinates in
// centimetres (1 Mpc ~ 3e24) squares overflow float (~3.4e38), and at
// 1e-20 they underflow, long before the coordinates themselves do. So a
// kernel whose data's largest magnitude lies outside
// [2^-kFrameWindow, 2^kFrameWindow] runs on a copy multiplied by 2^-e
// (e chosen so the largest magnitude lands in [1, 2)), and its results come
// back multiplied by the matching power of 2^e. Multiplying by a power of two
// rounds nothing (short of leaving T's range), and the kernels are exactly
// scale-equivariant inside the window, so the results are those of the same
// points at unit scale, scaled back. A result that T cannot hold becomes inf
// or 0, counted, and the run's RunInfo says so.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "jz/Backend.h"
#include "jz/Communicator.h"

namespace jz
{
constexpr int kFrameWindow = 24;

// Largest |v[i]| over n values (0 for none); the exact maximum whatever the
// thread count.
template <class T>
double largestMagnitude(const T* v, std::size_t n);

// The largest magnitude of the box bounds when periodic (0 otherwise).
double boxMagnitude(bool periodic, const double* boxLo, const double* boxHi);

struct ScaleFrame
{
  // The kernel sees coordinates times 2^-exponent.
  int exponent = 0;

  bool identity() const { return exponent == 0; }

  // The frame for data whose largest magnitude is maxAbs.
  static ScaleFrame forMagnitude(double maxAbs);
  // The same, agreed over the ranks of comm (collective).
  static ScaleFrame forMagnitude(double maxAbs, Communicator& comm);

  // A length (or a quantity of dimension length^power) into the frame and back.
  double toFrame(double value, int power = 1) const { return std::ldexp(value, -power * exponent); }
  double fromFrame(double value, int power = 1) const { return std::ldexp(value, power * exponent); }

  // n interleaved xyz points in the frame (exact copy).
  template <class T>
  std::vector<T> pointsToFrame(const T* xyz, std::size_t n) const;
  void boxToFrame(double* boxLo, double* boxHi) const;

  // values[i] times 2^(power * exponent), in place; returns how many T
  // could not hold (now inf, 0 or subnormal where the exact value was not).
  template <class V>
  std::size_t valuesFromFrame(V* values, std::size_t count, int power) const;
  // The reverse: values of dimension length^power into the frame.
  template <class V>
  std::size_t valuesToFrame(V* values, std::size_t count, int power) const
  {
    return valuesFromFrame(values, count, -power);
  }
};

// The warning for `count` values of `what` that the output precision V
// cannot hold; empty for none.
template <class V>
std::string outOfRangeWarning(std::size_t count, const std::string& what);
} // namespace jz
