// The second exchange of the distributed SPHSmooth: the kNN reports each
// particle's neighbours by global id, and those held by other ranks come
// with their position, mass, density and field values, fetched by id
// through a directory (rank = hash of the id), so no rank needs to know
// where an id lives.
#pragma once

#include <vector>

#include "jz/Communicator.h"
#include "sph/SphSmoothParticles.h"

namespace jz
{
// Fills particles.ghosts with one record per id of `wanted` (sorted, unique,
// none of them local), in that order. localIds are the global ids of this
// rank's particles. Collective; throws the same Error on every rank when an
// id is held by no rank.
template <class T>
void fetchSphSmoothGhosts(SphSmoothParticles<T>& particles, const GlobalId* localIds,
  const std::vector<GlobalId>& wanted, Communicator& comm);
} // namespace jz
