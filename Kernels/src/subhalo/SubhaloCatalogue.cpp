// The subhalo catalogue (SubhaloCatalogue.h).
#include "SubhaloCatalogue.h"

#include <algorithm>
#include <numeric>

#include <omp.h>

namespace jz
{
namespace
{
struct Row
{
  std::size_t group; // index into groupIds
  std::size_t found; // index into found[group]
  GlobalId rank = 0;
};
} // namespace

void buildSubhaloCatalogue(const std::vector<GlobalId>& groupIds,
  const std::vector<std::vector<FoundSubhalo>>& found,
  const std::vector<std::vector<Index>>& memberInputs, Subhalos& out, const RunControl& control)
{
  std::vector<Row> rows;
  for (std::size_t g = 0; g < found.size(); ++g)
    for (std::size_t s = 0; s < found[g].size(); ++s)
      rows.push_back({ g, s });
  const std::size_t S = rows.size();
  SubhaloCatalogue& cat = out.catalogue;
  cat = SubhaloCatalogue();
  cat.numSubhalos = S;
  if (S == 0)
    return;
  auto subhalo = [&](const Row& r) -> const FoundSubhalo& { return found[r.group][r.found]; };
  // Ranks: the main subhalo first, then by descending mass, ties smaller MostBoundId.
  std::vector<std::size_t> order(S);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
    [&](std::size_t a, std::size_t b)
    {
      const FoundSubhalo &sa = subhalo(rows[a]), &sb = subhalo(rows[b]);
      if (rows[a].group != rows[b].group)
        return rows[a].group < rows[b].group;
      if (sa.candidate.wholeGroup != sb.candidate.wholeGroup)
        return sa.candidate.wholeGroup;
      if (sa.row.mass != sb.row.mass)
        return sa.row.mass > sb.row.mass;
      return sa.row.mostBoundId < sb.row.mostBoundId;
    });
  for (std::size_t k = 0; k < S; ++k)
    rows[order[k]].rank =
      k > 0 && rows[order[k - 1]].group == rows[order[k]].group ? rows[order[k - 1]].rank + 1 : 0;
  for (auto* column :
    { &cat.subhaloId, &cat.groupId, &cat.subhaloRank, &cat.count, &cat.mostBoundId })
    column->resize(S);
  for (auto* column :
    { &cat.mass, &cat.velocityDispersion, &cat.vmax, &cat.rvmax, &cat.halfMassRadius })
    column->resize(S);
  for (auto* column : { &cat.centreOfPotential, &cat.centerOfMass, &cat.meanVelocity })
    column->resize(3 * S);
  // Rows in final order, and their members' per-point ids (groups hold
  // disjoint points).
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (std::ptrdiff_t sk = 0; sk < std::ptrdiff_t(S); ++sk)
  {
    const std::size_t k = std::size_t(sk);
    const Row& r = rows[order[k]];
    const FoundSubhalo& s = subhalo(r);
    const SubhaloRow& c = s.row;
    cat.subhaloId[k] = GlobalId(k);
    cat.groupId[k] = groupIds[r.group];
    cat.subhaloRank[k] = r.rank;
    cat.count[k] = c.count;
    cat.mass[k] = c.mass;
    cat.mostBoundId[k] = c.mostBoundId;
    cat.velocityDispersion[k] = c.velocityDispersion;
    cat.vmax[k] = c.vmax;
    cat.rvmax[k] = c.rvmax;
    cat.halfMassRadius[k] = c.halfMassRadius;
    std::copy_n(c.centreOfPotential, 3, &cat.centreOfPotential[3 * k]);
    std::copy_n(c.centerOfMass, 3, &cat.centerOfMass[3 * k]);
    std::copy_n(c.meanVelocity, 3, &cat.meanVelocity[3 * k]);
    for (const Index m : s.members)
    {
      const Index i = memberInputs[r.group][m];
      out.subhaloId[i] = GlobalId(k);
      out.subhaloRank[i] = r.rank;
    }
  }
  // Parents: the smallest other subhalo of the group whose candidate holds this one's.
  cat.parentSubhaloId.assign(S, -1);
  for (std::size_t k = 0, first = 0; k < S; ++k)
  {
    const Row& r = rows[order[k]];
    if (r.rank == 0)
      first = k; // the group's rows are first .. first + found[r.group].size()
    const Candidate& c = subhalo(r).candidate;
    if (c.wholeGroup)
      continue;
    for (std::size_t j = first; j < first + found[r.group].size(); ++j)
    {
      if (j == k)
        continue;
      const Candidate& h = subhalo(rows[order[j]]).candidate;
      const bool holds = h.start <= c.start && c.start + c.length <= h.start + h.length;
      const GlobalId best = cat.parentSubhaloId[k];
      if (holds && (best < 0 || cat.count[j] < cat.count[std::size_t(best)]))
        cat.parentSubhaloId[k] = GlobalId(j);
    }
  }
}
} // namespace jz
