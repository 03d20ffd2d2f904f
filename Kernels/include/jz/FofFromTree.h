// Friends-of-friends groups at any linking length from a Euclidean minimum
// spanning tree: the groups at l are exactly the components of the tree's
// edges with weight <= l (a minimum spanning tree is a minimum bottleneck
// tree), and the tree's weights are the FoF walk's own squared distances
// (exact double, nearest image), so the cut reproduces the walk exactly.
// One tree serves every linking length: the FriendsOfFriends filter re-cuts
// a cached tree when only LinkingLength or MinimumGroupSize changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

namespace jz
{
// The tree's points in single-linkage order (FofFromTree.cpp): Kruskal with
// linked lists appends one group's list to the other's at every union, so
// every group at every cut is one contiguous run of `order`, and a cut is a
// scan of joinEdge instead of a union-find over the edges.
struct FofTreeOrder
{
  std::vector<double> weight2;     // the tree's squared weights, sorted: a cut is a prefix
  std::vector<Index> order;        // the points
  std::vector<Index> joinEdge;     // k > 0: rank of the edge that joined order[k] to order[k-1]
                                   // (noJoin: never); joinEdge[0] = noJoin
  std::vector<GlobalId> idInOrder; // global id of order[k] (input index without ids)
  std::vector<std::uint64_t> runs; // labelFofCut's scratch (kept: no fresh pages per cut)
  static constexpr Index noJoin = ~Index(0);
};

// Builds the order from a Euclidean tree (edges sorted by weight, as
// computeEmst writes them) of n points; takes the weights out of `tree`.
void buildFofTreeOrder(EmstEdges&& tree, std::size_t n, const GlobalId* ids, FofTreeOrder& out);

// The cut at `linkingLength` numbered as labelFofGroups numbers
// fofGroupsFromTree's groups (same groupId and groupSize for every point:
// kept groups by descending size, ties by the smallest global id); also the
// reference member of each kept group (its member with the smallest global
// id, the first such in input order) for FofCatalogueInput::reference.
// Either output array may be null. Returns the number of kept groups.
std::size_t labelFofCut(FofTreeOrder& tree, double linkingLength, GlobalId minimumGroupSize,
  GlobalId* groupId, GlobalId* groupSize, std::vector<Index>* reference,
  const RunControl& control = {});
} // namespace jz
