// Cartesian Taylor expansions of the softened kernel 1/s, s^2 = r^2 + eps^2,
// to total order P: the fast multipole method of tree gravity (Dehnen 2002,
// "falcON"; Dehnen 2014, "A fast multipole method for stellar dynamics").
//
// Multi-indices n = (n0, n1, n2), |n| = n0 + n1 + n2 <= P, n! = n0! n1! n2!,
// x^n = x0^n0 x1^n1 x2^n2, D_n(R) = d^n (1/s) at R. For a source node with
// centre z_d and a receiver node with centre z_c (R = z_c - z_d), point
// x = z_c + y and sources x_i = z_d + w_i:
//   multipole   M_m = sum_i m_i (-w_i)^m / m!                       (P2M)
//   local       L_n = sum_{|m| <= P - |n|} D_{n+m}(R) M_m            (M2L)
//   U(x)        = sum_n L_n y^n / n!,  dU/dx_k = sum_n L_{n+e_k} y^n / n!   (L2P)
//   shifts      M_m(z) = sum_{a+b=m} M_a(z') (-t)^b / b!,  t = z' - z  (M2M)
//               L_a(z') = sum_b L_{a+b}(z) t^b / b!,      t = z' - z  (L2L)
// P2M, M2M and L2L are exact (polynomial identities); only M2L truncates.
// D_n follows from s^2 d_i f = -R_i f differentiated by n - e_i (Leibniz):
//   s^2 D_n = -R_i D_{n-e_i} - (n_i - 1) D_{n-2e_i}
//             - 2 sum_j m_j R_j D_{n-e_j} - sum_j m_j (m_j - 1) D_{n-2e_j},
// m = n - e_i, which holds with softening as it does without.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "gravity/GravityTerms.h"
#include "gravity/GravityKernelsCpu.h"

namespace jz
{
// The highest order the tables are built for.
constexpr int kMaxGravityOrder = 8;
// The coefficients of an expansion of that order.
constexpr int kMaxGravityCoefficients =
  (kMaxGravityOrder + 1) * (kMaxGravityOrder + 2) * (kMaxGravityOrder + 3) / 6;

// Source lanes of one M2L batch (8 doubles: one AVX-512 register).
constexpr std::size_t kM2LLanes = 8;

class GravityExpansion
{
public:
  explicit GravityExpansion(int order);

  int order() const { return order_; }
  // Coefficients of an expansion: (P + 1)(P + 2)(P + 3) / 6.
  int size() const { return int(exponents_.size()); }
  const std::array<int, 3>& exponents(int k) const { return exponents_[std::size_t(k)]; }
  // The coefficient of n (|n| <= P), or -1.
  int index(int n0, int n1, int n2) const;

  // v^n / n! for every n, times (-1)^|n| when negate (out: size()).
  void monomials(const double* v, bool negate, double* out) const;
  // P2M: M += m (-w)^n / n!.
  void addPoint(const double* w, double m, double* M) const;
  // P2M of kM2LLanes points at once: w (3 x kM2LLanes, lane-minor) and m
  // (kM2LLanes; unused lanes massless), each lane's m (-w)^n / n! added to
  // `lanes` (size() x kM2LLanes, lane-minor); addLanes sums them into M.
  void addPointsLanes(const double* w, const double* m, double* lanes) const;
  // M2M: a child's multipole about z' added to its parent's about z, t = z' - z.
  void shiftMultipole(const double* child, const double* t, double* parent) const;
  // L2L: a parent's local about z added to its child's about z', t = z' - z.
  void shiftLocal(const double* parent, const double* t, double* child) const;
  // L2P at offset y from the local's centre: U and (field) grad U added.
  void evaluateLocal(const double* L, const double* y, bool field, GravitySum& sum) const;
  // L2P at kM2LLanes points at once: y (3 x kM2LLanes, lane-minor), U into
  // u (kM2LLanes) and, with field, grad U into g (3 x kM2LLanes), both
  // overwritten.
  void evaluateLocalLanes(const double* L, const double* y, bool field, double* u, double* g) const;
  // D_n(R) for every n, in double (the reference of the batched kernel).
  void derivatives(const double* R, double eps2, double* D) const;

  // M2L of up to kM2LLanes sources at once: R (3 x kM2LLanes, lane-minor:
  // R[k * kM2LLanes + l]), their multipoles M (size() x kM2LLanes,
  // lane-minor; unused lanes massless with R != 0), each lane's local added
  // to `lanes` (size() x kM2LLanes, lane-minor), vectorized over the lanes;
  // addLanes then adds the lanes' sum to a local L (size()), once per
  // receiver.
  void multipolesToLocal(const double* R, const double* M, double eps2, double* lanes) const;
  void addLanes(const double* lanes, double* L) const;

  // Table rows (public for the kernel file).
  struct Pair // out[a] / out[ab] with in[.] * mono[b]
  {
    int a, b, ab;
  };
  struct Term // D_n += coef * (axis < 0 ? 1 : R_axis) * D_src, then D_n /= -s^2
  {
    int n, src, axis;
    double coef;
  };
  const std::vector<Pair>& pairs() const { return pairs_; }
  const std::vector<Pair>& m2lPairs() const { return m2lPairs_; }
  const std::vector<Term>& terms() const { return terms_; }
  const std::vector<int>& previous() const { return prev_; }
  const std::vector<int>& axes() const { return axis_; }
  const std::vector<double>& inverses() const { return inverse_; }
  const std::vector<int>& raised(int k) const { return up_[k]; } // n + e_k, or -1
  // Where the rows of coefficient k begin: [start[k], start[k + 1]).
  const std::vector<int>& termStart() const { return termStart_; }
  const std::vector<int>& m2lStart() const { return m2lStart_; }

private:
  int order_;
  std::vector<std::array<int, 3>> exponents_;
  std::vector<int> index_; // (P+1)^3, -1 beyond order P
  // monomials: mono[k] = mono[prev[k]] * v[axis[k]] / exponents[k][axis[k]]
  std::vector<int> prev_, axis_;
  std::vector<double> inverse_; // 1 / exponents[k][axis[k]]
  std::vector<Pair> pairs_;     // |a| + |b| <= P
  std::vector<Pair> m2lPairs_;  // the same without |b| = 1 (a dipole about a centre of mass is 0)
  std::vector<Term> terms_;     // by n, merged
  std::vector<int> termStart_, m2lStart_;
  std::vector<int> up_[3]; // n + e_k, or -1 (L2P's field)
};

// The expansion of the given order (built once, shared by all threads).
const GravityExpansion& gravityExpansion(int order);
} // namespace jz
