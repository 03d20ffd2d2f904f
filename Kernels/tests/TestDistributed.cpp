// The distributed kNN and friends-of-friends on simulated ranks (threads):
// identical NeighborIds, distances, smoothing lengths, GroupIds and
// GroupSizes to a single-process run, for 2-4 ranks and several partitions
// (random, slabs, an empty rank, everything on one rank).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "PointSets.h"
#include "Problems.h"
#include "RankPartitions.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "distributed/RankOrderSum.h"
#include "jz/Distributed.h"

namespace
{
struct Piece
{
  std::vector<double> xyz, mass, vel;
  std::vector<jz::GlobalId> ids;
  std::vector<std::size_t> global; // global index of each local point
};

std::vector<Piece> split(const std::vector<double>& xyz, const std::vector<int>& owner, int ranks)
{
  std::vector<Piece> pieces(ranks);
  for (std::size_t i = 0; i < owner.size(); ++i)
  {
    Piece& p = pieces[owner[i]];
    p.xyz.insert(p.xyz.end(), &xyz[3 * i], &xyz[3 * i] + 3);
    p.mass.push_back(1.0 + double(i % 5));
    for (int d = 0; d < 3; ++d)
      p.vel.push_back(std::sin(double(i) + d));
    p.ids.push_back(jz::GlobalId(i));
    p.global.push_back(i);
  }
  return pieces;
}

void knnCase(const std::string& kind, const std::string& how, int ranks, int k, bool periodic,
  std::size_t numPoints = 6000)
{
  std::vector<double> xyz = jztest::makePoints<double>(kind, numPoints, 17);
  const std::size_t n = xyz.size() / 3;
  std::vector<double> mass(n);
  for (std::size_t i = 0; i < n; ++i)
    mass[i] = 1.0 + double(i % 5);
  jz::KnnProblem<double> serial = jztest::knnProblem(xyz.data(), n, k);
  serial.sourceMasses = mass.data();
  serial.periodic = periodic;
  if (periodic)
    for (int d = 0; d < 3; ++d)
    {
      serial.boxLo[d] = 0.1;
      serial.boxHi[d] = 0.8;
    }
  std::vector<jz::GlobalId> ids(n * k);
  std::vector<double> dist(n * k), h(n), rho(n);
  jz::computeKnn(serial, jztest::knnResults(h, rho, ids, dist), jz::Backend::CPU);

  const std::vector<int> owner = partitionPoints(how, xyz.data(), xyz.size() / 3, ranks, 3);
  std::vector<Piece> pieces = split(xyz, owner, ranks);
  jztest::ThreadWorld world(ranks);
  std::vector<int> bad(ranks, 0);
  world.run(
    [&](jz::Communicator& comm)
    {
      Piece& p = pieces[comm.rank()];
      const std::size_t m = p.ids.size();
      jz::KnnProblem<double> pr = serial;
      pr.sources = p.xyz.data();
      pr.numSources = m;
      pr.sourceMasses = p.mass.data();
      pr.sourceIds = p.ids.data();
      std::vector<jz::GlobalId> lids(m * k, -5);
      std::vector<double> ldist(m * k, -1), lh(m, -1), lrho(m, -1);
      jz::KnnResults<double> out;
      out.neighborIds = lids.data();
      out.neighborDistances = ldist.data();
      out.smoothingLength = lh.data();
      out.density = lrho.data();
      jz::RunControl one;
      one.numThreads = 1;
      jz::computeKnnDistributed(pr, out, comm, jz::Backend::CPU, one);
      for (std::size_t i = 0; i < m; ++i)
      {
        const std::size_t g = p.global[i];
        for (int j = 0; j < k; ++j)
          if (lids[i * k + j] != ids[g * k + j] || ldist[i * k + j] != dist[g * k + j])
            ++bad[comm.rank()];
        if (lh[i] != h[g] || lrho[i] != rho[g])
          ++bad[comm.rank()];
      }
    });
  int total = 0;
  for (int b : bad)
    total += b;
  JZ_CHECK_MSG(total == 0,
    kind << " " << how << " ranks=" << ranks << " k=" << k << " periodic=" << periodic << ": "
         << total << " mismatches");
}

void fofCase(const std::string& kind, const std::string& how, int ranks, double l, bool periodic)
{
  std::vector<double> xyz = jztest::makePoints<double>(kind, 8000, 23);
  const std::size_t n = xyz.size() / 3;
  const std::vector<int> owner = partitionPoints(how, xyz.data(), xyz.size() / 3, ranks, 3);
  std::vector<Piece> pieces = split(xyz, owner, ranks);
  std::vector<double> mass(n), vel(3 * n);
  std::vector<jz::GlobalId> gids(n);
  for (int r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < pieces[r].global.size(); ++i)
    {
      const std::size_t g = pieces[r].global[i];
      mass[g] = pieces[r].mass[i];
      for (int d = 0; d < 3; ++d)
        vel[3 * g + d] = pieces[r].vel[3 * i + d];
      gids[g] = pieces[r].ids[i];
    }
  jz::FofProblem<double> pr;
  pr.points = xyz.data();
  pr.numPoints = n;
  pr.linkingLength = l;
  pr.periodic = periodic;
  pr.ids = gids.data();
  if (periodic)
    for (int d = 0; d < 3; ++d)
    {
      pr.boxLo[d] = 0.0;
      pr.boxHi[d] = 1.0;
    }
  jz::FofDistributedOptions opt;
  opt.minimumGroupSize = 5;
  opt.masses = mass.data();
  opt.velocities = vel.data();
  jz::FofDistributedResult serial;
  jz::SerialCommunicator one;
  jz::computeFofDistributed(pr, opt, serial, one, jz::Backend::CPU);

  std::vector<jz::FofDistributedResult> results(ranks);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      Piece& p = pieces[comm.rank()];
      jz::FofProblem<double> lp = pr;
      lp.points = p.xyz.data();
      lp.numPoints = p.ids.size();
      lp.ids = p.ids.data();
      jz::FofDistributedOptions lo = opt;
      lo.masses = p.mass.data();
      lo.velocities = p.vel.data();
      jz::RunControl single;
      single.numThreads = 1;
      jz::computeFofDistributed(lp, lo, results[comm.rank()], comm, jz::Backend::CPU, single);
    });
  int bad = 0;
  std::size_t rows = 0;
  auto report = [&](const char* what, std::size_t g, double got, double want)
  {
    if (bad < 6)
      std::fprintf(stderr, "    %s group/point %zu: got %.17g want %.17g\n", what, g, got, want);
  };
  for (int r = 0; r < ranks; ++r)
  {
    const Piece& p = pieces[r];
    const jz::FofDistributedResult& res = results[r];
    JZ_CHECK_EQ(res.numGroups, serial.numGroups);
    for (std::size_t i = 0; i < p.global.size(); ++i)
    {
      const std::size_t g = p.global[i];
      if (res.groupId[i] != serial.groupId[g] || res.groupSize[i] != serial.groupSize[g])
      {
        report("groupId", g, double(res.groupId[i]), double(serial.groupId[g]));
        report("groupSize", g, double(res.groupSize[i]), double(serial.groupSize[g]));
        ++bad;
      }
    }
    rows += res.catalogueGroupId.size();
    for (std::size_t c = 0; c < res.catalogueGroupId.size(); ++c)
    {
      const std::size_t g = std::size_t(res.catalogueGroupId[c]);
      auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * (1 + std::fabs(b)); };
      auto check = [&](const char* what, double got, double want)
      {
        if (!close(got, want))
        {
          report(what, g, got, want);
          ++bad;
        }
      };
      check("count", double(res.catalogue.count[c]), double(serial.catalogue.count[g]));
      check("mass", res.catalogue.mass[c], serial.catalogue.mass[g]);
      check("inertia", res.catalogue.inertiaRadius[c], serial.catalogue.inertiaRadius[g]);
      check(
        "dispersion", res.catalogue.velocityDispersion[c], serial.catalogue.velocityDispersion[g]);
      for (int d = 0; d < 3; ++d)
      {
        check(
          "com", res.catalogue.centerOfMass[3 * c + d], serial.catalogue.centerOfMass[3 * g + d]);
        check("velocity", res.catalogue.meanVelocity[3 * c + d],
          serial.catalogue.meanVelocity[3 * g + d]);
      }
    }
  }
  JZ_CHECK_EQ(rows, serial.numGroups); // every catalogue row on exactly one rank
  JZ_CHECK_MSG(bad == 0,
    kind << " " << how << " ranks=" << ranks << " l=" << l << ": " << bad << " mismatches");
  JZ_CHECK(serial.numGroups > 0);
}
} // namespace

