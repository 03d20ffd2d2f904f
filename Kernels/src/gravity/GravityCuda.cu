// computeGravity's CUDA backend: upload, z-order sort and tree build (the
// CUDA tree of kNN and FoF), the masses in sorted order, the multipoles
// (GravityMomentsCuda.cu), the walk (GravityWalkCuda.cu) summing U and
// grad U per sorted query in double, and the results in query input order
// with G applied. Stage times from CUDA events into RunInfo.stageSeconds.
#include <string>

#include "common/Progress.h"
#include "cuda/CudaDriver.cuh"
#include "gravity/GravityBackends.h"
#include "gravity/GravityCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
// sortedOf[input index] = sorted index, over the sources.
__global__ void sortedOfKernel(const Index* sInput, Index n, Index* sortedOf)
{
  const Index s = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < n)
    sortedOf[sInput[s]] = s;
}

// Per sorted query: the sorted source it is (queries that are the sources
// from `first` on, GravityProblem::queriesFromSource).
__global__ void ownSourceKernel(
  const Index* qInput, Index n, const Index* sortedOf, Index first, Index* own)
{
  const Index q = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q < n)
    own[q] = sortedOf[first + qInput[q]];
}

// phi = -G U and a = G grad U, in query input order.
__global__ void writeResultsKernel(const Index* qInput, Index n, const double* u,
  const double* gx, const double* gy, const double* gz, double G, double* potential,
  double* acceleration)
{
  const Index q = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= n)
    return;
  const std::size_t out = qInput[q];
  if (potential)
    potential[out] = -G * u[q];
  if (acceleration)
  {
    acceleration[3 * out] = G * gx[q];
    acceleration[3 * out + 1] = G * gy[q];
    acceleration[3 * out + 2] = G * gz[q];
  }
}

// Device asserts: every query saw the total mass less its own (every
// source counted exactly once); flags the first query that did not.
__global__ void checkMassSeenKernel(const double* seen, Index n, const double* mass,
  const Index* ownSource, bool self, double total, unsigned long long* bad)
{
  const Index q = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= n)
    return;
  const Index own = ownSource ? ownSource[q] : (self ? q : 0xFFFFFFFFu);
  const double expected = total - (own != 0xFFFFFFFFu ? mass[own] : 0.0);
  if (!(fabs(seen[q] - expected) <= 1e-9 * total))
    atomicMin(bad, (unsigned long long)q);
}

// Device asserts: the walk's post-condition (checkMassSeenKernel); throws
// naming the first query whose sums missed or repeated a source.
template <class T>
void checkMassSeen(const GravityProblem<T>& problem, const DeviceTree<T>& tree,
  const GravityWalkInputs& in, cudaStream_t st)
{
  double total = 0;
  for (std::size_t i = 0; i < problem.numSources; ++i)
    total += problem.sourceMasses ? problem.sourceMasses[i] : 1.0;
  const unsigned long long none = ~0ull;
  DeviceBuffer<unsigned long long> bad(1, st, "a flag");
  JZ_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xFF, sizeof(unsigned long long), st)); // none
  checkMassSeenKernel<<<blocksFor(tree.numQueries, 256), 256, 0, st>>>(
    in.massSeen, tree.numQueries, in.mass, in.ownSource, tree.self, total, bad.get());
  JZ_CUDA_LAUNCH_CHECK("checkMassSeenKernel");
  const unsigned long long q = fetchValue(bad.get(), st);
  if (q != none)
  {
    double seen = 0;
    download(&seen, in.massSeen + q, 1, st);
    throw Error("internal error: CUDA gravity's sorted query " + std::to_string(q) +
      " summed sources of mass " + std::to_string(seen) + " of " + std::to_string(total) +
      " (every source must count once)");
  }
}
} // namespace
} // namespace cuda

