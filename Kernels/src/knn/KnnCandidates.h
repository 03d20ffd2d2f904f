// One query's candidates in the CPU kNN leaf walk (KnnLeafSearch.h). They
// arrive with their pre-filter distance (the points' precision T) and are
// kept sorted by it, so every arrival past the K-th tightens the query's
// bound at once; exact double distances are computed only at the end, for
// the few candidates that FilterMargin says can still be among the K
// nearest, and ranked there in NeighborHeap's (distance^2, key) order. The
// selected set is therefore the exact one, identical to the GPU's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "walk/CandidateBuffer.h"
#include "walk/LeafDistances.h"
#include "jz/Config.h"

namespace jz
{
// A query's K nearest, exactly ranked: what the leaf walk hands its reducer.
struct RankedNeighbors
{
  const double* d2s;
  const Index* sources;
  double d2(int i) const { return d2s[i]; }
  Index src(int i) const { return sources[i]; }
};

// The candidates of every query of one leaf, query q's in a slice of one
// pool (no allocation per query). Distances and sources are kept in two
// arrays so that insertSorted shifts them in vector blocks; each slice
// starts 64-byte aligned, has a block of scratch past its capacity, and
// holds +infinity in every distance slot past its size (insertSorted's
// sentinel).
//
// From K = kUnsortedFromK on, a sorted insert would shift about K entries
// for each candidate, and a query with K near N would cost N^2 (N^3 in
// all). There the slices stay unsorted: a candidate is appended, the K-th
// pre-filter distance is selected (nth_element) once K have arrived and
// then kept as a bound that only the compactions renew (any K candidates'
// largest distance bounds the K-th), and the exact ranking sorts. The
// selected set is the same, so are the results, bit for bit.
template <class T>
class FilterRankedCandidates
{
public:
  static constexpr int kUnsortedFromK = 1024;

  // nq empty lists for K = k.
  void reset(Index nq, int k)
  {
    unsorted_ = k >= kUnsortedFromK;
    kth_.assign(unsorted_ ? nq : 0, kEmpty);
    kthKnown_.assign(unsorted_ ? nq : 0, 0);
    cap_ = std::max(cap_, std::size_t(2 * k + 8));
    stride_ = (cap_ + kSimdPadding + kAlign - 1) / kAlign * kAlign;
    const std::size_t need = std::size_t(nq) * stride_ + kAlign;
    if (d2Pool_.size() < need)
    {
      d2Pool_.resize(need);
      srcPool_.resize(need);
    }
    d2Offset_ = alignedOffset(d2Pool_.data());
    srcOffset_ = alignedOffset(srcPool_.data());
    std::fill_n(d2s(0), std::size_t(nq) * stride_, kEmpty);
    size_.assign(nq, 0);
  }

  std::size_t size(Index q) const { return size_[q]; }

  // The K-th pre-filter distance of query q's candidates (size(q) >= k), or
  // in unsorted slices a bound on it.
  T kthBound(Index q, std::size_t k)
  {
    if (!unsorted_)
      return d2s(q)[k - 1];
    if (!kthKnown_[q])
    {
      kthKnown_[q] = 1;
      const T* d = d2s(q);
      selectScratch_.assign(d, d + size_[q]);
      std::nth_element(selectScratch_.begin(), selectScratch_.begin() + std::ptrdiff_t(k - 1),
        selectScratch_.end());
      kth_[q] = selectScratch_[k - 1];
    }
    return kth_[q];
  }

  bool full(Index q) const { return size_[q] == cap_; }

  // Keeps only query q's exact K nearest (in pre-filter order) and returns
  // the exact K-th squared distance: for ties at the K-th distance (bulk
  // duplicates, lattices), so a slice never holds more than 2K + 8.
  template <class Exact>
  double compact(Index q, std::size_t k, Exact&& exact, const SourceKeys& keys)
  {
    T* d = d2s(q);
    Index* src = sources(q);
    const std::size_t n = size_[q];
    exact_.resize(n);
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      exact_[i] = exact(src[i]);
      order_[i] = i;
    }
    auto before = [&](std::size_t a, std::size_t b) {
      return exact_[a] < exact_[b] || (exact_[a] == exact_[b] && keys[src[a]] < keys[src[b]]);
    };
    std::nth_element(order_.begin(), order_.begin() + (k - 1), order_.begin() + n, before);
    const double kth = exact_[order_[k - 1]];
    std::sort(order_.begin(), order_.begin() + k); // back to pre-filter order
    T largest = T(0);
    for (std::size_t i = 0; i < k; ++i)
    {
      d[i] = d[order_[i]];
      src[i] = src[order_[i]];
      largest = std::max(largest, d[i]);
    }
    std::fill(d + k, d + n, kEmpty);
    size_[q] = Index(k);
    if (unsorted_)
    {
      kth_[q] = largest;
      kthKnown_[q] = 1;
    }
    return kth;
  }

