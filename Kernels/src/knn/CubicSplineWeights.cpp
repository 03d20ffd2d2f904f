// Without branches, four at a time with AVX where the processor has it, then
// two at a time (SSE2), then one: the operations of cubicSplineNorm(h) *
// cubicSplineShape(q) in their order, correctly rounded and not contracted
// (this build forbids contraction), so the same bits as the scalar function.
#include "knn/CubicSplineWeights.h"

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "jz/DensityKernels.h"

namespace jz
{
namespace
{
#if defined(__x86_64__)
// The first multiple of four of the n weights; returns how many it did.
__attribute__((target("avx"))) int cubicSplineWeightsAvx(
  const double* d2, int n, double h, double* w)
{
  const __m256d vh = _mm256_set1_pd(h), vnorm = _mm256_set1_pd(cubicSplineNorm(h));
  const __m256d one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
  const __m256d six = _mm256_set1_pd(6.0), half = _mm256_set1_pd(0.5);
  int j = 0;
  for (; j + 4 <= n; j += 4)
  {
    const __m256d q = _mm256_div_pd(_mm256_sqrt_pd(_mm256_loadu_pd(d2 + j)), vh);
    const __m256d q2 = _mm256_mul_pd(_mm256_mul_pd(six, q), q); // 6 q q
    const __m256d inner = _mm256_add_pd(_mm256_sub_pd(one, q2), _mm256_mul_pd(q2, q));
    const __m256d u = _mm256_sub_pd(one, q);
    const __m256d outer = _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(two, u), u), u);
    const __m256d near = _mm256_cmp_pd(q, half, _CMP_LE_OQ);
    const __m256d within = _mm256_cmp_pd(q, one, _CMP_LT_OQ);
    const __m256d shape = _mm256_or_pd(
      _mm256_and_pd(near, inner), _mm256_andnot_pd(near, _mm256_and_pd(within, outer)));
    _mm256_storeu_pd(w + j, _mm256_mul_pd(vnorm, shape));
  }
  return j;
}
#endif
} // namespace

void cubicSplineWeights(const double* d2, int n, double h, double* w)
{
  int j = 0;
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx)
    j = cubicSplineWeightsAvx(d2, n, h, w);
#endif
#if defined(__SSE2__)
  const __m128d vh = _mm_set1_pd(h), vnorm = _mm_set1_pd(cubicSplineNorm(h));
  const __m128d one = _mm_set1_pd(1.0), two = _mm_set1_pd(2.0);
  const __m128d six = _mm_set1_pd(6.0), half = _mm_set1_pd(0.5);
  for (; j + 2 <= n; j += 2)
  {
    const __m128d q = _mm_div_pd(_mm_sqrt_pd(_mm_loadu_pd(d2 + j)), vh);
    const __m128d q2 = _mm_mul_pd(_mm_mul_pd(six, q), q); // 6 q q
    const __m128d inner = _mm_add_pd(_mm_sub_pd(one, q2), _mm_mul_pd(q2, q));
    const __m128d u = _mm_sub_pd(one, q);
    const __m128d outer = _mm_mul_pd(_mm_mul_pd(_mm_mul_pd(two, u), u), u);
    const __m128d near = _mm_cmple_pd(q, half), within = _mm_cmplt_pd(q, one);
    const __m128d shape =
      _mm_or_pd(_mm_and_pd(near, inner), _mm_andnot_pd(near, _mm_and_pd(within, outer)));
    _mm_storeu_pd(w + j, _mm_mul_pd(vnorm, shape));
  }
#endif
  for (; j < n; ++j)
    w[j] = cubicSplineW(std::sqrt(d2[j]), h);
}
} // namespace jz
