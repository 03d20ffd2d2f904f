// The friends-of-friends dual tree walk on the GPU (§IV-A) on the dual-walk
// engine (DualWalkCuda.cuh): declarations shared by the node walk, the leaf
// walk, the labels and the driver.
//
// The walk mirrors FofCpu.cpp and shares its per-pair logic through
// jz/FofLinking.h (JZ_HD): per plane a group pointer grp[i] <= i into the
// plane and a flag linked[i] ("all points of the node are in one group").
#pragma once

#include <functional>

#include "fof/FofGroupOrder.h"
#include "fof/GroupMoments.h"
#include "walk/DualWalkCuda.cuh"
#include "jz/FofLinking.h"

namespace jz
{
namespace cuda
{
// Node-level groups of one plane.
struct FofPlaneGroups
{
  Index numNodes = 0;
  DeviceBuffer<Index> grp;
  DeviceBuffer<unsigned char> linked;
};

// The leaves' undecided pairs (a <= b; a == b: a leaf with itself) and the
// leaves' groups after the node planes.
struct FofLeafLevel
{
  WalkLevel pairs;
  FofPlaneGroups groups;
};

// The node planes of the walk (FofNodeWalkCuda.cu), from the super nodes down
// to the leaves. planeDone(p) runs after each plane (progress; may throw).
template <class T>
void fofNodeWalkCuda(const DeviceTree<T>& tree, double l2, cudaStream_t stream, TempStorage& temp,
  RunInfo& info, const std::function<void(int)>& planeDone, FofLeafLevel& leaves);

// Points (FofLeafWalkCuda.cu): ParentToNode from the leaves into the point
// pointers g (sorted order), the leaf pairs point by point (d^2 <= l^2 in
// double, nearest image), then the final contraction: g[k] is the group's
// smallest sorted index.
template <class T>
void fofLeafWalkCuda(
  const DeviceTree<T>& tree, const FofLeafLevel& leaves, double l2, Index* g, cudaStream_t stream);

// Contracts group pointers (FofLabelsCuda.cu): every g[i] becomes the root
// of i. Checked afterwards when kDeviceAsserts (throws Error otherwise).
void fofContract(Index* g, Index n, cudaStream_t stream);

// minKey[r] for every root r of the contracted pointers g: the smallest key
// (global id, or input index when ids is null) of its group. Asynchronous.
void fofMinKeysCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId* minKey, cudaStream_t stream);

// Input-order outputs from the contracted point pointers: label = the
// smallest key (global id, or input index when ids is null) of the group,
// root = the input index of the group's root. Either output may be null.
// Asynchronous on the stream.
void fofLabelsCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId* label, Index* root, cudaStream_t stream);
// The groups numbered on the device exactly as labelFofGroups numbers them
// (FofHalosCuda.cu).
struct FofDeviceNumbering
{
  Index numGroups = 0;              // G, the kept groups
  DeviceBuffer<GlobalId> groupId;   // n, input order: 0..G-1, -1 below the minimum size
  DeviceBuffer<GlobalId> groupSize; // n, input order: members of the point's group
  DeviceBuffer<FofKeptGroup> kept;  // G, in GroupId order
};

// From the contracted pointers g (sorted order) and the sorted points' input
// indices. Synchronises the stream (the number of kept groups).
void fofNumberGroupsCuda(const Index* g, const Index* sortedInput, Index n, const GlobalId* ids,
  GlobalId minimumGroupSize, cudaStream_t stream, TempStorage& temp, FofDeviceNumbering& out);

// What the catalogue reads, on the device, in input order.
template <class T>
struct FofDeviceCatalogueInput
{
  const T* xyz = nullptr; // interleaved, as given (not wrapped)
  Index n = 0;
  const GlobalId* ids = nullptr;      // null: the input index
  const double* masses = nullptr;     // null: unit masses
  const double* velocities = nullptr; // interleaved; null: none
  Periodicity periodicity;            // the nearest images of the sums
  int numChunks = 1;                  // fofCatalogueChunks of the CPU
};

// The catalogue's per-group sums in GroupId order (FofDeviceRows makes the
// rows), equal bit for bit to computeFofCatalogue's with
// in.numChunks chunks. Leaves sums empty when there are no kept groups.
template <class T>
void fofCatalogueSumsCuda(const FofDeviceNumbering& groups, const FofDeviceCatalogueInput<T>& in,
  cudaStream_t stream, TempStorage& temp, DeviceBuffer<GroupMoments>& sums);
// The catalogue's rows on the device, one array per FofCatalogue field
// (GroupMoments::row, the formula the CPU's appendRow uses).
struct FofDeviceRows
{
  DeviceBuffer<GlobalId> count;
  DeviceBuffer<double> mass, centerOfMass, inertiaRadius, meanVelocity, velocityDispersion;
  // From the sums (asynchronous); boxLo: the periodic box's low corner.
  void make(const DeviceBuffer<GroupMoments>& sums, const Periodicity& per, const double* boxLo,
    cudaStream_t stream);
};
} // namespace cuda
} // namespace jz
