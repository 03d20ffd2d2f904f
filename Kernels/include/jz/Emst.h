// Euclidean minimum spanning trees on the jz-tree: Borůvka rounds, each a
// dual walk of the shared walk engine that finds every component's lightest
// outgoing edge (the ArborX EMST scheme, Prokopenko et al., §3, on z-order
// planes instead of a BVH). Euclidean weights, or the mutual reachability
// of HDBSCAN* (Campello et al. 2015).
//
// VTK-free public API. Weights are compared as exact squared values in
// double from the input coordinates (nearest image when periodic), the same
// values the friends-of-friends walk compares with l^2, so a cut of the tree
// at l reproduces its groups exactly. Ties are broken by (weight, smaller
// global id, larger global id): the tree is the unique minimum under that
// order, the same on every backend and partition.
#pragma once

#include <cstddef>
#include <vector>

#include "Backend.h"
#include "Communicator.h"
#include "Config.h"

namespace jz
{
enum class EmstMetric
{
  Euclidean,
  // max(core(a), core(b), |a - b|), core = distance to the minSamples-th
  // nearest other point.
  MutualReachability
};

// Input, all in caller memory. Coordinates are interleaved xyz (VTK layout).
template <class T>
struct EmstProblem
{
  const T* points = nullptr;
  std::size_t numPoints = 0;
  EmstMetric metric = EmstMetric::Euclidean;
  int minSamples = 5; // mutual reachability only; at most numPoints - 1
  // Periodic box [boxLo, boxHi); points outside are wrapped in.
  bool periodic = false;
  double boxLo[3] = { 0, 0, 0 };
  double boxHi[3] = { 1, 1, 1 };
  // Per-point global identifiers (input order); nullptr means the input index.
  const GlobalId* ids = nullptr;
  // Edges longer than this are left out: the result is then the minimum
  // spanning forest of the shorter edges, i.e. exactly the tree's edges of
  // weight up to maxLength (all a cut at l <= maxLength needs), and much
  // cheaper when few edges are that short. At least 0 (0: identical points).
  double maxLength = kInfinity;
};

// The n - 1 edges (fewer with a finite maxLength), sorted by (weight2, smaller id, larger id).
// Endpoints are input indices; `from` holds the endpoint with the smaller global id.
struct EmstEdges
{
  std::vector<Index> from, to;
  std::vector<double> weight2; // squared weight, exact in double
  // Mutual reachability: squared core distance per point (input order).
  std::vector<double> core2;
  std::size_t size() const { return weight2.size(); }
};

// Validates the problem (throws Error: non-finite coordinates, bad box,
// minSamples < 1 or >= numPoints in mutual-reachability mode, too many
// points) and computes the tree. Backend::CUDA runs the GPU's Borůvka rounds
// and throws Error without a usable GPU;
// Auto runs on the GPU when one is usable (falling back to the CPU, with a
// note, when the GPU fails), else on the CPU. The edge set is the same.
template <class T>
RunInfo computeEmst(const EmstProblem<T>& problem, EmstEdges& edges,
  Backend backend = Backend::Auto, const RunControl& control = {});

// The message of the first broken rule, or "" (for the filters).
template <class T>
std::string emstProblemError(const EmstProblem<T>& problem);

// The MinSamples rule of mutual reachability over totalPoints (all ranks'), or "".
std::string minSamplesError(int minSamples, std::size_t totalPoints);

// One rank's share of a distributed tree: this rank's points (with global
// ids, required) and the edges whose smaller-id endpoint is one of them, so
// that every edge is output by exactly one rank. Endpoint coordinates are
// given because the other endpoint may live on another rank.
template <class T>
struct EmstRankEdges
{
  std::vector<GlobalId> fromId, toId; // fromId < toId
  std::vector<T> fromPoint, toPoint;  // xyz each
  std::vector<Index> fromLocal;       // input index of `from` on this rank
  std::vector<double> weight2;
  std::vector<double> core2; // this rank's points (mutual reachability only)
};

// Every rank passes its piece (ids required); the result equals the serial
// tree of the union of the pieces. A distributed Borůvka: no rank gathers
// the points (src/emst/EmstPhases.h).
template <class T>
RunInfo computeEmstDistributed(const EmstProblem<T>& piece, Communicator& comm,
  EmstRankEdges<T>& out, Backend backend = Backend::Auto, const RunControl& control = {});

extern template RunInfo computeEmst<float>(
  const EmstProblem<float>&, EmstEdges&, Backend, const RunControl&);
extern template RunInfo computeEmst<double>(
  const EmstProblem<double>&, EmstEdges&, Backend, const RunControl&);
extern template std::string emstProblemError<float>(const EmstProblem<float>&);
extern template std::string emstProblemError<double>(const EmstProblem<double>&);
extern template RunInfo computeEmstDistributed<float>(
  const EmstProblem<float>&, Communicator&, EmstRankEdges<float>&, Backend, const RunControl&);
extern template RunInfo computeEmstDistributed<double>(
  const EmstProblem<double>&, Communicator&, EmstRankEdges<double>&, Backend, const RunControl&);
} // namespace jz
