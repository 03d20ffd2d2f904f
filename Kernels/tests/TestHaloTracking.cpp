// Halo tracking (jz/HaloTracking.h): synthetic series with known merger
// trees (mergers of two and three groups, a fly-by, a fragmenting halo,
// groups that appear and vanish, every tie rule), random series against a
// naive reference (every pair of groups counted by lookups), and the same
// trees on simulated ranks where particles change rank between steps.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "TestHarness.h"
#include "ThreadCommunicator.h"
#include "jz/HaloTracking.h"

namespace
{
using jz::GlobalId;

struct Member
{
  GlobalId group;
  double mass;
};
// Per step: particle id -> its group and mass (members only).
using Step = std::map<GlobalId, Member>;
using Series = std::vector<Step>;

// Adds ids [first, last] to `group` at `step`.
void put(Step& step, GlobalId first, GlobalId last, GlobalId group, double mass = 1.0)
{
  for (GlobalId id = first; id <= last; ++id)
    step[id] = { group, mass };
}

std::vector<jz::TrackingMembers> onOneRank(const Series& series)
{
  std::vector<jz::TrackingMembers> steps(series.size());
  for (std::size_t s = 0; s < series.size(); ++s)
    for (const auto& [id, m] : series[s])
    {
      steps[s].ids.push_back(id);
      steps[s].groups.push_back(m.group);
      steps[s].masses.push_back(m.mass);
    }
  return steps;
}

jz::HaloTree track(const Series& series, std::int64_t minimumShared = 1)
{
  jz::TrackingOptions options;
  options.minimumShared = minimumShared;
  return jz::trackHalos(onOneRank(series), options);
}

const jz::TrackedGroup& row(const jz::HaloTree& tree, std::int64_t step, GlobalId group)
{
  for (const jz::TrackedGroup& r : tree.rows)
    if (r.step == step && r.group == group)
      return r;
  static jz::TrackedGroup missing;
  jztest::fail(__FILE__, __LINE__,
    "no row for step " + std::to_string(step) + " group " + std::to_string(group));
  return missing;
}

// The naive reference: every pair of groups of consecutive steps counted by
// id lookups, the rules applied by plain loops over the groups.
std::vector<jz::TrackedGroup> naiveTree(const Series& series, std::int64_t minimumShared)
{
  std::vector<jz::TrackedGroup> rows;
  std::vector<std::vector<std::size_t>> rowsOfStep(series.size());
  for (std::size_t s = 0; s < series.size(); ++s)
  {
    std::map<GlobalId, jz::TrackedGroup> groups;
    for (const auto& [id, m] : series[s])
    {
      jz::TrackedGroup& g = groups[m.group];
      g.step = std::int64_t(s);
      g.group = m.group;
      g.count += 1;
      g.mass += m.mass;
    }
    for (const auto& [g, r] : groups)
    {
      rowsOfStep[s].push_back(rows.size());
      rows.push_back(r);
    }
  }
  std::vector<std::size_t> progenitor(rows.size(), rows.size());
  for (std::size_t s = 0; s + 1 < series.size(); ++s)
  {
    std::map<std::pair<GlobalId, GlobalId>, std::int64_t> shared;
    for (const std::size_t ra : rowsOfStep[s])
      for (const std::size_t rb : rowsOfStep[s + 1])
      {
        std::int64_t n = 0;
        for (const auto& [id, m] : series[s])
        {
          const auto it = series[s + 1].find(id);
          n += m.group == rows[ra].group && it != series[s + 1].end() &&
            it->second.group == rows[rb].group;
        }
        shared[{ rows[ra].group, rows[rb].group }] = n;
      }
    for (const std::size_t ra : rowsOfStep[s])
    {
      std::int64_t best = 0;
      GlobalId bestB = -1;
      for (const std::size_t rb : rowsOfStep[s + 1]) // ascending GroupId: the first of ties stays
      {
        const std::int64_t n = shared[{ rows[ra].group, rows[rb].group }];
        if (n > best)
        {
          best = n;
          bestB = rows[rb].group;
        }
      }
      if (best >= minimumShared && best > 0)
      {
        rows[ra].descendant = bestB;
        rows[ra].shared = best;
      }
    }
    for (const std::size_t rb : rowsOfStep[s + 1])
    {
      std::size_t main = rows.size();
      for (const std::size_t ra : rowsOfStep[s])
      {
        if (rows[ra].descendant != rows[rb].group)
          continue;
        if (main == rows.size() || rows[ra].shared > rows[main].shared ||
          (rows[ra].shared == rows[main].shared && rows[ra].count > rows[main].count))
          main = ra;
      }
      progenitor[rb] = main;
      if (main != rows.size())
        rows[main].isMainProgenitor = true;
    }
  }
  GlobalId next = 0;
  for (std::size_t r = 0; r < rows.size(); ++r)
    rows[r].track = progenitor[r] == rows.size() ? next++ : rows[progenitor[r]].track;
  return rows;
}

void checkSameRows(const std::vector<jz::TrackedGroup>& got,
  const std::vector<jz::TrackedGroup>& want, double massTolerance, const std::string& what)
{
  JZ_CHECK_MSG(
    got.size() == want.size(), what << ": " << got.size() << " rows, want " << want.size());
  for (std::size_t r = 0; r < std::min(got.size(), want.size()); ++r)
  {
    const jz::TrackedGroup& g = got[r];
    const jz::TrackedGroup& w = want[r];
    const bool same = g.step == w.step && g.group == w.group && g.track == w.track &&
      g.count == w.count && g.descendant == w.descendant && g.shared == w.shared &&
      g.isMainProgenitor == w.isMainProgenitor &&
      std::abs(g.mass - w.mass) <= massTolerance * std::abs(w.mass);
    JZ_CHECK_MSG(same,
      what << ": row " << r << " (step " << w.step << ", group " << w.group << "): track "
           << g.track << "/" << w.track << ", descendant " << g.descendant << "/" << w.descendant
           << ", shared " << g.shared << "/" << w.shared << ", main " << g.isMainProgenitor << "/"
           << w.isMainProgenitor << ", count " << g.count << "/" << w.count);
    if (!same)
      return;
  }
}

// A random series: particles keep their group with probability `stay`,
// else join another group or none; groups are renumbered at every step (as
// FoF does) and some particles are absent from some steps.
Series randomSeries(
  std::size_t numParticles, std::size_t numSteps, int numGroups, double stay, unsigned seed)
{
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int> halo(numParticles);
  for (int& h : halo)
    h = int(rng() % (numGroups + 1)) - 1;
  Series series(numSteps);
  for (std::size_t s = 0; s < numSteps; ++s)
  {
    std::vector<GlobalId> label(numGroups);
    for (int g = 0; g < numGroups; ++g)
      label[g] = g;
    std::shuffle(label.begin(), label.end(), rng);
    for (std::size_t i = 0; i < numParticles; ++i)
    {
      if (s > 0 && u(rng) > stay)
        halo[i] = int(rng() % (numGroups + 1)) - 1;
      if (halo[i] >= 0 && u(rng) < 0.97)
        series[s][GlobalId(7 * i + 3)] = { label[halo[i]], double(1 + (i % 4)) };
    }
  }
  return series;
}

// The tree of `series` on `ranks` simulated ranks, each member on a random
// rank at every step (so particles change rank between steps).
std::vector<jz::HaloTree> trackOnRanks(
  const Series& series, int ranks, std::int64_t minimumShared, unsigned seed)
{
  std::vector<std::vector<jz::TrackingMembers>> pieces(
    ranks, std::vector<jz::TrackingMembers>(series.size()));
  std::mt19937 rng(seed);
  for (std::size_t s = 0; s < series.size(); ++s)
    for (const auto& [id, m] : series[s])
    {
      jz::TrackingMembers& p = pieces[rng() % ranks][s];
      p.ids.push_back(id);
      p.groups.push_back(m.group);
      p.masses.push_back(m.mass);
    }
  std::vector<jz::HaloTree> trees(ranks);
  std::vector<std::string> errors(ranks);
  jztest::ThreadWorld world(ranks);
  world.run(
    [&](jz::Communicator& comm)
    {
      try
      {
        jz::TrackingOptions options;
        options.minimumShared = minimumShared;
        trees[comm.rank()] = jz::trackHalos(comm, pieces[comm.rank()], options);
      }
      catch (const std::exception& e)
      {
        errors[comm.rank()] = e.what();
      }
    });
  for (int r = 0; r < ranks; ++r)
    JZ_CHECK_MSG(errors[r].empty(), "rank " << r << ": " << errors[r]);
  return trees;
}
} // namespace

