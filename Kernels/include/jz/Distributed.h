// kNN and friends-of-friends over several processes (MPI ranks), exact for
// any number of ranks and any partition (doc/filters, "Parallel runs").
//
// Both follow the decomposition of §II-A: points are redistributed so
// that every rank holds a contiguous, count-balanced range of the global
// z-order; each rank then receives the remote points that can matter to it
// (for kNN the sources within a proven K-th neighbour radius of its queries,
// for FoF the points within one linking length of its points), runs the
// single-process algorithm, and the results travel back to the rank and
// position their input point came from. With one rank they reduce to the
// single-process functions.
#pragma once

#include <vector>

#include "Communicator.h"
#include "Fof.h"
#include "Knn.h"

namespace jz
{
// problem holds this rank's sources (and queries, or none for a self query).
// problem.sourceIds must be global ids, unique over all ranks: they are what
// NeighborIds report and what breaks distance ties, so results do not depend
// on the partition. Results are for the local queries, in local order.
// Input errors on any rank throw the same Error on every rank.
template <class T>
RunInfo computeKnnDistributed(const KnnProblem<T>& problem, const KnnResults<T>& results,
  Communicator& comm, Backend backend = Backend::Auto, const RunControl& control = {});

extern template RunInfo computeKnnDistributed<float>(
  const KnnProblem<float>&, const KnnResults<float>&, Communicator&, Backend, const RunControl&);
extern template RunInfo computeKnnDistributed<double>(
  const KnnProblem<double>&, const KnnResults<double>&, Communicator&, Backend, const RunControl&);

struct FofDistributedOptions
{
  GlobalId minimumGroupSize = 20;
  const double* masses = nullptr;     // per local point; nullptr = unit mass
  const double* velocities = nullptr; // interleaved xyz per local point; nullptr = none
  // Where GroupId and GroupSize go (numPoints each), when the caller has
  // the arrays already (one copy fewer); nullptr = into the result's vectors.
  GlobalId* groupIdOut = nullptr;
  GlobalId* groupSizeOut = nullptr;
};

struct FofDistributedResult
{
  // Per local point, in local input order (empty when the options named
  // arrays for them).
  std::vector<GlobalId> groupId;   // 0..G-1 by descending size, ties by smallest id; -1 if small
  std::vector<GlobalId> groupSize; // members of the point's group, any size
  // The catalogue rows this rank owns (every kept group is owned by exactly
  // one rank), and their GroupIds.
  FofCatalogue catalogue;
  std::vector<GlobalId> catalogueGroupId;
  std::size_t numGroups = 0; // G, over all ranks
};

// problem.ids must be global ids, unique over all ranks (they define the
// GroupId tie-break).
template <class T>
RunInfo computeFofDistributed(const FofProblem<T>& problem, const FofDistributedOptions& options,
  FofDistributedResult& result, Communicator& comm, Backend backend = Backend::Auto,
  const RunControl& control = {});

extern template RunInfo computeFofDistributed<float>(const FofProblem<float>&,
  const FofDistributedOptions&, FofDistributedResult&, Communicator&, Backend, const RunControl&);
extern template RunInfo computeFofDistributed<double>(const FofProblem<double>&,
  const FofDistributedOptions&, FofDistributedResult&, Communicator&, Backend, const RunControl&);
} // namespace jz
