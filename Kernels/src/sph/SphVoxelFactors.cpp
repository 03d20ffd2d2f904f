#include "SphVoxelFactors.h"

#include <algorithm>
#include <cstring>

#include "SphKernelTables.h"
#include "SphRowVectors.h"
#include "common/LeadingEigenpairs.h"

namespace jz
{
namespace
{
constexpr int R = SphVoxelFactors::kRank;

using rows::Double8;
using rows::load;
constexpr int kLanes = SphVoxelFactors::kRowVector;
static_assert(rows::kLanes == kLanes, "a row vector is kRowVector doubles");
static_assert(R == kLanes, "a row of the core, or of a contracted core, is one vector");

// m sum_pqr core[p][q][r] dx[i][p] dy[j][q] dz[k][r] into row (j, k) of
// `to`, contracted one axis at a time: z, then y, then x along the rows a
// whole vector at a time.
JZ_SPH_CLONES void contractVoxels(const double (*core)[R][R], const double* dx, int nx,
  const double* dy, int ny, const double* dz, int nz, double m, double* scratch,
  const SphVoxelFactors::Output& to)
{
  // zq[k][q][p] = m sum_r dz[k][r] core[r][q][p] (= core[p][q][r]:
  // symmetric), a row q as a vector, summed in registers.
  double* zq = scratch;
  for (int k = 0; k < nz; ++k)
  {
    Double8 acc[R], c;
    for (int q = 0; q < R; ++q)
    {
      load(core[0][q], c);
      acc[q] = (m * dz[k * R]) * c;
    }
    for (int r = 1; r < R; ++r)
    {
      const double w = m * dz[k * R + r];
      for (int q = 0; q < R; ++q)
      {
        load(core[r][q], c);
        acc[q] += w * c;
      }
    }
    std::memcpy(zq + std::size_t(k) * R * R, acc, sizeof acc);
  }
  // xt[p][i] = dx[i][p], zero beyond nx: the rows run along i a vector at a time.
  const int nxPad = SphVoxelFactors::paddedRow(nx);
  double* xt = zq + std::size_t(nz) * R * R;
  std::fill(xt, xt + std::size_t(nxPad) * R, 0.0);
  for (int i = 0; i < nx; ++i)
    for (int p = 0; p < R; ++p)
      xt[std::size_t(p) * std::size_t(nxPad) + std::size_t(i)] = dx[i * R + p];
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
    {
      // y[p] = sum_q dy[j][q] zq[k][q][p]
      const double* z = zq + std::size_t(k) * R * R;
      Double8 yv, zrow;
      load(z, zrow);
      yv = dy[j * R] * zrow;
      for (int q = 1; q < R; ++q)
      {
        load(z + q * R, zrow);
        yv += dy[j * R + q] * zrow;
      }
      double y[R];
      std::memcpy(y, &yv, sizeof y);
      rows::contractRow<R>(y, xt, nxPad, nx,
        to.values + std::size_t(k) * to.sliceStride + std::size_t(j) * to.rowStride, to.add);
    }
}

// The table without its padding: G3 at the nodes 0 .. n of each axis,
// t[(i * nodes + j) * nodes + k].
std::vector<double> unpadded(const SphCumulativeTable& table)
{
  const int nodes = table.intervals() + 1;
  const std::size_t s = std::size_t(table.stride());
  const std::vector<double>& padded = table.nodes();
  std::vector<double> t(std::size_t(nodes) * std::size_t(nodes) * std::size_t(nodes));
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < nodes; ++j)
      for (int k = 0; k < nodes; ++k)
        t[(std::size_t(i) * nodes + std::size_t(j)) * nodes + std::size_t(k)] =
          padded[(std::size_t(i + 1) * s + std::size_t(j + 1)) * s + std::size_t(k + 1)];
  return t;
}

// The leading R eigenvectors (largest eigenvalues first) of the Gram matrix
// of the table's unfolding t[i][(j, k)]: u[i * R + p].
std::vector<double> leadingFactors(const std::vector<double>& t, int nodes)
{
  const std::size_t plane = std::size_t(nodes) * std::size_t(nodes);
  std::vector<double> gram(std::size_t(nodes) * std::size_t(nodes));
#pragma omp parallel for schedule(dynamic)
  for (int a = 0; a < nodes; ++a)
    for (int b = a; b < nodes; ++b)
    {
      const double* x = t.data() + std::size_t(a) * plane;
      const double* y = t.data() + std::size_t(b) * plane;
      double s = 0;
      for (std::size_t e = 0; e < plane; ++e)
        s += x[e] * y[e];
      gram[std::size_t(a) * nodes + std::size_t(b)] =
        gram[std::size_t(b) * nodes + std::size_t(a)] = s;
    }
  // Positive semi-definite: the largest magnitudes are the largest values.
  double values[R];
  std::vector<double> u(std::size_t(nodes) * R);
  leadingEigenpairs(gram.data(), nodes, R, values, u.data());
  return u;
}

// core[p][q][r] = t projected on u along each axis, one axis at a time.
void projectedCore(
  const std::vector<double>& t, const std::vector<double>& u, int nodes, double (*core)[R][R])
{
  std::vector<double> a(std::size_t(R) * nodes * nodes, 0.0), b(std::size_t(R) * R * nodes, 0.0);
  for (int p = 0; p < R; ++p)
    for (int i = 0; i < nodes; ++i)
      for (int j = 0; j < nodes; ++j)
        for (int k = 0; k < nodes; ++k)
          a[(std::size_t(p) * nodes + std::size_t(j)) * nodes + std::size_t(k)] +=
            u[std::size_t(i) * R + std::size_t(p)] *
            t[(std::size_t(i) * nodes + std::size_t(j)) * nodes + std::size_t(k)];
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q)
      for (int j = 0; j < nodes; ++j)
        for (int k = 0; k < nodes; ++k)
          b[(std::size_t(p) * R + std::size_t(q)) * nodes + std::size_t(k)] +=
            u[std::size_t(j) * R + std::size_t(q)] *
            a[(std::size_t(p) * nodes + std::size_t(j)) * nodes + std::size_t(k)];
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q)
      for (int r = 0; r < R; ++r)
      {
        double c = 0;
        for (int k = 0; k < nodes; ++k)
          c += u[std::size_t(k) * R + std::size_t(r)] *
            b[(std::size_t(p) * R + std::size_t(q)) * nodes + std::size_t(k)];
        core[p][q][r] = c;
      }
}
} // namespace

