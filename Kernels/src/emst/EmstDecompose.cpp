// Phase "decompose" of the distributed EMST: the points move along the
// z-order route of Decomposition.h (coordinates as given, global ids and
// each point's input index at home), then this rank builds the tree of its
// range and every rank learns every rank's cover (RankCover).
#include <vector>

#include "emst/EmstPhases.h"
#include "jz/Geometry.h"

namespace jz
{
template <class T>
EmstRankPoints<T> decomposeEmstPoints(
  const EmstProblem<T>& piece, Communicator& comm, EmstTraffic& traffic)
{
  const Periodicity per = Periodicity::of(piece.periodic, piece.boxLo, piece.boxHi);
  auto at = [&](std::size_t i, T* p)
  {
    for (int d = 0; d < 3; ++d)
      p[d] = treeCoordinate(piece.points[3 * i + d], piece.boxLo[d], per.length[d]);
  };
  EmstRankPoints<T> points;
  points.route = routeInZOrder<T>(piece.numPoints, at, comm);
  const ZOrderRoute& route = points.route;
  const std::size_t n = route.size();
  std::vector<GlobalId> ids(n);
  points.raw.resize(3 * n);
  points.input.resize(n);
  RouteScratch scratch;
  moveAlongRoute(
    route, 3, [&](std::size_t i, T* v) { std::copy_n(piece.points + 3 * i, 3, v); },
    points.raw.data(), scratch, comm);
  moveAlongRoute(
    route, 1, [&](std::size_t i, GlobalId* v) { *v = piece.ids ? piece.ids[i] : GlobalId(i); }, ids.data(), scratch, comm);
  moveAlongRoute(
    route, 1, [&](std::size_t i, Index* v) { *v = Index(i); }, points.input.data(), scratch, comm);
  const std::size_t own = route.own().size();
  traffic.bytesReceived += double(n - own) * (3 * sizeof(T) + sizeof(GlobalId) + sizeof(Index));
  traffic.pointsMoved += double(n - own);

  if (n > 0)
    buildTreeCpu(points.raw.data(), Index(n), static_cast<const T*>(nullptr), 0, per, piece.boxLo,
      TreeBuildOptions(), points.tree, RunControl());
  points.tree.periodicity = per;
  std::copy_n(piece.boxLo, 3, points.boxLo);
  std::copy_n(piece.boxHi, 3, points.boxHi);
  points.ids.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    points.ids[i] = ids[points.tree.sources.inputIndex[i]];
  points.cover = RankCover<T>(points.tree, comm, kEmstCoverFiner);
  traffic.bytesReceived += points.cover.bytes();
  return points;
}

template EmstRankPoints<float> decomposeEmstPoints<float>(
  const EmstProblem<float>&, Communicator&, EmstTraffic&);
template EmstRankPoints<double> decomposeEmstPoints<double>(
  const EmstProblem<double>&, Communicator&, EmstTraffic&);
} // namespace jz
