// The pre-filter loops of LeafDistances.h: portable scalar loops (the
// compiler vectorizes them for the target, e.g. NEON on aarch64), and on
// x86-64 AVX2 and AVX-512 versions chosen at run time. Every version is
// conservative (FilterMargin); exact double distances decide, so results
// are identical.
#include "walk/LeafDistances.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#define JZ_X86_AVX2 1
#include <immintrin.h>
// One binary for every x86-64: AVX2 clones picked by the loader.
#define JZ_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define JZ_X86_AVX2 0
#define JZ_TARGET_CLONES
#endif

namespace jz
{
namespace
{
template <class T>
inline T nearestImage(T d, T period)
{
  d = d < T(0) ? -d : d;
  const T other = period - d;
  return other < d ? other : d;
}

template <class T>
inline T gap(T x, T lo, T hi)
{
  const T below = lo - x, above = x - hi;
  const T g = below > above ? below : above;
  return g > T(0) ? g : T(0);
}

// Smallest separation from x to [lo, hi] over the images x, x - L, x + L.
template <class T>
inline T periodicGap(T x, T lo, T hi, T period)
{
  T g = gap(x, lo, hi);
  const T g1 = gap(x - period, lo, hi), g2 = gap(x + period, lo, hi);
  g = g1 < g ? g1 : g;
  return g2 < g ? g2 : g;
}

// outD2 (nullable) receives the survivors' distances.
template <class T, bool Periodic>
Index candidatesScalar(const T* xs, const T* ys, const T* zs, Index n, const T* p, const T* periods,
  T filter2, Index* out, T* outD2)
{
  Index count = 0;
  for (Index i = 0; i < n; ++i)
  {
    T dx = xs[i] - p[0], dy = ys[i] - p[1], dz = zs[i] - p[2];
    if (Periodic)
    {
      dx = nearestImage(dx, periods[0]);
      dy = nearestImage(dy, periods[1]);
      dz = nearestImage(dz, periods[2]);
    }
    const T d2 = dx * dx + dy * dy + dz * dz;
    out[count] = i;
    if (outD2)
      outD2[count] = d2;
    count += d2 <= filter2 ? 1 : 0;
  }
  return count;
}

template <class T, bool Periodic>
Index nearBox(const T* xs, const T* ys, const T* zs, Index n, const T* lo, const T* hi,
  const T* periods, const T* filter2, Index* out)
{
  constexpr Index kBlock = 64;
  T d2[kBlock];
  Index count = 0;
  for (Index b = 0; b < n; b += kBlock)
  {
    const Index m = n - b < kBlock ? n - b : kBlock;
#pragma omp simd
    for (Index j = 0; j < m; ++j)
    {
      const Index i = b + j;
      T gx, gy, gz;
      if (Periodic)
      {
        gx = periods[0] > T(0) ? periodicGap(xs[i], lo[0], hi[0], periods[0])
                               : gap(xs[i], lo[0], hi[0]);
        gy = periods[1] > T(0) ? periodicGap(ys[i], lo[1], hi[1], periods[1])
                               : gap(ys[i], lo[1], hi[1]);
        gz = periods[2] > T(0) ? periodicGap(zs[i], lo[2], hi[2], periods[2])
                               : gap(zs[i], lo[2], hi[2]);
      }
      else
      {
        gx = gap(xs[i], lo[0], hi[0]);
        gy = gap(ys[i], lo[1], hi[1]);
        gz = gap(zs[i], lo[2], hi[2]);
      }
      d2[j] = gx * gx + gy * gy + gz * gz;
    }
    for (Index j = 0; j < m; ++j)
    {
      out[count] = b + j;
      count += d2[j] <= filter2[b + j] ? 1 : 0;
    }
  }
  return count;
}

#if JZ_X86_AVX2
#define JZ_AVX2_FMA __attribute__((target("avx2,fma")))

template <class T>
struct AvxRegister
{
  using type = __m256;
};
template <>
struct AvxRegister<double>
{
  using type = __m256d;
};

// AVX2 on 8 floats or 4 doubles: the operations of the loops below.
template <class T>
struct Avx
{
  static constexpr bool kFloat = std::is_same<T, float>::value;
  using Reg = typename AvxRegister<T>::type;
  static constexpr int kLanes = int(32 / sizeof(T));

  // The vector operators, as _mm256_{add,sub,mul}_{ps,pd} define them.
  JZ_AVX2_FMA static Reg add(Reg a, Reg b) { return a + b; }
  JZ_AVX2_FMA static Reg sub(Reg a, Reg b) { return a - b; }
  JZ_AVX2_FMA static Reg mul(Reg a, Reg b) { return a * b; }

