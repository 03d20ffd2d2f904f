// The range searches of the spherical-overdensity profiles in a periodic box
// (HaloProperties.cpp): the particles wrapped into the box and sorted into a
// uniform grid of cells once (a counting sort, far cheaper than a tree over
// all particles), then every round's centres scan the cells that their
// sphere's nearest images overlap. The distances are those of a scan over
// the particles (BoxMetric's nearest image from the wrapped points), so the
// profiles are the same sets.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <omp.h>

#include "walk/BoxMetric.h"
#include "jz/Geometry.h"
#include "jz/HugePages.h"

namespace jz
{
template <class T>
class SphericalOverdensityGrid
{
public:
  // points: n xyz, masses (nullptr = unit); per: the periodic box.
  SphericalOverdensityGrid(const T* points, std::size_t n, const double* masses,
    const Periodicity& per, const double* boxLo, int threads)
    : per_(per)
    , cells_(int(std::clamp(std::cbrt(double(n) / 2), 1.0, 256.0)))
  {
    for (int k = 0; k < 3; ++k)
    {
      lo_[k] = boxLo[k];
      width_[k] = per.length[k] / cells_;
    }
    const std::size_t total = std::size_t(cells_) * cells_ * cells_;
    // Memory is dear to touch: the cell of each particle (32 bits; cells_
    // <= 256), then the wrapped points (and masses, unless all are 1)
    // scattered into cell order, all on huge pages (4 KiB faults would cost
    // more than the sort), first touched by the threads that fill them.
    UninitialisedVector<std::uint32_t> cellOf;
    resizeHugePages(cellOf, n);
    assignCells(points, n, boxLo, threads, cellOf.data());
    // A counting sort by cell, parallel and stable: each thread counts and
    // then places a contiguous part of the particles, after the earlier
    // parts' particles of the same cell (the order of a serial sort). The
    // parts' counts take at most 4 bytes per particle; a part holds fewer
    // than 2^32 particles.
    const int parts = int(std::max<std::size_t>({ 1, (n >> 32) + 1,
      std::min({ std::size_t(threads), n / 65536, n / std::max<std::size_t>(total, 1) }) }));
    std::vector<std::vector<std::uint32_t>> count{ std::size_t(parts) };
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int t = 0; t < parts; ++t)
    {
      std::vector<std::uint32_t>& mine = count[std::size_t(t)];
      assignOnHugePages(mine, total, std::uint32_t(0));
      const std::size_t b = partBegin(n, parts, t), e = partBegin(n, parts, t + 1);
      for (std::size_t j = b; j < e; ++j)
      {
        if (j + kPrefetchAhead < e) // shuffled input: a cache miss per particle
          __builtin_prefetch(&mine[cellOf[j + kPrefetchAhead]], 1);
        ++mine[cellOf[j]];
      }
    }
    assignOnHugePages(start_, total + 1, std::size_t(0));
    for (std::size_t c = 0; c < total; ++c)
    {
      std::size_t at = start_[c];
      for (auto& part : count) // becomes the part's first slot in the cell
        at += std::exchange(part[c], std::uint32_t(at - start_[c]));
      start_[c + 1] = at;
    }
    resizeHugePages(xyz_, 3 * n);
    if (masses)
      resizeHugePages(mass_, n);
    if (n >> 32)
      place<std::uint64_t>(points, masses, boxLo, n, parts, cellOf.data(), count);
    else
      place<std::uint32_t>(points, masses, boxLo, n, parts, cellOf.data(), count);
  }

  // Particles a search of these centres (wrapped into the box) and radii
  // would visit: the occupancy of the cells scanned.
  std::size_t work(
    const std::vector<double>& centres, const std::vector<double>& radius2, int threads) const
  {
    std::size_t sum = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) reduction(+ : sum)
    for (long long i = 0; i < (long long)radius2.size(); ++i)
      forEachRun(&centres[3 * i], radius2[i], [&](std::size_t b, std::size_t e) { sum += e - b; });
    return sum;
  }

  // (r^2, m) of the particles within each centre's radius.
  void collect(const std::vector<double>& centres, const std::vector<double>& radius2, int threads,
    std::vector<std::vector<std::pair<double, double>>>& found) const
  {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (long long i = 0; i < (long long)radius2.size(); ++i)
      collectOne(&centres[3 * i], radius2[i], found[i]);
  }

  // (r^2, m) of the particles within sqrt(r2max) of one centre c (wrapped
  // into the box), beyond sqrt(r2min) (r2min < 0: from the centre on),
  // appended to out.
  void collectOne(const double* c, double r2max, std::vector<std::pair<double, double>>& out,
    double r2min = -1) const
  {
    const BoxMetric<true> metric{ per_ };
    forEachRun(c, r2max,
      [&](std::size_t b, std::size_t e)
      {
        for (std::size_t s = b; s < e; ++s)
        {
          const double y[3] = { double(xyz_[3 * s]), double(xyz_[3 * s + 1]),
            double(xyz_[3 * s + 2]) };
          const double r2 = metric.point2(c, y);
          if (r2 <= r2max && r2 > r2min)
            out.emplace_back(r2, massAt(s));
        }
      });
  }