JZ_TEST(MergerOfTwo)
{
  Series series(2);
  put(series[0], 0, 9, 0);
  put(series[0], 10, 14, 1);
  put(series[1], 0, 14, 0);
  const jz::HaloTree tree = track(series);
  JZ_CHECK_EQ(tree.rows.size(), 3u);
  JZ_CHECK_EQ(row(tree, 0, 0).descendant, 0);
  JZ_CHECK_EQ(row(tree, 0, 0).shared, 10);
  JZ_CHECK(row(tree, 0, 0).isMainProgenitor);
  JZ_CHECK_EQ(row(tree, 0, 1).descendant, 0);
  JZ_CHECK_EQ(row(tree, 0, 1).shared, 5);
  JZ_CHECK(!row(tree, 0, 1).isMainProgenitor);
  JZ_CHECK_EQ(row(tree, 0, 1).track, 1);
  JZ_CHECK_EQ(row(tree, 1, 0).track, 0);
  JZ_CHECK_EQ(row(tree, 1, 0).count, 15);
  JZ_CHECK_EQ(row(tree, 1, 0).descendant, -1);
  JZ_CHECK(!row(tree, 1, 0).isMainProgenitor);
}

JZ_TEST(MergerOfThree)
{
  // The largest contributor is group 2 at step 0; the result is group 1.
  Series series(3);
  put(series[0], 0, 5, 0);
  put(series[0], 6, 9, 1);
  put(series[0], 10, 19, 2);
  put(series[1], 0, 19, 1);
  put(series[1], 100, 119, 0); // a newcomer, larger
  put(series[2], 0, 19, 0);
  put(series[2], 100, 119, 0);
  const jz::HaloTree tree = track(series);
  for (GlobalId g : { 0, 1, 2 })
    JZ_CHECK_EQ(row(tree, 0, g).descendant, 1);
  JZ_CHECK(row(tree, 0, 2).isMainProgenitor);
  JZ_CHECK(!row(tree, 0, 0).isMainProgenitor);
  JZ_CHECK(!row(tree, 0, 1).isMainProgenitor);
  JZ_CHECK_EQ(row(tree, 1, 1).track, row(tree, 0, 2).track);
  JZ_CHECK_EQ(row(tree, 1, 0).track, 3); // new at step 1, after the three of step 0
  // Step 2 merges the two equal contributors (20 shared each, equal Count):
  // the smaller GroupId (0) is the main progenitor.
  JZ_CHECK_EQ(row(tree, 1, 0).shared, 20);
  JZ_CHECK_EQ(row(tree, 1, 1).shared, 20);
  JZ_CHECK(row(tree, 1, 0).isMainProgenitor);
  JZ_CHECK(!row(tree, 1, 1).isMainProgenitor);
  JZ_CHECK_EQ(row(tree, 2, 0).track, 3);
}

