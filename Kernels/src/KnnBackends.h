// Backend entry points of computeKnn; the problem arrives validated.
#pragma once

#include <vector>

#include "jz/Knn.h"
#include "jz/Tree.h"

namespace jz
{
template <class T>
void knnCpu(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);

// The K-th neighbour radius bound (squared) of every leaf of a tree, from
// the node walks alone (infinite where the tree holds fewer than K sources).
template <class T>
std::vector<double> knnLeafRadius2(const ZTree<T>& tree, int k, const RunControl& control);

#if defined(JZ_WITH_CUDA)
template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);
#endif
} // namespace jz
