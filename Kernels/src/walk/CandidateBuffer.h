// K-nearest selection by exact distance (the Borůvka leaf search; the kNN
// leaf walk ranks by pre-filter distance instead, KnnCandidates.h), and the
// source keys that break ties. Survivors of a distance filter are appended
// unsorted, and the K best are selected (nth_element) whenever they pile up,
// which tightens the radius, and once at the end. The order is the same
// strict (distance^2, key) order as NeighborHeap's, so the selected set is
// unique and identical to the GPU's.
#pragma once

#include <algorithm>
#include <vector>

#include "jz/Config.h"

namespace jz
{
// The key that breaks distance ties for a sorted source point: its global id
// when given, else its input index; looked up only on ties and for output.
struct SourceKeys
{
  const GlobalId* ids;     // by input index; nullptr = the input index itself
  const Index* inputIndex; // sorted position -> input index
  GlobalId operator[](Index s) const { return ofInput(inputIndex[s]); }
  GlobalId ofInput(Index in) const { return ids ? ids[in] : GlobalId(in); }
};

class CandidateBuffer
{
public:
  void init(int k, double bound2, const SourceKeys* keys)
  {
    k_ = k;
    bound2_ = bound2;
    keys_ = keys;
    entries_.clear();
  }

  // Candidates farther than this are never among the K nearest.
  double bound2() const { return bound2_; }
  void setBound2(double b2) { bound2_ = std::min(bound2_, b2); }

  void push(double d2, Index src)
  {
    if (d2 > bound2_)
      return;
    entries_.push_back(Entry{ d2, src });
    // Compact, and tighten the bound, once survivors pile up.
    if (entries_.size() >= std::size_t(k_ + std::max(8, k_ / 4)))
      select();
  }

  // Keeps the K nearest: sorted nearest first when asked, otherwise with only
  // the K-th (the farthest kept) guaranteed last. Returns the count.
  int finish(bool sorted)
  {
    select();
    const Less less{ keys_ };
    if (sorted)
      std::sort(entries_.begin(), entries_.end(), less);
    else if (!entries_.empty())
      std::iter_swap(std::max_element(entries_.begin(), entries_.end(), less), entries_.end() - 1);
    return int(entries_.size());
  }

  double d2(int i) const { return entries_[i].d2; }
  Index src(int i) const { return entries_[i].src; }

private:
  struct Entry
  {
    double d2;
    Index src;
  };
  struct Less
  {
    const SourceKeys* keys;
    bool operator()(const Entry& a, const Entry& b) const
    {
      return a.d2 < b.d2 || (a.d2 == b.d2 && (*keys)[a.src] < (*keys)[b.src]);
    }
  };

  void select()
  {
    if (entries_.size() <= std::size_t(k_))
      return;
    std::nth_element(entries_.begin(), entries_.begin() + (k_ - 1), entries_.end(), Less{ keys_ });
    entries_.resize(k_);
    bound2_ = std::min(bound2_, entries_[k_ - 1].d2);
  }

  std::vector<Entry> entries_;
  int k_ = 0;
  double bound2_ = 0;
  const SourceKeys* keys_ = nullptr;
};
} // namespace jz
