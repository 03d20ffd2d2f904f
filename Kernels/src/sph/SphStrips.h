// The particles of each strip of a map (rows of an image, slabs of a
// volume): a counting sort of the particles by the strips their support
// reaches. The particles are ranked by the first cell they reach (then
// input order): those whose first cell lies in a strip are a range of
// ranks, and each strip lists the ranks of the others that reach it, all
// lower. So every cell's sum runs over its particles in one order whatever
// the strips' width and the number of threads, and a copy of the particles
// in rank order is read almost sequentially. Memory: the strips are widened
// until the lists hold at most kEntriesPerParticle entries per particle.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "jz/Config.h"
#include "jz/HugePages.h" // UninitialisedVector

namespace jz
{
// Below this many items a listing loop runs on one thread: its work is less
// than what waking and joining the others costs, above all on a machine
// busy with other work, where each join may wait for a descheduled thread.
constexpr std::size_t kSphParallelMin = std::size_t(1) << 16;

// The items of the indices i < n that pick(i, item) keeps, in increasing
// order of i, in one parallel pass: each fixed chunk of indices collects its
// own, then the chunks are joined in order. A pick's item copies what the
// later passes read, so that they need not gather it from all n again.
template <class Item, class Pick>
std::vector<Item> pickInOrder(std::size_t n, Pick&& pick)
{
  constexpr std::size_t kChunk = std::size_t(1) << 16;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<Item>> found(chunks);
  // Chunks handed out as threads come free: a thread that the machine's
  // other work delays holds up the others less.
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t c = 0; c < std::int64_t(chunks); ++c)
  {
    Item item;
    for (std::size_t i = std::size_t(c) * kChunk; i < std::min(n, (std::size_t(c) + 1) * kChunk); ++i)
      if (pick(i, item))
        found[std::size_t(c)].push_back(item);
  }
  std::vector<std::size_t> start(chunks + 1, 0);
  for (std::size_t c = 0; c < chunks; ++c)
    start[c + 1] = start[c] + found[c].size();
  std::vector<Item> picked(start[chunks]);
#pragma omp parallel for schedule(static) if (picked.size() >= kSphParallelMin)
  for (std::int64_t c = 0; c < std::int64_t(chunks); ++c)
    std::copy(found[std::size_t(c)].begin(), found[std::size_t(c)].end(),
      picked.begin() + std::ptrdiff_t(start[std::size_t(c)]));
  return picked;
}

class SphStrips
{
  // A particle's strips when they are one run of at most kMaxRun, else
  // kAskAgain: a byte a particle.
  using StripCount = std::int8_t;
  static constexpr int kMaxRun = 127;
  static constexpr StripCount kAskAgain = -1;

public:
  static constexpr std::size_t kEntriesPerParticle = 8;
  // Particles per chunk of the parallel listing, and the most chunk x bin
  // counters (bins: cells, strips).
  static constexpr std::size_t kChunk = std::size_t(1) << 14;
  static constexpr std::size_t kMaxHistogram = std::size_t(1) << 22;