  JZ_AVX2_FMA static Reg load(const T* p)
  {
    if constexpr (kFloat)
      return _mm256_loadu_ps(p);
    else
      return _mm256_loadu_pd(p);
  }
  JZ_AVX2_FMA static void store(T* p, Reg a)
  {
    if constexpr (kFloat)
      _mm256_store_ps(p, a);
    else
      _mm256_store_pd(p, a);
  }
  JZ_AVX2_FMA static Reg set1(T x)
  {
    if constexpr (kFloat)
      return _mm256_set1_ps(x);
    else
      return _mm256_set1_pd(x);
  }
  JZ_AVX2_FMA static Reg max(Reg a, Reg b)
  {
    if constexpr (kFloat)
      return _mm256_max_ps(a, b);
    else
      return _mm256_max_pd(a, b);
  }
  JZ_AVX2_FMA static Reg min(Reg a, Reg b)
  {
    if constexpr (kFloat)
      return _mm256_min_ps(a, b);
    else
      return _mm256_min_pd(a, b);
  }
  JZ_AVX2_FMA static Reg abs(Reg a)
  {
    if constexpr (kFloat)
      return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
    else
      return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a);
  }
  JZ_AVX2_FMA static Reg fmadd(Reg a, Reg b, Reg c)
  {
    if constexpr (kFloat)
      return _mm256_fmadd_ps(a, b, c);
    else
      return _mm256_fmadd_pd(a, b, c);
  }
  // Bit i: lane i of a <= b.
  JZ_AVX2_FMA static unsigned le(Reg a, Reg b)
  {
    if constexpr (kFloat)
      return unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LE_OQ)));
    else
      return unsigned(_mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_LE_OQ)));
  }
};

// AVX2: 8 floats or 4 doubles per step, survivors taken from the comparison
// mask bit by bit.
template <class T>
__attribute__((target("avx2,fma,bmi"))) Index candidatesAvx2(const T* xs, const T* ys, const T* zs,
  Index n, const T* p, const T* periods, T filter2, Index* out, T* outD2)
{
  alignas(32) T lanes[Avx<T>::kLanes];
  using A = Avx<T>;
  const typename A::Reg px = A::set1(p[0]), py = A::set1(p[1]), pz = A::set1(p[2]);
  const typename A::Reg f = A::set1(filter2);
  const bool periodic = periods != nullptr;
  const typename A::Reg lx = A::set1(periodic ? periods[0] : T(0));
  const typename A::Reg ly = A::set1(periodic ? periods[1] : T(0));
  const typename A::Reg lz = A::set1(periodic ? periods[2] : T(0));
  Index count = 0;
  for (Index i = 0; i < n; i += A::kLanes)
  {
    typename A::Reg dx = A::sub(A::load(xs + i), px);
    typename A::Reg dy = A::sub(A::load(ys + i), py);
    typename A::Reg dz = A::sub(A::load(zs + i), pz);
    if (periodic)
    {
      dx = A::abs(dx);
      dy = A::abs(dy);
      dz = A::abs(dz);
      dx = A::min(dx, A::sub(lx, dx));
      dy = A::min(dy, A::sub(ly, dy));
      dz = A::min(dz, A::sub(lz, dz));
    }
    const typename A::Reg d2 = A::fmadd(dz, dz, A::fmadd(dy, dy, A::mul(dx, dx)));
    unsigned mask = A::le(d2, f);
    if (n - i < Index(A::kLanes))
      mask &= (1u << (n - i)) - 1; // lanes past the end are padding
    if (mask && outD2)
      A::store(lanes, d2);
    while (mask)
    {
      const int lane = __builtin_ctz(mask);
      if (outD2)
        outD2[count] = lanes[lane];
      out[count++] = i + Index(lane);
      mask &= mask - 1;
    }
  }
  return count;
}

// Per-dimension gap between x and [lo, hi] (nearest image when period > 0).
template <class T>
JZ_AVX2_FMA inline typename Avx<T>::Reg gapAvx(typename Avx<T>::Reg x, typename Avx<T>::Reg lo,
  typename Avx<T>::Reg hi, typename Avx<T>::Reg period, bool periodic)
{
  using A = Avx<T>;
  const typename A::Reg zero = A::set1(T(0));
  typename A::Reg g = A::max(zero, A::max(A::sub(lo, x), A::sub(x, hi)));
  if (periodic)
  {
    const typename A::Reg xm = A::sub(x, period), xp = A::add(x, period);
    g = A::min(g, A::max(zero, A::max(A::sub(lo, xm), A::sub(xm, hi))));
    g = A::min(g, A::max(zero, A::max(A::sub(lo, xp), A::sub(xp, hi))));
  }
  return g;
}