template <class T>
void gravityCuda(const GravityProblem<T>& problem, const GravityResults& results, RunInfo& info,
  const RunControl& control)
{
  using namespace cuda;
  const bool self = problem.queries == nullptr;
  const std::size_t numQueries = self ? problem.numSources : problem.numQueries;
  checkPointCount(problem.numSources + (self ? 0 : numQueries));
  const Index ns = Index(problem.numSources);
  const Index nq = Index(numQueries);

  DeviceRun run;
  const cudaStream_t st = run.st();
  // The tree with isolated boundaries.
  DeviceTree<T> tree;
  const double lo[3] = { 0, 0, 0 };
  run.buildTree(problem.sources, ns, problem.queries, self ? 0 : nq, Periodicity{}, lo,
    TreeBuildOptions(), tree);
  reportProgress(control, 0.2);

  const DeviceBuffer<double> mass =
    sortedMasses(tree.sInput.get(), ns, problem.sourceMasses, st, "the source masses");
  DeviceBuffer<Index> own;
  if (!self && problem.queriesFromSource != std::size_t(-1))
  {
    DeviceBuffer<Index> sortedOf(ns, st, "the sorted source map");
    sortedOfKernel<<<blocksFor(ns, 256), 256, 0, st>>>(tree.sInput.get(), ns, sortedOf.get());
    JZ_CUDA_LAUNCH_CHECK("sortedOfKernel");
    own.allocate(nq, st, "the queries' own sources");
    ownSourceKernel<<<blocksFor(nq, 256), 256, 0, st>>>(
      tree.qInput(), nq, sortedOf.get(), Index(problem.queriesFromSource), own.get());
    JZ_CUDA_LAUNCH_CHECK("ownSourceKernel");
  }
  std::vector<DeviceBuffer<GravityMoments>> moments;
  gravityMomentsCuda(tree, mass.get(), moments, st);
  run.timer.mark("multipoles");

  DeviceBuffer<double> sums(4 * std::size_t(nq), st, "the gravity sums");
  JZ_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, sums.size() * sizeof(double), st));
  GravityWalkInputs in;
  in.mass = mass.get();
  in.ownSource = own.get();
  in.theta = problem.openingAngle;
  in.eps2 = problem.softening * problem.softening;
  in.u = sums.get();
  in.gx = sums.get() + nq;
  in.gy = sums.get() + 2 * std::size_t(nq);
  in.gz = sums.get() + 3 * std::size_t(nq);
  const int numPlanes = int(tree.planes.size());
  DeviceBuffer<double> massSeen;
  if (kDeviceAsserts)
  {
    massSeen.allocate(nq, st, "the mass check");
    JZ_CUDA_CHECK(cudaMemsetAsync(massSeen.get(), 0, nq * sizeof(double), st));
    in.massSeen = massSeen.get();
  }
  gravityWalkCuda(tree, moments, in, st, run.temp, info,
    [&](int p) { reportProgress(control, 0.2 + 0.7 * double(numPlanes - p) / double(numPlanes)); });
  run.timer.mark("walk");
  if (kDeviceAsserts)
    checkMassSeen(problem, tree, in, st);

  DeviceBuffer<double> potential, acceleration;
  if (results.potential)
    potential.allocate(nq, st, "the potentials");
  if (results.acceleration)
    acceleration.allocate(3 * std::size_t(nq), st, "the accelerations");
  writeResultsKernel<<<blocksFor(nq, 256), 256, 0, st>>>(tree.qInput(), nq, in.u, in.gx, in.gy,
    in.gz, problem.gravitationalConstant, potential.get(), acceleration.get());
  JZ_CUDA_LAUNCH_CHECK("writeResultsKernel");
  if (results.potential)
    download(results.potential, potential.get(), nq, st);
  if (results.acceleration)
    download(results.acceleration, acceleration.get(), 3 * std::size_t(nq), st);
  run.timer.mark("output");
  run.finish(info, control);
}

template void gravityCuda<float>(
  const GravityProblem<float>&, const GravityResults&, RunInfo&, const RunControl&);
template void gravityCuda<double>(
  const GravityProblem<double>&, const GravityResults&, RunInfo&, const RunControl&);
} // namespace jz
