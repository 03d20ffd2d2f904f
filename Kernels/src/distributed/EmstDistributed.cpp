// The distributed EMST: the ranks' pieces are gathered, every rank computes
// the serial tree of the union (identical everywhere: the tree is unique
// under the total edge order), and each rank keeps the edges whose
// smaller-id endpoint is one of its own points, so each edge is output once.
#include <algorithm>
#include <vector>

#include "GatherPieces.h"
#include "jz/Communicator.h"
#include "jz/Emst.h"

namespace jz
{
template <class T>
RunInfo computeEmstDistributed(const EmstProblem<T>& piece, Communicator& comm,
  EmstRankEdges<T>& out, Backend backend, const RunControl& control)
{
  out = EmstRankEdges<T>{};
  const GatheredPoints<T> gathered = gatherPieces(piece.points, piece.numPoints, piece.ids, comm);
  const std::vector<T>& all = gathered.points;
  const std::vector<GlobalId>& allIds = gathered.ids;
  const std::size_t offset = gathered.offset;
  EmstEdges edges;
  const RunInfo info = computeEmst(gathered.whole(piece), edges, backend, control);

  const std::size_t end = offset + piece.numPoints;
  for (std::size_t e = 0; e < edges.size(); ++e)
  {
    const Index a = edges.from[e], b = edges.to[e];
    if (a < offset || a >= end)
      continue;
    out.fromId.push_back(allIds[a]);
    out.toId.push_back(allIds[b]);
    out.fromLocal.push_back(Index(a - offset));
    out.weight2.push_back(edges.weight2[e]);
    for (int d = 0; d < 3; ++d)
    {
      out.fromPoint.push_back(all[3 * std::size_t(a) + d]);
      out.toPoint.push_back(all[3 * std::size_t(b) + d]);
    }
  }
  if (!edges.core2.empty())
    out.core2.assign(edges.core2.begin() + offset, edges.core2.begin() + end);
  return info;
}

template RunInfo computeEmstDistributed<float>(
  const EmstProblem<float>&, Communicator&, EmstRankEdges<float>&, Backend, const RunControl&);
template RunInfo computeEmstDistributed<double>(
  const EmstProblem<double>&, Communicator&, EmstRankEdges<double>&, Backend, const RunControl&);
} // namespace jz