template <class T>
__attribute__((target("avx2,fma,bmi"))) Index nearBoxAvx2(const T* xs, const T* ys, const T* zs,
  Index n, const T* lo, const T* hi, const T* periods, const T* filter2, Index* out)
{
  using A = Avx<T>;
  const bool periodic = periods != nullptr;
  const typename A::Reg lox = A::set1(lo[0]), loy = A::set1(lo[1]), loz = A::set1(lo[2]);
  const typename A::Reg hix = A::set1(hi[0]), hiy = A::set1(hi[1]), hiz = A::set1(hi[2]);
  // A zero period disables wrapping in that dimension: its shifted images
  // coincide with the point.
  const typename A::Reg lx = A::set1(periodic ? periods[0] : T(0));
  const typename A::Reg ly = A::set1(periodic ? periods[1] : T(0));
  const typename A::Reg lz = A::set1(periodic ? periods[2] : T(0));
  Index count = 0;
  Index i = 0;
  for (; i < n; i += A::kLanes)
  {
    const typename A::Reg gx = gapAvx<T>(A::load(xs + i), lox, hix, lx, periodic);
    const typename A::Reg gy = gapAvx<T>(A::load(ys + i), loy, hiy, ly, periodic);
    const typename A::Reg gz = gapAvx<T>(A::load(zs + i), loz, hiz, lz, periodic);
    const typename A::Reg d2 = A::add(A::add(A::mul(gx, gx), A::mul(gy, gy)), A::mul(gz, gz));
    unsigned mask = A::le(d2, A::load(filter2 + i));
    if (n - i < Index(A::kLanes))
      mask &= (1u << (n - i)) - 1; // padding lanes
    while (mask)
    {
      out[count++] = i + Index(__builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
  return count;
}

bool haveAvx2()
{
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("popcnt");
  return yes;
}

// AVX-512 (F, VL, BW, DQ) on top of AVX2: 16 floats per step and lane masks.
bool haveAvx512()
{
  static const bool yes = haveAvx2() && __builtin_cpu_supports("avx512f") &&
    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
    __builtin_cpu_supports("avx512dq");
  return yes;
}

#define JZ_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,popcnt")))

// _mm512_min_ps (a < b ? a : b, as _mm256_min_ps), spelled without the
// undefined pass-through register that GCC warns about.
JZ_AVX512 inline __m512 min512(__m512 a, __m512 b)
{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a);
}

// candidatesAvx2 on 16 floats per step: the survivors of a step are
// compressed to the front of a register and stored at once under a mask,
// instead of one by one from the comparison mask (a loop whose exit is
// mispredicted at every step). Loads and stores are masked, so nothing is
// read past the padding of 8 or written past the survivors.
JZ_AVX512 Index candidatesAvx512(const float* xs, const float* ys, const float* zs, Index n,
  const float* p, const float* periods, float filter2, Index* out, float* outD2)
{
  const __m512 px = _mm512_set1_ps(p[0]), py = _mm512_set1_ps(p[1]), pz = _mm512_set1_ps(p[2]);
  const __m512 f = _mm512_set1_ps(filter2);
  const bool periodic = periods != nullptr;
  const __m512 lx = _mm512_set1_ps(periodic ? periods[0] : 0.0f);
  const __m512 ly = _mm512_set1_ps(periodic ? periods[1] : 0.0f);
  const __m512 lz = _mm512_set1_ps(periodic ? periods[2] : 0.0f);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  Index count = 0;
  for (Index i = 0; i < n; i += 16)
  {
    const __mmask16 lanes = n - i < 16 ? __mmask16((1u << (n - i)) - 1) : __mmask16(0xffff);
    __m512 dx = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, xs + i), px);
    __m512 dy = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, ys + i), py);
    __m512 dz = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, zs + i), pz);
    if (periodic)
    {
      dx = _mm512_abs_ps(dx);
      dy = _mm512_abs_ps(dy);
      dz = _mm512_abs_ps(dz);
      dx = min512(dx, _mm512_sub_ps(lx, dx));
      dy = min512(dy, _mm512_sub_ps(ly, dy));
      dz = min512(dz, _mm512_sub_ps(lz, dz));
    }
    // The same operations, in the same order, as candidatesAvx2.
    const __m512 d2 = _mm512_fmadd_ps(dz, dz, _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dx, dx)));
    const __mmask16 pass = _mm512_mask_cmp_ps_mask(lanes, d2, f, _CMP_LE_OQ);
    const unsigned found = unsigned(__builtin_popcount(pass));
    const __mmask16 head = __mmask16((1u << found) - 1);
    const __m512i index = _mm512_add_epi32(lane, _mm512_set1_epi32(int(i)));
    _mm512_mask_storeu_epi32(out + count, head, _mm512_maskz_compress_epi32(pass, index));
    if (outD2)
      _mm512_mask_storeu_ps(outD2 + count, head, _mm512_maskz_compress_ps(pass, d2));
    count += Index(found);
  }
  return count;
}
#endif
} // namespace

