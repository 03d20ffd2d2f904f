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

#include "CandidateBuffer.h"
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

template <class T>
class FilterRankedCandidates
{
public:
  struct Entry
  {
    T d2; // pre-filter distance
    Index src;
  };

  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }
  const Entry& operator[](std::size_t i) const { return entries_[i]; }

  // Inserts in pre-filter order (the newest after equal ones).
  void insert(T d2, Index src)
  {
    entries_.push_back(Entry{ d2, src });
    std::size_t j = entries_.size() - 1;
    for (; j > 0 && d2 < entries_[j - 1].d2; --j)
      entries_[j] = entries_[j - 1];
    entries_[j] = Entry{ d2, src };
  }

  // Drops the candidates past rank k beyond the filter (they cannot be
  // among the K nearest).
  void trim(std::size_t k, T filter2)
  {
    while (entries_.size() > k && entries_.back().d2 > filter2)
      entries_.pop_back();
  }

  // The exact K nearest: exact squared distances of the candidates from
  // exact(src), then an insertion sort by (distance^2, key) (nearly sorted
  // already, so about linear), into d2s/sources (room for size() each).
  template <class Exact>
  RankedNeighbors rank(Exact&& exact, const SourceKeys& keys, double* d2s, Index* sources) const
  {
    const std::size_t n = entries_.size();
    for (std::size_t i = 0; i < n; ++i)
    {
      const double d2 = exact(entries_[i].src);
      const Index s = entries_[i].src;
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
  std::vector<Entry> entries_;
};
} // namespace jz
