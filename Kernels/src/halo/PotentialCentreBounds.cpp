// Branch and bound over a kd-tree of one group's members for the largest
// U(x) = sum_{j != x} m_j / sqrt(|x - x_j|^2 + eps^2) (PotentialCentreBounds.h).
//
// Every target node B carries a bound of the sources it has accepted, valid
// for every x in B's box:
//   U_F(x) in [A + g.(x - b) - E, A + g.(x - b) + E],
// b the box centre, A = sum_S M_S f(b - c_S), g = sum_S M_S grad f(b - c_S),
// f(D) = (|D|^2 + eps^2)^(-1/2), c_S the source's centre of mass, and
// E = sum_S (M_S r_B^2 + Q_S) / s_S^3, r_B B's half diagonal, Q_S =
// sum_{j in S} m_j |x_j - c_S|^2, s_S^2 = dmin(B, S)^2 + eps^2 (box to box).
// Proof: with D = b - c_S and d_j = (x - b) - (x_j - c_S), Taylor gives
// f(D + d_j) = f(D) + grad f(D).d_j + R_j, |R_j| <= |d_j|^2 max|H| / 2, and the
// Hessian of f has norm <= 2 / (r^2 + eps^2)^(3/2) (eigenvalues (2r^2 -
// eps^2) / (r^2 + eps^2)^(5/2) and -1 / (r^2 + eps^2)^(3/2)), taken on the
// segment D + t d_j, a difference of points of the two boxes, so r >= dmin.
// Summed with the masses, sum m_j (x_j - c_S) = 0 removes the cross terms:
// sum m_j d_j = M_S (x - b) and sum m_j |d_j|^2 = M_S |x - b|^2 + Q_S.
// The bound holds for any disjoint boxes; a source is accepted where its E_S
// is at most kBoundTheta M_S / |b - c_S| (a choice of slack, not of
// validity). Sources not (yet) accepted add at most M_S / s_S, and never
// more than their peak (CentreSearch::peaks; 0 to a lower bound). Children
// inherit the form, re-centred (exact algebra), and the remainders as a
// function of x (Remainder: |x - b|^2 about each accepting target's centre,
// not its r_B^2, which a member or a smaller box deep inside rarely reaches).
//
// Discard rule: a node whose upper bound over its box is below L (1 -
// margin), L the best lower bound of one member's U, holds no member within
// the margin of the maximum, since that maximum is >= L. Leaves whose bound
// survives sum their near sources per member (the same formula as the exact
// sums), and every member whose upper bound reaches L (1 - margin) is a
// candidate. Nodes are bounded best first (largest upper bound), so the
// centre is reached, and L raised, before the outskirts are looked at. A
// node whose bound is close to L first opens the kept sources that weigh
// most in it (any split of a source is valid; its children are farther
// from the box) and is split only if that does not discard it.
#include "halo/PotentialCentreBounds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gravity/MaskedInverse.h"

