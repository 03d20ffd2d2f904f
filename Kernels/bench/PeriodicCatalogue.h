// The host catalogue stage of the friends-of-friends benchmarks (CPU and
// CUDA): the catalogue of labelled groups in the periodic unit box.
#pragma once

#include <cstddef>
#include <vector>

#include "../tests/Problems.h"
#include "jz/Fof.h"

namespace jzbench
{
template <class T>
jz::FofCatalogue periodicCatalogue(
  const std::vector<T>& xyz, const std::vector<jz::GlobalId>& groupId, std::size_t numGroups)
{
  const jz::FofCatalogueInput<T> in = jz::fofCatalogueInputFor(
    jztest::fofProblem(xyz.data(), groupId.size(), 0.0, true), groupId.data(), numGroups, nullptr, nullptr);
  jz::FofCatalogue cat;
  jz::computeFofCatalogue(in, cat);
  return cat;
}
} // namespace jzbench
