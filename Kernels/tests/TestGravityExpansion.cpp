// The Cartesian expansions of tree gravity's fast multipole method
// (src/cpu/GravityExpansion.h) against independent references: the
// derivatives D_n of 1/s against finite differences of lower orders, M2L
// of two well-separated clusters against their direct sum at orders 1..8
// (error falling with the order), and the exact operations (P2M, M2M, L2L)
// against recomputation.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "TestHarness.h"
#include "gravity/GravityExpansion.h"

namespace
{
struct Cluster
{
  std::vector<double> x, m; // x: 3 per point
};

Cluster cluster(const double* centre, double radius, int n, unsigned seed)
{
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Cluster c;
  while (int(c.m.size()) < n)
  {
    const double d[3] = { u(rng), u(rng), u(rng) };
    if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 1)
      continue;
    for (int k = 0; k < 3; ++k)
      c.x.push_back(centre[k] + radius * d[k]);
    c.m.push_back(0.5 + 0.5 * (u(rng) + 1));
  }
  return c;
}

// U and grad U at x from the cluster, directly.
jz::GravitySum direct(const Cluster& c, const double* x, double eps2)
{
  jz::GravitySum s;
  for (std::size_t i = 0; i < c.m.size(); ++i)
    jz::addPointTerm(
      s, c.x[3 * i] - x[0], c.x[3 * i + 1] - x[1], c.x[3 * i + 2] - x[2], c.m[i], eps2);
  return s;
}

std::vector<double> multipole(const jz::GravityExpansion& e, const Cluster& c, const double* z)
{
  std::vector<double> M(std::size_t(e.size()), 0.0);
  for (std::size_t i = 0; i < c.m.size(); ++i)
  {
    const double w[3] = { c.x[3 * i] - z[0], c.x[3 * i + 1] - z[1], c.x[3 * i + 2] - z[2] };
    e.addPoint(w, c.m[i], M.data());
  }
  return M;
}

// The local expansion about zc of the cluster's multipole about zd, through
// the batched kernel (the source in lane 2, the other lanes massless).
std::vector<double> local(const jz::GravityExpansion& e, const std::vector<double>& M,
  const double* zc, const double* zd, double eps2)
{
  const std::size_t W = jz::kM2LLanes, N = std::size_t(e.size());
  std::vector<double> R(3 * W, 1.0), Mb(N * W, 0.0), lanes(N * W, 0.0), L(N, 0.0);
  for (int k = 0; k < 3; ++k)
    R[k * W + 2] = zc[k] - zd[k];
  for (std::size_t k = 0; k < N; ++k)
    Mb[k * W + 2] = M[k];
  e.multipolesToLocal(R.data(), Mb.data(), eps2, lanes.data());
  e.addLanes(lanes.data(), L.data());
  return L;
}

double relErr(const jz::GravitySum& got, const jz::GravitySum& ref, double& phiErr)
{
  phiErr = std::abs(got.u - ref.u) / std::abs(ref.u);
  double d2 = 0, r2 = 0;
  for (int k = 0; k < 3; ++k)
  {
    d2 += (got.g[k] - ref.g[k]) * (got.g[k] - ref.g[k]);
    r2 += ref.g[k] * ref.g[k];
  }
  return std::sqrt(d2 / r2);
}
} // namespace

