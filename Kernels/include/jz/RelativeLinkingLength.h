// The relative linking length of a point set spread over ranks:
// l = b (V/N)^(1/3) (LinkingLength.h), V the volume of the periodic box, or
// else of the bounding box of all ranks' points, N all ranks' points. The one
// home of that volume for the FriendsOfFriends filter and jztree.fof.
#pragma once

#include <algorithm>
#include <cstddef>

#include "Communicator.h"
#include "LinkingLength.h"

namespace jz
{
// box: xmin, xmax, ymin, ymax, zmin, zmax (the periodic box; unused when not
// periodic). Writes V to *volume; returns l, 0 when V is 0 (flat data) or
// not finite (the caller reports that Relative mode needs a volume).
// Collective over comm when not periodic (every rank calls it).
template <class T>
double relativeLinkingLengthOver(Communicator& comm, const T* xyz, std::size_t n,
  std::size_t totalPoints, double b, bool periodic, const double box[6], double* volume)
{
  double bounds[6];
  if (periodic)
    std::copy_n(box, 6, bounds);
  else
  {
    // As (-min, max), so that one reduction gives the global box.
    double negLoHi[6];
    std::fill_n(negLoHi, 6, -__builtin_huge_val());
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d)
      {
        const double x = double(xyz[3 * i + d]);
        negLoHi[2 * d] = std::max(negLoHi[2 * d], -x);
        negLoHi[2 * d + 1] = std::max(negLoHi[2 * d + 1], x);
      }
    comm.allReduceMax(negLoHi, 6);
    for (int d = 0; d < 3; ++d)
    {
      bounds[2 * d] = -negLoHi[2 * d];
      bounds[2 * d + 1] = negLoHi[2 * d + 1];
    }
  }
  *volume = (bounds[1] - bounds[0]) * (bounds[3] - bounds[2]) * (bounds[5] - bounds[4]);
  return relativeLinkingLength(b, *volume, totalPoints);
}
} // namespace jz