namespace jz
{
namespace
{
// Leaves of 16: larger leaves make fewer, looser bounds; at 24 the work
// budget runs out on more groups with a large softening.
constexpr std::size_t kLeafSize = 16;
constexpr std::size_t kLanes = 8;
// A source is accepted when its slack E_S is at most this part of M_S / |b - c_S|
// (the cheapest of the values tried on halo-like groups, exact sums included).
constexpr double kBoundTheta = 0.45;
// A target whose bound exceeds the best by less than twice its kept
// sources' share opens those above 1/16 of the excess (their children's
// boxes are farther away), up to 4 times, before it is split: far fewer
// targets are bounded on halo-like groups.
constexpr int kRefinePasses = 4;
constexpr double kRefineShare = 2;
constexpr double kRefineTau = 1.0 / 16;

struct BoundNode
{
  double lo[3], hi[3]; // box, widened by the coordinates' rounding
  double com[3], mass, q;
  double rCom;     // largest distance from com to the box
  double qPerMass; // q / mass (0 when massless)
  double nn2 = 0;  // no two members, one of them here, are closer than sqrt(nn2)
  double peak = 0; // the largest U the members make anywhere (infinite without softening)
  std::uint32_t begin, end;
  std::int32_t left = -1, right = -1;
  bool leaf() const { return left < 0; }
};

// What the walk reads of every source it examines, in one cache line: the
// box rounded outward to float (gaps from it are never larger than the true
// ones, so the bounds stay valid), the acceptance criterion's inputs (a
// choice of slack: rounding does not matter), the mass rounded up, and the
// children. The accepted sources' form takes the exact values from BoundNode.
struct alignas(64) HotNode
{
  float lo[3], hi[3], com[3];
  float qPerMass, rCom, massUp;
  float peakUp; // peak rounded up
  std::int32_t left, right;
  bool leaf() const { return left < 0; }
};

float roundedDown(double v)
{
  const float f = float(v);
  return double(f) > v ? std::nextafter(f, -std::numeric_limits<float>::infinity()) : f;
}

float roundedUp(double v)
{
  const float f = float(v);
  return double(f) < v ? std::nextafter(f, std::numeric_limits<float>::infinity()) : f;
}

HotNode hotNode(const BoundNode& nd)
{
  HotNode h;
  for (int k = 0; k < 3; ++k)
  {
    h.lo[k] = roundedDown(nd.lo[k]);
    h.hi[k] = roundedUp(nd.hi[k]);
    h.com[k] = float(nd.com[k]);
  }
  h.qPerMass = float(nd.qPerMass);
  h.rCom = float(nd.rCom);
  h.massUp = roundedUp(nd.mass);
  h.peakUp = roundedUp(nd.peak);
  h.left = nd.left;
  h.right = nd.right;
  return h;
}

// Squared gap between a box and a hot node's box (in double: exact
// differences of the floats up to one rounding, far inside the margin).
double boxGap2(const BoundNode& a, const HotNode& b)
{
  double d2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    const double below = a.lo[k] - double(b.hi[k]), above = double(b.lo[k]) - a.hi[k];
    const double d = below > 0 ? below : (above > 0 ? above : 0.0);
    d2 += d * d;
  }
  return d2;
}

// The remainder bound of the sources accepted so far as a function of the
// point x: sum over the targets l (this node and its ancestors) that
// accepted sources of alpha_l |x - b_l|^2 + beta_l, alpha_l = sum M_S / s_S^3,
// beta_l = sum Q_S / s_S^3, b_l the target's box centre (each source's
// remainder (M_S |x - b_l|^2 + Q_S) / s_S^3 holds for every x in l's box,
// so in its descendants'). Kept as A |x - c|^2 + V + beta, A = sum alpha_l,
// c the alpha-weighted mean of the b_l, V = sum alpha_l |b_l - c|^2 (West's
// update: no cancellation). At most the former sum of alpha_l r_l^2 +
// beta_l with r_l each target's half diagonal, and near the centres of
// the targets far less.
struct Remainder
{
  double A = 0, c[3] = { 0, 0, 0 }, V = 0, beta = 0;
  void add(double alpha, const double* b, double betaAdd)
  {
    beta += betaAdd;
    if (!(alpha > 0))
      return;
    const double total = A + alpha;
    double v = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double d = b[k] - c[k];
      const double cNew = c[k] + alpha / total * d;
      v += d * (b[k] - cNew);
      c[k] = cNew;
    }
    V += alpha * v;
    A = total;
  }
  double at(const double* x) const
  {
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
      d2 += (x[k] - c[k]) * (x[k] - c[k]);
    return A * d2 + V + beta;
  }
  // The largest over a box (its farthest corner from c).
  double maxOver(const double* lo, const double* hi) const
  {
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double d = std::max(c[k] - lo[k], hi[k] - c[k]);
      d2 += d * d;
    }
    return A * d2 + V + beta;
  }
};

struct Task
{
  double key; // an upper bound of U over the node (the parent's)
  std::int32_t node;
  double a, g[3]; // the accepted sources' form, about the node's box centre
  Remainder e;    // and its remainder
  std::size_t listBegin, listEnd;
  bool operator<(const Task& o) const { return key < o.key; }
};

struct Geometry
{
  double centre[3], half[3], radius;
};

Geometry geometry(const BoundNode& nd)
{
  Geometry g;
  double r2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    g.centre[k] = 0.5 * (nd.lo[k] + nd.hi[k]);
    g.half[k] = 0.5 * (nd.hi[k] - nd.lo[k]);
    r2 += g.half[k] * g.half[k];
  }
  g.radius = std::sqrt(r2);
  return g;
}

double boxGap2(const BoundNode& a, const BoundNode& b)
{
  double d2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    const double d = std::max({ 0.0, a.lo[k] - b.hi[k], b.lo[k] - a.hi[k] });
    d2 += d * d;
  }
  return d2;
}

// The sources one target accepts or keeps, summed in lanes afterwards (the
// square roots and divisions vectorize; one at a time they wait on each other).
struct SourceBatch
{
  std::vector<double> cx, cy, cz, m, q, s2; // accepted
  std::vector<double> keptMass, keptS2;
  void clear()
  {
    for (auto* v : { &cx, &cy, &cz, &m, &q, &s2, &keptMass, &keptS2 })
      v->clear();
  }
  void accept(const BoundNode& s, double gap2eps2)
  {
    cx.push_back(s.com[0]);
    cy.push_back(s.com[1]);
    cz.push_back(s.com[2]);
    m.push_back(s.mass);
    q.push_back(s.q);
    s2.push_back(gap2eps2);
  }
  void keep(double mass, double gap2eps2)
  {
    keptMass.push_back(mass);
    keptS2.push_back(gap2eps2);
  }
  // Adds the accepted sources to t's form (about gb's centre); returns the
  // kept ones' sum of M_S / s_S (infinite when one has s_S = 0).
  double apply(const Geometry& gb, double eps2, Task& t);
};