namespace
{
template <class T>
Index candidates(const T* xs, const T* ys, const T* zs, Index n, const T* p, const T* periods,
  T filter2, Index* out, T* outD2)
{
#if JZ_X86_AVX2
  if constexpr (std::is_same<T, float>::value)
    if (haveAvx512())
      return candidatesAvx512(xs, ys, zs, n, p, periods, filter2, out, outD2);
  if (haveAvx2())
    return candidatesAvx2<T>(xs, ys, zs, n, p, periods, filter2, out, outD2);
#endif
  return periods ? candidatesScalar<T, true>(xs, ys, zs, n, p, periods, filter2, out, outD2)
                 : candidatesScalar<T, false>(xs, ys, zs, n, p, periods, filter2, out, outD2);
}

template <class T>
Index queriesNear(const T* xs, const T* ys, const T* zs, Index n, const T* lo, const T* hi,
  const T* periods, const T* filter2, Index* active)
{
#if JZ_X86_AVX2
  if (haveAvx2())
    return nearBoxAvx2<T>(xs, ys, zs, n, lo, hi, periods, filter2, active);
#endif
  return periods ? nearBox<T, true>(xs, ys, zs, n, lo, hi, periods, filter2, active)
                 : nearBox<T, false>(xs, ys, zs, n, lo, hi, periods, filter2, active);
}
} // namespace

Index leafCandidates(const float* xs, const float* ys, const float* zs, Index n, const float* p,
  const float* periods, float filter2, Index* out, float* outD2)
{
  return candidates(xs, ys, zs, n, p, periods, filter2, out, outD2);
}

Index leafCandidates(const double* xs, const double* ys, const double* zs, Index n, const double* p,
  const double* periods, double filter2, Index* out, double* outD2)
{
  return candidates(xs, ys, zs, n, p, periods, filter2, out, outD2);
}

Index queriesNearBox(const float* xs, const float* ys, const float* zs, Index n, const float* lo,
  const float* hi, const float* periods, const float* filter2, Index* active)
{
  return queriesNear(xs, ys, zs, n, lo, hi, periods, filter2, active);
}

Index queriesNearBox(const double* xs, const double* ys, const double* zs, Index n,
  const double* lo, const double* hi, const double* periods, const double* filter2, Index* active)
{
  return queriesNear(xs, ys, zs, n, lo, hi, periods, filter2, active);
}
} // namespace jz

