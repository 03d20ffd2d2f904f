// Backend entry points of computeKnn; the problem arrives validated.
#pragma once

#include "jz/Knn.h"

namespace jz
{
template <class T>
void knnCpu(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);

#if defined(JZ_WITH_CUDA)
template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);
#endif
} // namespace jz
