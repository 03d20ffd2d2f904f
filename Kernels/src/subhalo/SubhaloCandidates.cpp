// The saddle-point candidates of one group (SUBFIND's rule): members join the
// candidate of their denser neighbours; where two candidates meet at a member
// the smaller one is recorded and both merge. Candidates are linked lists that
// are only ever concatenated, so each recorded candidate stays a run of the
// final list.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include <omp.h>

#include "SubhaloGroup.h"
#include "jz/Knn.h"
#include "jz/UnionFind.h"
#include "jz/Validate.h"

namespace jz
{
namespace
{
constexpr Index kNone = Index(-1);

// Up to this many members, or this many members left to search, the
// neighbours are found by comparing every pair (cheaper than building a tree
// for so few).
constexpr std::size_t kDirectNeighbours = 64;

// The first two members of `nearest` (member indices, nearest first) that are
// denser than member i (smaller index).
void keepDenser(std::size_t i, const std::vector<Index>& nearest, std::pair<Index, Index>& out)
{
  for (const Index m : nearest)
  {
    if (m >= i)
      continue;
    if (out.first == kNone)
      out.first = m;
    else
    {
      out.second = m;
      return;
    }
  }
}

using Key = std::pair<double, GlobalId>; // distance, then global id

// The squared distance of members i and j, summed as the kNN sums it.
double memberDistance2(const GroupMembers& g, std::size_t i, std::size_t j)
{
  double d2 = 0;
  for (int c = 0; c < 3; ++c)
  {
    const double d = g.xyz[3 * j + c] - g.xyz[3 * i + c];
    d2 += d * d;
  }
  return d2;
}

// The distance of members i and j as the group's searches take it (the root
// of memberDistance2).
double memberDistance(const GroupMembers& g, std::size_t i, std::size_t j)
{
  return std::sqrt(memberDistance2(g, i, j));
}

// A squared distance above this one has a root above `distance` (the root is
// correctly rounded and monotone; the factor covers the rounding of the
// square), so the root need not be taken to rank it behind.
double beyondRoot2(double distance)
{
  return distance * distance * (1 + 1e-12);
}

// denserNeighbours of the members `which` by every pair: ties by global id;
// the k nearest kept sorted by insertion (most pairs are farther than the
// k-th and cost a comparison of squared distances).
void denserNeighboursDirect(const GroupMembers& g, int saddleNeighbors,
  const std::vector<Index>& which, std::vector<std::pair<Index, Index>>& out)
{
  const std::size_t n = g.size();
  const std::size_t k = std::min<std::size_t>(std::size_t(saddleNeighbors), n - 1);
  std::vector<std::pair<Key, Index>> best(k + 1);
  std::vector<Index> nearest;
  for (const Index i : which)
  {
    std::size_t kept = 0;
    double skip2 = std::numeric_limits<double>::infinity(); // the k-th's beyondRoot2
    for (std::size_t j = 0; j < n; ++j)
    {
      const double d2 = memberDistance2(g, i, j);
      if (j == i || d2 > skip2)
        continue;
      const Key key{ std::sqrt(d2), g.id[j] };
      if (kept == k && !(key < best[k - 1].first))
        continue;
      std::size_t at = kept < k ? kept++ : k - 1;
      for (; at > 0 && key < best[at - 1].first; --at)
        best[at] = best[at - 1];
      best[at] = { key, Index(j) };
      if (kept == k)
        skip2 = beyondRoot2(best[k - 1].first.first);
    }
    nearest.clear();
    for (std::size_t j = 0; j < kept; ++j)
      nearest.push_back(best[j].second);
    keepDenser(i, nearest, out[i]);
  }
}

// The nearest other members of member i (nearest first, at most `listed`)
// that the density search's list proves: its members of the group are the
// nearest ones up to the bound past which it saw none (its K-th point, or its
// last listed member when the list is full). Both searches take distances
// from the same coordinates in double; `slack` bounds how far their rounding
// (the periodic images, the unwrapping) can set them apart. `dist` is
// scratch; the list is ranked in place by insertion (it comes nearly sorted).
void nearestFromDensitySearch(const GroupMembers& g, const DensityNeighbours& seen, std::size_t i,
  std::vector<double>& dist, std::vector<Index>& nearest)
{
  // The radius comes back in the input's precision (float at worst).
  constexpr double kRadiusRounding = 1e-6;
  const std::size_t n = g.size();
  const std::size_t per = seen.listed + 1;
  const Index* seenMembers = &seen.members[i * per];
  nearest.clear();
  dist.clear();
  for (std::size_t j = 0; j < per && seenMembers[j] != DensityNeighbours::kNoMember; ++j)
  {
    const Index m = seenMembers[j];
    const double d = memberDistance(g, i, m);
    std::size_t at = nearest.size();
    nearest.push_back(m);
    dist.push_back(d);
    const auto before = [&](std::size_t e) // (distance, global id, member): as the kNN ranks
    {
      return std::make_tuple(d, g.id[m], m) <
        std::make_tuple(dist[e], g.id[nearest[e]], nearest[e]);
    };
    for (; at > 0 && before(at - 1); --at)
    {
      dist[at] = dist[at - 1];
      nearest[at] = nearest[at - 1];
    }
    dist[at] = d;
    nearest[at] = m;
  }
  double magnitude = 0;
  for (int c = 0; c < 3; ++c)
    magnitude = std::max(magnitude, std::abs(g.xyz[3 * i + c]));
  const double slack =
    64 * std::numeric_limits<double>::epsilon() * (magnitude + seen.period + seen.radius[i]);
  double bound = std::numeric_limits<double>::infinity();
  if (nearest.size() < n - 1)
  {
    bound = seen.radius[i] * (1 - kRadiusRounding) - slack;
    if (nearest.size() == per)
      bound = std::min(bound, dist.back() - 2 * slack);
  }
  std::size_t kept = 0;
  while (kept < nearest.size() && kept < seen.listed && dist[kept] < bound)
    ++kept;
  nearest.resize(kept);
}

// The members whose denser pair the density search proves get it in `out`
// (two denser among their proven nearest members, or saddleNeighbors of
// them proven); the others are returned.
std::vector<Index> denserFromDensitySearch(const GroupMembers& g, int saddleNeighbors,
  const DensityNeighbours& seen, const RunControl& control,
  std::vector<std::pair<Index, Index>>& out)
{
  const std::size_t n = g.size();
  const std::size_t needed = std::min(std::size_t(saddleNeighbors), n - 1);
  std::vector<char> proven(n, 0);
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<double> dist;
    std::vector<Index> nearest;
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(n); ++i)
    {
      nearestFromDensitySearch(g, seen, std::size_t(i), dist, nearest);
      nearest.resize(std::min(nearest.size(), needed));
      std::pair<Index, Index> pair{ kNone, kNone };
      keepDenser(std::size_t(i), nearest, pair);
      if (pair.second == kNone && nearest.size() < needed)
        continue; // a denser one may lie among the nearest not proven
      proven[std::size_t(i)] = 1;
      out[std::size_t(i)] = pair;
    }
  }
  std::vector<Index> rest;
  for (std::size_t i = 0; i < n; ++i)
    if (!proven[i])
      rest.push_back(Index(i));
  return rest;
}

