// The tables and loops of the Cartesian expansions (GravityExpansion.h).
// M2L, the hot loop, runs kM2LLanes sources per call with every row of the
// tables applied to a whole lane vector, written once over the lane type and
// compiled per instruction set with its own registers (JZ_GRAVITY_V4, V3,
// BASE); so do P2M (kM2LLanes points per call) and L2P; the shifts run once
// per node.
#include "gravity/GravityExpansion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "jz/Config.h"

namespace jz
{
namespace
{
int orderOf(const std::array<int, 3>& n)
{
  return n[0] + n[1] + n[2];
}

constexpr int kMaxCoefficients = kMaxGravityCoefficients;

// One lane vector: kM2LLanes doubles as K registers H of one instruction set
// (GCC's vector extension; one zmm on AVX-512, two ymm on AVX2, four xmm
// otherwise). A single 64-byte type in every clone made GCC lower the AVX2
// clone lane by lane through the stack.
template <class H, int K>
struct LanesOf
{
  static constexpr int kParts = K, kWidth = int(kM2LLanes) / K;
  H part[K];
};
#define JZ_LANES_INLINE __attribute__((always_inline)) inline

template <class V>
JZ_LANES_INLINE V loadLanes(const double* p)
{
  V v;
  for (int k = 0; k < V::kParts; ++k)
    __builtin_memcpy(&v.part[k], p + k * V::kWidth, sizeof(v.part[k]));
  return v;
}

template <class V>
JZ_LANES_INLINE void storeLanes(const V& v, double* p)
{
  for (int k = 0; k < V::kParts; ++k)
    __builtin_memcpy(p + k * V::kWidth, &v.part[k], sizeof(v.part[k]));
}

// The arithmetic of the vector extension, part by part; a double operand
// applies to every lane.
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator+(LanesOf<H, K> a, const LanesOf<H, K>& b)
{
  for (int k = 0; k < K; ++k)
    a.part[k] += b.part[k];
  return a;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K>& operator+=(LanesOf<H, K>& a, const LanesOf<H, K>& b)
{
  return a = a + b;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator+(LanesOf<H, K> a, double b)
{
  for (int k = 0; k < K; ++k)
    a.part[k] += b;
  return a;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator*(LanesOf<H, K> a, const LanesOf<H, K>& b)
{
  for (int k = 0; k < K; ++k)
    a.part[k] *= b.part[k];
  return a;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator*(LanesOf<H, K> a, double b)
{
  for (int k = 0; k < K; ++k)
    a.part[k] *= b;
  return a;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator*(double a, LanesOf<H, K> b)
{
  for (int k = 0; k < K; ++k)
    b.part[k] = a * b.part[k];
  return b;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator/(double a, LanesOf<H, K> b)
{
  for (int k = 0; k < K; ++k)
    b.part[k] = a / b.part[k];
  return b;
}
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> operator-(LanesOf<H, K> a)
{
  for (int k = 0; k < K; ++k)
    a.part[k] = -a.part[k];
  return a;
}

// The lanes' square roots (IEEE, as std::sqrt; GCC makes one vector
// instruction of them).
template <class H, int K>
JZ_LANES_INLINE LanesOf<H, K> squareRoot(LanesOf<H, K> a)
{
  for (int k = 0; k < K; ++k)
    for (int l = 0; l < LanesOf<H, K>::kWidth; ++l)
      a.part[k][l] = std::sqrt(a.part[k][l]);
  return a;
}

template <class V>
JZ_LANES_INLINE void m2lBody(
  const GravityExpansion& e, const double* R, const double* M, double eps2, double* acc)
{
  constexpr std::size_t W = kM2LLanes;
  V D[kMaxCoefficients];
  const V R0 = loadLanes<V>(R), R1 = loadLanes<V>(R + W), R2 = loadLanes<V>(R + 2 * W);
  // x0 first, so that GCC fuses it into the sum as it did (same bits).
  const V x0 = R0 * R0;
  const V s2 = x0 + R1 * R1 + R2 * R2 + eps2;
  const V minusInv2 = -1.0 / s2;
  D[0] = 1.0 / squareRoot(s2);
  // Each row summed in registers (a chain through memory would bound the
  // loop by store-to-load latency), two partial sums for the long ones.
  const int size = e.size();
  const GravityExpansion::Term* terms = e.terms().data();
  const int* termStart = e.termStart().data();
  for (int n = 1; n < size; ++n)
  {
    V s = {};
    for (int t = termStart[n]; t < termStart[n + 1]; ++t)
    {
      const GravityExpansion::Term& term = terms[t];
      s += term.axis < 0 ? term.coef * D[term.src]
                         : term.coef * loadLanes<V>(R + term.axis * W) * D[term.src];
    }
    D[n] = s * minusInv2;
  }
  const GravityExpansion::Pair* pairs = e.m2lPairs().data();
  const int* pairStart = e.m2lStart().data();
  for (int a = 0; a < size; ++a)
  {
    V s0 = loadLanes<V>(acc + a * W), s1 = {};
    int i = pairStart[a];
    const int end = pairStart[a + 1];
    for (; i + 1 < end; i += 2)
    {
      s0 += D[pairs[i].ab] * loadLanes<V>(M + pairs[i].b * W);
      s1 += D[pairs[i + 1].ab] * loadLanes<V>(M + pairs[i + 1].b * W);
    }
    if (i < end)
      s0 += D[pairs[i].ab] * loadLanes<V>(M + pairs[i].b * W);
    storeLanes(s0 + s1, acc + a * W);
  }
}

// L2P at kM2LLanes points at once (y: 3 x lanes, lane-minor).
template <class V>
JZ_LANES_INLINE void l2pBody(
  const GravityExpansion& e, const double* L, const double* y, bool field, double* u, double* g)
{
  constexpr std::size_t W = kM2LLanes;
  const V yv[3] = { loadLanes<V>(y), loadLanes<V>(y + W), loadLanes<V>(y + 2 * W) };
  V mono[kMaxCoefficients];
  mono[0] = V{} + 1.0;
  const int size = e.size();
  const int* prev = e.previous().data();
  const int* axis = e.axes().data();
  const double* inverse = e.inverses().data();
  for (int k = 1; k < size; ++k)
    mono[k] = mono[prev[k]] * yv[axis[k]] * inverse[k];
  V su = {}, g0 = {}, g1 = {}, g2 = {};
  const int* up0 = e.raised(0).data();
  const int* up1 = e.raised(1).data();
  const int* up2 = e.raised(2).data();
  for (int k = 0; k < size; ++k)
  {
    su += L[k] * mono[k];
    if (field && up0[k] >= 0)
    {
      g0 += L[up0[k]] * mono[k];
      g1 += L[up1[k]] * mono[k];
      g2 += L[up2[k]] * mono[k];
    }
  }
  storeLanes(su, u);
  if (field)
  {
    storeLanes(g0, g);
    storeLanes(g1, g + W);
    storeLanes(g2, g + 2 * W);
  }
}

// P2M of kM2LLanes points at once (w: 3 x lanes, lane-minor; m: lanes):
// each lane's m (-w)^n / n! added to acc (size() x lanes, lane-minor). The
// monomial chain runs once per lane vector, not once per point.
template <class V>
JZ_LANES_INLINE void p2mBody(
  const GravityExpansion& e, const double* w, const double* m, double* acc)
{
  constexpr std::size_t W = kM2LLanes;
  const V minus[3] = { -loadLanes<V>(w), -loadLanes<V>(w + W), -loadLanes<V>(w + 2 * W) };
  V mono[kMaxCoefficients];
  mono[0] = loadLanes<V>(m);
  const int size = e.size();
  const int* prev = e.previous().data();
  const int* axis = e.axes().data();
  const double* inverse = e.inverses().data();
  for (int k = 1; k < size; ++k)
    mono[k] = mono[prev[k]] * minus[axis[k]] * inverse[k];
  for (int k = 0; k < size; ++k)
    storeLanes(loadLanes<V>(acc + k * W) + mono[k], acc + k * W);
}

// Each batch once per instruction set with its registers, picked by GCC's
// resolver (GravityKernelsCpu.h).
static_assert(kM2LLanes == 8, "the lane types hold 8 doubles");
typedef double Double2 __attribute__((vector_size(16)));
#if JZ_GRAVITY_VERSIONS
typedef double Double4 __attribute__((vector_size(32)));
typedef double Double8 __attribute__((vector_size(64)));
typedef LanesOf<Double8, 1> Lanes8;
typedef LanesOf<Double4, 2> Lanes4;
JZ_GRAVITY_V4 void m2lBatch(
  const GravityExpansion& e, const double* R, const double* M, double eps2, double* acc)
{
  m2lBody<Lanes8>(e, R, M, eps2, acc);
}
JZ_GRAVITY_V3 void m2lBatch(
  const GravityExpansion& e, const double* R, const double* M, double eps2, double* acc)
{
  m2lBody<Lanes4>(e, R, M, eps2, acc);
}
JZ_GRAVITY_V4 void l2pBatch(
  const GravityExpansion& e, const double* L, const double* y, bool field, double* u, double* g)
{
  l2pBody<Lanes8>(e, L, y, field, u, g);
}
JZ_GRAVITY_V3 void l2pBatch(
  const GravityExpansion& e, const double* L, const double* y, bool field, double* u, double* g)
{
  l2pBody<Lanes4>(e, L, y, field, u, g);
}
JZ_GRAVITY_V4 void p2mBatch(
  const GravityExpansion& e, const double* w, const double* m, double* acc)
{
  p2mBody<Lanes8>(e, w, m, acc);
}
JZ_GRAVITY_V3 void p2mBatch(
  const GravityExpansion& e, const double* w, const double* m, double* acc)
{
  p2mBody<Lanes4>(e, w, m, acc);
}
#endif
typedef LanesOf<Double2, 4> Lanes2;
JZ_GRAVITY_BASE void m2lBatch(
  const GravityExpansion& e, const double* R, const double* M, double eps2, double* acc)
{
  m2lBody<Lanes2>(e, R, M, eps2, acc);
}
JZ_GRAVITY_BASE void l2pBatch(
  const GravityExpansion& e, const double* L, const double* y, bool field, double* u, double* g)
{
  l2pBody<Lanes2>(e, L, y, field, u, g);
}
JZ_GRAVITY_BASE void p2mBatch(
  const GravityExpansion& e, const double* w, const double* m, double* acc)
{
  p2mBody<Lanes2>(e, w, m, acc);
}
} // namespace

GravityExpansion::GravityExpansion(int order)
  : order_(std::max(0, std::min(order, kMaxGravityOrder)))
{
  const int P = order_, side = P + 1;
  index_.assign(std::size_t(side * side * side), -1);
  for (int k = 0; k <= P; ++k)
    for (int a = k; a >= 0; --a)
      for (int b = k - a; b >= 0; --b)
      {
        index_[std::size_t((a * side + b) * side + (k - a - b))] = int(exponents_.size());
        exponents_.push_back({ a, b, k - a - b });
      }
  const int N = size();
  prev_.assign(std::size_t(N), -1);
  axis_.assign(std::size_t(N), -1);
  inverse_.assign(std::size_t(N), 1.0);
  for (int k = 0; k < 3; ++k)
    up_[k].assign(std::size_t(N), -1);
  for (int k = 0; k < N; ++k)
  {
    const std::array<int, 3>& n = exponents_[std::size_t(k)];
    for (int j = 0; j < 3; ++j)
    {
      std::array<int, 3> u = n;
      ++u[j];
      up_[j][std::size_t(k)] = index(u[0], u[1], u[2]);
    }
    if (k == 0)
      continue;
    const int i = n[0] > 0 ? 0 : (n[1] > 0 ? 1 : 2);
    std::array<int, 3> m = n;
    --m[i];
    prev_[std::size_t(k)] = index(m[0], m[1], m[2]);
    axis_[std::size_t(k)] = i;
    inverse_[std::size_t(k)] = 1.0 / double(n[i]);
    // s^2 D_n = -R_i D_m - m_i D_{m-e_i} - 2 sum_j m_j R_j D_{n-e_j}
    //           - sum_j m_j (m_j - 1) D_{n-2e_j}; the minus goes to the end.
    std::map<std::pair<int, int>, double> merged; // (src, axis) -> coef
    merged[{ index(m[0], m[1], m[2]), i }] += 1.0;
    if (m[i] > 0)
    {
      std::array<int, 3> q = m;
      --q[i];
      merged[{ index(q[0], q[1], q[2]), -1 }] += m[i];
    }
    for (int j = 0; j < 3; ++j)
    {
      if (m[j] >= 1)
      {
        std::array<int, 3> q = n;
        --q[j];
        merged[{ index(q[0], q[1], q[2]), j }] += 2.0 * m[j];
      }
      if (m[j] >= 2)
      {
        std::array<int, 3> q = n;
        q[j] -= 2;
        merged[{ index(q[0], q[1], q[2]), -1 }] += double(m[j] * (m[j] - 1));
      }
    }
    for (const auto& t : merged)
      terms_.push_back(Term{ k, t.first.first, t.first.second, t.second });
  }
  termStart_.assign(std::size_t(N) + 1, 0);
  for (const Term& t : terms_)
    ++termStart_[std::size_t(t.n) + 1];
  for (int k = 0; k < N; ++k)
    termStart_[std::size_t(k) + 1] += termStart_[std::size_t(k)];
  for (int a = 0; a < N; ++a)
    for (int b = 0; b < N; ++b)
    {
      const std::array<int, 3>& x = exponents_[std::size_t(a)];
      const std::array<int, 3>& y = exponents_[std::size_t(b)];
      if (orderOf(x) + orderOf(y) > P)
        continue;
      const Pair p{ a, b, index(x[0] + y[0], x[1] + y[1], x[2] + y[2]) };
      pairs_.push_back(p);
      if (orderOf(y) != 1)
        m2lPairs_.push_back(p);
    }
  m2lStart_.assign(std::size_t(N) + 1, 0);
  for (const Pair& p : m2lPairs_) // ordered by a
    ++m2lStart_[std::size_t(p.a) + 1];
  for (int k = 0; k < N; ++k)
    m2lStart_[std::size_t(k) + 1] += m2lStart_[std::size_t(k)];
}

int GravityExpansion::index(int n0, int n1, int n2) const
{
  const int side = order_ + 1;
  if (n0 < 0 || n1 < 0 || n2 < 0 || n0 + n1 + n2 > order_)
    return -1;
  return index_[std::size_t((n0 * side + n1) * side + n2)];
}

void GravityExpansion::monomials(const double* v, bool negate, double* out) const
{
  const double s[3] = { negate ? -v[0] : v[0], negate ? -v[1] : v[1], negate ? -v[2] : v[2] };
  out[0] = 1;
  for (int k = 1; k < size(); ++k)
  {
    const int i = axis_[std::size_t(k)];
    out[k] = out[prev_[std::size_t(k)]] * s[i] * inverse_[std::size_t(k)];
  }
}

void GravityExpansion::addPoint(const double* w, double m, double* M) const
{
  double mono[kMaxCoefficients];
  monomials(w, true, mono);
  for (int k = 0; k < size(); ++k)
    M[k] += m * mono[k];
}

void GravityExpansion::shiftMultipole(const double* child, const double* t, double* parent) const
{
  double mono[kMaxCoefficients];
  monomials(t, true, mono);
  for (const Pair& p : pairs_)
    parent[p.ab] += child[p.a] * mono[p.b];
}

void GravityExpansion::shiftLocal(const double* parent, const double* t, double* child) const
{
  double mono[kMaxCoefficients];
  monomials(t, false, mono);
  for (const Pair& p : pairs_)
    child[p.a] += parent[p.ab] * mono[p.b];
}

void GravityExpansion::evaluateLocal(
  const double* L, const double* y, bool field, GravitySum& sum) const
{
  double mono[kMaxCoefficients];
  monomials(y, false, mono);
  double u = 0, g[3] = { 0, 0, 0 };
  for (int k = 0; k < size(); ++k)
  {
    u += L[k] * mono[k];
    if (field)
      for (int j = 0; j < 3; ++j)
      {
        const int up = up_[j][std::size_t(k)];
        if (up >= 0)
          g[j] += L[up] * mono[k];
      }
  }
  sum.u += u;
  for (int j = 0; j < 3; ++j)
    sum.g[j] += g[j];
}

void GravityExpansion::derivatives(const double* R, double eps2, double* D) const
{
  const double s2 = R[0] * R[0] + R[1] * R[1] + R[2] * R[2] + eps2;
  D[0] = 1.0 / std::sqrt(s2);
  for (int k = 1; k < size(); ++k)
    D[k] = 0;
  for (const Term& t : terms_)
  {
    D[t.n] += t.coef * (t.axis < 0 ? 1.0 : R[t.axis]) * D[t.src];
    // The terms of n are consecutive: finish D_n after its last one.
    if (&t == &terms_.back() || (&t + 1)->n != t.n)
      D[t.n] *= -1.0 / s2;
  }
}

void GravityExpansion::multipolesToLocal(
  const double* R, const double* M, double eps2, double* lanes) const
{
  m2lBatch(*this, R, M, eps2, lanes);
}

void GravityExpansion::addPointsLanes(const double* w, const double* m, double* lanes) const
{
  p2mBatch(*this, w, m, lanes);
}

void GravityExpansion::evaluateLocalLanes(
  const double* L, const double* y, bool field, double* u, double* g) const
{
  l2pBatch(*this, L, y, field, u, g);
}

void GravityExpansion::addLanes(const double* lanes, double* L) const
{
  for (int k = 0; k < size(); ++k)
  {
    double s = 0;
    for (std::size_t l = 0; l < kM2LLanes; ++l)
      s += lanes[std::size_t(k) * kM2LLanes + l];
    L[k] += s;
  }
}

const GravityExpansion& gravityExpansion(int order)
{
  static std::mutex lock;
  static std::map<int, std::unique_ptr<GravityExpansion>> built;
  const std::lock_guard<std::mutex> guard(lock);
  std::unique_ptr<GravityExpansion>& e = built[order];
  if (!e)
    e.reset(new GravityExpansion(order));
  return *e;
}
} // namespace jz
