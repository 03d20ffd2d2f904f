// Each phase of the distributed kNN and friends-of-friends on its own, on
// simulated ranks (threads), against brute-force references: the
// decomposition, the ghost exchange (complete: every remote point a rank's
// answers depend on arrives), the local walk's error agreement, the label
// agreement, the size/number/catalogue reductions and the way home.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "PointSets.h"
#include "Problems.h"
#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "fof/FofPhases.h"
#include "distributed/GhostSelection.h"
#include "knn/KnnPhases.h"
#include "jz/Geometry.h"
#include "jz/ZOrder.h"

namespace
{
constexpr int kRanks = 3;

// n points (clustered, some outside the periodic box [0.1, 0.9)^3), dealt at
// random to the ranks; ids are the global indices.
struct World
{
  std::vector<double> xyz;
  std::vector<std::vector<double>> xyzOf;
  std::vector<std::vector<jz::GlobalId>> idsOf;
  std::vector<std::vector<double>> massOf, velOf;

  World(std::size_t n, unsigned seed)
  {
    xyz = jztest::makePoints<double>("clustered", n, seed);
    for (std::size_t i = 0; i < 3 * n; i += 7)
      xyz[i] += 0.8 * double(int(i % 3) - 1); // outside the box by a period
    xyzOf.resize(kRanks);
    idsOf.resize(kRanks);
    massOf.resize(kRanks);
    velOf.resize(kRanks);
    std::mt19937 rng(seed);
    for (std::size_t i = 0; i < n; ++i)
    {
      const int r = int(rng() % kRanks);
      xyzOf[r].insert(xyzOf[r].end(), &xyz[3 * i], &xyz[3 * i] + 3);
      idsOf[r].push_back(jz::GlobalId(i));
      massOf[r].push_back(1.0 + double(i % 4));
      for (int d = 0; d < 3; ++d)
        velOf[r].push_back(std::cos(double(i) + d));
    }
  }
  std::size_t size() const { return xyz.size() / 3; }
};

// The periodic box [0.1, 0.9)^3 of every test here.
template <class Problem>
void inTestBox(Problem& p)
{
  p.periodic = true;
  for (int d = 0; d < 3; ++d)
  {
    p.boxLo[d] = 0.1;
    p.boxHi[d] = 0.9;
  }
}

jz::FofProblem<double> fofPiece(const World& w, int r, double l)
{
  jz::FofProblem<double> p;
  p.points = w.xyzOf[r].data();
  p.numPoints = w.idsOf[r].size();
  p.ids = w.idsOf[r].data();
  p.linkingLength = l;
  inTestBox(p);
  return p;
}

double wrapped(double x)
{
  return jz::wrapIntoBox(x, 0.1, 0.8);
}

double periodicDistance2(const double* a, const double* b)
{
  double s = 0;
  for (int d = 0; d < 3; ++d)
  {
    const double x = jz::separation(wrapped(a[d]), wrapped(b[d]), 0.8);
    s += x * x;
  }
  return s;
}

// Runs body(comm, bad) on every simulated rank, body counting the rank's
// mismatches into bad, and checks that no rank counted any.
template <class Body>
void onRanksCountingMismatches(Body body)
{
  std::vector<int> bad(kRanks, 0);
  jztest::ThreadWorld world(kRanks);
  world.run([&](jz::Communicator& comm) { body(comm, bad[comm.rank()]); });
  for (int r = 0; r < kRanks; ++r)
    JZ_CHECK_MSG(bad[r] == 0, "rank " << r << ": " << bad[r]);
}
} // namespace

