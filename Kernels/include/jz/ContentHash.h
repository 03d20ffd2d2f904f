// A fast 64-bit hash of a byte buffer, to tell cheaply whether data seen
// before came back unchanged (FriendsOfFriends' per-time-step result cache):
// one O(n) read, parallel over fixed blocks, so the value does not depend on
// the number of threads. Not cryptographic: it guards against accidental
// change (two different buffers hash equal with a probability of
// about 2^-64), not against crafted collisions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jz
{
/// The hash of `bytes` bytes at `data` (may be null when bytes == 0),
/// chained from `seed` (hash several buffers by passing the previous result).
std::uint64_t contentHash(const void* data, std::size_t bytes, std::uint64_t seed = 0);
}
