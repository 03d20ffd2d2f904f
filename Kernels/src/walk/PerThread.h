// Scratch space of hooks that run on the walk's worker threads: one object
// per OpenMP thread, reused across calls so hot loops do not allocate.
#pragma once

#include <algorithm>
#include <vector>

#include <omp.h>

namespace jz
{
template <class S>
class PerThread
{
public:
  explicit PerThread(int numThreads)
    : items_(std::size_t(std::max(1, numThreads)))
  {
  }
  S& mine() { return items_[std::size_t(omp_get_thread_num())]; }
  const S& at(int thread) const { return items_[std::size_t(thread)]; }

private:
  std::vector<S> items_;
};
} // namespace jz
