// The locally essential tree (LET) of distributed tree gravity (Warren &
// Salmon 1993): what one rank's sources must give another rank so that the
// other rank's walk over its own and the received sources meets the serial
// accuracy. The sending rank walks its own tree top-down against the other
// rank's query boxes (gathered from every rank):
//  - a node acceptable at the LET's opening angle for EVERY point of those
//    boxes (GravityTerms.h, multipoleAcceptable, at the nearest box) is sent
//    as its multipole (mass, centre of mass, second moments: 80 bytes),
//    which the receiver turns into six pseudo-particles with the same
//    moments; a node whose points all coincide as one exact point mass, a
//    node with fewer points than a multipole's bytes as its particles;
//  - a leaf that must be opened is sent as its particles;
//  - any other node is opened.
// The receiver adds them to its sources: the serial engine runs unchanged.
// At theta = 0 nothing but exact point masses is accepted: every remote
// particle arrives and the sum stays direct.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/SymmetricEigen.h"
#include "gravity/GravityTerms.h"
#include "jz/Tree.h"
#include "walk/SingleTreeDescent.h"

namespace jz
{
// The LET's opening angle relative to theta. A sent multipole reaches the
// receiver as pseudo-particles exact to quadrupole order only, where the
// serial walk would mostly have expanded it to order 4 (M2L): a smaller
// angle for the LET brings the distributed error back to the serial one's,
// for a few more bytes per point (doc/BENCHMARKS.md, "Distributed tree
// gravity").
constexpr double kLetThetaFactor = 0.5;
// The pseudo-particles' largest offset must also pass b^2 < 0.6 theta^2 d^2
// (the radius factor of the serial opening criterion's earlier form, kept:
// the pseudo-particles are points the receiver's walk may meet at that
// distance).
constexpr double kLetPseudoSpreadFactor2 = 0.6;

// A source the LET sends: coordinates in the tree's precision, mass.
template <class T>
struct LetSource
{
  T x[3];
  double m;
};

// A multipole the LET sends (GravityMoments' mass, centre, second moments).
struct LetNode
{
  double mass;
  double com[3];
  double second[6];
};

// What one rank sends another.
template <class T>
struct LocallyEssentialTree
{
  std::vector<LetSource<T>> particles;
  std::vector<LetNode> nodes;
};

namespace let_detail
{
// Eigen-decomposition of the symmetric second moments (xx yy zz xy xz yz):
// values[k] and the unit vectors vectors[k][.].
inline void symmetricEigen(const double* s, double values[3], double vectors[3][3])
{
  double a[9] = { s[0], s[3], s[4], s[3], s[1], s[5], s[4], s[5], s[2] }, v[9];
  jz::symmetricEigen(a, 3, values, v);
  for (int k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d)
      vectors[k][d] = v[d * 3 + k];
}

// Squared distance from point c to the nearest of the boxes.
template <class T>
double nearestBox2(const double* c, const std::vector<Box<T>>& boxes)
{
  double best = kInfinity;
  for (const Box<T>& b : boxes)
  {
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      const double below = double(b.lo[k]) - c[k], above = c[k] - double(b.hi[k]);
      const double gap = below > 0 ? below : (above > 0 ? above : 0.0);
      d2 += gap * gap;
    }
    best = std::min(best, d2);
  }
  return best;
}
} // namespace let_detail

// Six points of mass M / 6, in pairs at +-s_k e_k about the centre of mass
// along the eigenvectors e_k of the second moments (eigenvalues l_k), with
// s_k = sqrt(3 l_k / M): the same mass, centre of mass (the dipole stays 0)
// and second moments as the node, and no third moments (the pairs are
// symmetric), so a walk that expands them to quadrupole order sees the node
// itself (the pseudo-particle method of Kawai & Makino 2001, to second
// order). s_k <= sqrt(3) times the node's radius.
template <class T>
void appendPseudoParticles(const LetNode& n, std::vector<T>& xyz, std::vector<double>& mass)
{
  double values[3], vectors[3][3];
  let_detail::symmetricEigen(n.second, values, vectors);
  for (int k = 0; k < 3; ++k)
  {
    const double s = std::sqrt(std::max(0.0, 3 * values[k] / n.mass));
    for (int sign : { 1, -1 })
    {
      for (int d = 0; d < 3; ++d)
        xyz.push_back(T(n.com[d] + sign * s * vectors[k][d]));
      mass.push_back(n.mass / 6);
    }
  }
}

