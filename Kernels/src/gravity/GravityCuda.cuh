// Tree gravity on the GPU: declarations shared by the multipoles
// (GravityMomentsCuda.cu), the walk (GravityWalkCuda.cu) and the driver
// (GravityCuda.cu). The algorithm is the CPU's group walk (GravityPolicy.h)
// without its fast multipole part: per plane, a source node whose quadrupole
// is acceptable for every point of a receiver (multipoleAcceptable,
// GravityTerms.h, the CPU's criterion) or an exact point mass (all its points
// at one position) is applied to the receiver's points (M2P); the others are
// opened, down to the leaves' direct sums (P2P). All terms in double.
#pragma once

#include <functional>
#include <vector>

#include "gravity/GravityTerms.h"
#include "walk/DualWalkCuda.cuh"

namespace jz
{
namespace cuda
{
// Per-plane multipoles in device memory: moments[p][j] of node j of plane p
// (the CPU's gravityMoments, GravityMoments.h, term for term).
template <class T>
void gravityMomentsCuda(const DeviceTree<T>& tree, const double* mass,
  std::vector<DeviceBuffer<GravityMoments>>& moments, cudaStream_t stream);

// What the walk's kernels need besides the tree.
struct GravityWalkInputs
{
  const double* mass = nullptr; // per sorted source
  // Per sorted query: the sorted source it is (excluded from its sums), for
  // queries that are sources (queriesFromSource); null otherwise. A self
  // query excludes itself (query q is source q).
  const Index* ownSource = nullptr;
  double theta = 0.5;
  double eps2 = 0;
  // Per sorted query: U and grad U, zeroed, summed into (4 x numQueries).
  double* u = nullptr;
  double* gx = nullptr;
  double* gy = nullptr;
  double* gz = nullptr;
  // Device asserts only (kDeviceAsserts), else null: per sorted query, the
  // mass of every source term added (zeroed, summed into), which must be
  // the total mass less the query's own (every source counted once).
  double* massSeen = nullptr;
};

// The walk (GravityWalkCuda.cu): the engine's planes from the super nodes
// down, each plane's accepted multipoles applied after its Insert, then the
// leaf pass (direct sums and the leaves' accepted multipoles) batch by batch.
// planeDone(p) runs after each plane (progress; may throw Aborted).
template <class T>
void gravityWalkCuda(const DeviceTree<T>& tree,
  const std::vector<DeviceBuffer<GravityMoments>>& moments, const GravityWalkInputs& in,
  cudaStream_t stream, TempStorage& temp, RunInfo& info, const std::function<void(int)>& planeDone);
} // namespace cuda
} // namespace jz
