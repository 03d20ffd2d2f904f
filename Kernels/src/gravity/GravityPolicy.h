// Tree gravity as a policy of the dual-walk engine (walk/DualWalk.h): the
// group walk of Nakasato (2011) with node-node interactions on the upper
// planes (falcON's fast multipole method, Dehnen 2002, with Cartesian
// expansions: GravityExpansion.h). Query-centric, unsorted, nothing pruned
// but massless nodes. For receiver node c and source node d on one plane:
//  - M2L, when d's multipole expands accurately about c's centre for all of
//    c's points (expandable: the mutual criterion), into c's local expansion,
//    which is shifted down and evaluated at the points after the walk
//    (gravityDownward, GravityCpu.cpp);
//  - else M2P, when d's quadrupole is acceptable for every point of c
//    (GravityTerms.h, multipoleAcceptable): applied to c's points;
//  - else the children pairs, and at the leaves direct sums (P2P); before a
//    receiving leaf meets the children of a kept source Q, Q itself is
//    tested for the whole leaf (childMeetsEntry) and, if acceptable, taken
//    as one multipole instead of its children's.
// Both wait per thread until the parent's pairs are all tested (endParent).
// The engine visits every (c, d) exactly once (walk/DualWalk.h, "What the
// engine guarantees"), so every source is counted exactly once for every
// query.
#pragma once

#include <algorithm>
#include <vector>

#include "gravity/GravityTerms.h"
#include "walk/PerThread.h"
#include "walk/WalkPolicy.h"
#include "gravity/GravityExpansion.h"
#include "gravity/GravityKernelsCpu.h"
#include "gravity/GravityNodes.h"
#include "jz/Tree.h"

namespace jz
{
// The fast multipole part's settings (chosen on uniform and clustered
// points): expansions of order 4; the mutual criterion at 0.52 theta, which
// keeps the errors those of the group walk alone (with the opening criterion
// of GravityTerms.h a larger factor lets the M2L errors dominate);
// receivers from plane 1 up (a leaf's few points take M2P cheaper).
constexpr int kGravityLocalOrder = 4;
constexpr double kGravityLocalThetaFactor = 0.52;
constexpr int kGravityLocalFromPlane = 1;

template <class T>
struct GravityPolicy : WalkPolicyDefaults
{
  static constexpr Index kNoSource = Index(-1);

  const ZTree<T>& tree;
  const std::vector<std::vector<GravityMoments>>& moments;
  std::vector<GravityPlaneNodes>& nodes; // the local expansions are summed into
  const GravityExpansion& expansion;
  const std::vector<double>& mass; // per sorted source
  // Per sorted query: the sorted source it is (excluded), or kNoSource;
  // empty: a self query excludes q itself, separate queries nothing.
  const std::vector<Index>& ownSource;
  double theta2, thetaLocal;
  int localFrom; // the lowest plane whose receivers expand (M2L)
  double eps2;
  // theta > 0: the direct terms in single precision (GravityKernelsCpu.h);
  // theta = 0 is exact direct summation in double.
  bool fast;
  FloatUnits units;
  bool field; // grad U wanted (else U alone)
  // Per sorted query: coordinates in double, and U, grad U (summed into).
  const double *qx, *qy, *qz;
  double *u, *gx, *gy, *gz;

  struct Scratch
  {
    std::vector<double> x, y, z, m;
    std::vector<float> sx, sy, sz, mf; // the same in float units (fast)
    std::vector<float> queryAt;        // a leaf's queries, xyz in float units,
    std::vector<std::size_t> queryOwn; // their own sources' offsets in sx...,
    std::vector<GravitySum> sums;      // and their direct sums
    // Per child c of this parent (from childBegin), the sources d accepted
    // for M2L and for M2P, in the order accepted.
    Index childBegin = 0;
    std::vector<std::vector<Index>> local, accepted;
    std::vector<std::vector<Index>> acceptedAbove;     // sources one plane up (childMeetsEntry)
    std::vector<double> batchR, batchM, lanes;         // one M2L batch, lane-minor
    std::vector<FloatMultipole> nodes;                 // M2P of one receiver
    std::vector<float> fx, fy, fz;                     // its queries, float offsets
    std::vector<std::pair<Index, std::size_t>> starts; // (leaf, offset in the gathered list)
    std::vector<double> pointMass;                     // per query of a point-mass node
    Index ownLeaf = Index(-1);                         // ownOffset's last leaf, and its
    std::size_t ownStart = 0;                          // offset (-1: not gathered)
    double m2l = 0, multipoles = 0, direct = 0;        // interactions, for RunInfo
  };
  PerThread<Scratch> scratch;
  // Per plane, each node's floatMoments (theta > 0), from beginPlane on.
  std::vector<std::vector<FloatMultipole>> floatMoments;

