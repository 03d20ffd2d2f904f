#include "SphKernelTables.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "SphRowVectors.h"

namespace jz
{
namespace
{
// Gauss-Legendre nodes and weights on [-1, 1].
constexpr double kGauss4X[4] = { -0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
  0.8611363115940526 };
constexpr double kGauss4W[4] = { 0.3478548451374538, 0.6521451548625461, 0.6521451548625461,
  0.3478548451374538 };
constexpr double kGauss8X[8] = { -0.9602898564975363, -0.7966664774136267, -0.5255324099163290,
  -0.1834346424956498, 0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
  0.9602898564975363 };
constexpr double kGauss8W[8] = { 0.1012285362903763, 0.2223810344533745, 0.3137066458778873,
  0.3626837833783620, 0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
  0.1012285362903763 };

template <class F>
double gauss8(F&& f, double a, double b)
{
  const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
  double s = 0;
  for (int i = 0; i < 8; ++i)
    s += kGauss8W[i] * f(mid + half * kGauss8X[i]);
  return s * half;
}

// Adaptive Gauss-Legendre: halves an interval until the two halves agree
// with the whole to `tol`.
template <class F>
double adaptive(F&& f, double a, double b, double whole, double tol, int depth)
{
  const double mid = 0.5 * (a + b);
  const double left = gauss8(f, a, mid), right = gauss8(f, mid, b);
  if (depth >= 40 || std::fabs(left + right - whole) <= tol)
    return left + right;
  return adaptive(f, a, mid, left, 0.5 * tol, depth + 1) +
    adaptive(f, mid, b, right, 0.5 * tol, depth + 1);
}

template <class F>
double integrate(F&& f, double a, double b, double tol = 1e-15)
{
  return b > a ? adaptive(f, a, b, gauss8(f, a, b), tol, 0) : 0.0;
}

// The column kernel tabulated finely in R, for the table's cell quadrature.
class ColumnSamples
{
public:
  explicit ColumnSamples(SphKernel kernel)
    : values_(kIntervals + 4)
  {
    // Each sample its own adaptive quadrature: the threads share them out.
#pragma omp parallel for schedule(dynamic, 256)
    for (int i = 0; i <= kIntervals; ++i)
      values_[std::size_t(i) + 1] = columnKernel(kernel, double(i) / kIntervals);
    values_[0] = values_[2]; // even in R
    values_[kIntervals + 2] = values_[kIntervals + 3] = 0;
  }
  double operator()(double R) const
  {
    if (R >= 1)
      return 0;
    const double t = R * kIntervals;
    const int i = int(t) < kIntervals ? int(t) : kIntervals - 1;
    double w[4];
    lagrangeWeights(t - i, w);
    return w[0] * values_[i] + w[1] * values_[i + 1] + w[2] * values_[i + 2] +
      w[3] * values_[i + 3];
  }

private:
  static constexpr int kIntervals = 8192;
  std::vector<double> values_;
};

} // namespace

namespace
{
// 2 * integral over 0 <= z <= sqrt(1 - R^2) of g(sqrt(R^2 + z^2)): a radial
// function of unit support projected along the line of sight, to the
// absolute tolerance tol.
template <class G>
double alongSight(double R, G&& g, double tol = 1e-15)
{
  if (R >= 1)
    return 0;
  const double top = std::sqrt(1 - R * R);
  auto f = [&](double z) { return g(std::sqrt(R * R + z * z)); };
  // Break where the integrand is not smooth: at z = R (the scale of its
  // curvature) and where q = 1/2 (the cubic spline's joint).
  double breaks[4] = { 0, std::fmin(R, top), top, top };
  if (R < 0.5)
    breaks[2] = std::fmax(breaks[1], std::sqrt(0.25 - R * R));
  double s = 0;
  for (int i = 0; i < 3; ++i)
    s += integrate(f, breaks[i], breaks[i + 1], tol);
  return 2 * s;
}
} // namespace

double columnKernel(SphKernel kernel, double R)
{
  return alongSight(R, [&](double r) { return sphKernelW(kernel, r, 1.0); });
}

SphCumulativeTable::SphCumulativeTable(SphKernel kernel, int dims)
{
  n_ = dims == 2 ? 128 : 64;
  stride_ = n_ + 3;
  const int n = n_;
  const double d = 1.0 / n;
  // Cell integrals by 4-point Gauss per axis, then prefix sums over nodes.
  const std::size_t nodes = std::size_t(n + 1);
  std::vector<double> cum(dims == 2 ? nodes * nodes : nodes * nodes * nodes, 0.0);
  if (dims == 2)
  {
    const ColumnSamples column(kernel);
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
      {
        double s = 0;
        for (int p = 0; p < 4; ++p)
          for (int q = 0; q < 4; ++q)
          {
            const double x = (i + 0.5 + 0.5 * kGauss4X[p]) * d;
            const double y = (j + 0.5 + 0.5 * kGauss4X[q]) * d;
            s += kGauss4W[p] * kGauss4W[q] * column(std::sqrt(x * x + y * y));
          }
        cum[(i + 1) * nodes + j + 1] = s * 0.25 * d * d;
      }
    for (std::size_t i = 1; i < nodes; ++i)
      for (std::size_t j = 1; j < nodes; ++j)
        cum[i * nodes + j] +=
          cum[(i - 1) * nodes + j] + cum[i * nodes + j - 1] - cum[(i - 1) * nodes + j - 1];
  }
  else
  {
    // A cell's integral does not change when its axes are permuted: each is
    // computed once, for i <= j <= k, and written to all its permutations
    // (the table is then exactly symmetric, as the volume's form assumes).
    auto cell = [&](int i, int j, int k) -> double& {
      return cum[((std::size_t(i) + 1) * nodes + std::size_t(j) + 1) * nodes + std::size_t(k) + 1];
    };
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j)
        for (int k = j; k < n; ++k)
        {
          double s = 0;
          const double x0 = i * d, y0 = j * d, z0 = k * d;
          if (x0 * x0 + y0 * y0 + z0 * z0 < 1)
            for (int p = 0; p < 4; ++p)
              for (int q = 0; q < 4; ++q)
                for (int r = 0; r < 4; ++r)
                {
                  const double x = x0 + (0.5 + 0.5 * kGauss4X[p]) * d;
                  const double y = y0 + (0.5 + 0.5 * kGauss4X[q]) * d;
                  const double z = z0 + (0.5 + 0.5 * kGauss4X[r]) * d;
                  s += kGauss4W[p] * kGauss4W[q] * kGauss4W[r] *
                    sphKernelW(kernel, std::sqrt(x * x + y * y + z * z), 1.0);
                }
          s *= 0.125 * d * d * d;
          cell(i, j, k) = cell(i, k, j) = cell(j, i, k) = cell(j, k, i) = cell(k, i, j) =
            cell(k, j, i) = s;
        }
    for (std::size_t i = 1; i < nodes; ++i)
      for (std::size_t j = 1; j < nodes; ++j)
        for (std::size_t k = 1; k < nodes; ++k)
        {
          auto at = [&](std::size_t a, std::size_t b, std::size_t c)
          { return cum[(a * nodes + b) * nodes + c]; };
          cum[(i * nodes + j) * nodes + k] += at(i - 1, j, k) + at(i, j - 1, k) +
            at(i, j, k - 1) - at(i - 1, j - 1, k) - at(i - 1, j, k - 1) - at(i, j - 1, k - 1) +
            at(i - 1, j - 1, k - 1);
        }
  }
  // The whole kernel (2^dims orthants of G(1, ..., 1)) is exactly 1.
  const double total = cum.back() * double(1 << dims);
  const double scale = 1.0 / total;
  const int s = stride_;
  if (dims == 2)
  {
    padded_.assign(std::size_t(s) * s, 0.0);
    for (int a = 0; a < s; ++a)
      for (int b = 0; b < s; ++b)
      {
        double sign = 1;
        const int i = paddedSource(a - 1, n, sign), j = paddedSource(b - 1, n, sign);
        padded_[std::size_t(a) * s + b] = sign * cum[i * nodes + j] * scale;
      }
    padded_[std::size_t(n + 1) * s + n + 1] = 0.25; // exactly
  }
  else
  {
    padded_.assign(std::size_t(s) * s * s, 0.0);
    for (int a = 0; a < s; ++a)
      for (int b = 0; b < s; ++b)
        for (int c = 0; c < s; ++c)
        {
          double sign = 1;
          const int i = paddedSource(a - 1, n, sign), j = paddedSource(b - 1, n, sign),
                    k = paddedSource(c - 1, n, sign);
          padded_[(std::size_t(a) * s + b) * s + c] =
            sign * cum[(i * nodes + j) * nodes + k] * scale;
        }
    padded_[(std::size_t(n + 1) * s + n + 1) * s + n + 1] = 0.125; // exactly
  }
}