double SourceBatch::apply(const Geometry& gb, double eps2, Task& t)
{
  // Padding: massless sources one unit away.
  while (m.size() % kLanes)
  {
    cx.push_back(gb.centre[0] + 1);
    cy.push_back(gb.centre[1]);
    cz.push_back(gb.centre[2]);
    m.push_back(0);
    q.push_back(0);
    s2.push_back(1);
  }
  double a[kLanes] = {}, g0[kLanes] = {}, g1[kLanes] = {}, g2[kLanes] = {}, alpha[kLanes] = {},
         beta[kLanes] = {};
  for (std::size_t i0 = 0; i0 < m.size(); i0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t i = i0 + l;
      const double dx = gb.centre[0] - cx[i], dy = gb.centre[1] - cy[i], dz = gb.centre[2] - cz[i];
      const double inv = 1 / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
      const double mi = m[i] * inv, mi3 = mi * inv * inv;
      a[l] += mi;
      g0[l] -= mi3 * dx;
      g1[l] -= mi3 * dy;
      g2[l] -= mi3 * dz;
      const double inv3 = 1 / (s2[i] * std::sqrt(s2[i]));
      alpha[l] += m[i] * inv3;
      beta[l] += q[i] * inv3;
    }
  for (std::size_t l = 0; l < kLanes; ++l)
  {
    t.a += a[l];
    t.g[0] += g0[l];
    t.g[1] += g1[l];
    t.g[2] += g2[l];
  }
  double alphaSum = 0, betaSum = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
  {
    alphaSum += alpha[l];
    betaSum += beta[l];
  }
  t.e.add(alphaSum, gb.centre, betaSum);
  double open[kLanes] = {};
  bool touching = false;
  while (keptMass.size() % kLanes)
  {
    keptMass.push_back(0);
    keptS2.push_back(1);
  }
  for (std::size_t i0 = 0; i0 < keptMass.size(); i0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t i = i0 + l;
      const bool zero = !(keptS2[i] > 0);
      touching |= zero && keptMass[i] > 0;
      open[l] += keptMass[i] / std::sqrt(zero ? 1.0 : keptS2[i]);
    }
  double sum = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
    sum += open[l];
  return touching ? std::numeric_limits<double>::infinity() : sum;
}

class CentreSearch
{
public:
  // A new group; the buffers keep their capacity from the last one (a
  // thread's searches reuse one object: no fresh pages for every group).
  void reset(
    const double* x, const double* y, const double* z, const double* m, std::size_t n, double eps2)
  {
    n_ = n;
    eps2_ = eps2;
    m_ = m;
    budget_ = kCentreBoundWork * double(n);
    best_ = 0;
    work_ = 0;
    stats_ = PotentialCentreStats();
    candidates_.clear();
    nodes_.clear();
    hot_.clear();
    // Shifted to the first member: the bounds' geometry keeps its relative
    // accuracy at any offset; the per-member sums use the coordinates as given.
    pts_.resize(n);
    double extent = 0;
    for (std::size_t i = 0; i < n; ++i)
    {
      TreePoint& tp = pts_[i];
      tp.p[0] = x[i] - x[0];
      tp.p[1] = y[i] - y[0];
      tp.p[2] = z[i] - z[0];
      tp.i = i;
      for (int k = 0; k < 3; ++k)
        extent = std::max(extent, std::abs(tp.p[k]));
    }
    // Each shifted coordinate is off by <= 2^-53 |p|; boxes are widened by
    // more, and sources closer than kFloor are never accepted.
    slack_ = 4 * std::numeric_limits<double>::epsilon() * extent;
    floor2_ = (1e6 * slack_) * (1e6 * slack_);
    nodes_.reserve(2 * n / kLeafSize + 2);
    build(0, n);
    order_.resize(n);
    xs_.resize(3 * n);
    for (std::size_t t = 0; t < n; ++t)
    {
      order_[t] = pts_[t].i;
      std::copy(pts_[t].p, pts_[t].p + 3, &xs_[3 * t]);
    }
    // Members in tree order for the per-member sums.
    tx_.resize(n);
    ty_.resize(n);
    tz_.resize(n);
    tm_.resize(n);
    for (std::size_t t = 0; t < n; ++t)
    {
      const std::size_t i = order_[t];
      tx_[t] = x[i];
      ty_[t] = y[i];
      tz_[t] = z[i];
      tm_[t] = m[i];
    }
    peaks();
    hot_.reserve(nodes_.size());
    for (const BoundNode& nd : nodes_)
      hot_.push_back(hotNode(nd));
    if (softeningIsSmall())
      nearestDistances();
    else
      nn2_.assign(n, 0.0);
  }

