/**
 * @file   vtkJZSnapshotCells.h
 * @brief  The rows of a point set that may hold particles inside a Region.
 *
 * SWIFT snapshots index their particles by top-level cell (the `Cells`
 * group: `Centres`, `Meta-data` attribute `size`, and per type `Counts`,
 * `OffsetsInFile` (older files: `Offsets`), `Files`, and where written the
 * particles' bounding boxes `MinPositions` / `MaxPositions`). Only the
 * cells whose box overlaps the region are candidates: the particles'
 * bounding box when the file has it, else the cell widened by one cell
 * length on each side (SWIFT's particles drift out of their cell between
 * tree rebuilds, by less than that), also across the periodic boundary.
 * Other formats, and SWIFT files whose cell data are missing or do not
 * match the particle counts, have every row as a candidate.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotCells_h
#define vtkJZSnapshotCells_h

#include "vtkJZSnapshotLayout.h"
#include "vtkJZSnapshotShare.h"

#include <vector>

namespace vtkJZSnapshotCells
{
/// The candidate row ranges of `set` for `region` (xmin xmax ymin ymax
/// zmin zmax), in file order. Never throws.
std::vector<vtkJZSnapshotShare::Range> CandidateRows(const vtkJZSnapshotLayout::Layout& layout,
  const vtkJZSnapshotLayout::PointSet& set, const double region[6]);
}

#endif
