#include "ZSortCpu.h"

#include <algorithm>
#include <cmath>

#include <omp.h>
#if defined(__GNUC__) && !defined(__clang__)
#include <parallel/algorithm>
#endif

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

constexpr int kWindowBits = 10; // fixed-point bits per dimension in the prefix

// Bits [top, top - 9] of the order-preserving fixed-point encoding of x
// (magnitude bits, inverted for negative values), exactly.
template <class T>
std::uint32_t windowBits(T x, int top)
{
  const double a = std::ldexp(std::fabs(double(x)), kWindowBits - 1 - top);
  std::uint32_t w = std::uint32_t(a); // floor: a < 2^10 by choice of top
  if (w >= (1u << kWindowBits)) w = (1u << kWindowBits) - 1;
  return std::signbit(x) ? ((1u << kWindowBits) - 1) - w : w;
}

// Interleaved prefix: 3 sign bits, then the window bits from the top,
// dimension 0 first at each bit position, truncated to 32 bits. Within one
// octant the encoding above `top` is constant, so comparing prefixes
// compares the leading bits of the exact z-order.
template <class T>
std::uint32_t prefixKey(const T* p, int top)
{
  std::uint64_t key = 0;
  std::uint32_t w[kDim];
  for (int d = 0; d < kDim; ++d)
  {
    key = (key << 1) | (std::signbit(p[d]) ? 0u : 1u);
    w[d] = windowBits(p[d], top);
  }
  for (int b = kWindowBits - 1; b >= 0; --b)
    for (int d = 0; d < kDim; ++d) key = (key << 1) | ((w[d] >> b) & 1u);
  // 3 + 30 bits: keep the most significant 32.
  return std::uint32_t(key >> 1);
}

// Stable LSD radix sort of (key << 32 | index) by the key half.
void radixSortByHighWord(std::vector<std::uint64_t>& items)
{
  std::vector<std::uint64_t> buffer(items.size());
  for (int shift = 32; shift < 64; shift += 8)
  {
    std::size_t count[257] = { 0 };
    for (std::uint64_t v : items) ++count[((v >> shift) & 0xFF) + 1];
    if (count[((items.empty() ? 0 : items[0]) >> shift & 0xFF) + 1] == items.size()) continue;
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (std::uint64_t v : items) buffer[count[(v >> shift) & 0xFF]++] = v;
    items.swap(buffer);
  }
}
} // namespace

template <class T>
std::vector<Index> zSortOrder(const JointPoints<T>& points)
{
  const long long n = (long long)points.size();
  std::vector<Index> order(n);
  if (n == 0) return order;
  // Highest bit position of any coordinate.
  double largest = 0;
#pragma omp parallel for schedule(static) reduction(max : largest)
  for (long long i = 0; i < n; ++i)
  {
    T p[kDim];
    points.get(Index(i), p);
    for (int d = 0; d < kDim; ++d) largest = std::max(largest, std::fabs(double(p[d])));
  }
  const int top = largest > 0 ? std::ilogb(largest) : 0;

  std::vector<std::uint64_t> items(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i)
  {
    T p[kDim];
    points.get(Index(i), p);
    items[i] = (std::uint64_t(prefixKey(p, top)) << 32) | std::uint64_t(i);
  }
  radixSortByHighWord(items);

  // Runs of equal prefixes, then the order itself.
  std::vector<long long> runs;
  for (long long i = 0; i < n;)
  {
    long long j = i + 1;
    while (j < n && (items[j] >> 32) == (items[i] >> 32)) ++j;
    if (j - i > 1)
    {
      runs.push_back(i);
      runs.push_back(j);
    }
    i = j;
  }
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) order[i] = Index(items[i] & 0xFFFFFFFFu);
  std::vector<std::uint64_t>().swap(items);

  // Order each run with the exact comparator.
  const IndexZLess<T> less{ &points };
  const long long numRuns = (long long)runs.size() / 2;
  const long long huge = std::max<long long>(n / 8, 100000);
#pragma omp parallel for schedule(dynamic, 64)
  for (long long r = 0; r < numRuns; ++r)
  {
    const long long b = runs[2 * r], e = runs[2 * r + 1];
    if (e - b < huge) std::sort(order.begin() + b, order.begin() + e, less);
  }
  for (long long r = 0; r < numRuns; ++r)
  {
    const long long b = runs[2 * r], e = runs[2 * r + 1];
    if (e - b < huge) continue;
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