private:
  static std::size_t partBegin(std::size_t n, int parts, int t)
  {
    return n * std::size_t(t) / std::size_t(parts);
  }

  // cellOf[j]: the cell of particle j.
  void assignCells(
    const T* points, std::size_t n, const double* boxLo, int threads, std::uint32_t* cellOf) const
  {
    const double perWidth[3] = { 1 / width_[0], 1 / width_[1], 1 / width_[2] };
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long long j = 0; j < (long long)n; ++j)
    {
      T y[3];
      wrapped(points, std::size_t(j), boxLo, y);
      int c[3];
      // Times the inverse width: a particle on a cell's edge may land in
      // the next cell, inside forEachRun's widening of the cell boxes.
      for (int k = 0; k < 3; ++k)
        c[k] = std::clamp(int(std::floor((double(y[k]) - lo_[k]) * perWidth[k])), 0, cells_ - 1);
      cellOf[j] = std::uint32_t(index(c[0], c[1], c[2]));
    }
  }

  // Each part's particles into their slots, in input order. The part's
  // next slot per cell is one array (count's offsets made absolute), so
  // that a particle costs one random access besides its own slot, and both
  // are prefetched a few particles ahead (the input is often shuffled:
  // halo finders' outputs, halos.py).
  template <class Slot>
  void place(const T* points, const double* masses, const double* boxLo, std::size_t n, int parts,
    const std::uint32_t* cellOf, std::vector<std::vector<std::uint32_t>>& count)
  {
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int t = 0; t < parts; ++t)
    {
      std::vector<std::uint32_t>& offset = count[std::size_t(t)];
      UninitialisedVector<Slot> next;
      resizeHugePages(next, offset.size());
      for (std::size_t c = 0; c < offset.size(); ++c)
        next[c] = Slot(start_[c] + offset[c]);
      std::vector<std::uint32_t>().swap(offset);
      const std::size_t b = partBegin(n, parts, t), e = partBegin(n, parts, t + 1);
      for (std::size_t j = b; j < e; ++j)
      {
        if (j + 2 * kPrefetchAhead < e)
          __builtin_prefetch(&next[cellOf[j + 2 * kPrefetchAhead]], 1);
        if (j + kPrefetchAhead < e)
          __builtin_prefetch(&xyz_[3 * std::size_t(next[cellOf[j + kPrefetchAhead]])], 1);
        const std::size_t s = next[cellOf[j]]++;
        wrapped(points, j, boxLo, &xyz_[3 * s]);
        if (masses)
          mass_[s] = masses[j];
      }
    }
  }

  double massAt(std::size_t s) const
  {
    return mass_.empty() ? 1.0 : mass_[s];
  }

  // Wrapped as the tree build wraps them (see scanWithin; treeCoordinate is
  // wrapIntoBox bit for bit, without its division inside the box).
  void wrapped(const T* points, std::size_t j, const double* boxLo, T* y) const
  {
    for (int k = 0; k < 3; ++k)
      y[k] = treeCoordinate(points[3 * j + k], boxLo[k], per_.length[k]);
  }

  std::size_t index(int x, int y, int z) const
  {
    return (std::size_t(x) * cells_ + std::size_t(y)) * cells_ + std::size_t(z);
  }

  // The cells (each once) that hold every particle whose nearest image is
  // within sqrt(r2) of c: in the cell range of [c - r, c + r], widened by
  // one cell, taken modulo the grid (all cells when it spans the box), those
  // whose box (widened by far more than the rounding of the cell
  // assignment) comes within sqrt(r2) of c. A particle's image within r of c
  // lies in the range, in the cell's box at the unwrapped index visited.
  // Visited as runs of consecutive z cells (their particles contiguous):
  // visit(first slot, end slot), in the order of the cells.
  template <class F>
  void forEachRun(const double* c, double r2, F&& visit) const
  {
    const double r = std::sqrt(std::max(r2, 0.0));
    int a[3], b[3];
    bool all[3];
    for (int k = 0; k < 3; ++k)
    {
      const double from = std::floor((c[k] - r - lo_[k]) / width_[k]) - 1;
      const double to = std::floor((c[k] + r - lo_[k]) / width_[k]) + 1;
      all[k] = !(to - from + 1 < cells_);
      a[k] = all[k] ? 0 : int(from);
      b[k] = all[k] ? cells_ - 1 : int(to);
    }
    // Squared distance from c to the cell's box along axis k.
    auto gap2 = [&](int k, int i)
    {
      if (all[k])
        return 0.0;
      const double tol = 1e-9 * per_.length[k];
      const double lo = lo_[k] + i * width_[k] - tol, hi = lo_[k] + (i + 1) * width_[k] + tol;
      const double d = c[k] < lo ? lo - c[k] : (c[k] > hi ? c[k] - hi : 0.0);
      return d * d;
    };
    auto wrap = [this](int i) { return ((i % cells_) + cells_) % cells_; };
    for (int x = a[0]; x <= b[0]; ++x)
    {
      const double gx = gap2(0, x);
      if (gx > r2)
        continue;
      for (int y = a[1]; y <= b[1]; ++y)
      {
        const double gxy = gx + gap2(1, y);
        if (gxy > r2)
          continue;
        // The cells within reach along z are an interval (the gap grows
        // away from c), split where it wraps.
        int z0 = a[2], z1 = b[2];
        while (z0 <= z1 && gxy + gap2(2, z0) > r2)
          ++z0;
        while (z1 >= z0 && gxy + gap2(2, z1) > r2)
          --z1;
        const std::size_t row = index(wrap(x), wrap(y), 0);
        for (int z = z0; z <= z1;)
        {
          const int w = wrap(z), run = std::min(z1 - z, cells_ - 1 - w); // cells after w
          visit(start_[row + std::size_t(w)], start_[row + std::size_t(w + run) + 1]);
          z += run + 1;
        }
      }
    }
  }

  // Particles ahead of the one placed whose cell's counter is prefetched.
  static constexpr std::size_t kPrefetchAhead = 16;

  Periodicity per_;
  int cells_; // per axis
  double lo_[3], width_[3];
  std::vector<std::size_t> start_;   // per cell, into the particles in cell order
  UninitialisedVector<T> xyz_;       // wrapped
  UninitialisedVector<double> mass_; // empty: every mass is 1
};
} // namespace jz
