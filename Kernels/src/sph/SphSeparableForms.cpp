#include "SphSeparableForms.h"

#include <cstddef>
#include <utility>
#include <vector>

#include "SphFactorCubics.h"
#include "SphKernelTables.h"
#include "common/LeadingEigenpairs.h"

namespace jz
{
namespace
{
constexpr int R = SphFactorCubics::kRank;

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
      // Eight running sums, lane e % 8 each, then added in order: the same
      // bits whatever the machine's vectors, without one sum's chain of
      // dependent additions.
      double lane[8] = {};
      std::size_t e = 0;
      for (; e + 8 <= plane; e += 8)
        for (int l = 0; l < 8; ++l)
          lane[l] += x[e + std::size_t(l)] * y[e + std::size_t(l)];
      for (; e < plane; ++e)
        lane[e % 8] += x[e] * y[e];
      double s = 0;
      for (int l = 0; l < 8; ++l)
        s += lane[l];
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

// The forms as jz_bake_sph_forms wrote them (kBaked*: [kernelIndex][...]).
#include "SphBakedForms.inc"

SphSeparableForm bakedForm(int intervals, const double* u, const double* weights, int numWeights)
{
  SphSeparableForm form;
  form.intervals = intervals;
  form.u.assign(u, u + std::size_t(intervals + 1) * R);
  form.weights.assign(weights, weights + numWeights);
  return form;
}
} // namespace

SphSeparableForm computeColumnForm(SphKernel kernel)
{
  const SphCumulativeTable& table = SphCumulativeTable::get(kernel, 2);
  const int n = table.intervals(), nodes = n + 1;
  const std::size_t s = std::size_t(table.stride()), count = std::size_t(nodes);
  // G2 at the nodes 0 .. n of each axis (the padded table without its padding).
  std::vector<double> g(count * count);
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t j = 0; j < count; ++j)
      g[i * count + j] = table.nodes()[(i + 1) * s + (j + 1)];
  double values[R];
  std::vector<double> u(count * R);
  leadingEigenpairs(g.data(), nodes, R, values, u.data());
  // The whole kernel, 4 G2(1, 1), is exactly 1 in the table: so here too.
  double whole = 0;
  for (int p = 0; p < R; ++p)
    whole +=
      values[p] * u[std::size_t(n) * R + std::size_t(p)] * u[std::size_t(n) * R + std::size_t(p)];
  SphSeparableForm form;
  form.intervals = n;
  form.weights.resize(R);
  for (int p = 0; p < R; ++p)
    form.weights[std::size_t(p)] = values[p] * (0.25 / whole);
  form.u = std::move(u);
  return form;
}

SphSeparableForm computeVolumeForm(SphKernel kernel)
{
  const SphCumulativeTable& table = SphCumulativeTable::get(kernel, 3);
  const int n = table.intervals(), nodes = n + 1;
  const std::vector<double> t = unpadded(table);
  const std::vector<double> u = leadingFactors(t, nodes);
  double core[R][R][R];
  projectedCore(t, u, nodes, core);
  // Exactly symmetric (as the table is): any axis may be contracted first.
  for (int p = 0; p < R; ++p)
    for (int q = p; q < R; ++q)
      for (int r = q; r < R; ++r)
      {
        const double mean = (core[p][q][r] + core[p][r][q] + core[q][p][r] + core[q][r][p] +
                              core[r][p][q] + core[r][q][p]) /
          6;
        core[p][q][r] = core[p][r][q] = core[q][p][r] = core[q][r][p] = core[r][p][q] =
          core[r][q][p] = mean;
      }
  // The whole kernel, 8 G3(1, 1, 1), is exactly 1 in the table: so in the
  // separable form too.
  double whole = 0;
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q)
      for (int r = 0; r < R; ++r)
        whole += core[p][q][r] * u[std::size_t(n) * R + std::size_t(p)] *
          u[std::size_t(n) * R + std::size_t(q)] * u[std::size_t(n) * R + std::size_t(r)];
  const double scale = 0.125 / whole;
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q)
      for (int r = 0; r < R; ++r)
        core[p][q][r] *= scale;
  SphSeparableForm form;
  form.intervals = n;
  form.u = u;
  form.weights.assign(&core[0][0][0], &core[0][0][0] + R * R * R);
  return form;
}

SphSeparableForm bakedColumnForm(SphKernel kernel)
{
  const int k = kernelIndex(kernel);
  return bakedForm(kBakedColumnIntervals, kBakedColumnU[k], kBakedColumnWeights[k], R);
}

SphSeparableForm bakedVolumeForm(SphKernel kernel)
{
  const int k = kernelIndex(kernel);
  return bakedForm(kBakedVolumeIntervals, kBakedVolumeU[k], kBakedVolumeCore[k], R * R * R);
}
} // namespace jz
