#include "vtkJZCommunicator.h"

#include "vtkCommunicator.h"
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#include "vtkMultiProcessController.h"

#include "jz/HugePages.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{
// The largest message handed to MPI at once: counts are ints, so a buffer of
// more than 2 GiB travels in several messages (in order, MPI does not let
// messages of the same pair, tag and communicator overtake each other).
constexpr std::int64_t kChunkBytes = std::int64_t(1) << 30;

void CheckMPI(int rc, const char* what)
{
  if (rc != MPI_SUCCESS)
  {
    throw std::runtime_error(std::string("MPI error in ") + what);
  }
}

// Over MPI: a private duplicate of the controller's communicator.
class MPICommunicator final : public jz::Communicator
{
public:
  explicit MPICommunicator(MPI_Comm parent)
  {
    CheckMPI(MPI_Comm_dup(parent, &this->Comm), "MPI_Comm_dup");
    MPI_Comm_rank(this->Comm, &this->Rank);
    MPI_Comm_size(this->Comm, &this->Size);
  }
  ~MPICommunicator() override { MPI_Comm_free(&this->Comm); }
  MPICommunicator(const MPICommunicator&) = delete;
  MPICommunicator& operator=(const MPICommunicator&) = delete;

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
    CheckMPI(
      MPI_Alltoall(sendBytes.data(), 1, MPI_INT64_T, recvBytes.data(), 1, MPI_INT64_T, this->Comm),
      "MPI_Alltoall");
    std::vector<std::vector<char>> recv(P);
    std::vector<char*> recvData(P);
    for (int r = 0; r < P; ++r)
    {
      // Fresh memory written once: huge pages save most of its page faults.
      jz::resizeHugePages(recv[r], static_cast<std::size_t>(recvBytes[r]));
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
    CheckMPI(MPI_Allgather(&mine, 1, MPI_INT64_T, recvBytes.data(), 1, MPI_INT64_T, this->Comm),
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
      CheckMPI(MPI_Allreduce(MPI_IN_PLACE, values, count, type, op, this->Comm), "MPI_Allreduce");
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
      for (std::int64_t at = 0; at < n; at += kChunkBytes)
      {
        MPI_Request req;
        CheckMPI(MPI_Irecv(recvData[r] + at, static_cast<int>(std::min(kChunkBytes, n - at)),
                   MPI_BYTE, r, tag, this->Comm, &req),
          "MPI_Irecv");
        requests.push_back(req);
      }
    }
    for (int k = 1; k < P; ++k)
    {
      const int r = (me + k) % P; // staggered, so not every rank sends to rank 0 first
      const std::int64_t n = sendBytes[r];
      for (std::int64_t at = 0; at < n; at += kChunkBytes)
      {
        MPI_Request req;
        CheckMPI(
          MPI_Isend(const_cast<char*>(sendData[r]) + at,
            static_cast<int>(std::min(kChunkBytes, n - at)), MPI_BYTE, r, tag, this->Comm, &req),
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
      CheckMPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
    }
  }

  MPI_Comm Comm = MPI_COMM_NULL;
  int Rank = 0;
  int Size = 1;
};

// Over any vtkCommunicator, with its generic collectives only (all-to-all as
// one GatherV per rank). For controllers other than MPI, and for tests.
class VTKCommunicator final : public jz::Communicator
{
public:
  explicit VTKCommunicator(vtkMultiProcessController* controller)
    : Comm(controller->GetCommunicator())
  {
  }

  int rank() const override { return this->Comm->GetLocalProcessId(); }
  int size() const override { return this->Comm->GetNumberOfProcesses(); }

  std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& send) override
  {
    const int P = this->size();
    std::vector<std::vector<char>> recv(P);
    static const std::vector<char> none;
    for (int root = 0; root < P; ++root)
    {
      const std::vector<char>& mine = root < static_cast<int>(send.size()) ? send[root] : none;
      this->GatherTo(root, mine, root == this->rank() ? &recv : nullptr);
    }
    return recv;
  }

  std::vector<std::vector<char>> allGather(const std::vector<char>& send) override
  {
    const int P = this->size();
    vtkIdType mine = static_cast<vtkIdType>(send.size());
    std::vector<vtkIdType> lengths(P, 0), offsets(P + 1, 0);
    this->Check(this->Comm->AllGather(&mine, lengths.data(), 1), "AllGather");
    for (int r = 0; r < P; ++r)
    {
      offsets[r + 1] = offsets[r] + lengths[r];
    }
    std::vector<char> all(static_cast<std::size_t>(offsets[P]) + 1);
    std::vector<char> sendCopy(send);
    sendCopy.push_back(0); // never a null pointer
    this->Check(
      this->Comm->AllGatherV(sendCopy.data(), all.data(), mine, lengths.data(), offsets.data()),
      "AllGatherV");
    std::vector<std::vector<char>> recv(P);
    for (int r = 0; r < P; ++r)
    {
      recv[r].assign(all.begin() + offsets[r], all.begin() + offsets[r + 1]);
    }
    return recv;
  }

  void allReduceSum(std::int64_t* values, int count) override
  {
    if (count <= 0)
    {
      return;
    }
    std::vector<long long> in(values, values + count), out(count);
    this->Check(
      this->Comm->AllReduce(in.data(), out.data(), count, vtkCommunicator::SUM_OP), "AllReduce");
    std::copy(out.begin(), out.end(), values);
  }
  void allReduceMin(double* values, int count) override
  {
    this->ReduceDouble(values, count, vtkCommunicator::MIN_OP);
  }
  void allReduceMax(double* values, int count) override
  {
    this->ReduceDouble(values, count, vtkCommunicator::MAX_OP);
  }

private:
  void Check(int ok, const char* what)
  {
    if (!ok)
    {
      throw std::runtime_error(std::string("vtkCommunicator::") + what + " failed");
    }
  }

  void ReduceDouble(double* values, int count, int op)
  {
    if (count <= 0)
    {
      return;
    }
    std::vector<double> in(values, values + count), out(count);
    this->Check(this->Comm->AllReduce(in.data(), out.data(), count, op), "AllReduce");
    std::copy(out.begin(), out.end(), values);
  }

  void GatherTo(int root, const std::vector<char>& send, std::vector<std::vector<char>>* recv)
  {
    const int P = this->size();
    vtkIdType mine = static_cast<vtkIdType>(send.size());
    std::vector<vtkIdType> lengths(P, 0), offsets(P + 1, 0);
    this->Check(this->Comm->Gather(&mine, lengths.data(), 1, root), "Gather");
    for (int r = 0; r < P; ++r)
    {
      offsets[r + 1] = offsets[r] + lengths[r];
    }
    std::vector<char> all(recv ? static_cast<std::size_t>(offsets[P]) + 1 : 1);
    std::vector<char> sendCopy(send);
    sendCopy.push_back(0);
    this->Check(
      this->Comm->GatherV(sendCopy.data(), all.data(), mine, lengths.data(), offsets.data(), root),
      "GatherV");
    if (recv)
    {
      for (int r = 0; r < P; ++r)
      {
        (*recv)[r].assign(all.begin() + offsets[r], all.begin() + offsets[r + 1]);
      }
    }
  }

  vtkCommunicator* Comm;
};
} // namespace

namespace vtkJZKernelAdapter
{
std::unique_ptr<jz::Communicator> MakeCommunicator(vtkMultiProcessController* controller)
{
  if (!controller)
  {
    controller = vtkMultiProcessController::GetGlobalController();
  }
  if (!controller || controller->GetNumberOfProcesses() <= 1 || !controller->GetCommunicator())
  {
    return std::unique_ptr<jz::Communicator>(new jz::SerialCommunicator());
  }
  const char* force = std::getenv("JZ_COMMUNICATOR");
  const bool generic = force && std::strcmp(force, "vtk") == 0;
  auto* mpi = vtkMPICommunicator::SafeDownCast(controller->GetCommunicator());
  if (mpi && !generic && mpi->GetMPIComm() && mpi->GetMPIComm()->GetHandle())
  {
    return std::unique_ptr<jz::Communicator>(new MPICommunicator(*mpi->GetMPIComm()->GetHandle()));
  }
  return std::unique_ptr<jz::Communicator>(new VTKCommunicator(controller));
}
}