  GravityPolicy(const ZTree<T>& tree_, const std::vector<std::vector<GravityMoments>>& moments_,
    std::vector<GravityPlaneNodes>& nodes_, const GravityExpansion& expansion_,
    const std::vector<double>& mass_, const std::vector<Index>& ownSource_, double theta_,
    double eps, const FloatUnits& units_, bool field_, const double* const q[3],
    double* const sum[4], int numThreads)
    : tree(tree_)
    , moments(moments_)
    , nodes(nodes_)
    , expansion(expansion_)
    , mass(mass_)
    , ownSource(ownSource_)
    , theta2(theta_ * theta_)
    , thetaLocal(theta_ * kGravityLocalThetaFactor)
    , localFrom(kGravityLocalFromPlane)
    , eps2(eps * eps)
    , fast(theta_ > 0)
    , units(units_)
    , field(field_)
    , qx(q[0])
    , qy(q[1])
    , qz(q[2])
    , u(sum[0])
    , gx(sum[1])
    , gy(sum[2])
    , gz(sum[3])
    , scratch(numThreads)
    , floatMoments(moments_.size())
  {
  }

  // Before plane p's first test: its nodes' float multipoles, once.
  void beginPlane(int p)
  {
    if (!fast || p >= int(floatMoments.size()))
      return;
    const std::vector<GravityMoments>& plane = moments[p];
    std::vector<FloatMultipole>& out = floatMoments[p];
    out.resize(plane.size());
    for (std::size_t d = 0; d < plane.size(); ++d)
      out[d] = jz::floatMoments(plane[d], units);
  }

  // Whether node d's multipole, expanded locally about receiver c's centre,
  // is accurate enough for all of c's points: the mutual criterion of falcON
  // (Dehnen 2002), r_c + r_d < theta_L R with the balls' radii about the
  // receiver centre and the source's centre of mass, and r_c + r_d < R
  // (the balls apart: the Taylor series converges, no point is in both).
  // Only receivers from plane kGravityLocalFromPlane up expand: for a leaf's
  // few points the group walk's M2P costs less than an M2L.
  bool expandable(int p, Index c, Index d) const
  {
    if (p < localFrom)
      return false;
    const GravityPlaneNodes& n = nodes[p];
    const double R =
      gravity_detail::distance(n.receiverCentre.data() + 3 * std::size_t(c), moments[p][d].com);
    const double reach = n.receiverRadius[c] + n.sourceRadius[d];
    return (reach < thetaLocal * R) & (reach < R);
  }

  // Squared distance from receiver c's box (plane p) to n's centre of mass.
  double boxGap2(int p, Index c, const GravityMoments& n) const
  {
    const Box<T>& box = tree.queryBox(p, c);
    double dist2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double below = double(box.lo[k]) - n.com[k];
      const double above = n.com[k] - double(box.hi[k]);
      const double gap =
        gravity_detail::maxNoBranch(gravity_detail::maxNoBranch(below, above), 0.0);
      dist2 += gap * gap;
    }
    return dist2;
  }

  // The three tests all computed and combined without branches: on
  // clustered points each verdict is close to a coin flip, and the early
  // returns cost more in mispredictions than the tests themselves. The
  // verdicts are those of the sequential tests: prune the massless, else
  // accept a point mass, an expandable pair or an acceptable multipole.
  template <class C>
  PairVerdict testPair(int p, Index c, Index d, const C&, double& /*low2*/) const
  {
    const GravityMoments& n = moments[p][d];
    const double dist2 = boxGap2(p, c, n);
    const bool accept =
      (n.radius2 == 0) | expandable(p, c, d) | multipoleAcceptable(n, dist2, theta2);
    const bool massive = n.mass > 0; // else massless: contributes exactly nothing
    static_assert(
      int(PairVerdict::Prune) == 0 && int(PairVerdict::Accept) == 1 && int(PairVerdict::Keep) == 2,
      "the verdict is computed from these values");
    return PairVerdict((2 - int(accept)) * int(massive));
  }

  // Per receiver parent, before its pairs: its children's lists emptied.
  double beginParent(const ParentView& parent)
  {
    Scratch& s = scratch.mine();
    const std::size_t children = std::size_t(parent.childEnd - parent.childBegin);
    s.childBegin = parent.childBegin;
    for (std::vector<std::vector<Index>>* lists : { &s.local, &s.accepted, &s.acceptedAbove })
    {
      if (lists->size() < children)
        lists->resize(children);
      for (std::size_t i = 0; i < children; ++i)
        (*lists)[i].clear();
    }
    return kInfinity;
  }