JZ_TEST(DecomposeGivesContiguousBalancedZRanges)
{
  World w(6000, 1);
  std::vector<jz::FofRankPoints<double>> got(kRanks);
  jztest::ThreadWorld world(kRanks);
  world.run(
    [&](jz::Communicator& comm)
    {
      jz::FofDistributedOptions options;
      options.masses = w.massOf[comm.rank()].data();
      options.velocities = w.velOf[comm.rank()].data();
      got[comm.rank()] = jz::decomposeFofPoints(fofPiece(w, comm.rank(), 0.01), options, comm);
    });
  std::vector<int> seen(w.size(), 0);
  for (int r = 0; r < kRanks; ++r)
  {
    const auto& p = got[r];
    JZ_CHECK(p.numLocal() > 0.8 * w.size() / kRanks && p.numLocal() < 1.2 * w.size() / kRanks);
    JZ_CHECK_EQ(p.route.begin.size(), std::size_t(kRanks + 1));
    for (jz::Index i = 0; i < p.numLocal(); ++i)
    {
      const jz::GlobalId id = p.ids[i];
      ++seen[id];
      // The route leads back to the input point: block s holds rank s's
      // points in the order s sent them.
      int s = 0;
      while (p.route.begin[s + 1] <= i)
        ++s;
      const std::vector<jz::Index>& sent = got[s].route.send[r];
      JZ_CHECK_EQ(sent.size(), p.route.begin[s + 1] - p.route.begin[s]);
      const jz::Index origin = sent[i - p.route.begin[s]];
      JZ_CHECK_EQ(w.idsOf[s][origin], id);
      JZ_CHECK_EQ(p.mass[i], w.massOf[s][origin]);
      JZ_CHECK_EQ(p.velocity[3 * i + 2], w.velOf[s][3 * origin + 2]);
      for (int d = 0; d < 3; ++d)
        JZ_CHECK_EQ(p.xyz[3 * i + d], wrapped(w.xyz[3 * id + d]));
    }
  }
  for (int s : seen)
    JZ_CHECK_EQ(s, 1);
  // Rank r's points all precede rank r + 1's in z-order.
  auto extreme = [&](int r, bool wantMax)
  {
    const auto& p = got[r];
    const double* best = &p.xyz[0];
    for (jz::Index i = 1; i < p.numLocal(); ++i)
    {
      const double* q = &p.xyz[3 * i];
      if (wantMax ? jz::zLess(best, q) : jz::zLess(q, best))
        best = q;
    }
    return best;
  };
  for (int r = 0; r + 1 < kRanks; ++r)
    JZ_CHECK(jz::zLess(extreme(r, true), extreme(r + 1, false)));
}

JZ_TEST(FofGhostsHoldEveryRemotePointWithinTheLinkingLength)
{
  World w(5000, 2);
  const double l = 0.02;
  std::vector<jz::FofRankPoints<double>> pts(kRanks);
  std::vector<jz::FofGhostLinks> links(kRanks);
  jztest::ThreadWorld world(kRanks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      const auto problem = fofPiece(w, r, l);
      pts[r] = jz::decomposeFofPoints(problem, jz::FofDistributedOptions(), comm);
      links[r] = jz::exchangeFofGhosts(pts[r], problem, comm);
    });
  for (int r = 0; r < kRanks; ++r)
  {
    const auto& p = pts[r];
    std::set<jz::GlobalId> local(p.ids.begin(), p.ids.begin() + p.numLocal());
    std::set<jz::GlobalId> ghosts(p.ids.begin() + p.numLocal(), p.ids.end());
    JZ_CHECK_EQ(ghosts.size(), p.numTotal() - p.numLocal()); // each ghost once
    for (jz::GlobalId g : ghosts)
      JZ_CHECK(!local.count(g));
    // Brute force: every remote point within l of a local point is a ghost.
    std::size_t needed = 0, missing = 0;
    for (std::size_t j = 0; j < w.size(); ++j)
    {
      if (local.count(jz::GlobalId(j)))
        continue;
      for (jz::Index i = 0; i < p.numLocal(); ++i)
      {
        if (periodicDistance2(&p.xyz[3 * i], &w.xyz[3 * j]) <= l * l)
        {
          ++needed;
          missing += ghosts.count(jz::GlobalId(j)) ? 0 : 1;
          break;
        }
      }
    }
    JZ_CHECK(needed > 0);
    JZ_CHECK_MSG(missing == 0, "rank " << r << ": " << missing << " of " << needed);
    // What rank s received from r is what r says it sent to s.
    for (int s = 0; s < kRanks; ++s)
      JZ_CHECK_EQ(links[r].sent[s].size(), links[s].ghostBegin[r + 1] - links[s].ghostBegin[r]);
  }
}