const SphCumulativeTable& SphCumulativeTable::get(SphKernel kernel, int dims)
{
  const int d = dims == 3 ? 3 : 2;
  return builtOnce<SphCumulativeTable, 4>(
    2 * kernelIndex(kernel) + d - 2, [&] { return new SphCumulativeTable(kernel, d); });
}

namespace
{
// m W at the box's pixel centres added to image[j stride + i], row by row;
// with KeepValues W also into values[j n + i]. The shapes are 0 from q = 1 on.
template <bool KeepValues, class Shape>
JZ_SPH_CLONES void shapeBox(Shape shape, double norm, double invH, double m, const KernelBox& b,
  double* image, std::size_t stride, double* values)
{
  for (int j = 0; j < b.rows; ++j)
  {
    double* row = image + std::size_t(j) * stride;
    double* kept = KeepValues ? values + std::size_t(j) * b.n : nullptr;
    const double dyz = b.dyz[j];
#pragma omp simd
    for (std::size_t i = 0; i < b.n; ++i)
    {
      const double dx = b.lo + (double(b.first + int(i)) + 0.5) * b.step - b.x;
      const double w = norm * shape(std::sqrt(dx * dx + dyz) * invH);
      row[i] += m * w;
      if (KeepValues)
        kept[i] = w;
    }
  }
}

template <bool KeepValues>
void kernelBox(SphKernel kernel, double h, double m, const KernelBox& b, double* image,
  std::size_t stride, double* values)
{
  if (kernel == SphKernel::WendlandC2)
    shapeBox<KeepValues>([](double q) { return wendlandC2Shape(q); }, wendlandC2Norm(h), 1.0 / h,
      m, b, image, stride, values);
  else
    shapeBox<KeepValues>([](double q) { return cubicSplineShape(q); }, cubicSplineNorm(h),
      1.0 / h, m, b, image, stride, values);
}
} // namespace

void addKernelBox(SphKernel kernel, double h, double m, const KernelBox& box, double* image,
  std::size_t stride, double* values)
{
  if (values)
    kernelBox<true>(kernel, h, m, box, image, stride, values);
  else
    kernelBox<false>(kernel, h, m, box, image, stride, nullptr);
}

