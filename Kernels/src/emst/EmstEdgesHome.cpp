// Phase "send home" of the distributed EMST: each edge goes to the rank
// whose input holds its smaller-id endpoint (one record per edge: that
// endpoint's input index, the other end's id and coordinates, the weight),
// and the core distances go home along the route. Each rank's edges are
// then sorted in the serial order.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "emst/EmstPhases.h"

namespace jz
{
namespace
{
// 32 bytes in float (the from id is the home rank's own input).
template <class T>
struct EdgeHome
{
  double weight2;
  GlobalId toId;
  Index from; // input index at home
  T toRaw[3];
};

int originRank(const ZOrderRoute& route, Index routeIndex)
{
  return int(std::upper_bound(route.begin.begin(), route.begin.end(), std::size_t(routeIndex)) -
           route.begin.begin()) -
    1;
}

template <class T>
void coreDistancesHome(const EmstRankPoints<T>& points, const std::vector<double>& core2,
  const EmstProblem<T>& piece, Communicator& comm, std::vector<double>& out, EmstTraffic& traffic)
{
  const ZOrderRoute& route = points.route;
  std::vector<double> byRoute(points.size());
  for (Index i = 0; i < Index(core2.size()); ++i)
    byRoute[points.routeIndex(i)] = core2[i];
  out.assign(piece.numPoints, 0.0);
  const std::vector<Index>& own = route.own();
  for (std::size_t k = 0; k < own.size(); ++k)
    out[own[k]] = byRoute[route.begin[route.rank] + k];
  sendHomeAlongRoute(
    route, sizeof(double),
    [&](std::size_t begin, std::size_t count, char* at)
    { std::memcpy(at, byRoute.data() + begin, count * sizeof(double)); },
    [&](const std::vector<Index>& list, const char* in)
    {
      for (std::size_t k = 0; k < list.size(); ++k)
        std::memcpy(&out[list[k]], in + k * sizeof(double), sizeof(double));
      traffic.bytesReceived += double(list.size() * sizeof(double));
    },
    comm);
}
} // namespace

template <class T>
void sendEmstEdgesHome(const EmstRankPoints<T>& points, const std::vector<EmstEmitted<T>>& edges,
  const std::vector<double>& core2, const EmstProblem<T>& piece, Communicator& comm,
  EmstRankEdges<T>& out, EmstTraffic& traffic)
{
  const int ranks = comm.size();
  std::vector<std::vector<EdgeHome<T>>> send(ranks);
  for (const EmstEmitted<T>& e : edges)
  {
    const Index j = points.routeIndex(e.from);
    EdgeHome<T> h{ e.weight2, e.toId, points.input[j], {} };
    std::copy_n(e.toRaw, 3, h.toRaw);
    send[originRank(points.route, j)].push_back(h);
  }
  const std::vector<std::vector<EdgeHome<T>>> got = allToAllTyped(comm, send);
  std::vector<EdgeHome<T>> mine;
  for (int r = 0; r < ranks; ++r)
  {
    if (r != comm.rank())
      traffic.bytesReceived += double(got[r].size() * sizeof(EdgeHome<T>));
    mine.insert(mine.end(), got[r].begin(), got[r].end());
  }
  auto fromId = [&](const EdgeHome<T>& h) { return piece.ids ? piece.ids[h.from] : GlobalId(h.from); };
  std::sort(mine.begin(), mine.end(),
    [&](const EdgeHome<T>& a, const EdgeHome<T>& b)
    {
      if (a.weight2 != b.weight2)
        return a.weight2 < b.weight2;
      return fromId(a) != fromId(b) ? fromId(a) < fromId(b) : a.toId < b.toId;
    });
  out = EmstRankEdges<T>{};
  for (const EdgeHome<T>& h : mine)
  {
    out.fromId.push_back(fromId(h));
    out.toId.push_back(h.toId);
    out.fromLocal.push_back(h.from);
    out.weight2.push_back(h.weight2);
    for (int d = 0; d < 3; ++d)
    {
      out.fromPoint.push_back(piece.points[3 * std::size_t(h.from) + d]);
      out.toPoint.push_back(h.toRaw[d]);
    }
  }
  if (piece.metric == EmstMetric::MutualReachability)
    coreDistancesHome(points, core2, piece, comm, out.core2, traffic);
}

template void sendEmstEdgesHome<float>(const EmstRankPoints<float>&,
  const std::vector<EmstEmitted<float>>&, const std::vector<double>&, const EmstProblem<float>&,
  Communicator&, EmstRankEdges<float>&, EmstTraffic&);
template void sendEmstEdgesHome<double>(const EmstRankPoints<double>&,
  const std::vector<EmstEmitted<double>>&, const std::vector<double>&,
  const EmstProblem<double>&, Communicator&, EmstRankEdges<double>&, EmstTraffic&);
} // namespace jz