namespace jz
{
namespace
{
template <class T, bool Periodic>
inline void distancesAll(
  const T* xs, const T* ys, const T* zs, Index n, const T* p, const T* periods, T* out)
{
  const T px = p[0], py = p[1], pz = p[2];
#pragma omp simd
  for (Index i = 0; i < n; ++i)
  {
    T dx = xs[i] - px, dy = ys[i] - py, dz = zs[i] - pz;
    if (Periodic)
    {
      dx = nearestImage(dx, periods[0]);
      dy = nearestImage(dy, periods[1]);
      dz = nearestImage(dz, periods[2]);
    }
    out[i] = dx * dx + dy * dy + dz * dz;
  }
}

// Inlined into each clone of leafDistances2, so compiled for its target.
template <class T>
__attribute__((always_inline)) inline void distances(
  const T* xs, const T* ys, const T* zs, Index n, const T* p, const T* periods, T* out)
{
  if (periods)
    distancesAll<T, true>(xs, ys, zs, n, p, periods, out);
  else
    distancesAll<T, false>(xs, ys, zs, n, p, periods, out);
}
} // namespace

JZ_TARGET_CLONES void leafDistances2(const float* xs, const float* ys, const float* zs, Index n,
  const float* p, const float* periods, float* out)
{
  distances(xs, ys, zs, n, p, periods, out);
}

JZ_TARGET_CLONES void leafDistances2(const double* xs, const double* ys, const double* zs, Index n,
  const double* p, const double* periods, double* out)
{
  distances(xs, ys, zs, n, p, periods, out);
}

namespace
{
template <class T>
Index countScalar(const T* d, Index n, T bound)
{
  Index within = 0;
  for (Index i = 0; i < n; ++i)
    within += d[i] <= bound ? 1 : 0;
  return within;
}

template <class T>
Index packScalar(const T* d, const Index* src, Index n, T bound, T* outD, Index* outSrc)
{
  Index m = 0;
  for (Index i = 0; i < n; ++i)
  {
    outD[m] = d[i];
    outSrc[m] = src[i];
    m += d[i] <= bound ? 1 : 0;
  }
  return m;
}

#if JZ_X86_AVX2
// For each 8-bit lane mask, the lanes it selects moved to the front: lane
// numbers of 3 bits, the r-th selected at bits 3r.
struct PackPermutations
{
  std::uint32_t lanes[256];
  constexpr PackPermutations()
    : lanes()
  {
    for (unsigned mask = 0; mask < 256; ++mask)
    {
      std::uint32_t packed = 0;
      for (unsigned lane = 0, r = 0; lane < 8; ++lane)
        if (mask >> lane & 1)
          packed |= lane << (3 * r++);
      lanes[mask] = packed;
    }
  }
};
constexpr PackPermutations kPack;

// Lanes i < n of d (padding lanes past n never count).
__attribute__((target("avx2,popcnt"))) inline unsigned maskAtMost(
  const float* d, Index i, Index n, __m256 bound)
{
  unsigned mask =
    unsigned(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(d + i), bound, _CMP_LE_OQ)));
  return n - i < 8 ? mask & ((1u << (n - i)) - 1) : mask;
}

__attribute__((target("avx2,popcnt"))) Index countAvx2(const float* d, Index n, float bound)
{
  const __m256 b = _mm256_set1_ps(bound);
  Index within = 0;
  for (Index i = 0; i < n; i += 8)
    within += Index(__builtin_popcount(maskAtMost(d, i, n, b)));
  return within;
}

__attribute__((target("avx2,popcnt"))) Index packAvx2(
  const float* d, const Index* src, Index n, float bound, float* outD, Index* outSrc)
{
  const __m256 b = _mm256_set1_ps(bound);
  const __m256i shifts = _mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
  const __m256i seven = _mm256_set1_epi32(7);
  Index m = 0;
  for (Index i = 0; i < n; i += 8)
  {
    const unsigned mask = maskAtMost(d, i, n, b);
    const __m256i perm =
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(kPack.lanes[mask])), shifts), seven);
    _mm256_storeu_ps(outD + m, _mm256_permutevar8x32_ps(_mm256_loadu_ps(d + i), perm));
    const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(outSrc + m), _mm256_permutevar8x32_epi32(s, perm));
    m += Index(__builtin_popcount(mask));
  }
  return m;
}

// Lanes i < n of d, 16 per step (masked: nothing read past n).
JZ_AVX512 inline __mmask16 maskAtMost16(const float* d, Index i, Index n, __m512 bound)
{
  const __mmask16 lanes = n - i < 16 ? __mmask16((1u << (n - i)) - 1) : __mmask16(0xffff);
  return _mm512_mask_cmp_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, d + i), bound, _CMP_LE_OQ);
}

JZ_AVX512 Index countAvx512(const float* d, Index n, float bound)
{
  const __m512 b = _mm512_set1_ps(bound);
  Index within = 0;
  for (Index i = 0; i < n; i += 16)
    within += Index(__builtin_popcount(maskAtMost16(d, i, n, b)));
  return within;
}

// packAvx2 with the selected lanes compressed to the front in one step (no
// permutation table) and stored under a mask.
JZ_AVX512 Index packAvx512(
  const float* d, const Index* src, Index n, float bound, float* outD, Index* outSrc)
{
  const __m512 b = _mm512_set1_ps(bound);
  Index m = 0;
  for (Index i = 0; i < n; i += 16)
  {
    const __mmask16 pass = maskAtMost16(d, i, n, b);
    const unsigned found = unsigned(__builtin_popcount(pass));
    const __mmask16 head = __mmask16((1u << found) - 1);
    _mm512_mask_storeu_ps(
      outD + m, head, _mm512_maskz_compress_ps(pass, _mm512_maskz_loadu_ps(pass, d + i)));
    _mm512_mask_storeu_epi32(
      outSrc + m, head, _mm512_maskz_compress_epi32(pass, _mm512_maskz_loadu_epi32(pass, src + i)));
    m += Index(found);
  }
  return m;
}
#endif
} // namespace

