// The leaf filter of PotentialCentreFilter.h. The members are cut into
// leaves of at most 32 (a kd-tree's, boxes widened by the coordinates'
// rounding). For a member i of leaf T:
//   U_i <= F_T + sum_{S near T, S != T} M_S / sqrt(gap(x_i, S)^2 + eps^2) + own_i,
// F_T = sum_{S far from T} M_S / sqrt(gap(T, S)^2 + eps^2) (every member of
// S is at least the box gap from every point of T), own_i its own leaf's
// terms summed directly; S is near T when gap(T, S) is below T's half
// diagonal (and 1e-6 of the group's extent). Where that bound reaches the
// best lower bound L, the far leaves are bounded again: those beyond 2 half
// diagonals of T and 1.5 of their own by T's local expansion (LocalField, a
// second-order Taylor expansion about T's centre with a rigorous third-order
// remainder, built once per leaf that needs it), the others ("mid") by the
// member's gap to their boxes: E_i. Where min(F_T, E_i) + near still
// reaches L, the near leaves are summed directly (N_i), then the mid leaves
// are bounded at x_i by their monopoles and quadrupoles with a third-order
// remainder (memberFarSums), and where that still reaches L, once more with
// the leaves within 3 half diagonals of T or 2 of their own summed directly
// and every other far leaf by its moments at x_i (a leaf's remainder is
// large within a few of its own sizes: with T's reach alone the bounds stay
// well above U on large groups, and many members need exact sums), which
// also gives a lower bound. What is left
// is a candidate; every lower bound raises L, which starts at the exact U
// of the member nearest the centre of mass of the densest leaf. Sums are
// rounded outward by far more than their rounding (1e-10 relative; 1e-7 of
// F_T, or relative, where a leaf's centre of mass enters), far inside the
// margin. Each leaf against all leaves: (n / 20)^2 box gaps; per member
// about 20 point-box gaps and 32 pairs; for the members close to the best
// the mid boxes, their near sums and the mid leaves' moments.
#include "halo/PotentialCentreFilter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "gravity/GravityKernelsCpu.h"
#include "gravity/MaskedInverse.h"