// For each member, its (up to) two nearest denser members among its
// saddleNeighbors nearest others; kNone where absent. The density search's
// lists serve where they prove the nearest members; the group's own search
// (by every pair when small) ranks the rest.
std::vector<std::pair<Index, Index>> denserNeighbours(const GroupMembers& g, int saddleNeighbors,
  const DensityNeighbours* seen, Backend backend, const RunControl& control,
  const std::string& saddleName, std::size_t& searchedInGroup)
{
  const std::size_t n = g.size();
  std::vector<std::pair<Index, Index>> out(n, { kNone, kNone });
  if (n < 2)
    return out;
  std::vector<Index> rest(n);
  if (seen)
    rest = denserFromDensitySearch(g, saddleNeighbors, *seen, control, out);
  else
    std::iota(rest.begin(), rest.end(), Index(0));
  searchedInGroup = rest.size();
  if (rest.empty())
    return out;
  if ((n <= kDirectNeighbours || rest.size() <= kDirectNeighbours) && backend != Backend::CUDA)
  {
    denserNeighboursDirect(g, saddleNeighbors, rest, out);
    return out;
  }
  const int k = int(std::min<std::size_t>(std::size_t(saddleNeighbors) + 1, n));
  // Sources keyed by their rank in global-id order (the same ties as the
  // global ids), so that a reported neighbour is its member index at once.
  std::vector<Index> byId(n);
  std::iota(byId.begin(), byId.end(), Index(0));
  std::sort(byId.begin(), byId.end(), [&](Index a, Index b) { return g.id[a] < g.id[b]; });
  std::vector<GlobalId> idRank(n);
  for (std::size_t r = 0; r < n; ++r)
    idRank[byId[r]] = GlobalId(r);
  KnnProblem<double> p;
  p.sources = g.xyz.data();
  p.numSources = n;
  p.sourceIds = idRank.data();
  p.k = k;
  // Only the rest query (each finds itself among the sources).
  p.selfQueryIndices = rest.data();
  p.numSelfQueries = rest.size();
  // The rest's lists grow with SaddleNeighbors times the group's size: a
  // clear error rather than an allocation the machine cannot back.
  InputNames names;
  names.neighbourCount = saddleName;
  const std::string tooLarge =
    neighbourListsMemoryError(rest.size(), k, sizeof(GlobalId) + sizeof(double), names);
  if (!tooLarge.empty())
    throw Error(tooLarge);
  std::vector<GlobalId> nid(rest.size() * std::size_t(k));
  std::vector<double> nd(rest.size() * std::size_t(k));
  KnnResults<double> r;
  r.smoothingLength = nullptr;
  r.density = nullptr;
  r.neighborIds = nid.data();
  r.neighborDistances = nd.data();
  computeKnn(p, r, backend, control);
  std::vector<Key> list;
  std::vector<Index> nearest;
  for (std::size_t q = 0; q < rest.size(); ++q)
  {
    const Index i = rest[q];
    list.clear();
    for (int j = 0; j < k; ++j)
    {
      const std::size_t e = q * std::size_t(k) + std::size_t(j);
      if (nid[e] != idRank[i])
        list.push_back({ nd[e], nid[e] });
    }
    std::sort(list.begin(), list.end()); // by distance, then global id
    list.resize(std::min<std::size_t>(list.size(), std::size_t(saddleNeighbors)));
    nearest.clear();
    for (const auto& e : list)
      nearest.push_back(byId[std::size_t(e.second)]);
    keepDenser(i, nearest, out[i]);
  }
  return out;
}
} // namespace