// D_{n + e_k} is the derivative of D_n along k: central differences.
JZ_TEST(DerivativesAreDerivatives)
{
  const jz::GravityExpansion& e = jz::gravityExpansion(6);
  for (double eps2 : { 0.0, 0.3 })
  {
    const double R[3] = { 0.7, -1.1, 0.4 };
    std::vector<double> D(std::size_t(e.size())), Dp(D.size()), Dm(D.size());
    e.derivatives(R, eps2, D.data());
    JZ_CHECK(std::abs(D[0] - 1 / std::sqrt(0.49 + 1.21 + 0.16 + eps2)) < 1e-15);
    const double h = 1e-5;
    for (int k = 0; k < 3; ++k)
    {
      double Rp[3] = { R[0], R[1], R[2] }, Rm[3] = { R[0], R[1], R[2] };
      Rp[k] += h;
      Rm[k] -= h;
      e.derivatives(Rp, eps2, Dp.data());
      e.derivatives(Rm, eps2, Dm.data());
      for (int n = 0; n < e.size(); ++n)
      {
        const std::array<int, 3>& x = e.exponents(n);
        const int up = e.index(x[0] + (k == 0), x[1] + (k == 1), x[2] + (k == 2));
        if (up < 0)
          continue;
        const double fd = (Dp[std::size_t(n)] - Dm[std::size_t(n)]) / (2 * h);
        JZ_CHECK_MSG(std::abs(fd - D[std::size_t(up)]) <= 1e-6 * (1 + std::abs(D[std::size_t(up)])),
          "n " << n << " k " << k << ": " << fd << " vs " << D[std::size_t(up)]);
      }
    }
  }
}

// Two clusters of radius 1 at distance 6 (r_c + r_d = R / 3): the M2L error
// at points of the receiver falls with the order, and order 8 is near exact.
JZ_TEST(M2LConvergesWithOrder)
{
  const double zd0[3] = { 0.3, -0.2, 0.1 }, zc[3] = { 0.3 + 4.0, -0.2 + 4.0, 0.1 + 2.0 };
  const Cluster src = cluster(zd0, 1.0, 200, 7), rcv = cluster(zc, 1.0, 50, 8);
  // The source's centre of mass: its dipole vanishes there (M2L skips it).
  double zd[3] = { 0, 0, 0 }, mass = 0;
  for (std::size_t i = 0; i < src.m.size(); ++i)
  {
    mass += src.m[i];
    for (int k = 0; k < 3; ++k)
      zd[k] += src.m[i] * src.x[3 * i + k];
  }
  for (int k = 0; k < 3; ++k)
    zd[k] /= mass;
  for (double eps2 : { 0.0, 0.25 })
  {
    double last = 1;
    for (int P = 1; P <= 8; ++P)
    {
      const jz::GravityExpansion e(P);
      const std::vector<double> L = local(e, multipole(e, src, zd), zc, zd, eps2);
      double worstAcc = 0, worstPhi = 0;
      for (std::size_t i = 0; i < rcv.m.size(); ++i)
      {
        const double* x = &rcv.x[3 * i];
        const double y[3] = { x[0] - zc[0], x[1] - zc[1], x[2] - zc[2] };
        jz::GravitySum got;
        e.evaluateLocal(L.data(), y, true, got);
        double ep;
        worstAcc = std::max(worstAcc, relErr(got, direct(src, x, eps2), ep));
        worstPhi = std::max(worstPhi, ep);
      }
      std::printf("  eps2 %.2f order %d: worst acc %.2e phi %.2e\n", eps2, P, worstAcc, worstPhi);
      JZ_CHECK_MSG(worstAcc < (P == 1 ? 1.0 : 0.8 * last), "order " << P << ": " << worstAcc);
      JZ_CHECK(worstPhi < std::pow(1.0 / 2.5, P + 1));
      last = worstAcc;
    }
    JZ_CHECK_MSG(last < 1e-4, "order 8 acc " << last);
  }
}

