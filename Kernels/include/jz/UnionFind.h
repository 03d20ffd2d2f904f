// The serial union-find of the kernels: a forest in a parent array (or map),
// parent[r] == r at a root. The roots are what the users output (labels,
// group roots), so every union names its root rule; which path compression
// runs never changes a root. The multi-threaded FoF has its own lock-free
// union-find (FofLinking.h).
#pragma once

#include <utility>

namespace jz
{
// The root of x's set, halving the path on the way (each node visited is
// linked to its grandparent). Parent: anything with parent[x] -> Id&.
template <class Parent, class Id>
Id findRoot(Parent& parent, Id x)
{
  while (parent[x] != x)
  {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

// Joins the sets of a and b; the root is the one of the two roots with the
// smaller key(root), a's root on a tie. False when they were one set already.
template <class Parent, class Id, class Key>
bool uniteBySmallestKey(Parent& parent, Id a, Id b, Key&& key)
{
  a = findRoot(parent, a);
  b = findRoot(parent, b);
  if (a == b)
    return false;
  if (key(b) < key(a))
    std::swap(a, b);
  parent[b] = a;
  return true;
}

// Joins the sets of a and b; the smaller root stays the root, so the root of
// a set is its smallest member whenever every union went through here.
template <class Parent, class Id>
bool uniteBySmallestRoot(Parent& parent, Id a, Id b)
{
  return uniteBySmallestKey(parent, a, b, [](Id r) { return r; });
}
} // namespace jz