  // Before its children are tested against receiver child c: the entry's
  // source Q itself (one plane up) when its multipole is acceptable for all
  // of c's points (theta > 0), applied as one M2P instead of one per child
  // of Q (the receiver side opened alone). False drops Q's children for c.
  template <class C>
  bool childMeetsEntry(int p, Index c, Index Q, double /*entryLow2*/, const C&)
  {
    if (!fast || p >= localFrom || p + 1 >= int(moments.size()))
      return true;
    const GravityMoments& n = moments[p + 1][Q];
    if (!(n.mass > 0) || n.radius2 == 0 || !multipoleAcceptable(n, boxGap2(p, c, n), theta2))
      return true;
    Scratch& s = scratch.mine();
    s.acceptedAbove[c - s.childBegin].push_back(Q);
    return false;
  }

  // c belongs to this thread: its local expansion and its queries' sums need
  // no atomics. M2L and M2P wait in the thread's lists until the parent's
  // pairs are all tested (endParent); only theta > 0 accepts either (at
  // theta = 0 only exact point masses are).
  template <class C>
  void accept(int p, Index c, Index d, const C&)
  {
    Scratch& s = scratch.mine();
    if (expandable(p, c, d))
      return s.local[c - s.childBegin].push_back(d);
    if (moments[p][d].radius2 == 0)
      return acceptPointMass(p, c, d);
    s.accepted[c - s.childBegin].push_back(d);
  }

  void endParent(const ParentView& parent)
  {
    Scratch& s = scratch.mine();
    for (Index c = parent.childBegin; c < parent.childEnd; ++c)
    {
      if (!s.local[c - s.childBegin].empty())
        applyLocal(parent.plane, c, s.local[c - s.childBegin], s);
      if (!s.accepted[c - s.childBegin].empty() || !s.acceptedAbove[c - s.childBegin].empty())
        applyMultipoles(
          parent.plane, c, s.accepted[c - s.childBegin], s.acceptedAbove[c - s.childBegin], s);
    }
  }

  // The open source leaves are gathered once into contiguous arrays (float
  // offsets from c's first query at theta > 0, double at theta = 0); c's
  // query points then stream through them, several at a time in float,
  // each skipping itself.
  void consumeLeaf(Index c, const LeafList& list)
  {
    Scratch& s = scratch.mine();
    const TreePlane<T>& leaves = tree.planes[0];
    const Index q0 = leaves.querySplit[c], q1 = leaves.querySplit[c + 1];
    const double origin[3] = { qx[q0], qy[q0], qz[q0] };
    gather(list, origin, s);
    if (fast)
      return directFloat(q0, q1, origin, s);
    for (Index q = q0; q < q1; ++q)
    {
      // The query's own source is made massless for its sum: it adds 0.
      const std::size_t own = ownOffset(q, s);
      GravitySum sum;
      s.direct += s.x.size();
      const double x[3] = { qx[q], qy[q], qz[q] };
      const double ownMass = own == std::size_t(-1) ? 0.0 : s.m[own];
      if (own != std::size_t(-1))
        s.m[own] = 0;
      sumDirectCpu(s.x.data(), s.y.data(), s.z.data(), s.m.data(), s.x.size(), x, eps2, sum);
      if (own != std::size_t(-1))
        s.m[own] = ownMass;
      addSum(q, sum);
    }
  }

private:
  // Queries [q0, q1) of one leaf on the gathered sources in float, all in
  // one call (the kernel takes several queries per pass over the sources).
  void directFloat(Index q0, Index q1, const double* origin, Scratch& s)
  {
    const std::size_t n = q1 - q0;
    s.direct += double(s.sx.size()) * double(n);
    s.queryAt.resize(3 * n);
    s.queryOwn.resize(n);
    s.sums.assign(n, GravitySum());
    for (std::size_t i = 0; i < n; ++i)
    {
      const Index q = q0 + Index(i);
      s.queryAt[3 * i] = float((qx[q] - origin[0]) * units.invLength);
      s.queryAt[3 * i + 1] = float((qy[q] - origin[1]) * units.invLength);
      s.queryAt[3 * i + 2] = float((qz[q] - origin[2]) * units.invLength);
      s.queryOwn[i] = ownOffset(q, s);
    }
    sumDirectFloatCpu(s.sx.data(), s.sy.data(), s.sz.data(), s.mf.data(), s.sx.size(),
      s.queryAt.data(), s.queryOwn.data(), n, units, field, s.sums.data());
    for (std::size_t i = 0; i < n; ++i)
      addSum(q0 + Index(i), s.sums[i]);
  }