namespace jz
{
namespace
{
constexpr std::size_t kLeafSize = 32;
constexpr std::size_t kLanes = 8;
// Near: the box gap below this many half diagonals of the target leaf.
constexpr double kNearReach = 1.0;
// The candidates' second look: the box gap below this many half diagonals
// of the target leaf, or kWideReachOwn of the other leaf's: a wider reach
// leaves fewer exact sums but more pairs to the second look; 2 balances
// them on clustered groups, with unequal masses and softening too.
constexpr double kWideReach = 3.0;
constexpr double kWideReachOwn = 2.0;
// The target leaf's local expansion (LocalField) takes the far leaves
// beyond this many half diagonals of the target and kLocalReachOwn of their
// own; the ones between the near reach and this (mid) are bounded at each
// member (these reaches leave the fewest members for the near sums on
// clustered groups).
constexpr double kLocalReach = 2.0;
constexpr double kLocalReachOwn = 1.5;
constexpr double kRoundUp = 1 + 1e-10, kRoundDown = 1 - 1e-10;
// A leaf's centre of mass is off by about 40 roundings of the extent: at a
// gap of 1e-6 of the extent or more its monopole is within 1e-8.
constexpr double kMomentsUp = 1 + 1e-7, kMomentsDown = 1 - 1e-7;
constexpr double kFarFloor = 1e-6;

// The leaves' boxes and masses, one array per field (the gap loop vectorizes).
struct LeafBoxes
{
  std::vector<double> lo[3], hi[3], mass;
  std::vector<double> com[3], q; // centre of mass, sum m |x - com|^2 (rounded up)
  // Second moments sum m y_a y_b about the centre of mass (xx, yy, zz, xy,
  // xz, yz), and the third, sum m |y|^3 (rounded up).
  std::vector<double> quad[6], o3;
  std::vector<double> half2; // half the box diagonal, squared
  std::vector<double> a1;    // sum m |y| about the centre of mass (rounded up)
  std::vector<std::uint32_t> begin, end;
  std::size_t size() const { return mass.size(); }
};

// The leaves farther than sqrt(near2) from box (a, b): an upper bound of
// their potential anywhere in the box (masses over the box gap; no lower
// bound: over the largest distance it costs more than it ever gains, the
// seed already being the best); gap2 gets
// every leaf's squared gap, nearCount the number of the others in every
// block of kLanes leaves. The leaves are padded to whole lanes (massless,
// far away).
JZ_GRAVITY_CLONES
void farSums(const LeafBoxes& leaves, const double* a, const double* b, double near2, double eps2,
  double* __restrict gap2, double* __restrict nearCount, double& up)
{
  const std::size_t n = leaves.size();
  const double *lo0 = leaves.lo[0].data(), *lo1 = leaves.lo[1].data(), *lo2 = leaves.lo[2].data();
  const double *hi0 = leaves.hi[0].data(), *hi1 = leaves.hi[1].data(), *hi2 = leaves.hi[2].data();
  const double* mass = leaves.mass.data();
  double u[kLanes] = {};
  const double a0 = a[0], a1 = a[1], a2 = a[2], b0 = b[0], b1 = b[1], b2 = b[2];
  // Squared gap along one axis.
  auto gap = [](double a, double b, double lo, double hi)
  {
    const double e = std::max(std::max(a - hi, lo - b), 0.0);
    return e * e;
  };
  for (std::size_t s0 = 0; s0 < n; s0 += kLanes)
  {
    double nearHere = 0;
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t s = s0 + l;
      const double g =
        gap(a0, b0, lo0[s], hi0[s]) + gap(a1, b1, lo1[s], hi1[s]) + gap(a2, b2, lo2[s], hi2[s]);
      gap2[s] = g;
      // Near leaves (and the massless padding) add nothing here.
      // 1 when far (then g + eps2 > 0), else 0: arithmetic, not a branch
      // (the loop vectorizes).
      const double far = double(g > near2);
      const double w = mass[s] * far;
      u[l] += w / std::sqrt(g + eps2 + (1 - far));
      nearHere += 1 - far;
    }
    nearCount[s0 / kLanes] = nearHere;
  }
  up = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
    up += u[l];
}

// The far leaves (T's gap to them above sqrt(near2), gapT2) at one point
// q: each leaf's monopole and quadrupole about its centre of mass, within
// O3_S / s^4 (s^2 = q's gap to the box squared + eps^2: the Plummer kernel
// is 1 / |X| in four dimensions, X = (q - x, eps), whose third derivative
// along any segment inside the box is at most 3! / s^4 times the segment's
// length cubed, the Legendre polynomials being at most 1; the dipole
// vanishes about the centre of mass), and never above M_S / s or below M_S
// over the largest distance. Upper and lower sums into up, down (the
// lower one only WithLower).
template <bool WithLower>
JZ_GRAVITY_CLONES void memberFarSums(const LeafBoxes& leaves, const double* gapT2,
  const double* reach2, const double* q, double eps2, double& up, double& down)
{
  const std::size_t n = leaves.size();
  const double *lo0 = leaves.lo[0].data(), *lo1 = leaves.lo[1].data(), *lo2 = leaves.lo[2].data();
  const double *hi0 = leaves.hi[0].data(), *hi1 = leaves.hi[1].data(), *hi2 = leaves.hi[2].data();
  const double *c0 = leaves.com[0].data(), *c1 = leaves.com[1].data(), *c2 = leaves.com[2].data();
  const double *mass = leaves.mass.data(), *qs = leaves.q.data(), *o3 = leaves.o3.data();
  const double *qxx = leaves.quad[0].data(), *qyy = leaves.quad[1].data(),
               *qzz = leaves.quad[2].data(), *qxy = leaves.quad[3].data(),
               *qxz = leaves.quad[4].data(), *qyz = leaves.quad[5].data();
  const double q0 = q[0], q1 = q[1], q2 = q[2];
  auto gap = [](double q, double lo, double hi)
  {
    const double e = std::max(std::max(lo - q, q - hi), 0.0);
    return e * e;
  };
  auto span = [](double q, double lo, double hi)
  {
    const double w = std::max(q - lo, hi - q);
    return w * w;
  };
  double u[kLanes] = {}, d[kLanes] = {};
  for (std::size_t s0 = 0; s0 < n; s0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t s = s0 + l;
      const double far = double(gapT2[s] > reach2[s]); // then every s2 below > 0
      const double s2 = gap(q0, lo0[s], hi0[s]) + gap(q1, lo1[s], hi1[s]) +
        gap(q2, lo2[s], hi2[s]) + eps2 + (1 - far);
      const double dx = q0 - c0[s], dy = q1 - c1[s], dz = q2 - c2[s];
      const double r2 = dx * dx + dy * dy + dz * dz + eps2 + (1 - far);
      const double m = mass[s] * far;
      const double is = 1 / std::sqrt(s2), ir = 1 / std::sqrt(r2);
      const double rQr = qxx[s] * dx * dx + qyy[s] * dy * dy + qzz[s] * dz * dz +
        2 * (qxy[s] * dx * dy + qxz[s] * dx * dz + qyz[s] * dy * dz);
      const double ir2 = ir * ir;
      // Monopole and quadrupole (the second-order term of 1 / |X - Y|,
      // (3 (X.Y)^2 - |Y|^2 |X|^2) / (2 |X|^5), summed over the members).
      const double expansion = far * (m * ir + 0.5 * (3 * rQr * ir2 - qs[s]) * ir2 * ir);
      // The third-order remainder, and the quadrupole's rounding (1e-9 of
      // its largest value, trace / s^3).
      const double is2 = is * is;
      const double rem = far * (o3[s] * is2 * is2 + 1e-9 * qs[s] * is2 * is);
      u[l] += std::min(m * is, expansion + rem);
      const double f2 = span(q0, lo0[s], hi0[s]) + span(q1, lo1[s], hi1[s]) +
        span(q2, lo2[s], hi2[s]) + eps2 + (1 - far);
      if (WithLower)
        d[l] += std::max(m / std::sqrt(f2), expansion - rem);
    }
  up = down = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
  {
    up += u[l];
    down += d[l];
  }
}

// The far field of a target leaf T as a second-order Taylor expansion
// about a point c of its box, with a rigorous remainder: for a leaf S with
// gap2 above reach2 (reach2 at least T's near reach), R = c - com_S, a
// member q = c + d of T and S's members x = com_S + y,
//   sum m / |R + d - y| = M phi(R) + M grad phi(R) . d + M d.H(R).d / 2
//                         + tr(H(R) Q_S) / 2 + E,
// phi the Plummer kernel, Q_S = sum m y y^T (the dipole vanishes about the
// centre of mass), |E| <= sum m |d - y|^3 / s^4 <= (M a^3 + 3 a^2 A1 +
// 3 a A2 + A3) / s^4 (a = |d|, A_k = sum m |y|^k, s^2 = the boxes' gap
// squared + eps^2: every point between R and R + d - y is a point of T less
// a point of S, and the kernel's third derivative along a segment is at
// most 3! / s^4 times its length cubed, as in memberFarSums). Sums over
// the leaves into the 14 values of LocalField.
struct LocalField
{
  double c[3];
  double v, g[3], h[6]; // xx, yy, zz, xy, xz, yz
  double b[4];          // sum M / s^4, A1 / s^4, A2 / s^4, A3 / s^4
  // Upper bound at q (shifted frame) of the far leaves' sum, before the
  // caller's absolute slack.
  double upperAt(const double* q) const
  {
    const double d0 = q[0] - c[0], d1 = q[1] - c[1], d2 = q[2] - c[2];
    const double a = std::sqrt(d0 * d0 + d1 * d1 + d2 * d2) * (1 + 1e-12);
    const double value = v + g[0] * d0 + g[1] * d1 + g[2] * d2 +
      0.5 * (h[0] * d0 * d0 + h[1] * d1 * d1 + h[2] * d2 * d2) + h[3] * d0 * d1 + h[4] * d0 * d2 +
      h[5] * d1 * d2;
    return value + ((a * b[0] + 3 * b[1]) * a + 3 * b[2]) * a + b[3];
  }
};

JZ_GRAVITY_CLONES
void localFieldSums(const LeafBoxes& leaves, const double* gap2, const double* reach2,
  const double* c, double eps2, LocalField& out)
{
  const std::size_t n = leaves.size();
  const double *c0 = leaves.com[0].data(), *c1 = leaves.com[1].data(), *c2 = leaves.com[2].data();
  const double *mass = leaves.mass.data(), *qs = leaves.q.data(), *o3 = leaves.o3.data(),
               *a1 = leaves.a1.data();
  const double *qxx = leaves.quad[0].data(), *qyy = leaves.quad[1].data(),
               *qzz = leaves.quad[2].data(), *qxy = leaves.quad[3].data(),
               *qxz = leaves.quad[4].data(), *qyz = leaves.quad[5].data();
  double acc[14][kLanes] = {};
  for (std::size_t s0 = 0; s0 < n; s0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t s = s0 + l;
      const double on = double(gap2[s] > reach2[s]);
      const double rx = c[0] - c0[s], ry = c[1] - c1[s], rz = c[2] - c2[s];
      const double X2 = rx * rx + ry * ry + rz * rz + eps2 + (1 - on);
      const double iX = 1 / std::sqrt(X2), iX2 = iX * iX, iX3 = iX * iX2, iX5 = iX3 * iX2;
      const double m = mass[s] * on;
      const double RQR = qxx[s] * rx * rx + qyy[s] * ry * ry + qzz[s] * rz * rz +
        2 * (qxy[s] * rx * ry + qxz[s] * rx * rz + qyz[s] * ry * rz);
      acc[0][l] += m * iX + on * (1.5 * RQR * iX5 - 0.5 * qs[s] * iX3);
      const double m3 = m * iX3, m5 = 3 * m * iX5;
      acc[1][l] -= m3 * rx;
      acc[2][l] -= m3 * ry;
      acc[3][l] -= m3 * rz;
      acc[4][l] += m5 * rx * rx - m3;
      acc[5][l] += m5 * ry * ry - m3;
      acc[6][l] += m5 * rz * rz - m3;
      acc[7][l] += m5 * rx * ry;
      acc[8][l] += m5 * rx * rz;
      acc[9][l] += m5 * ry * rz;
      const double is2 = 1 / (gap2[s] + eps2 + (1 - on)), is4 = is2 * is2 * on;
      acc[10][l] += mass[s] * is4;
      acc[11][l] += a1[s] * is4;
      acc[12][l] += qs[s] * is4;
      acc[13][l] += o3[s] * is4;
    }
  double sum[14] = {};
  for (int k = 0; k < 14; ++k)
    for (std::size_t l = 0; l < kLanes; ++l)
      sum[k] += acc[k][l];
  std::copy(c, c + 3, out.c);
  out.v = sum[0];
  std::copy(sum + 1, sum + 4, out.g);
  std::copy(sum + 4, sum + 10, out.h);
  std::copy(sum + 10, sum + 14, out.b);
}

// Upper bound of the potential at q of near leaves (boxes lo/hi, masses m;
// count of them, padded to whole lanes): each mass over q's gap to its box.
JZ_GRAVITY_CLONES
double pointBoxSum(const double* q, const double* const* lo, const double* const* hi,
  const double* m, std::size_t count, double eps2)
{
  double u[kLanes] = {};
  const double *lo0 = lo[0], *lo1 = lo[1], *lo2 = lo[2], *hi0 = hi[0], *hi1 = hi[1], *hi2 = hi[2];
  auto gap = [](double q, double lo, double hi)
  {
    const double e = std::max(std::max(lo - q, q - hi), 0.0);
    return e * e;
  };
  for (std::size_t s0 = 0; s0 < count; s0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t s = s0 + l;
      const double g2 =
        eps2 + gap(q[0], lo0[s], hi0[s]) + gap(q[1], lo1[s], hi1[s]) + gap(q[2], lo2[s], hi2[s]);
      u[l] += m[s] / std::sqrt(g2); // +inf touching (NaN: massless, touching)
    }
  double sum = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
    sum += u[l];
  return sum;
}

// Each of a leaf's members' sums over the others (the leaf copied into
// kLeafSize slots, massless beyond count).
JZ_GRAVITY_CLONES
void ownSums(const double* x, const double* y, const double* z, const double* m, std::size_t count,
  double eps2, double* out)
{
  for (std::size_t p = 0; p < count; ++p)
  {
    double u[kLanes] = {};
    for (std::size_t j0 = 0; j0 < kLeafSize; j0 += kLanes)
      for (std::size_t l = 0; l < kLanes; ++l)
      {
        const std::size_t j = j0 + l;
        const double dx = x[j] - x[p], dy = y[j] - y[p], dz = z[j] - z[p];
        const double s2 = dx * dx + dy * dy + dz * dz + eps2;
        u[l] += maskedInverse(m[j], s2, j != p);
      }
    double sum = 0;
    for (std::size_t l = 0; l < kLanes; ++l)
      sum += u[l];
    out[p] = sum;
  }
}

// sum_j m_j / sqrt(|q - x_j|^2 + eps^2) over the j with a positive distance
// (n a multiple of kLanes, massless padding; the caller zeroes q's own mass).
JZ_GRAVITY_CLONES
double pairSum(const double* x, const double* y, const double* z, const double* m, std::size_t n,
  const double* q, double eps2)
{
  double lane[kLanes] = {};
  for (std::size_t j0 = 0; j0 < n; j0 += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
    {
      const std::size_t j = j0 + l;
      const double dx = x[j] - q[0], dy = y[j] - q[1], dz = z[j] - q[2];
      const double s2 = dx * dx + dy * dy + dz * dz + eps2;
      lane[l] += maskedInverse(m[j], s2);
    }
  double u = 0;
  for (std::size_t l = 0; l < kLanes; ++l)
    u += lane[l];
  return u;
}

// The leaves [0, count) with gap2 at most near2 (n, a multiple of kLanes,
// entries in all), appended to near: a lane block at a time, most of them
// without any.
JZ_GRAVITY_CLONES
void collectNear(const double* gap2, std::size_t n, std::size_t count, const double* reach2,
  std::vector<std::uint32_t>& near)
{
  for (std::size_t s0 = 0; s0 < n; s0 += kLanes)
  {
    double any = 0; // arithmetic, not a branch: the block's test vectorizes
    for (std::size_t l = 0; l < kLanes; ++l)
      any += double(gap2[s0 + l] <= reach2[s0 + l]);
    if (any > 0)
      for (std::size_t s = s0; s < std::min(s0 + kLanes, count); ++s)
        if (!(gap2[s] > reach2[s]))
          near.push_back(std::uint32_t(s));
  }
}

// The members of a target's near leaves, padded with massless points to
// whole lanes; the target leaf's first member among them.
struct NearMembers
{
  std::vector<double> x, y, z, m;
  std::size_t selfAt = 0;
  // U at the target's member p (position q; its own mass left out).
  double sumAt(const double* q, std::size_t p, double eps2)
  {
    const double own = std::exchange(m[selfAt + p], 0.0);
    const double u = pairSum(x.data(), y.data(), z.data(), m.data(), x.size(), q, eps2);
    m[selfAt + p] = own;
    return u;
  }
};

class LeafFilter
{
public:
  bool run(const double* x, const double* y, const double* z, const double* m, std::size_t n,
    double eps2, std::size_t maxCandidates, std::vector<std::pair<double, std::size_t>>& out,
    PotentialCentreStats* stats);

private:
  // A member for the kd split: its shifted position in float (any split is
  // valid; the leaves' boxes and moments come from the doubles), its index.
  struct TreePoint
  {
    float p[3];
    std::uint32_t i;
  };
  // Member i's position shifted to the first member's.
  double shifted(std::size_t i, int k) const { return in_[k][i] - in_[k][0]; }
  void build(std::size_t begin, std::size_t end, const float* lo, const float* hi);
  void addLeaf(std::size_t begin, std::size_t end);
  double seed();
  void buildLocal(std::size_t t, double near2, double half2, const double* a, const double* b);
  void midMoments();
  void gather(const std::vector<std::uint32_t>& near, std::size_t t, NearMembers& into) const;
  void filterLeaf(std::size_t t);

  std::size_t n_ = 0;
  double eps2_ = 0, slack_ = 0, floor2_ = 0;
  const double* m_ = nullptr;
  std::vector<TreePoint> pts_, lower_, upper_; // the points; the partition's two sides
  const double* in_[3] = { nullptr, nullptr, nullptr };
  std::vector<double> tx_, ty_, tz_, tm_, sx_, sy_, sz_; // tree order: given, shifted
  std::vector<std::size_t> order_;                       // tree position -> input index
  LeafBoxes leaves_;
  std::size_t realLeaves_ = 0;                   // before the padding
  std::vector<double> gap2_, nearCount_;         // per leaf; per block of kLanes leaves
  std::vector<double> localReach2_, wideReach2_; // per leaf: mid below, wide below
  LocalField local_;                             // the target's far field beyond the mid leaves
  LeafBoxes mid_;                                // the mid leaves, padded to whole lanes
  std::vector<double> midGap2_, midReach2_;      // 1 and 0 for each (all counted)
  std::vector<std::uint32_t> midIndex_;          // the mid leaves
  std::vector<double> nlo_[3], nhi_[3], nmass_;  // the near leaves but the target
  std::vector<std::uint32_t> near_;
  NearMembers near_members_, wide_members_; // near leaves', wide near leaves' members
  std::vector<std::uint32_t> wide_;         // leaves within kWideReach
  double best_ = 0;
  std::vector<std::pair<double, std::size_t>> candidates_;
  PotentialCentreStats stats_;
};

void LeafFilter::addLeaf(std::size_t begin, std::size_t end)
{
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k)
  {
    lo[k] = std::numeric_limits<double>::infinity();
    hi[k] = -lo[k];
  }
  double mass = 0, c[3] = { 0, 0, 0 };
  for (std::size_t t = begin; t < end; ++t)
  {
    const std::size_t i = pts_[t].i;
    for (int k = 0; k < 3; ++k)
    {
      const double p = shifted(i, k);
      lo[k] = std::min(lo[k], p);
      hi[k] = std::max(hi[k], p);
      c[k] += m_[i] * p;
    }
    mass += m_[i];
  }
  for (int k = 0; k < 3; ++k)
  {
    leaves_.lo[k].push_back(lo[k] - slack_);
    leaves_.hi[k].push_back(hi[k] + slack_);
  }
  leaves_.mass.push_back(mass * kRoundUp);
  for (int k = 0; k < 3; ++k)
    c[k] = mass > 0 ? c[k] / mass : 0.5 * (lo[k] + hi[k]);
  double quad[6] = { 0, 0, 0, 0, 0, 0 }, o3 = 0, a1 = 0;
  for (std::size_t t = begin; t < end; ++t)
  {
    const std::size_t i = pts_[t].i;
    const double y[3] = { shifted(i, 0) - c[0], shifted(i, 1) - c[1], shifted(i, 2) - c[2] };
    const double y2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2];
    quad[0] += m_[i] * y[0] * y[0];
    quad[1] += m_[i] * y[1] * y[1];
    quad[2] += m_[i] * y[2] * y[2];
    quad[3] += m_[i] * y[0] * y[1];
    quad[4] += m_[i] * y[0] * y[2];
    quad[5] += m_[i] * y[1] * y[2];
    o3 += m_[i] * y2 * std::sqrt(y2);
    a1 += m_[i] * std::sqrt(y2);
  }
  for (int k = 0; k < 3; ++k)
    leaves_.com[k].push_back(c[k]);
  leaves_.q.push_back(quad[0] + quad[1] + quad[2]);
  for (int k = 0; k < 6; ++k)
    leaves_.quad[k].push_back(quad[k]);
  leaves_.o3.push_back(o3 * (1 + 1e-9));
  leaves_.a1.push_back(a1 * (1 + 1e-9));
  double half2 = 0;
  for (int k = 0; k < 3; ++k)
    half2 += 0.25 * (hi[k] - lo[k] + 2 * slack_) * (hi[k] - lo[k] + 2 * slack_);
  leaves_.half2.push_back(half2);
  leaves_.begin.push_back(std::uint32_t(begin));
  leaves_.end.push_back(std::uint32_t(end));
}