  bool run(std::vector<std::pair<double, std::size_t>>& out, PotentialCentreStats* stats);
  std::size_t capacity() const { return order_.capacity(); }

private:
  std::int32_t build(std::size_t begin, std::size_t end);
  void evaluateLeaf(
    const BoundNode& b, const Task& t, const Geometry& gb, const std::vector<std::int32_t>& near);
  void gatherNear(const std::vector<std::int32_t>& near);
  double nearSum(const double* q, std::uint32_t p) const;
  void seedBest();
  void nearestDistances();
  void peaks();
  bool softeningIsSmall() const;

  std::size_t n_ = 0;
  double eps2_ = 0;
  const double* m_ = nullptr;
  double slack_ = 0, floor2_ = 0;
  // A member shifted to the first one, and its input index (the build's
  // working copy: partitioned in place).
  struct TreePoint
  {
    double p[3];
    std::size_t i;
  };
  std::vector<TreePoint> pts_;
  std::vector<std::size_t> order_; // tree position -> input index
  std::vector<double> xs_;         // shifted, in tree order
  std::vector<double> tx_, ty_, tz_, tm_;
  std::vector<double> nn2_; // per member (tree order): squared distance to its nearest other
  std::vector<double> nx_, ny_, nz_, nm_; // a leaf's near members
  std::vector<std::uint32_t> nt_;         // their tree positions
  std::vector<BoundNode> nodes_;
  std::vector<HotNode> hot_; // nodes_ as the walk reads them
  SourceBatch batch_;
  std::vector<std::int32_t> refined_; // the kept sources a refinement pass leaves
  std::vector<double> refinedMass_, refinedS2_;
  std::vector<std::int32_t> lists_;       // the source lists of pending tasks
  std::vector<Task> queue_;               // a heap, the largest bound on top
  std::vector<std::int32_t> open_, kept_; // one target's sources opened and kept
  double best_ = 0;                       // lower bound of max U
  double work_ = 0;                       // sources examined + member pairs summed
  double budget_ = 0;
  std::vector<std::pair<double, std::size_t>> candidates_;
  PotentialCentreStats stats_;
};

std::int32_t CentreSearch::build(std::size_t begin, std::size_t end)
{
  const std::int32_t id = std::int32_t(nodes_.size());
  nodes_.emplace_back();
  BoundNode nd;
  nd.begin = std::uint32_t(begin);
  nd.end = std::uint32_t(end);
  for (int k = 0; k < 3; ++k)
  {
    nd.lo[k] = std::numeric_limits<double>::infinity();
    nd.hi[k] = -std::numeric_limits<double>::infinity();
  }
  for (std::size_t t = begin; t < end; ++t)
    for (int k = 0; k < 3; ++k)
    {
      const double v = pts_[t].p[k];
      nd.lo[k] = std::min(nd.lo[k], v);
      nd.hi[k] = std::max(nd.hi[k], v);
    }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (nd.hi[k] - nd.lo[k] > nd.hi[axis] - nd.lo[axis])
      axis = k;
  if (end - begin > kLeafSize && nd.hi[axis] > nd.lo[axis])
  {
    // At the middle of the box (a partition, and boxes that stay compact in
    // a cusp), or at the median where that would leave one side nearly empty.
    const double cut = 0.5 * (nd.lo[axis] + nd.hi[axis]);
    std::size_t mid = std::size_t(
      std::partition(pts_.begin() + std::ptrdiff_t(begin), pts_.begin() + std::ptrdiff_t(end),
        [axis, cut](const TreePoint& a) { return a.p[axis] < cut; }) -
      pts_.begin());
    if (16 * (mid - begin) < end - begin || 16 * (end - mid) < end - begin)
    {
      mid = begin + (end - begin) / 2;
      std::nth_element(pts_.begin() + std::ptrdiff_t(begin), pts_.begin() + std::ptrdiff_t(mid),
        pts_.begin() + std::ptrdiff_t(end),
        [axis](const TreePoint& a, const TreePoint& b) { return a.p[axis] < b.p[axis]; });
    }
    nd.left = build(begin, mid);
    nd.right = build(mid, end);
  }
  // Mass, centre of mass (about the box centre) and second moment: of the
  // members for a leaf, of the children's (parallel axes) otherwise.
  double c[3], sum[3] = { 0, 0, 0 };
  for (int k = 0; k < 3; ++k)
    c[k] = 0.5 * (nd.lo[k] + nd.hi[k]);
  nd.mass = 0;
  nd.q = 0;
  if (nd.left < 0)
  {
    for (std::size_t t = begin; t < end; ++t)
    {
      const double mt = m_[pts_[t].i];
      nd.mass += mt;
      for (int k = 0; k < 3; ++k)
        sum[k] += mt * (pts_[t].p[k] - c[k]);
    }
    for (int k = 0; k < 3; ++k)
      nd.com[k] = nd.mass > 0 ? c[k] + sum[k] / nd.mass : c[k];
    for (std::size_t t = begin; t < end; ++t)
    {
      const double mt = m_[pts_[t].i];
      for (int k = 0; k < 3; ++k)
        nd.q += mt * (pts_[t].p[k] - nd.com[k]) * (pts_[t].p[k] - nd.com[k]);
    }
  }
  else
  {
    const BoundNode* kids[2] = { &nodes_[std::size_t(nd.left)], &nodes_[std::size_t(nd.right)] };
    for (const BoundNode* kid : kids)
    {
      nd.mass += kid->mass;
      for (int k = 0; k < 3; ++k)
        sum[k] += kid->mass * (kid->com[k] - c[k]);
    }
    for (int k = 0; k < 3; ++k)
      nd.com[k] = nd.mass > 0 ? c[k] + sum[k] / nd.mass : c[k];
    for (const BoundNode* kid : kids)
    {
      nd.q += kid->q;
      for (int k = 0; k < 3; ++k)
        nd.q += kid->mass * (kid->com[k] - nd.com[k]) * (kid->com[k] - nd.com[k]);
    }
  }
  double rCom2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    nd.lo[k] -= slack_;
    nd.hi[k] += slack_;
    const double d = std::max(nd.com[k] - nd.lo[k], nd.hi[k] - nd.com[k]);
    rCom2 += d * d;
  }
  nd.rCom = std::sqrt(rCom2);
  nd.q *= 1 + 1e-12;
  nd.qPerMass = nd.mass > 0 ? nd.q / nd.mass : 0.0;
  nodes_[id] = nd;
  return id;
}