JZ_TEST(RemoteCoverNeverMissesARemotePoint)
{
  // A leaf region that reaches another rank's point within its radius must
  // be reported as reaching (else the kNN ghost selection would use a
  // needlessly loose radius there); deep inside a rank, small radii must not.
  World w(6000, 4);
  const double l = 0.01;
  std::vector<jz::FofRankPoints<double>> pts(kRanks);
  std::vector<jz::RemoteCover<double>> cover;
  std::mutex coverMutex;
  std::vector<int> slot(kRanks);
  jztest::ThreadWorld world(kRanks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      const auto problem = fofPiece(w, r, l);
      pts[r] = jz::decomposeFofPoints(problem, jz::FofDistributedOptions(), comm);
      jz::exchangeFofGhosts(pts[r], problem, comm);
      jz::RemoteCover<double> c(pts[r].localTree, problem.boxLo, comm);
      std::lock_guard<std::mutex> lock(coverMutex);
      slot[r] = int(cover.size());
      cover.push_back(c);
    });
  jz::Periodicity per;
  for (int d = 0; d < 3; ++d)
    per.length[d] = 0.8;
  int missed = 0, far = 0, tested = 0;
  for (int r = 0; r < kRanks; ++r)
  {
    const jz::ZTree<double>& tree = pts[r].localTree;
    const jz::TreePlane<double>& leaves = tree.planes[0];
    for (jz::Index c = 0; c < leaves.numNodes(); ++c)
    {
      const jz::Box<double>& box = leaves.sourceBox[c];
      for (double radius : { 0.0, 0.005, 0.03, 0.1 })
      {
        bool reaches = false;
        for (int o = 0; o < kRanks && !reaches; ++o)
          for (jz::Index i = 0; o != r && i < pts[o].numLocal() && !reaches; ++i)
            reaches =
              jz::pointBoxDistance2(&pts[o].xyz[3 * std::size_t(i)], box, per) <= radius * radius;
        const bool says = cover[slot[r]].mayReach(box, radius * radius);
        missed += reaches && !says;
        far += !says;
        ++tested;
      }
    }
  }
  JZ_CHECK_MSG(missed == 0, missed << " of " << tested << " leaf regions missed");
  JZ_CHECK_MSG(far > tested / 10, "only " << far << " of " << tested << " seen as far");
}

// Every rank's answers that no ghost can change are final after the local
// search: the true K nearest (by brute force over all points) of a query
// outside the boundary are all local, and those of a boundary query are
// among the boundary's local sources and the ghosts (every stride-th query
// checked). The boundary must be a part of the queries, not none or all.
void checkKnnGhostsHoldEveryTrueNeighbour(std::size_t n, std::size_t stride, std::size_t minChecked)
{
  World w(n, 3);
  const int k = 10;
  std::vector<jz::KnnRankPoints<double>> pts(kRanks);
  std::vector<jz::KnnBoundary<double>> edge(kRanks);
  jztest::ThreadWorld world(kRanks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      jz::KnnProblem<double> problem;
      problem.sources = w.xyzOf[r].data();
      problem.numSources = w.idsOf[r].size();
      problem.sourceIds = w.idsOf[r].data();
      problem.k = k;
      inTestBox(problem);
      pts[r] = jz::decomposeKnnPoints(problem, true, comm);
      jz::RunInfo info;
      const jz::KnnLocalSearch<double> local = jz::searchKnnLocally(
        pts[r], problem, jz::KnnWanted(), jz::Backend::CPU, jz::RunControl(), comm, info);
      edge[r] = jz::exchangeKnnGhosts(pts[r], local, problem, comm);
    });
  std::size_t missing = 0, queries = 0, boundaryChecked = 0;
  for (int r = 0; r < kRanks; ++r)
  {
    const auto& p = pts[r];
    const auto& e = edge[r];
    JZ_CHECK(e.queries.size() > 0 && e.queries.size() < p.numQueries());
    JZ_CHECK(e.numGhosts() > 0);
    const std::set<jz::Index> boundary(e.queries.begin(), e.queries.end());
    std::set<jz::GlobalId> local(p.srcIds.begin(), p.srcIds.end()),
      near(e.ghostIds.begin(), e.ghostIds.end());
    JZ_CHECK_EQ(near.size(), e.numGhosts()); // no ghost twice
    for (const jz::Index s : e.sources)
      near.insert(p.srcIds[s]);
    for (std::size_t q = 0; q < p.numQueries(); q += stride, ++queries)
    {
      const bool onBoundary = boundary.count(jz::Index(q)) > 0;
      boundaryChecked += onBoundary;
      std::vector<std::pair<double, jz::GlobalId>> all;
      for (std::size_t j = 0; j < w.size(); ++j)
        all.emplace_back(periodicDistance2(&p.srcXyz[3 * q], &w.xyz[3 * j]), jz::GlobalId(j));
      std::partial_sort(all.begin(), all.begin() + k, all.end());
      for (int j = 0; j < k; ++j)
        missing += (onBoundary ? near : local).count(all[j].second) ? 0 : 1;
    }
  }
  JZ_CHECK(queries > minChecked);
  JZ_CHECK(boundaryChecked > 0 && boundaryChecked < queries);
  JZ_CHECK_EQ(missing, 0u);
}