namespace
{
// A row's pixels as vectors of N lanes: 8 (AVX2, and AVX-512 clones of the
// same loop) or 16 (AVX-512: the 32 pieces' coefficients fill two
// registers, so one two-source permute picks them, and the loop issues half
// the instructions per pixel).
template <int N>
struct RowVectors
{
  typedef float Float __attribute__((vector_size(4 * N)));
  typedef int Int __attribute__((vector_size(4 * N)));
};
typedef RowVectors<8>::Float Float8;
typedef RowVectors<8>::Int Int8;
using rows::Double8;

// Lane l of r is c[piece[l]] for the 32 floats at c (pieces 0..31): with 16
// lanes one two-source permute; with 8, two of them and a blend on the
// piece's fifth bit (the permutes read the index modulo 16). (Vectors pass
// by reference: the helpers are inlined into each clone.)
template <class Float, class Int>
__attribute__((always_inline)) inline void select(const float* c, const Int& piece, Float& r)
{
  constexpr int kPieces = SphColumnCentres::kPieces;
  static_assert(kPieces == 32, "two registers of 16 pieces, or four of 8");
  constexpr int N = int(sizeof(Float) / sizeof(float));
#if defined(__GNUC__) && !defined(__clang__)
  // Each table register loaded whole (one copy of all of them goes through
  // the stack in halves, and the reloads stall on store forwarding).
  Float t0, t1;
  std::memcpy(&t0, c, sizeof t0);
  std::memcpy(&t1, c + N, sizeof t1);
  if constexpr (N == 16)
    r = __builtin_shuffle(t0, t1, piece);
  else
  {
    Float t2, t3;
    std::memcpy(&t2, c + 2 * N, sizeof t2);
    std::memcpy(&t3, c + 3 * N, sizeof t3);
    r = piece < 16 ? __builtin_shuffle(t0, t1, piece) : __builtin_shuffle(t2, t3, piece);
  }
#else
  for (int l = 0; l < N; ++l)
    r[l] = c[piece[l]];
#endif
}

// The polynomials of the pieces, coefficient j of every piece at c + P j.
template <int Degree, class Float, class Int>
__attribute__((always_inline)) inline void horner(
  const float* c, const Int& piece, const Float& u, Float& acc)
{
  constexpr int P = SphColumnCentres::kPieces;
  select(c + P * Degree, piece, acc);
  for (int j = Degree - 1; j >= 0; --j)
  {
    Float cj;
    select(c + P * j, piece, cj);
    acc = acc * u + cj;
  }
}

// The rows' unit of length, h / sqrt(P), in which X^2 + Y2 is P R^2: a
// length given in units of h, and a row's squared offset dy2 across it
// (the one rule of every vector width, so that they give the same bits).
inline double inRowUnits(double lengthOverH)
{
  return lengthOverH * std::sqrt(double(SphColumnCentres::kPieces));
}

inline float squaredRowOffset(double dy2, double invH)
{
  return float(dy2 * invH * invH * SphColumnCentres::kPieces);
}

struct CentresCoefficients
{
  const float* corrected; // m du dv / h^2 times the value with its isotropic correction
  const float* anisotropy;
};

// Zero, read where the compiler cannot see its value.
volatile int opaqueZero = 0;

// N pixels at a time, in units of h / sqrt(P) (P pieces): X0 the first
// pixel centre's offset along the row, a the pixel's width, Y2 the row's
// squared offset, so that s = X^2 + Y2 = P R^2 (single precision: an error
// of 1e-7 in R^2 moves a pixel's value by less than 1e-8 of the particle's
// mass). Writes the pixels' masses (0 beyond the support: s >= P) to out
// (rounded up to N values) or, Accumulate, adds them to out[i < count].
// Every lane's arithmetic is the same whatever N: the values do not depend
// on the vector width.
template <int N, bool Anisotropic, bool Accumulate>
__attribute__((always_inline)) inline void centresLanes(
  CentresCoefficients c, float anisoScale, float X0, float a, float Y2, int count, double* out)
{
  typedef typename RowVectors<N>::Float Float;
  typedef typename RowVectors<N>::Int Int;
  constexpr int P = SphColumnCentres::kPieces;
  Float lane;
  for (int l = 0; l < N; ++l)
    lane[l] = float(l);
  const Int opaque = Int{} + opaqueZero;
  for (int i = 0; i < count; i += N)
  {
    const Float X = X0 + (lane + float(i)) * a;
    // Oblong pixels use X^2 twice (in t and in X^2 - Y2): rounded once, by
    // OR-ing it with a zero the compiler cannot see, so that it is fused into
    // neither sum (GCC would fuse it into one, both or neither, as the code
    // around it decides) and every vector width rounds it alike.
    const Float X2 = Anisotropic ? (Float)((Int)(X * X) | opaque) : X * X;
    const Float t = Anisotropic ? X2 + Y2 : X * X + Y2;
    // Inside the support as 1 or 0 at once: GCC lowers a comparison's mask
    // kept for later lane by lane.
    const Float inside = t < float(P) ? 1.0f : 0.0f;
    const Float s = t < float(P) ? t : float(P);
    Int piece = __builtin_convertvector(s, Int);
    piece = piece < P - 1 ? piece : P - 1;
    const Float u = s - __builtin_convertvector(piece, Float);
    Float v;
    horner<SphColumnCentres::kValueDegree>(c.corrected, piece, u, v);
    if (Anisotropic)
    {
      Float e;
      horner<SphColumnCentres::kCorrectionDegree>(c.anisotropy, piece, u, e);
      v += anisoScale * e * ((X2 - Y2) / (t > 0.0f ? t : 1.0f));
    }
    // 0 beyond the support, and never below 0 where the fits' last digits
    // would dip under a vanishing kernel (log-scaled maps).
    v = (v > 0.0f ? v : 0.0f) * inside;
    // To double 8 lanes at a time (a register's worth: wider vectors would
    // go through the stack).
    for (int half = 0; half < N / 8; ++half)
    {
      Float8 part;
      std::memcpy(&part, reinterpret_cast<const float*>(&v) + 8 * half, sizeof part);
      Double8 o = __builtin_convertvector(part, Double8);
      const int at = i + 8 * half;
      if (!Accumulate)
        std::memcpy(out + at, &o, sizeof o);
      else if (at + 8 <= count)
      {
        Double8 in;
        std::memcpy(&in, out + at, sizeof in);
        o += in;
        std::memcpy(out + at, &o, sizeof o);
      }
      else
        for (int l = 0; l < count - at; ++l) // the row's last, partial vector
          out[at + l] += o[l];
    }
  }
}

template <bool Anisotropic, bool Accumulate>
JZ_SPH_CLONES void centresRow(
  CentresCoefficients c, float anisoScale, float X0, float a, float Y2, int count, double* out)
{
  centresLanes<8, Anisotropic, Accumulate>(c, anisoScale, X0, a, Y2, count, out);
}

#if JZ_SPH_WIDE_ROWS
// (GCC 12 warns of the "undefined" registers inside its own intrinsics.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The pieces' coefficients: coefficient j of pieces 0..15 and 16..31 (at
// c + 32 j), a register each.
struct PieceRegisters
{
  __m512 low[SphColumnCentres::kValueDegree + 1], high[SphColumnCentres::kValueDegree + 1];
};

__attribute__((target("arch=x86-64-v4"), always_inline)) inline void loadPieces(
  const float* c, PieceRegisters& r)
{
  constexpr int P = SphColumnCentres::kPieces;
  for (int j = 0; j <= SphColumnCentres::kValueDegree; ++j)
  {
    r.low[j] = _mm512_loadu_ps(c + P * j);
    r.high[j] = _mm512_loadu_ps(c + P * j + 16);
  }
}

// s's piece (its integer part) and the fraction within it. Without
// centresLanes' clamps: inside the support s < 32, so they change nothing;
// beyond it the permutes read the index's low 5 bits and the lane is
// zeroed after.
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void pieceOf16(
  __m512 s, __m512i& piece, __m512& u)
{
  piece = _mm512_cvttps_epi32(s);
  u = _mm512_sub_ps(s, _mm512_cvtepi32_ps(piece));
}

// The pieces' polynomials c at K vectors of pixels (pieces, fractions), by
// Horner's rule, their chains interleaved.
template <int K>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void piecePolynomials16(
  const PieceRegisters& c, const __m512i* piece, const __m512* u, __m512* v)
{
  constexpr int D = SphColumnCentres::kValueDegree;
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
    v[k] = _mm512_permutex2var_ps(c.low[D], piece[k], c.high[D]);
#pragma GCC unroll 8
  for (int j = D - 1; j >= 0; --j)
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
      v[k] = _mm512_fmadd_ps(v[k], u[k], _mm512_permutex2var_ps(c.low[j], piece[k], c.high[j]));
}

// The masses of K vectors of pixels at once (centresLanes' isotropic
// arithmetic, lane by lane: X along the row, Y2 across it), their chains
// interleaved (one chain alone leaves the vector units waiting on its
// latency).
template <int K>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void centreMasses16(
  const PieceRegisters& c, const __m512* X, const __m512* Y2, __m512* w)
{
  const __m512 pieces = _mm512_set1_ps(float(SphColumnCentres::kPieces));
  __m512 u[K], v[K];
  __m512i piece[K];
  __mmask16 inside[K];
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
  {
    const __m512 s = _mm512_fmadd_ps(X[k], X[k], Y2[k]);
    inside[k] = _mm512_cmp_ps_mask(s, pieces, _CMP_LT_OQ);
    pieceOf16(s, piece[k], u[k]);
  }
  piecePolynomials16<K>(c, piece, u, v);
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
    w[k] = _mm512_maskz_max_ps(inside[k], v[k], _mm512_setzero_ps());
}

// A vector's two halves as doubles.
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void widen(
  __m512 w, __m512d& low, __m512d& high)
{
  low = _mm512_cvtps_pd(_mm512_castps512_ps256(w));
  high = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(w), 1)));
}