JZ_TEST(DistributedKnnMatchesSerial)
{
  for (int ranks : { 2, 3, 4 })
    for (const std::string how : { "random", "slabs", "empty", "one" })
    {
      knnCase("clustered", how, ranks, 16, false);
      knnCase("uniform", how, ranks, 40, true);
    }
  knnCase("lattice", "random", 3, 50, false);
  knnCase("duplicates", "slabs", 4, 8, false);
  // Bulk duplicates: runs far longer than K and the leaf size cut by ranks.
  knnCase("runs", "random", 3, 8, false);
  knnCase("runs", "slabs", 4, 40, true);
}

// Trees of two planes per rank, where the ghost radii are walked only under
// parents near another rank's points.
JZ_TEST(DistributedKnnMatchesSerialOnDeepTrees)
{
  knnCase("clustered", "random", 2, 16, true, 60000);
  knnCase("uniform", "slabs", 2, 16, false, 60000);
}

JZ_TEST(DistributedFofMatchesSerial)
{
  for (int ranks : { 2, 3, 4 })
    for (const std::string how : { "random", "slabs", "empty", "one" })
    {
      fofCase("clustered", how, ranks, 0.01, false);
      fofCase("uniform", how, ranks, 0.04, true);
    }
  fofCase("uniform", "slabs", 4, 0.06, true); // beyond percolation: one giant group across ranks
  fofCase("runs", "random", 3, 0.01, false);
  fofCase("runs", "slabs", 4, 0.03, true);
}