JZ_TEST(KnnGhostsHoldEveryTrueNeighbour)
{
  checkKnnGhostsHoldEveryTrueNeighbour(4000, 7, 400);
}

// Trees of several planes per rank, many leaves' regions far from the other
// ranks (not sent: RemoteCover).
JZ_TEST(KnnGhostsHoldEveryTrueNeighbourOnDeepTrees)
{
  checkKnnGhostsHoldEveryTrueNeighbour(90000, 240, 300);
}

// An abort on one rank ends the local linking on every rank as an abort (not
// an error), so that none hangs in a later collective.
JZ_TEST(LocalWalkAbortStopsEveryRank)
{
  World w(3000, 4);
  std::vector<std::string> messages(kRanks);
  jztest::ThreadWorld world(kRanks);
  world.run(
    [&](jz::Communicator& comm)
    {
      const int r = comm.rank();
      const auto problem = fofPiece(w, r, 0.01);
      auto pts = jz::decomposeFofPoints(problem, jz::FofDistributedOptions(), comm);
      const auto links = jz::exchangeFofGhosts(pts, problem, comm);
      jz::RunControl control;
      if (r == 1)
        control.progress = [](double) { return false; }; // the user aborts on rank 1
      jz::RunInfo info;
      try
      {
        jz::linkFofLocally(pts, links, problem, jz::Backend::CPU, control, comm, info);
      }
      catch (const jz::Aborted&)
      {
        messages[r] = "aborted";
      }
      catch (const jz::Error& e)
      {
        messages[r] = std::string("error: ") + e.what();
      }
    });
  for (int r = 0; r < kRanks; ++r)
    JZ_CHECK_MSG(messages[r] == "aborted", r << ": " << messages[r]);
}

JZ_TEST(AgreedLabelsAreTheSmallestIdOfEachGlobalGroup)
{
  World w(6000, 5);
  const double l = 0.012;
  // Reference: the serial groups (labels are the smallest global ids).
  jz::FofProblem<double> all;
  all.points = w.xyz.data();
  all.numPoints = w.size();
  all.linkingLength = l;
  inTestBox(all);
  jz::FofGroups serial;
  jz::computeFofGroups(all, serial, jz::Backend::CPU);
  std::vector<std::size_t> members(w.size(), 0);
  for (jz::GlobalId label : serial.groupLabel)
    ++members[label];
  std::vector<int> rounds(kRanks, 0);
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      const auto problem = fofPiece(w, r, l);
      auto pts = jz::decomposeFofPoints(problem, jz::FofDistributedOptions(), comm);
      const auto links = jz::exchangeFofGhosts(pts, problem, comm);
      jz::RunInfo info;
      const auto groups = jz::linkFofLocally(pts, links, problem, jz::Backend::CPU, {}, comm, info);
      const auto agreed = jz::agreeFofLabels(pts, groups, links, 2, comm);
      rounds[r] = agreed.rounds;
      for (jz::Index i = 0; i < pts.numLocal(); ++i)
      {
        const jz::GlobalId id = pts.ids[i];
        const jz::GlobalId want = serial.groupLabel[id];
        if (agreed.isSingle(i))
        {
          bad += members[want] != 1; // single only when alone globally
          continue;
        }
        const jz::FofLabel& got = agreed.labelOf(i);
        bad += got.id != want;
        for (int d = 0; d < 3; ++d)
          bad += got.ref[d] != wrapped(w.xyz[3 * want + d]);
      }
    });
  JZ_CHECK(rounds[0] >= 1); // groups across ranks needed an exchange
}

