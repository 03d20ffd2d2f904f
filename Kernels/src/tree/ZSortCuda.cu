// Exact z-order sort on the GPU: CUB DeviceMergeSort with the float comparator
// of §II-A (jz::zLess, shared with the CPU).
#include <cub/device/device_merge_sort.cuh>

#include "tree/TreeCuda.cuh"
#include "jz/ZOrder.h"

namespace jz
{
namespace cuda
{
namespace
{
template <class T>
struct RecordZLess
{
  __device__ __forceinline__ bool operator()(const Record<T>& a, const Record<T>& b) const
  {
    return zLess(a.p, b.p);
  }
};
} // namespace

template <class T>
void sortRecordsCuda(Record<T>* records, Index n, cudaStream_t stream, TempStorage& temp)
{
  if (n < 2)
    return;
  std::size_t bytes = 0;
  JZ_CUDA_CHECK(cub::DeviceMergeSort::SortKeys(
    nullptr, bytes, records, (long long)n, RecordZLess<T>(), stream));
  void* storage = temp.get(bytes);
  JZ_CUDA_CHECK(cub::DeviceMergeSort::SortKeys(
    storage, bytes, records, (long long)n, RecordZLess<T>(), stream));
}

template void sortRecordsCuda<float>(Record<float>*, Index, cudaStream_t, TempStorage&);
template void sortRecordsCuda<double>(Record<double>*, Index, cudaStream_t, TempStorage&);
} // namespace cuda
} // namespace jz