  // cells: the stripped axis's cells; width: the narrowest strip (cells).
  // reach(i, visit) calls visit(firstCell, lastCell) for each range of
  // cells particle i reaches (ranges in increasing order, possibly empty
  // for particles that reach nothing). Once the particles that reach a
  // strip are counted, prepare(numRanked()) is called, then place(i, r)
  // for each of them in parallel (input index i, rank r): the caller's
  // copy of them in rank order, written as they are ranked. The lists'
  // passes then call reachRank(r, visit), reach() of the particle of rank
  // r read from that copy, in rank order (not scattered over the input).
  template <class Reach, class Prepare, class Place, class ReachRank>
  void build(std::size_t numParticles, int cells, int width, Reach&& reach, Prepare&& prepare,
    Place&& place, ReachRank&& reachRank)
  {
    const std::int64_t n = std::int64_t(numParticles);
    // Each particle's first cell (cells: none) and strip count, in
    // parallel; kAskAgain instead of the count when its strips are not one
    // run or too many for a byte, so that the later passes ask reachRank()
    // only for those. (Not zeroed first: the pass writes every one, its
    // threads taking the fresh pages' faults.)
    UninitialisedVector<int> firstCell(numParticles);
    UninitialisedVector<StripCount> counts(numParticles);
    width_ = width < 1 ? 1 : width;
    for (;;)
    {
      numStrips_ = (cells + width_ - 1) / width_;
      std::size_t total = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : total) if (numParticles >= kSphParallelMin)
      for (std::int64_t i = 0; i < n; ++i)
      {
        int cell = cells, first = 0, count = 0, last = -1;
        forStrips(std::size_t(i), reach,
          [&](int s, int firstCellOfRange)
          {
            if (count == 0)
            {
              first = s;
              cell = firstCellOfRange;
            }
            last = s;
            ++count;
          });
        firstCell[std::size_t(i)] = cell;
        counts[std::size_t(i)] =
          last - first + 1 == count && count <= kMaxRun ? StripCount(count) : kAskAgain;
        total += std::size_t(count);
      }
      if (total <= kEntriesPerParticle * numParticles + std::size_t(numStrips_) ||
        width_ >= cells)
        break;
      width_ *= 2;
    }
    rankByFirstCell(firstCell, counts, cells, prepare, place);
    // The lists of the particles that reach a strip after their first:
    // fixed chunks of ranks count their entries per strip, then fill their
    // slots, both in parallel; the order within a strip is the ranks'
    // whatever the threads. (Those whose first strip it is are the ranks
    // of its cells, listed by the sort.)
    const std::size_t strips = std::size_t(numStrips_);
    const std::size_t chunks = std::max<std::size_t>(1,
      std::min((numRanked_ + kChunk - 1) / kChunk, kMaxHistogram / std::max<std::size_t>(1, strips)));
    const std::size_t chunk = (numRanked_ + chunks - 1) / chunks;
    std::vector<std::size_t> slot(chunks * strips, 0); // [chunk][strip]
#pragma omp parallel for schedule(static) if (numRanked_ >= kSphParallelMin)
    for (std::int64_t c = 0; c < std::int64_t(chunks); ++c)
      forRanks(std::size_t(c) * chunk, std::min(numRanked_, (std::size_t(c) + 1) * chunk),
        [&](std::size_t r, int cell)
        {
          eachLaterStrip(r, cell, rankedCount_[r], reachRank,
            [&](int s) { ++slot[std::size_t(c) * strips + std::size_t(s)]; });
        });
    offsets_.assign(strips + 1, 0);
    const std::size_t at = startsByBin(slot, chunks, strips, offsets_.data());
    offsets_[strips] = at;
    numEntries_ = at + numRanked_;
    entries_.reset(new Index[at]); // every slot written below
#pragma omp parallel for schedule(static) if (numRanked_ >= kSphParallelMin)
    for (std::int64_t c = 0; c < std::int64_t(chunks); ++c)
      forRanks(std::size_t(c) * chunk, std::min(numRanked_, (std::size_t(c) + 1) * chunk),
        [&](std::size_t r, int cell)
        {
          eachLaterStrip(r, cell, rankedCount_[r], reachRank,
            [&](int s) { entries_[slot[std::size_t(c) * strips + std::size_t(s)]++] = Index(r); });
        });
    rankedCount_.reset();
  }

  int numStrips() const { return numStrips_; }
  int width() const { return width_; }
  // The particle-strip pairs.
  std::size_t numEntries() const { return numEntries_; }
  // The particles that reach a strip.
  std::size_t numRanked() const
  {
    return numRanked_;
  }
  // The ranks of a strip's particles in increasing order: first those
  // whose first strip came before it, [begin, end), then those whose first
  // cell is in it, [firstOwn, endOwn).
  const Index* begin(int strip) const { return entries_.get() + offsets_[std::size_t(strip)]; }
  const Index* end(int strip) const { return entries_.get() + offsets_[std::size_t(strip) + 1]; }
  std::size_t firstOwn(int strip) const
  {
    return cellStart_[std::size_t(strip * width_)];
  }
  std::size_t endOwn(int strip) const
  {
    return cellStart_[std::size_t(std::min((strip + 1) * width_, cells_))];
  }