JZ_TEST(DistributedKnnQueriesOnSomeRanksOnly)
{
  // Separate queries, but one rank has none and passes no query array.
  auto src = jztest::makePoints<double>("clustered", 4000, 31);
  auto qry = jztest::makePoints<double>("uniform", 900, 32);
  const int k = 12;
  jz::KnnProblem<double> serial;
  serial.sources = src.data();
  serial.numSources = 4000;
  serial.queries = qry.data();
  serial.numQueries = 900;
  serial.k = k;
  std::vector<jz::GlobalId> ids(900 * k);
  jz::KnnResults<double> res;
  res.neighborIds = ids.data();
  jz::computeKnn(serial, res, jz::Backend::CPU);
  const int ranks = 3;
  std::vector<int> bad(ranks, 0);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      // Sources split in thirds; queries only on ranks 1 and 2.
      std::vector<double> s(
        src.begin() + 3 * (4000 * r / 3), src.begin() + 3 * (4000 * (r + 1) / 3));
      std::vector<jz::GlobalId> sid;
      for (int i = 4000 * r / 3; i < 4000 * (r + 1) / 3; ++i)
        sid.push_back(i);
      const int q0 = r == 0 ? 0 : (r == 1 ? 0 : 400), q1 = r == 0 ? 0 : (r == 1 ? 400 : 900);
      std::vector<double> q(qry.begin() + 3 * q0, qry.begin() + 3 * q1);
      jz::KnnProblem<double> pr = serial;
      pr.sources = s.data();
      pr.numSources = sid.size();
      pr.sourceIds = sid.data();
      pr.queries = r == 0 ? nullptr : q.data();
      pr.numQueries = q1 - q0;
      std::vector<jz::GlobalId> got((q1 - q0) * k + 1, -1);
      jz::KnnResults<double> out;
      out.neighborIds = got.data();
      jz::computeKnnDistributed(pr, out, comm, jz::Backend::CPU);
      for (int i = 0; i < (q1 - q0) * k; ++i)
        if (got[i] != ids[q0 * k + i])
          ++bad[r];
      if (got[(q1 - q0) * k] != -1)
        ++bad[r]; // nothing written past the end
    });
  JZ_CHECK_EQ(bad[0] + bad[1] + bad[2], 0);
}

JZ_TEST(FofInvariantToWholePeriodShifts)
{
  // Moving points by whole periods changes nothing: groups, sizes and the
  // catalogue (centres wrapped into the box) stay the same.
  std::vector<double> xyz = jztest::makePoints<double>("clustered", 5000, 9);
  for (double& x : xyz)
    x = x - std::floor(x); // inside [0, 1)
  std::vector<double> shifted = xyz;
  std::mt19937 rng(1);
  for (double& x : shifted)
    x += double(int(rng() % 7) - 3);
  std::vector<jz::GlobalId> ids(5000);
  for (int i = 0; i < 5000; ++i)
    ids[i] = 5000 - i;
  jz::FofProblem<double> pr;
  pr.numPoints = 5000;
  pr.ids = ids.data();
  pr.linkingLength = 0.01;
  pr.periodic = true;
  jz::FofDistributedOptions opt;
  opt.minimumGroupSize = 10;
  jz::SerialCommunicator one;
  jz::FofDistributedResult a, b;
  pr.points = xyz.data();
  jz::computeFofDistributed(pr, opt, a, one, jz::Backend::CPU);
  pr.points = shifted.data();
  jz::computeFofDistributed(pr, opt, b, one, jz::Backend::CPU);
  JZ_CHECK(a.numGroups > 3);
  JZ_CHECK(a.groupId == b.groupId);
  JZ_CHECK(a.groupSize == b.groupSize);
  JZ_CHECK_EQ(a.catalogue.numGroups, b.catalogue.numGroups);
  for (std::size_t g = 0; g < a.catalogue.numGroups && g < b.catalogue.numGroups; ++g)
  {
    JZ_CHECK(std::fabs(a.catalogue.inertiaRadius[g] - b.catalogue.inertiaRadius[g]) < 1e-9);
    for (int d = 0; d < 3; ++d)
      JZ_CHECK(std::fabs(
                 a.catalogue.centerOfMass[3 * g + d] - b.catalogue.centerOfMass[3 * g + d]) < 1e-9);
  }
}

