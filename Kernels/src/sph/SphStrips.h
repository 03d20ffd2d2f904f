// The particles of each strip of a map (rows of an image, slabs of a
// volume): a counting sort of the particles by the strips their support
// reaches. The particles are ranked by their first strip (then input
// order), each strip lists its particles' ranks in increasing order, so
// that every cell's sum runs over its particles in one order whatever the
// number of threads, and a copy of the particles in rank order is read
// almost sequentially. Memory: the strips are widened until the lists hold
// at most kEntriesPerParticle entries per particle.
#pragma once

#include <cstddef>
#include <vector>

#include "jz/Config.h"

namespace jz
{
class SphStrips
{
public:
  static constexpr std::size_t kEntriesPerParticle = 8;

  // cells: the stripped axis's cells; width: the narrowest strip (cells).
  // reach(i, visit) calls visit(firstCell, lastCell) for each range of
  // cells particle i reaches (ranges in increasing order, possibly empty
  // for particles that reach nothing).
  template <class Reach>
  void build(std::size_t numParticles, int cells, int width, Reach&& reach)
  {
    width_ = width < 1 ? 1 : width;
    for (;;)
    {
      numStrips_ = (cells + width_ - 1) / width_;
      offsets_.assign(std::size_t(numStrips_) + 1, 0);
      std::size_t total = 0;
      for (std::size_t i = 0; i < numParticles; ++i)
        forStrips(i, reach, [&](int s) { ++offsets_[std::size_t(s) + 1], ++total; });
      if (total <= kEntriesPerParticle * numParticles + std::size_t(numStrips_) ||
        width_ >= cells)
        break;
      width_ *= 2;
    }
    for (int s = 0; s < numStrips_; ++s)
      offsets_[std::size_t(s) + 1] += offsets_[std::size_t(s)];
    // The ranks: a counting sort by first strip (particles that reach
    // nothing last).
    std::vector<int> firstStrip(numParticles, numStrips_);
    std::vector<std::size_t> start(std::size_t(numStrips_) + 2, 0);
    for (std::size_t i = 0; i < numParticles; ++i)
    {
      int first = numStrips_;
      forStrips(i, reach, [&](int s) { first = s < first ? s : first; });
      firstStrip[i] = first;
      ++start[std::size_t(first) + 1];
    }
    for (int s = 0; s <= numStrips_; ++s)
      start[std::size_t(s) + 1] += start[std::size_t(s)];
    numRanked_ = start[std::size_t(numStrips_)];
    order_.resize(numParticles);
    for (std::size_t i = 0; i < numParticles; ++i)
      order_[start[std::size_t(firstStrip[i])]++] = Index(i);
    entries_.resize(offsets_.back());
    std::vector<std::size_t> fill(offsets_.begin(), offsets_.end() - 1);
    for (std::size_t r = 0; r < numRanked_; ++r)
      forStrips(order_[r], reach, [&](int s) { entries_[fill[std::size_t(s)]++] = Index(r); });
  }

  int numStrips() const { return numStrips_; }
  int width() const { return width_; }
  std::size_t numEntries() const { return entries_.size(); }
  // The particles that reach a strip, and the input index of rank r < numRanked().
  std::size_t numRanked() const { return numRanked_; }
  Index particle(std::size_t rank) const { return order_[rank]; }
  const Index* begin(int strip) const { return entries_.data() + offsets_[std::size_t(strip)]; }
  const Index* end(int strip) const { return entries_.data() + offsets_[std::size_t(strip) + 1]; }

private:
  // Each strip of particle i once (its ranges increase, so a repeat can
  // only be the last strip seen).
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
            visit(s);
            last = s;
          }
      });
  }

  int width_ = 1, numStrips_ = 0;
  std::size_t numRanked_ = 0;
  std::vector<std::size_t> offsets_;
  std::vector<Index> entries_, order_;
};
} // namespace jz
