#include "jz/ContentHash.h"

#include <cstring>
#include <vector>

namespace jz
{
namespace
{
constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t P2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t P3 = 0x165667B19E3779F9ULL;
// Blocks hashed independently (in parallel), then chained in order.
constexpr std::size_t BlockBytes = std::size_t(1) << 20;

std::uint64_t rotl(std::uint64_t x, int r)
{
  return (x << r) | (x >> (64 - r));
}

// A bijective finaliser (splitmix64's): every input bit reaches every output bit.
std::uint64_t avalanche(std::uint64_t x)
{
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t lane(std::uint64_t acc, std::uint64_t word)
{
  return rotl(acc + word * P2, 31) * P1;
}

// One block: four independent lanes over 8-byte words (so the multiplies
// overlap), then the tail bytes; the length is mixed in.
std::uint64_t hashBlock(const unsigned char* p, std::size_t n)
{
  std::uint64_t acc[4] = { P1 + P2, P2, 0, 0 - P1 };
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
  {
    for (int k = 0; k < 4; ++k)
    {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      acc[k] = lane(acc[k], w);
    }
  }
  std::uint64_t h = rotl(acc[0], 1) + rotl(acc[1], 7) + rotl(acc[2], 12) + rotl(acc[3], 18);
  for (int k = 0; k < 4; ++k)
  {
    h = (h ^ lane(0, acc[k])) * P1 + P3;
  }
  for (; i + 8 <= n; i += 8)
  {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = rotl(h ^ lane(0, w), 27) * P1 + P3;
  }
  for (; i < n; ++i)
  {
    h = rotl(h ^ (p[i] * P3), 11) * P1;
  }
  return avalanche(h ^ static_cast<std::uint64_t>(n));
}
} // namespace

std::uint64_t contentHash(const void* data, std::size_t bytes, std::uint64_t seed)
{
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t blocks = (bytes + BlockBytes - 1) / BlockBytes;
  std::vector<std::uint64_t> blockHash(blocks);
  const long long count = static_cast<long long>(blocks);
#pragma omp parallel for schedule(static) if (count > 4)
  for (long long b = 0; b < count; ++b)
  {
    const std::size_t begin = static_cast<std::size_t>(b) * BlockBytes;
    const std::size_t size = bytes - begin < BlockBytes ? bytes - begin : BlockBytes;
    blockHash[static_cast<std::size_t>(b)] = hashBlock(p + begin, size);
  }
  std::uint64_t h = avalanche(seed ^ P3) ^ avalanche(static_cast<std::uint64_t>(bytes) + P2);
  for (const std::uint64_t b : blockHash)
  {
    h = avalanche(rotl(h, 23) ^ b) * P1 + P2;
  }
  return avalanche(h);
}
}
