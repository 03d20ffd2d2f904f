#include "tree/ZSortCpu.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <omp.h>
#if defined(__GNUC__) && !defined(__clang__)
#include <parallel/algorithm>
#endif

#include "jz/HugePages.h"
#include "jz/ZOrder.h"

namespace jz
{
namespace
{
// Orders joint indices by the z-order of their points.
template <class T>
struct IndexZLess
{
  const JointPoints<T>* points;
  bool operator()(Index a, Index b) const
  {
    T pa[kDim], pb[kDim];
    points->get(a, pa);
    points->get(b, pb);
    return zLess(pa, pb);
  }
};

constexpr int kWindowBits = 20; // fixed-point bits per dimension in the prefix

// Bits [top, top - 19] of the order-preserving fixed-point encoding of x
// (magnitude bits, inverted for negative values), exactly: scale is
// 2^(19 - top), and |x| < 2^(top + 1).
template <class T>
std::uint64_t windowBits(T x, double scale)
{
  constexpr std::uint64_t kAll = (std::uint64_t(1) << kWindowBits) - 1;
  std::uint64_t w = std::uint64_t(std::fabs(double(x)) * scale); // a power of two: exact
  if (w > kAll)
    w = kAll;
  return std::signbit(x) ? kAll - w : w;
}

// Bit k of x (k < 10) at bit 3k, for every x < 2^10.
struct SpreadTable
{
  std::uint32_t bits[1 << 10];
  constexpr SpreadTable()
    : bits()
  {
    for (int x = 0; x < (1 << 10); ++x)
    {
      std::uint32_t v = 0;
      for (int k = 0; k < 10; ++k)
        v |= std::uint32_t((x >> k) & 1) << (3 * k);
      bits[x] = v;
    }
  }
};
constexpr SpreadTable kSpread;

// Spreads the low 20 bits of x to every third bit (bit k at bit 3k), ten
// bits at a time by table.
inline std::uint64_t spreadBits(std::uint64_t x)
{
  return kSpread.bits[x & 1023] | std::uint64_t(kSpread.bits[(x >> 10) & 1023]) << 30;
}

// Interleaved prefix (63 bits): the 3 sign bits, then the window bits from
// the top, dimension 0 first at each bit position. Within one octant the
// encoding above `top` is constant, so comparing prefixes compares the
// leading bits of the exact z-order.
template <class T>
std::uint64_t prefixKey(const T* p, double scale)
{
  std::uint64_t signs = 0;
  for (int d = 0; d < kDim; ++d)
    signs = (signs << 1) | (std::signbit(p[d]) ? 0u : 1u);
  return signs << 60 | spreadBits(windowBits(p[0], scale)) << 2 |
    spreadBits(windowBits(p[1], scale)) << 1 | spreadBits(windowBits(p[2], scale));
}

// Stable LSD radix sort of 64-bit items by their bits [low, 64), parallel
// over the OpenMP team (per-thread histograms). Only the span of bits that
// vary (varyingBits) is sorted, in as few passes of at most 11 bits as it
// takes (2^11 per-thread counters stay in cache; each pass streams the items
// twice); passes over bits that never vary are skipped. The order is the
// same for any digit width: the stable sort of the keys.
void radixSort(
  std::unique_ptr<std::uint64_t[]>& items, long long n, int low, std::uint64_t varyingBits)
{
  varyingBits &= ~std::uint64_t(0) << low;
  if (n < 2 || varyingBits == 0)
    return;
  constexpr int kMaxDigitBits = 11;
  const int lo = __builtin_ctzll(varyingBits), hi = 64 - __builtin_clzll(varyingBits);
  const int passes = (hi - lo + kMaxDigitBits - 1) / kMaxDigitBits;
  const int width = (hi - lo + passes - 1) / passes;
  const std::size_t radix = std::size_t(1) << width;
  // Not zero-filled: the first pass writes every element (page faults are
  // then shared by the team instead of a serial memset).
  std::unique_ptr<std::uint64_t[]> buffer = newHugeArray<std::uint64_t>(n);
  const int threads = omp_get_max_threads();
  std::vector<std::size_t> counts(std::size_t(threads) * radix);
  for (int shift = lo; shift < hi; shift += width)
  {
    const std::uint64_t mask = radix - 1;
    if (((varyingBits >> shift) & mask) == 0)
      continue;
    std::fill(counts.begin(), counts.end(), 0);
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const long long b = n * t / nt, e = n * (t + 1) / nt;
      std::size_t* c = &counts[std::size_t(t) * radix];
      for (long long i = b; i < e; ++i)
        ++c[(items[i] >> shift) & mask];
#pragma omp barrier
#pragma omp single
      {
        // Exclusive offsets in (digit, thread) order keep the sort stable.
        std::size_t at = 0;
        for (std::size_t digit = 0; digit < radix; ++digit)
          for (int u = 0; u < nt; ++u)
          {
            const std::size_t k = counts[std::size_t(u) * radix + digit];
            counts[std::size_t(u) * radix + digit] = at;
            at += k;
          }
      }
      for (long long i = b; i < e; ++i)
        buffer[c[(items[i] >> shift) & mask]++] = items[i];
    }
    items.swap(buffer);
  }
}
} // namespace

