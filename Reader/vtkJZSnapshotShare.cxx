// VTK-HeaderTest-Exclude: vtkJZSnapshotShare.h
#include "vtkJZSnapshotShare.h"

#include <algorithm>

namespace vtkJZSnapshotShare
{
namespace
{
// ceil(a / b) for a >= 0, b > 0.
std::int64_t CeilDiv(std::int64_t a, std::int64_t b)
{
  return (a + b - 1) / b;
}

// floor(total * piece / numPieces) without overflow for any total < 2^63.
std::int64_t Boundary(std::int64_t total, int piece, int numPieces)
{
  const std::int64_t q = total / numPieces, r = total % numPieces;
  return q * piece + r * piece / numPieces;
}

// Kept rows k in [lo, hi) (kept row k = row k * stride of the concatenation).
Share KeptRows(
  const std::vector<Range>& ranges, std::int64_t stride, std::int64_t lo, std::int64_t hi)
{
  Share share;
  std::int64_t rangeStart = 0; // row of the concatenation at the range's first row
  for (std::size_t i = 0; i < ranges.size() && hi > lo; ++i)
  {
    const std::int64_t rangeEnd = rangeStart + ranges[i].Count;
    const std::int64_t first = std::max(lo, CeilDiv(rangeStart, stride));
    const std::int64_t last = std::min(hi, CeilDiv(rangeEnd, stride)); // exclusive
    if (last > first)
    {
      share.Reads.push_back(
        { ranges[i].File, ranges[i].Start + first * stride - rangeStart, last - first, first - lo });
    }
    rangeStart = rangeEnd;
  }
  share.NumberOfRows = std::max<std::int64_t>(hi - lo, 0);
  return share;
}
}

std::vector<Range> WholeFiles(const std::vector<std::int64_t>& countPerFile)
{
  std::vector<Range> ranges;
  for (std::size_t file = 0; file < countPerFile.size(); ++file)
  {
    ranges.push_back({ file, 0, countPerFile[file] });
  }
  return ranges;
}

Share ComputeShare(const std::vector<Range>& ranges, std::int64_t stride, int piece, int numPieces)
{
  stride = std::max<std::int64_t>(stride, 1);
  numPieces = std::max(numPieces, 1);
  if (piece < 0 || piece >= numPieces)
  {
    return {};
  }
  std::int64_t total = 0;
  for (const Range& range : ranges)
  {
    total += range.Count;
  }
  const std::int64_t kept = CeilDiv(total, stride);
  return KeptRows(
    ranges, stride, Boundary(kept, piece, numPieces), Boundary(kept, piece + 1, numPieces));
}

Share Slice(const std::vector<Range>& ranges, std::int64_t begin, std::int64_t end)
{
  return KeptRows(ranges, 1, begin, end);
}
}
