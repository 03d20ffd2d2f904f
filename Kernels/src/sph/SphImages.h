// Where a particle's kernel meets a map, for the CPU and the GPU alike
// (JZ_HD): its periodic images along an axis, the images of a point inside
// a range, and a grid axis's cells that a range covers.
#pragma once

#include <cmath>

#include "jz/Config.h"
#include "jz/SphMaps.h"

namespace jz
{
// The periodic shifts k (images x + k period) whose [x + k period - h,
// x + k period + h] meets [lo, hi]; one shift, 0, when not periodic (an empty
// range when it does not meet).
struct ImageShifts
{
  int first = 0, last = -1;

  JZ_HD ImageShifts(double x, double h, double lo, double hi, double period)
  {
    if (!(period > 0))
    {
      if (x + h >= lo && x - h <= hi)
        last = 0;
      return;
    }
    // Most particles: both quotients strictly within one period of 0 on
    // their sides, so the rounded divisions would give 0 and 0 (the margin
    // keeps them off -1 and 1).
    const double below = lo - x - h, above = hi - x + h, within = period * (1 - 1e-14);
    if (below <= 0 && below > -within && above >= 0 && above < within)
    {
      first = last = 0;
      return;
    }
    first = int(ceil(below / period));
    last = int(floor(above / period));
  }
};

// The number of images x + k period in [lo, hi) (1 or 0 when not periodic).
JZ_HD int imagesInside(double x, double lo, double hi, double period)
{
  if (!(period > 0))
    return x >= lo && x < hi ? 1 : 0;
  // Most points: inside, their next images on either side outside (the
  // loop's own tests for k = 1 and -1, which it would stop at).
  if (x >= lo && x < hi && !(x + period < hi) && !(x - period >= lo))
    return 1;
  int count = 0;
  for (double k = ceil((lo - x) / period); x + k * period < hi; k += 1)
    count += x + k * period >= lo ? 1 : 0;
  return count;
}

// The cells [first, last] of the cell range [lo, hi] (whole numbers, from
// floor and ceil) clipped to [c0, c1); false when none is left.
JZ_HD bool clipCells(double lo, double hi, int c0, int c1, int& first, int& last)
{
  if (!(hi >= c0) || !(lo < c1))
    return false;
  first = lo < c0 ? c0 : int(lo);
  last = hi >= c1 ? c1 - 1 : int(hi);
  return first <= last;
}

// One axis of the grid: [lo, lo + cells * step).
struct GridAxis
{
  int dim = 0;
  double lo = 0, hi = 1, step = 1;
  int cells = 1;
  double period = 0;

  JZ_HD double edge(int i) const { return lo + i * step; }
  // The cells [first, last] that [x - r, x + r] overlaps (unclipped).
  JZ_HD void cellRange(double x, double r, double& first, double& last) const
  {
    first = floor((x - r - lo) / step);
    last = floor((x + r - lo) / step);
  }
  // The same clipped to [c0, c1).
  JZ_HD bool span(double x, double r, int c0, int c1, int& first, int& last) const
  {
    double from, to;
    cellRange(x, r, from, to);
    return clipCells(from, to, c0, c1, first, last);
  }
  // The cells whose centre lies strictly within r of x, clipped to [c0, c1).
  JZ_HD bool centresWithin(double x, double r, int c0, int c1, int& first, int& last) const
  {
    return clipCells(floor((x - r - lo) / step - 0.5) + 1, ceil((x + r - lo) / step - 0.5) - 1,
      c0, c1, first, last);
  }
};

// Axis `dim` of the grid's region cut into `cells`.
inline GridAxis makeAxis(const SphGrid& grid, int dim, int cells, double period)
{
  GridAxis a;
  a.dim = dim;
  a.lo = grid.region[2 * dim];
  a.hi = grid.region[2 * dim + 1];
  a.cells = cells;
  a.step = (a.hi - a.lo) / cells;
  a.period = period;
  return a;
}
} // namespace jz