Index countAtMost(const float* d, Index n, float bound)
{
#if JZ_X86_AVX2
  if (haveAvx512())
    return countAvx512(d, n, bound);
  if (haveAvx2())
    return countAvx2(d, n, bound);
#endif
  return countScalar(d, n, bound);
}

Index countAtMost(const double* d, Index n, double bound)
{
  return countScalar(d, n, bound);
}

Index packAtMost(const float* d, const Index* src, Index n, float bound, float* outD, Index* outSrc)
{
#if JZ_X86_AVX2
  if (haveAvx512())
    return packAvx512(d, src, n, bound, outD, outSrc);
  if (haveAvx2())
    return packAvx2(d, src, n, bound, outD, outSrc);
#endif
  return packScalar(d, src, n, bound, outD, outSrc);
}

Index packAtMost(
  const double* d, const Index* src, Index n, double bound, double* outD, Index* outSrc)
{
  return packScalar(d, src, n, bound, outD, outSrc);
}

namespace
{
template <class T>
void insertScalar(T* d, Index* src, Index n, T d2, Index s)
{
  Index j = n;
  for (; j > 0 && d2 < d[j - 1]; --j)
  {
    d[j] = d[j - 1];
    src[j] = src[j - 1];
  }
  d[j] = d2;
  src[j] = s;
}

#if JZ_X86_AVX2
// The scalar insert's loop exit, at a position that varies from one insert
// to the next, is mispredicted about every time, and its shifts are
// serial. Here every block of 8 up to position n is rewritten whole and
// without a branch on the position: slot p takes d[p - 1] where that
// exceeds d2 (shifted up), else d2 where d[p] exceeds d2 (the insertion
// point: d[n] is +infinity), else keeps d[p]. The previous entry of each
// slot comes from rotating the block's own load (and the block below's
// last entry), so the loads hit exactly the blocks the last insert stored
// and are forwarded from them.
__attribute__((target("avx2"))) void insertAvx2(float* d, Index* src, Index n, float d2, Index s)
{
  const __m256 bound = _mm256_set1_ps(d2);
  const __m256i source = _mm256_set1_epi32(int(s));
  const __m256i rotate = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
  // Lane 0: the last entry of the block below (none below slot 0: never shifted).
  __m256 belowD = _mm256_setzero_ps();
  __m256i belowS = _mm256_setzero_si256();
  for (Index i = 0; i <= n; i += 8)
  {
    const __m256 cur = _mm256_load_ps(d + i);
    const __m256i curS = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256 rotD = _mm256_permutevar8x32_ps(cur, rotate);
    const __m256i rotS = _mm256_permutevar8x32_epi32(curS, rotate);
    const __m256 prev = _mm256_blend_ps(rotD, belowD, 1);
    const __m256i prevS = _mm256_blend_epi32(rotS, belowS, 1);
    const __m256 shift = _mm256_cmp_ps(prev, bound, _CMP_GT_OQ);
    const __m256 after = _mm256_cmp_ps(cur, bound, _CMP_GT_OQ);
    _mm256_store_ps(d + i, _mm256_blendv_ps(_mm256_blendv_ps(cur, bound, after), prev, shift));
    const __m256i kept = _mm256_blendv_epi8(curS, source, _mm256_castps_si256(after));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(src + i),
      _mm256_blendv_epi8(kept, prevS, _mm256_castps_si256(shift)));
    belowD = rotD;
    belowS = rotS;
  }
}
#endif

template <class T>
inline void rankAll(const T* d, Index n, Index* order)
{
  for (Index i = 0; i < n; ++i)
    order[i] = i; // a valid index in every slot, even were d to hold a NaN
  for (Index i = 0; i < n; ++i)
  {
    const T di = d[i];
    Index rank = 0;
    for (Index j = 0; j < i; ++j)
      rank += d[j] <= di ? 1 : 0;
    for (Index j = i + 1; j < n; ++j)
      rank += d[j] < di ? 1 : 0;
    order[rank] = i;
  }
}

