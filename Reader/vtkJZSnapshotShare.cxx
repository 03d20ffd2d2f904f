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
}

Share ComputeShare(
  const std::vector<std::int64_t>& countPerFile, std::int64_t stride, int piece, int numPieces)
{
  Share share;
  stride = std::max<std::int64_t>(stride, 1);
  numPieces = std::max(numPieces, 1);
  if (piece < 0 || piece >= numPieces)
  {
    return share;
  }
  std::int64_t total = 0;
  for (std::int64_t n : countPerFile)
  {
    total += n;
  }
  // Kept row k is global row k * stride; this piece keeps k in [lo, hi).
  const std::int64_t kept = CeilDiv(total, stride);
  const std::int64_t lo = Boundary(kept, piece, numPieces);
  const std::int64_t hi = Boundary(kept, piece + 1, numPieces);
  std::int64_t fileStart = 0; // global row of the file's first row
  for (std::size_t file = 0; file < countPerFile.size() && hi > lo; ++file)
  {
    const std::int64_t fileEnd = fileStart + countPerFile[file];
    const std::int64_t first = std::max(lo, CeilDiv(fileStart, stride));
    const std::int64_t last = std::min(hi, CeilDiv(fileEnd, stride)); // exclusive
    if (last > first)
    {
      share.Reads.push_back({ file, first * stride - fileStart, last - first, first - lo });
    }
    fileStart = fileEnd;
  }
  share.NumberOfRows = hi - lo;
  return share;
}
}