JZ_TEST(FlyByDoesNotMerge)
{
  // B passes through A: three of B's particles are in A at step 1 and
  // return at step 2. Both keep their tracks.
  Series series(3);
  put(series[0], 0, 19, 0);
  put(series[0], 20, 29, 1);
  put(series[1], 0, 19, 0);
  put(series[1], 20, 22, 0);
  put(series[1], 23, 29, 1);
  put(series[2], 0, 19, 0);
  put(series[2], 20, 29, 1);
  // A small group C whose two particles end in A: linked only while
  // MinimumShared allows it.
  put(series[0], 30, 31, 2);
  put(series[1], 30, 31, 0);
  for (std::int64_t minimumShared : { 1, 3 })
  {
    const jz::HaloTree tree = track(series, minimumShared);
    JZ_CHECK_EQ(row(tree, 0, 1).descendant, 1);
    JZ_CHECK_EQ(row(tree, 0, 1).shared, 7);
    JZ_CHECK(row(tree, 0, 1).isMainProgenitor);
    JZ_CHECK_EQ(row(tree, 2, 0).track, 0);
    JZ_CHECK_EQ(row(tree, 2, 1).track, 1);
    JZ_CHECK_EQ(row(tree, 0, 2).descendant, minimumShared == 1 ? 0 : -1);
    JZ_CHECK_EQ(row(tree, 0, 2).shared, minimumShared == 1 ? 2 : 0);
    JZ_CHECK(!row(tree, 0, 2).isMainProgenitor);
    JZ_CHECK_EQ(tree.trackRows(0).size(), 3u);
  }
}