// Per-member bounds of a leaf: the accepted sources by the form; the near
// ones first bounded by M_S / s with s from the member to S's box (its own
// leaf summed), and where that still reaches the best, summed directly (the
// same terms as the exact sums, self left out).
void CentreSearch::evaluateLeaf(
  const BoundNode& b, const Task& t, const Geometry& gb, const std::vector<std::int32_t>& near)
{
  ++stats_.leaves;
  const double keep = 1 - kCentreBoundMargin;
  bool gathered = false;
  for (std::uint32_t p = b.begin; p < b.end; ++p)
  {
    // A leaf of many coincident members (it cannot be split) costs its
    // square: the budget is checked per member.
    work_ += double(b.end - b.begin);
    if (work_ > budget_)
      return;
    const std::size_t i = order_[p];
    const double q[3] = { tx_[p], ty_[p], tz_[p] };
    const double qs[3] = { xs_[3 * p], xs_[3 * p + 1], xs_[3 * p + 2] };
    double lin = t.a;
    for (int k = 0; k < 3; ++k)
      lin += t.g[k] * (qs[k] - gb.centre[k]);
    double own = 0;
    for (std::uint32_t j = b.begin; j < b.end; ++j)
    {
      const double dx = tx_[j] - q[0], dy = ty_[j] - q[1], dz = tz_[j] - q[2];
      const double s2 = dx * dx + dy * dy + dz * dz + eps2_;
      own += maskedInverse(tm_[j], s2, j != p);
    }
    double coarse = own;
    for (const std::int32_t sId : near)
    {
      const BoundNode& s = nodes_[std::size_t(sId)];
      if (&s == &b)
        continue;
      double g2 = 0;
      for (int k = 0; k < 3; ++k)
      {
        const double d = std::max({ 0.0, s.lo[k] - qs[k], qs[k] - s.hi[k] });
        g2 += d * d;
      }
      g2 = std::max(g2, nn2_[p]) + eps2_;
      coarse += g2 > 0 ? std::min(s.mass / std::sqrt(g2), s.peak) : s.peak;
    }
    const double e = t.e.at(qs);
    if (coarse + lin + e < best_ * keep)
      continue;
    if (!gathered)
    {
      gatherNear(near);
      gathered = true;
    }
    ++stats_.exactNear;
    stats_.nearPairs += double(nx_.size());
    work_ += double(nx_.size());
    const double u = nearSum(q, p);
    best_ = std::max(best_, u + lin - e);
    candidates_.emplace_back(u + lin + e, i);
  }
}

// The near leaves' members, padded with massless points to whole lanes.
void CentreSearch::gatherNear(const std::vector<std::int32_t>& near)
{
  nx_.clear();
  ny_.clear();
  nz_.clear();
  nm_.clear();
  nt_.clear();
  for (const std::int32_t sId : near)
  {
    const BoundNode& s = nodes_[std::size_t(sId)];
    for (std::uint32_t j = s.begin; j < s.end; ++j)
    {
      nx_.push_back(tx_[j]);
      ny_.push_back(ty_[j]);
      nz_.push_back(tz_[j]);
      nm_.push_back(tm_[j]);
      nt_.push_back(j);
    }
  }
  while (nx_.size() % kLanes)
  {
    nx_.push_back(0);
    ny_.push_back(0);
    nz_.push_back(0);
    nm_.push_back(0);
    nt_.push_back(std::uint32_t(-1));
  }
}

