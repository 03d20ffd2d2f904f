// One group's catalogue sums in computeFofCatalogue's order, as the GPU
// catalogue computes them (cuda/FofHalosCuda.cu, one thread per group) and
// as TestFof's FofGroupSumsFollowTheCpuOrder checks them against the CPU:
// the members in input order, chunk by chunk (FofCatalogueChunks.h), each
// chunk summed from the reference member, the chunks merged in chunk order,
// empty ones too (a merge of nothing can still turn a -0 into +0).
#pragma once

#include <cstddef>

#include "FofCatalogueChunks.h"
#include "GroupMoments.h"

namespace jz
{
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
  GroupMoments total = GroupMoments::around(group, x, vref);
  Index t = 0;
  for (std::size_t c = 0; c < numChunks; ++c)
  {
    const std::size_t chunkEnd = fofCatalogueChunkBegin(n, c + 1, numChunks);
    GroupMoments part = GroupMoments::around(group, x, vref);
    for (; t < count && std::size_t(member[t]) < chunkEnd; ++t)
    {
      const std::size_t i = member[t];
      double p[kDim];
      for (int d = 0; d < kDim; ++d)
        p[d] = double(xyz[3 * i + d]);
      part.add(p, masses ? masses[i] : 1.0, velocities ? velocities + 3 * i : nullptr, period);
    }
    total.merge(part, period);
  }
  return total;
}
} // namespace jz
