// Friends-of-friends groups at any linking length from a Euclidean minimum
// spanning tree: the groups at l are exactly the components of the tree's
// edges with weight <= l (a minimum spanning tree is a minimum bottleneck
// tree), and the tree's weights are the FoF walk's own squared distances
// (exact double, nearest image), so the cut reproduces the walk exactly.
// One tree serves every linking length: the FriendsOfFriends filter re-cuts
// a cached tree when only LinkingLength or MinimumGroupSize changes.
#pragma once

#include <cstddef>

#include "Emst.h"
#include "Fof.h"

namespace jz
{
// The groups of n points at `linkingLength` (compared as weight2 <= l * l,
// as computeFofGroups does) from a Euclidean tree of computeEmst with the
// same points, box and ids. Fills out.groupLabel (smallest global id) and
// out.groupRoot as computeFofGroups does.
void fofGroupsFromTree(
  const EmstEdges& tree, std::size_t n, const GlobalId* ids, double linkingLength, FofGroups& out);
} // namespace jz