// sum over the gathered members j != p of m_j / sqrt(r^2 + eps^2), in lanes.
double CentreSearch::nearSum(const double* q, std::uint32_t p) const
{
  double lane[kLanes] = {};
  for (std::size_t j0 = 0; j0 < nx_.size(); j0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t j = j0 + l;
      const double dx = nx_[j] - q[0], dy = ny_[j] - q[1], dz = nz_[j] - q[2];
      const double s2 = dx * dx + dy * dy + dz * dz + eps2_;
      lane[l] += maskedInverse(nm_[j], s2, nt_[j] != p);
    }
  double u = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
    u += lane[l];
  return u;
}

// Every node's peak: the largest U its members can make at any point x.
// With i the member nearest to x, every other member j is at least
// |x_i - x_j| / 2 from x, so U_S(x) <= max_i (m_i / eps + sum_{j != i} m_j /
// sqrt(|x_i - x_j|^2 / 4 + eps^2)) for a leaf (its members summed in pairs);
// a parent's is at most the sum of its children's, and never above M / eps.
// Raised by 1e-9 over the rounding of these sums. Without softening a
// source's peak is infinite and the bounds keep M_S / s_S.
void CentreSearch::peaks()
{
  const double inf = std::numeric_limits<double>::infinity();
  const double eps = std::sqrt(eps2_);
  for (std::size_t k = nodes_.size(); k-- > 0;) // children after their parents
  {
    BoundNode& nd = nodes_[k];
    if (!(eps > 0))
      nd.peak = inf;
    else if (!nd.leaf())
      nd.peak = std::min(nodes_[std::size_t(nd.left)].peak + nodes_[std::size_t(nd.right)].peak,
        nd.mass / eps * (1 + 1e-9));
    else
    {
      double peak = 0;
      for (std::uint32_t p = nd.begin; p < nd.end; ++p)
      {
        double u = tm_[p] / eps;
        for (std::uint32_t j = nd.begin; j < nd.end; ++j)
        {
          const double dx = tx_[j] - tx_[p], dy = ty_[j] - ty_[p], dz = tz_[j] - tz_[p];
          u += maskedInverse(tm_[j], 0.25 * (dx * dx + dy * dy + dz * dz) + eps2_, j != p);
        }
        peak = std::max(peak, u);
      }
      nd.peak = std::min(peak, nd.mass / eps) * (1 + 1e-9);
    }
  }
}

// Whether the nearest-neighbour distances are worth their search (about as
// much as the rest of the bounds): when the softening is well below the
// spread of the typical leaf, M_S / eps is no bound at all for a touching
// source; with a softening near the spacing it is, and the search does not
// pay.
bool CentreSearch::softeningIsSmall() const
{
  std::vector<double> spread;
  for (const BoundNode& nd : nodes_)
    if (nd.leaf())
      spread.push_back(nd.qPerMass);
  std::nth_element(
    spread.begin(), spread.begin() + std::ptrdiff_t(spread.size() / 2), spread.end());
  return eps2_ < 1e-4 * spread[spread.size() / 2];
}

// Every member's squared distance to its nearest other member (a kd-tree
// search; rounded down by 1e-12 and boxes widened once more, so it is a lower
// bound), and each node's minimum: a member x of B is at least
// max(dmin(B, S), sqrt(nn2_B)) from any other member of S, which bounds the
// sources a node keeps when they touch it (M_S / eps, or nothing with eps = 0,
// otherwise).
void CentreSearch::nearestDistances()
{
  nn2_.assign(n_, std::numeric_limits<double>::infinity());
  auto pointBox2 = [&](const BoundNode& nd, const double* q)
  {
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double d = std::max({ 0.0, nd.lo[k] - slack_ - q[k], q[k] - nd.hi[k] - slack_ });
      d2 += d * d;
    }
    return d2;
  };
  auto scan = [&](std::uint32_t p, const BoundNode& nd)
  {
    double best = nn2_[p];
    for (std::uint32_t j = nd.begin; j < nd.end && best > 0; ++j) // 0: a duplicate, done
    {
      const double dx = tx_[j] - tx_[p], dy = ty_[j] - ty_[p], dz = tz_[j] - tz_[p];
      const double d2 = dx * dx + dy * dy + dz * dz;
      best = (j != p && d2 < best) ? d2 : best;
    }
    nn2_[p] = best;
  };
  // Per leaf: its own members first, then the leaves within the largest
  // distance found so far, each member skipping those farther than its own.
  std::vector<std::int32_t> stack, near;
  for (const BoundNode& leaf : nodes_)
  {
    if (!leaf.leaf())
      continue;
    double reach2 = 0;
    for (std::uint32_t p = leaf.begin; p < leaf.end; ++p)
    {
      scan(p, leaf);
      reach2 = std::max(reach2, nn2_[p]);
    }
    near.clear();
    stack.assign(1, 0);
    while (!stack.empty())
    {
      const std::int32_t id = stack.back();
      stack.pop_back();
      const BoundNode& nd = nodes_[std::size_t(id)];
      if (&nd == &leaf || boxGap2(leaf, nd) > reach2 * (1 + 1e-9) + 4 * slack_ * slack_)
        continue;
      if (nd.leaf())
        near.push_back(id);
      else
      {
        stack.push_back(nd.left);
        stack.push_back(nd.right);
      }
    }
    for (std::uint32_t p = leaf.begin; p < leaf.end; ++p)
    {
      const double* q = &xs_[3 * p];
      for (const std::int32_t id : near)
        if (pointBox2(nodes_[std::size_t(id)], q) <= nn2_[p])
          scan(p, nodes_[std::size_t(id)]);
    }
  }
  for (double& d2 : nn2_)
    d2 *= 1 - 1e-12;
  // Node minima, children before parents (they were appended after them).
  for (std::size_t k = nodes_.size(); k-- > 0;)
  {
    BoundNode& nd = nodes_[k];
    if (nd.leaf())
    {
      nd.nn2 = std::numeric_limits<double>::infinity();
      for (std::uint32_t p = nd.begin; p < nd.end; ++p)
        nd.nn2 = std::min(nd.nn2, nn2_[p]);
    }
    else
      nd.nn2 = std::min(nodes_[std::size_t(nd.left)].nn2, nodes_[std::size_t(nd.right)].nn2);
  }
}

