// The distributed EMST and HDBSCAN* on simulated ranks (threads) against the
// single-process ones: the union of the ranks' edges is the serial edge set
// bit for bit (weights, ids, endpoint coordinates, each edge once), the
// core distances and the clusters are the serial ones; for 1-4 ranks, float
// and double, uniform, clustered, duplicate-heavy and periodic points, both
// metrics, several partitions (random, slabs, an empty rank, all on one
// rank); and bad input fails on every rank.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "PointSets.h"
#include "RankPartitions.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/Emst.h"
#include "jz/Hdbscan.h"

namespace
{
using jz::GlobalId;
using Edge = std::tuple<double, GlobalId, GlobalId>;

template <class T>
struct Piece
{
  std::vector<T> xyz;
  std::vector<GlobalId> ids;
};

// Ids are scrambled (not the input order) so that ties test the id order.
template <class T>
std::vector<Piece<T>> split(const std::vector<T>& xyz, const std::vector<GlobalId>& ids,
  const std::vector<int>& owner, int ranks)
{
  std::vector<Piece<T>> pieces(ranks);
  for (std::size_t i = 0; i < owner.size(); ++i)
  {
    Piece<T>& p = pieces[owner[i]];
    p.xyz.insert(p.xyz.end(), &xyz[3 * i], &xyz[3 * i] + 3);
    p.ids.push_back(ids[i]);
  }
  return pieces;
}

struct Case
{
  std::string kind;
  bool periodic = false;
  bool mutual = false;
  double maxLength = jz::kInfinity;
};

template <class T>
jz::EmstProblem<T> problemOf(const Case& c)
{
  jz::EmstProblem<T> pr;
  pr.metric = c.mutual ? jz::EmstMetric::MutualReachability : jz::EmstMetric::Euclidean;
  pr.minSamples = 4;
  pr.periodic = c.periodic;
  pr.maxLength = c.maxLength;
  return pr;
}

// Uniform points in two unit cubes 10 apart along x: the first half of the
// ids in one, the rest in the other.
template <class T>
std::vector<T> twoFarBlocks(std::size_t n)
{
  std::vector<T> xyz = jztest::makePoints<T>("uniform", n, 7);
  for (std::size_t i = n / 2; i < n; ++i)
    xyz[3 * i] += T(10);
  return xyz;
}

// The distributed edges (and core distances) against the serial run's;
// returns the points that the searches received, summed over the ranks.
template <class T>
double checkCase(const Case& c, std::size_t n, int ranks, const std::string& how)
{
  std::vector<T> xyz = c.kind == "twoblocks" ? twoFarBlocks<T>(n) : jztest::makePoints<T>(c.kind, n, 7);
  if (c.periodic) // some points outside the box: wrapped in
    for (std::size_t i = 0; i < 3 * n; i += 11)
      xyz[i] += T(1);
  std::vector<GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = GlobalId((i * 7919) % n) * 3 + 5;
  jz::EmstProblem<T> pr = problemOf<T>(c);
  pr.points = xyz.data();
  pr.numPoints = n;
  pr.ids = ids.data();
  jz::EmstEdges serial;
  jz::computeEmst(pr, serial, jz::Backend::CPU);
  std::vector<Edge> want;
  for (std::size_t e = 0; e < serial.size(); ++e)
    want.emplace_back(serial.weight2[e], ids[serial.from[e]], ids[serial.to[e]]);
  std::sort(want.begin(), want.end());

  std::vector<double> xyzD(xyz.begin(), xyz.end());
  const std::vector<Piece<T>> pieces =
    split(xyz, ids, partitionPoints(how, xyzD.data(), n, ranks, 5), ranks);
  std::vector<std::vector<Edge>> parts(ranks);
  std::vector<int> bad(ranks, 0);
  std::vector<std::vector<std::pair<GlobalId, double>>> cores(ranks);
  std::vector<double> searched(ranks, 0);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      const Piece<T>& p = pieces[r];
      jz::EmstProblem<T> piece = problemOf<T>(c);
      piece.points = p.xyz.data();
      piece.numPoints = p.ids.size();
      piece.ids = p.ids.data();
      jz::EmstRankEdges<T> out;
      const jz::RunInfo info = jz::computeEmstDistributed(piece, comm, out, jz::Backend::CPU);
      for (const auto& [name, value] : info.counters)
        if (name == "points received: searches")
          searched[r] = value;
      for (std::size_t e = 0; e < out.weight2.size(); ++e)
      {
        parts[r].emplace_back(out.weight2[e], out.fromId[e], out.toId[e]);
        // The endpoints: `from` is this rank's point, both coordinates as input.
        const std::size_t a = out.fromLocal[e];
        bad[r] += a >= p.ids.size() || p.ids[a] != out.fromId[e] || out.fromId[e] >= out.toId[e];
        for (int d = 0; d < 3 && a < p.ids.size(); ++d)
          bad[r] += out.fromPoint[3 * e + d] != p.xyz[3 * a + d];
        const std::size_t b = std::size_t(
          std::find(ids.begin(), ids.end(), out.toId[e]) - ids.begin());
        for (int d = 0; d < 3; ++d)
          bad[r] += out.toPoint[3 * e + d] != xyz[3 * b + d];
      }
      for (std::size_t i = 0; i < out.core2.size(); ++i)
        cores[r].emplace_back(p.ids[i], out.core2[i]);
      bad[r] += c.mutual && out.core2.size() != p.ids.size();
    });
  std::vector<Edge> all;
  for (auto& part : parts)
    all.insert(all.end(), part.begin(), part.end());
  std::sort(all.begin(), all.end());
  int badCount = 0;
  for (int b : bad)
    badCount += b;
  const std::string what = c.kind + (c.periodic ? " periodic" : "") +
    (c.mutual ? " mutual" : "") + (c.maxLength < jz::kInfinity ? " forest" : "") + " " +
    std::to_string(sizeof(T) * 8) + "-bit, " + std::to_string(ranks) + " ranks " + how;
  JZ_CHECK_MSG(all == want, what << ": " << all.size() << " edges, want " << want.size());
  JZ_CHECK_MSG(badCount == 0, what << ": " << badCount << " wrong endpoints");
  if (c.mutual)
  {
    std::size_t wrong = 0;
    for (const auto& part : cores)
      for (const auto& [id, core2] : part)
      {
        const std::size_t i = std::size_t(std::find(ids.begin(), ids.end(), id) - ids.begin());
        wrong += serial.core2[i] != core2;
      }
    JZ_CHECK_MSG(wrong == 0, what << ": " << wrong << " core distances differ");
  }
  double total = 0;
  for (double v : searched)
    total += v;
  return total;
}