GroupCandidates findCandidates(const GroupMembers& g, int saddleNeighbors, GlobalId minimumSize,
  const DensityNeighbours* seen, Backend backend, const RunControl& control,
  const std::string& saddleName)
{
  const std::size_t n = g.size();
  GroupCandidates out;
  if (n == 0)
    return out;
  if (!densityOrderMatters(n, minimumSize))
  {
    out.order.resize(n);
    std::iota(out.order.begin(), out.order.end(), Index(0));
    out.candidates.push_back({ 0, n, g.id[0], true });
    return out;
  }
  const auto denser =
    denserNeighbours(g, saddleNeighbors, seen, backend, control, saddleName, out.searchedInGroup);
  // Per root: first and last of its list, its length and densest member.
  std::vector<Index> parent(n), next(n, kNone), first(n), last(n), densest(n);
  std::vector<std::size_t> length(n, 0);
  struct Recorded
  {
    Index first;
    std::size_t length;
    GlobalId densestId;
  };
  std::vector<Recorded> recorded;
  // The larger candidate has the smaller key: more members, then the densest
  // member of smaller global id.
  auto key = [&](Index r) { return std::make_pair(-GlobalId(length[r]), g.id[densest[r]]); };
  auto append = [&](Index root, Index p)
  {
    parent[p] = root;
    next[last[root]] = p;
    last[root] = p;
    ++length[root];
  };
  for (Index p = 0; p < Index(n); ++p)
  {
    const auto [a, b] = denser[p];
    if (a == kNone)
    {
      parent[p] = first[p] = last[p] = densest[p] = p;
      length[p] = 1;
      continue;
    }
    const Index ra = findRoot(parent, a);
    const Index rb = b == kNone ? ra : findRoot(parent, b);
    if (ra != rb)
    {
      uniteBySmallestKey(parent, ra, rb, key);
      const Index root = findRoot(parent, ra);
      const Index other = root == ra ? rb : ra;
      if (GlobalId(length[other]) >= minimumSize)
        recorded.push_back({ first[other], length[other], g.id[densest[other]] });
      next[last[root]] = first[other];
      last[root] = last[other];
      length[root] += length[other];
      densest[root] = std::min(densest[root], densest[other]);
    }
    append(findRoot(parent, ra), p);
  }
  // The final lists, roots in density order; positions of their members.
  std::vector<std::size_t> position(n);
  out.order.reserve(n);
  for (Index r = 0; r < Index(n); ++r)
    if (parent[r] == r)
      for (Index m = first[r]; m != kNone; m = next[m])
      {
        position[m] = out.order.size();
        out.order.push_back(m);
      }
  for (const Recorded& c : recorded)
    out.candidates.push_back({ position[c.first], c.length, c.densestId, false });
  out.candidates.push_back({ 0, n, g.id[0], true });
  return out;
}
} // namespace jz
