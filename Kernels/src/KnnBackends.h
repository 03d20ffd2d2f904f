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

// The K-th neighbour radius bound (squared) of every leaf of a tree: the
// node walks' bound, tightened by the leaf's own pooled sources (infinite
// where the tree holds fewer than K sources). When given, tighten(leaf,
// nodeBound2) says which leaves are worth the tightening; the others keep
// the node bound (also a valid bound, only looser).
using LeafTightening = std::function<bool(Index leaf, double nodeBound2)>;
template <class T>
std::vector<double> knnLeafRadius2(
  const ZTree<T>& tree, int k, const RunControl& control, const LeafTightening& tighten = {});

#if defined(JZ_WITH_CUDA)
template <class T>
void knnCuda(const KnnProblem<T>& problem, const KnnResults<T>& results, RunInfo& info,
  const RunControl& control);
#endif
} // namespace jz
