// One loop that the compiler vectorises: four weights at a time where the
// processor has AVX, two with SSE2. The operations are cubicSplineW's own,
// correctly rounded and not contracted (this build forbids contraction; no
// errno lets the square root vectorise), so the bits are the scalar
// function's.
#include "knn/CubicSplineWeights.h"

#include <cmath>

#include "jz/DensityKernels.h"

#if defined(__x86_64__)
#define JZ_WEIGHTS_CLONES __attribute__((target_clones("avx", "default")))
#else
#define JZ_WEIGHTS_CLONES
#endif

namespace jz
{
JZ_WEIGHTS_CLONES void cubicSplineWeights(const double* d2, int n, double h, double* w)
{
  const double norm = cubicSplineNorm(h);
#pragma omp simd
  for (int j = 0; j < n; ++j)
    w[j] = norm * cubicSplineShape(std::sqrt(d2[j]) / h);
}
} // namespace jz
