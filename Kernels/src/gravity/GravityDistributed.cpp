// Tree gravity over several ranks without gathering the particles, in four
// collective phases, each one stage of RunInfo:
//   decomposition  sources and queries cut into contiguous, count-balanced
//                  ranges of the global z-order (§II-A; Decomposition.h), so
//                  that a rank's points are compact whatever the pieces were;
//                  skipped when the pieces are already apart and balanced
//   LET exchange   every rank's query boxes to all; to each other rank, the
//                  locally essential tree of this rank's sources for them
//                  (GravityLet.h: multipoles as pseudo-particles, particles
//                  where the nodes must be opened)
//   local gravity  the serial computeGravity over the rank's own sources
//                  and the received ones, for its queries
//   results home   every query's potential and acceleration back to the
//                  rank and position it came from.
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <omp.h>

#include "common/Progress.h"
#include "distributed/Decomposition.h"
#include "gravity/GravityLet.h"
#include "gravity/GravityMoments.h"
#include "jz/Gravity.h"
#include "jz/HugePages.h"
#include "jz/StageTimer.h"

namespace jz
{
namespace
{
// Boxes of a rank's queries sent to the others (GravityLet.h, queryBoxes).
constexpr Index kQueryBoxes = 64;

// One rank's points after the decomposition: its sources (own, then the
// LET's), and its queries with their origin. In a self query the own
// sources, in order, are the queries and qryXyz stays empty.
template <class T>
struct GravityRankPoints
{
  bool self = true;
  std::vector<T> srcXyz;
  std::vector<double> srcMass;
  std::size_t ownSources = 0;
  std::vector<T> qryXyz;
  std::vector<std::int32_t> qryRank;
  std::vector<Index> qryIndex;
  std::size_t numQueries() const { return qryIndex.size(); }
};

// Whether the input pieces can stay where they are: spatially apart (at most
// 1% of all points inside another rank's bounding box) and balanced (no rank
// above 1.5 times the mean). Then the decomposition would only move points
// (and their results back) without making the LET smaller. The same answer
// on every rank.
template <class T>
bool piecesAreCompact(const GravityProblem<T>& problem, bool self, Communicator& comm)
{
  const std::size_t ns = problem.numSources;
  const std::size_t nq = self ? 0 : (problem.queries ? problem.numQueries : 0);
  auto point = [&](std::size_t i)
  { return i < ns ? problem.sources + 3 * i : problem.queries + 3 * (i - ns); };
  Box<T> mine;
  boxSetEmpty(mine);
  for (std::size_t i = 0; i < ns + nq; ++i)
    boxExtend(mine, point(i));
  const std::vector<std::vector<char>> all = comm.allGather(toBytes(std::vector<Box<T>>{ mine }));
  std::vector<Box<T>> others;
  for (int r = 0; r < comm.size(); ++r)
    if (r != comm.rank() && ns + nq > 0)
      others.push_back(fromBytes<Box<T>>(all[r])[0]);
  std::int64_t inside = 0;
  for (std::size_t i = 0; i < ns + nq; ++i)
  {
    const T* p = point(i);
    for (const Box<T>& b : others)
      if (p[0] >= b.lo[0] && p[0] <= b.hi[0] && p[1] >= b.lo[1] && p[1] <= b.hi[1] &&
        p[2] >= b.lo[2] && p[2] <= b.hi[2])
      {
        ++inside;
        break;
      }
  }
  std::int64_t sums[2] = { inside, std::int64_t(ns + nq) };
  comm.allReduceSum(sums, 2);
  double most = double(ns + nq);
  comm.allReduceMax(&most, 1);
  return double(sums[0]) <= 0.01 * double(sums[1]) &&
    most <= 1.5 * double(sums[1]) / double(comm.size());
}

// The pieces as they are (piecesAreCompact): every query stays home.
template <class T>
GravityRankPoints<T> keepPieces(const GravityProblem<T>& problem, bool self, Communicator& comm)
{
  GravityRankPoints<T> points;
  points.self = self;
  const std::size_t ns = problem.numSources;
  const std::size_t nq = self ? ns : (problem.queries ? problem.numQueries : 0);
  points.srcXyz.assign(problem.sources, problem.sources + 3 * ns);
  points.srcMass.assign(ns, 1.0);
  if (problem.sourceMasses)
    points.srcMass.assign(problem.sourceMasses, problem.sourceMasses + ns);
  points.ownSources = ns;
  if (!self)
    points.qryXyz.assign(problem.queries, problem.queries + 3 * nq);
  points.qryRank.assign(nq, comm.rank());
  points.qryIndex.resize(nq);
  for (std::size_t q = 0; q < nq; ++q)
    points.qryIndex[q] = Index(q);
  return points;
}

template <class T>
GravityRankPoints<T> decompose(
  const GravityProblem<T>& problem, bool self, Communicator& comm, double& bytes)
{
  const std::size_t ns = problem.numSources;
  const std::size_t nq = self ? 0 : (problem.queries ? problem.numQueries : 0);
  // A record: coordinates, origin rank and index, role[, mass]. Masses
  // travel only when some rank has them.
  const bool withMass = allSum(comm, problem.sourceMasses ? 1 : 0) > 0;
  const std::size_t recordBytes =
    3 * sizeof(T) + sizeof(std::int32_t) + sizeof(Index) + 1 + (withMass ? sizeof(double) : 0);
  auto at = [&](std::size_t i, T* p)
  {
    const T* xyz = i < ns ? problem.sources + 3 * i : problem.queries + 3 * (i - ns);
    for (int d = 0; d < 3; ++d)
      p[d] = xyz[d] + T(0); // -0 as +0, as the tree sees it
  };
  const std::int32_t me = comm.rank();
  auto pack = [&](std::size_t i, char* record)
  {
    T p[3];
    at(i, p);
    for (int d = 0; d < 3; ++d)
      putField(record, p[d]);
    putOriginRoleMass(record, me, i, ns, self, withMass, problem.sourceMasses);
  };
  const ZOrderShare share = exchangeInZOrder<T>(ns + nq, recordBytes, at, pack, comm);
  bytes = 0;
  for (const auto& block : share.blocks)
    bytes += double(block.size());

  GravityRankPoints<T> points;
  points.self = self;
  forEachRecord(share, recordBytes, pack,
    [&](const char* record)
    {
      T p[3];
      for (int d = 0; d < 3; ++d)
        p[d] = takeField<T>(record);
      const std::int32_t rank = takeField<std::int32_t>(record);
      const Index index = takeField<Index>(record);
      const std::uint8_t role = takeField<std::uint8_t>(record);
      const double mass = withMass ? takeField<double>(record) : 1.0;
      if (role & kIsSource)
      {
        points.srcXyz.insert(points.srcXyz.end(), p, p + 3);
        points.srcMass.push_back(mass);
      }
      if (role & kIsQuery)
      {
        if (!self)
          points.qryXyz.insert(points.qryXyz.end(), p, p + 3);
        points.qryRank.push_back(rank);
        points.qryIndex.push_back(index);
      }
    });
  points.ownSources = points.srcMass.size();
  return points;
}

// Appends to points' sources what the other ranks' LETs hold for its queries;
// returns the bytes received, and the multipoles among them in `multipoles`.
template <class T>
double exchangeLet(GravityRankPoints<T>& points, double theta, int threads, Communicator& comm,
  std::size_t& multipoles)
{
  const int me = comm.rank(), ranks = comm.size();
  const Index ns = Index(points.ownSources), nq = Index(points.numQueries());
  ZTree<T> tree;
  std::vector<double> mass;
  std::vector<std::vector<GravityMoments>> moments;
  std::vector<Box<T>> boxes;
  if (ns > 0)
  {
    const bool joint = !points.self && nq > 0;
    const double lo[3] = { 0, 0, 0 };
    buildTreeCpu(points.srcXyz.data(), ns, joint ? points.qryXyz.data() : (const T*)nullptr,
      joint ? nq : 0, Periodicity{}, lo, TreeBuildOptions(), tree, RunControl());
    mass.resize(ns);
    for (Index i = 0; i < ns; ++i)
      mass[i] = points.srcMass[tree.sources.inputIndex[i]];
    moments = gravityMoments(tree, mass, threads);
    if (points.self || joint)
      boxes = queryBoxes(tree, kQueryBoxes);
  }
  else if (nq > 0)
  {
    Box<T> all; // no own sources, no tree: one box around the queries
    boxSetEmpty(all);
    for (Index q = 0; q < nq; ++q)
      boxExtend(all, &points.qryXyz[3 * std::size_t(q)]);
    boxes.push_back(all);
  }
  const std::vector<std::vector<char>> allBoxes = comm.allGather(toBytes(boxes));

  std::vector<LocallyEssentialTree<T>> let(ranks);
  if (ns > 0)
    for (int r = 0; r < ranks; ++r)
      if (r != me)
        let[r] = letFor(tree, moments, mass, fromBytes<Box<T>>(allBoxes[r]), theta);
  // Two exchanges: particles (coordinates, mass) and multipoles.
  const std::size_t particleBytes = 3 * sizeof(T) + sizeof(double);
  std::vector<std::size_t> count(ranks);
  for (int r = 0; r < ranks; ++r)
    count[r] = let[r].particles.size();
  auto packParticle = [&](int r, std::size_t j, char* record)
  {
    const LetSource<T>& s = let[r].particles[j];
    for (int d = 0; d < 3; ++d)
      putField(record, s.x[d]);
    putField(record, s.m);
  };
  const std::vector<std::vector<char>> particles =
    exchangeRecords(count, particleBytes, packParticle, comm);
  for (int r = 0; r < ranks; ++r)
    count[r] = let[r].nodes.size();
  auto packNode = [&](int r, std::size_t j, char* record)
  { std::memcpy(record, &let[r].nodes[j], sizeof(LetNode)); };
  const std::vector<std::vector<char>> nodes =
    exchangeRecords(count, sizeof(LetNode), packNode, comm);
  double bytes = 0;
  for (const auto& block : particles)
  {
    bytes += double(block.size());
    for (const char* record = block.data(); record < block.data() + block.size();)
    {
      for (int d = 0; d < 3; ++d)
        points.srcXyz.push_back(takeField<T>(record));
      points.srcMass.push_back(takeField<double>(record));
    }
  }
  multipoles = 0;
  for (const auto& block : nodes)
  {
    bytes += double(block.size());
    multipoles += block.size() / sizeof(LetNode);
    for (const char* record = block.data(); record < block.data() + block.size();)
      appendPseudoParticles(takeField<LetNode>(record), points.srcXyz, points.srcMass);
  }
  return bytes;
}

// The serial run over the rank's sources for its queries: potential and
// acceleration per local query (4 per query). An error on any rank throws
// the same Error on every rank.
template <class T>
std::vector<double> gravityLocally(const GravityRankPoints<T>& points,
  const GravityProblem<T>& problem, Backend backend, const RunControl& control, Communicator& comm,
  RunInfo& info)
{
  const std::size_t nq = points.numQueries();
  std::vector<double> out(4 * nq, 0.0);
  agreeOnRunErrors(comm,
    [&]
    {
      if (nq > 0)
      {
        GravityProblem<T> local = problem;
        local.sources = points.srcXyz.data();
        local.numSources = points.srcMass.size();
        local.sourceMasses = points.srcMass.data();
        // Self: the own sources come first and query themselves.
        local.queries = points.self ? points.srcXyz.data() : points.qryXyz.data();
        local.numQueries = nq;
        local.queriesFromSource = points.self ? 0 : std::size_t(-1);
        RunInfo localInfo =
          computeGravity(local, GravityResults{ out.data(), out.data() + nq }, backend, control);
        info.backend = localInfo.backend;
        info.note = localInfo.note;
        for (auto& s : localInfo.stageSeconds)
          info.stageSeconds.push_back(s);
        for (auto& c : localInfo.counters)
          info.counters.push_back(c);
      }
    });
  return out;
}

// Every query's results to the rank and position it came from; returns the
// bytes received.
template <class T>
double sendResultsHome(const GravityRankPoints<T>& points, const std::vector<double>& local,
  Communicator& comm, const GravityResults& results)
{
  const int ranks = comm.size(), me = comm.rank();
  const std::size_t nq = points.numQueries();
  auto store = [&](Index q, const double* v)
  {
    if (results.potential)
      results.potential[q] = v[0];
    if (results.acceleration)
      for (int k = 0; k < 3; ++k)
        results.acceleration[3 * std::size_t(q) + k] = v[1 + k];
  };
  const std::size_t recordBytes = sizeof(Index) + 4 * sizeof(double);
  RecordsHome back(countByOrigin(points.qryRank, ranks), me, recordBytes);
  for (std::size_t q = 0; q < nq; ++q)
  {
    const double v[4] = { local[q], local[nq + 3 * q], local[nq + 3 * q + 1],
      local[nq + 3 * q + 2] };
    if (points.qryRank[q] == me)
    {
      store(points.qryIndex[q], v);
      continue;
    }
    char*& b = back.cursor[points.qryRank[q]];
    putField(b, points.qryIndex[q]);
    for (double x : v)
      putField(b, x);
  }
  const auto got = comm.allToAll(back.send);
  double bytes = 0;
  for (const auto& part : got)
  {
    bytes += double(part.size());
    for (const char* p = part.data(); p < part.data() + part.size();)
    {
      const Index q = takeField<Index>(p);
      double v[4];
      for (double& x : v)
        x = takeField<double>(p);
      store(q, v);
    }
  }
  return bytes;
}
} // namespace

template <class T>
RunInfo computeGravityDistributed(Communicator& comm, const GravityProblem<T>& problem,
  const GravityResults& results, Backend backend, const RunControl& control)
{
  agreeOnErrors(comm, gravityProblemError(problem));
  if (comm.size() == 1)
    return computeGravity(problem, results, backend, control);
  RunInfo info;
  // A self query only when no rank has separate queries: a rank whose piece
  // of the Query input is empty may pass none.
  const bool self = allSum(comm, problem.queries ? 1 : 0) == 0;
  const std::size_t local = self ? problem.numSources : (problem.queries ? problem.numQueries : 0);
  if (allSum(comm, std::int64_t(local)) == 0)
    return info;

  double decomposed = 0;
  StageTimer decomposition(&info, "decomposition");
  const bool keep = piecesAreCompact(problem, self, comm);
  GravityRankPoints<T> points =
    keep ? keepPieces(problem, self, comm) : decompose(problem, self, comm, decomposed);
  decomposition.stop();
  info.counters.emplace_back("input pieces kept", keep ? 1.0 : 0.0);

  StageTimer let(&info, "LET exchange");
  const int threads = control.numThreads > 0 ? control.numThreads : omp_get_max_threads();
  std::size_t multipoles = 0;
  const double letBytes = exchangeLet(points, problem.openingAngle, threads, comm, multipoles);
  let.stop();
  info.counters.emplace_back("local sources", double(points.ownSources));
  info.counters.emplace_back(
    "LET sources received", double(points.srcMass.size() - points.ownSources));
  info.counters.emplace_back("LET multipoles received", double(multipoles));

  StageTimer walk(&info, "local gravity");
  const std::vector<double> sums = gravityLocally(points, problem, backend, control, comm, info);
  walk.stop();

  StageTimer home(&info, "results home");
  const double homeBytes = sendResultsHome(points, sums, comm, results);
  home.stop();

  const double perPoint = local ? 1.0 / double(local) : 0.0;
  const double received = decomposed + letBytes + homeBytes;
  info.counters.emplace_back("decomposition bytes per local point", decomposed * perPoint);
  info.counters.emplace_back("LET bytes per local point", letBytes * perPoint);
  info.counters.emplace_back("results bytes per local point", homeBytes * perPoint);
  info.counters.emplace_back("received bytes", received);
  info.counters.emplace_back("received bytes per local point", received * perPoint);
  return info;
}

template RunInfo computeGravityDistributed<float>(
  Communicator&, const GravityProblem<float>&, const GravityResults&, Backend, const RunControl&);
template RunInfo computeGravityDistributed<double>(
  Communicator&, const GravityProblem<double>&, const GravityResults&, Backend, const RunControl&);
} // namespace jz
