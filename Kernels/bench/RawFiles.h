// Whole binary files of raw values (points, ids, labels), the exchange
// format between the Python drivers (degenerate_diff.py, fof_stress.py) and
// the C++ runners.
#pragma once

#include <cstring>
#include <fstream>
#include <vector>

namespace jzbench
{
// The whole file as values of V; false when it cannot be read.
template <class V>
bool readAll(const char* path, std::vector<V>& out)
{
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    return false;
  const std::streamsize bytes = f.tellg();
  out.resize(std::size_t(bytes) / sizeof(V));
  f.seekg(0);
  return bool(f.read(reinterpret_cast<char*>(out.data()), std::streamsize(out.size() * sizeof(V))));
}

// Writes `v` to `path`; "-" writes nothing.
template <class V>
void writeAll(const char* path, const std::vector<V>& v)
{
  if (std::strcmp(path, "-") == 0)
    return;
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(V)));
}
} // namespace jzbench
