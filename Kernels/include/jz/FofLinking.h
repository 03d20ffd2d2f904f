// Per-node and per-point friends-of-friends logic shared by the CPU backend
// and the CUDA kernels: node-pair classification and the lock-free union-find
// on group pointers (§IV-A).
#pragma once

#include "Config.h"
#include "Geometry.h"
#include "UnionFind.h"

namespace jz
{
enum class FofPairAction : int
{
  Discard = 0, // no point pair within l, or already one group
  Link = 1,    // every point pair within l: link the two nodes whole
  Refine = 2   // undecided: evaluate the children (or the points, for leaves)
};

// --- Nearest-image modes ----------------------------------------------------
// Per dimension, how Geometry.h's separation() treats every point pair drawn
// from two boxes: never wraps (every rounded |a - b| <= L/2), always wraps
// (every one > L/2), or depends on the pair. Rounding is monotone, so the
// box-level decision holds for each point pair exactly; within a pair of
// boxes the cheap per-mode formulas below then give bounds and distances that
// equal (distances) or safely bound (gaps) the general ones.
enum FofImageMode : int
{
  kFofDirect = 0,
  kFofWrap = 1,
  kFofMixed = 2
};

template <class T>
JZ_HD int fofImageMode(const Box<T>& a, const Box<T>& b, int d, double L)
{
  if (!(L > 0))
    return kFofDirect;
  const double far = jzMax(double(a.hi[d]) - double(b.lo[d]), double(b.hi[d]) - double(a.lo[d]));
  const double near =
    jzMax(0.0, jzMax(double(b.lo[d]) - double(a.hi[d]), double(a.lo[d]) - double(b.hi[d])));
  return far <= 0.5 * L ? kFofDirect : (near > 0.5 * L ? kFofWrap : kFofMixed);
}

// Classification of two boxes whose pair lies inside a parent pair with the
// given modes (modes of a parent pair hold for all of its children's pairs
// except kFofMixed, which falls back to the general bounds).
template <class T>
JZ_HD FofPairAction classifyFofPairModes(
  const Box<T>& a, const Box<T>& b, const int* mode, double linkingLength2, const Periodicity& per)
{
  double lo2 = 0, hi2 = 0;
  for (int d = 0; d < kDim; ++d)
  {
    const double alo = a.lo[d], ahi = a.hi[d], blo = b.lo[d], bhi = b.hi[d];
    const double L = per.length[d];
    double gl, gh;
    if (mode[d] == kFofMixed)
    {
      gl = gapLow(alo, ahi, blo, bhi, L);
      gh = gapHigh(alo, ahi, blo, bhi, L);
    }
    else
    {
      const double nearD = jzMax(0.0, jzMax(blo - ahi, alo - bhi));
      const double farD = jzMax(ahi - blo, bhi - alo);
      gl = mode[d] == kFofDirect ? nearD : L - farD;
      gh = mode[d] == kFofDirect ? farD : L - nearD;
    }
    lo2 += gl * gl;
    hi2 += gh * gh;
  }
  // Slack on both sides: the mixed mode's bounds (gapLow: b.lo + L - a.hi)
  // round differently from a point pair's separation (L - |a - b|), so a pair
  // at exactly l must be refined, never discarded (a wrapped lattice pair at
  // an offset of 1e6 was lost without it).
  if (lo2 > linkingLength2 * (1 + kBoundSlack))
    return FofPairAction::Discard;
  if (hi2 * (1 + kBoundSlack) <= linkingLength2)
    return FofPairAction::Link;
  return FofPairAction::Refine;
}

// Whether every pair of points inside one box is within l (the box diagonal,
// nearest image when periodic, is at most l): the node is self-linked.
template <class T>
JZ_HD bool fofSelfLinked(const Box<T>& a, double linkingLength2, const Periodicity& per)
{
  return boxDistanceHigh2(a, a, per) <= linkingLength2;
}

// Whether two points are friends: d^2 <= l^2 in double, nearest image.
template <class T>
JZ_HD bool fofFriends(const T* p, const T* q, double linkingLength2, const Periodicity& per)
{
  return distance2(p, q, per) <= linkingLength2;
}

// --- Group pointers -------------------------------------------------------
// igroup[i] <= i always; i is a root when igroup[i] == i. Links always point
// the higher root at the lower one, so the root of a group is its smallest
// index. Operations use relaxed atomics (GCC/Clang builtins on the host,
// atomicCAS on the device) so that concurrent threads may link and compress.

JZ_HD Index fofLoad(const Index* g, Index i)
{
#if defined(__CUDA_ARCH__)
  return *((volatile const Index*)(g + i));
#else
  return __atomic_load_n(g + i, __ATOMIC_RELAXED);
#endif
}

JZ_HD void fofStore(Index* g, Index i, Index v)
{
#if defined(__CUDA_ARCH__)
  *((volatile Index*)(g + i)) = v;
#else
  __atomic_store_n(g + i, v, __ATOMIC_RELAXED);
#endif
}

JZ_HD bool fofCompareExchange(Index* g, Index i, Index expected, Index desired)
{
#if defined(__CUDA_ARCH__)
  return atomicCAS(g + i, expected, desired) == expected;
#else
  return __atomic_compare_exchange_n(
    g + i, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

// Root of i, with path halving. A compression replaces the parent it read by
// that parent's parent, and only if the slot still holds the parent read
// (compare-and-swap): a pointer only ever moves towards the root. A plain
// store could put back a stale ancestor after another thread had stored the
// root, and a contracted pointer would then name a non-root.
JZ_HD Index fofFind(Index* g, Index i)
{
  Index p = fofLoad(g, i);
  while (p != i)
  {
    const Index gp = fofLoad(g, p);
    if (gp != p)
      fofCompareExchange(g, i, p, gp);
    i = p;
    p = gp;
  }
  return i;
}

// Points i at its root. With no union running concurrently the root is final
// and every value g[i] can hold lies on the path to it, so the store is
// monotone too; racing compressions (compare-and-swap from an older value)
// cannot undo it.
JZ_HD void fofContract(Index* g, Index i)
{
  const Index r = fofFind(g, i);
  if (fofLoad(g, i) != r)
    fofStore(g, i, r);
}

// Whether i is a root: after a contraction every g[i] must be one.
JZ_HD bool fofIsRoot(const Index* g, Index i)
{
  return fofLoad(g, i) == i;
}

// Joins the groups of a and b: the higher root is pointed at the lower one
// with a compare-and-swap, repeated when another thread changed the root in
// between. Returns the common root.
JZ_HD Index fofUnion(Index* g, Index a, Index b)
{
  for (;;)
  {
    Index ra = fofFind(g, a);
    Index rb = fofFind(g, b);
    if (ra == rb)
      return ra;
    if (ra < rb)
    {
      const Index t = ra;
      ra = rb;
      rb = t;
    }
    // ra > rb: ra must still be a root for the link to be valid.
    if (fofCompareExchange(g, ra, ra, rb))
      return rb;
    a = ra;
    b = rb;
  }
}

// Single-threaded variants for data no other thread touches (a leaf's own
// points during its self-interaction): the serial union-find, with the
// smaller root as the root as in fofUnion.
inline Index fofFindLocal(Index* g, Index i)
{
  return findRoot(g, i);
}

inline bool fofUnionLocal(Index* g, Index a, Index b)
{
  return uniteBySmallestRoot(g, a, b);
}
} // namespace jz
