#include "vtkJZCommunicator.h"

#include "vtkCommunicator.h"
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#include "vtkMultiProcessController.h"

#include "jz/MpiCommunicator.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{
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
    return std::unique_ptr<jz::Communicator>(new jz::MpiCommunicator(*mpi->GetMPIComm()->GetHandle()));
  }
  return std::unique_ptr<jz::Communicator>(new VTKCommunicator(controller));
}
}