JZ_TEST(HaloFragments)
{
  Series series(2);
  put(series[0], 0, 19, 0);
  put(series[1], 0, 7, 0);
  put(series[1], 8, 19, 1); // the larger fragment has the larger GroupId
  const jz::HaloTree tree = track(series);
  JZ_CHECK_EQ(row(tree, 0, 0).descendant, 1);
  JZ_CHECK_EQ(row(tree, 0, 0).shared, 12);
  JZ_CHECK_EQ(row(tree, 1, 1).track, 0);
  JZ_CHECK_EQ(row(tree, 1, 0).track, 1); // the other fragment starts a track
  // Equal fragments: the descendant is the smaller GroupId.
  Series equal(2);
  put(equal[0], 0, 19, 0);
  put(equal[1], 0, 9, 5);
  put(equal[1], 10, 19, 2);
  const jz::HaloTree tie = track(equal);
  JZ_CHECK_EQ(row(tie, 0, 0).descendant, 2);
  JZ_CHECK_EQ(row(tie, 1, 2).track, 0);
  JZ_CHECK_EQ(row(tie, 1, 5).track, 1);
}

JZ_TEST(GroupsAppearAndVanish)
{
  Series series(4);
  put(series[0], 0, 9, 0);
  // step 1: no group at all
  put(series[2], 0, 9, 0);   // the same particles again: a new track
  put(series[2], 50, 59, 1); // and a newcomer
  put(series[3], 50, 59, 0); // the newcomer lives on, the other vanishes
  const jz::HaloTree tree = track(series);
  JZ_CHECK_EQ(tree.rows.size(), 4u);
  JZ_CHECK_EQ(row(tree, 0, 0).descendant, -1);
  JZ_CHECK_EQ(row(tree, 0, 0).track, 0);
  JZ_CHECK_EQ(row(tree, 2, 0).track, 1);
  JZ_CHECK_EQ(row(tree, 2, 1).track, 2);
  JZ_CHECK_EQ(row(tree, 3, 0).track, 2);
  JZ_CHECK_EQ(row(tree, 2, 0).descendant, -1);
  JZ_CHECK_EQ(tree.mostMassiveFinalTrack(), 2);
  JZ_CHECK_EQ(tree.trackOf(1, 0), -1);
  JZ_CHECK_EQ(tree.trackOf(3, 0), 2);
}

