// Union-find over component labels (global ids) that every rank builds from
// the same allgathered edges, so that every rank finds the same root: the
// smallest label of each set, which is the merged component's new label.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "jz/Config.h"
#include "jz/UnionFind.h"

namespace jz
{
class LabelUnion
{
public:
  void add(GlobalId a) { parent_.emplace(a, a); }
  bool contains(GlobalId a) const { return parent_.count(a) != 0; }

  GlobalId find(GlobalId a)
  {
    add(a);
    return findRoot(parent_, a);
  }

  // Joins the sets of a and b; false when they were one already.
  bool unite(GlobalId a, GlobalId b)
  {
    add(a);
    add(b);
    return uniteBySmallestRoot(parent_, a, b);
  }

  // The roots, ascending.
  std::vector<GlobalId> roots()
  {
    std::vector<GlobalId> out;
    for (const auto& kv : parent_)
      if (kv.first == kv.second)
        out.push_back(kv.first);
    std::sort(out.begin(), out.end());
    return out;
  }

private:
  std::unordered_map<GlobalId, GlobalId> parent_;
};
} // namespace jz
