// Writes benchmark points as raw x,y,z values, so that a peer (the jz-tree
// reference, jztree_reference.py) runs on exactly the same points.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace jzbench
{
template <class T>
bool writeRaw(const std::string& path, const std::vector<T>& xyz)
{
  std::FILE* f = std::fopen(path.c_str(), "wb");
  const bool ok = f && std::fwrite(xyz.data(), sizeof(T), xyz.size(), f) == xyz.size();
  if (f)
    std::fclose(f);
  if (!ok)
    std::fprintf(stderr, "could not write the points to %s\n", path.c_str());
  return ok;
}
} // namespace jzbench
