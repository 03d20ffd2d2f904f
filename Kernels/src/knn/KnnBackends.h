// Backend entry points of computeKnn; the problem arrives validated.
#pragma once

#include "jz/Knn.h"
#include "jz/Tree.h"

namespace jz
{
template <class T>
void knnCpu(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);

// The distributed kNN's local search on the CPU: the tree knnCpu builds (a
// self-query tree when problem.queries is null: every source a query), then
// the search of all its queries on it (the problem arrives validated, with
// at least K sources). Two calls so that the caller can read the tree too.
template <class T>
void buildKnnTreeCpu(const KnnProblem<T>& problem, ZTree<T>& tree, const RunControl& control);
template <class T>
void knnCpuOnTree(const ZTree<T>& tree, const KnnProblem<T>& problem, const KnnResults<T>& results,
  RunInfo& info, const RunControl& control);

// Defined in CUDA builds only; called only there (runOnBackend).
template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);
} // namespace jz
