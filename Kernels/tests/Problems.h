// The kernels' problems as the tests, the benchmarks and the output digest
// set them up, in one place: the fields every caller names; the caller sets
// the rest (the kernels' defaults otherwise).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "jz/Fof.h"
#include "jz/Gravity.h"
#include "jz/HaloProperties.h"
#include "jz/Knn.h"

namespace jztest
{
// A periodic cube of side `length` from the corner `lo`.
template <class Problem>
void setPeriodicCube(Problem& p, const std::array<double, 3>& lo, double length)
{
  p.periodic = true;
  std::copy(lo.begin(), lo.end(), p.boxLo);
  for (int d = 0; d < 3; ++d)
    p.boxHi[d] = lo[d] + length;
}

// A problem of n sources (interleaved xyz): kNN, gravity.
template <class Problem, class T>
Problem onSources(const T* sources, std::size_t n)
{
  Problem p;
  p.sources = sources;
  p.numSources = n;
  return p;
}

// The K nearest of n sources among themselves.
template <class T>
jz::KnnProblem<T> knnProblem(const T* sources, std::size_t n, int k)
{
  auto p = onSources<jz::KnnProblem<T>>(sources, n);
  p.k = k;
  return p;
}

// Every kNN output into the given arrays (none for an empty one).
template <class T>
jz::KnnResults<T> knnResults(std::vector<T>& smoothingLength, std::vector<T>& density,
  std::vector<jz::GlobalId>& neighborIds, std::vector<T>& neighborDistances)
{
  auto data = [](auto& v) { return v.empty() ? nullptr : v.data(); };
  jz::KnnResults<T> r;
  r.smoothingLength = data(smoothingLength);
  r.density = data(density);
  r.neighborIds = data(neighborIds);
  r.neighborDistances = data(neighborDistances);
  return r;
}

template <class T>
jz::FofProblem<T> fofProblem(const T* points, std::size_t n, double linkingLength, bool periodic)
{
  jz::FofProblem<T> p;
  p.points = points;
  p.numPoints = n;
  p.linkingLength = linkingLength;
  p.periodic = periodic;
  return p;
}

// Self gravity of n sources with masses.
template <class T>
jz::GravityProblem<T> gravityProblem(
  const T* sources, std::size_t n, const double* masses, double openingAngle, double softening)
{
  auto p = onSources<jz::GravityProblem<T>>(sources, n);
  p.sourceMasses = masses;
  p.openingAngle = openingAngle;
  p.softening = softening;
  return p;
}

// The catalogue additions for numGroups groups (groupId per point), every
// row on this process, in group order (`catalogue`'s rows).
template <class T>
jz::HaloPropertiesInput<T> haloPropertiesInput(const T* points, std::size_t n, const double* masses,
  const jz::GlobalId* groupId, std::size_t numGroups, const jz::FofCatalogue& catalogue,
  bool periodic)
{
  jz::HaloPropertiesInput<T> in;
  in.points = points;
  in.numPoints = n;
  in.masses = masses;
  in.groupId = groupId;
  in.numGroups = numGroups;
  for (std::size_t g = 0; g < numGroups; ++g)
    in.rowGroupId.push_back(jz::GlobalId(g));
  in.rowCenterOfMass = catalogue.centerOfMass;
  in.rowMass = catalogue.mass;
  in.periodic = periodic;
  return in;
}
} // namespace jztest