#if JZ_X86_AVX2
// rankAll with 8 lanes of j per step and no tail: d is padded with +inf.
__attribute__((target("avx2"))) void rankAvx2(const float* d, Index n, Index* order)
{
  const Index numBlocks = (n + 7) / 8;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (Index i = 0; i < n; ++i)
  {
    const __m256 di = _mm256_set1_ps(d[i]);
    const Index own = i / 8;
    __m256i count = _mm256_setzero_si256();
    for (Index b = 0; b < own; ++b) // all before i: ties count
      count = _mm256_sub_epi32(
        count, _mm256_castps_si256(_mm256_cmp_ps(_mm256_loadu_ps(d + 8 * b), di, _CMP_LE_OQ)));
    const __m256 mine = _mm256_loadu_ps(d + 8 * own);
    const __m256i before = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(i - 8 * own)), lane);
    const __m256i less = _mm256_castps_si256(_mm256_cmp_ps(mine, di, _CMP_LT_OQ));
    const __m256i tie = _mm256_castps_si256(_mm256_cmp_ps(mine, di, _CMP_EQ_OQ));
    count = _mm256_sub_epi32(count, _mm256_or_si256(less, _mm256_and_si256(tie, before)));
    for (Index b = own + 1; b < numBlocks; ++b) // all after i
      count = _mm256_sub_epi32(
        count, _mm256_castps_si256(_mm256_cmp_ps(_mm256_loadu_ps(d + 8 * b), di, _CMP_LT_OQ)));
    __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(count), _mm256_extracti128_si256(count, 1));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4e));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xb1));
    order[_mm_cvtsi128_si32(sum)] = i;
  }
}

// order[less[i]] = i when the counts of smaller distances less[i < n] (the
// real lanes, not the padding) are the ranks, i.e. without ties: with ties
// (or a NaN) the tied ones count fewer than their ranks, so the counts sum
// to less than the ranks' n (n - 1) / 2; then false, order untouched.
inline bool orderFromDistinctCounts(const Index* less, Index n, Index* order)
{
  std::uint64_t total = 0;
  for (Index i = 0; i < n; ++i)
    total += less[i];
  if (total != std::uint64_t(n) * (n - 1) / 2)
    return false;
  for (Index i = 0; i < n; ++i)
    order[less[i]] = i;
  return true;
}

// rankAvx2 transposed, for the usual case without ties: the ranks of 8 i at
// a time, each j broadcast once, no horizontal sums; false with ties, order
// untouched (rankAvx2 breaks them).
__attribute__((target("avx2"))) bool rankDistinctAvx2(const float* d, Index n, Index* order)
{
  constexpr Index kMaxBlocks = 64;
  const Index numBlocks = (n + 7) / 8;
  if (numBlocks > kMaxBlocks)
    return false;
  alignas(32) Index ranks[8 * kMaxBlocks];
  for (Index b = 0; b < numBlocks; ++b)
  {
    const __m256 di = _mm256_loadu_ps(d + 8 * b);
    __m256i less0 = _mm256_setzero_si256(), less1 = _mm256_setzero_si256();
    Index j = 0;
    for (; j + 2 <= n; j += 2)
    {
      const __m256 d0 = _mm256_broadcast_ss(d + j), d1 = _mm256_broadcast_ss(d + j + 1);
      less0 = _mm256_sub_epi32(less0, _mm256_castps_si256(_mm256_cmp_ps(d0, di, _CMP_LT_OQ)));
      less1 = _mm256_sub_epi32(less1, _mm256_castps_si256(_mm256_cmp_ps(d1, di, _CMP_LT_OQ)));
    }
    if (j < n)
      less0 = _mm256_sub_epi32(
        less0, _mm256_castps_si256(_mm256_cmp_ps(_mm256_broadcast_ss(d + j), di, _CMP_LT_OQ)));
    const __m256i less = _mm256_add_epi32(less0, less1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ranks + 8 * b), less);
  }
  return orderFromDistinctCounts(ranks, n, order);
}