JZ_TEST(GroupSizesAndNumbersAgreeOnEveryRank)
{
  // Synthetic labels: 400 groups with random sizes spread over the ranks.
  std::mt19937 rng(6);
  std::vector<jz::FofAgreedLabels> labels(kRanks);
  std::map<jz::GlobalId, jz::GlobalId> size;
  for (int g = 0; g < 400; ++g)
  {
    const jz::GlobalId label = jz::GlobalId(rng() % 100000) * 7 - 3000; // negative ids too
    const int n = 1 + int(rng() % 30);
    for (int m = 0; m < n; ++m)
    {
      jz::FofAgreedLabels& a = labels[rng() % kRanks];
      a.addPoint(jz::FofLabel{ label, { 0, 0, 0 } }, false);
      ++size[label];
    }
  }
  const jz::GlobalId minimum = 10;
  // Reference numbering: descending size, ties by label.
  std::vector<std::pair<jz::GlobalId, jz::GlobalId>> order; // (-size, label)
  for (const auto& s : size)
    if (s.second >= minimum)
      order.emplace_back(-s.second, s.first);
  std::sort(order.begin(), order.end());
  std::vector<std::size_t> owned(kRanks, 0);
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      const auto sizes = jz::reduceFofGroupSizes(labels[r], comm);
      const auto numbers = jz::numberFofGroups(sizes, minimum, comm);
      for (std::size_t c = 0; c < labels[r].label.size(); ++c)
      {
        const jz::GlobalId id = labels[r].label[c].id;
        bad += sizes.sizes[sizes.slot(id)] != size.at(id);
        bad += sizes.componentSize[c] != size.at(id);
      }
      for (const auto& o : sizes.owned)
        bad += jz::ownerOfLabel(o.first, kRanks) != r || o.second != size.at(o.first);
      owned[r] = sizes.owned.size();
      bad += numbers.numGroups != order.size();
      for (std::size_t g = 0; g < order.size(); ++g)
        bad += numbers.groupIdOf(order[g].second) != jz::GlobalId(g);
      for (const auto& s : size)
        if (s.second < minimum)
          bad += numbers.groupIdOf(s.first) != -1;
    });
  JZ_CHECK_EQ(owned[0] + owned[1] + owned[2], size.size()); // every group owned once
}

