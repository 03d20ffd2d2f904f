// One query's candidates in the CPU kNN leaf walk (KnnLeafSearch.h). They
// arrive with their pre-filter distance (the points' precision T) and are
// kept sorted by it, so every arrival past the K-th tightens the query's
// bound at once; exact double distances are computed only at the end, for
// the few candidates that FilterMargin says can still be among the K
// nearest, and ranked there in NeighborHeap's (distance^2, key) order. The
// selected set is therefore the exact one, identical to the GPU's.
#pragma once

#include <algorithm>
#include <vector>

#include "walk/CandidateBuffer.h"
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
// pool (no allocation per query).
template <class T>
class FilterRankedCandidates
{
public:
  struct Entry
  {
    T d2; // pre-filter distance
    Index src;
  };

  // nq empty lists for K = k.
  void reset(Index nq, int k)
  {
    cap_ = std::max(cap_, std::size_t(2 * k + 8));
    if (pool_.size() < std::size_t(nq) * cap_)
      pool_.resize(std::size_t(nq) * cap_);
    size_.assign(nq, 0);
  }

  std::size_t size(Index q) const { return size_[q]; }
  const Entry& at(Index q, std::size_t i) const { return pool_[q * cap_ + i]; }

  bool full(Index q) const { return size_[q] == cap_; }

  // Keeps only query q's exact K nearest (in pre-filter order) and returns
  // the exact K-th squared distance: for ties at the K-th distance (bulk
  // duplicates, lattices), so a slice never holds more than 2K + 8.
  template <class Exact>
  double compact(Index q, std::size_t k, Exact&& exact, const SourceKeys& keys)
  {
    Entry* e = pool_.data() + q * cap_;
    const std::size_t n = size_[q];
    exact_.resize(n);
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      exact_[i] = exact(e[i].src);
      order_[i] = i;
    }
    auto before = [&](std::size_t a, std::size_t b) {
      return exact_[a] < exact_[b] || (exact_[a] == exact_[b] && keys[e[a].src] < keys[e[b].src]);
    };
    std::nth_element(order_.begin(), order_.begin() + (k - 1), order_.begin() + n, before);
    const double kth = exact_[order_[k - 1]];
    std::sort(order_.begin(), order_.begin() + k); // back to pre-filter order
    for (std::size_t i = 0; i < k; ++i)
      e[i] = e[order_[i]];
    size_[q] = Index(k);
    return kth;
  }

  // Inserts in pre-filter order (the newest after equal ones); returns the
  // rank it took. The caller compacts a full slice first.
  std::size_t insert(Index q, T d2, Index src)
  {
    Entry* e = pool_.data() + q * cap_;
    std::size_t j = size_[q]++;
    for (; j > 0 && d2 < e[j - 1].d2; --j)
      e[j] = e[j - 1];
    e[j] = Entry{ d2, src };
    return j;
  }

  // Appends at the end of query q's slice: d2 is at least its last and the
  // slice is not full.
  void append(Index q, T d2, Index src) { pool_[q * cap_ + size_[q]++] = Entry{ d2, src }; }

  // Drops query q's candidates past rank k beyond the filter (they cannot be
  // among the K nearest).
  void trim(Index q, std::size_t k, T filter2)
  {
    const Entry* e = pool_.data() + q * cap_;
    std::size_t n = size_[q];
    while (n > k && e[n - 1].d2 > filter2)
      --n;
    size_[q] = Index(n);
  }

  // Query q's exact K nearest: exact squared distances of its candidates
  // from exact(src), then an insertion sort by (distance^2, key) (nearly
  // sorted already, so about linear), into d2s/sources (room for size(q)).
  template <class Exact>
  RankedNeighbors rank(
    Index q, Exact&& exact, const SourceKeys& keys, double* d2s, Index* sources) const
  {
    const Entry* e = pool_.data() + q * cap_;
    const std::size_t n = size_[q];
    for (std::size_t i = 0; i < n; ++i)
    {
      const Index s = e[i].src;
      const double d2 = exact(s);
      std::size_t j = i;
      // The keys are looked up on a distance tie only.
      for (; j > 0 && (d2 < d2s[j - 1] || (d2 == d2s[j - 1] && keys[s] < keys[sources[j - 1]]));
           --j)
      {
        d2s[j] = d2s[j - 1];
        sources[j] = sources[j - 1];
      }
      d2s[j] = d2;
      sources[j] = s;
    }
    return RankedNeighbors{ d2s, sources };
  }

private:
  std::vector<Entry> pool_;
  std::vector<Index> size_;
  std::size_t cap_ = 0;
  std::vector<double> exact_;      // compact()'s scratch
  std::vector<std::size_t> order_; // compact()'s scratch
};
} // namespace jz
