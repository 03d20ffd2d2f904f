// This rank's own Euclidean minimum spanning tree, for the distributed
// Borůvka's local candidates (EmstBoruvkaRounds.cpp).
#pragma once

#include <functional>
#include <vector>

#include "emst/EmstPhases.h"

namespace jz
{
// An edge of this rank's own minimum spanning tree, in sorted indices.
struct LocalTreeEdge
{
  Index a, b;
  double weight2;
};

// The Euclidean tree (forest up to maxLength) of this rank's points alone,
// by the single-process EMST with the global ids (so the same tie order).
// The lightest edge from a component's local part to this rank's other
// points crosses a cut of this rank's complete graph, so it is an edge of
// this tree: a component's local candidate is the lightest tree edge it
// touches, without a search.
// `progress` is handed to computeEmst (which throws Aborted when it says stop).
template <class T>
std::vector<LocalTreeEdge> localTreeEdges(const EmstRankPoints<T>& points,
  const EmstProblem<T>& piece, int threads, const std::function<bool(double)>& progress);
} // namespace jz