JZ_TEST(ProgenitorTieRules)
{
  // Equal shared counts: the larger group at step s wins, even with the
  // larger GroupId.
  Series byCount(2);
  put(byCount[0], 0, 9, 0);   // Count 10
  put(byCount[0], 10, 29, 1); // Count 20
  put(byCount[1], 0, 4, 0);
  put(byCount[1], 10, 14, 0);
  put(byCount[1], 5, 9, 1); // A splits 5 / 5: its descendant is GroupId 0
  const jz::HaloTree tree = track(byCount);
  JZ_CHECK_EQ(row(tree, 0, 0).descendant, 0);
  JZ_CHECK_EQ(row(tree, 0, 1).descendant, 0);
  JZ_CHECK(row(tree, 0, 1).isMainProgenitor);
  JZ_CHECK(!row(tree, 0, 0).isMainProgenitor);
  JZ_CHECK_EQ(row(tree, 1, 0).track, 1);
  // Equal shared counts and Counts: the smaller GroupId wins.
  Series byGroup(2);
  put(byGroup[0], 0, 9, 3);
  put(byGroup[0], 10, 19, 1);
  put(byGroup[1], 0, 4, 0);
  put(byGroup[1], 10, 14, 0);
  const jz::HaloTree tie = track(byGroup);
  JZ_CHECK(row(tie, 0, 1).isMainProgenitor);
  JZ_CHECK(!row(tie, 0, 3).isMainProgenitor);
  JZ_CHECK_EQ(row(tie, 0, 1).track, 0);
  JZ_CHECK_EQ(row(tie, 1, 0).track, 0);
}

JZ_TEST(MassesAndSingleStep)
{
  Series series(1);
  put(series[0], 0, 3, 0, 2.5);
  put(series[0], 4, 5, 1, 10.0);
  const jz::HaloTree tree = track(series);
  JZ_CHECK_EQ(tree.rows.size(), 2u);
  JZ_CHECK_EQ(row(tree, 0, 0).mass, 10.0);
  JZ_CHECK_EQ(row(tree, 0, 1).mass, 20.0);
  JZ_CHECK_EQ(tree.mostMassiveFinalTrack(), 1);
  JZ_CHECK_EQ(tree.trackRows(1).size(), 1u);
  JZ_CHECK(jz::trackHalos(std::vector<jz::TrackingMembers>(3), {}).rows.empty());
  JZ_CHECK_EQ(jz::trackHalos(std::vector<jz::TrackingMembers>(3), {}).mostMassiveFinalTrack(), -1);
}

JZ_TEST(BadInput)
{
  auto expectError = [](const std::vector<jz::TrackingMembers>& steps, std::int64_t minimumShared,
                       const std::string& words)
  {
    jz::TrackingOptions options;
    options.minimumShared = minimumShared;
    try
    {
      jz::trackHalos(steps, options);
      jztest::fail(__FILE__, __LINE__, "no error; expected one with: " + words);
    }
    catch (const jz::Error& e)
    {
      JZ_CHECK_MSG(std::string(e.what()).find(words) != std::string::npos, e.what());
    }
  };
  std::vector<jz::TrackingMembers> steps(2);
  steps[1].ids = { 4, 9, 4 };
  steps[1].groups = { 0, 1, 1 };
  expectError(steps, 1, "particle id 4 appears twice at time step 1");
  steps[1].ids = { 4, 9 };
  steps[1].groups = { 0, -1 };
  expectError(steps, 1, "negative GroupId");
  steps[1].groups = { 0, 1 };
  steps[1].masses = { 1.0 };
  expectError(steps, 1, "masses at time step 1");
  steps[1].masses = { 1.0, std::nan("") };
  expectError(steps, 1, "finite");
  steps[1].masses.clear();
  expectError(steps, 0, "MinimumShared");
  // Duplicates among non-members too, and across ranks.
  const std::vector<GlobalId> ids = { 3, 8, 1, 8, 3 };
  jz::SerialCommunicator serial;
  JZ_CHECK_EQ(jz::duplicateIdError(serial, ids.data(), ids.size(), 2),
    "particle id 3 appears twice at time step 2 (GlobalIds must be unique in each step)");
  JZ_CHECK(jz::duplicateIdError(serial, ids.data(), 3, 0).empty());
  // Compact ids (checked with a bitmap), sparse ones (sorted), and ids at
  // both ends of the 64-bit range.
  const GlobalId lowest = std::numeric_limits<GlobalId>::min();
  const GlobalId highest = std::numeric_limits<GlobalId>::max();
  for (const std::vector<GlobalId>& set : { std::vector<GlobalId>{ 9, 4, 7, 5, 8, 6, 7, 4 },
         std::vector<GlobalId>{ 1000000007, 3, -5, 1000000007, 3 },
         std::vector<GlobalId>{ highest, lowest, 0, lowest, highest } })
  {
    GlobalId want = highest;
    for (const GlobalId id : set)
      if (std::count(set.begin(), set.end(), id) > 1)
        want = std::min(want, id);
    const std::string got = jz::duplicateIdError(serial, set.data(), set.size(), 0);
    JZ_CHECK_MSG(got.find("particle id " + std::to_string(want) + " appears twice") == 0, got);
    std::vector<GlobalId> unique = set;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    JZ_CHECK(jz::duplicateIdError(serial, unique.data(), unique.size(), 0).empty());
  }
  jztest::ThreadWorld world(3);
  std::vector<std::string> got(3);
  world.run(
    [&](jz::Communicator& comm)
    {
      const std::vector<GlobalId> mine = { GlobalId(10 * comm.rank()), 77 + comm.rank() / 2 };
      got[comm.rank()] = jz::duplicateIdError(comm, mine.data(), mine.size(), 0);
    });
  for (const std::string& message : got)
    JZ_CHECK_EQ(message, got[0]);
  JZ_CHECK_MSG(got[0].find("particle id 77 appears twice") != std::string::npos, got[0]);
}

