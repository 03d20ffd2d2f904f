// The input rules of jz/Validate.h.
#include "jz/Validate.h"

#include "common/FirstIndexWhere.h"
#include "jz/FloatBits.h"
#include "jz/MachineMemory.h"
#include "jz/ParameterRanges.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

namespace jz
{
namespace
{
// A number as users typed it: integers in full, others to 10 digits.
std::string str(double x)
{
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15)
    return std::to_string((long long)x);
  std::ostringstream s;
  s.precision(10);
  s << x;
  return s.str();
}

// Index of the first non-finite of n values (n when none), tested on the
// bits, branch-free (a value is NaN or infinite exactly when its exponent
// bits are all set).
template <class V>
std::size_t firstNonFinite(const V* v, std::size_t n)
{
  using U = typename FloatBits<V>::UInt;
  constexpr U kExponent = ~U(0) >> 1 & ~((U(1) << FloatBits<V>::kMantissaBits) - 1);
  return firstIndexWhere(n,
    [v](std::size_t i)
    {
      U u;
      std::memcpy(&u, v + i, sizeof u);
      return (~u & kExponent) == 0;
    });
}
} // namespace

std::string periodicBoxError(
  bool periodic, const double* boxLo, const double* boxHi, const InputNames& names)
{
  if (!periodic)
    return {};
  for (int d = 0; d < 3; ++d)
  {
    const double lo = boxLo[d], hi = boxHi[d];
    if (!(hi > lo) || !std::isfinite(hi - lo))
    {
      return names.periodicBox + " must span a finite, positive length in every dimension; " +
        "xyz"[d] + " spans [" + str(lo) + ", " + str(hi) + "]";
    }
  }
  return {};
}

std::string rangeError(const ParameterRange& range, double value, const std::string& name)
{
  const bool above = range.minExclusive ? value > range.min : value >= range.min;
  const bool integral = !range.integer || value == std::floor(value);
  if (std::isfinite(value) && above && value <= range.max && integral)
    return {};
  std::string rule;
  if (range.integer && range.max < ranges::kIntMax)
    rule = "an integer from " + str(range.min) + " to " + str(range.max);
  else if (range.integer)
    rule = "an integer of at least " + str(range.min);
  else if (range.max < ranges::kNone)
    rule = "a number from " + str(range.min) + " to " + str(range.max);
  else
    rule = std::string("a finite number ") + (range.minExclusive ? "> " : ">= ") + str(range.min);
  return (name.empty() ? std::string(range.name) : name) + " must be " + rule + " (got " +
    str(value) + ")";
}

std::string neighbourCountError(std::int64_t k, std::int64_t numSources, const InputNames& names)
{
  const std::string outside = rangeError(ranges::NumberOfNeighbors, double(k), names.neighbourCount);
  if (!outside.empty())
    return outside;
  if (k > numSources)
  {
    return names.neighbourCount + " = " + std::to_string(k) + " is larger than the number of " +
      names.sourcePoint + "s (" + std::to_string(numSources) + ")";
  }
  return {};
}

std::string linkingLengthError(double linkingLength, const InputNames& names)
{
  return rangeError(ranges::LinkingLength, linkingLength, names.linkingLength);
}

std::string pointCountError(std::size_t numPoints)
{
  constexpr std::size_t kMax = std::size_t(0xFFFFFFFEu);
  if (numPoints > kMax)
  {
    return "too many points for one process: " + std::to_string(numPoints) + " (at most " +
      std::to_string(kMax) + "; use more MPI ranks)";
  }
  return {};
}

std::string memoryError(double bytes, const std::string& what, const std::string& remedy)
{
  const double physical = double(physicalMemoryBytes());
  if (physical == 0 || bytes <= physical)
    return {};
  constexpr double kGiB = double(1u << 30);
  std::ostringstream s;
  s.precision(3);
  s << what << ": about " << bytes / kGiB << " GiB, more than this machine's " << physical / kGiB
    << " GiB of memory; " << remedy;
  return s.str();
}

std::string neighbourListsMemoryError(
  std::size_t numQueries, std::int64_t k, std::size_t bytesPerNeighbour, const InputNames& names)
{
  // The lists and as much again for the kernels' own copy while they run.
  return memoryError(2.0 * double(numQueries) * double(k) * double(bytesPerNeighbour),
    "The neighbour lists of " + std::to_string(numQueries) + " points with " + std::to_string(k) +
      " neighbours each",
    "lower " + names.neighbourCount + ".");
}

template <class T>
std::string nonFiniteCoordinateError(const T* xyz, std::size_t n, const std::string& what)
{
  const std::size_t bad = firstNonFinite(xyz, 3 * n);
  if (bad == 3 * n)
    return {};
  return what + " " + std::to_string(bad / 3) + " has a non-finite coordinate (NaN or infinity)";
}

std::string nonFiniteValueError(
  const double* values, std::size_t n, int components, const std::string& what)
{
  const std::size_t count = n * std::size_t(components);
  const std::size_t bad = firstNonFinite(values, count);
  if (bad == count)
    return {};
  return what + " has a non-finite value at point " + std::to_string(bad / components);
}

