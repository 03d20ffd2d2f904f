// The cumulative integrals of the unit SPH kernels (support 1) that make the
// maps' pixel and voxel integrals exact to interpolation accuracy
// (well below 1e-6 of a particle's mass):
//   column: G2(a, b) = integral over [0, a] x [0, b] of the projected kernel,
//   volume: G3(a, b, c) = integral over [0, a] x [0, b] x [0, c] of W,
// both odd in each argument and constant beyond 1, normalised so that the
// whole kernel integrates to exactly 1 (a particle inside the map loses no
// mass). Tabulated once per kernel (double-precision quadrature) when
// asked; the maps read them in separable form, computed from them ahead
// and held in the library (SphSeparableForms.h), each factor by cubic
// interpolation (SphFactorCubics.h): G2 for narrow columns
// (SphPixelFactors.h), G3 for volumes (SphVoxelFactors.h). Projected
// kernels many pixels wide take the corrected midpoint rule instead
// (SphColumnCentres).
#pragma once

#include <cmath>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "jz/Config.h"
#include "jz/DensityKernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
// The rows' loops vectorise for the machine the loader finds (AVX-512, AVX2);
// the projection's wide rows also run 16 lanes a vector where AVX-512 is.
#define JZ_SPH_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define JZ_SPH_WIDE_ROWS 1
#else
#define JZ_SPH_CLONES
#define JZ_SPH_WIDE_ROWS 0
#endif

namespace jz
{
// The node of a table's padded axis (-1 .. n + 1) that holds its value, and
// its sign: the tables are odd (node -1 = -node 1) and constant beyond 1.
inline int paddedSource(int node, int n, double& sign)
{
  if (node < 0)
  {
    sign = -sign;
    return 1;
  }
  return node > n ? n : node;
}

// The one instance of each of a table's `Variants` kinds (a kernel, a
// dimension), built by make() on first use, whichever thread asks first:
// the tables' get() (a call site's own instances: make's type is its own).
template <class Table, int Variants, class Make>
const Table& builtOnce(int variant, Make&& make)
{
  static std::once_flag once[Variants];
  static std::unique_ptr<Table> built[Variants];
  std::call_once(once[variant], [&] { built[variant].reset(make()); });
  return *built[variant];
}

inline int kernelIndex(SphKernel kernel)
{
  return kernel == SphKernel::WendlandC2 ? 1 : 0;
}

// Cubic Lagrange weights of the nodes -1, 0, 1, 2 at 0 <= f <= 1.
JZ_HD void lagrangeWeights(double f, double* w)
{
  w[0] = -f * (f - 1) * (f - 2) / 6;
  w[1] = (f + 1) * (f - 1) * (f - 2) / 2;
  w[2] = -(f + 1) * f * (f - 2) / 2;
  w[3] = (f + 1) * f * (f - 1) / 6;
}

// The interval of the unit-support coordinate a on a table of `intervals`
// intervals over [0, 1] (constant beyond 1, odd in a): its first node (0 ..
// intervals - 1), the fraction f of it at a, and a's sign. The one rule of
// the separable forms' factors on the CPU (vectorised) and the GPU
// (selects, not fmin, so that the CPU's loops vectorise).
struct TableNode
{
  int node;
  double fraction, sign;
};

JZ_HD TableNode tableNode(double a, int intervals)
{
  const double t = (fabs(a) < 1.0 ? fabs(a) : 1.0) * intervals;
  const double node = floor(t) < intervals - 1 ? floor(t) : double(intervals - 1);
  return TableNode{ int(node), t - node, a < 0 ? -1.0 : 1.0 };
}

class SphCumulativeTable
{
public:
  // The table of `kernel` in `dims` (2: column, 3: volume) dimensions.
  static const SphCumulativeTable& get(SphKernel kernel, int dims);

  int stride() const { return stride_; }

