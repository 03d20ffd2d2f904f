// Interaction lists of the dual tree walk (§III-A): receiving
// node i of a level interacts with source nodes of the same level. Walks
// that stop early keep each node's sources ordered by the lower bound low2
// of their squared distance (§III-D); the others keep no bounds.
//
// Threads append whole receiver runs to blocks of their own, which the list
// then adopts without copying: a list costs its size once, plus at most a
// partly filled block per thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "jz/Config.h"

namespace jz
{
class InteractionList
{
  // Runs of several receivers, written by one thread.
  struct Block
  {
    std::vector<Index> source;
    std::vector<float> low2;
  };
  // 64 Ki entries (512 KiB with bounds): large enough to amortise, small
  // against any list that matters.
  static constexpr std::size_t kBlockEntries = std::size_t(1) << 16;

public:
  // One receiver's entries.
  struct Entries
  {
    const Index* source;
    const float* low2; // nullptr when the list keeps no bounds
    std::size_t count;
    double lowerBound(std::size_t e) const { return low2 ? double(low2[e]) : 0.0; }
  };

  // Where one receiver's run is to be written.
  struct Run
  {
    Index* source;
    float* low2; // nullptr when the list keeps no bounds
  };

  // Appends receiver runs for one thread. Different writers may run
  // concurrently; each receiver is written once, by one writer. Each on
  // cache lines of its own: its counters change with every run.
  class alignas(64) Writer
  {
  public:
    Run open(Index receiver, std::size_t count)
    {
      if (count == 0)
      {
        list_->place(receiver, 0, 0, 0);
        return Run{ nullptr, nullptr };
      }
      if (blocks_.empty() || used_ + count > blocks_.back().source.size())
        newBlock(count);
      Block& b = blocks_.back();
      list_->place(receiver, Index(blocks_.size() - 1), used_, count);
      receivers_.push_back(receiver);
      const Run run{ b.source.data() + used_, b.low2.empty() ? nullptr : b.low2.data() + used_ };
      used_ += count;
      return run;
    }

  private:
    friend class InteractionList;
    explicit Writer(InteractionList* list)
      : list_(list)
    {
    }
    void newBlock(std::size_t atLeast)
    {
      if (!blocks_.empty())
        trimLast();
      Block b;
      b.source.resize(std::max(kBlockEntries, atLeast));
      if (list_->withLowerBounds_)
        b.low2.resize(b.source.size());
      blocks_.push_back(std::move(b));
      used_ = 0;
    }
    void trimLast()
    {
      Block& b = blocks_.back();
      if (used_ < b.source.size() / 2)
      {
        // Mostly empty (a small level): keep only what was written.
        b.source.resize(used_);
        b.source.shrink_to_fit();
        b.low2.resize(b.low2.empty() ? 0 : used_);
        b.low2.shrink_to_fit();
      }
    }

    InteractionList* list_;
    std::vector<Block> blocks_;
    std::size_t used_ = 0;
    std::vector<Index> receivers_; // their block numbers are local until adopted
  };

  // Single precision halves the list's memory; rounded down, so it stays a
  // lower bound.
  static float lowerBound(double x)
  {
    float f = float(x);
    if (double(f) > x)
      f = std::nextafter(f, 0.0f);
    return f;
  }

  InteractionList() = default;
  InteractionList(Index receivers, bool withLowerBounds)
    : begin_(receivers, 0)
    , count_(receivers, 0)
    , block_(receivers, 0)
    , withLowerBounds_(withLowerBounds)
  {
  }

  Writer writer() { return Writer(this); }

  // Takes a writer's blocks (serially, after its thread is done).
  void adopt(Writer& w)
  {
    if (!w.blocks_.empty())
      w.trimLast();
    const Index base = Index(blocks_.size());
    for (Index r : w.receivers_)
      block_[r] += base;
    for (Block& b : w.blocks_)
      blocks_.push_back(std::move(b));
    w.blocks_.clear();
    w.receivers_.clear();
  }

  Index numReceivers() const { return Index(count_.size()); }

  std::size_t size() const
  {
    std::size_t n = 0;
    for (Index c : count_)
      n += c;
    return n;
  }

  Entries of(Index receiver) const
  {
    if (count_[receiver] == 0)
      return Entries{ nullptr, nullptr, 0 };
    const Block& b = blocks_[block_[receiver]];
    const std::size_t at = begin_[receiver];
    return Entries{ b.source.data() + at, withLowerBounds_ ? b.low2.data() + at : nullptr,
      count_[receiver] };
  }

private:
  void place(Index receiver, Index block, std::size_t begin, std::size_t count)
  {
    block_[receiver] = block;
    begin_[receiver] = begin;
    count_[receiver] = Index(count);
  }

  std::vector<Block> blocks_;
  std::vector<std::size_t> begin_;
  std::vector<Index> count_;
  std::vector<Index> block_;
  bool withLowerBounds_ = false;
};
} // namespace jz
