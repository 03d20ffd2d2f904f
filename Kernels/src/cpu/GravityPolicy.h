// Tree gravity as a policy of the dual-walk engine (walk/DualWalk.h): the
// group walk of Nakasato (2011) on the z-order planes. Query-centric,
// unsorted, nothing pruned: a source node d whose multipole is acceptable for
// every point of receiver node c (GravityTerms.h, multipoleAcceptable) is
// applied to c's points on the plane where that first holds; the pairs still
// open at the leaves are summed directly. The engine visits every (c, d)
// exactly once (doc/ARCHITECTURE.md, "What the engine guarantees"), so every
// source is counted exactly once for every query.
#pragma once

#include <algorithm>
#include <vector>

#include "../GravityTerms.h"
#include "../walk/PerThread.h"
#include "../walk/WalkPolicy.h"
#include "jz/Tree.h"

namespace jz
{
// The direct sum of sources [begin, end) of a gathered leaf list on one query
// point, in double.
inline void sumGathered(GravitySum& sum, const double* x, const double* y, const double* z,
  const double* m, std::size_t begin, std::size_t end, const double* q, double eps2)
{
  double u = 0, g0 = 0, g1 = 0, g2 = 0;
  for (std::size_t j = begin; j < end; ++j)
  {
    const double dx = x[j] - q[0], dy = y[j] - q[1], dz = z[j] - q[2];
    const double s2 = dx * dx + dy * dy + dz * dz + eps2;
    const double inv = s2 > 0 ? 1.0 / std::sqrt(s2) : 0.0; // r = 0, eps = 0: skipped
    const double mi = m[j] * inv;
    const double mi3 = mi * inv * inv;
    u += mi;
    g0 += mi3 * dx;
    g1 += mi3 * dy;
    g2 += mi3 * dz;
  }
  sum.u += u;
  sum.g[0] += g0;
  sum.g[1] += g1;
  sum.g[2] += g2;
}

template <class T>
struct GravityPolicy : WalkPolicyDefaults
{
  static constexpr Index kNoSource = Index(-1);

  const ZTree<T>& tree;
  const std::vector<std::vector<GravityMoments>>& moments;
  const std::vector<double>& mass; // per sorted source
  // Per sorted query: the sorted source it is (excluded), or kNoSource;
  // empty: a self query excludes q itself, separate queries nothing.
  const std::vector<Index>& ownSource;
  double theta2, eps2;
  std::vector<GravitySum>& sums; // per sorted query

  struct Scratch
  {
    std::vector<double> x, y, z, m;
    std::vector<std::pair<Index, std::size_t>> starts; // (leaf, offset in the gathered list)
  };
  PerThread<Scratch> scratch;

  GravityPolicy(const ZTree<T>& tree_, const std::vector<std::vector<GravityMoments>>& moments_,
    const std::vector<double>& mass_, const std::vector<Index>& ownSource_, double theta,
    double eps, std::vector<GravitySum>& sums_, int numThreads)
    : tree(tree_)
    , moments(moments_)
    , mass(mass_)
    , ownSource(ownSource_)
    , theta2(theta * theta)
    , eps2(eps * eps)
    , sums(sums_)
    , scratch(numThreads)
  {
  }

  template <class C>
  PairVerdict testPair(int p, Index c, Index d, const C&, double& /*low2*/) const
  {
    const GravityMoments& n = moments[p][d];
    if (!(n.mass > 0))
      return PairVerdict::Prune; // massless: contributes exactly nothing
    const Box<T>& box = tree.queryBox(p, c);
    double dist2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double below = double(box.lo[k]) - n.com[k];
      const double above = n.com[k] - double(box.hi[k]);
      const double gap = below > 0 ? below : (above > 0 ? above : 0.0);
      dist2 += gap * gap;
    }
    return multipoleAcceptable(n, dist2, theta2) ? PairVerdict::Accept : PairVerdict::Keep;
  }

  // c belongs to this thread: its queries' sums need no atomics.
  template <class C>
  void accept(int p, Index c, Index d, const C&)
  {
    const GravityMoments& n = moments[p][d];
    const SortedPoints<T>& qp = tree.queryPoints();
    const TreePlane<T>& plane = tree.planes[p];
    for (Index q = plane.querySplit[c]; q < plane.querySplit[c + 1]; ++q)
    {
      const double x[3] = { double(qp.x[q]), double(qp.y[q]), double(qp.z[q]) };
      addMultipoleTerm(sums[q], n, x, eps2);
    }
  }

  // The open source leaves are gathered once into contiguous double arrays;
  // each query point of c then streams through them, skipping itself.
  void consumeLeaf(Index c, const LeafList& list)
  {
    Scratch& s = scratch.mine();
    const TreePlane<T>& leaves = tree.planes[0];
    gather(list, s);
    const SortedPoints<T>& qp = tree.queryPoints();
    for (Index q = leaves.querySplit[c]; q < leaves.querySplit[c + 1]; ++q)
    {
      const double x[3] = { double(qp.x[q]), double(qp.y[q]), double(qp.z[q]) };
      const std::size_t own = ownOffset(q, s);
      const std::size_t n = s.x.size();
      if (own == std::size_t(-1))
        sumGathered(sums[q], s.x.data(), s.y.data(), s.z.data(), s.m.data(), 0, n, x, eps2);
      else
      {
        sumGathered(sums[q], s.x.data(), s.y.data(), s.z.data(), s.m.data(), 0, own, x, eps2);
        sumGathered(sums[q], s.x.data(), s.y.data(), s.z.data(), s.m.data(), own + 1, n, x, eps2);
      }
    }
  }

private:
  void gather(const LeafList& list, Scratch& s) const
  {
    const TreePlane<T>& leaves = tree.planes[0];
    const SortedPoints<T>& src = tree.sources;
    s.x.clear();
    s.y.clear();
    s.z.clear();
    s.m.clear();
    s.starts.clear();
    for (const LeafCandidate& e : list)
    {
      s.starts.emplace_back(e.node, s.x.size());
      for (Index j = leaves.sourceSplit[e.node]; j < leaves.sourceSplit[e.node + 1]; ++j)
      {
        s.x.push_back(double(src.x[j]));
        s.y.push_back(double(src.y[j]));
        s.z.push_back(double(src.z[j]));
        s.m.push_back(mass[j]);
      }
    }
  }

  // Where query q's own source lies in the gathered list, if it is there
  // (it always is when it exists: its leaf meets the query's leaf at
  // distance 0, which no multipole accepts).
  std::size_t ownOffset(Index q, const Scratch& s) const
  {
    if (ownSource.empty() && !tree.selfQuery)
      return std::size_t(-1);
    const Index own = ownSource.empty() ? q : ownSource[q];
    if (own == kNoSource)
      return std::size_t(-1);
    const std::vector<Index>& split = tree.planes[0].sourceSplit;
    const Index leaf = Index(std::upper_bound(split.begin(), split.end(), own) - split.begin() - 1);
    for (const auto& st : s.starts)
      if (st.first == leaf)
        return st.second + (own - split[leaf]);
    return std::size_t(-1);
  }
};
} // namespace jz