// Equal, or both NaN (GLOSH gives 0/0 in blobs of identical points, serially too).
bool same(double a, double b)
{
  return a == b || (std::isnan(a) && std::isnan(b));
}

// HDBSCAN* per point as the single-process run: cluster ids, probabilities,
// outlier scores and core distances, bit for bit; the tree on rank 0 only.
template <class T>
void checkHdbscan(const std::string& kind, jz::ClusterSelection selection, int ranks)
{
  const std::size_t n = 2000;
  std::vector<T> xyz = jztest::makePoints<T>(kind, n, 3);
  std::vector<GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = GlobalId((i * 7919) % n) * 3 + 5;
  jz::HdbscanOptions options;
  options.minClusterSize = 15;
  options.minSamples = 6;
  options.selection = selection;
  jz::EmstProblem<T> pr;
  pr.points = xyz.data();
  pr.numPoints = n;
  pr.ids = ids.data();
  jz::HdbscanResult serial;
  jz::computeHdbscan(pr, options, serial, jz::Backend::CPU);
  std::vector<double> xyzD(xyz.begin(), xyz.end());
  const std::vector<int> owner = partitionPoints("random", xyzD.data(), n, ranks, 5);
  const std::vector<Piece<T>> pieces = split(xyz, ids, owner, ranks);
  std::vector<int> wrong(ranks, 0);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      jz::EmstProblem<T> piece;
      piece.points = pieces[r].xyz.data();
      piece.numPoints = pieces[r].ids.size();
      piece.ids = pieces[r].ids.data();
      jz::HdbscanResult got;
      const jz::RunInfo info =
        jz::computeHdbscanDistributed(piece, options, comm, got, jz::Backend::CPU);
      wrong[r] += got.numClusters != serial.numClusters;
      // One rank holds the whole tree, the others none of it.
      wrong[r] += info.counter("tree edges held") != (r == 0 ? double(n - 1) : 0.0);
      for (std::size_t i = 0, k = 0; i < n; ++i)
      {
        if (owner[i] != r)
          continue;
        wrong[r] += got.clusterId[k] != serial.clusterId[i] ||
          got.probability[k] != serial.probability[i] ||
          !same(got.outlierScore[k], serial.outlierScore[i]) ||
          got.coreDistance[k] != serial.coreDistance[i];
        ++k;
      }
    });
  int sum = 0;
  for (int w : wrong)
    sum += w;
  JZ_CHECK_MSG(sum == 0, kind << " " << ranks << " ranks: " << sum << " points differ");
  JZ_CHECK_MSG(serial.numClusters > 1, kind << ": a test that finds no clusters proves little");
}
} // namespace