// At the middle of the longest side of (lo, hi), a box holding the points
// (the parent's cut at the split: no pass over the points per level), or at
// the median where that leaves one side nearly empty (as
// PotentialCentreBounds' tree). The leaves' boxes are their points' own.
void LeafFilter::build(std::size_t begin, std::size_t end, const float* lo, const float* hi)
{
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (hi[k] - lo[k] > hi[axis] - lo[axis])
      axis = k;
  if (end - begin <= kLeafSize || !(hi[axis] > lo[axis]))
  {
    addLeaf(begin, end);
    return;
  }
  float cut = 0.5f * (lo[axis] + hi[axis]);
  // A partition without branches (each point written to both sides' next
  // slot, the counts advanced by the test): a branch per point would be
  // mispredicted half the time.
  std::size_t left = 0, right = 0;
  for (std::size_t t = begin; t < end; ++t)
  {
    const TreePoint a = pts_[t];
    const bool below = a.p[axis] < cut;
    lower_[left] = a;
    upper_[right] = a;
    left += below;
    right += !below;
  }
  std::copy(
    lower_.begin(), lower_.begin() + std::ptrdiff_t(left), pts_.begin() + std::ptrdiff_t(begin));
  std::copy(upper_.begin(), upper_.begin() + std::ptrdiff_t(right),
    pts_.begin() + std::ptrdiff_t(begin + left));
  std::size_t mid = begin + left;
  if (16 * (mid - begin) < end - begin || 16 * (end - mid) < end - begin)
  {
    mid = begin + (end - begin) / 2;
    std::nth_element(pts_.begin() + std::ptrdiff_t(begin), pts_.begin() + std::ptrdiff_t(mid),
      pts_.begin() + std::ptrdiff_t(end),
      [axis](const TreePoint& a, const TreePoint& b) { return a.p[axis] < b.p[axis]; });
    cut = pts_[mid].p[axis]; // left below or at it, right at or above
  }
  float leftHi[3] = { hi[0], hi[1], hi[2] }, rightLo[3] = { lo[0], lo[1], lo[2] };
  leftHi[axis] = cut;
  rightLo[axis] = cut;
  build(begin, mid, lo, leftHi);
  build(mid, end, rightLo, hi);
}

