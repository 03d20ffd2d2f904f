// The subhalo catalogue (SubhaloCatalogue.h).
#include "SubhaloCatalogue.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <omp.h>

#include "jz/Communicator.h"
#include "jz/Fof.h"
#include "jz/Geometry.h"
#include "jz/HaloProperties.h"

namespace jz
{
CircularProfile circularProfile(std::vector<std::pair<double, double>> rm, double G)
{
  CircularProfile c;
  std::sort(rm.begin(), rm.end());
  double total = 0;
  for (const auto& e : rm)
    total += e.second;
  double enclosed = 0;
  bool half = false;
  for (std::size_t i = 0; i < rm.size();)
  {
    const double r = rm[i].first;
    for (; i < rm.size() && rm[i].first == r; ++i)
      enclosed += rm[i].second;
    if (!half && enclosed >= 0.5 * total)
    {
      c.halfMassRadius = r;
      half = true;
    }
    if (r > 0)
    {
      const double v = std::sqrt(G * enclosed / r);
      if (v > c.vmax)
      {
        c.vmax = v;
        c.rvmax = r;
      }
    }
  }
  return c;
}

namespace
{
struct Row
{
  std::size_t group; // index into groupIds
  std::size_t found; // index into found[group]
  std::size_t temp;  // provisional row
  GlobalId rank = 0;
};
} // namespace

template <class T>
void buildSubhaloCatalogue(const SubhaloProblem<T>& p, const std::vector<GlobalId>& groupIds,
  const std::vector<std::vector<FoundSubhalo>>& found,
  const std::vector<std::vector<Index>>& memberInputs, Subhalos& out, const RunControl& control)
{
  // Provisional rows in (group, found) order, and the per-point row.
  std::vector<Row> rows;
  std::vector<GlobalId> tempId(p.numPoints, -1);
  for (std::size_t g = 0; g < found.size(); ++g)
    for (std::size_t s = 0; s < found[g].size(); ++s)
    {
      for (Index m : found[g][s].members)
        tempId[memberInputs[g][m]] = GlobalId(rows.size());
      rows.push_back({ g, s, rows.size() });
    }
  const std::size_t S = rows.size();
  SubhaloCatalogue& cat = out.catalogue;
  cat = SubhaloCatalogue();
  cat.numSubhalos = S;
  if (S == 0)
    return;
  // The FoF catalogue's columns and its centres of potential, on the subhalos.
  FofCatalogueInput<T> in;
  in.points = p.points;
  in.numPoints = p.numPoints;
  in.groupId = tempId.data();
  in.numGroups = S;
  in.masses = p.masses;
  in.velocities = p.velocities;
  in.ids = p.ids;
  in.periodic = p.periodic;
  std::copy_n(p.boxLo, 3, in.boxLo);
  std::copy_n(p.boxHi, 3, in.boxHi);
  FofCatalogue fof;
  computeFofCatalogue(in, fof, control);
  std::vector<GlobalId> ids;
  if (!p.ids)
  {
    ids.resize(p.numPoints);
    std::iota(ids.begin(), ids.end(), GlobalId(0));
  }
  HaloPropertiesInput<T> hp;
  hp.points = p.points;
  hp.numPoints = p.numPoints;
  hp.masses = p.masses;
  hp.ids = p.ids ? p.ids : ids.data();
  hp.groupId = tempId.data();
  hp.rowGroupId.resize(S);
  std::iota(hp.rowGroupId.begin(), hp.rowGroupId.end(), GlobalId(0));
  hp.rowCenterOfMass = fof.centerOfMass;
  hp.rowMass = fof.mass;
  hp.numGroups = S;
  hp.periodic = p.periodic;
  std::copy_n(p.boxLo, 3, hp.boxLo);
  std::copy_n(p.boxHi, 3, hp.boxHi);
  HaloPropertiesOptions options;
  options.potentialCentres = true;
  options.softening = p.softening;
  options.gravitationalConstant = p.gravitationalConstant;
  HaloProperties props;
  SerialCommunicator serial;
  computeHaloProperties(serial, hp, options, props, control);
  // Ranks: the main subhalo first, then by descending mass, ties smaller MostBoundId.
  std::vector<std::size_t> order(S);
  std::iota(order.begin(), order.end(), std::size_t(0));
  auto isMain = [&](const Row& r) { return found[r.group][r.found].candidate.wholeGroup; };
  std::stable_sort(order.begin(), order.end(),
    [&](std::size_t a, std::size_t b)
    {
      const Row &ra = rows[a], &rb = rows[b];
      if (ra.group != rb.group)
        return ra.group < rb.group;
      if (isMain(ra) != isMain(rb))
        return isMain(ra);
      if (fof.mass[a] != fof.mass[b])
        return fof.mass[a] > fof.mass[b];
      return props.mostBoundId[a] < props.mostBoundId[b];
    });
  std::vector<GlobalId> finalId(S);
  for (std::size_t k = 0; k < S; ++k)
  {
    finalId[order[k]] = GlobalId(k);
    rows[order[k]].rank =
      k > 0 && rows[order[k - 1]].group == rows[order[k]].group ? rows[order[k - 1]].rank + 1 : 0;
  }
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(p.numPoints); ++i)
    if (tempId[std::size_t(i)] >= 0)
    {
      out.subhaloId[std::size_t(i)] = finalId[std::size_t(tempId[std::size_t(i)])];
      out.subhaloRank[std::size_t(i)] = rows[std::size_t(tempId[std::size_t(i)])].rank;
    }
  // Rows in final order; the circular-velocity profiles (a sort each) in parallel.
  for (auto* column : { &cat.subhaloId, &cat.groupId, &cat.subhaloRank, &cat.count,
         &cat.mostBoundId })
    column->resize(S);
  for (auto* column : { &cat.mass, &cat.velocityDispersion, &cat.vmax, &cat.rvmax,
         &cat.halfMassRadius })
    column->resize(S);
  for (auto* column : { &cat.centreOfPotential, &cat.centerOfMass, &cat.meanVelocity })
    column->resize(3 * S);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (std::ptrdiff_t sk = 0; sk < std::ptrdiff_t(S); ++sk)
  {
    const std::size_t k = std::size_t(sk), t = order[k];
    const Row& r = rows[t];
    cat.subhaloId[k] = GlobalId(k);
    cat.groupId[k] = groupIds[r.group];
    cat.subhaloRank[k] = r.rank;
    cat.count[k] = fof.count[t];
    cat.mass[k] = fof.mass[t];
    cat.mostBoundId[k] = props.mostBoundId[t];
    cat.velocityDispersion[k] = fof.velocityDispersion[t];
    for (int d = 0; d < 3; ++d)
    {
      cat.centreOfPotential[3 * k + d] = props.centreOfPotential[3 * t + d];
      cat.centerOfMass[3 * k + d] = fof.centerOfMass[3 * t + d];
      cat.meanVelocity[3 * k + d] = fof.meanVelocity[3 * t + d];
    }
    // The circular-velocity profile around the centre of potential.
    std::vector<std::pair<double, double>> rm;
    rm.reserve(found[r.group][r.found].members.size());
    for (Index m : found[r.group][r.found].members)
    {
      const Index i = memberInputs[r.group][m];
      double r2 = 0;
      for (int d = 0; d < 3; ++d)
      {
        const double period = p.periodic ? p.boxHi[d] - p.boxLo[d] : 0.0;
        const double dx = nearestImageOffset(
          double(p.points[3 * i + d]) - cat.centreOfPotential[3 * k + d], period);
        r2 += dx * dx;
      }
      rm.push_back({ std::sqrt(r2), p.masses ? p.masses[i] : 1.0 });
    }
    const CircularProfile c = circularProfile(std::move(rm), p.gravitationalConstant);
    cat.vmax[k] = c.vmax;
    cat.rvmax[k] = c.rvmax;
    cat.halfMassRadius[k] = c.halfMassRadius;
  }
  // Parents: the smallest other subhalo of the group whose candidate holds this one's.
  cat.parentSubhaloId.assign(S, -1);
  for (std::size_t k = 0, first = 0; k < S; ++k)
  {
    const Row& r = rows[order[k]];
    if (r.rank == 0)
      first = k; // the group's rows are first .. first + found[r.group].size()
    const Candidate& c = found[r.group][r.found].candidate;
    if (c.wholeGroup)
      continue;
    for (std::size_t j = first; j < first + found[r.group].size(); ++j)
    {
      const Row& q = rows[order[j]];
      if (j == k)
        continue;
      const Candidate& h = found[q.group][q.found].candidate;
      const bool holds = h.start <= c.start && c.start + c.length <= h.start + h.length;
      const GlobalId best = cat.parentSubhaloId[k];
      if (holds && (best < 0 || cat.count[j] < cat.count[std::size_t(best)]))
        cat.parentSubhaloId[k] = GlobalId(j);
    }
  }
}

template void buildSubhaloCatalogue<float>(const SubhaloProblem<float>&,
  const std::vector<GlobalId>&, const std::vector<std::vector<FoundSubhalo>>&,
  const std::vector<std::vector<Index>>&, Subhalos&, const RunControl&);
template void buildSubhaloCatalogue<double>(const SubhaloProblem<double>&,
  const std::vector<GlobalId>&, const std::vector<std::vector<FoundSubhalo>>&,
  const std::vector<std::vector<Index>>&, Subhalos&, const RunControl&);
} // namespace jz