JZ_TEST(DistributedHdbscanEqualsSerial)
{
  for (int ranks : { 1, 2, 3, 4 })
  {
    checkHdbscan<double>("clustered", jz::ClusterSelection::ExcessOfMass, ranks);
    checkHdbscan<float>("clustered", jz::ClusterSelection::Leaf, ranks);
  }
  checkHdbscan<double>("duplicates", jz::ClusterSelection::ExcessOfMass, 3);
}

JZ_TEST(DistributedEmstEqualsSerial)
{
  for (const char* kind : { "uniform", "clustered", "duplicates" })
    for (bool mutual : { false, true })
      for (int ranks : { 1, 2, 3, 4 })
      {
        checkCase<double>(Case{ kind, false, mutual }, 1500, ranks, "random");
        checkCase<float>(Case{ kind, false, mutual }, 1500, ranks, "slabs");
      }
}

JZ_TEST(DistributedEmstPeriodic)
{
  for (bool mutual : { false, true })
    for (int ranks : { 2, 3, 4 })
    {
      checkCase<double>(Case{ "uniform", true, mutual }, 1200, ranks, "slabs");
      checkCase<float>(Case{ "clustered", true, mutual }, 1200, ranks, "random");
    }
}

JZ_TEST(DistributedEmstPartitions)
{
  for (const char* how : { "empty", "one" })
    for (int ranks : { 2, 4 })
    {
      checkCase<double>(Case{ "clustered", false, false }, 1000, ranks, how);
      checkCase<double>(Case{ "duplicates", true, true }, 1000, ranks, how);
    }
  // Runs of identical points larger than a leaf, split over ranks by id only.
  checkCase<double>(Case{ "runs", false, false }, 1500, 3, "random");
  checkCase<double>(Case{ "lattice", false, false }, 1000, 3, "random");
}

JZ_TEST(DistributedEmstEightRanks)
{
  for (const char* kind : { "uniform", "clustered" })
    for (bool mutual : { false, true })
    {
      checkCase<double>(Case{ kind, false, mutual }, 6000, 8, "random");
      checkCase<float>(Case{ kind, true, mutual }, 6000, 8, "slabs");
    }
}

// Two far blocks, one per rank: the last round's one component per rank
// probes the other rank with its point nearest to that rank's cover, and
// the edge found bounds the other points' asks (without it, every point of
// a block would ask).
JZ_TEST(DistributedEmstFarComponentsAskLittle)
{
  const std::size_t n = 4000;
  for (bool mutual : { false, true })
  {
    const double searched = checkCase<double>(Case{ "twoblocks", false, mutual }, n, 2, "halves");
    JZ_CHECK_MSG(searched < 0.05 * double(n),
      (mutual ? "mutual: " : "euclidean: ") << searched << " points received by the searches");
  }
}

JZ_TEST(DistributedEmstForest)
{
  for (bool mutual : { false, true })
    for (int ranks : { 2, 3 })
    {
      checkCase<double>(Case{ "clustered", false, mutual, 0.02 }, 1500, ranks, "random");
      checkCase<float>(Case{ "uniform", true, mutual, 0.05 }, 1500, ranks, "slabs");
      checkCase<double>(Case{ "duplicates", false, mutual, 0.0 }, 1500, ranks, "random");
    }
}