// P2M, M2M and L2L are exact: a multipole shifted equals the multipole
// computed about the new centre; a local shifted evaluates as the original.
JZ_TEST(ShiftsAreExact)
{
  const jz::GravityExpansion& e = jz::gravityExpansion(5);
  const double z0[3] = { 0.1, 0.2, 0.3 }, z1[3] = { -0.4, 0.5, 0.05 };
  const Cluster c = cluster(z0, 0.5, 40, 3);
  const std::vector<double> M0 = multipole(e, c, z0), M1 = multipole(e, c, z1);
  std::vector<double> shifted(M0.size(), 0.0);
  const double t[3] = { z0[0] - z1[0], z0[1] - z1[1], z0[2] - z1[2] };
  e.shiftMultipole(M0.data(), t, shifted.data());
  for (std::size_t k = 0; k < M0.size(); ++k)
    JZ_CHECK_MSG(std::abs(shifted[k] - M1[k]) <= 1e-12 * (1 + std::abs(M1[k])),
      "M2M coefficient " << k << ": " << shifted[k] << " vs " << M1[k]);
  // P2M of one unit mass at w: (-w)^n / n!.
  std::vector<double> one(M0.size(), 0.0);
  const double w[3] = { 0.5, -2.0, 1.5 };
  e.addPoint(w, 1.0, one.data());
  const int k = e.index(2, 1, 1);
  JZ_CHECK(std::abs(one[std::size_t(k)] - (0.25 * 2.0 * -1.5) / 2.0) < 1e-15);
  // The lane-wise P2M (the last batch with massless padding lanes) equals
  // the one-point P2M, on the cluster's first 37 points about z0.
  {
    const std::size_t W = jz::kM2LLanes, N = M0.size(), n = 37;
    std::vector<double> lanes(N * W, 0.0), batched(N, 0.0), ref(N, 0.0);
    for (std::size_t i0 = 0; i0 < n; i0 += W)
    {
      std::vector<double> wl(3 * W, 0.0), ml(W, 0.0);
      for (std::size_t l = 0; l < W && i0 + l < n; ++l)
      {
        for (int d = 0; d < 3; ++d)
          wl[std::size_t(d) * W + l] = c.x[3 * (i0 + l) + std::size_t(d)] - z0[d];
        ml[l] = c.m[i0 + l];
        const double wi[3] = { wl[l], wl[W + l], wl[2 * W + l] };
        e.addPoint(wi, c.m[i0 + l], ref.data());
      }
      e.addPointsLanes(wl.data(), ml.data(), lanes.data());
    }
    e.addLanes(lanes.data(), batched.data());
    for (std::size_t k2 = 0; k2 < N; ++k2)
      JZ_CHECK_MSG(std::abs(batched[k2] - ref[k2]) <= 1e-12 * (1 + std::abs(ref[k2])),
        "P2M lanes coefficient " << k2 << ": " << batched[k2] << " vs " << ref[k2]);
  }
  // L2L: any polynomial local, evaluated at x about z0 and about z1.
  std::vector<double> L(M0.size()), L1(M0.size(), 0.0);
  for (std::size_t i = 0; i < L.size(); ++i)
    L[i] = std::sin(double(i) + 1.0);
  const double s[3] = { z1[0] - z0[0], z1[1] - z0[1], z1[2] - z0[2] };
  e.shiftLocal(L.data(), s, L1.data());
  const double x[3] = { 0.3, -0.7, 0.9 };
  const double y0[3] = { x[0] - z0[0], x[1] - z0[1], x[2] - z0[2] };
  const double y1[3] = { x[0] - z1[0], x[1] - z1[1], x[2] - z1[2] };
  jz::GravitySum a, b;
  e.evaluateLocal(L.data(), y0, true, a);
  e.evaluateLocal(L1.data(), y1, true, b);
  JZ_CHECK(std::abs(a.u - b.u) <= 1e-12 * (1 + std::abs(a.u)));
  for (int j = 0; j < 3; ++j)
    JZ_CHECK(std::abs(a.g[j] - b.g[j]) <= 1e-12 * (1 + std::abs(a.g[j])));
  // The lane-wise L2P equals the one-point L2P (x in lane 5).
  const std::size_t W = jz::kM2LLanes;
  std::vector<double> ys(3 * W, 0.25), us(W), gs(3 * W);
  for (int k = 0; k < 3; ++k)
    ys[k * W + 5] = y0[k];
  e.evaluateLocalLanes(L.data(), ys.data(), true, us.data(), gs.data());
  JZ_CHECK(std::abs(us[5] - a.u) <= 1e-12 * (1 + std::abs(a.u)));
  for (int j = 0; j < 3; ++j)
    JZ_CHECK(std::abs(gs[j * W + 5] - a.g[j]) <= 1e-12 * (1 + std::abs(a.g[j])));
}

int main(int argc, char** argv)
{
  return jztest::runAll(argc, argv);
}