// A first lower bound before any node is bounded: the direct U of the member
// nearest the centre of mass of the densest leaf (mass / spread^1.5), where
// a halo's centre usually is. Nodes below it are discarded from the start.
void CentreSearch::seedBest()
{
  std::size_t densest = 0;
  double density = -1;
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (nodes_[k].leaf() && nodes_[k].end - nodes_[k].begin > 1)
    {
      const double spread = nodes_[k].qPerMass + 1e-300;
      const double d = nodes_[k].mass / (spread * std::sqrt(spread));
      if (d > density)
      {
        density = d;
        densest = k;
      }
    }
  const BoundNode& leaf = nodes_[densest];
  std::uint32_t pick = leaf.begin;
  double nearest = std::numeric_limits<double>::infinity();
  for (std::uint32_t p = leaf.begin; p < leaf.end; ++p)
  {
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
      d2 += (xs_[3 * p + k] - leaf.com[k]) * (xs_[3 * p + k] - leaf.com[k]);
    if (d2 < nearest)
    {
      nearest = d2;
      pick = p;
    }
  }
  double lane[kLanes] = {};
  const std::size_t whole = n_ / kLanes * kLanes;
  auto term = [&](std::size_t j)
  {
    const double dx = tx_[j] - tx_[pick], dy = ty_[j] - ty_[pick], dz = tz_[j] - tz_[pick];
    const double s2 = dx * dx + dy * dy + dz * dz + eps2_;
    return maskedInverse(tm_[j], s2, j != pick);
  };
  for (std::size_t j0 = 0; j0 < whole; j0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
      lane[l] += term(j0 + l);
  double u = 0;
  for (std::size_t j = whole; j < n_; ++j)
    u += term(j);
  for (std::size_t l = 0; l < kLanes; ++l)
    u += lane[l];
  best_ = u;
}

bool CentreSearch::run(
  std::vector<std::pair<double, std::size_t>>& out, PotentialCentreStats* stats)
{
  seedBest();
  std::vector<std::int32_t>& lists = lists_;
  lists.assign(1, 0);
  lists.reserve(48 * nodes_.size()); // about what a cusp-like group fills
  std::vector<Task>& queue = queue_;
  queue.assign(
    1, Task{ std::numeric_limits<double>::infinity(), 0, 0, { 0, 0, 0 }, Remainder(), 0, 1 });
  std::vector<std::int32_t>& work = open_;
  std::vector<std::int32_t>& kept = kept_;
  const double keep = 1 - kCentreBoundMargin;
  while (!queue.empty() && queue.front().key >= best_ * keep)
  {
    if (work_ > budget_)
    {
      if (stats)
        *stats = stats_;
      return false;
    }
    std::pop_heap(queue.begin(), queue.end());
    Task t = queue.back();
    queue.pop_back();
    const BoundNode& b = nodes_[std::size_t(t.node)];
    const Geometry gb = geometry(b);
    ++stats_.nodes;
    work.clear();
    kept.clear();
    batch_.clear();
    // Accepted into the form, opened (its children examined in turn) or kept.
    auto examine = [&](std::int32_t sId)
    {
      const HotNode& s = hot_[std::size_t(sId)];
      ++work_;
      const double gap2 = boxGap2(b, s);
      double c2 = eps2_;
      for (int k = 0; k < 3; ++k)
        c2 += (gb.centre[k] - s.com[k]) * (gb.centre[k] - s.com[k]);
      const double s2 = gap2 + eps2_;
      const double spread = gb.radius * gb.radius + s.qPerMass;
      if (gap2 > floor2_ && spread * spread * c2 < kBoundTheta * kBoundTheta * s2 * s2 * s2)
      {
        batch_.accept(nodes_[std::size_t(sId)], s2);
      }
      else if (!s.leaf() && (b.leaf() || s.rCom >= gb.radius))
      {
        work.push_back(s.left);
        work.push_back(s.right);
      }
      else
      {
        kept.push_back(sId);
        const double s2 = std::max(gap2, b.nn2) + eps2_;
        // A touching source weighs at most its peak (the same s2, a smaller mass).
        batch_.keep(
          s2 > 0 ? std::min(double(s.massUp), double(s.peakUp) * std::sqrt(s2)) : s.massUp, s2);
      }
    };
    // The parent's list in place, then the children of the sources opened.
    for (std::size_t next = t.listBegin; next < t.listEnd;)
    {
      if (next + 8 < t.listEnd)
        __builtin_prefetch(&hot_[std::size_t(lists[next + 8])]);
      examine(lists[next++]);
      while (!work.empty())
      {
        const std::int32_t sId = work.back();
        work.pop_back();
        examine(sId);
      }
    }
    double open = batch_.apply(gb, eps2_, t); // sources kept: at most M_S / s_S each
    auto upperBound = [&]
    {
      double u = t.a + t.e.maxOver(b.lo, b.hi) + open;
      for (int k = 0; k < 3; ++k)
        u += std::abs(t.g[k]) * gb.half[k];
      return u;
    };
    double upper = upperBound();
    // Close to the best: open the kept sources that weigh most in the bound
    // (their children's bounds are tighter) before splitting the target.
    for (int pass = 0; pass < kRefinePasses && !b.leaf() && upper >= best_ * keep; ++pass)
    {
      const double excess = upper - best_ * keep;
      if (!(excess < kRefineShare * open))
        break;
      const double tau = kRefineTau * excess;
      refined_.clear();
      refinedMass_.clear();
      refinedS2_.clear();
      for (std::size_t i = 0; i < kept.size(); ++i)
      {
        const HotNode& s = hot_[std::size_t(kept[i])];
        const double m = batch_.keptMass[i], s2 = batch_.keptS2[i];
        if (!s.leaf() && !(m <= tau * std::sqrt(s2)))
        {
          work.push_back(s.left);
          work.push_back(s.right);
        }
        else
        {
          refined_.push_back(kept[i]);
          refinedMass_.push_back(m);
          refinedS2_.push_back(s2);
        }
      }
      if (work.empty())
        break;
      kept.swap(refined_);
      batch_.clear();
      batch_.keptMass.swap(refinedMass_);
      batch_.keptS2.swap(refinedS2_);
      while (!work.empty())
      {
        const std::int32_t sId = work.back();
        work.pop_back();
        examine(sId);
      }
      open = batch_.apply(gb, eps2_, t);
      upper = upperBound();
      ++stats_.refinements;
    }
    if (upper < best_ * keep)
      continue;
    if (b.leaf())
    {
      evaluateLeaf(b, t, gb, kept);
      continue;
    }
    const std::size_t begin = lists.size();
    lists.insert(lists.end(), kept.begin(), kept.end());
    for (const std::int32_t c : { b.left, b.right })
    {
      const Geometry gc = geometry(nodes_[std::size_t(c)]);
      Task child = t;
      child.key = upper;
      child.node = c;
      for (int k = 0; k < 3; ++k)
        child.a += t.g[k] * (gc.centre[k] - gb.centre[k]);
      child.listBegin = begin;
      child.listEnd = lists.size();
      queue.push_back(child);
      std::push_heap(queue.begin(), queue.end());
    }
  }
  if (work_ > budget_) // ran out inside a leaf
  {
    if (stats)
      *stats = stats_;
    return false;
  }
  for (const auto& c : candidates_)
    if (c.first >= best_ * keep)
      out.push_back(c);
  sortCandidates(out);
  if (stats)
    *stats = stats_;
  return true;
}
} // namespace

bool potentialCentreCandidates(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, double eps2, std::vector<std::pair<double, std::size_t>>& out,
  PotentialCentreStats* stats)
{
  out.clear();
  if (n == 0)
    return true;
  thread_local CentreSearch search;
  search.reset(x, y, z, m, n, eps2);
  const bool finished = search.run(out, stats);
  if (search.capacity() > (std::size_t(1) << 16)) // kept for groups up to 65,536 (about 15 MB)
    search = CentreSearch();
  return finished;
}

void sortCandidates(std::vector<std::pair<double, std::size_t>>& candidates)
{
  std::sort(candidates.begin(), candidates.end(),
    [](const auto& a, const auto& b)
    { return a.first > b.first || (a.first == b.first && a.second < b.second); });
}
} // namespace jz
