// Tree gravity's multipoles on the GPU, plane by plane from the leaves up:
// one thread per node, through the CPU's own functions (GravityMoments.h:
// leafMoments, parentMoments, finishMoments), so with --fmad=false the
// moments are the CPU's bit for bit.
#include "gravity/GravityMoments.h"
#include "gravity/GravityCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
// Leaves from their points: centre of mass, then the moments about it.
template <class T>
__global__ void leafMomentsKernel(Index numNodes, const Index* sourceSplit, const Box<T>* box,
  const T* x, const T* y, const T* z, const double* mass, GravityMoments* out)
{
  const Index j = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= numNodes)
    return;
  GravityMoments n;
  const Index a = sourceSplit[j], b = sourceSplit[j + 1];
  if (a < b)
  {
    n = gravity_detail::leafMoments(a, b, x, y, z, mass, box[j]);
    gravity_detail::finishMoments(box[j], n);
  }
  out[j] = n;
}

// Parents from their children (parallel-axis theorem).
template <class T>
__global__ void parentMomentsKernel(Index numNodes, const Index* sourceSplit,
  const Index* childSplit, Index numBelow, const Box<T>* box, const GravityMoments* below,
  GravityMoments* out)
{
  const Index j = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= numNodes)
    return;
  GravityMoments n;
  if (sourceSplit[j] < sourceSplit[j + 1])
  {
    const Index a = childSplit[j], b = childSplit[j + 1] < numBelow ? childSplit[j + 1] : numBelow;
    n = gravity_detail::parentMoments(a, b, below, box[j]);
    gravity_detail::finishMoments(box[j], n);
  }
  out[j] = n;
}
} // namespace

template <class T>
void gravityMomentsCuda(const DeviceTree<T>& tree, const double* mass,
  std::vector<DeviceBuffer<GravityMoments>>& moments, cudaStream_t stream)
{
  moments.clear();
  moments.resize(tree.planes.size());
  for (std::size_t p = 0; p < tree.planes.size(); ++p)
  {
    const DevicePlane<T>& plane = tree.planes[p];
    moments[p].allocate(plane.numNodes, stream, "the gravity multipoles");
    if (plane.numNodes == 0)
      continue;
    const unsigned blocks = blocksFor(plane.numNodes, 128);
    if (p == 0)
    {
      leafMomentsKernel<<<blocks, 128, 0, stream>>>(plane.numNodes, plane.sourceSplit.get(),
        plane.sourceBox.get(), tree.sx.get(), tree.sy.get(), tree.sz.get(), mass,
        moments[p].get());
      JZ_CUDA_LAUNCH_CHECK("leafMomentsKernel");
    }
    else
    {
      parentMomentsKernel<<<blocks, 128, 0, stream>>>(plane.numNodes, plane.sourceSplit.get(),
        plane.childSplit.get(), tree.planes[p - 1].numNodes, plane.sourceBox.get(),
        moments[p - 1].get(), moments[p].get());
      JZ_CUDA_LAUNCH_CHECK("parentMomentsKernel");
    }
  }
}

template void gravityMomentsCuda<float>(const DeviceTree<float>&, const double*,
  std::vector<DeviceBuffer<GravityMoments>>&, cudaStream_t);
template void gravityMomentsCuda<double>(const DeviceTree<double>&, const double*,
  std::vector<DeviceBuffer<GravityMoments>>&, cudaStream_t);
} // namespace cuda
} // namespace jz
