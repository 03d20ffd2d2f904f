// Domain decomposition in z-order (§II-A): sample-based splitters, then
// an all-to-all exchange so that rank r holds the r-th contiguous range of
// the global z-order, balanced by point count.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "jz/Communicator.h"
#include "jz/Geometry.h"
#include "jz/HugePages.h"
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
// at(i, p) gives the coordinates of local point i < n.
template <class T, class At>
std::vector<std::array<T, kDim>> zOrderSplitters(std::size_t n, const At& at, Communicator& comm)
{
  const int ranks = comm.size();
  const std::int64_t local = std::int64_t(n);
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
      at(std::min<std::size_t>(i, n - 1), s.data());
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

// What a rank holds after exchangeInZOrder: the records the other ranks
// sent, and which of its own points stay (these are never packed: a
// record that does not travel need not be written and read back).
struct ZOrderShare
{
  int rank = 0;
  std::vector<std::vector<char>> blocks; // from rank r; empty for this rank
  std::vector<Index> own;                // this rank's points that stay, ascending

  std::size_t numRecords(std::size_t recordBytes) const
  {
    std::size_t n = own.size();
    for (const auto& b : blocks)
      n += b.size() / recordBytes;
    return n;
  }
};

// Calls f(record) for every record of `share` in rank order, each block in
// its sender's order; the points that stayed are packed one at a time into
// a scratch record by the same pack(i, record) that packed the others.
template <class Pack, class F>
void forEachRecord(const ZOrderShare& share, std::size_t recordBytes, const Pack& pack, const F& f)
{
  std::vector<char> scratch(recordBytes);
  for (int r = 0; r < int(share.blocks.size()); ++r)
  {
    if (r == share.rank)
    {
      for (Index i : share.own)
      {
        pack(std::size_t(i), scratch.data());
        f(static_cast<const char*>(scratch.data()));
      }
      continue;
    }
    const std::vector<char>& block = share.blocks[r];
    for (std::size_t at = 0; at < block.size(); at += recordBytes)
      f(block.data() + at);
  }
}

// Redistributes n local points into contiguous, balanced z-ranges as
// records of recordBytes bytes: at(i, p) gives point i's coordinates (as the
// tree sees them) and pack(i, record) writes its record. The caller reads
// the result with forEachRecord and the same pack.
//
// Records are packed straight from the caller's arrays into the blocks that
// travel, and the caller unpacks straight from the received blocks: on one
// node the decomposition's cost is the first touch of fresh memory, so every
// copy of the points that is not made counts.
template <class T, class At, class Pack>
ZOrderShare exchangeInZOrder(
  std::size_t n, std::size_t recordBytes, const At& at, const Pack& pack, Communicator& comm)
{
  const int ranks = comm.size(), me = comm.rank();
  std::vector<std::array<T, kDim>> splitters;
  if (ranks > 1)
    splitters = zOrderSplitters<T>(n, at, comm);
  auto ownerOf = [&](std::size_t i)
  {
    if (ranks == 1)
      return 0;
    T p[kDim];
    at(i, p);
    return ownerRank(p, splitters);
  };
  // Each point's owner, computed once and kept as a byte when ranks allow
  // (else computed again when packing).
  std::vector<std::uint8_t> ownerByte;
  const bool keepOwners = ranks > 1 && ranks <= 256;
  if (keepOwners)
    reserveHugePages(ownerByte, n);
  std::vector<std::size_t> count(ranks, 0);
  for (std::size_t i = 0; i < n; ++i)
  {
    const int r = ownerOf(i);
    ++count[r];
    if (keepOwners)
      ownerByte.push_back(std::uint8_t(r));
  }
  auto owner = [&](std::size_t i) { return keepOwners ? int(ownerByte[i]) : ownerOf(i); };
  ZOrderShare share;
  share.rank = me;
  reserveHugePages(share.own, count[me]);
  std::vector<std::vector<char>> send(ranks);
  std::vector<char*> to(ranks);
  for (int r = 0; r < ranks; ++r)
  {
    if (r != me)
      resizeHugePages(send[r], count[r] * recordBytes);
    to[r] = send[r].data();
  }
  for (std::size_t i = 0; i < n; ++i)
  {
    const int r = owner(i);
    if (r == me)
    {
      share.own.push_back(Index(i));
      continue;
    }
    pack(i, to[r]);
    to[r] += recordBytes;
  }
  share.blocks = comm.allToAll(send);
  share.blocks[me].clear();
  return share;
}

// Sends count[r] records of recordBytes bytes to each rank r, written in
// place by pack(r, j, record) for the j-th record to r; returns the blocks
// received from each rank (no typed copies on either side).
template <class Pack>
std::vector<std::vector<char>> exchangeRecords(const std::vector<std::size_t>& count,
  std::size_t recordBytes, const Pack& pack, Communicator& comm)
{
  std::vector<std::vector<char>> send(count.size());
  for (std::size_t r = 0; r < count.size(); ++r)
  {
    resizeHugePages(send[r], count[r] * recordBytes);
    for (std::size_t j = 0; j < count[r]; ++j)
      pack(int(r), j, send[r].data() + j * recordBytes);
  }
  return comm.allToAll(send);
}

// Field-wise record packing for exchangeInZOrder and exchangeRecords.
template <class V>
void putField(char*& at, const V& v)
{
  std::memcpy(at, &v, sizeof(V));
  at += sizeof(V);
}

template <class V>
V takeField(const char*& at)
{
  V v;
  std::memcpy(&v, at, sizeof(V));
  at += sizeof(V);
  return v;
}
} // namespace jz
