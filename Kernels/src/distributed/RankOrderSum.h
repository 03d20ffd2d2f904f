// Element-wise sums of a vector over the ranks, added in rank order, so that
// every rank gets the same bits whatever the partition of the work behind
// each rank's part.
//
// A chunk of elements at a time, each rank adds up its own share of the
// chunk from every rank (one all-to-all), then the sums are shared out (a
// second). Each rank sends and receives about two vectors' worth whatever
// the number of ranks, and holds one chunk beyond its vector: gathering
// every rank's whole vector instead would hold as many vectors as ranks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "jz/Communicator.h"

namespace jz
{
// Elements per round: the extra memory of a rank, whatever the vector.
constexpr std::size_t kRankOrderSumChunk = std::size_t(1) << 22;

// values[0 .. size) = the sum over ranks r = 0, 1, ... of rank r's values,
// element by element, starting from 0. Collective; every rank has the same
// size.
inline void sumInRankOrder(
  Communicator& comm, double* values, std::size_t size, std::size_t chunk = kRankOrderSumChunk)
{
  const std::size_t ranks = std::size_t(comm.size()), me = std::size_t(comm.rank());
  if (ranks == 1)
    return;
  chunk = std::max(chunk, ranks);
  constexpr std::size_t kBytes = sizeof(double);
  std::vector<double> parts; // [rank][element of this rank's share]
  std::vector<const char*> send(ranks);
  std::vector<char*> recv(ranks);
  std::vector<std::size_t> sendBytes(ranks), recvBytes(ranks);
  for (std::size_t begin = 0; begin < size; begin += chunk)
  {
    const std::size_t n = std::min(chunk, size - begin);
    // Rank r's share of the chunk: [shareStart(r), shareStart(r + 1)).
    auto shareStart = [&](std::size_t r) { return begin + n * r / ranks; };
    const std::size_t mine = shareStart(me), count = shareStart(me + 1) - mine;
    parts.resize(ranks * count);
    for (std::size_t r = 0; r < ranks; ++r)
    {
      send[r] = reinterpret_cast<const char*>(values + shareStart(r));
      sendBytes[r] = (shareStart(r + 1) - shareStart(r)) * kBytes;
      recv[r] = reinterpret_cast<char*>(parts.data() + r * count);
      recvBytes[r] = count * kBytes;
    }
    comm.allToAllInto(send, sendBytes, recv, recvBytes);
    for (std::size_t i = 0; i < count; ++i)
    {
      double sum = 0;
      for (std::size_t r = 0; r < ranks; ++r)
        sum += parts[r * count + i];
      values[mine + i] = sum;
    }
    // Every rank's sums to every rank; this rank's are in place already.
    for (std::size_t r = 0; r < ranks; ++r)
    {
      send[r] = reinterpret_cast<const char*>(values + mine);
      sendBytes[r] = r == me ? 0 : count * kBytes;
      recv[r] = reinterpret_cast<char*>(values + shareStart(r));
      recvBytes[r] = r == me ? 0 : (shareStart(r + 1) - shareStart(r)) * kBytes;
    }
    comm.allToAllInto(send, sendBytes, recv, recvBytes);
  }
}
// The same over a vector.
inline void sumInRankOrder(
  Communicator& comm, std::vector<double>& values, std::size_t chunk = kRankOrderSumChunk)
{
  sumInRankOrder(comm, values.data(), values.size(), chunk);
}
} // namespace jz
