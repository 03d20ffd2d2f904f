// The kNN density's kernel weights a neighbour list at a time, vectorised:
// the same values, bit for bit, as jz::cubicSplineW (jz/DensityKernels.h),
// which the GPU's leaf walk evaluates one at a time, so that the CPU's and
// the GPU's densities agree to the last bit.
#pragma once

namespace jz
{
/// w[j] = cubicSplineW(sqrt(d2[j]), h) for j < n.
void cubicSplineWeights(const double* d2, int n, double h, double* w);
}
