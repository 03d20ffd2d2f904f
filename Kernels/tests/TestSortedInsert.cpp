// insertSorted (walk/LeafDistances.h), the kNN leaf walk's insert into a
// query's candidate list, against a reference insert (std::upper_bound):
// every list length across several blocks of 8, every insertion point,
// ties (the newcomer goes after equal entries), and the +infinity slots
// past the list, which must stay +infinity. On x86-64 with AVX2 the float
// case runs the vectorized insert; double (and float elsewhere) the scalar.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "TestHarness.h"
#include "walk/LeafDistances.h"

namespace
{
constexpr jz::Index kCapacity = 80;

// A 64-byte aligned slice of distances and sources as the leaf walk keeps
// them: +infinity past the list, a block of scratch past the capacity.
template <class T>
struct Slice
{
  std::vector<T> dStore = std::vector<T>(kCapacity + 8 + 64 / sizeof(T));
  std::vector<jz::Index> srcStore = std::vector<jz::Index>(kCapacity + 8 + 16);
  T* d = align(dStore.data());
  jz::Index* src = align(srcStore.data());

  template <class E>
  static E* align(E* p)
  {
    return p + (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64 / sizeof(E);
  }
};

// Inserts n values (drawn from `levels` distinct ones when levels > 0, so
// with ties) one by one into a slice and into a reference list; checks both
// after each insert.
template <class T>
void insertAndCompare(jz::Index n, int levels, std::mt19937_64& rng)
{
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> level(0, std::max(levels - 1, 0));
  Slice<T> slice;
  std::fill(slice.d, slice.d + kCapacity + 8, std::numeric_limits<T>::infinity());
  std::vector<std::pair<T, jz::Index>> reference;
  for (jz::Index i = 0; i < n; ++i)
  {
    const T d2 = levels > 0 ? T(level(rng)) / T(levels) : T(u(rng));
    jz::insertSorted(slice.d, slice.src, i, d2, i);
    const auto at = std::upper_bound(reference.begin(), reference.end(), d2,
      [](T x, const std::pair<T, jz::Index>& e) { return x < e.first; });
    reference.insert(at, { d2, i });
    for (jz::Index j = 0; j <= i; ++j)
    {
      JZ_CHECK_MSG(slice.d[j] == reference[j].first, "size " << i + 1 << " slot " << j);
      JZ_CHECK_MSG(slice.src[j] == reference[j].second, "size " << i + 1 << " slot " << j);
    }
    for (jz::Index j = i + 1; j < kCapacity + 8; ++j)
      JZ_CHECK_MSG(
        slice.d[j] == std::numeric_limits<T>::infinity(), "slot " << j << " past the list");
  }
}

template <class T>
void checkInserts()
{
  std::mt19937_64 rng(20);
  for (int levels : { 0, 1, 3, 17 })
    for (int round = 0; round < 20; ++round)
      insertAndCompare<T>(kCapacity, levels, rng);
}

// Every insertion point of every list length, into lists of distinct
// values: below all, between each pair, equal to each, above all.
template <class T>
void checkEveryPosition()
{
  for (jz::Index n = 0; n < kCapacity; ++n)
    for (jz::Index k = 0; k <= 2 * n; ++k)
    {
      Slice<T> slice;
      std::fill(slice.d, slice.d + kCapacity + 8, std::numeric_limits<T>::infinity());
      for (jz::Index i = 0; i < n; ++i)
      {
        slice.d[i] = T(2 * i + 1);
        slice.src[i] = i;
      }
      const T d2 = T(k); // even: between two entries; odd: equal to entry (k - 1) / 2
      const jz::Index expected = (k + 1) / 2;
      jz::insertSorted(slice.d, slice.src, n, d2, kCapacity);
      for (jz::Index j = 0; j <= n; ++j)
      {
        const T want = j < expected ? T(2 * j + 1) : j == expected ? d2 : T(2 * j - 1);
        const jz::Index wantSrc = j < expected ? j : j == expected ? kCapacity : j - 1;
        JZ_CHECK_MSG(slice.d[j] == want, "n " << n << " d2 " << k << " slot " << j);
        JZ_CHECK_MSG(slice.src[j] == wantSrc, "n " << n << " d2 " << k << " slot " << j);
      }
      for (jz::Index j = n + 1; j < kCapacity + 8; ++j)
        JZ_CHECK_MSG(slice.d[j] == std::numeric_limits<T>::infinity(), "n " << n << " slot " << j);
    }
}
} // namespace

JZ_TEST_FLOAT_AND_DOUBLE(InsertsMatchTheReference, checkInserts)
JZ_TEST_FLOAT_AND_DOUBLE(EveryInsertionPoint, checkEveryPosition)

JZ_TEST_MAIN()