JZ_TEST(CatalogueRowsEqualDirectSumsOverEachGroup)
{
  World w(6000, 9);
  const double l = 0.012;
  const jz::GlobalId minimum = 5;
  jz::FofProblem<double> all = fofPiece(w, 0, l);
  all.points = w.xyz.data();
  all.numPoints = w.size();
  all.ids = nullptr;
  jz::FofGroups serial;
  jz::computeFofGroups(all, serial, jz::Backend::CPU);
  std::map<jz::GlobalId, std::vector<std::size_t>> members; // label -> members
  for (std::size_t i = 0; i < w.size(); ++i)
    members[serial.groupLabel[i]].push_back(i);
  // Mass and velocity of every point, by id.
  std::vector<double> mass(w.size()), vel(3 * w.size());
  for (int r = 0; r < kRanks; ++r)
    for (std::size_t i = 0; i < w.idsOf[r].size(); ++i)
    {
      const jz::GlobalId id = w.idsOf[r][i];
      mass[id] = w.massOf[r][i];
      for (int d = 0; d < 3; ++d)
        vel[3 * id + d] = w.velOf[r][3 * i + d];
    }
  std::vector<std::size_t> rows(kRanks, 0), kept(kRanks, 0);
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      const auto problem = fofPiece(w, r, l);
      jz::FofDistributedOptions options;
      options.masses = w.massOf[r].data();
      options.velocities = w.velOf[r].data();
      auto pts = jz::decomposeFofPoints(problem, options, comm);
      const auto links = jz::exchangeFofGhosts(pts, problem, comm);
      jz::RunInfo info;
      const auto groups = jz::linkFofLocally(pts, links, problem, jz::Backend::CPU, {}, comm, info);
      const auto agreed = jz::agreeFofLabels(pts, groups, links, minimum, comm);
      const auto sizes = jz::reduceFofGroupSizes(agreed, comm);
      const auto numbers = jz::numberFofGroups(sizes, minimum, comm);
      jz::FofCatalogue cat;
      std::vector<jz::GlobalId> rowId;
      jz::reduceFofCatalogue(pts, agreed, sizes, numbers, problem, true, comm, cat, rowId);
      rows[r] = rowId.size();
      kept[r] = numbers.numGroups;
      for (std::size_t c = 0; c < rowId.size(); ++c)
      {
        JZ_CHECK(c == 0 || rowId[c] > rowId[c - 1]); // rows by GroupId
        jz::GlobalId label = -1;
        for (const auto& il : numbers.idOfLabel)
          if (il.second == rowId[c])
            label = il.first;
        const std::vector<std::size_t>& m = members.at(label);
        double M = 0, off[3] = { 0, 0, 0 }, vm[3] = { 0, 0, 0 };
        for (std::size_t i : m)
        {
          M += mass[i];
          for (int d = 0; d < 3; ++d)
          {
            off[d] += mass[i] *
              jz::nearestImageOffset(
                wrapped(w.xyz[3 * i + d]) - wrapped(w.xyz[3 * label + d]), 0.8);
            vm[d] += mass[i] * vel[3 * i + d];
          }
        }
        double r2 = 0, s2 = 0;
        for (std::size_t i : m)
          for (int d = 0; d < 3; ++d)
          {
            const double x = jz::nearestImageOffset(
                               wrapped(w.xyz[3 * i + d]) - wrapped(w.xyz[3 * label + d]), 0.8) -
              off[d] / M;
            const double v = vel[3 * i + d] - vm[d] / M;
            r2 += mass[i] * x * x;
            s2 += mass[i] * v * v;
          }
        auto far = [](double a, double b)
        { return !(std::fabs(a - b) <= 1e-9 * (1 + std::fabs(b))); };
        bad += cat.count[c] != jz::GlobalId(m.size()) || far(cat.mass[c], M);
        for (int d = 0; d < 3; ++d)
        {
          const double com = wrapped(wrapped(w.xyz[3 * label + d]) + off[d] / M);
          bad +=
            far(cat.centerOfMass[3 * c + d], com) || far(cat.meanVelocity[3 * c + d], vm[d] / M);
        }
        bad += far(cat.inertiaRadius[c], std::sqrt(r2 / M));
        bad += far(cat.velocityDispersion[c], std::sqrt(s2 / (3 * M)));
      }
    });
  JZ_CHECK(kept[0] > 10);
  JZ_CHECK_EQ(rows[0] + rows[1] + rows[2], kept[0]); // each row on exactly one rank
}

JZ_TEST(RouteMovesFieldsInPiecesAsInOne)
{
  // Every input point's id and coordinates reach their z-order rank, in
  // pieces of a few points per round (several rounds, ranks sending
  // different counts) as in one round.
  World w(3000, 1);
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      const auto problem = fofPiece(w, r, 0.01);
      auto at = [&](std::size_t i, double* p)
      {
        for (int d = 0; d < 3; ++d)
          p[d] = wrapped(problem.points[3 * i + d]);
      };
      const jz::ZOrderRoute route = jz::routeInZOrder<double>(problem.numPoints, at, comm);
      bad += route.mostSent < 50; // several rounds of 7 below
      jz::RouteScratch scratch;
      std::vector<double> whole(3 * route.size()), pieces(3 * route.size(), -1);
      std::vector<jz::GlobalId> ids(route.size(), -1);
      jz::moveAlongRoute(route, 3, at, whole.data(), scratch, comm);
      jz::moveAlongRoute(route, 3, at, pieces.data(), scratch, comm, 7 * 3 * sizeof(double));
      jz::moveAlongRoute(
        route, 1, [&](std::size_t i, jz::GlobalId* v) { *v = problem.ids[i]; }, ids.data(), scratch,
        comm, 5 * sizeof(jz::GlobalId));
      bad += whole != pieces;
      for (std::size_t i = 0; i < ids.size(); ++i)
        for (int d = 0; d < 3; ++d)
          bad += ids[i] < 0 || pieces[3 * i + d] != wrapped(w.xyz[3 * ids[i] + d]);
    });
}

