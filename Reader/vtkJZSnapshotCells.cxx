// VTK-HeaderTest-Exclude: vtkJZSnapshotCells.h
#include "vtkJZSnapshotCells.h"

#include "vtkJZSnapshotHDF5.h"

#include <algorithm>
#include <numeric>

namespace vtkJZSnapshotCells
{
namespace
{
using vtkJZSnapshotHDF5::Handle;
using vtkJZSnapshotShare::Range;

// A whole dataset as values of `memoryType` (T), or false when absent.
template <class T>
bool ReadAll(hid_t file, const std::string& path, hid_t memoryType, std::vector<T>& out)
{
  if (!vtkJZSnapshotHDF5::IsDataset(file, path))
  {
    return false;
  }
  Handle dataset = vtkJZSnapshotHDF5::OpenDataset(file, path, path);
  const std::vector<hsize_t> shape = vtkJZSnapshotHDF5::Shape(dataset.Get());
  hsize_t values = shape.empty() ? 0 : 1;
  for (hsize_t d : shape)
  {
    values *= d;
  }
  out.assign(static_cast<std::size_t>(values), T());
  if (values > 0)
  {
    vtkJZSnapshotHDF5::ReadRows(
      dataset.Get(), 0, shape[0], 1, memoryType, out.data(), H5P_DEFAULT, path);
  }
  return true;
}

// Whether [lo, hi] overlaps the half-open region on every axis, directly or
// shifted by a periodic box length.
bool Overlaps(const double* lo, const double* hi, const double* region, const double* box)
{
  for (int axis = 0; axis < 3; ++axis)
  {
    bool any = false;
    for (const double shift : { 0.0, -box[axis], box[axis] })
    {
      any = any || (lo[axis] + shift < region[2 * axis + 1] && hi[axis] + shift >= region[2 * axis]);
    }
    if (!any)
    {
      return false;
    }
  }
  return true;
}

// The candidate ranges from the cell data, or false to read every row.
bool FromCells(const vtkJZSnapshotLayout::Layout& layout, const vtkJZSnapshotLayout::PointSet& set,
  const double* region, std::vector<Range>& ranges)
{
  Handle file = vtkJZSnapshotHDF5::OpenFile(layout.Files.front());
  std::vector<double> centres, size, minimum, maximum;
  std::vector<std::int64_t> counts, offsets, files;
  const std::string type = "/" + set.Name;
  if (!ReadAll(file.Get(), "Cells/Centres", H5T_NATIVE_DOUBLE, centres) ||
    !vtkJZSnapshotHDF5::ReadAttribute(file.Get(), "Cells/Meta-data", "size", size) ||
    size.size() != 3 || !ReadAll(file.Get(), "Cells/Counts" + type, H5T_NATIVE_INT64, counts) ||
    !(ReadAll(file.Get(), "Cells/OffsetsInFile" + type, H5T_NATIVE_INT64, offsets) ||
      ReadAll(file.Get(), "Cells/Offsets" + type, H5T_NATIVE_INT64, offsets)))
  {
    return false;
  }
  const std::size_t cells = counts.size();
  if (centres.size() != 3 * cells || offsets.size() != cells)
  {
    return false;
  }
  if (!ReadAll(file.Get(), "Cells/Files" + type, H5T_NATIVE_INT64, files) || files.size() != cells)
  {
    files.assign(cells, 0);
  }
  const bool bounds = ReadAll(file.Get(), "Cells/MinPositions" + type, H5T_NATIVE_DOUBLE, minimum) &&
    ReadAll(file.Get(), "Cells/MaxPositions" + type, H5T_NATIVE_DOUBLE, maximum) &&
    minimum.size() == 3 * cells && maximum.size() == 3 * cells;
  double box[3] = { 0, 0, 0 };
  if (const vtkJZSnapshotLayout::HeaderValue* value = layout.Find("BoxSize"))
  {
    for (int axis = 0; axis < 3; ++axis)
    {
      box[axis] = value->Values[value->Values.size() == 3 ? axis : 0];
    }
  }
  // A virtual meta-snapshot is one "file": the rows of the parts before.
  const std::size_t parts = layout.Files.size();
  std::vector<std::int64_t> before(1, 0);
  for (std::size_t c = 0; c < cells; ++c)
  {
    if (files[c] < 0 || counts[c] < 0 || offsets[c] < 0)
    {
      return false;
    }
    const std::size_t f = static_cast<std::size_t>(files[c]);
    before.resize(std::max(before.size(), f + 2), 0);
    before[f + 1] += counts[c];
  }
  std::partial_sum(before.begin(), before.end(), before.begin());
  for (std::size_t c = 0; c < cells; ++c)
  {
    if (counts[c] == 0)
    {
      continue;
    }
    double lo[3], hi[3];
    for (int axis = 0; axis < 3; ++axis)
    {
      lo[axis] = bounds ? minimum[3 * c + axis] : centres[3 * c + axis] - 1.5 * size[axis];
      hi[axis] = bounds ? maximum[3 * c + axis] : centres[3 * c + axis] + 1.5 * size[axis];
    }
    if (!Overlaps(lo, hi, region, box))
    {
      continue;
    }
    const std::size_t f = parts == 1 ? 0 : static_cast<std::size_t>(files[c]);
    const std::int64_t start = parts == 1 ? before[files[c]] + offsets[c] : offsets[c];
    if (f >= parts || start + counts[c] > set.CountPerFile[f])
    {
      return false;
    }
    ranges.push_back({ f, start, counts[c] });
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b)
    { return a.File != b.File ? a.File < b.File : a.Start < b.Start; });
  std::vector<Range> merged;
  for (const Range& r : ranges)
  {
    if (!merged.empty() && merged.back().File == r.File &&
      merged.back().Start + merged.back().Count == r.Start)
    {
      merged.back().Count += r.Count;
    }
    else if (merged.empty() || merged.back().File != r.File ||
      merged.back().Start + merged.back().Count < r.Start)
    {
      merged.push_back(r);
    }
    else
    {
      return false; // overlapping cells: not SWIFT's layout
    }
  }
  ranges = merged;
  return true;
}
}

std::vector<vtkJZSnapshotShare::Range> CandidateRows(const vtkJZSnapshotLayout::Layout& layout,
  const vtkJZSnapshotLayout::PointSet& set, const double region[6])
{
  std::vector<Range> ranges;
  if (layout.Store == vtkJZSnapshotLayout::Storage::HDF5 && layout.Format == "SWIFT" &&
    layout.Type == vtkJZSnapshotLayout::Kind::Snapshot)
  {
    vtkJZSnapshotHDF5::ErrorSilencer silence;
    try
    {
      if (FromCells(layout, set, region, ranges))
      {
        return ranges;
      }
    }
    catch (const vtkJZSnapshotHDF5::Error&)
    {
    }
  }
  return vtkJZSnapshotShare::WholeFiles(set.CountPerFile);
}
}
