// Bounded candidate lists of the kNN walk, shared by host and device code.
#pragma once

#include "Config.h"

namespace jz
{
// The K best candidates seen so far as (distance^2, source) pairs, kept
// sorted ascending in caller-provided storage (registers or shared memory on
// the GPU, a stack buffer on the CPU). Sources are sorted-point indices; ties
// in distance are broken by the smaller key (global id) of the source, so
// results never depend on the order in which candidates arrive: serial,
// threaded, GPU and MPI runs agree, and no source can be inserted twice.
struct NeighborHeap
{
  double* d2;
  Index* src;
  const GlobalId* keys;
  int k;
  int size;
  double bound2; // accept nothing farther than this (a proven upper bound)

  JZ_HD void init(
    double* d2Storage, Index* srcStorage, const GlobalId* sourceKeys, int kIn, double initialBound2)
  {
    d2 = d2Storage;
    src = srcStorage;
    keys = sourceKeys;
    k = kIn;
    size = 0;
    bound2 = initialBound2;
  }

  // Squared radius a candidate must not exceed to be considered.
  JZ_HD double worst2() const { return size < k ? bound2 : d2[k - 1]; }

  JZ_HD bool before(double ad2, Index a, double bd2, Index b) const
  {
    return ad2 < bd2 || (ad2 == bd2 && keys[a] < keys[b]);
  }

  JZ_HD bool accepts(double cd2, Index s) const
  {
    if (size < k)
      return cd2 <= bound2;
    return before(cd2, s, d2[k - 1], src[k - 1]);
  }

  JZ_HD void push(double cd2, Index s)
  {
    if (!accepts(cd2, s))
      return;
    int i = size < k ? size++ : k - 1;
    while (i > 0 && before(cd2, s, d2[i - 1], src[i - 1]))
    {
      d2[i] = d2[i - 1];
      src[i] = src[i - 1];
      --i;
    }
    d2[i] = cd2;
    src[i] = s;
  }
};

// Upper bound on the K-th neighbour distance of every point of a receiving
// node, from (d_up^2, count) pairs of source nodes (FindRmax, section III-B).
// Holds at most kCapacity entries sorted by radius; entries beyond the one
// where the cumulative count reaches K are dropped, and on overflow the two
// largest radii are merged into the larger one, which keeps the bound valid.
struct RadiusOfCountHeap
{
  static constexpr int kCapacity = 16;
  double r2[kCapacity];
  std::uint32_t count[kCapacity];
  int size;
  std::uint64_t k;

  JZ_HD void init(std::uint64_t kIn)
  {
    size = 0;
    k = kIn;
  }

  JZ_HD double radius2() const
  {
    std::uint64_t c = 0;
    for (int i = 0; i < size; ++i)
    {
      c += count[i];
      if (c >= k)
        return r2[i];
    }
    return kInfinity;
  }

  JZ_HD void insert(double cr2, std::uint32_t n)
  {
    if (n == 0)
      return;
    if (size == kCapacity)
    {
      // Merge the two largest radii into the larger one to make room.
      count[kCapacity - 2] += count[kCapacity - 1];
      r2[kCapacity - 2] = r2[kCapacity - 1];
      size = kCapacity - 1;
    }
    int i = size++;
    while (i > 0 && r2[i - 1] > cr2)
    {
      r2[i] = r2[i - 1];
      count[i] = count[i - 1];
      --i;
    }
    r2[i] = cr2;
    count[i] = n;
    trim();
  }

  // Drop entries past the one where the cumulative count reaches K.
  JZ_HD void trim()
  {
    std::uint64_t c = 0;
    for (int i = 0; i < size; ++i)
    {
      c += count[i];
      if (c >= k)
      {
        size = i + 1;
        return;
      }
    }
  }
};
} // namespace jz
