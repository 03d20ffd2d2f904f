// A minimum shared by worker threads: relaxed loads and a compare-and-swap
// loop that only ever lowers the slot (bounds and labels need no ordering
// with other memory; the walks' joins publish them).
#pragma once

namespace jz
{
template <class V>
inline V atomicLoadRelaxed(const V* slot)
{
  V v;
  __atomic_load(slot, &v, __ATOMIC_RELAXED);
  return v;
}

template <class V>
inline void atomicMin(V* slot, V value)
{
  V seen = atomicLoadRelaxed(slot);
  while (value < seen &&
    !__atomic_compare_exchange(slot, &seen, &value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
  {
  }
}
} // namespace jz