JZ_TEST(ResultsGoHomeToTheirOrigin)
{
  // Each rank's input points go to random ranks; each holder keeps the
  // blocks in rank order, each in its sender's order (a route).
  std::mt19937 rng(8);
  const std::size_t perRank = 500;
  std::vector<jz::ZOrderRoute> route(kRanks);
  for (int r = 0; r < kRanks; ++r)
  {
    route[r].rank = r;
    route[r].send.resize(kRanks);
    for (std::size_t i = 0; i < perRank; ++i)
      route[r].send[rng() % kRanks].push_back(jz::Index(i));
  }
  // Point i of rank r has label r * 1000 + i % 50 (groups of 10); i % 7 == 0 are single.
  std::vector<jz::FofAgreedLabels> labels(kRanks);
  for (int h = 0; h < kRanks; ++h)
  {
    route[h].begin.assign(kRanks + 1, 0);
    for (int r = 0; r < kRanks; ++r)
    {
      route[h].begin[r + 1] = route[h].begin[r] + route[r].send[h].size();
      for (jz::Index i : route[r].send[h])
      {
        const jz::GlobalId label = jz::GlobalId(r * 1000 + i % 50);
        labels[h].addPoint(jz::FofLabel{ label, { 0, 0, 0 } }, i % 7 == 0);
      }
    }
  }
  std::map<jz::GlobalId, jz::GlobalId> expectedSize;
  for (int r = 0; r < kRanks; ++r)
    for (std::size_t i = 0; i < perRank; ++i)
      if (i % 7 != 0)
        ++expectedSize[jz::GlobalId(r * 1000 + i % 50)];
  std::vector<int> kept(kRanks, 0);
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      const auto sizes = jz::reduceFofGroupSizes(labels[r], comm);
      // Groups of 9 kept, groups of 8 not (each label has 10 points, one
      // or two of them single).
      const auto numbers = jz::numberFofGroups(sizes, 9, comm);
      std::vector<jz::GlobalId> groupId(perRank, 7), groupSize(perRank, 7);
      jz::sendFofResultsHome(
        route[r], labels[r], sizes, numbers, comm, groupId.data(), groupSize.data());
      for (std::size_t i = 0; i < perRank; ++i)
      {
        const jz::GlobalId label = jz::GlobalId(r * 1000 + i % 50);
        if (i % 7 == 0)
        {
          bad += groupId[i] != -1 || groupSize[i] != 1;
          continue;
        }
        const jz::GlobalId size = expectedSize.at(label);
        bad += groupSize[i] != size;
        bad += groupId[i] != (size >= 9 ? numbers.groupIdOf(label) : -1);
        kept[r] += groupId[i] >= 0;
      }
    });
  for (int r = 0; r < kRanks; ++r)
    JZ_CHECK(kept[r] > 0 && kept[r] < int(perRank)); // kept and unkept groups both
}

// A query's results made from a tag, so that where they land tells whose
// they were: h = tag, rho = -tag, ids tag * 10 + j, distances tag + j / 4.
void pushTaggedResult(jz::KnnLocalResults<float>& res, float tag, int k, bool lists)
{
  res.smoothingLength.push_back(tag);
  res.density.push_back(-tag);
  for (int j = 0; lists && j < k; ++j)
  {
    res.neighborIds.push_back(jz::GlobalId(tag) * 10 + j);
    res.neighborDistances.push_back(tag + 0.25f * float(j));
  }
}

// One rank's result buffers for n queries, filled so that what the way home
// leaves untouched shows.
struct KnnResultBuffers
{
  static constexpr float kFill = 0.5f;
  static constexpr jz::GlobalId kIdFill = 7;
  std::size_t k;
  std::vector<float> h, rho, dist;
  std::vector<jz::GlobalId> ids;

  KnnResultBuffers(std::size_t n, int neighbours)
    : k(std::size_t(neighbours))
    , h(n, kFill)
    , rho(n, kFill)
    , dist(n * k, kFill)
    , ids(n * k, kIdFill)
  {
  }

  jz::KnnResults<float> results() { return jztest::knnResults(h, rho, ids, dist); }

  // Whether entry j of query i's lists differs from pushTaggedResult's
  // (tagged) or from the fill.
  int listMismatch(std::size_t i, std::size_t j, float tag, bool tagged) const
  {
    const std::size_t at = i * k + j;
    return tagged ? ids[at] != jz::GlobalId(tag) * 10 + jz::GlobalId(j) ||
        dist[at] != tag + 0.25f * float(j)
                  : ids[at] != kIdFill || dist[at] != kFill;
  }

