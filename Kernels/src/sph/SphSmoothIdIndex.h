// From the global ids the kNN reports to the rows of SPHSmooth's particle
// table: a direct table when the ids fill a compact range (the usual case:
// indices or a snapshot's 1..N), an open-addressing hash otherwise.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "jz/Backend.h"
#include "jz/Config.h"

namespace jz
{
class SphSmoothIdIndex
{
public:
  static constexpr Index kMissing = Index(-1);

  // Rows 0..n-1 of ids[0..n-1]; throws Error when an id repeats.
  SphSmoothIdIndex(const GlobalId* ids, std::size_t n)
  {
    if (n == 0)
      return;
    const auto range = std::minmax_element(ids, ids + n);
    lo_ = *range.first;
    const std::uint64_t span = std::uint64_t(*range.second) - std::uint64_t(lo_) + 1;
    if (span <= 4 * std::uint64_t(n) + 1024)
    {
      direct_.assign(span, kMissing);
      for (std::size_t i = 0; i < n; ++i)
        insertOnce(direct_[std::uint64_t(ids[i]) - std::uint64_t(lo_)], Index(i), ids[i]);
      return;
    }
    std::size_t capacity = 16;
    while (capacity < 2 * n)
      capacity *= 2;
    mask_ = capacity - 1;
    keys_.assign(capacity, 0);
    rows_.assign(capacity, kMissing);
    for (std::size_t i = 0; i < n; ++i)
    {
      std::size_t s = slot(ids[i]);
      while (rows_[s] != kMissing && keys_[s] != ids[i])
        s = (s + 1) & mask_;
      keys_[s] = ids[i];
      insertOnce(rows_[s], Index(i), ids[i]);
    }
  }

  // The row of `id`, kMissing when it is not here.
  Index find(GlobalId id) const
  {
    if (!direct_.empty())
    {
      const std::uint64_t d = std::uint64_t(id) - std::uint64_t(lo_);
      return d < direct_.size() ? direct_[d] : kMissing;
    }
    if (rows_.empty())
      return kMissing;
    for (std::size_t s = slot(id);; s = (s + 1) & mask_)
    {
      if (rows_[s] == kMissing || keys_[s] == id)
        return rows_[s];
    }
  }

private:
  std::size_t slot(GlobalId id) const
  {
    return std::size_t((std::uint64_t(id) * 0x9E3779B97F4A7C15ull) >> 20) & mask_;
  }
  static void insertOnce(Index& row, Index i, GlobalId id)
  {
    if (row != kMissing)
      throw Error(
        "the global point ids are not unique (id " + std::to_string(id) + " appears twice)");
    row = i;
  }

  GlobalId lo_ = 0;
  std::vector<Index> direct_;
  std::size_t mask_ = 0;
  std::vector<GlobalId> keys_;
  std::vector<Index> rows_;
};
} // namespace jz