// The exact U (rounded down) of the member nearest the centre of mass of
// the densest leaf (mass / spread^1.5), where a halo's centre usually is.
double LeafFilter::seed()
{
  // A leaf's mass, and its mass-weighted coordinate sums into c.
  auto moments = [this](std::uint32_t b, std::uint32_t e, double* c)
  {
    double mass = 0;
    c[0] = c[1] = c[2] = 0;
    for (std::uint32_t p = b; p < e; ++p)
    {
      mass += tm_[p];
      c[0] += tm_[p] * sx_[p];
      c[1] += tm_[p] * sy_[p];
      c[2] += tm_[p] * sz_[p];
    }
    return mass;
  };
  std::size_t densest = 0;
  double density = -1;
  for (std::size_t l = 0; l < leaves_.size(); ++l)
  {
    const std::uint32_t b = leaves_.begin[l], e = leaves_.end[l];
    if (e - b < 2)
      continue;
    double c[3];
    const double mass = moments(b, e, c);
    if (!(mass > 0))
      continue;
    double spread = 0;
    for (std::uint32_t p = b; p < e; ++p)
      spread += tm_[p] *
        ((sx_[p] - c[0] / mass) * (sx_[p] - c[0] / mass) +
          (sy_[p] - c[1] / mass) * (sy_[p] - c[1] / mass) +
          (sz_[p] - c[2] / mass) * (sz_[p] - c[2] / mass));
    spread = spread / mass + 1e-300;
    const double d = mass / (spread * std::sqrt(spread));
    if (d > density)
    {
      density = d;
      densest = l;
    }
  }
  const std::uint32_t b = leaves_.begin[densest], e = leaves_.end[densest];
  double c[3];
  const double mass = moments(b, e, c);
  std::uint32_t pick = b;
  double nearest = std::numeric_limits<double>::infinity();
  for (std::uint32_t p = b; p < e; ++p)
  {
    const double w = mass > 0 ? 1 / mass : 0.0;
    const double dx = sx_[p] - c[0] * w, dy = sy_[p] - c[1] * w, dz = sz_[p] - c[2] * w;
    if (dx * dx + dy * dy + dz * dz < nearest)
    {
      nearest = dx * dx + dy * dy + dz * dz;
      pick = p;
    }
  }
  const double q[3] = { tx_[pick], ty_[pick], tz_[pick] };
  const double own = std::exchange(tm_[pick], 0.0);
  const double u = pairSum(tx_.data(), ty_.data(), tz_.data(), tm_.data(), tx_.size(), q, eps2_);
  tm_[pick] = own;
  return u * kRoundDown;
}