  void addSum(Index q, const GravitySum& sum)
  {
    u[q] += sum.u;
    gx[q] += sum.g[0];
    gy[q] += sum.g[1];
    gz[q] += sum.g[2];
  }

  // Child c's accepted M2L (sources `from`), kM2LLanes per batch, into its
  // local expansion.
  void applyLocal(int p, Index c, const std::vector<Index>& from, Scratch& s)
  {
    s.m2l += double(from.size());
    const GravityPlaneNodes& n = nodes[p];
    const std::size_t N = std::size_t(expansion.size()), W = kM2LLanes;
    s.batchR.resize(3 * W);
    s.batchM.resize(N * W);
    const double* centre = n.receiverCentre.data() + 3 * std::size_t(c);
    s.lanes.assign(N * W, 0.0);
    for (std::size_t a = 0; a < from.size();)
    {
      std::size_t l = 0;
      for (; l < W && a < from.size(); ++l, ++a)
      {
        const Index d = from[a];
        const double* com = moments[p][d].com;
        for (int k = 0; k < 3; ++k)
          s.batchR[k * W + l] = centre[k] - com[k];
        const double* M = n.multipole.data() + std::size_t(d) * N;
        for (std::size_t k = 0; k < N; ++k)
          s.batchM[k * W + l] = M[k];
      }
      for (; l < W; ++l) // massless lanes, away from 0
      {
        for (int k = 0; k < 3; ++k)
          s.batchR[k * W + l] = 1.0;
        for (std::size_t k = 0; k < N; ++k)
          s.batchM[k * W + l] = 0.0;
      }
      expansion.multipolesToLocal(s.batchR.data(), s.batchM.data(), eps2, s.lanes.data());
    }
    expansion.addLanes(s.lanes.data(), nodes[p].local.data() + std::size_t(c) * N);
  }

  // Child c's accepted multipoles (sources `from` on its plane, `above` one
  // plane up) at once (M2P): its queries as float offsets from its first
  // query, each query's terms summed in registers.
  void applyMultipoles(
    int p, Index c, const std::vector<Index>& from, const std::vector<Index>& above, Scratch& s)
  {
    const Index q0 = tree.planes[p].querySplit[c], q1 = tree.planes[p].querySplit[c + 1];
    const double origin[3] = { qx[q0], qy[q0], qz[q0] };
    s.nodes.resize(from.size() + above.size());
    for (std::size_t i = 0; i < from.size(); ++i)
      placeFloatMultipole(
        floatMoments[p][from[i]], moments[p][from[i]].com, origin, units, s.nodes[i]);
    for (std::size_t i = 0; i < above.size(); ++i)
      placeFloatMultipole(floatMoments[p + 1][above[i]], moments[p + 1][above[i]].com, origin,
        units, s.nodes[from.size() + i]);
    const std::size_t n = q1 - q0;
    s.multipoles += double(n) * double(s.nodes.size()); // here, not per accept: no chain
    const std::size_t padded =
      (n + kGravityFloatLanes - 1) / kGravityFloatLanes * kGravityFloatLanes;
    for (std::vector<float>* v : { &s.fx, &s.fy, &s.fz })
      resizePadded(*v, n, padded);
    for (std::size_t i = 0; i < n; ++i)
    {
      s.fx[i] = float((qx[q0 + i] - origin[0]) * units.invLength);
      s.fy[i] = float((qy[q0 + i] - origin[1]) * units.invLength);
      s.fz[i] = float((qz[q0 + i] - origin[2]) * units.invLength);
    }
    applyMultipolesFloatCpu(s.nodes.data(), s.nodes.size(), s.fx.data(), s.fy.data(), s.fz.data(),
      n, units, field, u + q0, gx + q0, gy + q0, gz + q0);
  }

