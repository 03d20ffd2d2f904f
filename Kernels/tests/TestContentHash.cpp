// jz::contentHash: the same value for the same bytes on any number of
// threads, and a different value after any single-bit change, a change of
// length, a swap of two words or another seed.
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "TestHarness.h"
#include "jz/ContentHash.h"

#include <omp.h>

namespace
{
std::vector<unsigned char> randomBytes(std::size_t n, unsigned seed)
{
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> b(n);
  for (auto& c : b)
  {
    c = static_cast<unsigned char>(rng());
  }
  return b;
}
} // namespace

JZ_TEST(SameBytesSameHashOnAnyThreadCount)
{
  // Several blocks of 1 MiB and a ragged end, so that blocks run in parallel.
  const auto bytes = randomBytes((std::size_t(9) << 20) + 13, 1);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::uint64_t serial = jz::contentHash(bytes.data(), bytes.size());
  omp_set_num_threads(threads > 1 ? threads : 4);
  JZ_CHECK_EQ(jz::contentHash(bytes.data(), bytes.size()), serial);
  omp_set_num_threads(threads);
  const std::vector<unsigned char> copy = bytes;
  JZ_CHECK_EQ(jz::contentHash(copy.data(), copy.size()), serial);
}

JZ_TEST(EverySingleBitFlipChangesTheHash)
{
  for (const std::size_t n :
    { std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(33), std::size_t(100) })
  {
    auto bytes = randomBytes(n, static_cast<unsigned>(n));
    const std::uint64_t h = jz::contentHash(bytes.data(), n);
    std::set<std::uint64_t> seen{ h };
    for (std::size_t i = 0; i < n; ++i)
    {
      for (int bit = 0; bit < 8; ++bit)
      {
        bytes[i] ^= static_cast<unsigned char>(1u << bit);
        seen.insert(jz::contentHash(bytes.data(), n));
        bytes[i] ^= static_cast<unsigned char>(1u << bit);
      }
    }
    JZ_CHECK_MSG(seen.size() == 8 * n + 1,
      n << " bytes: " << seen.size() - 1 << " distinct of " << 8 * n << " flips");
  }
  // A flip deep inside a multi-block buffer, in its last block and its tail.
  auto big = randomBytes((std::size_t(3) << 20) + 5, 7);
  const std::uint64_t h = jz::contentHash(big.data(), big.size());
  for (const std::size_t at :
    { std::size_t(0), std::size_t(1) << 20, (std::size_t(2) << 20) + 99, big.size() - 1 })
  {
    big[at] ^= 0x10;
    JZ_CHECK_MSG(jz::contentHash(big.data(), big.size()) != h, "flip at " << at);
    big[at] ^= 0x10;
  }
}

JZ_TEST(LengthOrderAndSeedChangeTheHash)
{
  const auto bytes = randomBytes(4096, 3);
  const std::uint64_t h = jz::contentHash(bytes.data(), bytes.size());
  JZ_CHECK(jz::contentHash(bytes.data(), bytes.size() - 1) != h);
  JZ_CHECK(jz::contentHash(bytes.data(), bytes.size(), 1) != h);
  // Zeros of different lengths differ too (the length is mixed in).
  const std::vector<unsigned char> zeros(64, 0);
  JZ_CHECK(jz::contentHash(zeros.data(), 32) != jz::contentHash(zeros.data(), 64));
  JZ_CHECK(jz::contentHash(nullptr, 0) != jz::contentHash(nullptr, 0, 5));
  // Two swapped words, in the same lane and in different lanes.
  for (const std::size_t other : { std::size_t(32), std::size_t(8) })
  {
    auto swapped = bytes;
    for (int k = 0; k < 8; ++k)
    {
      std::swap(swapped[static_cast<std::size_t>(k)], swapped[other + static_cast<std::size_t>(k)]);
    }
    JZ_CHECK(jz::contentHash(swapped.data(), swapped.size()) != h);
  }
  // Chaining: hash(a then b) depends on both.
  const std::uint64_t a = jz::contentHash(bytes.data(), 100);
  JZ_CHECK(
    jz::contentHash(bytes.data() + 100, 100, a) != jz::contentHash(bytes.data() + 100, 100, a + 1));
}

JZ_TEST_MAIN()
