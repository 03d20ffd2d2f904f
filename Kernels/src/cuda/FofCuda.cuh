// The friends-of-friends dual tree walk on the GPU (§IV-A), two policies of
// the dual walk (DualWalkCuda.cuh): declarations shared by the node walk,
// the leaf walk, the labels and the driver.
//
// The walk mirrors cpu/FofCpu.cpp and shares its per-pair logic through
// jz/FofLinking.h (JZ_HD): per plane a group pointer grp[i] <= i into the
// plane and a flag linked[i] ("all points of the node are in one group").
#pragma once

#include "TreeCuda.cuh"
#include "jz/FofLinking.h"

namespace jz
{
namespace cuda
{
// An undecided pair of nodes of one plane (a <= b; a == b: a node with itself).
struct FofPair
{
  Index a, b;
};

// Node-level groups of one plane.
struct FofPlaneGroups
{
  Index numNodes = 0;
  DeviceBuffer<Index> grp;
  DeviceBuffer<unsigned char> linked;
};

// A list of undecided node pairs.
struct FofPairList
{
  unsigned long long size = 0;
  DeviceBuffer<FofPair> pairs;
};

// The pairs of the virtual plane above the top plane: super nodes
// (DualWalkCuda.cuh), every super node with itself and every later one.
void fofTopPairs(Index topNodes, FofPairList& list, cudaStream_t stream);

// Groups of the top plane: every node its own root, linked when its box
// diagonal is at most l.
template <class T>
void fofInitTopGroups(const DevicePlane<T>& plane, const Periodicity& per, double l2,
  FofPlaneGroups& out, cudaStream_t stream);

// ParentToNode (eq. 19): groups of plane p from the contracted groups of
// plane p + 1 (`up`, with `parent`).
template <class T>
void fofParentToNode(const DevicePlane<T>& up, const FofPlaneGroups& parent,
  const DevicePlane<T>& plane, const Periodicity& per, double l2, FofPlaneGroups& out,
  cudaStream_t stream);

// NodeToNode of one plane over the child pairs of `in` (pairs of the plane
// above; of super nodes when up == nullptr): links whole pairs into `groups`
// (compare-and-swap union), writes the undecided child pairs to `out`, and
// contracts the plane's group pointers.
template <class T>
void fofNodeWalkCuda(const DevicePlane<T>& plane, FofPlaneGroups& groups, const DevicePlane<T>* up,
  const FofPlaneGroups* parent, const FofPairList& in, FofPairList& out, const Periodicity& per,
  double l2, cudaStream_t stream, TempStorage& temp);

// Points: ParentToNode from the leaves into the point pointers g (sorted
// order), the leaf pairs point by point (d^2 <= l^2 in double, nearest
// image), then the final contraction: g[k] is the group's smallest sorted
// index.
template <class T>
void fofLeafWalkCuda(const DeviceTree<T>& tree, const FofPlaneGroups& leafGroups,
  const FofPairList& leafPairs, double l2, Index* g, cudaStream_t stream);

// Contracts group pointers (FofLabelsCuda.cu): every g[i] becomes the root
// of i. Checked afterwards when kDeviceAsserts (throws Error otherwise).
void fofContract(Index* g, Index n, cudaStream_t stream);

// Input-order outputs from the contracted point pointers: label = the
// smallest key (global id, or input index when ids is null) of the group,
// root = the input index of the group's root. Either output may be null.
// Asynchronous on the stream.
void fofLabelsCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId* label, Index* root, cudaStream_t stream);
} // namespace cuda
} // namespace jz
