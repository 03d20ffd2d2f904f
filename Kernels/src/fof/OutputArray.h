// Where a kernel writes a per-point output: the caller's array when it gives
// one (a filter's VTK array, written in place), else the result's own vector.
#pragma once

#include <cstddef>
#include <vector>

namespace jz
{
template <class V>
V* outputOf(V* given, std::vector<V>& own, std::size_t n)
{
  if (given)
    return given;
  own.resize(n);
  return own.data();
}
} // namespace jz
