/**
 * @file   vtkJZSnapshotShare.h
 * @brief  Which rows of a (multi-file) point set one piece reads.
 *
 * The rows kept by `Stride` (every stride-th row of the concatenation of the
 * part files, starting with the first) are cut into `numPieces` contiguous
 * shares of near-equal size, in piece order; piece p reads share p, as one
 * strided hyperslab per part file it touches. The concatenation of the
 * pieces' rows in piece order is therefore the serial result, whatever the
 * number of pieces (MPI ranks), and no piece reads another's rows.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotShare_h
#define vtkJZSnapshotShare_h

#include <cstdint>
#include <vector>

namespace vtkJZSnapshotShare
{
/// Rows Start, Start + Stride, ... (Count of them) of part file File, which
/// land at Offset, Offset + 1, ... of the piece's output.
struct FileRows
{
  std::size_t File = 0;
  std::int64_t Start = 0;
  std::int64_t Count = 0;
  std::int64_t Offset = 0;
};

struct Share
{
  std::int64_t NumberOfRows = 0; // rows of this piece, over all files
  std::vector<FileRows> Reads;   // in file order, only files with rows
};

/// The share of piece `piece` (0 <= piece < numPieces) of the point set with
/// `countPerFile` rows in each part file, keeping every `stride`-th row.
Share ComputeShare(
  const std::vector<std::int64_t>& countPerFile, std::int64_t stride, int piece, int numPieces);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotShare.h
