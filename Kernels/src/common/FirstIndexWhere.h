// The first offender of a rule over n values, found in parallel: the
// validation scans read every particle, so they must not be the serial part
// of a run. The answer is the smallest offending index, whatever the number
// of threads, so the rule's message stays the same.
#pragma once

#include <algorithm>
#include <cstddef>

namespace jz
{
// The smallest i < n with bad(i), or n when there is none. Fixed blocks are
// tested in parallel (handed out as threads come free, so that a thread
// delayed by other work on the machine holds up the others less), each by a
// branch-free OR of bad() over the block (a loop the compiler vectorises
// when bad is plain arithmetic); the first bad block is then searched value
// by value.
template <class Bad>
std::size_t firstIndexWhere(std::size_t n, Bad&& bad)
{
  constexpr long long kBlock = 4096;
  const long long blocks = ((long long)n + kBlock - 1) / kBlock;
  long long firstBad = blocks;
#pragma omp parallel for schedule(dynamic, 8) reduction(min : firstBad)
  for (long long b = 0; b < blocks; ++b)
  {
    const std::size_t begin = std::size_t(b * kBlock);
    const std::size_t end = std::min(n, begin + std::size_t(kBlock));
    unsigned any = 0;
    for (std::size_t i = begin; i < end; ++i)
      any |= bad(i) ? 1u : 0u;
    if (any && b < firstBad)
      firstBad = b;
  }
  for (std::size_t i = std::size_t(firstBad) * kBlock; i < n; ++i)
    if (bad(i))
      return i;
  return n;
}
} // namespace jz
