// Domain decomposition in z-order (§II-A): sample-based splitters, then
// an all-to-all exchange so that rank r holds the r-th contiguous range of
// the global z-order, balanced by point count.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>
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

// Redistributes n local points into contiguous, balanced z-ranges as
// records of recordBytes bytes: at(i, p) gives point i's coordinates (as the
// tree sees them) and pack(i, record) writes its record. Returns the records
// received from each rank, in rank order, each block in the sender's order.
//
// Records are packed straight from the caller's arrays into the blocks that
// travel, and the caller unpacks straight from the received blocks: on one
// node the decomposition's cost is the first touch of fresh memory, so every
// copy of the points that is not made counts. The owner rank is computed
// twice rather than stored.
template <class T, class At, class Pack>
std::vector<std::vector<char>> exchangeInZOrder(
  std::size_t n, std::size_t recordBytes, const At& at, const Pack& pack, Communicator& comm)
{
  const int ranks = comm.size();
  std::vector<std::array<T, kDim>> splitters;
  if (ranks > 1)
    splitters = zOrderSplitters<T>(n, at, comm);
  auto owner = [&](std::size_t i)
  {
    if (ranks == 1)
      return 0;
    T p[kDim];
    at(i, p);
    return ownerRank(p, splitters);
  };
  std::vector<std::size_t> count(ranks, 0);
  for (std::size_t i = 0; i < n; ++i)
    ++count[owner(i)];
  std::vector<std::vector<char>> send(ranks);
  for (int r = 0; r < ranks; ++r)
    send[r].resize(count[r] * recordBytes);
  std::vector<char*> to(ranks);
  for (int r = 0; r < ranks; ++r)
    to[r] = send[r].data();
  for (std::size_t i = 0; i < n; ++i)
  {
    char*& dst = to[owner(i)];
    pack(i, dst);
    dst += recordBytes;
  }
  // This rank's own block does not travel (one copy fewer).
  std::vector<char> own;
  own.swap(send[comm.rank()]);
  std::vector<std::vector<char>> got = comm.allToAll(send);
  got[comm.rank()] = std::move(own);
  return got;
}

// Field-wise record packing for exchangeInZOrder.
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
