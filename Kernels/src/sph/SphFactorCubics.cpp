#include "SphFactorCubics.h"

#include <cstring>

#include "SphRowVectors.h"

#if JZ_SPH_WIDE_ROWS
#include <immintrin.h>
#endif

namespace jz
{
namespace
{
constexpr int R = SphFactorCubics::kRank;

using rows::Double8;
using rows::load;
static_assert(rows::kLanes == R, "an edge's factors are one vector");

// The factors at the n + 1 edges (lo + (first + i) step - x) inv of an axis, each by
// its interval's cubic (sign folded in; exactly u(1) beyond the support, so
// that a particle's differences sum to the whole kernel), then their
// differences across the n cells.
JZ_SPH_CLONES void factorDifferences(const double* cubic, const double* end, int intervals,
  double lo, int first, double step, double x, double inv, int n, double* diff)
{
  Double8 previous, top, value;
  load(end, top);
  for (int i = 0; i <= n; ++i)
  {
    const double a = (lo + (first + i) * step - x) * inv;
    // The ends of a kernel's span lie almost always beyond its support: the
    // value there needs no cubic (the same bits as the select below).
    if ((i == 0 || i == n) && !(std::fabs(a) < 1.0))
      value = (a < 0 ? -1.0 : 1.0) * top;
    else
      rows::factorsAt(cubic, top, intervals, a, value);
    if (i > 0)
    {
      const Double8 d = value - previous;
      std::memcpy(diff + std::size_t(i - 1) * R, &d, sizeof d);
    }
    previous = value;
  }
}

#if JZ_SPH_WIDE_ROWS
// (GCC 12 warns of the "undefined" registers inside its own intrinsics.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Edges per axis that factorDifferencesAvx512 takes (wider kernels go one
// axis at a time: their contraction dwarfs the edges).
constexpr int kBatchedEdges = 32;

// factorDifferences for up to 3 axes of a kernel, in AVX-512 intrinsics:
// first every edge's interval, fraction and sign, 8 edges a vector
// (tableNode's arithmetic lane by lane, and the edge by the same fused
// multiply-add: the same bits), then each edge's cubic, or u(1) beyond the
// support, as rows::factorsAt.
__attribute__((target("arch=x86-64-v4"))) void factorDifferencesAvx512(const double* cubic,
  const double* end, int intervals, const SphFactorCubics::Span* spans, int count, double inv)
{
  alignas(kCacheLine) double fraction[3][kBatchedEdges], sign[3][kBatchedEdges];
  alignas(kCacheLine) long long offset[3][kBatchedEdges];
  unsigned inside[3][kBatchedEdges / 8];
  const __m512d lanes = _mm512_setr_pd(0, 1, 2, 3, 4, 5, 6, 7), one = _mm512_set1_pd(1.0),
                vinv = _mm512_set1_pd(inv), scale = _mm512_set1_pd(double(intervals)),
                last = _mm512_set1_pd(double(intervals - 1));
  const __m512d magnitude = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
  for (int d = 0; d < count; ++d)
  {
    const SphFactorCubics::Span& s = spans[d];
    const __m512d lo = _mm512_set1_pd(s.lo), step = _mm512_set1_pd(s.step), x = _mm512_set1_pd(s.x);
    for (int i0 = 0; i0 <= s.n; i0 += 8)
    {
      const __m512d edge = _mm512_add_pd(_mm512_set1_pd(double(s.first + i0)), lanes);
      const __m512d a = _mm512_mul_pd(_mm512_sub_pd(_mm512_fmadd_pd(edge, step, lo), x), vinv);
      const __m512d away = _mm512_and_pd(a, magnitude);
      const __mmask8 in = _mm512_cmp_pd_mask(away, one, _CMP_LT_OQ);
      const __m512d t = _mm512_mul_pd(_mm512_mask_blend_pd(in, one, away), scale);
      const __m512d down = _mm512_roundscale_pd(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      const __m512d node =
        _mm512_mask_blend_pd(_mm512_cmp_pd_mask(down, last, _CMP_LT_OQ), last, down);
      _mm512_store_pd(fraction[d] + i0, _mm512_sub_pd(t, node));
      _mm512_store_pd(sign[d] + i0,
        _mm512_mask_blend_pd(
          _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_LT_OQ), one, _mm512_set1_pd(-1.0)));
      _mm512_store_si512(offset[d] + i0, _mm512_slli_epi64(_mm512_cvttpd_epi64(node), 5));
      inside[d][i0 / 8] = in;
    }
  }
  static_assert(4 * R == 32, "an interval's cubic is 32 values (offset: node << 5)");
  const __m512d beyond = _mm512_loadu_pd(end);
  for (int d = 0; d < count; ++d)
  {
    const SphFactorCubics::Span& s = spans[d];
    __m512d previous = _mm512_setzero_pd();
    for (int i = 0; i <= s.n; ++i)
    {
      const double* c = cubic + offset[d][i];
      const __m512d f = _mm512_set1_pd(fraction[d][i]);
      __m512d v = _mm512_fmadd_pd(_mm512_load_pd(c + 3 * R), f, _mm512_load_pd(c + 2 * R));
      v = _mm512_fmadd_pd(v, f, _mm512_load_pd(c + R));
      v = _mm512_fmadd_pd(v, f, _mm512_load_pd(c));
      const __mmask8 in = (inside[d][i / 8] >> (i % 8)) & 1 ? 0xff : 0;
      const __m512d value =
        _mm512_mul_pd(_mm512_set1_pd(sign[d][i]), _mm512_mask_blend_pd(in, beyond, v));
      if (i > 0)
        _mm512_storeu_pd(s.diff + std::size_t(i - 1) * R, _mm512_sub_pd(value, previous));
      previous = value;
    }
  }
}

// factorDifferences in AVX2 intrinsics, an edge's factors as two halves:
// the same arithmetic, so the same bits (the ends' u(1) from factorsAt's
// select, the clamped interval's cubic read and discarded).
__attribute__((target("arch=x86-64-v3"))) void factorDifferencesAvx2(const double* cubic,
  const double* end, int intervals, double lo, int first, double step, double x, double inv, int n,
  double* diff)
{
  constexpr int H = rows::kHalfLanes;
  const __m256d top[2] = { _mm256_loadu_pd(end), _mm256_loadu_pd(end + H) };
  __m256d previous[2] = { _mm256_setzero_pd(), _mm256_setzero_pd() }, value[2];
  for (int i = 0; i <= n; ++i)
  {
    const double a = (lo + (first + i) * step - x) * inv;
    rows::factorsAtHalves(cubic, top, intervals, a, value);
    for (int half = 0; half < 2; ++half)
    {
      if (i > 0)
        _mm256_storeu_pd(
          diff + std::size_t(i - 1) * R + half * H, _mm256_sub_pd(value[half], previous[half]));
      previous[half] = value[half];
    }
  }
}
#pragma GCC diagnostic pop
#endif
} // namespace

SphFactorCubics::SphFactorCubics(const std::vector<double>& u, int intervals)
  : intervals_(intervals)
{
  const int n = intervals, s = n + 3;
  // The padded nodes -1 .. n + 1 (node -1 is -node 1: the factors are odd),
  // then each interval's cubic through its 4 nodes (lagrangeWeights' in powers of f).
  std::vector<double> padded(std::size_t(s) * R);
  for (int node = 0; node < s; ++node)
  {
    double sign = 1;
    const int source = paddedSource(node - 1, n, sign);
    for (int p = 0; p < R; ++p)
      padded[std::size_t(node) * R + std::size_t(p)] =
        sign * u[std::size_t(source) * R + std::size_t(p)];
  }
  cubic_.assign(std::size_t(n) * 4 * R, 0.0);
  for (int node = 0; node < n; ++node)
    for (int p = 0; p < R; ++p)
    {
      auto f = [&](int k) { return padded[std::size_t(node + k) * R + std::size_t(p)]; };
      double* c = cubic_.data() + std::size_t(node) * 4 * R + std::size_t(p);
      c[0] = f(1);
      c[R] = -f(0) / 3 - f(1) / 2 + f(2) - f(3) / 6;
      c[2 * R] = f(0) / 2 - f(1) + f(2) / 2;
      c[3 * R] = -f(0) / 6 + f(1) / 2 - f(2) / 2 + f(3) / 6;
    }
  for (int p = 0; p < R; ++p)
    end_[p] = u[std::size_t(n) * R + std::size_t(p)];
}

void SphFactorCubics::cellDifferences(
  double lo, int first, double step, double x, double h, int n, double* diff) const
{
  factorDifferences(cubic_.data(), end_, intervals_, lo, first, step, x, 1.0 / h, n, diff);
}

void SphFactorCubics::cellDifferences(const Span* spans, int count, double h) const
{
  const double inv = 1.0 / h;
#if JZ_SPH_WIDE_ROWS
  const SphRowCode code = sphRowCode();
  bool batched = count <= 3 && code == SphRowCode::Avx512;
  for (int d = 0; d < count; ++d)
    batched = batched && spans[d].n < kBatchedEdges;
  if (batched)
    return factorDifferencesAvx512(cubic_.data(), end_, intervals_, spans, count, inv);
  if (code == SphRowCode::Avx2)
  {
    for (int d = 0; d < count; ++d)
      factorDifferencesAvx2(cubic_.data(), end_, intervals_, spans[d].lo, spans[d].first,
        spans[d].step, spans[d].x, inv, spans[d].n, spans[d].diff);
    return;
  }
#endif
  for (int d = 0; d < count; ++d)
    factorDifferences(cubic_.data(), end_, intervals_, spans[d].lo, spans[d].first, spans[d].step,
      spans[d].x, inv, spans[d].n, spans[d].diff);
}
} // namespace jz