  // Node d's points all sit at one position: each query gets them as one
  // mass there, less its own mass when it is one of them; at distance 0 with
  // eps = 0 the pairs are skipped. O(1) per query however many duplicates
  // (single-point nodes, many on clustered sets, are such nodes too), the
  // queries' terms in one vectorized loop.
  void acceptPointMass(int p, Index c, Index d)
  {
    Scratch& s = scratch.mine();
    const Index q0 = tree.planes[p].querySplit[c], q1 = tree.planes[p].querySplit[c + 1];
    const GravityMoments& n = moments[p][d];
    const Index s0 = tree.planes[p].sourceSplit[d], s1 = tree.planes[p].sourceSplit[d + 1];
    s.multipoles += double(q1 - q0);
    s.pointMass.assign(q1 - q0, n.mass);
    if (!ownSource.empty() || tree.selfQuery)
      for (Index q = q0; q < q1; ++q)
      {
        const Index own = ownSource.empty() ? q : ownSource[q];
        if (own != kNoSource && own >= s0 && own < s1)
          s.pointMass[q - q0] = n.mass - mass[own];
      }
    addPointMassCpu(n.com, s.pointMass.data(), qx + q0, qy + q0, qz + q0, q1 - q0, eps2, u + q0,
      gx + q0, gy + q0, gz + q0);
  }

  // Room for n values that the caller writes, then zeros up to `padded`
  // (massless, at the origin): the n are not zeroed first.
  static void resizePadded(std::vector<float>& v, std::size_t n, std::size_t padded)
  {
    v.resize(padded);
    std::fill(v.begin() + std::ptrdiff_t(n), v.end(), 0.0f);
  }

  void gather(const LeafList& list, const double* origin, Scratch& s) const
  {
    const TreePlane<T>& leaves = tree.planes[0];
    const SortedPoints<T>& src = tree.sources;
    s.starts.clear();
    s.ownLeaf = kNoSource; // the gathered list changes
    std::size_t n = 0;
    for (const LeafCandidate& e : list)
    {
      s.starts.emplace_back(e.node, n);
      n += leaves.numSources(e.node);
    }
    const std::size_t lanes = fast ? kGravityFloatLanes : kGravityLanes;
    const std::size_t padded = (n + lanes - 1) / lanes * lanes; // massless padding
    if (fast)
    {
      for (std::vector<float>* v : { &s.sx, &s.sy, &s.sz, &s.mf })
        resizePadded(*v, n, padded);
    }
    else
    {
      s.x.assign(padded, 0.0);
      s.y.assign(padded, 0.0);
      s.z.assign(padded, 0.0);
      s.m.assign(padded, 0.0);
    }
    std::size_t i = 0;
    for (const LeafCandidate& e : list)
    {
      const Index a = leaves.sourceSplit[e.node], b = leaves.sourceSplit[e.node + 1];
      if (fast)
        gatherFloat(
          src, a, b, origin, s.sx.data() + i, s.sy.data() + i, s.sz.data() + i, s.mf.data() + i);
      else
        for (Index j = a; j < b; ++j)
        {
          s.x[i + (j - a)] = double(src.x[j]);
          s.y[i + (j - a)] = double(src.y[j]);
          s.z[i + (j - a)] = double(src.z[j]);
          s.m[i + (j - a)] = mass[j];
        }
      i += b - a;
    }
  }

  // Sources [a, b) as float offsets from origin, and their masses, in float
  // units (vectorized per instruction set: GravityKernelsCpu.h).
  void gatherFloat(const SortedPoints<T>& src, Index a, Index b, const double* origin, float* x,
    float* y, float* z, float* m) const
  {
    toFloatUnitsCpu(src.x.data() + a, src.y.data() + a, src.z.data() + a, mass.data() + a,
      std::size_t(b - a), origin, units, x, y, z, m);
  }

  // Where query q's own source lies in the gathered list, if it is there
  // (it always is when it exists: its leaf meets the query's leaf at
  // distance 0, which no multipole accepts).
  // The leaf found last is tried first: consecutive queries' own sources
  // share a leaf (a self query's always: its receiving leaf).
  std::size_t ownOffset(Index q, Scratch& s) const
  {
    if (ownSource.empty() && !tree.selfQuery)
      return std::size_t(-1);
    const Index own = ownSource.empty() ? q : ownSource[q];
    if (own == kNoSource)
      return std::size_t(-1);
    const std::vector<Index>& split = tree.planes[0].sourceSplit;
    if (!(s.ownLeaf != kNoSource && own >= split[s.ownLeaf] && own < split[s.ownLeaf + 1]))
    {
      s.ownLeaf = Index(std::upper_bound(split.begin(), split.end(), own) - split.begin() - 1);
      s.ownStart = std::size_t(-1);
      for (const auto& st : s.starts)
        if (st.first == s.ownLeaf)
          s.ownStart = st.second;
    }
    return s.ownStart == std::size_t(-1) ? s.ownStart : s.ownStart + (own - split[s.ownLeaf]);
  }
};
} // namespace jz