// The last pixels [whole, whole + tail) of K rows (tail <= 8): those of
// rows 2h and 2h + 1 in the low and high halves of one vector.
template <int K>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void lastPixelsPaired(
  const PieceRegisters& c, __m512 vA, __m512 vX0, const __m512* Y2v, int whole, int tail,
  double* out, std::size_t rowStride)
{
  constexpr int H = K / 2;
  const __m512 halves = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
  __m512 X[H], Y2[H], w[H];
  for (int h = 0; h < H; ++h)
  {
    X[h] = _mm512_fmadd_ps(_mm512_add_ps(halves, _mm512_set1_ps(float(whole))), vA, vX0);
    Y2[h] = _mm512_mask_blend_ps(__mmask16(0xff00), Y2v[2 * h], Y2v[2 * h + 1]);
  }
  centreMasses16<H>(c, X, Y2, w);
#pragma GCC unroll 4
  for (int h = 0; h < H; ++h)
  {
    __m512d low, high;
    widen(w[h], low, high);
    double* row = out + std::size_t(2 * h) * rowStride + whole;
    rows::addToRow(row, tail, low);
    rows::addToRow(row + rowStride, tail, high);
  }
}

// centresLanes<16, false, Accumulate> for K rows of a column at once, in
// AVX-512 intrinsics, the same operations on every pixel (so the same
// bits): the rows share the pixels' offsets X along them. The compiler's
// own lowering of the vector extensions would spill each vector to the
// stack for the row's last, partial one and widen through 128-bit halves,
// where masked loads and stores and whole-register conversions take a third
// less. When the rows' last vector would hold 8 pixels or fewer (and K is
// even), two rows share it, a row a half. Row k < K at out + k rowStride,
// Y2[k] its squared offset.
template <int K, bool Accumulate>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void isotropicRows16(
  const PieceRegisters& c, float X0, float a, const float* Y2, int count, double* out,
  std::size_t rowStride)
{
  const __m512 lane = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 vA = _mm512_set1_ps(a), vX0 = _mm512_set1_ps(X0);
  __m512 Y2v[K], X[K], w[K];
  for (int k = 0; k < K; ++k)
    Y2v[k] = _mm512_set1_ps(Y2[k]);
  const int tail = count % 16;
  const bool paired = Accumulate && K % 2 == 0 && tail > 0 && tail <= 8;
  const int whole = paired ? count - tail : count;
  for (int i = 0; i < whole; i += 16)
  {
    for (int k = 0; k < K; ++k)
      X[k] = _mm512_fmadd_ps(_mm512_add_ps(lane, _mm512_set1_ps(float(i))), vA, vX0);
    centreMasses16<K>(c, X, Y2v, w);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
    {
      __m512d low, high;
      widen(w[k], low, high);
      double* row = out + std::size_t(k) * rowStride + i;
      if (!Accumulate)
      {
        _mm512_storeu_pd(row, low);
        _mm512_storeu_pd(row + 8, high);
        continue;
      }
      rows::addToRow(row, count - i, low);
      rows::addToRow(row + 8, count - i - 8, high);
    }
  }
  if constexpr (K % 2 == 0)
    if (paired)
      lastPixelsPaired<K>(c, vA, vX0, Y2v, whole, tail, out, rowStride);
}
template <bool Accumulate>
__attribute__((target("arch=x86-64-v4"))) void isotropicRow16(
  const float* c, float X0, float a, float Y2, int count, double* out)
{
  PieceRegisters r;
  loadPieces(c, r);
  isotropicRows16<1, Accumulate>(r, X0, a, &Y2, count, out, 0);
}

