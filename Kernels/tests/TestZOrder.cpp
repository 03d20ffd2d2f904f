// The z-order comparator and Morton levels against an independent reference
// that writes every float out as an exact fixed-point bit string.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "TestHarness.h"
#include "jz/ZOrder.h"

namespace
{
// Order-preserving fixed-point encoding of v: a sign bit (1 for v >= 0) at
// position EMAX, then the bits of |v| at positions EMAX-1 .. kMinBit, inverted
// for negative values. Built from the value's integer mantissa and exponent
// with plain integer arithmetic, not from the comparator's bit tricks.
template <class T>
std::vector<int> encode(T v)
{
  using FB = jz::FloatBits<T>;
  const int top = FB::kExponentMax;
  const int bottom = FB::kMinBit;
  std::vector<int> bits(top - bottom + 1, 0);
  if (v == T(0))
    v = T(0); // -0 is +0
  const bool negative = std::signbit(v);
  int exp = 0;
  const T frac = std::frexp(std::fabs(v), &exp); // |v| = frac * 2^exp, frac in [0.5, 1)
  // Exact integer mantissa: |v| = m * 2^(exp - digits).
  const int digits = std::numeric_limits<T>::digits;
  unsigned long long m = (unsigned long long)std::ldexp(frac, digits);
  for (int i = 0; i < digits; ++i)
  {
    if (!((m >> i) & 1ull))
      continue;
    const int position = exp - digits + i;
    if (position < bottom || position > top - 1)
      throw std::runtime_error("out of range");
    bits[top - position] = 1;
  }
  bits[0] = negative ? 0 : 1;
  if (negative)
    for (std::size_t i = 1; i < bits.size(); ++i)
      bits[i] ^= 1;
  return bits;
}

template <class T>
struct Reference
{
  // First differing interleaved bit: position b and dimension k; or none.
  static bool firstDifference(const T* p, const T* q, int& position, int& dim)
  {
    std::vector<int> a[3], b[3];
    for (int d = 0; d < 3; ++d)
    {
      a[d] = encode(p[d]);
      b[d] = encode(q[d]);
    }
    const std::size_t width = a[0].size();
    for (std::size_t i = 0; i < width; ++i)
    {
      for (int d = 0; d < 3; ++d)
      {
        if (a[d][i] != b[d][i])
        {
          position = jz::FloatBits<T>::kExponentMax - int(i);
          dim = d;
          return true;
        }
      }
    }
    return false;
  }
  static bool less(const T* p, const T* q)
  {
    int position, dim;
    if (!firstDifference(p, q, position, dim))
      return false;
    return encode(p[dim])[jz::FloatBits<T>::kExponentMax - position] == 0;
  }
  static int level(const T* p, const T* q)
  {
    int position, dim;
    if (!firstDifference(p, q, position, dim))
      return jz::kLevelNone;
    return (position + 1) * 3 - dim;
  }
};

template <class T>
std::vector<T> interestingValues()
{
  using L = std::numeric_limits<T>;
  std::vector<T> v = { T(0), T(1), T(-1), T(0.5), T(-0.5), T(0.75), T(3), T(-3), T(1e-3), T(1e3),
    L::min(), -L::min(), L::denorm_min(), -L::denorm_min(), T(3) * L::denorm_min(),
    L::min() - L::denorm_min(), L::max(), -L::max(), L::max() / T(3), T(1) + L::epsilon(),
    T(1) - L::epsilon() / 2, T(1e6) + T(0.25), T(1e6), T(-1e6), T(2), T(4) };
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> e(L::min_exponent - L::digits, L::max_exponent - 1);
  std::uniform_real_distribution<double> u(0.5, 1.0);
  for (int i = 0; i < 60; ++i)
  {
    T x = T(std::ldexp(u(rng), e(rng)));
    v.push_back(i % 2 ? -x : x);
  }
  return v;
}

template <class T>
void checkAgainstReference()
{
  const std::vector<T> values = interestingValues<T>();
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::uniform_real_distribution<double> unit(-1, 1);
  int mismatches = 0;
  for (int trial = 0; trial < 20000; ++trial)
  {
    T p[3], q[3];
    for (int d = 0; d < 3; ++d)
    {
      p[d] = values[pick(rng)];
      // Often share coordinates so that deeper dimensions decide.
      q[d] = (trial % 3 == 0) ? p[d] : values[pick(rng)];
      if (trial % 5 == 0)
        q[d] = p[d] + T(unit(rng)) * std::fabs(p[d]) * T(1e-3);
      if (!std::isfinite(q[d]))
        q[d] = p[d];
    }
    const bool want = Reference<T>::less(p, q);
    const bool got = jz::zLess(p, q);
    const int wantLevel = Reference<T>::level(p, q);
    const int gotLevel = jz::mortonLevel(p, q);
    if (want != got || wantLevel != gotLevel)
    {
      if (++mismatches < 5)
      {
        JZ_CHECK_MSG(false,
          "p=(" << p[0] << "," << p[1] << "," << p[2] << ") q=(" << q[0] << "," << q[1] << ","
                << q[2] << ") less " << got << " want " << want << " level " << gotLevel << " want "
                << wantLevel);
      }
    }
  }
  JZ_CHECK_EQ(mismatches, 0);
}

template <class T>
void checkStrictWeakOrder()
{
  // Sorting with zLess must give the order of the reference encoding.
  std::mt19937_64 rng(3);
  const std::vector<T> values = interestingValues<T>();
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::vector<std::array<T, 3>> pts(400);
  for (auto& p : pts)
    for (int d = 0; d < 3; ++d)
      p[d] = values[pick(rng)];
  auto byComparator = pts;
  std::sort(byComparator.begin(), byComparator.end(),
    [](const std::array<T, 3>& a, const std::array<T, 3>& b)
    { return jz::zLess(a.data(), b.data()); });
  for (std::size_t i = 1; i < byComparator.size(); ++i)
  {
    JZ_CHECK(!Reference<T>::less(byComparator[i].data(), byComparator[i - 1].data()));
  }
}
} // namespace

JZ_TEST_FLOAT_AND_DOUBLE(ComparatorMatchesExactReference, checkAgainstReference)
JZ_TEST_FLOAT_AND_DOUBLE(SortOrderMatchesReference, checkStrictWeakOrder)

JZ_TEST(MsbBasics)
{
  JZ_CHECK_EQ(jz::msbDifference(1.0f, 1.0f), jz::kNoDifference);
  JZ_CHECK_EQ(jz::msbDifference(0.0f, -0.0f), jz::kNoDifference);
  JZ_CHECK_EQ(jz::msbDifference(1.0f, -1.0f), 128);
  JZ_CHECK_EQ(jz::msbDifference(1.0f, 2.0f), 1);
  JZ_CHECK_EQ(jz::msbDifference(1.0f, 1.5f), -1);
  JZ_CHECK_EQ(jz::msbDifference(9.3125, 5.6875), 3); // §II-A's example: 1001.0101 vs 0101.1011
  const float tiny = std::numeric_limits<float>::denorm_min();
  JZ_CHECK_EQ(jz::msbDifference(0.0f, tiny), -149);
  JZ_CHECK_EQ(jz::msbDifference(0.0, std::numeric_limits<double>::denorm_min()), -1074);
  // Huge offsets keep full precision: one ulp apart at 1e6.
  const float big = 1e6f;
  JZ_CHECK_EQ(jz::msbDifference(big, std::nextafter(big, 2e6f)), -4);
}

JZ_TEST_MAIN()
