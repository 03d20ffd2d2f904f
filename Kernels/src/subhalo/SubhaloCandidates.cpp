// The saddle-point candidates of one group (SUBFIND's rule): members join the
// candidate of their denser neighbours; where two candidates meet at a member
// the smaller one is recorded and both merge. Candidates are linked lists that
// are only ever concatenated, so each recorded candidate stays a run of the
// final list.
#include <algorithm>
#include <numeric>
#include <cmath>
#include <utility>

#include "SubhaloGroup.h"
#include "jz/Knn.h"
#include "jz/UnionFind.h"

namespace jz
{
namespace
{
constexpr Index kNone = Index(-1);

// Up to this many members the neighbours are found by comparing every pair
// (a bounded block: cheaper than building a tree for so few).
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

// denserNeighbours by every pair: distances as the kNN takes them (the root
// of the squared difference), ties by global id; the k nearest kept sorted
// by insertion (most pairs are farther than the k-th and cost a comparison).
void denserNeighboursDirect(
  const GroupMembers& g, int saddleNeighbors, std::vector<std::pair<Index, Index>>& out)
{
  const std::size_t n = g.size();
  const std::size_t k = std::min<std::size_t>(std::size_t(saddleNeighbors), n - 1);
  using Key = std::pair<double, GlobalId>;
  std::vector<std::pair<Key, Index>> best(k + 1);
  std::vector<Index> nearest;
  for (std::size_t i = 0; i < n; ++i)
  {
    std::size_t kept = 0;
    for (std::size_t j = 0; j < n; ++j)
    {
      if (j == i)
        continue;
      double d2 = 0;
      for (int c = 0; c < 3; ++c)
      {
        const double d = g.xyz[3 * j + c] - g.xyz[3 * i + c];
        d2 += d * d;
      }
      const Key key{ std::sqrt(d2), g.id[j] };
      if (kept == k && !(key < best[k - 1].first))
        continue;
      std::size_t at = kept < k ? kept++ : k - 1;
      for (; at > 0 && key < best[at - 1].first; --at)
        best[at] = best[at - 1];
      best[at] = { key, Index(j) };
    }
    nearest.clear();
    for (std::size_t j = 0; j < kept; ++j)
      nearest.push_back(best[j].second);
    keepDenser(i, nearest, out[i]);
  }
}

// For each member, its (up to) two nearest denser members among its
// saddleNeighbors nearest others; kNone where absent.
std::vector<std::pair<Index, Index>> denserNeighbours(
  const GroupMembers& g, int saddleNeighbors, Backend backend, const RunControl& control)
{
  const std::size_t n = g.size();
  std::vector<std::pair<Index, Index>> out(n, { kNone, kNone });
  if (n < 2)
    return out;
  if (n <= kDirectNeighbours && backend != Backend::CUDA)
  {
    denserNeighboursDirect(g, saddleNeighbors, out);
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
  std::vector<GlobalId> nid(n * std::size_t(k));
  std::vector<double> nd(n * std::size_t(k));
  KnnResults<double> r;
  r.smoothingLength = nullptr;
  r.density = nullptr;
  r.neighborIds = nid.data();
  r.neighborDistances = nd.data();
  computeKnn(p, r, backend, control);
  std::vector<std::pair<double, GlobalId>> list;
  std::vector<Index> nearest;
  for (std::size_t i = 0; i < n; ++i)
  {
    list.clear();
    for (int j = 0; j < k; ++j)
    {
      const std::size_t e = i * std::size_t(k) + std::size_t(j);
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
  Backend backend, const RunControl& control)
{
  const std::size_t n = g.size();
  GroupCandidates out;
  if (n == 0)
    return out;
  const auto denser = denserNeighbours(g, saddleNeighbors, backend, control);
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