// A column's rows [0, rows), K at a time and then one at a time:
// step(k, j, Y2) for rows j .. j + k - 1 (k a std::integral_constant, K or
// 1), Y2 their squared offsets (dy2[j] row j's).
template <int K, class Step>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void columnRows16(
  const double* dy2, double invH, int rows, Step&& step)
{
  float Y2[K];
  int j = 0;
  for (; j + K <= rows; j += K)
  {
    for (int k = 0; k < K; ++k)
      Y2[k] = squaredRowOffset(dy2[j + k], invH);
    step(std::integral_constant<int, K>(), j, Y2);
  }
  for (; j < rows; ++j)
  {
    Y2[0] = squaredRowOffset(dy2[j], invH);
    step(std::integral_constant<int, 1>(), j, Y2);
  }
}

// isotropicRows16 added to the rows of a column (SphColumnCentres::addRows),
// four rows at a time, dy2[j] row j's squared offset. (Each row over only
// the pixels its chord reaches would skip a fifth of them, but the varying
// trip counts mispredict.)
__attribute__((target("arch=x86-64-v4"))) void isotropicColumn16(const float* c, float X0, float a,
  double invH, const double* dy2, int rows, int count, double* out, std::size_t rowStride)
{
  PieceRegisters r;
  loadPieces(c, r);
  columnRows16<4>(
    dy2, invH, rows, [&](auto k, int j, const float* Y2) __attribute__((target("arch=x86-64-v4"))) {
      isotropicRows16<decltype(k)::value, true>(
        r, X0, a, Y2, count, out + std::size_t(j) * rowStride, rowStride);
    });
}
// The AVX2 code's pick of coefficient c[piece] among the 32 pieces, for
// pixels whose pieces are all at least 8 G: each register of 8 pieces from
// the G-th on permuted by the index's low 3 bits, then blended by its bits
// 3 and 4 (bit3, bit4: those bits moved to the sign). A row whose squared
// offset alone reaches 8 G needs no register below (4 - G permutes, 3 - G
// blends).
template <int G>
__attribute__((target("arch=x86-64-v3"), always_inline)) inline __m256 pickPiece8(
  const float* c, __m256i piece, __m256 bit3, __m256 bit4)
{
  static_assert(SphColumnCentres::kPieces == 32, "four registers of 8 pieces");
  auto from = [&](int r) __attribute__((target("arch=x86-64-v3")))
  {
    return _mm256_permutevar8x32_ps(_mm256_load_ps(c + 8 * r), piece);
  };
  if constexpr (G == 3)
    return from(3);
  const __m256 high = _mm256_blendv_ps(from(2), from(3), bit3);
  if constexpr (G == 2)
    return high;
  const __m256 low = G == 1 ? from(1) : _mm256_blendv_ps(from(0), from(1), bit3);
  return _mm256_blendv_ps(low, high, bit4);
}