template <class T>
std::vector<Index> zSortOrder(const JointPoints<T>& points)
{
  const long long n = (long long)points.size();
  std::vector<Index> order;
  assignOnHugePages(order, std::size_t(n), Index(0));
  if (n == 0)
    return order;
  // One 64-bit word per point: as many prefix bits as the index leaves room
  // for, then the index itself.
  int indexBits = 1;
  while (indexBits < 32 && (std::uint64_t(1) << indexBits) < std::uint64_t(n))
    ++indexBits;
  const int prefixBits = 64 - indexBits;
  const std::uint64_t indexMask = (std::uint64_t(1) << indexBits) - 1;
  std::unique_ptr<std::uint64_t[]> items = newHugeArray<std::uint64_t>(n); // filled below
  std::uint64_t keyOr = 0, keyAnd = ~std::uint64_t(0);
  // The keys for the highest bit position `top` of any coordinate; returns
  // the largest coordinate magnitude, which fixes the true top.
  auto makeKeys = [&](int top)
  {
    const double scale = std::ldexp(1.0, kWindowBits - 1 - top);
    std::uint64_t* out = items.get();
    double largest = 0;
    std::uint64_t anyOr = 0, allAnd = ~std::uint64_t(0);
#pragma omp parallel for schedule(static) reduction(| : anyOr) reduction(& : allAnd)               \
  reduction(max : largest)
    for (long long i = 0; i < n; ++i)
    {
      T p[kDim];
      points.get(Index(i), p);
      for (int d = 0; d < kDim; ++d)
        largest = std::max(largest, std::fabs(double(p[d])));
      const std::uint64_t prefix = prefixKey(p, scale) >> (63 - prefixBits);
      out[i] = prefix << indexBits | std::uint64_t(i);
      anyOr |= out[i];
      allAnd &= out[i];
    }
    keyOr = anyOr;
    keyAnd = allAnd;
    return largest;
  };
  auto topOf = [](double largest) { return largest > 0 ? std::ilogb(largest) : 0; };
  // The top guessed from a sample of the points and checked by the key pass
  // itself (one pass over the points instead of two; a wrong guess, e.g. a
  // far outlier the sample missed, costs the pass again).
  double sampled = 0;
  const long long stride = std::max<long long>(1, n / 4096);
  for (long long i = 0; i < n; i += stride)
  {
    T p[kDim];
    points.get(Index(i), p);
    for (int d = 0; d < kDim; ++d)
      sampled = std::max(sampled, std::fabs(double(p[d])));
  }
  const int guess = topOf(sampled);
  const int top = topOf(makeKeys(guess));
  if (top != guess)
    makeKeys(top);
  radixSort(items, n, indexBits, (keyOr ^ keyAnd) & ~indexMask);

  // The order itself and the runs of equal prefixes, each thread over its
  // chunk; a run belongs to the chunk where it starts (the same list as one
  // serial scan once the chunks' lists are joined in order).
  const std::uint64_t* sortedItems = items.get();
  auto prefixAt = [sortedItems, indexBits](long long i) { return sortedItems[i] >> indexBits; };
  std::vector<std::vector<long long>> runsOf(omp_get_max_threads());
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const long long b = n * t / nt, e = n * (t + 1) / nt;
    for (long long i = b; i < e; ++i)
      order[i] = Index(sortedItems[i] & indexMask);
    std::vector<long long>& runs = runsOf[t];
    long long i = b;
    while (i > 0 && i < e && prefixAt(i) == prefixAt(i - 1))
      ++i; // the rest of a run from an earlier chunk
    while (i < e)
    {
      long long j = i + 1;
      while (j < n && prefixAt(j) == prefixAt(i))
        ++j;
      if (j - i > 1)
      {
        runs.push_back(i);
        runs.push_back(j);
      }
      i = j;
    }
  }
  std::vector<long long> runs;
  for (const std::vector<long long>& r : runsOf)
    runs.insert(runs.end(), r.begin(), r.end());
  items.reset();

  // Order each run with the exact comparator.
  const IndexZLess<T> less{ &points };
  const long long numRuns = (long long)runs.size() / 2;
  const long long huge = std::max<long long>(n / 8, 100000);
#pragma omp parallel for schedule(dynamic, 64)
  for (long long r = 0; r < numRuns; ++r)
  {
    const long long b = runs[2 * r], e = runs[2 * r + 1];
    if (e - b < huge)
      std::sort(order.begin() + b, order.begin() + e, less);
  }
  for (long long r = 0; r < numRuns; ++r)
  {
    const long long b = runs[2 * r], e = runs[2 * r + 1];
    if (e - b < huge)
      continue;
#if defined(__GNUC__) && !defined(__clang__)
    __gnu_parallel::sort(order.begin() + b, order.begin() + e, less);
#else
    std::sort(order.begin() + b, order.begin() + e, less);
#endif
  }
  return order;
}

template std::vector<Index> zSortOrder<float>(const JointPoints<float>&);
template std::vector<Index> zSortOrder<double>(const JointPoints<double>&);
} // namespace jz
