// How computeFofCatalogue splits its points among threads, shared with the
// GPU catalogue (FofHalosCuda.cu) so that both sum every group's
// members in the same order and agree bit for bit: chunk c of C holds the
// input indices [fofCatalogueChunkBegin(n, c, C), fofCatalogueChunkBegin(n,
// c + 1, C)), each chunk's members are summed in input order from the
// group's reference, and the chunks' sums are merged in chunk order.
#pragma once

#include <cstddef>

#include "jz/Config.h"

namespace jz
{
// The number of chunks C for G kept groups of n points (FofCatalogue.cpp):
// from G and n alone, so that the sums' order does not depend on the thread
// count; 1 when per-chunk sums would not stay small next to the points.
int fofCatalogueChunks(std::size_t numGroups, std::size_t numPoints);

// The first input index of chunk c (the first n % C chunks one point
// longer).
JZ_HD std::size_t fofCatalogueChunkBegin(std::size_t n, std::size_t c, std::size_t numChunks)
{
  const std::size_t q = n / numChunks, r = n % numChunks;
  return c * q + (c < r ? c : r);
}
} // namespace jz
