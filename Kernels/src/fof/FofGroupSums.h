// One group's catalogue sums in computeFofCatalogue's order, as the GPU
// catalogue computes them (FofHalosCuda.cu, a warp per group) and
// as TestFof's FofGroupSumsFollowTheCpuOrder checks them against the CPU:
// the members in input order, chunk by chunk (FofCatalogueChunks.h), each
// chunk summed from the reference member, the chunks merged in chunk order,
// empty ones too (a merge of nothing can still turn a -0 into +0).
#pragma once

#include <cstddef>

#include "fof/FofCatalogueChunks.h"
#include "fof/GroupMoments.h"

namespace jz
{
// The chunk-ordered summing of one group: fed its members' addends in input
// order, it sums each chunk's from the reference and merges the chunks'
// sums in chunk order, all numChunks of them. The one home of that order for
// fofGroupSums below and the GPU catalogue's warp per group.
class FofChunkFold
{
public:
  JZ_HD FofChunkFold(const GroupMoments& empty, std::size_t n, std::size_t numChunks)
    : total_(empty)
    , part_(empty)
    , n_(n)
    , numChunks_(numChunks)
    , chunkEnd_(fofCatalogueChunkBegin(n, 1, numChunks))
  {
  }

  // The next member (input index i, not below the previous one's).
  JZ_HD void add(std::size_t i, const GroupMoments::Terms& t, const double* period)
  {
    while (i >= chunkEnd_)
      nextChunk(period);
    part_.addTerms(t);
  }

  JZ_HD GroupMoments finish(const double* period)
  {
    while (chunk_ < numChunks_)
      nextChunk(period);
    return total_;
  }

private:
  JZ_HD void nextChunk(const double* period)
  {
    total_.merge(part_, period);
    part_ = GroupMoments::around(total_.label, total_.ref, total_.vref);
    ++chunk_;
    chunkEnd_ = fofCatalogueChunkBegin(n_, chunk_ + 1, numChunks_);
  }

  GroupMoments total_, part_;
  std::size_t n_, numChunks_, chunk_ = 0, chunkEnd_;
};

// member: the group's input indices, ascending; reference: its member with
// the smallest global id (the first such); xyz as given (not wrapped);
// masses and velocities nullable; period[d] 0 where not periodic.
template <class T>
JZ_HD GroupMoments fofGroupSums(GlobalId group, const Index* member, Index count, Index reference,
  const T* xyz, const double* masses, const double* velocities, std::size_t n,
  std::size_t numChunks, const double* period)
{
  double x[kDim];
  for (int d = 0; d < kDim; ++d)
    x[d] = double(xyz[3 * std::size_t(reference) + d]);
  const double* vref = velocities ? velocities + 3 * std::size_t(reference) : nullptr;
  const GroupMoments empty = GroupMoments::around(group, x, vref);
  FofChunkFold fold(empty, n, numChunks);
  for (Index t = 0; t < count; ++t)
  {
    const std::size_t i = member[t];
    double p[kDim];
    for (int d = 0; d < kDim; ++d)
      p[d] = double(xyz[3 * i + d]);
    fold.add(i,
      empty.terms(p, masses ? masses[i] : 1.0, velocities ? velocities + 3 * i : nullptr, period),
      period);
  }
  return fold.finish(period);
}
} // namespace jz
