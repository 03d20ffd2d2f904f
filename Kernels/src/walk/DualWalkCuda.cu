// Host and kernel parts of the dual-walk engine (DualWalkCuda.cuh) that do
// not depend on a policy.
#include <algorithm>
#include <cstdlib>

#include "walk/DualWalkCuda.cuh"

namespace jz
{
namespace cuda
{
__global__ void parentOfKernel(
  const Index* childSplit, Index parents, Index numNodes, Index* parentOf)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= parents)
    return;
  const Index end = childSplit[j + 1] < numNodes ? childSplit[j + 1] : numNodes;
  for (Index c = childSplit[j]; c < end; ++c)
    parentOf[c] = j;
}

__global__ void localOffsetsKernel(
  const unsigned long long* offset, Index count, unsigned long long base, unsigned long long* out)
{
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j <= count)
    out[j] = offset[j] - base;
}

unsigned long long leafBatchEntries()
{
  const char* env = std::getenv("JZ_CUDA_LEAF_BATCH_ENTRIES");
  const unsigned long long v = env ? std::strtoull(env, nullptr, 10) : 0;
  return v > 0 ? v : (1ull << 26);
}

std::vector<Index> receiverBatches(
  const WalkLevel& level, unsigned long long budget, cudaStream_t stream)
{
  const Index receivers = level.numNodes;
  if (level.size <= budget)
    return { 0, receivers };
  std::vector<unsigned long long> offset(std::size_t(receivers) + 1);
  download(offset.data(), level.offset.get(), offset.size(), stream);
  std::vector<Index> cuts{ 0 };
  for (Index b = 0; b < receivers;)
  {
    const auto end = std::upper_bound(offset.begin() + b + 1, offset.end(), offset[b] + budget);
    Index e = Index(end - offset.begin()) - 1;
    if (e <= b)
      e = b + 1;
    cuts.push_back(e);
    b = e;
  }
  return cuts;
}
} // namespace cuda
} // namespace jz
