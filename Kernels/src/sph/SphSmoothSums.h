// SPHSmooth's per-particle sums over the K neighbours (the definitions of
// jz/SphSmooth.h), multi-threaded over the particles.
#pragma once

#include <vector>

#include "jz/Backend.h"
#include "jz/Geometry.h"
#include "jz/SphSmooth.h"
#include "sph/SphSmoothParticles.h"

namespace jz
{
// Particle i (rows 0..numLocal-1) has the neighbour rows
// neighbourRows[i k .. i k + k - 1] and the smoothing length h[i]. Writes
// every wanted output of `out` (one entry per field). The particles are
// visited in `order` (all numLocal rows; the z-order, so that particles
// visited together share their neighbours' rows in the cache). Reports
// progress and throws Aborted when asked to stop.
template <class T>
void sphSmoothSums(const SphSmoothParticles<T>& particles, const GlobalId* neighbourRows, int k,
  const T* h, const Periodicity& periodicity, const std::vector<Index>& order,
  const std::vector<SphFieldResults>& out, const RunControl& control);
} // namespace jz