  int intervals() const { return n_; }
  // The padded nodes (stride() per axis, nodes -1 .. n + 1).
  const std::vector<double>& nodes() const { return padded_; }

private:
  SphCumulativeTable(SphKernel kernel, int dims);
  int n_ = 0;      // intervals on [0, 1]
  int stride_ = 0; // padded nodes per axis: n + 3 (nodes -1 .. n + 1)
  std::vector<double> padded_;
};

// A slice's box of pixels around a particle at x along the rows: `rows`
// rows of the n pixel centres c_i = lo + (first + i + 1/2) step, row j at
// squared distance dyz[j] across (r^2 = (c_i - x)^2 + dyz[j]).
struct KernelBox
{
  double lo, step, x;
  int first;
  std::size_t n;
  const double* dyz;
  int rows;
};

// m times the kernel W(r, h) at the box's pixel centres (0 beyond the
// support: the box needs no row's ends) added to image[j stride + i]; when
// `values` is given, W also into values[j n + i] (vectorised like the rows).
void addKernelBox(SphKernel kernel, double h, double m, const KernelBox& box, double* image,
  std::size_t stride, double* values = nullptr);

// The code the maps' rows run: AVX-512 intrinsics (16 pixels a vector in
// the projection's wide rows, 8 doubles in the separable forms' rows), AVX2
// intrinsics (8 pixels, 4 doubles), or the portable loops, which the
// compiler vectorises for the machine. Every one gives the same bits: the
// same operations on each lane in the same order. sphRowCode() is the
// machine's best unless forceSphRowCode chose a lower one (tests compare
// them); forceSphRowCode(sphMachineRowCode()) restores it.
enum class SphRowCode
{
  Portable,
  Avx2,
  Avx512
};
SphRowCode sphMachineRowCode();
SphRowCode sphRowCode();
void forceSphRowCode(SphRowCode code);

// The pixel integrals of projected kernels much wider than a pixel, by the
// midpoint rule with its leading error term: for a pixel of sides du x dv
// centred at (X, Y) h from the particle (R = |(X, Y)| < 1),
//   du dv / h^2 [f + ((du^2 + dv^2) lap f
//                     + (du^2 - dv^2) (f'' - f'/R) (X^2 - Y^2) / R^2) / (48 h^2)]
// with f the projected unit kernel. From h = kMinPixels pixels (the larger
// side) on, this is within 3e-7 of the particle's mass per pixel and 5e-7
// in total (the error falls as (pixel / h)^4). The three functions are
// polynomials in R^2 on 32 equal pieces (evaluated 8 or 16 pixels at a
// time in single precision, the pieces' coefficients selected by lane
// permutes: no table look-ups), f's scaled to integrate to exactly 1.
class SphColumnCentres
{
public:
  static constexpr double kMinPixels = 16;
  static constexpr int kPieces = 32;
  static constexpr int kLanes = 16; // the most pixels a vector holds
  static constexpr int kValueDegree = 4, kCorrectionDegree = 4;
  static const SphColumnCentres& get(SphKernel kernel);

  // One particle's kernel (support h, mass m) on pixels du x dv wide: its
  // value and isotropic correction as one polynomial per piece (f +
  // lapScale lap f: one evaluation per pixel instead of two), times the
  // pixel's share m du dv / h^2.
  struct Footprint
  {
    double invH = 0, a = 0; // 1 / h; du in units of h / sqrt(kPieces)
    float anisoScale = 0;
    bool anisotropic = false;
    alignas(64) float corrected[kValueDegree + 1][kPieces];
  };
  Footprint footprint(double h, double du, double dv, double m) const;

  // For the n pixels of a row whose first centre is X0 h from the particle
  // along the row and whose centres are dy (dy2 = dy^2) off it across: m
  // times their mass fractions (never negative) into out[i] (room for n
  // rounded up to kLanes values); addRows adds them to the rows j < rows
  // of a column instead, dy2[j] off the particle, row j at image + j
  // rowStride (i < n).
  void row(const Footprint& f, double X0, double dy2, std::size_t n, double* out) const;
  void addRows(const Footprint& f, double X0, const double* dy2, int rows, std::size_t n,
    double* image, std::size_t rowStride) const;

  // The pieces' coefficients, [degree + 1][kPieces] each, for the GPU's copy.
  const float* valueCoefficients() const { return value_[0]; }
  const float* laplacianCoefficients() const { return laplacian_[0]; }
  const float* anisotropyCoefficients() const { return anisotropy_[0]; }

private:
  explicit SphColumnCentres(SphKernel kernel);
  template <bool Accumulate>
  void pixels(const Footprint& f, double X0, double dy2, std::size_t n, double* out) const;
  // Coefficient j of piece p (in u = kPieces R^2 - p, from u^0 up) at [j][p].
  alignas(64) float value_[kValueDegree + 1][kPieces];
  alignas(64) float laplacian_[kCorrectionDegree + 1][kPieces];
  alignas(64) float anisotropy_[kCorrectionDegree + 1][kPieces];
};

// The projected kernel of unit support at radius R: 2 * integral over
// 0 <= z <= sqrt(1 - R^2) of W(sqrt(R^2 + z^2), 1) (adaptive quadrature).
double columnKernel(SphKernel kernel, double R);
} // namespace jz
