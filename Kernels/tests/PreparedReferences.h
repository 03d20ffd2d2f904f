// References prepared ahead of a GPU run (TestHarness.h's
// --prepare-references and --references): a reference result is kept as the
// content hash of its bytes, in a file named by the hash of its inputs, so a
// whole case's references fit in a few kilobytes that travel with the
// binaries. A result then matches its reference when their hashes agree.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "TestHarness.h"
#include "jz/ContentHash.h"

namespace jztest
{
template <class T>
std::uint64_t digestOf(const std::vector<T>& values, std::uint64_t seed = 0)
{
  return jz::contentHash(values.data(), values.size() * sizeof(T), seed);
}

inline std::string preparedReferencePath(std::uint64_t inputKey)
{
  char name[32];
  std::snprintf(name, sizeof name, "/%016" PRIx64 ".ref", inputKey);
  return referencesDir() + name;
}

// The prepared digest for these inputs, when --references names a folder
// that has it.
inline std::optional<std::uint64_t> preparedReference(std::uint64_t inputKey)
{
  if (referencesDir().empty() || preparingReferences())
    return std::nullopt;
  std::FILE* f = std::fopen(preparedReferencePath(inputKey).c_str(), "r");
  if (!f)
    return std::nullopt;
  std::uint64_t digest = 0;
  const bool read = std::fscanf(f, "%" SCNx64, &digest) == 1;
  std::fclose(f);
  return read ? std::optional<std::uint64_t>(digest) : std::nullopt;
}

// Keeps a reference's digest under --prepare-references (a no-op otherwise).
inline void storeReference(std::uint64_t inputKey, std::uint64_t digest)
{
  if (!preparingReferences())
    return;
  const std::string path = preparedReferencePath(inputKey);
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool written = f && std::fprintf(f, "%016" PRIx64 "\n", digest) > 0;
  if (f)
    written = std::fclose(f) == 0 && written;
  if (!written)
    fail(__FILE__, __LINE__, "cannot write the prepared reference " + path);
}
} // namespace jztest
