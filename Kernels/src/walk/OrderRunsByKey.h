// Within each leaf of coincident points (a run of duplicates), the input
// indices in the order of their keys, so that the kNN walk may take a run's
// first K as its K smallest keys (KnnLeafSearch's LeafToLeaf) and the EMST's
// nearest round, which reads that walk, breaks its ties the same way. The
// coordinates are equal, so only the input indices move.
#pragma once

#include <algorithm>

#include "walk/CandidateBuffer.h"
#include "jz/Tree.h"

namespace jz
{
template <class T>
void orderRunsByKey(ZTree<T>& tree, const GlobalId* ids)
{
  const TreePlane<T>& leaves = tree.planes[0];
  Index* in = tree.sources.inputIndex.data();
  const SourceKeys keyOf{ ids, nullptr };
#pragma omp parallel for schedule(dynamic, 64)
  for (long long j = 0; j < (long long)leaves.numNodes(); ++j)
    if (leaves.numSources(Index(j)) > 1 && boxIsPoint(leaves.sourceBox[j]))
      std::sort(in + leaves.sourceSplit[j], in + leaves.sourceSplit[j + 1],
        [&keyOf](Index a, Index b) { return keyOf.ofInput(a) < keyOf.ofInput(b); });
}
} // namespace jz
