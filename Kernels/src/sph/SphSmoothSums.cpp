// SPHSmooth's sums (SphSmoothSums.h).
#include "sph/SphSmoothSums.h"

#include <algorithm>
#include <cmath>

#include "common/Progress.h"
#include "jz/DensityKernels.h"

namespace jz
{
namespace
{
// What every field's sums need of one neighbour j of particle i.
struct NeighbourTerm
{
  Index row;
  double mass;
  double weight;  // (m_j / rho_j) W_ij
  double grad[3]; // (m_j / rho_j) grad_i W_ij
};

// (m_j / rho_j), 0 where rho_j is 0 or +inf (a neighbour in a clump of
// coincident points has no volume).
double volumeOf(double mass, double rho)
{
  return rho > 0 && std::isfinite(rho) ? mass / rho : 0.0;
}

template <class T>
void neighbourTerms(const SphSmoothParticles<T>& p, Index i, const GlobalId* rows, int k, double h,
  const Periodicity& per, NeighbourTerm* terms)
{
  double xi[3];
  p.position(i, xi);
  for (int s = 0; s < k; ++s)
  {
    NeighbourTerm& t = terms[s];
    t.row = Index(rows[s]);
    t.mass = p.mass(t.row);
    double xj[3], dx[3];
    p.position(t.row, xj);
    double r2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      dx[d] = nearestImageOffset(xi[d] - xj[d], per.length[d]);
      r2 += dx[d] * dx[d];
    }
    const double r = std::sqrt(r2);
    const double v = h > 0 ? volumeOf(t.mass, p.rho(t.row)) : 0.0;
    t.weight = v > 0 ? v * cubicSplineW(r, h) : 0.0;
    const double g = v > 0 && r > 0 ? v * cubicSplineDWdr(r, h) / r : 0.0;
    for (int d = 0; d < 3; ++d)
      t.grad[d] = g * dx[d];
  }
}

// Smoothed value of field f at particle i into `smoothed` (c components):
// the kernel sum, or where h_i = 0 the mass-weighted mean of the neighbours.
template <class T>
void smoothedValue(const SphSmoothParticles<T>& p, const NeighbourTerm* terms, int k, bool h0,
  int f, int offset, int c, double* smoothed)
{
  std::fill(smoothed, smoothed + c, 0.0);
  double massSum = 0;
  for (int s = 0; s < k; ++s)
  {
    const double* a = p.values(terms[s].row, f, offset);
    const double w = h0 ? terms[s].mass : terms[s].weight;
    for (int l = 0; l < c; ++l)
      smoothed[l] += w * a[l];
    massSum += terms[s].mass;
  }
  if (h0)
    for (int l = 0; l < c; ++l)
      smoothed[l] = massSum != 0 ? smoothed[l] / massSum : 0.0;
}

// The derivative estimates of field f at particle i: the gradient of a
// 1-component field, divergence and curl of a 3-component one.
template <class T>
void derivatives(const SphSmoothParticles<T>& p, Index i, const NeighbourTerm* terms, int k, int f,
  int offset, int c, const SphFieldResults& out)
{
  const double* ai = p.values(i, f, offset);
  double grad[3] = { 0, 0, 0 }, div = 0, curl[3] = { 0, 0, 0 };
  for (int s = 0; s < k; ++s)
  {
    const double* aj = p.values(terms[s].row, f, offset);
    const double* g = terms[s].grad;
    if (c == 1)
    {
      for (int d = 0; d < 3; ++d)
        grad[d] += (aj[0] - ai[0]) * g[d];
      continue;
    }
    const double da[3] = { aj[0] - ai[0], aj[1] - ai[1], aj[2] - ai[2] };
    div += da[0] * g[0] + da[1] * g[1] + da[2] * g[2];
    curl[0] += g[1] * da[2] - g[2] * da[1];
    curl[1] += g[2] * da[0] - g[0] * da[2];
    curl[2] += g[0] * da[1] - g[1] * da[0];
  }
  if (out.gradient)
    std::copy(grad, grad + 3, out.gradient + 3 * std::size_t(i));
  if (out.divergence)
    out.divergence[i] = div;
  if (out.curl)
    std::copy(curl, curl + 3, out.curl + 3 * std::size_t(i));
}

// sqrt(sum_j m_j |A_j - smoothed|^2 / sum_j m_j), 0 without mass.
template <class T>
double dispersion(const SphSmoothParticles<T>& p, const NeighbourTerm* terms, int k, int f,
  int offset, int c, const double* smoothed)
{
  double sum = 0, massSum = 0;
  for (int s = 0; s < k; ++s)
  {
    const double* a = p.values(terms[s].row, f, offset);
    double d2 = 0;
    for (int l = 0; l < c; ++l)
      d2 += (a[l] - smoothed[l]) * (a[l] - smoothed[l]);
    sum += terms[s].mass * d2;
    massSum += terms[s].mass;
  }
  return massSum != 0 ? std::sqrt(std::max(0.0, sum / massSum)) : 0.0;
}
} // namespace

template <class T>
void sphSmoothSums(const SphSmoothParticles<T>& p, const GlobalId* neighbourRows, int k, const T* h,
  const Periodicity& per, const std::vector<Index>& order, const std::vector<SphFieldResults>& out,
  const RunControl& control)
{
  const std::vector<SphField>& fields = *p.fields;
  int maxComponents = 1;
  for (const SphField& f : fields)
    maxComponents = std::max(maxComponents, f.components);
  // Blocks of particles between progress reports (made on this thread).
  constexpr long long kBlock = 1 << 16;
  const long long n = (long long)p.numLocal;
  for (long long b0 = 0; b0 < n; b0 += kBlock)
  {
    const long long b1 = std::min(n, b0 + kBlock);
#pragma omp parallel
    {
      std::vector<NeighbourTerm> terms(static_cast<std::size_t>(k));
      std::vector<double> smoothed(static_cast<std::size_t>(maxComponents));
#pragma omp for schedule(dynamic, 256)
      for (long long ii = b0; ii < b1; ++ii)
      {
        const Index i = order[std::size_t(ii)];
        const double hi = double(h[i]);
        neighbourTerms(
          p, i, neighbourRows + std::size_t(i) * std::size_t(k), k, hi, per, terms.data());
        int offset = 0;
        for (std::size_t f = 0; f < fields.size(); ++f)
        {
          const int c = fields[f].components;
          const SphFieldResults& o = out[f];
          smoothedValue(p, terms.data(), k, !(hi > 0), int(f), offset, c, smoothed.data());
          if (o.smoothed)
            std::copy(smoothed.begin(), smoothed.begin() + c, o.smoothed + std::size_t(i) * c);
          if (o.gradient || o.divergence || o.curl)
            derivatives(p, i, terms.data(), k, int(f), offset, c, o);
          if (o.dispersion)
            o.dispersion[i] = dispersion(p, terms.data(), k, int(f), offset, c, smoothed.data());
          offset += c;
        }
      }
    }
    reportProgress(control, double(b1) / double(n));
  }
}

template void sphSmoothSums(const SphSmoothParticles<float>&, const GlobalId*, int, const float*,
  const Periodicity&, const std::vector<Index>&, const std::vector<SphFieldResults>&,
  const RunControl&);
template void sphSmoothSums(const SphSmoothParticles<double>&, const GlobalId*, int, const double*,
  const Periodicity&, const std::vector<Index>&, const std::vector<SphFieldResults>&,
  const RunControl&);
} // namespace jz
