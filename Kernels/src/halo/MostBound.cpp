// The member of lowest potential of one group (MostBound.h).
#include "halo/MostBound.h"

#include <algorithm>
#include <utility>

#include <omp.h>

#include "gravity/GravityKernelsCpu.h"
#include "halo/PotentialCentreFilter.h"
#include "halo/PotentialCentreFloatSums.h"
#include "jz/Gravity.h"
#include "jz/HaloProperties.h"

namespace jz
{
namespace
{
// Members in padded structure-of-arrays form for the vectorized direct sum.
struct MemberArrays
{
  std::vector<double> x, y, z, m;
  explicit MemberArrays(const std::vector<PotentialMember>& mem)
  {
    // Whole lanes, and one more (sumPotentialsSymmetricCpu reads past n).
    const std::size_t n =
      (mem.size() + kGravityLanes - 1) / kGravityLanes * kGravityLanes + kGravityLanes;
    x.assign(n, 0.0);
    y.assign(n, 0.0);
    z.assign(n, 0.0);
    m.assign(n, 0.0); // massless padding
    for (std::size_t i = 0; i < mem.size(); ++i)
    {
      x[i] = mem[i].x[0];
      y[i] = mem[i].x[1];
      z[i] = mem[i].x[2];
      m[i] = mem[i].m;
    }
  }
};

// U = sum_{j != i} m_j / s at member i (the potential is -G U); member i is
// made massless for its own sum (a copy of the masses per thread).
double directSum(const MemberArrays& a, std::vector<double>& mass, std::size_t i, double eps2)
{
  const double own = mass[i];
  mass[i] = 0;
  const double q[3] = { a.x[i], a.y[i], a.z[i] };
  const double u =
    sumPotentialDirectCpu(a.x.data(), a.y.data(), a.z.data(), mass.data(), a.x.size(), q, eps2);
  mass[i] = own;
  return u;
}

// Fallback of a large group the bounds cannot settle: tree potentials (θ
// 0.8) rank the members and the 64 lowest are summed exactly (exact unless
// the tree's error exceeds the gap to the 65th).
std::vector<std::pair<double, std::size_t>> treeRankedCandidates(
  const std::vector<PotentialMember>& mem, double softening, int threads)
{
  std::vector<double> xyz(3 * mem.size()), m(mem.size()), phi(mem.size());
  for (std::size_t i = 0; i < mem.size(); ++i)
  {
    std::copy(mem[i].x, mem[i].x + 3, &xyz[3 * i]);
    m[i] = mem[i].m;
  }
  GravityProblem<double> p;
  p.sources = xyz.data();
  p.numSources = mem.size();
  p.sourceMasses = m.data();
  p.softening = softening;
  p.openingAngle = 0.8; // a ranking only: the candidates are summed exactly
  p.gravitationalConstant = 1;
  RunControl control;
  control.numThreads = threads;
  computeGravity(p, GravityResults{ phi.data(), nullptr }, Backend::CPU, control);
  std::vector<std::size_t> order(mem.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  const std::size_t keep = std::min<std::size_t>(64, order.size());
  std::partial_sort(order.begin(), order.begin() + keep, order.end(),
    [&](std::size_t a, std::size_t b) { return phi[a] < phi[b] || (phi[a] == phi[b] && a < b); });
  std::vector<std::pair<double, std::size_t>> out;
  for (std::size_t c = 0; c < keep; ++c)
    out.emplace_back(kInfinity, order[c]); // no bound: all summed
  return out;
}

// Exact sums of the candidates, the highest bound first (blocks of them in
// parallel for a team), until the next bound is below the best exact U by
// the bounds' margin; the lowest potential (ties: the smaller index). Gives
// up (returns false) after maxSums sums. The sums of a block are taken in
// candidate order, one at a time, as a single thread takes them: the block
// size (the team's) changes neither the answer nor where the sums give up.
bool bestOfCandidates(const MemberArrays& arrays,
  const std::vector<std::pair<double, std::size_t>>& candidates, double eps2, double G, int threads,
  std::size_t maxSums, std::size_t& result, double& sums)
{
  std::vector<double> exact(candidates.size());
  std::size_t best = 0, done = 0;
  double bestU = -kInfinity;
  const std::size_t block = threads > 1 ? std::size_t(16 * threads) : 1;
  std::vector<std::vector<double>> mass(std::size_t(std::max(1, threads)));
  mass[0] = arrays.m;
  while (done < candidates.size())
  {
    const std::size_t end = std::min(candidates.size(), done + block);
    if (end - done == 1)
      exact[done] = directSum(arrays, mass[0], candidates[done].second, eps2);
    else
#pragma omp parallel num_threads(threads)
    {
      std::vector<double>& mine = mass[std::size_t(omp_get_thread_num())];
      if (mine.empty())
        mine = arrays.m;
#pragma omp for
      for (long long c = (long long)done; c < (long long)end; ++c)
        exact[c] = directSum(arrays, mine, candidates[c].second, eps2);
    }
    for (; done < end; ++done)
    {
      if (candidates[done].first < bestU * (1 - kCentreBoundMargin))
        break;
      if (done >= maxSums)
        return false;
      const double phi = -G * exact[done], bestPhi = -G * exact[best];
      if (done == 0 || phi < bestPhi ||
        (phi == bestPhi && candidates[done].second < candidates[best].second))
        best = done;
      bestU = std::max(bestU, exact[done]);
    }
    if (done < end)
      break;
  }
  sums += double(done);
  result = candidates[best].second;
  return true;
}

// Exact sums for the candidates the bounds leave beyond this many: the
// group has no pronounced minimum, and the tree ranking takes over.
constexpr std::size_t kMaxCentreSums = 1024;

// Groups of more members than kFloatCentreFrom, up to kFilterCentreFrom,
// are filtered by a single-precision pass over all pairs
// (PotentialCentreFloatSums.h) before any exact sum: a float pair costs a
// fraction of a double one, and below kFloatCentreFrom the double pass
// costs as much as the filter. Larger groups, up to kFilterCentreTo, are
// filtered by leaves (PotentialCentreFilter.h): the leaves' cost grows more
// slowly than the float pass's n^2 pairs, and the two cost the same on cusps
// at kFilterCentreFrom. Above kFilterCentreTo the leaves' (n / 20)^2 leaf
// pairs would cost more than the branch and bound.
constexpr std::size_t kFloatCentreFrom = 32;
constexpr std::size_t kFilterCentreFrom = 2048;
constexpr std::size_t kFilterCentreTo = 65536;

} // namespace

std::size_t mostBound(const std::vector<PotentialMember>& mem, double softening, double G,
  int threads, PotentialCentreStats* stats)
{
  const double eps2 = softening * softening;
  const MemberArrays arrays(mem);
  std::vector<std::pair<double, std::size_t>> candidates;
  std::size_t best = 0;
  if (mem.size() > kFilterCentreFrom && mem.size() <= kFilterCentreTo &&
    potentialCentreCandidatesByLeaves(arrays.x.data(), arrays.y.data(), arrays.z.data(),
      arrays.m.data(), mem.size(), eps2, std::min(mem.size() / 8, kMaxCentreSums), candidates,
      stats) &&
    !candidates.empty() && // never (the best member is one), but no index past the end
    bestOfCandidates(arrays, candidates, eps2, G, threads, kMaxCentreSums, best, stats->exact))
    return best;
  if (mem.size() > kFloatCentreFrom && mem.size() <= kFilterCentreFrom &&
    potentialCentreCandidatesByFloatSums(arrays.x.data(), arrays.y.data(), arrays.z.data(),
      arrays.m.data(), mem.size(), eps2, mem.size() / 8, candidates) &&
    !candidates.empty() &&
    bestOfCandidates(arrays, candidates, eps2, G, threads, kMaxCentreSums, best, stats->exact))
    return best;
  if (mem.size() <= kDirectCentreLimit)
  {
    std::vector<double> u(arrays.x.size());
    sumPotentialsSymmetricCpu(arrays.x.data(), arrays.y.data(), arrays.z.data(), arrays.m.data(),
      mem.size(), eps2, u.data());
    best = 0;
    for (std::size_t i = 1; i < mem.size(); ++i)
      if (-G * u[i] < -G * u[best]) // ties keep the smaller id
        best = i;
    return best;
  }
  if (potentialCentreCandidates(arrays.x.data(), arrays.y.data(), arrays.z.data(), arrays.m.data(),
        mem.size(), eps2, candidates, stats) &&
    bestOfCandidates(arrays, candidates, eps2, G, threads, kMaxCentreSums, best, stats->exact))
    return best;
  stats->fallbacks += 1;
  bestOfCandidates(arrays, treeRankedCandidates(mem, softening, threads), eps2, G, threads,
    std::size_t(-1), best, stats->exact);
  return best;
}

std::size_t mostBoundAmong(const std::vector<PotentialMember>& mem,
  const std::vector<std::size_t>& candidates, double softening, double G, int threads)
{
  const MemberArrays arrays(mem);
  std::vector<std::pair<double, std::size_t>> unbounded;
  for (const std::size_t c : candidates)
    unbounded.emplace_back(kInfinity, c); // no bound: all summed
  std::size_t best = 0;
  double sums = 0;
  bestOfCandidates(
    arrays, unbounded, softening * softening, G, threads, std::size_t(-1), best, sums);
  return best;
}
} // namespace jz