// centreMasses16 in AVX2 intrinsics, 8 pixels a vector: the same operations
// on every lane (so the same bits), the lanes beyond the support zeroed by a
// mask as there. Every pixel's piece is at least 8 G.
template <int K, int G>
__attribute__((target("arch=x86-64-v3"), always_inline)) inline void centreMasses8(
  const float* c, const __m256* X, const __m256 Y2[K], __m256* w)
{
  constexpr int D = SphColumnCentres::kValueDegree, P = SphColumnCentres::kPieces;
  const __m256 pieces = _mm256_set1_ps(float(P));
  __m256 u[K], v[K], bit3[K], bit4[K], inside[K];
  __m256i piece[K];
  for (int k = 0; k < K; ++k)
  {
    const __m256 s = _mm256_fmadd_ps(X[k], X[k], Y2[k]);
    inside[k] = _mm256_cmp_ps(s, pieces, _CMP_LT_OQ);
    piece[k] = _mm256_cvttps_epi32(s);
    u[k] = _mm256_sub_ps(s, _mm256_cvtepi32_ps(piece[k]));
    bit3[k] = _mm256_castsi256_ps(_mm256_slli_epi32(piece[k], 28));
    bit4[k] = _mm256_castsi256_ps(_mm256_slli_epi32(piece[k], 27));
    v[k] = pickPiece8<G>(c + P * D, piece[k], bit3[k], bit4[k]);
  }
  for (int j = D - 1; j >= 0; --j)
    for (int k = 0; k < K; ++k)
      v[k] = _mm256_fmadd_ps(v[k], u[k], pickPiece8<G>(c + P * j, piece[k], bit3[k], bit4[k]));
  for (int k = 0; k < K; ++k)
    w[k] = _mm256_and_ps(inside[k], _mm256_max_ps(v[k], _mm256_setzero_ps()));
}

// N rows of a column (from `first`, their squared offsets Y2) over `count`
// pixels, every piece at least 8 G.
template <int N, int G>
__attribute__((target("arch=x86-64-v3"), always_inline)) inline void isotropicRows8(const float* c,
  float X0, float a, const __m256* Y2, int count, double* first, std::size_t rowStride)
{
  const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 vA = _mm256_set1_ps(a), vX0 = _mm256_set1_ps(X0);
  __m256 X[N], w[N];
  for (int i = 0; i < count; i += 8)
  {
    const __m256 x = _mm256_fmadd_ps(_mm256_add_ps(lane, _mm256_set1_ps(float(i))), vA, vX0);
    for (int k = 0; k < N; ++k)
      X[k] = x;
    centreMasses8<N, G>(c, X, Y2, w);
    for (int k = 0; k < N; ++k)
    {
      double* row = first + std::size_t(k) * rowStride + i;
      rows::addToHalfRow(row, count - i, _mm256_cvtps_pd(_mm256_castps256_ps128(w[k])));
      rows::addToHalfRow(
        row + rows::kHalfLanes, count - i - 4, _mm256_cvtps_pd(_mm256_extractf128_ps(w[k], 1)));
    }
  }
}

// isotropicColumn16 in AVX2 intrinsics, 8 pixels a vector, two rows at a
// time (their chains interleaved; more would not fit the registers), each
// pair with the fewest pieces its smaller squared offset allows.
__attribute__((target("arch=x86-64-v3"))) void isotropicColumn8(const float* c, float X0, float a,
  double invH, const double* dy2, int rows, int count, double* out, std::size_t rowStride)
{
  constexpr int K = 2;
  int j = 0;
  auto step = [&](auto rowsNow) __attribute__((target("arch=x86-64-v3")))
  {
    constexpr int N = decltype(rowsNow)::value;
    __m256 Y2[N];
    float least = float(SphColumnCentres::kPieces);
    for (int k = 0; k < N; ++k)
    {
      const float y2 = squaredRowOffset(dy2[j + k], invH);
      Y2[k] = _mm256_set1_ps(y2);
      least = std::min(least, y2);
    }
    double* first = out + std::size_t(j) * rowStride;
    const int G = least >= 24 ? 3 : least >= 16 ? 2 : least >= 8 ? 1 : 0;
    if (G == 3)
      isotropicRows8<N, 3>(c, X0, a, Y2, count, first, rowStride);
    else if (G == 2)
      isotropicRows8<N, 2>(c, X0, a, Y2, count, first, rowStride);
    else if (G == 1)
      isotropicRows8<N, 1>(c, X0, a, Y2, count, first, rowStride);
    else
      isotropicRows8<N, 0>(c, X0, a, Y2, count, first, rowStride);
  };
  for (; j + K <= rows; j += K)
    step(std::integral_constant<int, K>());
  for (; j < rows; ++j)
    step(std::integral_constant<int, 1>());
}

