// The separable forms of the cumulative tables (SphKernelTables.h) that the
// maps read: a column's (SphPixelFactors) and a volume's (SphVoxelFactors).
// A form is its factors u_p at the table's nodes and the weights that
// combine them: a column's w_p, a volume's core[p][q][r].
//
// Computing a form takes its table's quadrature and an eigensolve, which
// the first map of each kind would wait for in every process. So the
// library holds the forms as computed ahead, bit for bit (SphBakedForms.inc,
// which jz_bake_sph_forms writes from compute*Form); the tests check that
// they are still what these functions compute. Held once, the forms are
// also the same on every machine, whatever its rounding.
#pragma once

#include <vector>

#include "jz/DensityKernels.h"

namespace jz
{
struct SphSeparableForm
{
  int intervals = 0;           // the table's intervals on [0, 1]
  std::vector<double> u;       // u[node * kRank + p], nodes 0 .. intervals
  std::vector<double> weights; // column: w[p]; volume: core[(p kRank + q) kRank + r]
};

// The forms from the tables (SphCumulativeTable), as computed ahead.
SphSeparableForm computeColumnForm(SphKernel kernel);
SphSeparableForm computeVolumeForm(SphKernel kernel);

// The forms the library holds (computed ahead by the functions above).
SphSeparableForm bakedColumnForm(SphKernel kernel);
SphSeparableForm bakedVolumeForm(SphKernel kernel);
} // namespace jz
