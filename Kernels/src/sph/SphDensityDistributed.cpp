// The densities the maps need, with every rank's particles as sources
// (jz/SphMaps.h): each rank receives only the other ranks' particles within
// reach of its own, chosen by the ghost selection of the distributed drivers
// (distributed/GhostSelection.h): the leaves of a local tree, each grown by
// its largest smoothing length.
#include "jz/SphMaps.h"

#include "SphTree.h"
#include "distributed/GhostSelection.h"
#include "jz/Communicator.h"

namespace jz
{
namespace
{
template <class T>
struct SourceRecord
{
  T x[3];
  double mass;
};
} // namespace

template <class T>
void sphGatherDensityDistributed(Communicator& comm, const T* points, std::size_t n,
  const double* masses, const double* support, SphKernel kernel, bool periodic,
  const double* boxLo, const double* boxHi, double* density, const RunControl& control)
{
  if (comm.size() == 1)
  {
    sphGatherDensity(points, n, masses, points, n, support, kernel, periodic, boxLo, boxHi,
      density, control);
    return;
  }
  SupportTree<T> st;
  if (n > 0)
    st.build(points, n, support, periodic, boxLo, boxHi, RunControl{});
  std::vector<Region<T>> regions;
  if (n > 0)
  {
    std::vector<double> leafRadius2(st.maxSupport[0].size());
    for (std::size_t l = 0; l < leafRadius2.size(); ++l)
      leafRadius2[l] = st.maxSupport[0][l] * st.maxSupport[0][l];
    regions = regionsFromTree(st.tree, leafRadius2);
  }
  const std::vector<std::vector<Region<T>>> all = gatherRegions(regions, comm);
  const std::vector<std::vector<Index>> ghosts = n > 0
    ? selectGhosts(st.tree, all, comm.rank())
    : std::vector<std::vector<Index>>(std::size_t(comm.size()));
  std::vector<std::vector<SourceRecord<T>>> send(ghosts.size());
  const SortedPoints<T>& sp = st.tree.sources;
  for (std::size_t r = 0; r < ghosts.size(); ++r)
    for (Index s : ghosts[r])
      send[r].push_back(SourceRecord<T>{ { sp.x[s], sp.y[s], sp.z[s] },
        masses ? masses[sp.inputIndex[s]] : 1.0 });
  const std::vector<std::vector<SourceRecord<T>>> got = allToAllTyped(comm, send);
  // Sources: this rank's particles, then the others' in rank order.
  std::vector<T> sources(points, points + 3 * n);
  std::vector<double> sourceMasses(n, 1.0);
  if (masses)
    std::copy(masses, masses + n, sourceMasses.begin());
  for (const std::vector<SourceRecord<T>>& records : got)
    for (const SourceRecord<T>& g : records)
    {
      sources.insert(sources.end(), g.x, g.x + 3);
      sourceMasses.push_back(g.mass);
    }
  if (n > 0)
    sphGatherDensity(sources.data(), sourceMasses.size(), sourceMasses.data(), points, n, support,
      kernel, periodic, boxLo, boxHi, density, control);
}

template void sphGatherDensityDistributed<float>(Communicator&, const float*, std::size_t,
  const double*, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
template void sphGatherDensityDistributed<double>(Communicator&, const double*, std::size_t,
  const double*, const double*, SphKernel, bool, const double*, const double*, double*,
  const RunControl&);
} // namespace jz
