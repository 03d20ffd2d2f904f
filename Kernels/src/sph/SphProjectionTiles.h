// A projection's wide columns by tiles of the image, as the GPU deposits
// them (SphMapsCuda.cu) without atomics: each tile of kTileSide x kTileSide
// pixels that an image of a wide column covers is an entry; with the
// entries sorted stably by tile, a tile's pixels are each owned by one
// thread, which adds the tile's columns in entry order (particle by
// particle, as the particles come). Host and device code (JZ_HD), so that
// the CPU tests run the tiles' logic the GPU runs; the pixel masses are
// widePixel's, the CPU's corrected midpoint rule.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jz/Config.h"
#include "sph/SphImages.h"
#include "sph/SphProjectionColumns.h"

namespace jz
{
namespace projection
{
constexpr int kTileSide = 32;     // pixels a side of a tile
constexpr int kTileThreads = 256; // threads a tile: one pixel column of every 8th row each
constexpr int kTileRowStep = kTileThreads / kTileSide;
constexpr int kTileRowsPerThread = kTileSide / kTileRowStep;
// An entry's code: its particle, then the index of its image along u and
// along v among the particle's images (ImageShifts), kImageBits each.
constexpr int kImageBits = 12;

// The image's tiles: `across` along u, `down` along v, numbered row by row.
struct TileGrid
{
  int across, down;
};

inline TileGrid tileGridOf(const Projection& g)
{
  return TileGrid{ (g.u.cells + kTileSide - 1) / kTileSide,
    (g.v.cells + kTileSide - 1) / kTileSide };
}

// Whether an entry's code can number every particle's images: a particle
// has at most (region / period) + 3 images along a periodic axis (its
// support is at most the period), one along another.
inline bool imagesFitEntryCodes(const Projection& g)
{
  for (const GridAxis* a : { &g.u, &g.v })
    if (a->period > 0 && (a->hi - a->lo) / a->period + 3 >= double(1 << kImageBits))
      return false;
  return true;
}

JZ_HD std::uint64_t entryCode(std::size_t particle, int imageU, int imageV)
{
  return (std::uint64_t(particle) << (2 * kImageBits)) | (std::uint64_t(imageU) << kImageBits) |
    std::uint64_t(imageV);
}

// Calls visit(tile, code) for every tile of every image of particle i's
// wide column (none when it is narrow or outside the depth range): images
// by u then v, each image's tiles row by row.
template <class T, class Visit>
JZ_HD void forWideEntries(const Projection& g, const TileGrid& tiles, const T* points,
  const double* support, std::size_t i, Visit&& visit)
{
  const double h = support[i];
  if (!(h >= g.wideFrom) ||
    imagesInside(double(points[3 * i + g.depth.dim]), g.depth.lo, g.depth.hi, g.depth.period) == 0)
    return;
  const double x = double(points[3 * i + g.u.dim]), y = double(points[3 * i + g.v.dim]);
  const ImageShifts su(x, h, g.u.lo, g.u.hi, g.u.period), sv(y, h, g.v.lo, g.v.hi, g.v.period);
  for (int ku = su.first; ku <= su.last; ++ku)
    for (int kv = sv.first; kv <= sv.last; ++kv)
    {
      int i0, i1, j0, j1;
      if (!wideSpan(g, x + ku * g.u.period, y + kv * g.v.period, h, i0, i1, j0, j1))
        continue;
      const std::uint64_t code = entryCode(i, ku - su.first, kv - sv.first);
      for (int ty = j0 / kTileSide; ty <= j1 / kTileSide; ++ty)
        for (int tx = i0 / kTileSide; tx <= i1 / kTileSide; ++tx)
          visit(unsigned(ty) * unsigned(tiles.across) + unsigned(tx), code);
    }
}

// The wide column of an entry's code (projectParticle's image and mass),
// and its particle.
template <class T>
JZ_HD WideColumn entryColumn(const Projection& g, const T* points, const double* support,
  const double* masses, std::uint64_t code, std::size_t& particle)
{
  const std::uint64_t mask = (std::uint64_t(1) << kImageBits) - 1;
  const std::size_t i = std::size_t(code >> (2 * kImageBits));
  const int images =
    imagesInside(double(points[3 * i + g.depth.dim]), g.depth.lo, g.depth.hi, g.depth.period);
  const double x = double(points[3 * i + g.u.dim]), y = double(points[3 * i + g.v.dim]);
  const double h = support[i], m = (masses ? masses[i] : 1.0) * images;
  const ImageShifts su(x, h, g.u.lo, g.u.hi, g.u.period), sv(y, h, g.v.lo, g.v.hi, g.v.period);
  const int ku = su.first + int((code >> kImageBits) & mask), kv = sv.first + int(code & mask);
  WideColumn w;
  wideColumnOf(g, x + ku * g.u.period, y + kv * g.v.period, h, m, w);
  particle = i;
  return w;
}

// One thread's pixels of a tile, pixel column u of the rows v0, v0 +
// kTileRowStep, ...: the masses of the `count` columns (with their
// particles) added in order into mass[r], and field(cell, particle, pixel)
// called for each pixel a column reaches (its mapped fields).
template <class Field>
JZ_HD void addTileColumns(const Projection& g, const Centres& c, const WideColumn* columns,
  const std::size_t* particles, int count, int u, int v0, double* mass, Field& field)
{
  for (int k = 0; k < count; ++k)
  {
    const WideColumn& w = columns[k];
    if (u < w.i0 || u > w.i1)
      continue;
    for (int r = 0; r < kTileRowsPerThread; ++r)
    {
      const int v = v0 + r * kTileRowStep;
      if (v < w.j0 || v > w.j1)
        continue;
      const double pixel = widePixel(w, c, u - w.i0, v - w.j0);
      mass[r] += pixel;
      if (pixel != 0)
        field(std::size_t(v) * std::size_t(g.u.cells) + std::size_t(u), particles[k], pixel);
    }
  }
}
} // namespace projection
} // namespace jz