SphVoxelFactors::SphVoxelFactors(SphKernel kernel)
{
  const SphCumulativeTable& table = SphCumulativeTable::get(kernel, 3);
  const int n = table.intervals(), nodes = n + 1;
  const std::vector<double> t = unpadded(table);
  const std::vector<double> u = leadingFactors(t, nodes);
  projectedCore(t, u, nodes, core_);
  // Exactly symmetric (as the table is): any axis may be contracted first.
  for (int p = 0; p < R; ++p)
    for (int q = p; q < R; ++q)
      for (int r = q; r < R; ++r)
      {
        const double mean = (core_[p][q][r] + core_[p][r][q] + core_[q][p][r] + core_[q][r][p] +
                              core_[r][p][q] + core_[r][q][p]) /
          6;
        core_[p][q][r] = core_[p][r][q] = core_[q][p][r] = core_[q][r][p] = core_[r][p][q] =
          core_[r][q][p] = mean;
      }
  // The whole kernel, 8 G3(1, 1, 1), is exactly 1 in the table: so in the
  // separable form too.
  double whole = 0;
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q)
      for (int r = 0; r < R; ++r)
        whole += core_[p][q][r] * u[std::size_t(n) * R + std::size_t(p)] *
          u[std::size_t(n) * R + std::size_t(q)] * u[std::size_t(n) * R + std::size_t(r)];
  const double scale = 0.125 / whole;
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q)
      for (int r = 0; r < R; ++r)
        core_[p][q][r] *= scale;
  axis_ = SphFactorCubics(u, n);
}

const SphVoxelFactors& SphVoxelFactors::get(SphKernel kernel)
{
  return builtOnce<SphVoxelFactors, 2>(
    kernelIndex(kernel), [&] { return new SphVoxelFactors(kernel); });
}

void SphVoxelFactors::voxels(const double* dx, int nx, const double* dy, int ny, const double* dz,
  int nz, double m, double* scratch, const Output& to) const
{
  contractVoxels(core_, dx, nx, dy, ny, dz, nz, m, scratch, to);
}

std::size_t SphVoxelFactors::scratchSize(int nx, int, int nz)
{
  return std::size_t(nz) * R * R + std::size_t(paddedRow(nx)) * R;
}
} // namespace jz