// centresLanes<16, true, true> for K rows of a column at once (pixels
// longer one way than the other), in AVX-512 intrinsics: the same
// operations on every pixel, the anisotropic term's (X^2 - Y2) / t
// included, X^2 rounded once as there (an explicitly rounded multiply,
// which GCC cannot fuse into the add and the subtract that use it). c: the
// corrected polynomial's coefficients, e: the anisotropy's.
template <int K>
__attribute__((target("arch=x86-64-v4"), always_inline)) inline void anisotropicRows16(
  const PieceRegisters& c, const PieceRegisters& e, float anisoScale, float X0, float a,
  const float* Y2, int count, double* out, std::size_t rowStride)
{
  static_assert(SphColumnCentres::kCorrectionDegree == SphColumnCentres::kValueDegree,
    "both polynomials in PieceRegisters");
  const __m512 lane = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 pieces = _mm512_set1_ps(float(SphColumnCentres::kPieces));
  const __m512 vA = _mm512_set1_ps(a), vX0 = _mm512_set1_ps(X0);
  const __m512 scale = _mm512_set1_ps(anisoScale);
  for (int i = 0; i < count; i += 16)
  {
    const __m512 X = _mm512_fmadd_ps(_mm512_add_ps(lane, _mm512_set1_ps(float(i))), vA, vX0);
    const __m512 X2 = _mm512_mul_round_ps(X, X, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 u[K], v[K], w[K], Y2v[K], t[K];
    __m512i piece[K];
    __mmask16 inside[K];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
    {
      Y2v[k] = _mm512_set1_ps(Y2[k]);
      t[k] = _mm512_add_ps(X2, Y2v[k]);
      inside[k] = _mm512_cmp_ps_mask(t[k], pieces, _CMP_LT_OQ);
      pieceOf16(t[k], piece[k], u[k]);
    }
    piecePolynomials16<K>(c, piece, u, v);
    piecePolynomials16<K>(e, piece, u, w);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
    {
      const __mmask16 positive = _mm512_cmp_ps_mask(t[k], _mm512_setzero_ps(), _CMP_GT_OQ);
      const __m512 across = _mm512_mask_blend_ps(positive, _mm512_set1_ps(1.0f), t[k]);
      const __m512 q = _mm512_div_ps(_mm512_sub_ps(X2, Y2v[k]), across);
      v[k] = _mm512_fmadd_ps(_mm512_mul_ps(scale, w[k]), q, v[k]);
      __m512d low, high;
      widen(_mm512_maskz_max_ps(inside[k], v[k], _mm512_setzero_ps()), low, high);
      double* row = out + std::size_t(k) * rowStride + i;
      rows::addToRow(row, count - i, low);
      rows::addToRow(row + 8, count - i - 8, high);
    }
  }
}

// anisotropicRows16 added to the rows of a column, two rows at a time.
__attribute__((target("arch=x86-64-v4"))) void anisotropicColumn16(const float* c, const float* e,
  float anisoScale, float X0, float a, double invH, const double* dy2, int rows, int count,
  double* out, std::size_t rowStride)
{
  PieceRegisters rc, re;
  loadPieces(c, rc);
  loadPieces(e, re);
  columnRows16<2>(
    dy2, invH, rows, [&](auto k, int j, const float* Y2) __attribute__((target("arch=x86-64-v4"))) {
      anisotropicRows16<decltype(k)::value>(
        rc, re, anisoScale, X0, a, Y2, count, out + std::size_t(j) * rowStride, rowStride);
    });
}
#pragma GCC diagnostic pop

template <bool Anisotropic, bool Accumulate>
__attribute__((target("arch=x86-64-v4"))) void centresRowWide(
  CentresCoefficients c, float anisoScale, float X0, float a, float Y2, int count, double* out)
{
  if (!Anisotropic)
    return isotropicRow16<Accumulate>(c.corrected, X0, a, Y2, count, out);
  centresLanes<16, Anisotropic, Accumulate>(c, anisoScale, X0, a, Y2, count, out);
}
#endif

// The code forceSphRowCode chose, or -1: the machine's best.
std::atomic<int> forcedRowCode{ -1 };

// centresRow with the code sphRowCode() says.
template <bool Anisotropic, bool Accumulate>
void centresRowBest(
  CentresCoefficients c, float anisoScale, float X0, float a, float Y2, int count, double* out)
{
#if JZ_SPH_WIDE_ROWS
  if (sphRowCode() == SphRowCode::Avx512)
    return centresRowWide<Anisotropic, Accumulate>(c, anisoScale, X0, a, Y2, count, out);
#endif
  centresRow<Anisotropic, Accumulate>(c, anisoScale, X0, a, Y2, count, out);
}
} // namespace

SphRowCode sphMachineRowCode()
{
#if JZ_SPH_WIDE_ROWS
  static const SphRowCode best =
    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? SphRowCode::Avx512
    : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")       ? SphRowCode::Avx2
                                                                            : SphRowCode::Portable;
  return best;
#else
  return SphRowCode::Portable;
#endif
}

SphRowCode sphRowCode()
{
  const int forced = forcedRowCode.load(std::memory_order_relaxed);
  const SphRowCode best = sphMachineRowCode();
  return forced < 0 || forced > int(best) ? best : SphRowCode(forced);
}

void forceSphRowCode(SphRowCode code)
{
  forcedRowCode.store(code == sphMachineRowCode() ? -1 : int(code), std::memory_order_relaxed);
}

namespace
{
// The coefficients (from u^0 up) of the degree-D polynomial in u = P t - p
// interpolating g(R = sqrt(t)) at the Chebyshev nodes of piece p.
template <class G>
void fitPiece(G&& g, int p, int pieces, int degree, double* coefficients)
{
  const int m = degree + 1;
  std::vector<double> a(static_cast<std::size_t>(m * m));
  std::vector<double> b(static_cast<std::size_t>(m));
  for (int k = 0; k < m; ++k)
  {
    const double u = 0.5 * (1 - std::cos(kPi * (k + 0.5) / m));
    b[std::size_t(k)] = g(std::sqrt((p + u) / pieces));
    for (int j = 0; j < m; ++j)
      a[std::size_t(k * m + j)] = std::pow(u, j);
  }
  // Gaussian elimination with partial pivoting (m <= 7).
  for (int col = 0; col < m; ++col)
  {
    int pivot = col;
    for (int r = col + 1; r < m; ++r)
      if (std::fabs(a[std::size_t(r * m + col)]) > std::fabs(a[std::size_t(pivot * m + col)]))
        pivot = r;
    for (int j = 0; j < m; ++j)
      std::swap(a[std::size_t(col * m + j)], a[std::size_t(pivot * m + j)]);
    std::swap(b[std::size_t(col)], b[std::size_t(pivot)]);
    for (int r = col + 1; r < m; ++r)
    {
      const double f = a[std::size_t(r * m + col)] / a[std::size_t(col * m + col)];
      for (int j = col; j < m; ++j)
        a[std::size_t(r * m + j)] -= f * a[std::size_t(col * m + j)];
      b[std::size_t(r)] -= f * b[std::size_t(col)];
    }
  }
  for (int r = m - 1; r >= 0; --r)
  {
    double v = b[std::size_t(r)];
    for (int j = r + 1; j < m; ++j)
      v -= a[std::size_t(r * m + j)] * coefficients[j];
    coefficients[r] = v / a[std::size_t(r * m + r)];
  }
}
} // namespace