private:
  // Chunk c's count of bin b at counts[c * bins + b] replaced by its first
  // slot, the slots in the order bin, chunk (the parallel passes' one rule
  // for an order that does not depend on the threads); each bin's first
  // slot into binStart[b]. Returns the slots in all.
  static std::size_t startsByBin(
    std::vector<std::size_t>& counts, std::size_t chunks, std::size_t bins, std::size_t* binStart)
  {
    std::size_t at = 0;
    for (std::size_t b = 0; b < bins; ++b)
    {
      binStart[b] = at;
      for (std::size_t c = 0; c < chunks; ++c)
      {
        const std::size_t count = counts[c * bins + b];
        counts[c * bins + b] = at;
        at += count;
      }
    }
    return at;
  }

  // The ranks: a stable counting sort of the particles by first cell
  // (cells: none, ranked last), in parallel over fixed chunks of them (each
  // chunk's own count per cell, their starts in the order cell, chunk: the
  // ranks whatever the threads). Each rank's strip count too, so that the
  // passes after read it in order rather than scattered over the input
  // (its first cell they know from the ranks' ranges, cellStart_).
  template <class Prepare, class Place>
  void rankByFirstCell(const UninitialisedVector<int>& firstCell,
    const UninitialisedVector<StripCount>& counts, int cells, Prepare& prepare, Place& place)
  {
    const std::size_t n = firstCell.size(), bins = std::size_t(cells) + 1;
    const std::size_t chunks =
      std::max<std::size_t>(1, std::min((n + kChunk - 1) / kChunk, kMaxHistogram / bins));
    const std::size_t chunk = (n + chunks - 1) / chunks;
    std::vector<std::size_t> start(chunks * bins, 0); // [chunk][cell]
#pragma omp parallel for schedule(static) if (n >= kSphParallelMin)
    for (std::int64_t c = 0; c < std::int64_t(chunks); ++c)
      for (std::size_t i = std::size_t(c) * chunk; i < std::min(n, (std::size_t(c) + 1) * chunk);
           ++i)
        ++start[std::size_t(c) * bins + std::size_t(firstCell[i])];
    cells_ = cells;
    cellStart_.resize(bins);
    startsByBin(start, chunks, bins, cellStart_.data());
    numRanked_ = cellStart_[std::size_t(cells)];
    prepare(numRanked_);
    // Written below, each once, by the threads that read it after.
    rankedCount_.reset(new StripCount[n]);
#pragma omp parallel for schedule(static) if (n >= kSphParallelMin)
    for (std::int64_t c = 0; c < std::int64_t(chunks); ++c)
      for (std::size_t i = std::size_t(c) * chunk; i < std::min(n, (std::size_t(c) + 1) * chunk);
           ++i)
      {
        const std::size_t r = start[std::size_t(c) * bins + std::size_t(firstCell[i])]++;
        if (r < numRanked_)
          place(i, r);
        rankedCount_[r] = counts[i];
      }
  }

  // f(r, its first cell) for the ranks r in [begin, end) (all ranked): a
  // cell's ranks are the range cellStart_ gives.
  template <class F>
  void forRanks(std::size_t begin, std::size_t end, F&& f) const
  {
    int cell =
      int(std::upper_bound(cellStart_.begin(), cellStart_.end(), begin) - cellStart_.begin()) - 1;
    for (std::size_t r = begin; r < end; ++r)
    {
      while (cellStart_[std::size_t(cell) + 1] <= r)
        ++cell;
      f(r, cell);
    }
  }

  // Each strip of particle i (an input index for reach, a rank for
  // reachRank) once (its ranges increase, so a repeat can only be the last
  // strip seen): visit(strip, the first cell of the range that reaches it).
  template <class Reach, class Visit>
  void forStrips(std::size_t i, Reach& reach, Visit&& visit) const
  {
    int last = -1;
    reach(i,
      [&](int first, int lastCell)
      {
        for (int s = first / width_; s <= lastCell / width_; ++s)
          if (s > last)
          {
            visit(s, first);
            last = s;
          }
      });
  }

  // forStrips of rank r but for its first strip, from the first pass's run
  // (its first cell and strip count) when the strips form one.
  template <class ReachRank, class Visit>
  void eachLaterStrip(
    std::size_t r, int firstCell, StripCount count, ReachRank& reachRank, Visit&& visit) const
  {
    if (count == 1) // most particles: no division
      return;
    const int first = firstCell / width_;
    if (count == kAskAgain)
      return forStrips(r, reachRank,
        [&](int s, int)
        {
          if (s != first)
            visit(s);
        });
    for (int s = first + 1; s < first + count; ++s)
      visit(s);
  }

  int width_ = 1, numStrips_ = 0, cells_ = 0;
  std::size_t numRanked_ = 0;
  std::vector<std::size_t> offsets_, cellStart_;
  std::size_t numEntries_ = 0;
  std::unique_ptr<Index[]> entries_;
  std::unique_ptr<StripCount[]> rankedCount_;
};
} // namespace jz