  // Query i against pushTaggedResult(tag): its lists too, or lists untouched.
  int taggedMismatches(std::size_t i, float tag, bool lists) const
  {
    int bad = h[i] != tag || rho[i] != -tag;
    for (std::size_t j = 0; j < k; ++j)
      bad += listMismatch(i, j, tag, lists);
    return bad;
  }

  // Query i against the fill: nothing written.
  int untouchedMismatches(std::size_t i) const
  {
    int bad = h[i] != kFill || rho[i] != kFill;
    for (std::size_t j = 0; j < k; ++j)
      bad += listMismatch(i, j, kFill, false);
    return bad;
  }
};

JZ_TEST(KnnResultsGoHomeToTheirOrigin)
{
  const int k = 3;
  std::vector<jz::KnnRankPoints<float>> pts(kRanks);
  std::vector<jz::KnnLocalResults<float>> res(kRanks);
  const std::size_t perRank = 300;
  for (int r = 0; r < kRanks; ++r)
    for (std::size_t i = 0; i < perRank; ++i)
    {
      const int holder = int((r * 7 + i) % kRanks);
      pts[holder].self = false; // separate queries: records with their index
      pts[holder].qryRank.push_back(r);
      pts[holder].qryIndex.push_back(jz::Index(perRank - 1 - i));
      pushTaggedResult(res[holder], float(r * 10000 + (perRank - 1 - i)), k, true);
    }
  jz::KnnWanted wanted;
  wanted.neighborIds = wanted.neighborDistances = true;
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      KnnResultBuffers got(perRank, k);
      jz::sendKnnResultsHome(pts[r], res[r], k, wanted, comm, got.results());
      for (std::size_t i = 0; i < perRank; ++i)
        bad += got.taggedMismatches(i, float(r * 10000 + i), true);
    });
}

// A self query's results go home along the decomposition's route, no
// origin sent: rank s's block on each holder, in s's send order, lands at
// the input positions s sent (a route built by hand, holders scattered),
// with and without the neighbour lists, and a rank without result buffers.
void checkKnnSelfResultsGoHomeAlongTheRoute(bool lists)
{
  const int k = 3;
  const std::size_t perRank = 300;
  std::vector<jz::KnnRankPoints<float>> pts(kRanks);
  std::vector<jz::KnnLocalResults<float>> res(kRanks);
  for (int r = 0; r < kRanks; ++r)
  {
    pts[r].route.rank = r;
    pts[r].route.send.resize(kRanks);
    for (std::size_t i = 0; i < perRank; ++i)
      pts[r].route.send[(std::size_t(r) * 7 + i * i / 5) % kRanks].push_back(jz::Index(i));
  }
  for (int holder = 0; holder < kRanks; ++holder)
  {
    jz::ZOrderRoute& route = pts[holder].route;
    route.begin.assign(1, 0);
    for (int s = 0; s < kRanks; ++s)
    {
      for (const jz::Index i : pts[s].route.send[holder])
      {
        const float tag = float(s * 10000 + int(i));
        pts[holder].srcIds.push_back(jz::GlobalId(tag));
        pushTaggedResult(res[holder], tag, k, lists);
      }
      route.begin.push_back(route.begin.back() + pts[s].route.send[holder].size());
    }
  }
  jz::KnnWanted wanted;
  wanted.neighborIds = wanted.neighborDistances = lists;
  onRanksCountingMismatches(
    [&](jz::Communicator& comm, int& bad)
    {
      const int r = comm.rank();
      bad += pts[r].numQueries() != pts[r].route.size();
      KnnResultBuffers got(perRank, k);
      const bool wantsNothing = r == 1;
      jz::sendKnnResultsHome(
        pts[r], res[r], k, wanted, comm, wantsNothing ? jz::KnnResults<float>() : got.results());
      for (std::size_t i = 0; i < perRank; ++i)
        bad += wantsNothing ? got.untouchedMismatches(i)
                            : got.taggedMismatches(i, float(r * 10000 + i), lists);
    });
}

JZ_TEST(KnnSelfResultsGoHomeAlongTheRoute)
{
  checkKnnSelfResultsGoHomeAlongTheRoute(true);
  checkKnnSelfResultsGoHomeAlongTheRoute(false);
}

JZ_TEST_MAIN()
