/**
 * @file   vtkJZSnapshotTipsy.h
 * @brief  TIPSY snapshots (ChaNGa, Gasoline, pkdgrav) described as a vtkJZSnapshotLayout.
 *
 * A 32-byte header (double time; int nbodies, ndim, nsph, ndark, nstar,
 * pad) and one record of floats per particle: gas (mass, pos[3], vel[3],
 * rho, temp, hsmooth, metals, phi), then dark (mass, pos[3], vel[3], eps,
 * phi), then star (mass, pos[3], vel[3], metals, tform, eps, phi). XDR
 * (big-endian, the "standard" format) or native byte order, told apart by
 * the header whose counts are consistent (ndim 3, nsph + ndark + nstar =
 * nbodies). The file size must be what the counts need.
 *
 * Point sets `gas`, `dark`, `star` (the families with particles). The ids
 * (field GlobalIds) are the binary TIPSY array `<file>.iord` beside the
 * snapshot when there is one (a count, then one integer per particle in
 * file order, either byte order), else the particle's index in the file.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotTipsy_h
#define vtkJZSnapshotTipsy_h

#include "vtkJZSnapshotLayout.h"

#include <string>

namespace vtkJZSnapshotTipsy
{
/// Whether the file starts with a consistent TIPSY header. Never throws.
bool Recognise(const std::string& fileName);

/// The checked layout of the snapshot. Throws vtkJZSnapshotHDF5::Error.
vtkJZSnapshotLayout::Layout Describe(const std::string& fileName);

/// The file itself and the header's time, for a time series.
std::string SeriesEntry(const std::string& fileName, double& time);
}

#endif
