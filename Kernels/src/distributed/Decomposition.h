// Domain decomposition in z-order (§II-A): sample-based splitters, then
// an all-to-all exchange so that rank r holds the r-th contiguous range of
// the global z-order, balanced by point count.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
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
    // 16384 samples per range: a range's count is then close to the mean
    // (with few samples the ranges differ, and the other ranks wait for the
    // largest); at most 2^20 samples, which every rank sorts.
    const double wanted = std::min({ double(total), 16384.0 * ranks, double(1 << 20) });
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

// Where each of n local points goes in the z-order decomposition, and
// where the points that arrive here lie in this rank's share: rank r's
// points are [begin[r], begin[r + 1]) (rank order; this rank's own points,
// ascending, at its place).
struct ZOrderRoute
{
  int rank = 0;
  std::vector<std::vector<Index>> send; // input indices going to rank r, ascending
  std::vector<std::size_t> begin;       // ranks + 1 entries
  std::size_t mostSent = 0;             // the most points any rank sends another
  std::size_t size() const { return begin.empty() ? 0 : begin.back(); }
  const std::vector<Index>& own() const { return send[rank]; }
};

// The route of n local points: at(i, p) gives point i's coordinates (as the
// tree sees them). Collective.
template <class T, class At>
ZOrderRoute routeInZOrder(std::size_t n, const At& at, Communicator& comm)
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
  // (else computed again for the lists).
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
  ZOrderRoute route;
  route.rank = me;
  route.send.resize(ranks);
  for (int r = 0; r < ranks; ++r)
    reserveHugePages(route.send[r], count[r]);
  for (std::size_t i = 0; i < n; ++i)
    route.send[keepOwners ? int(ownerByte[i]) : ownerOf(i)].push_back(Index(i));
  std::vector<std::vector<std::uint64_t>> sendCount(ranks);
  for (int r = 0; r < ranks; ++r)
    sendCount[r].push_back(r == me ? 0 : count[r]);
  const auto recvCount = allToAllTyped(comm, sendCount);
  route.begin.assign(ranks + 1, 0);
  for (int r = 0; r < ranks; ++r)
    route.begin[r + 1] = route.begin[r] +
      (r == me ? count[me] : std::size_t(recvCount[r].empty() ? 0 : recvCount[r][0]));
  double most = 0;
  for (int r = 0; r < ranks; ++r)
    if (r != me)
      most = std::max(most, double(count[r]));
  comm.allReduceMax(&most, 1);
  route.mostSent = std::size_t(most);
  return route;
}

// Send buffers that successive moveAlongRoute calls and rounds reuse:
// fresh memory is the decomposition's main cost on one node.
class RouteScratch
{
public:
  char* get(std::size_t r, std::size_t bytes)
  {
    if (blocks_.size() <= r)
    {
      blocks_.resize(r + 1);
      capacity_.resize(r + 1, 0);
    }
    if (capacity_[r] < bytes)
    {
      blocks_[r] = newHugeArray<char>(bytes);
      capacity_[r] = bytes;
    }
    return blocks_[r].get();
  }

private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::vector<std::size_t> capacity_;
};

// The bytes a rank packs for one other rank per round of moveAlongRoute:
// bounds the send buffers (fresh memory) for large shares. Not smaller:
// every round is a synchronisation, which costs a scheduler time slice on a
// loaded node while MPI spins (small pieces made a decomposition several
// times slower there than one round).
constexpr std::size_t kRoutePieceBytes = std::size_t(64) << 20;

