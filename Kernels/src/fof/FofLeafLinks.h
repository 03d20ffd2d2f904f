// Friends-of-friends between the points of leaves (the leaf pairs the node
// walk kept, §IV-A): d^2 <= l^2 in double, nearest image when
// periodic. First each unlinked leaf with itself, its points private to one
// thread; then leaf pairs with the compare-and-swap union.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "jz/FofLinking.h"
#include "jz/Tree.h"

namespace jz
{
// Coordinates of a run of sorted points in double, structure of arrays.
struct FofLocalPoints
{
  std::vector<double> x, y, z;
  std::vector<Index> id;
  std::vector<double> d2;
  void clear()
  {
    x.clear();
    y.clear();
    z.clear();
    id.clear();
  }
  void push(double px, double py, double pz, Index k)
  {
    x.push_back(px);
    y.push_back(py);
    z.push_back(pz);
    id.push_back(k);
  }
  std::size_t size() const { return id.size(); }
};

template <class T>
class FofLeafLinks
{
public:
  FofLeafLinks(const ZTree<T>& tree, double linkingLength)
    : tree_(tree)
    , per_(tree.periodicity)
    , l2_(linkingLength * linkingLength)
  {
  }

  // A leaf with itself; its points (pointers g) are private to the calling
  // thread. Returns whether the leaf ends up as one group.
  bool linkWithin(Index leaf, Index* g, FofLocalPoints& lp) const
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    const Index s0 = leaves.sourceSplit[leaf], s1 = leaves.sourceSplit[leaf + 1];
    if (s1 - s0 == 1)
      return true;
    const Frame f = frame(leaves.sourceBox[leaf], leaves.sourceBox[leaf]);
    if (!f.direct)
      return linkWithinWrapped(s0, s1, g); // a leaf wider than half the box
    gather(s0, s1, lp);
    return linkWithinDirect(s0, g, lp);
  }

  // Leaves A and B (A != B); connected[X] says all of X's points are in one
  // group, which lets one friend pair stand for all.
  void linkBetween(Index A, Index B, const std::vector<std::uint8_t>& connected, Index* g,
    FofLocalPoints& candA, FofLocalPoints& candB) const
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    const bool cA = connected[A], cB = connected[B];
    const Index a0 = leaves.sourceSplit[A], a1 = memberEnd(A, cA);
    const Index b0 = leaves.sourceSplit[B], b1 = memberEnd(B, cB);
    if (cA && cB && fofFind(g, a0) == fofFind(g, b0))
      return;
    const Frame f = frame(leaves.sourceBox[A], leaves.sourceBox[B]);
    candidates(a0, a1, leaves.sourceBox[B], f, candA);
    if (candA.size() == 0)
      return;
    candidates(b0, b1, leaves.sourceBox[A], f, candB);
    if (candB.size() == 0)
      return;
    if (cA && cB)
      linkOnce(candA, candB, f, g);
    else if (cA)
      linkEachTo(candB, candA, a0, f, g);
    else if (cB)
      linkEachTo(candA, candB, b0, f, g);
    else
      linkAll(candA, candB, f, g);
  }

