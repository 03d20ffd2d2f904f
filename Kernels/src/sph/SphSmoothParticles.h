// What SPHSmooth's sums read of a neighbour: position, mass, density and
// field values, by row. Rows 0..numLocal-1 are this rank's particles (read
// in place), the rows after them the ghosts fetched from other ranks
// (SphSmoothExchange.h), in the order of their sorted global ids.
#pragma once

#include <vector>

#include "jz/Config.h"
#include "jz/Geometry.h"
#include "jz/SphSmooth.h"

namespace jz
{
template <class T>
struct SphSmoothParticles
{
  std::size_t numLocal = 0;
  const T* points = nullptr;
  const double* masses = nullptr; // nullptr = unit mass
  const T* density = nullptr;
  const std::vector<SphField>* fields = nullptr;
  int totalComponents = 0; // over all fields
  // The periodic box: positions are read wrapped into it as the kNN's tree
  // reads them (treeCoordinate), so distances are the kNN's.
  Periodicity periodicity;
  double boxLo[3] = { 0, 0, 0 };

  // Ghost rows, one record of ghostStride() doubles each:
  // x y z, mass, density, then every field's components in field order.
  std::vector<double> ghosts;

  int ghostStride() const { return 5 + totalComponents; }

  void position(Index row, double x[3]) const
  {
    if (row < numLocal)
    {
      for (int d = 0; d < 3; ++d)
        x[d] =
          double(treeCoordinate(points[3 * std::size_t(row) + d], boxLo[d], periodicity.length[d]));
      return;
    }
    const double* g = ghost(row);
    for (int d = 0; d < 3; ++d)
      x[d] = g[d];
  }
  double mass(Index row) const
  {
    if (row < numLocal)
      return masses ? masses[row] : 1.0;
    return ghost(row)[3];
  }
  double rho(Index row) const { return row < numLocal ? double(density[row]) : ghost(row)[4]; }
  // The components of field f at `row`; `offset` is the field's first
  // component among all fields'.
  const double* values(Index row, int f, int offset) const
  {
    if (row < numLocal)
      return (*fields)[f].values + std::size_t(row) * (*fields)[f].components;
    return ghost(row) + 5 + offset;
  }

private:
  const double* ghost(Index row) const
  {
    return ghosts.data() + (std::size_t(row) - numLocal) * std::size_t(ghostStride());
  }
};
} // namespace jz
