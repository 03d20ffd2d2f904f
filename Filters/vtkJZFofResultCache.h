/**
 * @file   vtkJZFofResultCache.h
 * @brief  FriendsOfFriends' finished results per time step of a time series,
 * so that showing a step again (scrubbing the time slider, HaloTracking's
 * later frames) reuses them instead of running FoF again.
 *
 * Not vtkJZFofTreeCache: that one keeps the minimum spanning tree of the
 * last input to cut it at a new LinkingLength; this one keeps whole outputs
 * (GroupId, GroupSize, the catalogue) of several steps at the same
 * properties. An entry is reused only for the same time, the same number of
 * points, the same derived settings (linking length, box, precision) and the
 * same content hash (jz/ContentHash.h) of the coordinates, GlobalIds,
 * masses and velocities: an input that changed without a new time or
 * MTime is recomputed. Every entry is dropped when the filter's pipeline
 * MTime changes (a FoF property, the input connection, an upstream filter).
 * Memory: the entries' arrays stay under BudgetBytes(), least recently used
 * dropped first. The caller agrees on a hit over the MPI ranks.
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZFofResultCache_h
#define vtkJZFofResultCache_h

#include "vtkDataArray.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"
#include "vtkType.h"

#include "jz/Backend.h"

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

namespace vtkJZKernelAdapter
{
struct ParticleInput;
}

class vtkJZFofResultCache
{
public:
  /// FriendsOfFriends' outputs of one execution.
  struct Result
  {
    /// One tuple per point of the Input's pieces, concatenated (GetLeaves order).
    vtkSmartPointer<vtkDataArray> GroupId, GroupSize;
    /// Output port 1, with its field data.
    vtkSmartPointer<vtkPolyData> Catalogue;
    jz::Backend Backend = jz::Backend::CPU;
    /// The kernels' warnings (FoF, then the catalogue additions), reported
    /// again when the result is reused.
    std::vector<std::string> Warnings, AdditionsWarnings;
  };

  /// What identifies an input and its derived settings at one time step.
  struct Key
  {
    double Time = 0;
    std::size_t NumPoints = 0;    // this rank's points
    std::uint64_t Content = 0;    // Hash() of this rank's input
    std::vector<double> Settings; // linking length, box, precision, ...
    bool operator==(const Key& o) const;
  };

  /// The content hash of this rank's coordinates (in the run's precision),
  /// GlobalIds, masses and velocities. O(N), far cheaper than FoF.
  static std::uint64_t Hash(const vtkJZKernelAdapter::ParticleInput& in);

  /// Drops every entry when `pipelineMTime` differs from the last call's.
  void Validate(vtkMTimeType pipelineMTime);

  /// The entry of `key` (now the most recently used), or null.
  const Result* Find(const Key& key);

  /// Keeps `result` under `key`, dropping the least recently used entries to
  /// stay within BudgetBytes(); a result larger than the budget is not kept.
  void Store(const Key& key, const Result& result);

  void Clear();

  /// Number of entries (for tests and PrintSelf).
  std::size_t Size() const { return this->Entries.size(); }

  /// The memory the entries may hold: the environment variable
  /// JZ_FOF_RESULT_CACHE_BYTES when set, else an eighth of the physical
  /// memory (1 GiB where that is unknown).
  static std::size_t BudgetBytes();

private:
  struct Entry
  {
    Key K;
    Result R;
    std::size_t Bytes = 0;
  };
  std::list<Entry> Entries; // most recently used first
  std::size_t Bytes = 0;
  vtkMTimeType PipelineMTime = 0;
};

#endif
// VTK-HeaderTest-Exclude: vtkJZFofResultCache.h
