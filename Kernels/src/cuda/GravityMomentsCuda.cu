// Tree gravity's multipoles on the GPU, plane by plane from the leaves up:
// one thread per node, the terms and their order those of the CPU's
// gravityMoments (cpu/GravityMoments.h: its helpers, addSecond of
// GravityTerms.h), so with --fmad=false the moments are the CPU's bit for bit.
#include "../cpu/GravityMoments.h"
#include "GravityCuda.cuh"

namespace jz
{
namespace cuda
{
namespace
{
// The end of one node's moments (either plane): all points at one position
// make an exact point mass there; the enclosing radius from its box.
template <class T>
__device__ void finishNode(const Box<T>& box, GravityMoments& n)
{
  if (box.lo[0] == box.hi[0] && box.lo[1] == box.hi[1] && box.lo[2] == box.hi[2])
  {
    for (int k = 0; k < 3; ++k)
      n.com[k] = double(box.lo[k]);
    for (int k = 0; k < 6; ++k)
      n.second[k] = 0.0;
  }
  n.radius2 = gravity_detail::enclosingRadius2(box, n.com);
}

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
    for (Index i = a; i < b; ++i)
    {
      n.mass += mass[i];
      n.com[0] += mass[i] * double(x[i]);
      n.com[1] += mass[i] * double(y[i]);
      n.com[2] += mass[i] * double(z[i]);
    }
    if (n.mass > 0)
      for (int k = 0; k < 3; ++k)
        n.com[k] /= n.mass;
    else
      gravity_detail::boxCentre(box[j], n.com);
    for (Index i = a; i < b; ++i)
    {
      const double w[3] = { double(x[i]) - n.com[0], double(y[i]) - n.com[1],
        double(z[i]) - n.com[2] };
      addSecond(n.second, w, mass[i]);
    }
    finishNode(box[j], n);
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
    for (Index c = a; c < b; ++c)
    {
      n.mass += below[c].mass;
      for (int k = 0; k < 3; ++k)
        n.com[k] += below[c].mass * below[c].com[k];
    }
    if (n.mass > 0)
      for (int k = 0; k < 3; ++k)
        n.com[k] /= n.mass;
    else
      gravity_detail::boxCentre(box[j], n.com);
    for (Index c = a; c < b; ++c)
    {
      const double d[3] = { below[c].com[0] - n.com[0], below[c].com[1] - n.com[1],
        below[c].com[2] - n.com[2] };
      for (int k = 0; k < 6; ++k)
        n.second[k] += below[c].second[k];
      addSecond(n.second, d, below[c].mass);
    }
    finishNode(box[j], n);
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
