// The z-order plane tree (§II-B..§II-E), host-side representation.
//
// Points of up to two types (sources and queries) are sorted jointly in
// z-order; tree-plane p partitions the sorted points into the largest z-order
// cells that hold at most kLeafSize * kCoarsening^p points of either type.
// Planes nest: every split of plane p+1 is a split of plane p, so node j of
// plane p+1 owns the contiguous children [childSplit[j], childSplit[j+1]) of
// plane p. Plane 0 holds the leaves.
#pragma once

#include <vector>

#include "Backend.h"
#include "Config.h"
#include "Geometry.h"

namespace jz
{
template <class T>
struct TreePlane
{
  // Node j covers sorted source points [sourceSplit[j], sourceSplit[j+1]) and
  // sorted query points [querySplit[j], querySplit[j+1]); size nodes + 1.
  std::vector<Index> sourceSplit;
  std::vector<Index> querySplit;
  // Children in the plane below (empty for plane 0); size nodes + 1.
  std::vector<Index> childSplit;
  // Morton level of the node's cell (kLevelNone for a single distinct point).
  std::vector<int> level;
  // Bounding boxes of the node's source and query points (empty boxes when
  // the node has none of that type). queryBox is empty for a self query.
  std::vector<Box<T>> sourceBox;
  std::vector<Box<T>> queryBox;

  Index numNodes() const { return sourceSplit.empty() ? 0 : Index(sourceSplit.size() - 1); }
  Index numSources(Index j) const { return sourceSplit[j + 1] - sourceSplit[j]; }
  Index numQueries(Index j) const { return querySplit[j + 1] - querySplit[j]; }
};

// Whether all points of a non-empty box coincide. The tree never splits a
// run of duplicates (TreeLevels.h), so a node with more than the leaf size in
// points is always such a run; the leaf kernels treat it as one weighted
// point (kNN: one query, the K smallest keys; FoF: one member).
template <class T>
JZ_HD bool boxIsPoint(const Box<T>& b)
{
  return b.lo[0] == b.hi[0] && b.lo[1] == b.hi[1] && b.lo[2] == b.hi[2];
}

// Readable (zero) elements after the last point of each coordinate array, so
// vector loops may load a full register past the end of a leaf.
constexpr Index kSimdPadding = 8;

// Coordinates in structure-of-arrays form, sorted in z-order, with the input
// index of each. x, y and z hold size() + kSimdPadding elements.
template <class T>
struct SortedPoints
{
  std::vector<T> x, y, z;
  std::vector<Index> inputIndex;
  Index size() const { return Index(inputIndex.size()); }
  void point(Index i, T* p) const
  {
    p[0] = x[i];
    p[1] = y[i];
    p[2] = z[i];
  }
};

template <class T>
struct ZTree
{
  Periodicity periodicity;
  bool selfQuery = true;
  SortedPoints<T> sources;
  SortedPoints<T> queries;          // empty for a self query (queries == sources)
  std::vector<TreePlane<T>> planes; // planes[0] = leaves

  const SortedPoints<T>& queryPoints() const { return selfQuery ? sources : queries; }
  const Box<T>& queryBox(int p, Index j) const
  {
    return selfQuery ? planes[p].sourceBox[j] : planes[p].queryBox[j];
  }
};

// The tuning values of the tree build (section II-C and II-D), taken by the
// CPU build (buildTreeCpu) and the CUDA build alike.
struct TreeBuildOptions
{
  int leafSize = kLeafSize;             // N_max^(0)
  int coarsening = kCoarsening;         // c
  int topNodesTarget = kTopNodesTarget; // N_target of the coarsest plane
  // Regularization (section II-D): the reference volume is that of the
  // smallest nodes holding this fraction of the points, and no node may be
  // more than regularizationFactor (f_max) times its mean volume.
  bool regularize = true;
  double regularizationQuantile = 0.9;
  double regularizationFactor = kRegularizationFactor;
};

// Builds the joint tree on the CPU with the calling OpenMP team. Coordinates
// are interleaved xyz; queries == nullptr builds a self-query tree. With a
// periodic box (periodicity.enabled()), points are wrapped into
// [boxLo, boxLo + length) first. Throws Error on non-finite coordinates.
// With info, the build's own stages are added to info->stageSeconds
// ("tree: z-order sort", "tree: gather", "tree: cell counts", "tree: planes").
template <class T>
void buildTreeCpu(const T* sources, Index numSources, const T* queries, Index numQueries,
  const Periodicity& periodicity, const double* boxLo, const TreeBuildOptions& options,
  ZTree<T>& tree, const RunControl& control, RunInfo* info = nullptr);

// Number of planes for n points: coarsen until the estimated node count
// n / (Nmax / 2) drops below the target (eq. 9).
int numberOfPlanes(std::size_t n, const TreeBuildOptions& options);
} // namespace jz