// Bad input on one rank ends every rank with the error and no output: a NaN
// on rank 1; MinSamples not below the total count; MinSamples whose core
// distance lists would not fit in rank 1's memory (60,000 points there,
// terabytes of lists), where the other ranks' lists would.
JZ_TEST(DistributedEmstBadInputFailsEveryRank)
{
  for (int which = 0; which < 3; ++which)
  {
    const int ranks = 3;
    std::vector<std::string> threw(ranks);
    jztest::ThreadWorld world(ranks);
    world.run(
      [&](jz::Communicator& comm)
      {
        const std::size_t n = which == 2 && comm.rank() == 1 ? 60000 : 4;
        std::vector<double> xyz = jztest::makePoints<double>("uniform", n, 9 + comm.rank());
        if (which == 0 && comm.rank() == 1)
          xyz[5] = std::nan("");
        std::vector<GlobalId> ids(n);
        for (std::size_t i = 0; i < n; ++i)
          ids[i] = GlobalId(100000 * comm.rank() + int(i));
        jz::EmstProblem<double> pr;
        pr.points = xyz.data();
        pr.numPoints = n;
        pr.ids = ids.data();
        pr.metric = jz::EmstMetric::MutualReachability;
        pr.minSamples = which == 1 ? 12 : which == 2 ? 59999 : 3; // 12 or 60,008 points in all
        jz::EmstRankEdges<double> out;
        try
        {
          jz::computeEmstDistributed(pr, comm, out, jz::Backend::CPU);
        }
        catch (const jz::Error& e)
        {
          threw[comm.rank()] = out.weight2.empty() ? e.what() : "output left";
        }
      });
    for (int r = 0; r < ranks; ++r)
    {
      JZ_CHECK_MSG(
        !threw[r].empty() && threw[r] != "output left", "case " << which << " rank " << r);
      if (which == 2)
        JZ_CHECK_MSG(threw[r].find("MinSamples") != std::string::npos &&
            threw[r].find("GiB") != std::string::npos,
          "rank " << r << ": " << threw[r]);
    }
  }
}

// An abort on one rank (its RunControl's progress says stop at its n-th
// call: the decomposition, the local tree, a round, the end) ends every rank
// with Aborted and no output, and no rank hangs; progress runs from 0 to 1
// on a run that is not stopped.
JZ_TEST(DistributedEmstAbortEndsEveryRank)
{
  const int ranks = 3;
  const std::size_t n = 3000;
  std::vector<double> xyz = jztest::makePoints<double>("clustered", n, 11);
  std::vector<GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = GlobalId((i * 7919) % n);
  std::vector<double> xyzD(xyz.begin(), xyz.end());
  const std::vector<Piece<double>> pieces =
    split(xyz, ids, partitionPoints("random", xyzD.data(), n, ranks, 5), ranks);
  for (const bool mutual : { false, true })
    for (const int stopAt : { 0, 1, 2, 3, 6, 1000000 })
    {
      std::vector<int> outcome(ranks, 0); // 1: Aborted without output, 2: finished
      std::vector<int> calls(ranks, 0);
      std::vector<double> last(ranks, -1);
      std::vector<int> backwards(ranks, 0);
      jztest::ThreadWorld world(ranks);
      world.run(
        [&](jz::Communicator& comm)
        {
          const int r = comm.rank();
          jz::EmstProblem<double> pr = problemOf<double>(Case{ "clustered", false, mutual });
          pr.points = pieces[r].xyz.data();
          pr.numPoints = pieces[r].ids.size();
          pr.ids = pieces[r].ids.data();
          jz::RunControl control;
          control.numThreads = 1;
          control.progress = [&, r](double f)
          {
            backwards[r] |= f < last[r] || f > 1.0 ? 1 : 0;
            last[r] = f;
            return !(r == 1 && calls[r]++ == stopAt);
          };
          jz::EmstRankEdges<double> out;
          try
          {
            jz::computeEmstDistributed(pr, comm, out, jz::Backend::CPU, control);
            outcome[r] = 2;
          }
          catch (const jz::Aborted&)
          {
            outcome[r] = out.weight2.empty() && out.fromId.empty() ? 1 : 3;
          }
          catch (const jz::Error&)
          {
            outcome[r] = 4;
          }
        });
      const bool finishes = stopAt == 1000000;
      for (int r = 0; r < ranks; ++r)
      {
        JZ_CHECK_MSG(outcome[r] == (finishes ? 2 : 1),
          "mutual " << mutual << " stop at " << stopAt << " rank " << r << ": " << outcome[r]);
        JZ_CHECK_MSG(!backwards[r], "progress not in [0, 1] ascending on rank " << r);
        if (finishes)
          JZ_CHECK_MSG(last[r] == 1.0, "progress ends at " << last[r] << " on rank " << r);
      }
    }
}

JZ_TEST_MAIN()
