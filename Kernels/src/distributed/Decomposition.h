// Domain decomposition in z-order (§II-A): sample-based splitters, then
// an all-to-all exchange so that rank r holds the r-th contiguous range of
// the global z-order, balanced by point count.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Geometry.h"
#include "jz/ZOrder.h"

namespace jz
{
// A point travelling between ranks: coordinates and a trivially copyable payload.
template <class T, class Payload>
struct Travelling
{
  T p[kDim];
  Payload payload;
};

// Splitters that cut the global z-order into comm.size() ranges of about
// equal count: every rank samples in proportion to its point count.
template <class T, class Payload>
std::vector<std::array<T, kDim>> zOrderSplitters(
  const std::vector<Travelling<T, Payload>>& items, Communicator& comm)
{
  const int ranks = comm.size();
  const std::int64_t local = std::int64_t(items.size());
  const std::int64_t total = allSum(comm, local);
  std::vector<std::array<T, kDim>> samples;
  if (total > 0 && local > 0)
  {
    const double wanted = std::min<double>(double(total), 1024.0 * ranks);
    const std::int64_t count =
      std::max<std::int64_t>(1, std::int64_t(std::llround(wanted * double(local) / double(total))));
    for (std::int64_t j = 0; j < count; ++j)
    {
      const std::size_t i = std::size_t((double(j) + 0.5) * double(local) / double(count));
      std::array<T, kDim> s;
      for (int d = 0; d < kDim; ++d)
        s[d] = items[std::min<std::size_t>(i, items.size() - 1)].p[d];
      samples.push_back(s);
    }
  }
  std::vector<std::array<T, kDim>> all = allGatherConcat(comm, samples);
  std::sort(all.begin(), all.end(),
    [](const std::array<T, kDim>& a, const std::array<T, kDim>& b)
    { return zLess(a.data(), b.data()); });
  std::vector<std::array<T, kDim>> splitters;
  for (int r = 1; r < ranks && !all.empty(); ++r)
    splitters.push_back(all[std::size_t(r) * all.size() / std::size_t(ranks)]);
  return splitters;
}

// The rank whose z-range holds p: points equal to a splitter go to the
// higher rank, so identical points never straddle a boundary.
template <class T>
int ownerRank(const T* p, const std::vector<std::array<T, kDim>>& splitters)
{
  auto it = std::upper_bound(splitters.begin(), splitters.end(), p,
    [](const T* q, const std::array<T, kDim>& s) { return zLess(q, s.data()); });
  return int(it - splitters.begin());
}

// Redistributes the items into contiguous, balanced z-ranges.
template <class T, class Payload>
std::vector<Travelling<T, Payload>> decomposeInZOrder(
  const std::vector<Travelling<T, Payload>>& items, Communicator& comm)
{
  const int ranks = comm.size();
  if (ranks == 1)
    return items;
  const std::vector<std::array<T, kDim>> splitters = zOrderSplitters(items, comm);
  // Packed straight into the byte blocks that travel, and unpacked straight
  // from them: every extra copy of the points costs page faults on fresh
  // memory, which dominate a decomposition on one node.
  using Item = Travelling<T, Payload>;
  std::vector<int> owner(items.size());
  std::vector<std::size_t> count(ranks, 0);
  for (std::size_t i = 0; i < items.size(); ++i)
    ++count[owner[i] = ownerRank(items[i].p, splitters)];
  std::vector<std::vector<char>> send(ranks);
  std::vector<std::size_t> at(ranks, 0);
  for (int r = 0; r < ranks; ++r)
    send[r].resize(count[r] * sizeof(Item));
  for (std::size_t i = 0; i < items.size(); ++i)
  {
    const int r = owner[i];
    std::memcpy(send[r].data() + at[r], &items[i], sizeof(Item));
    at[r] += sizeof(Item);
  }
  std::vector<int>().swap(owner);
  const std::vector<std::vector<char>> got = comm.allToAll(send);
  std::vector<std::vector<char>>().swap(send);
  std::size_t bytes = 0;
  for (const auto& g : got)
    bytes += g.size();
  std::vector<Item> out(bytes / sizeof(Item));
  char* dst = reinterpret_cast<char*>(out.data());
  for (const auto& g : got)
  {
    if (!g.empty())
      std::memcpy(dst, g.data(), g.size());
    dst += g.size();
  }
  return out;
}
} // namespace jz
