// computeSubhalosDistributed: densities from the distributed kNN, every group
// sent whole to one owner rank (greedy by size, so the ranks' loads balance),
// the single-process search there, global SubhaloIds from every rank's
// per-group counts, and SubhaloId and SubhaloRank sent back to where each
// point came from.
#include <algorithm>
#include <numeric>

#include "SubhaloCatalogue.h"
#include "SubhaloGroup.h"
#include "jz/Distributed.h"
#include "jz/Subhalo.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
template <class T>
struct Member
{
  T xyz[3];
  double vel[3], mass, density;
  GlobalId id, group, originIndex;
};

struct Answer
{
  GlobalId originIndex, subhaloId, subhaloRank;
};

// The first rank's error, the same on every rank (empty when none).
std::string agreedError(Communicator& comm, const std::string& local)
{
  for (const auto& bytes : comm.allGather(std::vector<char>(local.begin(), local.end())))
    if (!bytes.empty())
      return std::string(bytes.begin(), bytes.end());
  return {};
}

// Owner rank of each group 0..G-1: by decreasing size (ties: smaller GroupId)
// to the least-loaded rank (ties: the lower rank).
std::vector<int> groupOwners(const std::vector<std::int64_t>& size, int ranks)
{
  std::vector<std::size_t> order(size.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(
    order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return size[a] > size[b]; });
  std::vector<std::int64_t> load(std::size_t(ranks), 0);
  std::vector<int> owner(size.size(), 0);
  for (std::size_t g : order)
  {
    const auto r = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
    owner[g] = int(r);
    load[r] += size[g];
  }
  return owner;
}
} // namespace

template <class T>
RunInfo computeSubhalosDistributed(Communicator& comm, const SubhaloProblem<T>& p, Subhalos& out,
  Backend backend, const RunControl& control, const SubhaloNames& names)
{
  // This rank's rules without "K <= the points" (a densities pointer skips
  // it): K is checked against the global count below.
  SubhaloProblem<T> local = p;
  const double noDensities = 0;
  local.densities = &noDensities;
  std::string error = subhaloProblemError(local, names);
  if (error.empty() && p.numPoints > 0 && !p.ids)
    error = "the distributed subhalo search needs global ids";
  error = agreedError(comm, error);
  std::int64_t total = std::int64_t(p.numPoints);
  comm.allReduceSum(&total, 1);
  if (error.empty())
  {
    InputNames density = names.input;
    density.neighbourCount = names.densityNeighbors;
    error = neighbourCountError(p.densityNeighbors, total, density);
  }
  if (!error.empty())
    throw Error(error);
  RunInfo info = noSubhalos(out, p.numPoints, backend);
  if (total == 0)
    return info;
  // Densities over all ranks.
  const KnnProblem<T> k = densityProblem(p);
  std::vector<T> rho(p.numPoints);
  KnnResults<T> kr;
  kr.density = rho.data();
  computeKnnDistributed(k, kr, comm, backend, control);
  // Global group sizes and owners.
  double maxGroup = -1;
  for (std::size_t i = 0; i < p.numPoints; ++i)
    maxGroup = std::max(maxGroup, double(p.groupId[i]));
  comm.allReduceMax(&maxGroup, 1);
  const std::size_t G = std::size_t(maxGroup + 1);
  std::vector<std::int64_t> size(G, 0);
  for (std::size_t i = 0; i < p.numPoints; ++i)
    if (p.groupId[i] >= 0)
      ++size[std::size_t(p.groupId[i])];
  if (G > 0)
    comm.allReduceSum(size.data(), int(G));
  const std::vector<int> owner = groupOwners(size, comm.size());
  // Members to their group's owner.
  std::vector<std::vector<Member<T>>> send(std::size_t(comm.size()));
  for (std::size_t i = 0; i < p.numPoints; ++i)
  {
    if (p.groupId[i] < 0 || size[std::size_t(p.groupId[i])] < p.minimumSubhaloSize)
      continue;
    Member<T> m;
    for (int d = 0; d < 3; ++d)
    {
      m.xyz[d] = p.points[3 * i + d];
      m.vel[d] = p.velocities[3 * i + d];
    }
    m.mass = p.masses ? p.masses[i] : 1.0;
    m.density = double(rho[i]);
    m.id = p.ids[i];
    m.group = p.groupId[i];
    m.originIndex = GlobalId(i);
    send[std::size_t(owner[std::size_t(m.group)])].push_back(m);
  }
  const std::vector<std::vector<Member<T>>> got = allToAllTyped(comm, send);
  // The single-process search on the groups owned here.
  std::vector<T> xyz;
  std::vector<double> vel, mass, density;
  std::vector<GlobalId> ids, group;
  for (const auto& from : got)
    for (const Member<T>& m : from)
    {
      xyz.insert(xyz.end(), m.xyz, m.xyz + 3);
      vel.insert(vel.end(), m.vel, m.vel + 3);
      mass.push_back(m.mass);
      density.push_back(m.density);
      ids.push_back(m.id);
      group.push_back(m.group);
    }
  SubhaloProblem<T> mine = p;
  mine.points = xyz.data();
  mine.numPoints = ids.size();
  mine.velocities = vel.data();
  mine.masses = mass.data();
  mine.densities = density.data();
  mine.ids = ids.data();
  mine.groupId = group.data();
  Subhalos found;
  computeSubhalos(mine, found, backend, control, names);
  // Global SubhaloIds: the subhalos of all smaller GroupIds come first.
  SubhaloCatalogue& cat = found.catalogue;
  std::vector<std::int64_t> perGroup(G, 0);
  for (std::size_t s = 0; s < cat.numSubhalos; ++s)
    ++perGroup[std::size_t(cat.groupId[s])];
  if (G > 0)
    comm.allReduceSum(perGroup.data(), int(G));
  std::vector<GlobalId> offset(G + 1, 0);
  for (std::size_t g = 0; g < G; ++g)
    offset[g + 1] = offset[g] + perGroup[g];
  auto globalId = [&](GlobalId s)
  {
    return s < 0
      ? s
      : offset[std::size_t(cat.groupId[std::size_t(s)])] + cat.subhaloRank[std::size_t(s)];
  };
  for (GlobalId& parent : cat.parentSubhaloId)
    parent = globalId(parent);
  // Answers back to where the points came from.
  std::vector<std::vector<Answer>> answers(got.size());
  std::size_t next = 0;
  for (std::size_t r = 0; r < got.size(); ++r)
    for (const Member<T>& m : got[r])
    {
      answers[r].push_back(
        { m.originIndex, globalId(found.subhaloId[next]), found.subhaloRank[next] });
      ++next;
    }
  for (const auto& from : allToAllTyped(comm, answers))
    for (const Answer& a : from)
    {
      out.subhaloId[std::size_t(a.originIndex)] = a.subhaloId;
      out.subhaloRank[std::size_t(a.originIndex)] = a.subhaloRank;
    }
  // The catalogue rows stay here, by global SubhaloId.
  cat.subhaloId.resize(cat.numSubhalos);
  for (std::size_t s = 0; s < cat.numSubhalos; ++s)
    cat.subhaloId[s] = globalId(GlobalId(s));
  out.catalogue = std::move(cat);
  return info;
}

template RunInfo computeSubhalosDistributed<float>(Communicator&, const SubhaloProblem<float>&,
  Subhalos&, Backend, const RunControl&, const SubhaloNames&);
template RunInfo computeSubhalosDistributed<double>(Communicator&, const SubhaloProblem<double>&,
  Subhalos&, Backend, const RunControl&, const SubhaloNames&);
} // namespace jz