// The near leaves' members, padded with massless points to whole lanes.
void LeafFilter::gather(
  const std::vector<std::uint32_t>& near, std::size_t t, NearMembers& into) const
{
  for (auto* v : { &into.x, &into.y, &into.z, &into.m })
    v->clear();
  for (const std::uint32_t s : near)
  {
    if (s == t)
      into.selfAt = into.x.size();
    for (std::uint32_t j = leaves_.begin[s]; j < leaves_.end[s]; ++j)
    {
      into.x.push_back(tx_[j]);
      into.y.push_back(ty_[j]);
      into.z.push_back(tz_[j]);
      into.m.push_back(tm_[j]);
    }
  }
  while (into.x.size() % kLanes)
  {
    into.x.push_back(0);
    into.y.push_back(0);
    into.z.push_back(0);
    into.m.push_back(0);
  }
}

// Target leaf t's local expansion (about its box centre) of the leaves
// beyond kLocalReach, and the mid leaves (far, within it) one by one.
void LeafFilter::buildLocal(
  std::size_t t, double near2, double half2, const double* a, const double* b)
{
  for (std::size_t l = 0; l < leaves_.size(); ++l)
    localReach2_[l] = std::max({ near2, kLocalReach * kLocalReach * half2,
      kLocalReachOwn * kLocalReachOwn * leaves_.half2[l] });
  const double c[3] = { 0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]) };
  localFieldSums(leaves_, gap2_.data(), localReach2_.data(), c, eps2_, local_);
  // The mid leaves' boxes and masses now, their moments when a member
  // needs them (midMoments).
  midIndex_.clear();
  for (std::size_t s = 0; s < realLeaves_; ++s)
    if (s != t && gap2_[s] > near2 && !(gap2_[s] > localReach2_[s]))
      midIndex_.push_back(std::uint32_t(s));
  const std::size_t count = midIndex_.size();
  LeafBoxes& mid = mid_;
  const std::size_t padded = (count + kLanes - 1) / kLanes * kLanes;
  for (auto* v : { &mid.lo[0], &mid.lo[1], &mid.lo[2], &mid.hi[0], &mid.hi[1], &mid.hi[2] })
    v->assign(padded, 1e150); // the padding massless, far away
  mid.mass.assign(padded, 0.0);
  for (std::size_t i = 0; i < count; ++i)
  {
    const std::uint32_t s = midIndex_[i];
    for (int k = 0; k < 3; ++k)
    {
      mid.lo[k][i] = leaves_.lo[k][s];
      mid.hi[k][i] = leaves_.hi[k][s];
    }
    mid.mass[i] = leaves_.mass[s];
  }
}

