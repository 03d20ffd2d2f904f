// computeSphSmooth: validation, the kNN (distributed over the ranks), the
// neighbours' records from other ranks, and the sums.
#include "jz/SphSmooth.h"

#include <algorithm>
#include <new>
#include <string>

#include "common/Progress.h"
#include "jz/Distributed.h"
#include "jz/StageTimer.h"
#include "jz/Validate.h"
#include "knn/KnnInFrame.h"
#include "sph/SphSmoothExchange.h"
#include "sph/SphSmoothIdIndex.h"
#include "sph/SphSmoothSums.h"
#include "tree/ZSortCpu.h"

namespace jz
{
namespace
{
// This rank's rules beyond the kNN's: buffers, finite field values, and
// outputs that match the fields' component counts.
template <class T>
std::string smoothProblemError(const SphSmoothProblem<T>& p, const SphSmoothResults<T>& r)
{
  if (r.fields.size() != p.fields.size())
    return "one result entry per smoothed field is needed";
  if (p.numPoints > 0 && (!r.smoothingLength || !r.density))
    return "SmoothingLength and Density buffers are needed";
  for (std::size_t f = 0; f < p.fields.size(); ++f)
  {
    const SphField& field = p.fields[f];
    const SphFieldResults& out = r.fields[f];
    if (field.components < 1)
      return field.name + " has no components";
    if (p.numPoints > 0 && !field.values)
      return field.name + " has no values";
    if ((out.gradient && field.components != 1) ||
      ((out.divergence || out.curl || out.dispersion) && field.components != 3))
      return "the derivatives asked of " + field.name + " do not fit its " +
        std::to_string(field.components) + " components";
    if (p.numPoints > 0)
    {
      const std::string e =
        nonFiniteValueError(field.values, p.numPoints, field.components, field.name);
      if (!e.empty())
        return e;
    }
  }
  return {};
}

// The neighbour ids of the kNN turned, in place, into rows of `particles`:
// local rows through the ids' index, and the ids no local particle has
// (sorted, unique) in `wanted`, their rows numLocal + their place there.
// ids null: the ids are the local rows already (one rank).
std::vector<GlobalId> localRows(const GlobalId* ids, std::size_t n, std::vector<GlobalId>& nb)
{
  std::vector<GlobalId> wanted;
  if (!ids)
    return wanted;
  const SphSmoothIdIndex index(ids, n);
  const long long m = (long long)nb.size();
#pragma omp parallel
  {
    std::vector<GlobalId> mine;
#pragma omp for schedule(static)
    for (long long s = 0; s < m; ++s)
    {
      const Index row = index.find(nb[std::size_t(s)]);
      if (row == SphSmoothIdIndex::kMissing)
        mine.push_back(nb[std::size_t(s)]);
    }
#pragma omp critical
    wanted.insert(wanted.end(), mine.begin(), mine.end());
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
#pragma omp parallel for schedule(static)
  for (long long s = 0; s < m; ++s)
  {
    GlobalId& id = nb[std::size_t(s)];
    const Index row = index.find(id);
    id = row != SphSmoothIdIndex::kMissing
      ? GlobalId(row)
      : GlobalId(n) + (std::lower_bound(wanted.begin(), wanted.end(), id) - wanted.begin());
  }
  return wanted;
}
} // namespace

template <class T>
RunInfo computeSphSmooth(const SphSmoothProblem<T>& problem, const SphSmoothResults<T>& results,
  Communicator& comm, Backend backend, const RunControl& control)
{
  agreeOnErrors(comm, smoothProblemError(problem, results));
  // K against all points before K ids per point are allocated.
  const std::int64_t total = allSum(comm, std::int64_t(problem.numPoints));
  if (total > 0)
    agreeOnErrors(comm, neighbourCountError(problem.k, total));
  // Without fields only h and rho are wanted: no neighbour lists.
  const bool anyField = !problem.fields.empty();
  std::vector<GlobalId> neighbours;
  std::string allocationError =
    anyField ? neighbourListsMemoryError(problem.numPoints, problem.k, sizeof(GlobalId)) : "";
  try
  {
    if (anyField && allocationError.empty())
      neighbours.resize(problem.numPoints * std::size_t(std::max(problem.k, 0)));
  }
  catch (const std::bad_alloc&)
  {
    allocationError = "not enough memory for the " + std::to_string(problem.k) +
      " neighbour ids of each of the " + std::to_string(problem.numPoints) + " points";
  }
  agreeOnErrors(comm, allocationError);
  KnnProblem<T> knn;
  knn.sources = problem.points;
  knn.numSources = problem.numPoints;
  knn.sourceMasses = problem.masses;
  knn.sourceIds = problem.ids;
  knn.k = problem.k;
  knn.periodic = problem.periodic;
  std::copy(problem.boxLo, problem.boxLo + 3, knn.boxLo);
  std::copy(problem.boxHi, problem.boxHi + 3, knn.boxHi);
  KnnResults<T> knnResults;
  knnResults.smoothingLength = results.smoothingLength;
  knnResults.density = results.density;
  knnResults.neighborIds = neighbours.empty() ? nullptr : neighbours.data();
  RunControl knnControl = control;
  knnControl.progress = progressSpan(control, 0.0, 0.7);
  RunInfo info = computeKnnDistributed(knn, knnResults, comm, backend, knnControl);
  if (total == 0 || !anyField)
    return info;
  // A density the output precision cannot hold (the kNN's warning) is what
  // the sums read: its particle's terms are lost to its neighbours.
  const std::int64_t lost =
    allSum(comm, std::int64_t(densitiesOutOfRange(knn, knnResults, problem.numPoints)));
  if (lost > 0)
    info.warnings.push_back(std::to_string(lost) +
      " particle(s) have a Density outside the output precision's range: the smoothed arrays "
      "and derivatives around them miss their terms; input points in float64, or other length "
      "or mass units avoid this");

  SphSmoothParticles<T> particles;
  particles.numLocal = problem.numPoints;
  particles.points = problem.points;
  particles.masses = problem.masses;
  particles.density = results.density;
  particles.fields = &problem.fields;
  for (const SphField& f : problem.fields)
    particles.totalComponents += f.components;
  particles.periodicity = Periodicity::of(problem.periodic, problem.boxLo, problem.boxHi);
  std::copy(problem.boxLo, problem.boxLo + 3, particles.boxLo);

  StageTimer exchange(&info, "neighbour records");
  std::vector<GlobalId> wanted;
  std::string error;
  try
  {
    wanted = localRows(problem.ids, problem.numPoints, neighbours);
  }
  catch (const Error& e)
  {
    error = e.what();
  }
  agreeOnErrors(comm, error);
  if (comm.size() > 1)
    fetchSphSmoothGhosts(particles, problem.ids, wanted, comm);
  else if (!wanted.empty())
    throw Error("a neighbour id is not among the points");
  exchange.stop();
  info.counters.emplace_back("neighbour records received", double(wanted.size()));

  StageTimer sums(&info, "smoothing sums");
  JointPoints<T> joint{ problem.points, Index(problem.numPoints), nullptr, 0, particles.periodicity,
    { particles.boxLo[0], particles.boxLo[1], particles.boxLo[2] } };
  const std::vector<Index> order = zSortOrder(joint);
  RunControl sumControl = control;
  sumControl.progress = progressSpan(control, 0.7, 0.3);
  agreeOnRunErrors(comm,
    [&]
    {
      sphSmoothSums(particles, neighbours.data(), problem.k, results.smoothingLength,
        particles.periodicity, order, results.fields, sumControl);
    });
  return info;
}

template RunInfo computeSphSmooth<float>(const SphSmoothProblem<float>&,
  const SphSmoothResults<float>&, Communicator&, Backend, const RunControl&);
template RunInfo computeSphSmooth<double>(const SphSmoothProblem<double>&,
  const SphSmoothResults<double>&, Communicator&, Backend, const RunControl&);
} // namespace jz
