// Friends-of-friends on the CPU: the dual tree walk of §IV-A on
// the z-order plane tree, multi-threaded with OpenMP.
//
// Per plane p (top to bottom) every node carries a group pointer grp[i] <= i
// into its own plane and a flag linked[i] meaning "all points of the node are
// known to be in one group". Node-level groups only join linked nodes, so
// nodes of one node-level group hold points of one FoF group.
//  1. ParentToNode (eq. 19): a child of a linked parent points at the first
//     child of its parent's root and is linked; other children are their own
//     root and linked when their box diagonal is at most l.
//  2. NodeToNode over the child pairs of the parent plane's undecided pairs:
//     discard (same group, or d_low > l), link whole (d_up <= l for both
//     boxes) with a lock-free union, or keep the pair for the next plane.
//  3. Contraction of the plane's pointers.
// At the leaves the kept pairs are evaluated point by point (d^2 <= l^2 in
// double): first each leaf with itself (private to one thread), then leaf
// pairs with the compare-and-swap union. A final contraction makes every
// point point at its group's root, the group's smallest sorted index.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <omp.h>

#include "../FofBackends.h"
#include "jz/FofLinking.h"
#include "jz/Tree.h"

namespace jz
{
namespace
{
struct NodePair
{
  Index a, b;
};

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0)
{
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void reportProgress(const RunControl& control, double fraction)
{
  if (control.progress && !control.progress(fraction))
    throw Aborted();
}

inline std::uint8_t loadFlag(const std::uint8_t* f, Index i)
{
  return __atomic_load_n(f + i, __ATOMIC_RELAXED);
}

inline void setFlag(std::uint8_t* f, Index i)
{
  __atomic_store_n(f + i, std::uint8_t(1), __ATOMIC_RELAXED);
}

inline void atomicMin(GlobalId* slot, GlobalId v)
{
  GlobalId cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
  while (v < cur &&
    !__atomic_compare_exchange_n(slot, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
  {
  }
}

// Runs body(pair, out) over the input pairs on all threads and concatenates
// the pairs the threads emit.
template <class Body>
void expandPairs(
  const std::vector<NodePair>& in, std::vector<NodePair>& out, int numThreads, const Body& body)
{
  // Small lists run on the calling thread: a parallel region costs more.
  if (in.size() < 512)
    numThreads = 1;
  std::vector<std::vector<NodePair>> local(numThreads);
  const long long n = (long long)in.size();
#pragma omp parallel num_threads(numThreads) if (numThreads > 1)
  {
    std::vector<NodePair>& mine = local[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 16)
    for (long long k = 0; k < n; ++k)
      body(in[k], mine);
  }
  std::vector<std::size_t> offset(numThreads + 1, 0);
  for (int t = 0; t < numThreads; ++t)
    offset[t + 1] = offset[t] + local[t].size();
  out.resize(offset[numThreads]);
#pragma omp parallel for num_threads(numThreads) schedule(static, 1) if (numThreads > 1)
  for (int t = 0; t < numThreads; ++t)
  {
    std::copy(local[t].begin(), local[t].end(), out.begin() + offset[t]);
    std::vector<NodePair>().swap(local[t]);
  }
}

// Node-level state of one plane.
struct PlaneGroups
{
  std::vector<Index> grp;
  std::vector<std::uint8_t> linked;
};

template <class T>
class FofWalk
{
public:
  FofWalk(const ZTree<T>& tree, double linkingLength, int numThreads)
    : tree_(tree)
    , per_(tree.periodicity)
    , l2_(linkingLength * linkingLength)
    , nt_(numThreads)
  {
  }

  // Fills pointGroup (sorted order) with each point's root.
  void run(std::vector<Index>& pointGroup, RunInfo& info, const RunControl& control)
  {
    auto t0 = Clock::now();
    const int top = int(tree_.planes.size()) - 1;
    PlaneGroups parent, current;
    std::vector<NodePair> pairs, next;

    // Top plane: its nodes, grouped into super nodes of kGroup consecutive
    // nodes, with a dense interaction list among the super nodes.
    {
      const TreePlane<T>& plane = tree_.planes[top];
      const Index n = plane.numNodes();
      initPlaneRoots(plane, current);
      const Index numSuper = (n + kGroup - 1) / kGroup;
      pairs.clear();
      for (Index s = 0; s < numSuper; ++s)
        for (Index t = s; t < numSuper; ++t)
          pairs.push_back({ s, t });
      auto range = [n](Index s, Index& c0, Index& c1)
      {
        c0 = s * kGroup;
        c1 = std::min<Index>(n, c0 + kGroup);
      };
      nodeToNode(plane, current, pairs, next, range, nullptr, nullptr);
      contract(current);
      pairs.swap(next);
    }
    for (int p = top - 1; p >= 0; --p)
    {
      std::swap(parent, current);
      const TreePlane<T>& up = tree_.planes[p + 1];
      const TreePlane<T>& plane = tree_.planes[p];
      parentToNode(up, parent, plane, current);
      auto range = [&up](Index s, Index& c0, Index& c1)
      {
        c0 = up.childSplit[s];
        c1 = up.childSplit[s + 1];
      };
      nodeToNode(plane, current, pairs, next, range, &parent, &up);
      contract(current);
      pairs.swap(next);
      reportProgress(control, 0.1 + 0.4 * double(top - p) / double(top + 1));
    }
    info.counters.push_back({ "fof leaf pairs", double(pairs.size()) });
    info.stageSeconds.push_back({ "fof node walk", secondsSince(t0) });
    t0 = Clock::now();

    // Points: ParentToNode from the leaves, then the leaf interactions.
    const TreePlane<T>& leaves = tree_.planes[0];
    const Index numLeaves = leaves.numNodes();
    const Index n = tree_.sources.size();
    pointGroup.resize(n);
    Index* g = pointGroup.data();
#pragma omp parallel for num_threads(nt_) schedule(static)
    for (long long i = 0; i < (long long)numLeaves; ++i)
    {
      const Index s0 = leaves.sourceSplit[i], s1 = leaves.sourceSplit[i + 1];
      if (current.linked[i])
      {
        const Index r = leaves.sourceSplit[current.grp[i]];
        for (Index k = s0; k < s1; ++k)
          g[k] = r;
      }
      else
      {
        for (Index k = s0; k < s1; ++k)
          g[k] = k;
      }
    }

    // Split the leaf pairs into self and cross pairs, dropping those the
    // last contraction decided.
    std::vector<Index> selfLeaves;
    std::vector<NodePair> cross;
    {
      const std::vector<Index>& grp = current.grp;
      const std::vector<std::uint8_t>& linked = current.linked;
      for (const NodePair& pr : pairs)
      {
        if (pr.a == pr.b)
        {
          if (!linked[pr.a])
            selfLeaves.push_back(pr.a);
        }
        else if (!(linked[pr.a] && linked[pr.b] && grp[pr.a] == grp[pr.b]))
        {
          cross.push_back(pr);
        }
      }
      std::vector<NodePair>().swap(pairs);
      std::vector<NodePair>().swap(next);
    }
    info.counters.push_back({ "fof leaf self pairs", double(selfLeaves.size()) });
    info.counters.push_back({ "fof leaf cross pairs", double(cross.size()) });

    // "connected" = all points of the leaf are in one group.
    std::vector<std::uint8_t>& connected = current.linked;
    const long long numSelf = (long long)selfLeaves.size();
#pragma omp parallel num_threads(nt_)
    {
      LocalPoints lp;
#pragma omp for schedule(dynamic, 8)
      for (long long k = 0; k < numSelf; ++k)
      {
        const Index leaf = selfLeaves[k];
        if (leafSelf(leaves, leaf, g, lp))
          connected[leaf] = 1;
      }
    }
    info.stageSeconds.push_back({ "fof leaf self", secondsSince(t0) });
    t0 = Clock::now();
    reportProgress(control, 0.6);

    const long long numCross = (long long)cross.size();
#pragma omp parallel num_threads(nt_)
    {
      LocalPoints candA, candB;
#pragma omp for schedule(dynamic, 32)
      for (long long k = 0; k < numCross; ++k)
      {
        leafPair(leaves, cross[k].a, cross[k].b, connected, g, candA, candB);
      }
    }
    info.stageSeconds.push_back({ "fof leaf cross", secondsSince(t0) });
    t0 = Clock::now();
    reportProgress(control, 0.85);

#pragma omp parallel for num_threads(nt_) schedule(static)
    for (long long k = 0; k < (long long)n; ++k)
    {
      fofStore(g, Index(k), fofFind(g, Index(k)));
    }
    info.stageSeconds.push_back({ "fof contraction", secondsSince(t0) });
  }

private:
  static constexpr Index kGroup = 32; // NGR of section III-B
  // Node loops shorter than this run on the calling thread.
  static constexpr long long kSerialBelow = 16384;

  void point(Index k, T* p) const
  {
    p[0] = tree_.sources.x[k];
    p[1] = tree_.sources.y[k];
    p[2] = tree_.sources.z[k];
  }

  bool friends(Index a, Index b) const
  {
    T p[3], q[3];
    point(a, p);
    point(b, q);
    return fofFriends(p, q, l2_, per_);
  }

  void initPlaneRoots(const TreePlane<T>& plane, PlaneGroups& out) const
  {
    const Index n = plane.numNodes();
    out.grp.resize(n);
    out.linked.resize(n);
#pragma omp parallel for num_threads(nt_) schedule(static) if (n > kSerialBelow)
    for (long long i = 0; i < (long long)n; ++i)
    {
      out.grp[i] = Index(i);
      out.linked[i] =
        plane.numSources(Index(i)) > 0 && fofSelfLinked(plane.sourceBox[i], l2_, per_);
    }
  }

  // Eq. 19.
  void parentToNode(const TreePlane<T>& up, const PlaneGroups& parent, const TreePlane<T>& plane,
    PlaneGroups& out) const
  {
    const Index n = plane.numNodes();
    const Index np = up.numNodes();
    out.grp.resize(n);
    out.linked.resize(n);
#pragma omp parallel for num_threads(nt_) schedule(static) if (n > kSerialBelow)
    for (long long P = 0; P < (long long)np; ++P)
    {
      const Index c0 = up.childSplit[P], c1 = up.childSplit[P + 1];
      if (parent.linked[P])
      {
        const Index r = up.childSplit[parent.grp[P]];
        for (Index i = c0; i < c1; ++i)
        {
          out.grp[i] = r;
          out.linked[i] = 1;
        }
      }
      else
      {
        for (Index i = c0; i < c1; ++i)
        {
          out.grp[i] = i;
          out.linked[i] = plane.numSources(i) > 0 && fofSelfLinked(plane.sourceBox[i], l2_, per_);
        }
      }
    }
  }

  // Evaluates the child pairs of the parent pairs; kept pairs go to out.
  template <class Range>
  void nodeToNode(const TreePlane<T>& plane, PlaneGroups& groups, const std::vector<NodePair>& in,
    std::vector<NodePair>& out, const Range& range, const PlaneGroups* parent,
    const TreePlane<T>* parentPlane) const
  {
    Index* grp = groups.grp.data();
    std::uint8_t* linked = groups.linked.data();
    auto body = [&](const NodePair& pr, std::vector<NodePair>& emit)
    {
      if (parent)
      {
        // The parent plane's contraction may have decided the pair since it
        // was kept.
        const std::uint8_t la = parent->linked[pr.a];
        if (pr.a == pr.b ? la
                         : (la && parent->linked[pr.b] && parent->grp[pr.a] == parent->grp[pr.b]))
        {
          return;
        }
      }
      Index a0, a1, b0, b1;
      range(pr.a, a0, a1);
      range(pr.b, b0, b1);
      const bool self = pr.a == pr.b;
      // Image modes of the parent pair hold for the children's pairs.
      int mode[3] = { kFofMixed, kFofMixed, kFofMixed };
      const Box<T>* parentB = nullptr;
      if (parentPlane)
      {
        const Box<T>& pa = parentPlane->sourceBox[pr.a];
        parentB = &parentPlane->sourceBox[pr.b];
        for (int d = 0; d < 3; ++d)
          mode[d] = fofImageMode(pa, *parentB, d, per_.length[d]);
      }
      for (Index i = a0; i < a1; ++i)
      {
        if (plane.numSources(i) == 0)
          continue;
        const Box<T>& bi = plane.sourceBox[i];
        // Child i against the whole other parent first.
        if (parentB && !self &&
          classifyFofPairModes(bi, *parentB, mode, l2_, per_) == FofPairAction::Discard)
        {
          continue;
        }
        for (Index j = self ? i : b0; j < b1; ++j)
        {
          if (j == i)
          {
            if (!loadFlag(linked, i))
              emit.push_back({ i, i });
            continue;
          }
          if (plane.numSources(j) == 0)
            continue;
          const bool li = loadFlag(linked, i), lj = loadFlag(linked, j);
          if (li && lj && fofFind(grp, i) == fofFind(grp, j))
            continue;
          const FofPairAction act = classifyFofPairModes(bi, plane.sourceBox[j], mode, l2_, per_);
          if (act == FofPairAction::Discard)
            continue;
          if (act == FofPairAction::Link)
          {
            fofUnion(grp, i, j);
            if (!li)
              setFlag(linked, i);
            if (!lj)
              setFlag(linked, j);
            continue;
          }
          emit.push_back({ i, j });
        }
      }
    };
    expandPairs(in, out, nt_, body);
  }

  void contract(PlaneGroups& groups) const
  {
    Index* grp = groups.grp.data();
    const long long n = (long long)groups.grp.size();
#pragma omp parallel for num_threads(nt_) schedule(static) if (n > kSerialBelow)
    for (long long i = 0; i < n; ++i)
      fofStore(grp, Index(i), fofFind(grp, Index(i)));
  }

  // Per-dimension nearest-image mode of a pair of boxes. With every point
  // pair's direct separation |a - b| (rounded) at most L/2, separation()
  // never wraps (kDirect); with every one above L/2 it always wraps (kWrap);
  // otherwise it depends on the pair (kMixed). Rounding is monotone, so the
  // box-level test decides each point pair's branch exactly, and sepd()
  // reproduces Geometry.h's separation() bit for bit.
  enum Mode : int
  {
    kDirect = 0,
    kWrap = 1,
    kMixed = 2
  };

  struct Frame
  {
    int mode[3];
    double period[3];
    bool direct; // all three kDirect
  };

  Frame frame(const Box<T>& a, const Box<T>& b) const
  {
    Frame f;
    for (int d = 0; d < 3; ++d)
    {
      const double L = per_.length[d];
      f.period[d] = L;
      if (!(L > 0))
      {
        f.mode[d] = kDirect;
        continue;
      }
      const double far =
        jzMax(double(a.hi[d]) - double(b.lo[d]), double(b.hi[d]) - double(a.lo[d]));
      const double near =
        jzMax(0.0, jzMax(double(b.lo[d]) - double(a.hi[d]), double(a.lo[d]) - double(b.hi[d])));
      f.mode[d] = far <= 0.5 * L ? kDirect : (near > 0.5 * L ? kWrap : kMixed);
    }
    f.direct = f.mode[0] == kDirect && f.mode[1] == kDirect && f.mode[2] == kDirect;
    return f;
  }

  static double sepd(double a, double b, int mode, double L)
  {
    double v = jzAbs(a - b);
    if (mode == kWrap)
      v = L - v;
    else if (mode == kMixed && v > 0.5 * L)
      v = L - v;
    return v;
  }

  // Lower bound of sepd(a, b) over b in [lo, hi] (no larger than any of them).
  static double gapd(double a, double lo, double hi, int mode, double L)
  {
    if (mode == kDirect)
      return jzMax(0.0, jzMax(lo - a, a - hi));
    if (mode == kWrap)
      return L - jzMax(jzAbs(a - lo), jzAbs(a - hi));
    return gapLow(a, a, lo, hi, L);
  }

  // Coordinates of [s0, s1) in double, structure of arrays.
  struct LocalPoints
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

  // A leaf with itself; its points are private to the calling thread.
  // Returns whether the leaf ends up as one group.
  bool leafSelf(const TreePlane<T>& leaves, Index leaf, Index* g, LocalPoints& lp) const
  {
    const Index s0 = leaves.sourceSplit[leaf], s1 = leaves.sourceSplit[leaf + 1];
    const Index needed = s1 - s0 - 1;
    if (needed == 0)
      return true;
    const Frame f = frame(leaves.sourceBox[leaf], leaves.sourceBox[leaf]);
    Index unions = 0;
    if (f.mode[0] != kDirect || f.mode[1] != kDirect || f.mode[2] != kDirect)
    {
      // A leaf wider than half the box: the general code.
      for (Index a = s0; a < s1; ++a)
        for (Index b = a + 1; b < s1; ++b)
          if (fofFindLocal(g, a) != fofFindLocal(g, b) && friends(a, b) && fofUnionLocal(g, a, b) &&
            ++unions == needed)
            return true;
      return false;
    }
    lp.clear();
    const auto& sx = tree_.sources.x;
    const auto& sy = tree_.sources.y;
    const auto& sz = tree_.sources.z;
    for (Index k = s0; k < s1; ++k)
      lp.push(double(sx[k]), double(sy[k]), double(sz[k]), k);
    const std::size_t n = lp.size();
    lp.d2.resize(n);
    const double* x = lp.x.data();
    const double* y = lp.y.data();
    const double* z = lp.z.data();
    double* d2 = lp.d2.data();
    for (std::size_t a = 0; a + 1 < n; ++a)
    {
      const double ax = x[a], ay = y[a], az = z[a];
      // Same operations and order as distance2() without wrapping.
      for (std::size_t b = a + 1; b < n; ++b)
      {
        const double dx = ax - x[b], dy = ay - y[b], dz = az - z[b];
        double s = 0;
        s += dx * dx;
        s += dy * dy;
        s += dz * dz;
        d2[b] = s;
      }
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
  void candidates(Index s0, Index s1, const Box<T>& other, const Frame& f, LocalPoints& cand) const
  {
    cand.clear();
    const auto& sx = tree_.sources.x;
    const auto& sy = tree_.sources.y;
    const auto& sz = tree_.sources.z;
    const double lo[3] = { double(other.lo[0]), double(other.lo[1]), double(other.lo[2]) };
    const double hi[3] = { double(other.hi[0]), double(other.hi[1]), double(other.hi[2]) };
    if (f.mode[0] == kDirect && f.mode[1] == kDirect && f.mode[2] == kDirect)
    {
      // The common case, in a vectorisable loop.
      const Index n = s1 - s0;
      cand.d2.resize(n);
      double* __restrict s2 = cand.d2.data();
      const T* __restrict px = sx.data() + s0;
      const T* __restrict py = sy.data() + s0;
      const T* __restrict pz = sz.data() + s0;
      const double lo0 = lo[0], lo1 = lo[1], lo2 = lo[2], hi0 = hi[0], hi1 = hi[1], hi2 = hi[2];
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
      {
        if (s2[k] <= l2_)
          cand.push(double(px[k]), double(py[k]), double(pz[k]), s0 + k);
      }
      return;
    }
    for (Index k = s0; k < s1; ++k)
    {
      const double p[3] = { double(sx[k]), double(sy[k]), double(sz[k]) };
      double s = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double gd = gapd(p[d], lo[d], hi[d], f.mode[d], f.period[d]);
        s += gd * gd;
      }
      if (s <= l2_)
        cand.push(p[0], p[1], p[2], k);
    }
  }

  bool friendsIn(
    const LocalPoints& A, std::size_t i, const LocalPoints& B, std::size_t j, const Frame& f) const
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

  void leafPair(const TreePlane<T>& leaves, Index A, Index B,
    const std::vector<std::uint8_t>& connected, Index* g, LocalPoints& candA,
    LocalPoints& candB) const
  {
    const Index a0 = leaves.sourceSplit[A], a1 = leaves.sourceSplit[A + 1];
    const Index b0 = leaves.sourceSplit[B], b1 = leaves.sourceSplit[B + 1];
    const bool cA = connected[A], cB = connected[B];
    if (cA && cB && fofFind(g, a0) == fofFind(g, b0))
      return;
    const Frame f = frame(leaves.sourceBox[A], leaves.sourceBox[B]);
    candidates(a0, a1, leaves.sourceBox[B], f, candA);
    if (candA.size() == 0)
      return;
    candidates(b0, b1, leaves.sourceBox[A], f, candB);
    if (candB.size() == 0)
      return;
    const std::size_t na = candA.size(), nb = candB.size();
    if (cA && cB)
    {
      // One friend pair joins the two leaves.
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = 0; j < nb; ++j)
          if (friendsIn(candA, i, candB, j, f))
          {
            fofUnion(g, candA.id[i], candB.id[j]);
            return;
          }
      return;
    }
    if (cA)
    {
      // Each point of B needs one friend in the connected leaf A.
      for (std::size_t j = 0; j < nb; ++j)
      {
        if (fofFind(g, candB.id[j]) == fofFind(g, a0))
          continue;
        for (std::size_t i = 0; i < na; ++i)
          if (friendsIn(candA, i, candB, j, f))
          {
            fofUnion(g, candA.id[i], candB.id[j]);
            break;
          }
      }
      return;
    }
    if (cB)
    {
      for (std::size_t i = 0; i < na; ++i)
      {
        if (fofFind(g, candA.id[i]) == fofFind(g, b0))
          continue;
        for (std::size_t j = 0; j < nb; ++j)
          if (friendsIn(candA, i, candB, j, f))
          {
            fofUnion(g, candA.id[i], candB.id[j]);
            break;
          }
      }
      return;
    }
    for (std::size_t i = 0; i < na; ++i)
      for (std::size_t j = 0; j < nb; ++j)
        if (friendsIn(candA, i, candB, j, f))
          fofUnion(g, candA.id[i], candB.id[j]);
  }

  const ZTree<T>& tree_;
  Periodicity per_;
  double l2_;
  int nt_;
};
} // namespace

template <class T>
void fofCpu(const FofProblem<T>& problem, FofGroups& out, RunInfo& info, const RunControl& control)
{
  const int numThreads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  const Index n = Index(problem.numPoints);
  const Periodicity per = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);

  auto t0 = Clock::now();
  ZTree<T> tree;
  {
    RunControl treeControl = control;
    if (control.progress)
    {
      treeControl.progress = [&control](double f) { return control.progress(0.1 * f); };
    }
    int saved = omp_get_max_threads();
    omp_set_num_threads(numThreads);
    try
    {
      buildTreeCpu<T>(
        problem.points, n, nullptr, 0, per, problem.boxLo, TreeBuildOptions(), tree, treeControl);
    }
    catch (...)
    {
      omp_set_num_threads(saved);
      throw;
    }
    omp_set_num_threads(saved);
  }
  info.stageSeconds.push_back({ "tree build", secondsSince(t0) });

  t0 = Clock::now();
  std::vector<Index> group;
  {
    FofWalk<T> walk(tree, problem.linkingLength, numThreads);
    walk.run(group, info, control);
  }
  info.stageSeconds.push_back({ "fof walk", secondsSince(t0) });

  t0 = Clock::now();
  // Only the input order is needed from here on: free the coordinates and
  // planes before the outputs are allocated.
  std::vector<TreePlane<T>>().swap(tree.planes);
  std::vector<T>().swap(tree.sources.x);
  std::vector<T>().swap(tree.sources.y);
  std::vector<T>().swap(tree.sources.z);
  const Index* input = tree.sources.inputIndex.data();
  const GlobalId* ids = problem.ids;
  const Index* g = group.data();
  std::vector<GlobalId> minId;
  if (out.wantLabel)
  {
    // The smallest id per root, in sorted order (members sit near their
    // root there, so the atomic minima stay in cache).
    minId.resize(n);
    GlobalId* m = minId.data();
#pragma omp parallel num_threads(numThreads)
    {
#pragma omp for schedule(static)
      for (long long k = 0; k < (long long)n; ++k)
      {
        if (g[k] == Index(k))
          m[k] = ids ? ids[input[k]] : GlobalId(input[k]);
      }
#pragma omp for schedule(static)
      for (long long k = 0; k < (long long)n; ++k)
      {
        if (g[k] != Index(k))
          atomicMin(m + g[k], ids ? ids[input[k]] : GlobalId(input[k]));
      }
    }
  }
  // One scatter pass into input order.
  if (out.wantRoot)
    out.groupRoot.resize(n);
  if (out.wantLabel)
    out.groupLabel.resize(n);
  Index* root = out.wantRoot ? out.groupRoot.data() : nullptr;
  GlobalId* label = out.wantLabel ? out.groupLabel.data() : nullptr;
  const GlobalId* m = minId.data();
#pragma omp parallel for num_threads(numThreads) schedule(static)
  for (long long k = 0; k < (long long)n; ++k)
  {
    const Index i = input[k];
    const Index r = g[k];
    if (root)
      root[i] = input[r];
    if (label)
      label[i] = m[r];
  }
  info.stageSeconds.push_back({ "fof output", secondsSince(t0) });
  reportProgress(control, 1.0);
}

template void fofCpu<float>(const FofProblem<float>&, FofGroups&, RunInfo&, const RunControl&);
template void fofCpu<double>(const FofProblem<double>&, FofGroups&, RunInfo&, const RunControl&);
} // namespace jz
