// The kNN leaf walk's scan of a source leaf (leafCandidates), its ranking
// of candidates (rankOrder) and the seed's cut (countAtMost, packAtMost),
// walk/LeafDistances.h, against scalar references: every length across
// several vector blocks (and past the blocks the vector ranking keeps at
// once), distinct values and ties, plain and periodic boxes. The scan must
// return exactly the offsets whose distance passes the filter, in order,
// with their distances, and write nothing past the leaf's length. Whichever
// version the processor selects (AVX-512, AVX2 or portable) is the one
// tested.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "TestHarness.h"
#include "walk/LeafDistances.h"

namespace
{
// The order of (d[i], i) by a comparison sort.
template <class T>
std::vector<jz::Index> referenceOrder(const std::vector<T>& d, jz::Index n)
{
  std::vector<jz::Index> order(n);
  std::iota(order.begin(), order.end(), jz::Index(0));
  std::sort(order.begin(), order.end(),
    [&](jz::Index a, jz::Index b) { return d[a] < d[b] || (d[a] == d[b] && a < b); });
  return order;
}

// n values drawn from `levels` distinct ones (ties) when levels > 0, else
// from a continuum; zeros included.
template <class T>
void rankAndCompare(jz::Index n, int levels, std::mt19937_64& rng)
{
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> level(0, std::max(levels - 1, 0));
  // Room up to the next multiple of 8 only, as rankOrder requires.
  std::vector<T> d((n + 7) / 8 * 8);
  for (jz::Index i = 0; i < n; ++i)
    d[i] = levels > 0 ? T(level(rng)) / T(levels) : T(u(rng) * u(rng));
  const std::vector<jz::Index> want = referenceOrder(d, n);
  std::vector<jz::Index> order(n + 1, n + 7);
  jz::rankOrder(d.data(), n, order.data());
  for (jz::Index r = 0; r < n; ++r)
    JZ_CHECK_MSG(order[r] == want[r], "n " << n << " levels " << levels << " rank " << r);
  JZ_CHECK_MSG(order[n] == n + 7, "n " << n << ": written past the order");
}

template <class T>
void checkRanking()
{
  std::mt19937_64 rng(7);
  for (jz::Index n = 0; n <= 140; ++n)
    for (int levels : { 0, 0, 2, 9, 1000 })
      rankAndCompare<T>(n, levels, rng);
  for (jz::Index n : { 255, 256, 257, 511, 512, 513, 700 })
    for (int levels : { 0, 50 })
      rankAndCompare<T>(n, levels, rng);
}

// Points around a query (some exactly on it, some beyond half a period when
// periodic) against filters that pass none, some and all of them.
template <class T>
void scanAndCompare(jz::Index n, bool periodic, std::mt19937_64& rng)
{
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const T periods[3] = { T(2.5), T(3), T(2.25) };
  const T p[3] = { T(0.25), T(-0.5), T(1) };
  // SortedPoints' padding: readable to the next multiple of 8.
  const jz::Index padded = (n + 7) / 8 * 8;
  std::vector<T> xs(padded, T(1e30)), ys(padded, T(1e30)), zs(padded, T(1e30));
  std::vector<double> exact(n);
  for (jz::Index i = 0; i < n; ++i)
  {
    const bool same = i % 11 == 3;
    xs[i] = same ? p[0] : T(p[0] + u(rng));
    ys[i] = same ? p[1] : T(p[1] + u(rng));
    zs[i] = same ? p[2] : T(p[2] + u(rng));
    const T c[3] = { xs[i], ys[i], zs[i] };
    exact[i] = 0;
    for (int k = 0; k < 3; ++k)
    {
      double s = std::fabs(double(c[k]) - double(p[k]));
      if (periodic)
        s = std::min(s, double(periods[k]) - s);
      exact[i] += s * s;
    }
  }
  for (double filter : { -1.0, 0.0, 0.05, 0.3, 1.0, 10.0 })
  {
    const T f = T(filter);
    std::vector<jz::Index> out(n + 16, n + 7);
    std::vector<T> outD2(n + 16, T(-2));
    const jz::Index m = jz::leafCandidates(xs.data(), ys.data(), zs.data(), n, p,
      periodic ? periods : nullptr, f, out.data(), outD2.data());
    JZ_CHECK_MSG(m <= n, "n " << n << " filter " << filter << " count " << m);
    if (m > n)
      continue;
    // The pre-filter's distance in T: within its margin of the exact one
    // (tighter for the few points off by the period's rounding).
    const double tolerance = periodic ? 1e-5 : 1e-6;
    jz::Index next = 0; // the next offset expected to pass
    for (jz::Index r = 0; r < m; ++r)
    {
      const jz::Index i = out[r];
      JZ_CHECK_MSG(i < n && (r == 0 || i > out[r - 1]), "n " << n << " rank " << r << " " << i);
      if (i >= n)
        break;
      JZ_CHECK_MSG(outD2[r] <= f, "n " << n << " offset " << i);
      JZ_CHECK_MSG(std::fabs(double(outD2[r]) - exact[i]) <= tolerance * (exact[i] + 1e-30),
        "n " << n << " offset " << i << " distance " << outD2[r] << " exact " << exact[i]);
      // None skipped that passes by a clear margin.
      for (; next < i; ++next)
        JZ_CHECK_MSG(exact[next] > filter * (1 - 2 * tolerance),
          "n " << n << " filter " << filter << " dropped " << next);
      next = i + 1;
    }
    for (; next < n; ++next)
      JZ_CHECK_MSG(exact[next] > filter * (1 - 2 * tolerance),
        "n " << n << " filter " << filter << " dropped " << next);
    for (jz::Index r = n; r < n + 16; ++r)
    {
      JZ_CHECK_MSG(outD2[r] == T(-2), "n " << n << ": distance written past the leaf");
      JZ_CHECK_MSG(out[r] == n + 7, "n " << n << ": offset written past the leaf");
    }
  }
}

template <class T>
void checkScan()
{
  std::mt19937_64 rng(11);
  for (jz::Index n = 0; n <= 100; ++n)
    for (bool periodic : { false, true })
      scanAndCompare<T>(n, periodic, rng);
}

// countAtMost and packAtMost (the seed's cut to a guessed K-th distance)
// against plain loops: bounds below, at and between the values (ties), with
// inputs and outputs padded by 8 only, as the contract says.
template <class T>
void checkCountAndPack()
{
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> level(0, 40);
  for (jz::Index n = 0; n <= 100; ++n)
  {
    std::vector<T> d(n + 8);
    std::vector<jz::Index> src(n + 8);
    for (jz::Index i = 0; i < n; ++i)
    {
      d[i] = T(level(rng)) / T(8);
      src[i] = 3 * i + 1;
    }
    for (int b = -1; b <= 41; b += 3)
    {
      const T bound = T(b) / T(8) + (b % 2 ? T(0) : T(1) / T(16));
      std::vector<T> wantD;
      std::vector<jz::Index> wantSrc;
      for (jz::Index i = 0; i < n; ++i)
        if (d[i] <= bound)
        {
          wantD.push_back(d[i]);
          wantSrc.push_back(src[i]);
        }
      JZ_CHECK_MSG(jz::countAtMost(d.data(), n, bound) == wantD.size(), "n " << n << " b " << b);
      std::vector<T> outD(n + 8, T(-1));
      std::vector<jz::Index> outSrc(n + 8, n + 7);
      const jz::Index m =
        jz::packAtMost(d.data(), src.data(), n, bound, outD.data(), outSrc.data());
      JZ_CHECK_MSG(m == wantD.size(), "n " << n << " b " << b << " packed " << m);
      for (jz::Index r = 0; r < std::min<jz::Index>(m, jz::Index(wantD.size())); ++r)
      {
        JZ_CHECK_MSG(outD[r] == wantD[r], "n " << n << " b " << b << " entry " << r);
        JZ_CHECK_MSG(outSrc[r] == wantSrc[r], "n " << n << " b " << b << " entry " << r);
      }
    }
  }
}
} // namespace

JZ_TEST_FLOAT_AND_DOUBLE(CountAndPackMatchTheReference, checkCountAndPack)
JZ_TEST_FLOAT_AND_DOUBLE(RankingMatchesTheReference, checkRanking)
JZ_TEST_FLOAT_AND_DOUBLE(ScanMatchesTheReference, checkScan)

JZ_TEST_MAIN()
