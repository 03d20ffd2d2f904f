// The rank's own tree by the single-process EMST (EmstLocalTree.h).
#include "emst/EmstLocalTree.h"

namespace jz
{
template <class T>
std::vector<LocalTreeEdge> localTreeEdges(const EmstRankPoints<T>& points,
  const EmstProblem<T>& piece, int threads, const std::function<bool(double)>& progress)
{
  const Index n = Index(points.size());
  std::vector<GlobalId> routeIds(n);
  std::vector<Index> sortedOf(n);
  for (Index i = 0; i < n; ++i)
  {
    routeIds[points.routeIndex(i)] = points.ids[i];
    sortedOf[points.routeIndex(i)] = i;
  }
  EmstProblem<T> local = piece;
  local.points = points.raw.data();
  local.numPoints = n;
  local.ids = routeIds.data();
  local.metric = EmstMetric::Euclidean;
  RunControl control;
  control.numThreads = threads;
  control.progress = progress;
  EmstEdges edges;
  computeEmst(local, edges, Backend::CPU, control);
  std::vector<LocalTreeEdge> out(edges.size());
  for (std::size_t e = 0; e < edges.size(); ++e)
    out[e] = LocalTreeEdge{ sortedOf[edges.from[e]], sortedOf[edges.to[e]], edges.weight2[e] };
  return out;
}

template std::vector<LocalTreeEdge> localTreeEdges<float>(const EmstRankPoints<float>&,
  const EmstProblem<float>&, int, const std::function<bool(double)>&);
template std::vector<LocalTreeEdge> localTreeEdges<double>(const EmstRankPoints<double>&,
  const EmstProblem<double>&, int, const std::function<bool(double)>&);
} // namespace jz