// The mid leaves' moments (memberFarSums' other fields).
void LeafFilter::midMoments()
{
  LeafBoxes& mid = mid_;
  const std::size_t padded = mid.mass.size();
  for (auto* v : { &mid.com[0], &mid.com[1], &mid.com[2] })
    v->assign(padded, 1e150);
  for (auto* v : { &mid.q, &mid.o3, &mid.quad[0], &mid.quad[1], &mid.quad[2], &mid.quad[3],
         &mid.quad[4], &mid.quad[5] })
    v->assign(padded, 0.0);
  for (std::size_t i = 0; i < midIndex_.size(); ++i)
  {
    const std::uint32_t s = midIndex_[i];
    for (int k = 0; k < 3; ++k)
      mid.com[k][i] = leaves_.com[k][s];
    mid.q[i] = leaves_.q[s];
    mid.o3[i] = leaves_.o3[s];
    for (int k = 0; k < 6; ++k)
      mid.quad[k][i] = leaves_.quad[k][s];
  }
  midGap2_.assign(padded, 1.0);
  midReach2_.assign(padded, 0.0);
}

void LeafFilter::filterLeaf(std::size_t t)
{
  const double keep = 1 - kCentreBoundMargin;
  const double a[3] = { leaves_.lo[0][t], leaves_.lo[1][t], leaves_.lo[2][t] };
  const double b[3] = { leaves_.hi[0][t], leaves_.hi[1][t], leaves_.hi[2][t] };
  double half2 = 0;
  for (int k = 0; k < 3; ++k)
    half2 += 0.25 * (b[k] - a[k]) * (b[k] - a[k]);
  // Far leaves keep a gap far above the coordinates' rounding (kMomentsUp).
  const double near2 = std::max(kNearReach * kNearReach * half2, floor2_);
  // Far leaves: upper and lower bounds shared by the leaf's members.
  double far = 0;
  farSums(leaves_, a, b, near2, eps2_, gap2_.data(), nearCount_.data(), far);
  far *= kRoundUp;
  near_.clear();
  for (int k = 0; k < 3; ++k)
  {
    nlo_[k].clear();
    nhi_[k].clear();
  }
  nmass_.clear();
  for (std::size_t b0 = 0; b0 < nearCount_.size(); ++b0) // the blocks holding near leaves
    if (nearCount_[b0] > 0)
      for (std::size_t s = b0 * kLanes; s < std::min((b0 + 1) * kLanes, realLeaves_); ++s)
        if (gap2_[s] <= near2)
          near_.push_back(std::uint32_t(s));
  for (const std::uint32_t s : near_)
    if (s != t)
    {
      for (int k = 0; k < 3; ++k)
      {
        nlo_[k].push_back(leaves_.lo[k][s]);
        nhi_[k].push_back(leaves_.hi[k][s]);
      }
      nmass_.push_back(leaves_.mass[s]);
    }
  while (nmass_.size() % kLanes)
  {
    for (int k = 0; k < 3; ++k)
    {
      nlo_[k].push_back(1e150);
      nhi_[k].push_back(1e150);
    }
    nmass_.push_back(0);
  }
  const double* lo[3] = { nlo_[0].data(), nlo_[1].data(), nlo_[2].data() };
  const double* hi[3] = { nhi_[0].data(), nhi_[1].data(), nhi_[2].data() };
  const std::uint32_t tb = leaves_.begin[t], te = leaves_.end[t];
  // A leaf of more than kLeafSize members (bulk duplicates cannot be split)
  // has no own-leaf sums here: its members take the leaf pass below.
  const bool smallLeaf = te - tb <= kLeafSize;
  double leaf[4][kLeafSize] = {}, own[kLeafSize];
  if (smallLeaf)
  {
    for (std::uint32_t p = tb; p < te; ++p)
    {
      leaf[0][p - tb] = tx_[p];
      leaf[1][p - tb] = ty_[p];
      leaf[2][p - tb] = tz_[p];
      leaf[3][p - tb] = tm_[p];
    }
    ownSums(leaf[0], leaf[1], leaf[2], leaf[3], te - tb, eps2_, own);
  }
  bool gathered = false, widened = false, local = false, moments = false;
  const double wide2 = std::max(kWideReach * kWideReach * half2, floor2_);
  for (std::uint32_t p = tb; p < te; ++p)
  {
    // Near leaves by the member's own gap to their boxes, its leaf directly.
    const double qs[3] = { sx_[p], sy_[p], sz_[p] };
    const double nearBox = pointBoxSum(qs, lo, hi, nmass_.data(), nmass_.size(), eps2_) +
      (smallLeaf ? own[p - tb] : std::numeric_limits<double>::infinity());
    if ((far + nearBox) * kRoundUp < best_ * keep)
      continue;
    // The far leaves again: beyond kLocalReach by the target's local
    // expansion (its absolute slack far above its rounding and the centres
    // of mass' dipoles), the mid ones by the member's gap to their boxes.
    if (!local)
    {
      buildLocal(t, near2, half2, a, b);
      local = true;
    }
    const double* mlo[3] = { mid_.lo[0].data(), mid_.lo[1].data(), mid_.lo[2].data() };
    const double* mhi[3] = { mid_.hi[0].data(), mid_.hi[1].data(), mid_.hi[2].data() };
    const double expansion = local_.upperAt(qs) * kRoundUp + 1e-7 * far;
    const double farBox = std::min(
      far, expansion + pointBoxSum(qs, mlo, mhi, mid_.mass.data(), mid_.mass.size(), eps2_));
    if ((farBox + nearBox) * kRoundUp < best_ * keep)
      continue;
    if (!gathered)
    {
      gather(near_, t, near_members_);
      gathered = true;
    }
    ++stats_.exactNear;
    stats_.nearPairs += double(near_members_.x.size());
    const double q[3] = { tx_[p], ty_[p], tz_[p] };
    const double nearU = near_members_.sumAt(q, p - tb, eps2_);
    if ((farBox + nearU) * kRoundUp < best_ * keep)
      continue;
    // The mid leaves again, at the member itself and by their moments.
    if (!moments)
    {
      midMoments();
      moments = true;
    }
    double farUp = 0, farDown = 0;
    memberFarSums<false>(mid_, midGap2_.data(), midReach2_.data(), qs, eps2_, farUp, farDown);
    double upper = (std::min(farBox, expansion + farUp * kMomentsUp) + nearU) * kRoundUp;
    if (upper < best_ * keep)
      continue;
    // Still a candidate: the leaves within kWideReach summed directly, the
    // farther ones by their moments (the nearest far leaves' remainders
    // weigh most in the bound).
    if (!widened)
    {
      wide_.clear();
      // Within kWideReach half diagonals of either leaf: a large leaf's
      // moments bound poorly near it.
      for (std::size_t l = 0; l < leaves_.size(); ++l)
        wideReach2_[l] = std::max(wide2, kWideReachOwn * kWideReachOwn * leaves_.half2[l]);
      collectNear(gap2_.data(), leaves_.size(), realLeaves_, wideReach2_.data(), wide_);
      gather(wide_, t, wide_members_);
      widened = true;
    }
    stats_.nearPairs += double(wide_members_.x.size());
    const double wideU = wide_members_.sumAt(q, p - tb, eps2_);
    farUp = farDown = 0;
    memberFarSums<true>(leaves_, gap2_.data(), wideReach2_.data(), qs, eps2_, farUp, farDown);
    upper = std::min(upper, (farUp * kMomentsUp + wideU) * kRoundUp);
    best_ = std::max(best_, (farDown * kMomentsDown + wideU) * kRoundDown);
    if (upper >= best_ * keep)
      candidates_.emplace_back(upper, order_[p]);
  }
}