JZ_TEST(RandomSeriesMatchNaiveReference)
{
  for (unsigned seed = 1; seed <= 6; ++seed)
  {
    const int groups = 3 + int(seed) * 3;
    const Series series = randomSeries(600, 5, groups, seed % 2 ? 0.9 : 0.6, seed);
    for (std::int64_t minimumShared : { 1, 4 })
      checkSameRows(track(series, minimumShared).rows, naiveTree(series, minimumShared), 1e-15,
        "seed " + std::to_string(seed) + ", MinimumShared " + std::to_string(minimumShared));
  }
}

JZ_TEST(RanksGiveTheSameTree)
{
  // Masses 1..4: integer sums, exact in any order.
  for (int ranks : { 2, 3, 4 })
    for (unsigned seed = 1; seed <= 3; ++seed)
    {
      const Series series = randomSeries(900, 4, 12, 0.8, 100 + seed);
      const std::vector<jz::TrackedGroup> serial = track(series, 2).rows;
      checkSameRows(serial, naiveTree(series, 2), 0.0, "serial vs reference");
      const std::vector<jz::HaloTree> trees = trackOnRanks(series, ranks, 2, seed * 31 + ranks);
      for (int r = 0; r < ranks; ++r)
        checkSameRows(trees[r].rows, serial, 0.0,
          std::to_string(ranks) + " ranks, rank " + std::to_string(r) + ", seed " +
            std::to_string(seed));
    }
  // An empty rank, and a duplicate id across ranks: the same error on all.
  Series series = randomSeries(300, 3, 5, 0.8, 7);
  const std::vector<jz::HaloTree> trees = trackOnRanks(series, 3, 1, 1);
  checkSameRows(trees[2].rows, track(series).rows, 0.0, "3 ranks");
  std::vector<std::string> errors(2);
  jztest::ThreadWorld world(2);
  world.run(
    [&](jz::Communicator& comm)
    {
      std::vector<jz::TrackingMembers> steps(2);
      steps[1].ids = { 5, GlobalId(6 + comm.rank()) };
      steps[1].groups = { 0, 0 };
      try
      {
        jz::trackHalos(comm, steps, {});
      }
      catch (const jz::Error& e)
      {
        errors[comm.rank()] = e.what();
      }
    });
  JZ_CHECK_EQ(errors[0], errors[1]);
  JZ_CHECK_MSG(errors[0].find("particle id 5 appears twice") != std::string::npos, errors[0]);
}

JZ_TEST_MAIN()
