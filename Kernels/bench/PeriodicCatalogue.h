// The host catalogue stage of the friends-of-friends benchmarks (CPU and
// CUDA): the catalogue of labelled groups in the periodic unit box.
#pragma once

#include <cstddef>
#include <vector>

#include "jz/Fof.h"

namespace jzbench
{
template <class T>
jz::FofCatalogue periodicCatalogue(
  const std::vector<T>& xyz, const std::vector<jz::GlobalId>& groupId, std::size_t numGroups)
{
  jz::FofCatalogueInput<T> in;
  in.points = xyz.data();
  in.numPoints = groupId.size();
  in.groupId = groupId.data();
  in.numGroups = numGroups;
  in.periodic = true;
  jz::FofCatalogue cat;
  jz::computeFofCatalogue(in, cat);
  return cat;
}
} // namespace jzbench
