// The two inner loops of tree gravity on the CPU, compiled once with
// run-time dispatch to the widest vector unit (AVX-512, AVX2 or the baseline)
// where the compiler supports it. The formulas are GravityTerms.h's.
#pragma once

#include <cstddef>

#include "gravity/GravityTerms.h"

// Each inner loop is compiled for x86-64-v4 (AVX-512), v3 (AVX2 with FMA)
// and the baseline and picked at run time (GCC on x86-64 Linux). A loop
// written per instruction set instead (its own lane types or intrinsics)
// defines one function per level with the same signature, marked
// JZ_GRAVITY_V4, JZ_GRAVITY_V3 and JZ_GRAVITY_BASE: GCC's resolver then
// picks among them by the same rule as among the clones.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define JZ_GRAVITY_CLONES                                                                          \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define JZ_GRAVITY_VERSIONS 1
#define JZ_GRAVITY_V4 __attribute__((target("arch=x86-64-v4")))
#define JZ_GRAVITY_V3 __attribute__((target("arch=x86-64-v3")))
#define JZ_GRAVITY_BASE __attribute__((target("default")))
#else
#define JZ_GRAVITY_CLONES
#define JZ_GRAVITY_VERSIONS 0
#define JZ_GRAVITY_BASE
#endif

namespace jz
{
// Units of the single-precision terms: lengths and masses divided by powers
// of two near the problem's extent and largest mass (exact), so that no
// float overflows or underflows whatever the caller's units.
struct FloatUnits
{
  double invLength = 1, invMass = 1;
  float eps2 = 0;   // in these units
  double uBack = 1; // U in float units -> U
  double gBack = 1; // grad U in float units -> grad U
  FloatUnits() = default;
  FloatUnits(double extent, double maxMass, double eps2);
};

// Lanes of the single-precision loops: queries for the multipoles, sources
// for the direct sum.
constexpr std::size_t kGravityFloatLanes = 16;

// A multipole in float units (FloatUnits), its centre of mass relative to
// the receiver's origin; its second moments pre-scaled for the kernels'
// factored form (GravityFloatKernelsCpu.cpp).
struct FloatMultipole
{
  float com[3];
  float mass;
  float second[6]; // 1.5 I: xx yy zz xy xz yz
  float halfTrace; // tr I / 2
};

// The parts of `node`'s multipole in float units that do not depend on the
// receiver (its com left 0): computed once per node (GravityPolicy's
// beginPlane), not once per accepted pair.
inline FloatMultipole floatMoments(const GravityMoments& node, const FloatUnits& units)
{
  const double L = units.invLength, I2 = units.invMass * L * L;
  FloatMultipole f{};
  f.mass = float(node.mass * units.invMass);
  for (int k = 0; k < 6; ++k)
    f.second[k] = float(1.5 * node.second[k] * I2);
  f.halfTrace = float(0.5 * (node.second[0] + node.second[1] + node.second[2]) * I2);
  return f;
}

// The multipole of a node (its floatMoments and centre of mass) in float
// units relative to `origin`, written in place (field by field: a returned
// copy read back with wider loads stalled on store forwarding).
inline void placeFloatMultipole(const FloatMultipole& moments, const double* com,
  const double* origin, const FloatUnits& units, FloatMultipole& f)
{
  f = moments;
  for (int k = 0; k < 3; ++k)
    f.com[k] = float((com[k] - origin[k]) * units.invLength);
}

// Adds the field of k multipoles at n query points (float units, relative to
// the multipoles' origin; the arrays padded to a multiple of
// kGravityFloatLanes) to U and grad U (u, gx, gy, gz: n each, in double):
// the accepted multipoles of one receiver in one pass, each query's terms
// summed in float registers (the fast path of theta > 0, whose accuracy
// contract, doc/filters/TreeGravity.md, is far above float rounding). field
// false: U alone (grad U untouched), about half the work.
void applyMultipolesFloatCpu(const FloatMultipole* nodes, std::size_t k, const float* qx,
  const float* qy, const float* qz, std::size_t n, const FloatUnits& units, bool field, double* u,
  double* gx, double* gy, double* gz);

// Lanes of the direct sum: per-lane partial sums let the compiler vectorize
// without reassociating a reduction (no -ffast-math).
constexpr std::size_t kGravityLanes = 8;

// Adds to sum the direct sum of n sources (x, y, z, m; n a multiple of
// kGravityLanes, padded with massless points) at query point q.
void sumDirectCpu(const double* x, const double* y, const double* z, const double* m, std::size_t n,
  const double* q, double eps2, GravitySum& sum);

// U alone of sumDirectCpu (the same terms and lanes, so the same bits as
// its sum.u added to a zero sum).
double sumPotentialDirectCpu(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, const double* q, double eps2);

// One point source at `at` on n query points (x, y, z), with mass m[i] as
// seen from query i (its own mass left out where it is one of the points
// there): U and grad U added to u, gx, gy, gz; a pair with s^2 = 0 is
// skipped. The terms of addPointTerm (GravityTerms.h), bit for bit.
void addPointMassCpu(const double* at, const double* m, const double* x, const double* y,
  const double* z, std::size_t n, double eps2, double* u, double* gx, double* gy, double* gz);

// One point source of mass m at `at` on n query points (x, y, z): its U term
// added to u[i] (skipped where s^2 = 0), each the direct sum's pair term.
void addPointPotentialCpu(const double* at, double m, const double* x, const double* y,
  const double* z, std::size_t n, double eps2, double* u);

// U_i = sum_{j != i} m_j / sqrt(r_ij^2 + eps^2) for all n points at once,
// each pair's square root taken once for both (points j > i in lanes, the
// other end added to u[j]). The arrays hold n + kGravityLanes entries (the
// last massless); u gets as many (the padding's are meaningless).
void sumPotentialsSymmetricCpu(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, double eps2, double* u);

// Points (x, y, z) and masses m as float offsets from origin and float
// masses in `units` (fx... fm: n each), the direct sum's gathered sources;
// one home of the conversion, exact IEEE operations in every clone.
void toFloatUnitsCpu(const double* x, const double* y, const double* z, const double* m,
  std::size_t n, const double* origin, const FloatUnits& units, float* fx, float* fy, float* fz,
  float* fm);
void toFloatUnitsCpu(const float* x, const float* y, const float* z, const double* m, std::size_t n,
  const double* origin, const FloatUnits& units, float* fx, float* fy, float* fz, float* fm);

// The direct sum with the pair terms in single precision (theta > 0), all
// in float units (FloatUnits) as offsets from one origin near the receiving
// leaf (so a close pair far from the coordinates' origin keeps its relative
// accuracy), for numQueries query points at once (q: xyz of each; each
// source block is loaded once for several of them): per-lane float partial
// sums added to sum[i] in double. Query i leaves out the source at offset
// own[i] (its own; npos: none). n a multiple of kGravityFloatLanes
// (massless padding); field false: U alone.
void sumDirectFloatCpu(const float* x, const float* y, const float* z, const float* m,
  std::size_t n, const float* q, const std::size_t* own, std::size_t numQueries,
  const FloatUnits& units, bool field, GravitySum* sum);
} // namespace jz