JZ_TEST(DistributedErrorOnOneRankFailsAll)
{
  // A NaN on rank 1 only: every rank throws the same message, none hangs.
  for (int algorithm = 0; algorithm < 2; ++algorithm)
  {
    const int ranks = 3;
    std::vector<std::string> messages(ranks);
    jztest::ThreadWorld world(ranks);
    world.run(
      [&](jz::Communicator& comm)
      {
        std::vector<double> xyz = jztest::makePoints<double>("uniform", 200, 40 + comm.rank());
        if (comm.rank() == 1)
          xyz[7] = std::nan("");
        std::vector<jz::GlobalId> ids(200);
        for (int i = 0; i < 200; ++i)
          ids[i] = jz::GlobalId(200 * comm.rank() + i);
        try
        {
          if (algorithm == 0)
          {
            jz::KnnProblem<double> pr;
            pr.sources = xyz.data();
            pr.numSources = 200;
            pr.sourceIds = ids.data();
            pr.k = 4;
            std::vector<double> h(200);
            jz::KnnResults<double> out;
            out.smoothingLength = h.data();
            jz::computeKnnDistributed(pr, out, comm, jz::Backend::CPU);
          }
          else
          {
            jz::FofProblem<double> pr;
            pr.points = xyz.data();
            pr.numPoints = 200;
            pr.ids = ids.data();
            pr.linkingLength = 0.05;
            jz::FofDistributedResult res;
            jz::computeFofDistributed(pr, jz::FofDistributedOptions(), res, comm, jz::Backend::CPU);
          }
        }
        catch (const jz::Error& e)
        {
          messages[comm.rank()] = e.what();
        }
      });
    for (int r = 0; r < ranks; ++r)
      JZ_CHECK_MSG(
        messages[r].find("rank 1:") == 0 && messages[r].find("non-finite") != std::string::npos,
        "rank " << r << " said '" << messages[r] << "'");
  }
}

// Sums over ranks equal, bit for bit, the plain loop that adds every rank's
// vector in rank order: for vectors shorter than the number of ranks, not a
// multiple of it, one chunk and many, on every rank.
JZ_TEST(SumInRankOrderIsTheRankOrderLoop)
{
  for (int ranks : { 2, 3, 5 })
    for (std::size_t n : { std::size_t(0), std::size_t(1), std::size_t(4), std::size_t(1001) })
      for (std::size_t chunk : { std::size_t(7), std::size_t(64), jz::kRankOrderSumChunk })
      {
        // Values of mixed signs and magnitudes, so that the order of the
        // additions shows in the last bits.
        auto value = [](int rank, std::size_t i) {
          return std::ldexp(
            std::sin(1.7 * double(i) + 0.3 * rank), int((i * 7 + rank * 3) % 41) - 20);
        };
        std::vector<double> expected(n, 0.0);
        for (int r = 0; r < ranks; ++r)
          for (std::size_t i = 0; i < n; ++i)
            expected[i] += value(r, i);
        std::vector<std::vector<double>> got(static_cast<std::size_t>(ranks));
        jztest::ThreadWorld world(ranks);
        world.run(
          [&](jz::Communicator& comm)
          {
            std::vector<double> v(n);
            for (std::size_t i = 0; i < n; ++i)
              v[i] = value(comm.rank(), i);
            jz::sumInRankOrder(comm, v, chunk);
            got[std::size_t(comm.rank())] = v;
          });
        for (int r = 0; r < ranks; ++r)
          JZ_CHECK_MSG(got[std::size_t(r)] == expected,
            "ranks " << ranks << " n " << n << " chunk " << chunk << " rank " << r);
      }
}

JZ_TEST_MAIN()