namespace
{
// The subset a self query names must be distinct sources, at most all of them.
std::string selfQueryIndicesError(const Index* indices, std::size_t count, std::size_t numSources)
{
  if (count > numSources)
    return "selfQueryIndices names " + std::to_string(count) + " queries of " +
      std::to_string(numSources) + " sources";
  std::vector<char> named(numSources, 0);
  for (std::size_t q = 0; q < count; ++q)
  {
    const Index i = indices[q];
    if (i >= numSources || named[i])
      return "selfQueryIndices[" + std::to_string(q) + "] = " + std::to_string(i) +
        (i >= numSources ? " is not a source" : " is named twice");
    named[i] = 1;
  }
  return {};
}
} // namespace

template <class T>
std::string problemError(const KnnProblem<T>& p, ProblemExtent extent, const InputNames& names)
{
  const bool self = p.queries == nullptr;
  std::string e = extent == ProblemExtent::Whole
    ? neighbourCountError(p.k, std::int64_t(p.numSources), names)
    : neighbourCountError(p.k, std::int64_t(p.k), names); // K >= 1 only
  if (e.empty() && p.numSources > 0 && !p.sources)
    e = "no " + names.sourcePoint + " coordinates were given";
  if (e.empty() && !self && (p.numSelfQueries < p.numSources || p.selfQueryIndices))
    e = "numSelfQueries and selfQueryIndices apply to self queries only";
  if (e.empty() && p.selfQueryIndices)
    e = selfQueryIndicesError(p.selfQueryIndices, p.numSelfQueries, p.numSources);
  if (e.empty() && p.leafSize < 0)
    e = "the kNN leaf size " + std::to_string(p.leafSize) + " is negative";
  if (e.empty())
    e = pointCountError(p.numSources + (self ? 0 : p.numQueries));
  if (e.empty())
    e = periodicBoxError(p.periodic, p.boxLo, p.boxHi, names);
  if (e.empty() && p.sourceMasses)
    e = nonFiniteValueError(p.sourceMasses, p.numSources, 1, names.sourceMasses);
  if (e.empty() && p.sources)
    e = nonFiniteCoordinateError(p.sources, p.numSources, names.sourcePoint);
  if (e.empty() && !self)
    e = nonFiniteCoordinateError(p.queries, p.numQueries, names.queryPoint);
  return e;
}

template <class T>
std::string problemError(const FofProblem<T>& p, ProblemExtent, const InputNames& names)
{
  std::string e = linkingLengthError(p.linkingLength, names);
  if (e.empty())
    e = pointCountError(p.numPoints);
  if (e.empty() && p.numPoints > 0 && !p.points)
    e = "no " + names.point + " coordinates were given";
  if (e.empty())
    e = periodicBoxError(p.periodic, p.boxLo, p.boxHi, names);
  if (e.empty() && p.points)
    e = nonFiniteCoordinateError(p.points, p.numPoints, names.point);
  return e;
}

template <class T>
std::string distributedInputError(const KnnProblem<T>& p, const InputNames& names)
{
  std::string e = problemError(p, ProblemExtent::RankPiece, names);
  if (e.empty() && p.numSources > 0 && !p.sourceIds)
    e = "distributed kNN needs global source ids";
  return e;
}

template <class T>
std::string distributedInputError(
  const FofProblem<T>& p, const FofDistributedOptions& options, const InputNames& names)
{
  std::string e = problemError(p, ProblemExtent::RankPiece, names);
  if (e.empty() && p.numPoints > 0 && !p.ids)
    e = "distributed friends-of-friends needs global point ids";
  if (e.empty() && options.masses)
    e = nonFiniteValueError(options.masses, p.numPoints, 1, "the mass array");
  if (e.empty() && options.velocities)
    e = nonFiniteValueError(options.velocities, p.numPoints, 3, "the velocity array");
  return e;
}

template std::string nonFiniteCoordinateError<float>(const float*, std::size_t, const std::string&);
template std::string nonFiniteCoordinateError<double>(
  const double*, std::size_t, const std::string&);
template std::string problemError<float>(
  const KnnProblem<float>&, ProblemExtent, const InputNames&);
template std::string problemError<double>(
  const KnnProblem<double>&, ProblemExtent, const InputNames&);
template std::string problemError<float>(
  const FofProblem<float>&, ProblemExtent, const InputNames&);
template std::string problemError<double>(
  const FofProblem<double>&, ProblemExtent, const InputNames&);
template std::string distributedInputError<float>(const KnnProblem<float>&, const InputNames&);
template std::string distributedInputError<double>(const KnnProblem<double>&, const InputNames&);
template std::string distributedInputError<float>(
  const FofProblem<float>&, const FofDistributedOptions&, const InputNames&);
template std::string distributedInputError<double>(
  const FofProblem<double>&, const FofDistributedOptions&, const InputNames&);
} // namespace jz
