// The collective operations the distributed algorithms need (§II-A,
// III-C, Appendix B). Every rank calls every collective in the same order.
// The ParaView filters implement it over vtkMultiProcessController (MPI);
// the kernel tests implement it over threads, so the distributed logic is
// tested without MPI.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "Backend.h"

namespace jz
{
class Communicator
{
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // send[r] goes to rank r; returns what each rank sent to this one.
  virtual std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& send) = 0;
  // allToAll between the caller's buffers: sendBytes[r] bytes at send[r] go
  // to rank r, and the recvBytes[r] bytes that rank r sends here (the caller
  // knows how many) land at recv[r]. Received data need not pass through a
  // fresh buffer and a copy. This default goes through allToAll.
  virtual void allToAllInto(const std::vector<const char*>& send,
    const std::vector<std::size_t>& sendBytes, const std::vector<char*>& recv,
    const std::vector<std::size_t>& recvBytes)
  {
    std::vector<std::vector<char>> blocks(sendBytes.size());
    for (std::size_t r = 0; r < blocks.size(); ++r)
      blocks[r].assign(send[r], send[r] + sendBytes[r]);
    const std::vector<std::vector<char>> got = allToAll(blocks);
    for (std::size_t r = 0; r < got.size(); ++r)
    {
      if (r >= recvBytes.size() || got[r].size() != recvBytes[r])
        throw Error("allToAllInto: rank " + std::to_string(r) + " sent an unexpected size");
      if (!got[r].empty())
        std::memcpy(recv[r], got[r].data(), got[r].size());
    }
  }
  // Every rank's block, in rank order.
  virtual std::vector<std::vector<char>> allGather(const std::vector<char>& send) = 0;
  // Element-wise sums, minima and maxima over all ranks, in place.
  virtual void allReduceSum(std::int64_t* values, int count) = 0;
  virtual void allReduceMin(double* values, int count) = 0;
  virtual void allReduceMax(double* values, int count) = 0;
};

// A single process: every collective is the identity.
class SerialCommunicator : public Communicator
{
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& send) override
  {
    return send;
  }
  std::vector<std::vector<char>> allGather(const std::vector<char>& send) override
  {
    return { send };
  }
  void allReduceSum(std::int64_t*, int) override {}
  void allReduceMin(double*, int) override {}
  void allReduceMax(double*, int) override {}
};

// Typed helpers over the byte collectives (V must be trivially copyable).
template <class V>
std::vector<char> toBytes(const std::vector<V>& v)
{
  std::vector<char> bytes(v.size() * sizeof(V));
  if (!v.empty())
    std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

template <class V>
std::vector<V> fromBytes(const std::vector<char>& bytes)
{
  std::vector<V> v(bytes.size() / sizeof(V));
  if (!v.empty())
    std::memcpy(static_cast<void*>(v.data()), bytes.data(), v.size() * sizeof(V)); // plain records (std::pair too)
  return v;
}

template <class V>
std::vector<std::vector<V>> allToAllTyped(
  Communicator& comm, const std::vector<std::vector<V>>& send)
{
  std::vector<std::vector<char>> bytes(send.size());
  for (std::size_t r = 0; r < send.size(); ++r)
    bytes[r] = toBytes(send[r]);
  std::vector<std::vector<char>> got = comm.allToAll(bytes);
  std::vector<std::vector<V>> out(got.size());
  for (std::size_t r = 0; r < got.size(); ++r)
    out[r] = fromBytes<V>(got[r]);
  return out;
}

// Every rank's vector, concatenated in rank order.
template <class V>
std::vector<V> allGatherConcat(Communicator& comm, const std::vector<V>& send)
{
  std::vector<std::vector<char>> got = comm.allGather(toBytes(send));
  std::vector<V> out;
  for (const auto& b : got)
  {
    std::vector<V> part = fromBytes<V>(b);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

inline std::int64_t allSum(Communicator& comm, std::int64_t v)
{
  comm.allReduceSum(&v, 1);
  return v;
}

// Turns a local error into the same Error on every rank: when any rank
// reports a non-empty message, all ranks throw, naming the first rank that
// failed. Call it at points where every rank arrives, so none hangs.
inline void agreeOnErrors(Communicator& comm, const std::string& localError)
{
  std::int64_t failed = localError.empty() ? 0 : 1;
  comm.allReduceSum(&failed, 1);
  if (failed == 0)
    return;
  std::vector<std::vector<char>> all =
    comm.allGather(std::vector<char>(localError.begin(), localError.end()));
  for (std::size_t r = 0; r < all.size(); ++r)
  {
    if (!all[r].empty())
    {
      const std::string msg(all[r].begin(), all[r].end());
      throw Error(comm.size() > 1 ? "rank " + std::to_string(r) + ": " + msg : msg);
    }
  }
}

// Ends a step that may have been aborted or failed on some ranks: when any
// rank was aborted, every rank throws Aborted (an abort, not an error, as on
// one process: the filters empty their outputs with a warning); otherwise as
// agreeOnErrors. Collective.
inline void agreeOnAbortsAndErrors(Communicator& comm, bool aborted, const std::string& localError)
{
  if (allSum(comm, aborted ? 1 : 0) > 0)
    throw Aborted();
  agreeOnErrors(comm, localError);
}
} // namespace jz
