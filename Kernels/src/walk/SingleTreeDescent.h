// One tree descended from its top plane against a test on each node: the
// single-tree walks beside the dual walk (the ghost selection, the gravity
// LET, the rank cover). The visitor decides per node whether to open it,
// take or drop it, or stop; the descent keeps the order: depth first, each
// node's children in ascending order, so that what the visitor takes comes
// in z-order.
#pragma once

#include <utility>
#include <vector>

#include "jz/Tree.h"

namespace jz
{
// What the descent does after visiting a node.
enum class Descend
{
  Skip, // taken or too far: its children are not visited
  Open, // its children are visited next (as Skip on plane 0)
  Stop  // the descent ends
};

// The pending nodes (plane, node), reusable between descents.
using DescentStack = std::vector<std::pair<int, Index>>;

// Visits the nodes [begin, end) of plane `top` and, below each node that
// visit(p, j) opens, its children: children(p, j) is their [first, last) in
// plane p - 1. Returns false when a visit stopped the descent.
template <class Children, class Visit>
bool descendPlanes(
  int top, Index begin, Index end, Children&& children, Visit&& visit, DescentStack& stack)
{
  stack.clear();
  for (Index j = end; j-- > begin;)
    stack.emplace_back(top, j);
  while (!stack.empty())
  {
    const auto [p, j] = stack.back();
    stack.pop_back();
    const Descend d = visit(p, j);
    if (d == Descend::Stop)
      return false;
    if (d != Descend::Open || p == 0)
      continue;
    const std::pair<Index, Index> c = children(p, j);
    for (Index k = c.second; k-- > c.first;)
      stack.emplace_back(p - 1, k);
  }
  return true;
}

// descendPlanes over a tree's planes from its top plane's nodes [begin, end).
template <class T, class Visit>
bool descendTree(const ZTree<T>& tree, Index begin, Index end, Visit&& visit, DescentStack& stack)
{
  auto children = [&tree](int p, Index j)
  {
    const std::vector<Index>& split = tree.planes[p].childSplit;
    return std::make_pair(split[j], split[j + 1]);
  };
  return descendPlanes(
    int(tree.planes.size()) - 1, begin, end, children, std::forward<Visit>(visit), stack);
}
} // namespace jz