// rankDistinctAvx2 with 16 lanes of i per register and the counts of up to
// four blocks in registers: one pass over j per four blocks (one broadcast
// per j for all of them, and one loop exit to mispredict instead of one per
// block), each comparison a mask bit that a masked add counts. Blocks are
// loaded under a lane mask (d is padded to a multiple of 8 only); lanes
// past n are never summed.
template <int Blocks>
JZ_AVX512 void countLessAvx512(const float* d, Index n, Index first, Index* less)
{
  auto load = [&](int b) JZ_AVX512
  {
    const Index at = 16 * (first + Index(b)), left = n - at;
    const __mmask16 lanes = left < 16 ? __mmask16((1u << left) - 1) : __mmask16(0xffff);
    return b < Blocks ? _mm512_maskz_loadu_ps(lanes, d + at) : _mm512_setzero_ps();
  };
  // Named registers, not an array: GCC then keeps the masked adds in place.
  const __m512 d0 = load(0), d1 = load(1), d2 = load(2), d3 = load(3);
  const __m512i one = _mm512_set1_epi32(1);
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
  for (Index j = 0; j < n; ++j)
  {
    const __m512 dj = _mm512_set1_ps(d[j]);
    c0 = _mm512_mask_add_epi32(c0, _mm512_cmp_ps_mask(dj, d0, _CMP_LT_OQ), c0, one);
    if (Blocks > 1)
      c1 = _mm512_mask_add_epi32(c1, _mm512_cmp_ps_mask(dj, d1, _CMP_LT_OQ), c1, one);
    if (Blocks > 2)
      c2 = _mm512_mask_add_epi32(c2, _mm512_cmp_ps_mask(dj, d2, _CMP_LT_OQ), c2, one);
    if (Blocks > 3)
      c3 = _mm512_mask_add_epi32(c3, _mm512_cmp_ps_mask(dj, d3, _CMP_LT_OQ), c3, one);
  }
  less += 16 * first;
  _mm512_store_si512(less, c0);
  if (Blocks > 1)
    _mm512_store_si512(less + 16, c1);
  if (Blocks > 2)
    _mm512_store_si512(less + 32, c2);
  if (Blocks > 3)
    _mm512_store_si512(less + 48, c3);
}

JZ_AVX512 bool rankDistinctAvx512(const float* d, Index n, Index* order)
{
  constexpr Index kMaxBlocks = 32;
  const Index numBlocks = (n + 15) / 16;
  if (numBlocks > kMaxBlocks)
    return false;
  alignas(64) Index less[16 * kMaxBlocks];
  for (Index b = 0; b < numBlocks; b += 4)
    switch (std::min<Index>(numBlocks - b, 4))
    {
      case 1:
        countLessAvx512<1>(d, n, b, less);
        break;
      case 2:
        countLessAvx512<2>(d, n, b, less);
        break;
      case 3:
        countLessAvx512<3>(d, n, b, less);
        break;
      default:
        countLessAvx512<4>(d, n, b, less);
    }
  return orderFromDistinctCounts(less, n, order);
}
#endif
} // namespace

void insertSorted(float* d, Index* src, Index n, float d2, Index s)
{
#if JZ_X86_AVX2
  if (haveAvx2())
    return insertAvx2(d, src, n, d2, s);
#endif
  insertScalar(d, src, n, d2, s);
}

void insertSorted(double* d, Index* src, Index n, double d2, Index s)
{
  insertScalar(d, src, n, d2, s);
}

// Rankings longer than this sort (n log n) instead of counting (n^2): a
// query's seed holds about K candidates, and K may be near N.
constexpr Index kRankByCountingUpTo = 1024;

// rankOrder by a sort of the pairs (d[i], i), a NaN taken as +infinity.
template <class T>
void rankBySort(const T* d, Index n, Index* order)
{
  thread_local std::vector<std::pair<T, Index>> pairs;
  pairs.resize(n);
  for (Index i = 0; i < n; ++i)
    pairs[i] = { d[i] == d[i] ? d[i] : std::numeric_limits<T>::infinity(), i };
  std::sort(pairs.begin(), pairs.end());
  for (Index r = 0; r < n; ++r)
    order[r] = pairs[r].second;
}

void rankOrder(float* d, Index n, Index* order)
{
  if (n > kRankByCountingUpTo)
    return rankBySort(d, n, order);
  for (Index i = n; i < (n + 7) / 8 * 8; ++i)
    d[i] = std::numeric_limits<float>::infinity();
#if JZ_X86_AVX2
  if (haveAvx2())
  {
    if (haveAvx512() ? rankDistinctAvx512(d, n, order) : rankDistinctAvx2(d, n, order))
      return;
    for (Index i = 0; i < n; ++i)
      order[i] = i; // a valid index in every slot, even were d to hold a NaN
    return rankAvx2(d, n, order);
  }
#endif
  rankAll(d, n, order);
}

JZ_TARGET_CLONES void rankOrder(double* d, Index n, Index* order)
{
  if (n > kRankByCountingUpTo)
    return rankBySort(d, n, order);
  rankAll(d, n, order);
}
} // namespace jz
