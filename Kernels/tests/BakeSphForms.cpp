// Writes SphBakedForms.inc: the separable forms of the SPH maps' cumulative
// tables (sph/SphSeparableForms.h), computed here as the library computes
// them, to every bit (hexadecimal literals). After a change to the tables
// or to the forms' computation:
//   build/bin/jz_bake_sph_forms > Kernels/src/sph/SphBakedForms.inc
// (the test BakedFormsAreTheComputedOnes says when that is due).
#include <cstdio>
#include <vector>

#include "sph/SphFactorCubics.h"
#include "sph/SphKernelTables.h"
#include "sph/SphSeparableForms.h"

namespace
{
const jz::SphKernel kKernels[2] = { jz::SphKernel::CubicSpline, jz::SphKernel::WendlandC2 };

// One array of doubles per kernel (in kernelIndex order), four a line.
void printArray(const char* name, const char* extent, const std::vector<double> (&values)[2])
{
  std::printf("constexpr double %s[2][%s] = {\n", name, extent);
  for (const std::vector<double>& v : values)
  {
    std::printf("  {\n");
    for (std::size_t i = 0; i < v.size(); ++i)
      std::printf("%s%a,%s", i % 4 == 0 ? "    " : " ", v[i], i % 4 == 3 ? "\n" : "");
    std::printf("%s  },\n", v.size() % 4 ? "\n" : "");
  }
  std::printf("};\n");
}
} // namespace

int main()
{
  std::vector<double> columnU[2], columnWeights[2], volumeU[2], volumeCore[2];
  int columnIntervals = 0, volumeIntervals = 0;
  for (jz::SphKernel kernel : kKernels)
  {
    const int k = jz::kernelIndex(kernel);
    const jz::SphSeparableForm column = jz::computeColumnForm(kernel);
    const jz::SphSeparableForm volume = jz::computeVolumeForm(kernel);
    columnIntervals = column.intervals, volumeIntervals = volume.intervals;
    columnU[k] = column.u, columnWeights[k] = column.weights;
    volumeU[k] = volume.u, volumeCore[k] = volume.weights;
  }
  std::printf("// The separable forms of the SPH maps' cumulative tables, written by\n"
              "// jz_bake_sph_forms (Kernels/tests/BakeSphForms.cpp): not to be edited.\n"
              "// [kernelIndex][...]: u[node * kRank + p]; a column's weights w[p]; a\n"
              "// volume's core[(p * kRank + q) * kRank + r].\n");
  std::printf("// clang-format off\n");
  std::printf("constexpr int kBakedColumnIntervals = %d;\n", columnIntervals);
  std::printf("constexpr int kBakedVolumeIntervals = %d;\n", volumeIntervals);
  printArray("kBakedColumnU", "(kBakedColumnIntervals + 1) * R", columnU);
  printArray("kBakedColumnWeights", "R", columnWeights);
  printArray("kBakedVolumeU", "(kBakedVolumeIntervals + 1) * R", volumeU);
  printArray("kBakedVolumeCore", "R * R * R", volumeCore);
  std::printf("// clang-format on\n");
  return 0;
}