  // Inserts in pre-filter order (the newest after equal ones). The caller
  // compacts a full slice first.
  void insert(Index q, T d2, Index src)
  {
    if (!unsorted_)
      return insertSorted(d2s(q), sources(q), size_[q]++, d2, src);
    d2s(q)[size_[q]] = d2;
    sources(q)[size_[q]++] = src;
  }

  // Appends (d2[order[r]], src[order[r]]) for r = 0, 1, ... at the end of
  // query q's slice while they pass filter2 and the slice has room, and
  // returns the first r not appended: a ranking's nearest-first appends
  // with the slice's pointers and size held in registers (the filter
  // cannot change while appending).
  Index appendRanked(Index q, const T* d2, const Index* src, const Index* order, Index n, T filter2)
  {
    T* __restrict d = d2s(q);
    Index* __restrict s = sources(q);
    std::size_t size = size_[q];
    Index r = 0;
    for (; r < n && size < cap_; ++r)
    {
      const Index i = order[r];
      if (!(d2[i] <= filter2))
        break;
      d[size] = d2[i];
      s[size++] = src[i];
    }
    size_[q] = Index(size);
    return r;
  }

  // Drops query q's candidates past rank k beyond the filter (they cannot be
  // among the K nearest).
  void trim(Index q, std::size_t k, T filter2)
  {
    if (unsorted_)
      return; // the compactions and the ranking drop them
    T* d = d2s(q);
    std::size_t n = size_[q];
    while (n > k && d[n - 1] > filter2)
      d[--n] = kEmpty;
    size_[q] = Index(n);
  }

  // Query q's exact K nearest: exact squared distances of its candidates
  // from exact(src), then an insertion sort by (distance^2, key) (nearly
  // sorted already, so about linear), into d2s/sources (room for size(q)).
  template <class Exact>
  RankedNeighbors rank(
    Index q, Exact&& exact, const SourceKeys& keys, double* d2Out, Index* srcOut) const
  {
    const Index* src = sources(q);
    const std::size_t n = size_[q];
    if (unsorted_)
      return rankUnsorted(src, n, exact, keys, d2Out, srcOut);
    for (std::size_t i = 0; i < n; ++i)
    {
      const Index s = src[i];
      const double d2 = exact(s);
      std::size_t j = i;
      // The keys are looked up on a distance tie only.
      for (; j > 0 && (d2 < d2Out[j - 1] || (d2 == d2Out[j - 1] && keys[s] < keys[srcOut[j - 1]]));
           --j)
      {
        d2Out[j] = d2Out[j - 1];
        srcOut[j] = srcOut[j - 1];
      }
      d2Out[j] = d2;
      srcOut[j] = s;
    }
    return RankedNeighbors{ d2Out, srcOut };
  }

private:
  // rank() for an unsorted slice: the exact distances, then a sort by
  // (distance^2, key).
  template <class Exact>
  static RankedNeighbors rankUnsorted(const Index* src, std::size_t n, Exact&& exact,
    const SourceKeys& keys, double* d2Out, Index* srcOut)
  {
    struct Entry
    {
      double d2;
      GlobalId key;
      Index src;
    };
    std::vector<Entry> entries(n);
    for (std::size_t i = 0; i < n; ++i)
      entries[i] = { exact(src[i]), keys[src[i]], src[i] };
    std::sort(entries.begin(), entries.end(),
      [](const Entry& a, const Entry& b)
      { return a.d2 < b.d2 || (a.d2 == b.d2 && a.key < b.key); });
    for (std::size_t r = 0; r < n; ++r)
    {
      d2Out[r] = entries[r].d2;
      srcOut[r] = entries[r].src;
    }
    return RankedNeighbors{ d2Out, srcOut };
  }

  static constexpr std::size_t kAlign = 16; // entries per stride step: whole blocks and lines
  static constexpr T kEmpty = std::numeric_limits<T>::infinity();

  // Elements from p to the next 64-byte boundary (an allocation is at least
  // 16-byte aligned, so a whole number of them).
  template <class E>
  static std::size_t alignedOffset(const E* p)
  {
    return (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64 / sizeof(E);
  }

  T* d2s(Index q) { return d2Pool_.data() + d2Offset_ + q * stride_; }
  const T* d2s(Index q) const { return d2Pool_.data() + d2Offset_ + q * stride_; }
  Index* sources(Index q) { return srcPool_.data() + srcOffset_ + q * stride_; }
  const Index* sources(Index q) const { return srcPool_.data() + srcOffset_ + q * stride_; }

  std::vector<T> d2Pool_;
  std::vector<Index> srcPool_;
  std::vector<Index> size_;
  std::size_t cap_ = 0, stride_ = 0, d2Offset_ = 0, srcOffset_ = 0;
  std::vector<double> exact_;      // compact()'s scratch
  std::vector<std::size_t> order_; // compact()'s scratch
  bool unsorted_ = false;          // K >= kUnsortedFromK
  std::vector<T> kth_;             // unsorted: kthBound's value once known
  std::vector<char> kthKnown_;     // unsorted: whether kth_ holds it
  std::vector<T> selectScratch_;   // kthBound()'s
};
} // namespace jz