// Moves one field of the points along `route`, straight into `out`
// (route.size() * width values): get(i, v) writes the width values of input
// point i at v. The points that stay are written in place, the others are
// packed in pieces of at most pieceBytes per rank and received in
// place (no receive buffer, no unpacking), in the same number of rounds on
// every rank. Collective.
template <class V, class Get>
void moveAlongRoute(const ZOrderRoute& route, std::size_t width, const Get& get, V* out,
  RouteScratch& scratch, Communicator& comm, std::size_t pieceBytes = kRoutePieceBytes)
{
  const std::size_t ranks = route.send.size();
  const std::vector<Index>& own = route.send[route.rank];
  V* ownOut = out + route.begin[route.rank] * width;
  for (std::size_t j = 0; j < own.size(); ++j)
    get(std::size_t(own[j]), ownOut + j * width);
  const std::size_t piece = std::max<std::size_t>(1, pieceBytes / (width * sizeof(V)));
  const std::size_t rounds = (route.mostSent + piece - 1) / piece;
  std::vector<const char*> send(ranks, nullptr);
  std::vector<char*> recv(ranks, nullptr);
  std::vector<std::size_t> sendBytes(ranks, 0), recvBytes(ranks, 0);
  for (std::size_t round = 0; round < rounds; ++round)
  {
    const std::size_t first = round * piece;
    auto countOf = [&](std::size_t total)
    { return total > first ? std::min(piece, total - first) : std::size_t(0); };
    for (std::size_t r = 0; r < ranks; ++r)
    {
      if (int(r) == route.rank)
        continue;
      const std::vector<Index>& list = route.send[r];
      const std::size_t numSend = countOf(list.size());
      const std::size_t numRecv = countOf(route.begin[r + 1] - route.begin[r]);
      recv[r] = reinterpret_cast<char*>(out + (route.begin[r] + first) * width);
      recvBytes[r] = numRecv * width * sizeof(V);
      sendBytes[r] = numSend * width * sizeof(V);
      V* packed =
        reinterpret_cast<V*>(scratch.get(r, std::min(piece, route.mostSent) * width * sizeof(V)));
      for (std::size_t j = 0; j < numSend; ++j)
        get(std::size_t(list[first + j]), packed + j * width);
      send[r] = reinterpret_cast<const char*>(packed);
    }
    comm.allToAllInto(send, sendBytes, recv, recvBytes);
  }
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

// Send buffers for records that go back to the rank each came from:
// count[r] records of recordBytes bytes for every rank r (none for this
// rank, whose own are written in place), and a write cursor per rank.
struct RecordsHome
{
  std::vector<std::vector<char>> send;
  std::vector<char*> cursor;

  RecordsHome(std::vector<std::size_t> count, int me, std::size_t recordBytes)
    : send(count.size())
    , cursor(count.size())
  {
    count[me] = 0;
    for (std::size_t r = 0; r < count.size(); ++r)
    {
      resizeHugePages(send[r], count[r] * recordBytes);
      cursor[r] = send[r].data();
    }
  }
};

// How many of the points, by the rank each came from, go to each rank.
inline std::vector<std::size_t> countByOrigin(const std::vector<std::int32_t>& origin, int ranks)
{
  std::vector<std::size_t> count(ranks, 0);
  for (const std::int32_t r : origin)
    ++count[r];
  return count;
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
// the result with forEachRecord and the same pack. (For points whose
// fields all land in arrays of the share's order, routeInZOrder and
// moveAlongRoute save the records' buffers and copies.)
template <class T, class At, class Pack>
ZOrderShare exchangeInZOrder(
  std::size_t n, std::size_t recordBytes, const At& at, const Pack& pack, Communicator& comm)
{
  const int ranks = comm.size(), me = comm.rank();
  ZOrderRoute route = routeInZOrder<T>(n, at, comm);
  std::vector<std::size_t> count(ranks);
  for (int r = 0; r < ranks; ++r)
    count[r] = r == me ? 0 : route.send[r].size();
  ZOrderShare share;
  share.rank = me;
  share.blocks = exchangeRecords(
    count, recordBytes,
    [&](int r, std::size_t j, char* record) { pack(std::size_t(route.send[r][j]), record); }, comm);
  share.blocks[me].clear();
  share.own = std::move(route.send[me]);
  return share;
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

// A decomposed point's role: a source, a query, or both (a self query).
enum : std::uint8_t
{
  kIsSource = 1,
  kIsQuery = 2
};

// The tail of the decomposition record of joint point i (the sources
// [0, ns), then the queries): its origin (this rank, its index among its
// sources or queries), its role and, when masses travel, its mass (1 for a
// query or without masses).
inline void putOriginRoleMass(char*& record, std::int32_t rank, std::size_t i, std::size_t ns,
  bool self, bool withMass, const double* masses)
{
  const bool isSource = i < ns;
  putField(record, rank);
  putField(record, Index(isSource ? i : i - ns));
  putField(record, std::uint8_t(isSource ? (self ? kIsSource | kIsQuery : kIsSource) : kIsQuery));
  if (withMass)
    putField(record, isSource && masses ? masses[i] : 1.0);
}

// Sends values of this rank's local points (in route order) back to the
// rank each came from, along `route`, with no origin stored or sent: the
// block of rank s, [route.begin[s], route.begin[s + 1]), goes back to s as
// one piece of count * bytesPerPoint bytes, written by pack(begin, count,
// out), and s receives it in the order it sent those points (route.send of
// s): unpack(list, in) with list the input indices of the piece. Layout
// within a piece is the caller's (pieces lie side by side in one buffer, so
// unaligned: read and write them with memcpy). This rank's own points,
// route.own() at route.begin[route.rank], are left to the caller. One
// allToAllInto. Collective.
template <class Pack, class Unpack>
void sendHomeAlongRoute(const ZOrderRoute& route, std::size_t bytesPerPoint, const Pack& pack,
  const Unpack& unpack, Communicator& comm)
{
  const std::size_t ranks = route.send.size();
  std::size_t numSent = 0, numReceived = 0;
  for (std::size_t r = 0; r < ranks; ++r)
    if (int(r) != route.rank)
    {
      numSent += route.begin[r + 1] - route.begin[r];
      numReceived += route.send[r].size();
    }
  const std::unique_ptr<char[]> out = newHugeArray<char>(numSent * bytesPerPoint + 1);
  const std::unique_ptr<char[]> in = newHugeArray<char>(numReceived * bytesPerPoint + 1);
  std::vector<const char*> send(ranks, nullptr);
  std::vector<char*> recv(ranks, nullptr);
  std::vector<std::size_t> sendBytes(ranks, 0), recvBytes(ranks, 0);
  std::size_t sent = 0, received = 0;
  for (std::size_t r = 0; r < ranks; ++r)
  {
    if (int(r) == route.rank)
      continue;
    const std::size_t begin = route.begin[r], count = route.begin[r + 1] - begin;
    if (count > 0) // an empty block may have no storage behind it
      pack(begin, count, out.get() + sent);
    send[r] = out.get() + sent;
    sendBytes[r] = count * bytesPerPoint;
    sent += sendBytes[r];
    recv[r] = in.get() + received;
    recvBytes[r] = route.send[r].size() * bytesPerPoint;
    received += recvBytes[r];
  }
  comm.allToAllInto(send, sendBytes, recv, recvBytes);
  for (std::size_t r = 0; r < ranks; ++r)
    if (int(r) != route.rank)
      unpack(route.send[r], static_cast<const char*>(recv[r]));
}
} // namespace jz