SphColumnCentres::SphColumnCentres(SphKernel kernel)
{
  // Differentiated under the integral (W and W' vanish at the support's
  // edge): lap f = 2 int lap3 W dz, as the line integral of d2W/dz2 is 0;
  // f'' - f'/R = 2 int R^2 / r^2 (W'' - W'/r) dz. These enter the pixel
  // values times (pixel / h)^2 / 48 < 1e-4: a looser tolerance suffices
  // (and rounding would keep a tighter one from converging).
  const double loose = 1e-11;
  auto laplacian = [&](double R)
  {
    return alongSight(R,
      [&](double r) { return sphKernelCurvature(kernel, r) + 2 * sphKernelSlopeOverQ(kernel, r); },
      loose);
  };
  auto anisotropy = [&](double R)
  {
    return R > 0 ? R * R *
        alongSight(R,
          [&](double r)
          { return (sphKernelCurvature(kernel, r) - sphKernelSlopeOverQ(kernel, r)) / (r * r); },
          loose)
                 : 0.0;
  };
  double value[kPieces][kValueDegree + 1], lap[kPieces][kCorrectionDegree + 1],
    aniso[kPieces][kCorrectionDegree + 1];
  // Integrals over the plane (pi times those over R^2) of the fits: f's is
  // made exactly 1 and lap f's exactly 0 (as the functions' are), so that
  // the fits' small errors do not add up to a loss or gain of mass.
  double integral = 0, lapIntegral = 0;
  for (int p = 0; p < kPieces; ++p)
  {
    fitPiece([&](double R) { return columnKernel(kernel, R); }, p, kPieces, kValueDegree, value[p]);
    fitPiece(laplacian, p, kPieces, kCorrectionDegree, lap[p]);
    fitPiece(anisotropy, p, kPieces, kCorrectionDegree, aniso[p]);
    for (int j = 0; j <= kValueDegree; ++j)
      integral += kPi * value[p][j] / (j + 1) / kPieces;
    for (int j = 0; j <= kCorrectionDegree; ++j)
      lapIntegral += kPi * lap[p][j] / (j + 1) / kPieces;
  }
  for (int p = 0; p < kPieces; ++p)
  {
    for (int j = 0; j <= kValueDegree; ++j)
      value_[j][p] = float(value[p][j] / integral);
    for (int j = 0; j <= kCorrectionDegree; ++j)
    {
      laplacian_[j][p] = float(j == 0 ? lap[p][0] - lapIntegral / kPi : lap[p][j]);
      anisotropy_[j][p] = float(aniso[p][j]);
    }
  }
}

const SphColumnCentres& SphColumnCentres::get(SphKernel kernel)
{
  return builtOnce<SphColumnCentres, 2>(
    kernelIndex(kernel), [&] { return new SphColumnCentres(kernel); });
}

SphColumnCentres::Footprint SphColumnCentres::footprint(
  double h, double du, double dv, double m) const
{
  Footprint f;
  f.invH = 1 / h;
  f.a = inRowUnits(du / h);
  const double au2 = du * du / (h * h), av2 = dv * dv / (h * h);
  const float scale = float(m * du * dv / (h * h));
  const float lapScale = float((au2 + av2) / 48);
  for (int j = 0; j <= kValueDegree; ++j)
    for (int p = 0; p < kPieces; ++p)
      f.corrected[j][p] =
        scale * (value_[j][p] + (j <= kCorrectionDegree ? lapScale * laplacian_[j][p] : 0.0f));
  f.anisoScale = scale * float((au2 - av2) / 48);
  // Nearly square pixels: the anisotropic term is below rounding.
  f.anisotropic = std::fabs(au2 - av2) > 1e-6 * (au2 + av2);
  return f;
}

template <bool Accumulate>
void SphColumnCentres::pixels(
  const Footprint& f, double X0, double dy2, std::size_t n, double* out) const
{
  const CentresCoefficients c{ f.corrected[0], anisotropy_[0] };
  const float Y2 = squaredRowOffset(dy2, f.invH), X = float(inRowUnits(X0)), a = float(f.a);
  if (f.anisotropic)
    centresRowBest<true, Accumulate>(c, f.anisoScale, X, a, Y2, int(n), out);
  else
    centresRowBest<false, Accumulate>(c, 0.0f, X, a, Y2, int(n), out);
}

void SphColumnCentres::row(
  const Footprint& f, double X0, double dy2, std::size_t n, double* out) const
{
  pixels<false>(f, X0, dy2, n, out);
}

void SphColumnCentres::addRows(const Footprint& f, double X0, const double* dy2, int rows,
  std::size_t n, double* image, std::size_t rowStride) const
{
#if JZ_SPH_WIDE_ROWS
  if (sphRowCode() == SphRowCode::Avx512)
  {
    const float X = float(inRowUnits(X0)), a = float(f.a);
    if (!f.anisotropic)
      return isotropicColumn16(f.corrected[0], X, a, f.invH, dy2, rows, int(n), image, rowStride);
    return anisotropicColumn16(f.corrected[0], anisotropy_[0], f.anisoScale, X, a, f.invH, dy2,
      rows, int(n), image, rowStride);
  }
  if (sphRowCode() == SphRowCode::Avx2 && !f.anisotropic)
    return isotropicColumn8(f.corrected[0], float(inRowUnits(X0)), float(f.a), f.invH, dy2, rows,
      int(n), image, rowStride);
#endif
  for (int j = 0; j < rows; ++j)
    pixels<true>(f, X0, dy2[j], n, image + std::size_t(j) * rowStride);
}

} // namespace jz