// The largest squared offset of the pseudo-particles: 3 l_max / M.
inline double pseudoSpread2(const GravityMoments& n)
{
  double values[3], vectors[3][3];
  let_detail::symmetricEigen(n.second, values, vectors);
  return 3 * std::max({ values[0], values[1], values[2], 0.0 }) / n.mass;
}

// The LET of `tree` (sources, with per-node moments and per-sorted-source
// masses) for a rank whose query points lie in `boxes`.
template <class T>
LocallyEssentialTree<T> letFor(const ZTree<T>& tree,
  const std::vector<std::vector<GravityMoments>>& moments, const std::vector<double>& mass,
  const std::vector<Box<T>>& boxes, double theta)
{
  LocallyEssentialTree<T> out;
  if (tree.planes.empty() || boxes.empty())
    return out;
  const double letTheta = theta * kLetThetaFactor;
  const double theta2 = letTheta * letTheta;
  // Fewer points than this cost fewer bytes than a multipole: sent as they are.
  const Index fewPoints = Index(sizeof(LetNode) / (3 * sizeof(T) + sizeof(double)));
  const SortedPoints<T>& s = tree.sources;
  auto visit = [&](int p, Index j)
  {
    const TreePlane<T>& plane = tree.planes[p];
    const GravityMoments& n = moments[p][j];
    if (plane.numSources(j) == 0 || !(n.mass > 0))
      return Descend::Skip; // massless: contributes exactly nothing
    if (n.radius2 == 0)
    {
      LetSource<T> one; // all points at one position: exact
      for (int d = 0; d < 3; ++d)
        one.x[d] = plane.sourceBox[j].lo[d];
      one.m = n.mass;
      out.particles.push_back(one);
      return Descend::Skip;
    }
    const bool few = plane.numSources(j) <= fewPoints;
    if (!few)
    {
      // Accepted when the node and its pseudo-particles both pass the
      // criterion for the nearest point of the receiving rank.
      const double dist2 = let_detail::nearestBox2(n.com, boxes);
      if (multipoleAcceptable(n, dist2, theta2) &&
        pseudoSpread2(n) < kLetPseudoSpreadFactor2 * theta2 * dist2)
      {
        LetNode node;
        node.mass = n.mass;
        std::copy(n.com, n.com + 3, node.com);
        std::copy(n.second, n.second + 6, node.second);
        out.nodes.push_back(node);
        return Descend::Skip;
      }
    }
    if (p > 0 && !few)
      return Descend::Open;
    for (Index i = plane.sourceSplit[j]; i < plane.sourceSplit[j + 1]; ++i)
      if (mass[i] > 0)
        out.particles.push_back(LetSource<T>{ { s.x[i], s.y[i], s.z[i] }, mass[i] });
    return Descend::Skip;
  };
  DescentStack stack;
  descendTree(tree, 0, tree.planes.back().numNodes(), visit, stack);
  return out;
}

// A rank's query points summarised as boxes for the other ranks' LETs: the
// query boxes of the nodes of the highest plane with at least `wanted` nodes
// (the leaves when none has), nodes without queries left out.
template <class T>
std::vector<Box<T>> queryBoxes(const ZTree<T>& tree, Index wanted)
{
  std::vector<Box<T>> boxes;
  if (tree.planes.empty())
    return boxes;
  int p = int(tree.planes.size()) - 1;
  while (p > 0 && tree.planes[p].numNodes() < wanted)
    --p;
  const TreePlane<T>& plane = tree.planes[p];
  for (Index j = 0; j < plane.numNodes(); ++j)
    if (tree.selfQuery ? plane.numSources(j) > 0 : plane.numQueries(j) > 0)
      boxes.push_back(tree.queryBox(p, j));
  return boxes;
}
} // namespace jz