private:
  // The end of the points of leaf X that may link it: a connected run of
  // duplicates (one group, all at one place) is linked through its first.
  Index memberEnd(Index X, bool connectedX) const
  {
    const TreePlane<T>& leaves = tree_.planes[0];
    if (connectedX && boxIsPoint(leaves.sourceBox[X]))
      return leaves.sourceSplit[X] + 1;
    return leaves.sourceSplit[X + 1];
  }

  // Per-dimension nearest-image modes of a pair of boxes (fofImageMode):
  // sepd() then reproduces Geometry.h's separation() bit for bit.
  struct Frame
  {
    int mode[3];
    double period[3];
    bool direct; // all three kFofDirect
  };

  Frame frame(const Box<T>& a, const Box<T>& b) const
  {
    Frame f;
    for (int d = 0; d < 3; ++d)
    {
      f.period[d] = per_.length[d];
      f.mode[d] = fofImageMode(a, b, d, per_.length[d]);
    }
    f.direct = f.mode[0] == kFofDirect && f.mode[1] == kFofDirect && f.mode[2] == kFofDirect;
    return f;
  }

  static double sepd(double a, double b, int mode, double L)
  {
    double v = jzAbs(a - b);
    if (mode == kFofWrap)
      v = L - v;
    else if (mode == kFofMixed && v > 0.5 * L)
      v = L - v;
    return v;
  }

  // Lower bound of sepd(a, b) over b in [lo, hi] (no larger than any of them).
  static double gapd(double a, double lo, double hi, int mode, double L)
  {
    if (mode == kFofDirect)
      return jzMax(0.0, jzMax(lo - a, a - hi));
    if (mode == kFofWrap)
      return L - jzMax(jzAbs(a - lo), jzAbs(a - hi));
    return gapLow(a, a, lo, hi, L);
  }

  // d2[b] = squared distance of (ax, ay, az) to point b for b in [b0, b1): the
  // operations and order of distance2() without wrapping, in a vectorisable loop.
  static void distanceRow(double ax, double ay, double az, const double* __restrict x,
    const double* __restrict y, const double* __restrict z, std::size_t b0, std::size_t b1,
    double* __restrict d2)
  {
    for (std::size_t b = b0; b < b1; ++b)
    {
      const double dx = ax - x[b], dy = ay - y[b], dz = az - z[b];
      double s = 0;
      s += dx * dx;
      s += dy * dy;
      s += dz * dz;
      d2[b] = s;
    }
  }

  bool friends(Index a, Index b) const
  {
    T p[3], q[3];
    tree_.sources.point(a, p);
    tree_.sources.point(b, q);
    return fofFriends(p, q, l2_, per_);
  }

  void gather(Index s0, Index s1, FofLocalPoints& lp) const
  {
    const SortedPoints<T>& s = tree_.sources;
    lp.clear();
    for (Index k = s0; k < s1; ++k)
      lp.push(double(s.x[k]), double(s.y[k]), double(s.z[k]), k);
  }

  bool linkWithinWrapped(Index s0, Index s1, Index* g) const
  {
    const Index needed = s1 - s0 - 1;
    Index unions = 0;
    for (Index a = s0; a < s1; ++a)
      for (Index b = a + 1; b < s1; ++b)
        if (fofFindLocal(g, a) != fofFindLocal(g, b) && friends(a, b) && fofUnionLocal(g, a, b) &&
          ++unions == needed)
          return true;
    return false;
  }

  bool linkWithinDirect(Index s0, Index* g, FofLocalPoints& lp) const
  {
    const std::size_t n = lp.size();
    const Index needed = Index(n) - 1;
    Index unions = 0;
    lp.d2.resize(n);
    const double* x = lp.x.data();
    const double* y = lp.y.data();
    const double* z = lp.z.data();
    double* d2 = lp.d2.data();
    for (std::size_t a = 0; a + 1 < n; ++a)
    {
      distanceRow(x[a], y[a], z[a], x, y, z, a + 1, n, d2);
      Index ra = fofFindLocal(g, s0 + Index(a));
      for (std::size_t b = a + 1; b < n; ++b)
      {
        if (!(d2[b] <= l2_))
          continue;
        const Index rb = fofFindLocal(g, s0 + Index(b));
        if (rb == ra)
          continue;
        // Link the higher root to the lower one.
        if (rb < ra)
        {
          g[ra] = rb;
          ra = rb;
        }
        else
        {
          g[rb] = ra;
        }
        if (++unions == needed)
          return true;
      }
    }
    return false;
  }

  // Points of [s0, s1) that may have a friend in the box `other`.
  void candidates(
    Index s0, Index s1, const Box<T>& other, const Frame& f, FofLocalPoints& cand) const
  {
    cand.clear();
    if (f.direct)
    {
      candidatesDirect(s0, s1, other, cand);
      return;
    }
    const SortedPoints<T>& s = tree_.sources;
    for (Index k = s0; k < s1; ++k)
    {
      const double p[3] = { double(s.x[k]), double(s.y[k]), double(s.z[k]) };
      double sum = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double gd =
          gapd(p[d], double(other.lo[d]), double(other.hi[d]), f.mode[d], f.period[d]);
        sum += gd * gd;
      }
      // Slack: gapd's mixed mode rounds unlike sepd (see classifyFofPairModes).
      if (sum <= l2_ * (1 + kBoundSlack))
        cand.push(p[0], p[1], p[2], k);
    }
  }

  // The common case, in a vectorisable loop.
  void candidatesDirect(Index s0, Index s1, const Box<T>& other, FofLocalPoints& cand) const
  {
    const SortedPoints<T>& s = tree_.sources;
    const Index n = s1 - s0;
    cand.d2.resize(n);
    double* __restrict s2 = cand.d2.data();
    const T* __restrict px = s.x.data() + s0;
    const T* __restrict py = s.y.data() + s0;
    const T* __restrict pz = s.z.data() + s0;
    const double lo0 = other.lo[0], lo1 = other.lo[1], lo2 = other.lo[2];
    const double hi0 = other.hi[0], hi1 = other.hi[1], hi2 = other.hi[2];
    for (Index k = 0; k < n; ++k)
    {
      const double x = double(px[k]), y = double(py[k]), z = double(pz[k]);
      // max(0, t) = (t + |t|) / 2 exactly, without branches; at most one
      // of lo - x and x - hi is positive.
      const double ax = lo0 - x, bx = x - hi0, ay = lo1 - y, by = y - hi1;
      const double az = lo2 - z, bz = z - hi2;
      const double gx = 0.5 * ((ax + std::fabs(ax)) + (bx + std::fabs(bx)));
      const double gy = 0.5 * ((ay + std::fabs(ay)) + (by + std::fabs(by)));
      const double gz = 0.5 * ((az + std::fabs(az)) + (bz + std::fabs(bz)));
      s2[k] = gx * gx + gy * gy + gz * gz;
    }
    for (Index k = 0; k < n; ++k)
      if (s2[k] <= l2_)
        cand.push(double(px[k]), double(py[k]), double(pz[k]), s0 + k);
  }

  bool friendsIn(const FofLocalPoints& A, std::size_t i, const FofLocalPoints& B, std::size_t j,
    const Frame& f) const
  {
    if (f.direct)
    {
      // distance2() without wrapping: same operations, same order.
      const double dx = A.x[i] - B.x[j], dy = A.y[i] - B.y[j], dz = A.z[i] - B.z[j];
      double s = 0;
      s += dx * dx;
      s += dy * dy;
      s += dz * dz;
      return s <= l2_;
    }
    double s = 0;
    const double dx = sepd(A.x[i], B.x[j], f.mode[0], f.period[0]);
    s += dx * dx;
    const double dy = sepd(A.y[i], B.y[j], f.mode[1], f.period[1]);
    s += dy * dy;
    const double dz = sepd(A.z[i], B.z[j], f.mode[2], f.period[2]);
    s += dz * dz;
    return s <= l2_;
  }

  // Both leaves connected: one friend pair joins them.
  void linkOnce(const FofLocalPoints& A, const FofLocalPoints& B, const Frame& f, Index* g) const
  {
    for (std::size_t i = 0; i < A.size(); ++i)
      for (std::size_t j = 0; j < B.size(); ++j)
        if (friendsIn(A, i, B, j, f))
        {
          fofUnion(g, A.id[i], B.id[j]);
          return;
        }
  }

  // The leaf of `conn` (first point c0) is connected: each point of `open`
  // needs one friend in it.
  void linkEachTo(const FofLocalPoints& open, const FofLocalPoints& conn, Index c0, const Frame& f,
    Index* g) const
  {
    for (std::size_t j = 0; j < open.size(); ++j)
    {
      if (fofFind(g, open.id[j]) == fofFind(g, c0))
        continue;
      for (std::size_t i = 0; i < conn.size(); ++i)
        if (friendsIn(conn, i, open, j, f))
        {
          fofUnion(g, conn.id[i], open.id[j]);
          break;
        }
    }
  }

  // Every friend pair joins; a friend already under A[i]'s root (once seen,
  // an ancestor of A[i] stays in its group) needs no union. Direct frames
  // take each row's distances in a vectorisable loop first.
  void linkAll(const FofLocalPoints& A, FofLocalPoints& B, const Frame& f, Index* g) const
  {
    const std::size_t nb = B.size();
    B.d2.resize(nb);
    double* __restrict d2 = B.d2.data();
    const double* __restrict bx = B.x.data();
    const double* __restrict by = B.y.data();
    const double* __restrict bz = B.z.data();
    for (std::size_t i = 0; i < A.size(); ++i)
    {
      if (f.direct)
        distanceRow(A.x[i], A.y[i], A.z[i], bx, by, bz, 0, nb, d2);
      Index root = fofFind(g, A.id[i]);
      for (std::size_t j = 0; j < nb; ++j)
        if (f.direct ? d2[j] <= l2_ : friendsIn(A, i, B, j, f))
          if (fofFind(g, B.id[j]) != root)
            root = fofUnion(g, A.id[i], B.id[j]);
    }
  }

  const ZTree<T>& tree_;
  Periodicity per_;
  double l2_;
};
} // namespace jz
