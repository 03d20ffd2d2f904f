// The friends-of-friends halo catalogue (computeFofCatalogue in Fof.h, paper
// section IV-B): count, mass, periodic-aware centre of mass, inertia radius,
// mean velocity and velocity dispersion per kept group, in double.
//
// Two passes over the points: the first accumulates count, mass, the mass-
// weighted offset from a reference member (the group's member with the
// smallest global id, nearest image when periodic) and the momentum; the second the
// squared distances from the centre of mass and the squared velocity
// deviations. Threads accumulate into private arrays that are summed in
// thread order, so results are deterministic for a given thread count.
#include <cmath>
#include <vector>

#include <omp.h>

#include "jz/Fof.h"

namespace jz
{
namespace
{
// Offset of x from ref, nearest image when periodic (points may lie any
// number of periods outside the box); period <= 0: plain difference.
inline double offset(double x, double ref, double period)
{
  double d = x - ref;
  if (period > 0)
    d -= period * std::nearbyint(d / period);
  return d;
}

inline double wrapInto(double x, double lo, double period)
{
  if (period <= 0)
    return x;
  double w = x - period * std::floor((x - lo) / period);
  if (w >= lo + period || w < lo)
    w = lo;
  return w;
}
} // namespace

template <class T>
void computeFofCatalogue(
  const FofCatalogueInput<T>& in, FofCatalogue& cat, const RunControl& control)
{
  const std::size_t G = in.numGroups;
  const long long n = (long long)in.numPoints;
  // Private per-thread accumulators only while they stay small next to the
  // points (many tiny groups, e.g. MinimumGroupSize 1, accumulate serially).
  const int maxThreads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  const int numThreads = G * std::size_t(maxThreads) <= std::size_t(n) / 8 ? maxThreads : 1;
  const bool vel = in.velocities != nullptr;
  double period[3] = { 0, 0, 0 };
  if (in.periodic)
    for (int d = 0; d < 3; ++d)
      period[d] = in.boxHi[d] - in.boxLo[d];

  cat = FofCatalogue();
  cat.numGroups = G;
  cat.hasVelocities = vel;
  cat.count.assign(G, 0);
  cat.mass.assign(G, 0.0);
  cat.centerOfMass.assign(3 * G, 0.0);
  cat.inertiaRadius.assign(G, 0.0);
  if (vel)
  {
    cat.meanVelocity.assign(3 * G, 0.0);
    cat.velocityDispersion.assign(G, 0.0);
  }
  if (G == 0 || n == 0)
    return;

  // Reference member per group: the first in input order.
  // Reference member of each group: the smallest global id.
  auto key = [&](long long i) { return in.ids ? in.ids[i] : GlobalId(i); };
  std::vector<long long> ref(G, n);
  for (long long i = 0; i < n; ++i)
  {
    const GlobalId g = in.groupId[i];
    if (g >= 0 && std::size_t(g) < G && (ref[g] == n || key(i) < key(ref[g])))
      ref[g] = i;
  }

  // Pass 1: count, mass, sum m*dx, sum m*v.
  constexpr int kW1 = 8; // count, mass, 3 dx, 3 v
  std::vector<std::vector<double>> part(numThreads);
#pragma omp parallel num_threads(numThreads)
  {
    std::vector<double>& acc = part[omp_get_thread_num()];
    acc.assign(kW1 * G, 0.0);
#pragma omp for schedule(static)
    for (long long i = 0; i < n; ++i)
    {
      const GlobalId g = in.groupId[i];
      if (g < 0 || std::size_t(g) >= G)
        continue;
      const double m = in.masses ? in.masses[i] : 1.0;
      const T* p = in.points + 3 * i;
      const T* r = in.points + 3 * ref[g];
      double* a = acc.data() + kW1 * g;
      a[0] += 1;
      a[1] += m;
      for (int d = 0; d < 3; ++d)
        a[2 + d] += m * offset(double(p[d]), double(r[d]), period[d]);
      if (vel)
        for (int d = 0; d < 3; ++d)
          a[5 + d] += m * in.velocities[3 * i + d];
    }
  }
  std::vector<double> sum(kW1 * G, 0.0);
  for (int t = 0; t < numThreads; ++t)
    for (std::size_t k = 0; k < kW1 * G; ++k)
      sum[k] += part[t][k];
  // Centre of mass as an offset from the reference (for pass 2) and wrapped.
  std::vector<double> comOffset(3 * G);
  for (std::size_t g = 0; g < G; ++g)
  {
    const double* a = sum.data() + kW1 * g;
    cat.count[g] = GlobalId(a[0] + 0.5);
    cat.mass[g] = a[1];
    const double M = a[1];
    const T* r = in.points + 3 * ref[g];
    for (int d = 0; d < 3; ++d)
    {
      comOffset[3 * g + d] = M != 0 ? a[2 + d] / M : 0.0;
      cat.centerOfMass[3 * g + d] =
        wrapInto(double(r[d]) + comOffset[3 * g + d], in.boxLo[d], period[d]);
      if (vel)
        cat.meanVelocity[3 * g + d] = M != 0 ? a[5 + d] / M : 0.0;
    }
  }
  if (control.progress && !control.progress(0.5))
    throw Aborted();

  // Pass 2: sum m |x - c|^2 and sum m |v - v_mean|^2.
  constexpr int kW2 = 2;
#pragma omp parallel num_threads(numThreads)
  {
    std::vector<double>& acc = part[omp_get_thread_num()];
    acc.assign(kW2 * G, 0.0);
#pragma omp for schedule(static)
    for (long long i = 0; i < n; ++i)
    {
      const GlobalId g = in.groupId[i];
      if (g < 0 || std::size_t(g) >= G)
        continue;
      const double m = in.masses ? in.masses[i] : 1.0;
      const T* p = in.points + 3 * i;
      const T* r = in.points + 3 * ref[g];
      double* a = acc.data() + kW2 * g;
      double s = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double x = offset(double(p[d]), double(r[d]), period[d]) - comOffset[3 * g + d];
        s += x * x;
      }
      a[0] += m * s;
      if (vel)
      {
        double sv = 0;
        for (int d = 0; d < 3; ++d)
        {
          const double v = in.velocities[3 * i + d] - cat.meanVelocity[3 * g + d];
          sv += v * v;
        }
        a[1] += m * sv;
      }
    }
  }
  for (std::size_t g = 0; g < G; ++g)
  {
    double s = 0, sv = 0;
    for (int t = 0; t < numThreads; ++t)
    {
      s += part[t][kW2 * g];
      sv += part[t][kW2 * g + 1];
    }
    const double M = cat.mass[g];
    cat.inertiaRadius[g] = M > 0 ? std::sqrt(s / M) : 0.0;
    if (vel)
      cat.velocityDispersion[g] = M > 0 ? std::sqrt(sv / (3 * M)) : 0.0;
  }
  if (control.progress && !control.progress(1.0))
    throw Aborted();
}

template void computeFofCatalogue<float>(
  const FofCatalogueInput<float>&, FofCatalogue&, const RunControl&);
template void computeFofCatalogue<double>(
  const FofCatalogueInput<double>&, FofCatalogue&, const RunControl&);
} // namespace jz
