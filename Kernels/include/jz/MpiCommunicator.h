// jz::Communicator over an MPI communicator: a private duplicate of it (so
// its messages never match the caller's), 64-bit sizes, and messages cut into
// chunks below 2 GiB. Header-only, for the callers that have MPI (the ParaView
// filters, the Python module); the kernels themselves never link MPI.
// Creating and destroying one is collective over the parent communicator.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "Communicator.h"
#include "HugePages.h"

namespace jz
{
// The largest message handed to MPI at once: counts are ints, so a buffer of
// more than 2 GiB travels in several messages (in order, MPI does not let
// messages of the same pair, tag and communicator overtake each other).
constexpr std::int64_t kMpiChunkBytes = std::int64_t(1) << 30;

inline void checkMpi(int rc, const char* what)
{
  if (rc != MPI_SUCCESS)
  {
    throw std::runtime_error(std::string("MPI error in ") + what);
  }
}

// Over MPI: a private duplicate of the controller's communicator.
class MpiCommunicator final : public Communicator
{
public:
  explicit MpiCommunicator(MPI_Comm parent)
  {
    checkMpi(MPI_Comm_dup(parent, &this->Comm), "MPI_Comm_dup");
    MPI_Comm_rank(this->Comm, &this->Rank);
    MPI_Comm_size(this->Comm, &this->Size);
  }
  ~MpiCommunicator() override { MPI_Comm_free(&this->Comm); }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return this->Rank; }
  int size() const override { return this->Size; }

  std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& send) override
  {
    const int P = this->Size;
    std::vector<std::int64_t> sendBytes(P, 0), recvBytes(P, 0);
    std::vector<const char*> sendData(P, nullptr);
    for (int r = 0; r < P && r < static_cast<int>(send.size()); ++r)
    {
      sendBytes[r] = static_cast<std::int64_t>(send[r].size());
      sendData[r] = send[r].data();
    }
    checkMpi(
      MPI_Alltoall(sendBytes.data(), 1, MPI_INT64_T, recvBytes.data(), 1, MPI_INT64_T, this->Comm),
      "MPI_Alltoall");
    std::vector<std::vector<char>> recv(P);
    std::vector<char*> recvData(P);
    for (int r = 0; r < P; ++r)
    {
      // Fresh memory written once: huge pages save most of its page faults.
      resizeHugePages(recv[r], static_cast<std::size_t>(recvBytes[r]));
      recvData[r] = recv[r].data();
    }
    this->Exchange(sendData, sendBytes, recvData, recvBytes);
    return recv;
  }

  void allToAllInto(const std::vector<const char*>& send, const std::vector<std::size_t>& sendBytes,
    const std::vector<char*>& recv, const std::vector<std::size_t>& recvBytes) override
  {
    const int P = this->Size;
    std::vector<std::int64_t> sendCount(P, 0), recvCount(P, 0);
    for (int r = 0; r < P; ++r)
    {
      sendCount[r] = static_cast<std::int64_t>(sendBytes[r]);
      recvCount[r] = static_cast<std::int64_t>(recvBytes[r]);
    }
    this->Exchange(send, sendCount, recv, recvCount);
  }

  std::vector<std::vector<char>> allGather(const std::vector<char>& send) override
  {
    const int P = this->Size;
    std::int64_t mine = static_cast<std::int64_t>(send.size());
    std::vector<std::int64_t> recvBytes(P, 0);
    checkMpi(MPI_Allgather(&mine, 1, MPI_INT64_T, recvBytes.data(), 1, MPI_INT64_T, this->Comm),
      "MPI_Allgather");
    std::vector<std::vector<char>> recv(P);
    std::vector<char*> recvData(P);
    for (int r = 0; r < P; ++r)
    {
      recv[r].resize(static_cast<std::size_t>(recvBytes[r]));
      recvData[r] = recv[r].data();
    }
    // The same buffer goes to every rank (no copies).
    this->Exchange(std::vector<const char*>(P, send.data()), std::vector<std::int64_t>(P, mine),
      recvData, recvBytes);
    return recv;
  }

  void allReduceSum(std::int64_t* values, int count) override
  {
    this->Reduce(values, count, MPI_INT64_T, MPI_SUM);
  }
  void allReduceMin(double* values, int count) override
  {
    this->Reduce(values, count, MPI_DOUBLE, MPI_MIN);
  }
  void allReduceMax(double* values, int count) override
  {
    this->Reduce(values, count, MPI_DOUBLE, MPI_MAX);
  }

private:
  void Reduce(void* values, int count, MPI_Datatype type, MPI_Op op)
  {
    if (count > 0)
    {
      checkMpi(MPI_Allreduce(MPI_IN_PLACE, values, count, type, op, this->Comm), "MPI_Allreduce");
    }
  }

  // Point-to-point exchange of known sizes: sendData[r] (sendBytes[r]) to
  // rank r, recvBytes[r] bytes from rank r to recvData[r]; chunked below 2 GiB.
  void Exchange(const std::vector<const char*>& sendData,
    const std::vector<std::int64_t>& sendBytes, const std::vector<char*>& recvData,
    const std::vector<std::int64_t>& recvBytes)
  {
    const int P = this->Size, me = this->Rank;
    const int tag = 4711;
    std::vector<MPI_Request> requests;
    for (int r = 0; r < P; ++r)
    {
      if (r == me)
      {
        continue;
      }
      const std::int64_t n = recvBytes[r];
      for (std::int64_t at = 0; at < n; at += kMpiChunkBytes)
      {
        MPI_Request req;
        checkMpi(MPI_Irecv(recvData[r] + at, static_cast<int>(std::min(kMpiChunkBytes, n - at)),
                   MPI_BYTE, r, tag, this->Comm, &req),
          "MPI_Irecv");
        requests.push_back(req);
      }
    }
    for (int k = 1; k < P; ++k)
    {
      const int r = (me + k) % P; // staggered, so not every rank sends to rank 0 first
      const std::int64_t n = sendBytes[r];
      for (std::int64_t at = 0; at < n; at += kMpiChunkBytes)
      {
        MPI_Request req;
        checkMpi(
          MPI_Isend(const_cast<char*>(sendData[r]) + at,
            static_cast<int>(std::min(kMpiChunkBytes, n - at)), MPI_BYTE, r, tag, this->Comm, &req),
          "MPI_Isend");
        requests.push_back(req);
      }
    }
    if (sendBytes[me] > 0)
    {
      std::memcpy(recvData[me], sendData[me], static_cast<std::size_t>(sendBytes[me]));
    }
    if (!requests.empty())
    {
      checkMpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
    }
  }

  MPI_Comm Comm = MPI_COMM_NULL;
  int Rank = 0;
  int Size = 1;
};
} // namespace jz
