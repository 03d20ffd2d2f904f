// HDBSCAN* density clusters (Campello, Moulavi, Zimek, Sander 2015) with the
// semantics of the reference Python library hdbscan 0.8.33: the
// mutual-reachability EMST (Emst.h), its single-linkage hierarchy, the
// condensed tree, cluster selection by excess of mass or leaf, membership
// probabilities and GLOSH outlier scores. VTK-free.
#pragma once

#include <cstddef>
#include <vector>

#include "Backend.h"
#include "Communicator.h"
#include "Config.h"
#include "Emst.h"

namespace jz
{
enum class ClusterSelection
{
  ExcessOfMass,
  Leaf
};

struct HdbscanOptions
{
  int minClusterSize = 20;
  int minSamples = 0; // 0 = minClusterSize; the library's min(n - 1, .) and 0 -> 1 apply
  ClusterSelection selection = ClusterSelection::ExcessOfMass;
  bool allowSingleCluster = false;
};

// Per point (input order).
struct HdbscanResult
{
  // -1 noise; clusters 0..C-1 by descending size, ties by the smallest
  // global id in the cluster.
  std::vector<GlobalId> clusterId;
  std::vector<double> probability;  // membership strength in [0, 1]
  std::vector<double> outlierScore; // GLOSH
  std::vector<double> coreDistance; // to the minSamples-th nearest other point
  std::size_t numClusters = 0;
};

// The min_samples the library uses for n points.
int hdbscanMinSamples(const HdbscanOptions& options, std::size_t n);

// Clusters from a mutual-reachability tree of n points whose edges are
// sorted by (weight, smaller id, larger id) (computeEmst's order); ids may
// be null (input index). The tree is taken over and freed as soon as its
// hierarchy is built (callers move it in).
void hdbscanFromTree(EmstEdges tree, std::size_t n, const GlobalId* ids,
  const HdbscanOptions& options, HdbscanResult& result);

// Validates, computes the tree (Emst.h) and the clusters. Throws Error
// (MinClusterSize < 2, MinSamples < 0, and EmstProblem's rules).
template <class T>
RunInfo computeHdbscan(const EmstProblem<T>& points, const HdbscanOptions& options,
  HdbscanResult& result, Backend backend = Backend::Auto, const RunControl& control = {});

// One rank's piece (ids required): the clusters of the union of the pieces,
// results for this rank's points. The pieces are gathered (memory grows with
// the global count).
template <class T>
RunInfo computeHdbscanDistributed(const EmstProblem<T>& piece, const HdbscanOptions& options,
  Communicator& comm, HdbscanResult& result, Backend backend = Backend::Auto,
  const RunControl& control = {});

// The message of the first broken option rule, or "".
std::string hdbscanOptionsError(const HdbscanOptions& options);

extern template RunInfo computeHdbscan<float>(
  const EmstProblem<float>&, const HdbscanOptions&, HdbscanResult&, Backend, const RunControl&);
extern template RunInfo computeHdbscan<double>(
  const EmstProblem<double>&, const HdbscanOptions&, HdbscanResult&, Backend, const RunControl&);
extern template RunInfo computeHdbscanDistributed<float>(const EmstProblem<float>&,
  const HdbscanOptions&, Communicator&, HdbscanResult&, Backend, const RunControl&);
extern template RunInfo computeHdbscanDistributed<double>(const EmstProblem<double>&,
  const HdbscanOptions&, Communicator&, HdbscanResult&, Backend, const RunControl&);
} // namespace jz
