// Backend entry points of computeKnn; the problem arrives validated.
#pragma once

#include <functional>
#include <vector>

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

// The K-th neighbour radius bound (squared) of every leaf of a tree: the
// node walks' bound, tightened by the leaf's own pooled sources (infinite
// where the tree holds fewer than K sources). When given, tighten(plane,
// node, bound2) says which nodes of plane 1 (the leaves' parents) and of
// plane 0 (the leaves) are worth the work, from their node bound: the leaves
// of a parent that is not keep the parent's bound (no leaf walk for them),
// a leaf that is not keeps its node bound (both valid bounds, only looser).
using LeafTightening = std::function<bool(int plane, Index node, double bound2)>;
template <class T>
std::vector<double> knnLeafRadius2(
  const ZTree<T>& tree, int k, const RunControl& control, const LeafTightening& tighten = {});

#if defined(JZ_WITH_CUDA)
template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);
#endif
} // namespace jz