__attribute__((noinline)) bool LeafFilter::run(const double* x, const double* y, const double* z,
  const double* m, std::size_t n, double eps2, std::size_t maxCandidates,
  std::vector<std::pair<double, std::size_t>>& out, PotentialCentreStats* stats)
{
  n_ = n;
  eps2_ = eps2;
  m_ = m;
  stats_ = PotentialCentreStats();
  candidates_.clear();
  for (int k = 0; k < 3; ++k)
  {
    leaves_.lo[k].clear();
    leaves_.hi[k].clear();
  }
  leaves_.mass.clear();
  for (int k = 0; k < 3; ++k)
    leaves_.com[k].clear();
  leaves_.q.clear();
  for (auto& v : leaves_.quad)
    v.clear();
  leaves_.o3.clear();
  leaves_.a1.clear();
  leaves_.half2.clear();
  leaves_.begin.clear();
  leaves_.end.clear();
  // Shifted to the first member: the boxes keep their relative accuracy at
  // any offset; the sums use the coordinates as given.
  in_[0] = x;
  in_[1] = y;
  in_[2] = z;
  pts_.resize(n);
  lower_.resize(n);
  upper_.resize(n);
  double extent = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int k = 0; k < 3; ++k)
    {
      const double p = shifted(i, k);
      pts_[i].p[k] = float(p);
      extent = std::max(extent, std::abs(p));
    }
    pts_[i].i = std::uint32_t(i);
  }
  // Each shifted coordinate is off by <= 2^-53 |p|: boxes widened by more.
  slack_ = 4 * std::numeric_limits<double>::epsilon() * extent;
  floor2_ = (kFarFloor * extent) * (kFarFloor * extent);
  float lo[3], hi[3];
  for (int k = 0; k < 3; ++k)
  {
    lo[k] = std::numeric_limits<float>::infinity();
    hi[k] = -lo[k];
  }
  for (const TreePoint& tp : pts_)
    for (int k = 0; k < 3; ++k)
    {
      lo[k] = std::min(lo[k], tp.p[k]);
      hi[k] = std::max(hi[k], tp.p[k]);
    }
  build(0, n, lo, hi);
  const std::size_t padded = (n + kLanes - 1) / kLanes * kLanes;
  for (auto* v : { &tx_, &ty_, &tz_, &tm_, &sx_, &sy_, &sz_ })
  {
    v->resize(padded);
    std::fill(v->begin() + std::ptrdiff_t(n), v->end(), 0.0); // massless padding
  }
  order_.resize(n);
  for (std::size_t t = 0; t < n; ++t)
  {
    const std::size_t i = pts_[t].i;
    order_[t] = i;
    tx_[t] = x[i];
    ty_[t] = y[i];
    tz_[t] = z[i];
    tm_[t] = m[i];
    sx_[t] = shifted(i, 0);
    sy_[t] = shifted(i, 1);
    sz_[t] = shifted(i, 2);
  }
  realLeaves_ = leaves_.size();
  while (leaves_.size() % kLanes) // massless, far away
  {
    for (int k = 0; k < 3; ++k)
    {
      leaves_.lo[k].push_back(1e150);
      leaves_.hi[k].push_back(1e150);
    }
    leaves_.mass.push_back(0);
    for (int k = 0; k < 3; ++k)
      leaves_.com[k].push_back(1e150);
    leaves_.q.push_back(0);
    for (auto& v : leaves_.quad)
      v.push_back(0);
    leaves_.o3.push_back(0);
    leaves_.half2.push_back(0);
    leaves_.a1.push_back(0);
    leaves_.begin.push_back(0);
    leaves_.end.push_back(0);
  }
  gap2_.resize(leaves_.size());
  localReach2_.resize(leaves_.size());
  wideReach2_.resize(leaves_.size());
  nearCount_.resize(leaves_.size() / kLanes);
  best_ = seed();
  for (std::size_t t = 0; t < realLeaves_; ++t)
    filterLeaf(t);
  stats_.leaves += double(realLeaves_);
  const double keep = 1 - kCentreBoundMargin;
  out.clear();
  for (const auto& c : candidates_)
    if (c.first >= best_ * keep)
      out.push_back(c);
  if (stats)
    *stats = stats_;
  if (out.size() > maxCandidates)
  {
    out.clear();
    return false;
  }
  sortCandidates(out);
  return true;
}
} // namespace

bool potentialCentreCandidatesByLeaves(const double* x, const double* y, const double* z,
  const double* m, std::size_t n, double eps2, std::size_t maxCandidates,
  std::vector<std::pair<double, std::size_t>>& out, PotentialCentreStats* stats)
{
  out.clear();
  if (n == 0)
    return true;
  thread_local LeafFilter filter; // a thread's buffers, reused across groups
  LeafFilter& mine = filter;      // (its address once: not at every access)
  return mine.run(x, y, z, m, n, eps2, maxCandidates, out, stats);
}
} // namespace jz
