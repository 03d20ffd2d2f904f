/**
 * @file   vtkJZSnapshotShare.h
 * @brief  Which rows of a (multi-file) point set one piece reads.
 *
 * The candidate rows of a point set are a list of row ranges of its part
 * files (whole files, or with a Region the cells of a SWIFT snapshot that
 * may hold particles inside it), in file order. The rows kept by `Stride`
 * (every stride-th row of their concatenation, starting with the first)
 * are cut into `numPieces` contiguous shares of near-equal size, in piece
 * order; piece p reads share p, as one strided run per range it touches.
 * The concatenation of the pieces' rows in piece order is therefore the
 * serial result, whatever the number of pieces (MPI ranks), and no piece
 * reads another's rows.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotShare_h
#define vtkJZSnapshotShare_h

#include <cstdint>
#include <vector>

namespace vtkJZSnapshotShare
{
/// Rows Start .. Start + Count - 1 of part file File.
struct Range
{
  std::size_t File = 0;
  std::int64_t Start = 0;
  std::int64_t Count = 0;
};

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

/// Whole part files of `countPerFile` rows as ranges.
std::vector<Range> WholeFiles(const std::vector<std::int64_t>& countPerFile);

/// The share of piece `piece` (0 <= piece < numPieces) of the rows of
/// `ranges`, keeping every `stride`-th row.
Share ComputeShare(const std::vector<Range>& ranges, std::int64_t stride, int piece, int numPieces);

/// Rows [begin, end) of the concatenation of `ranges` (no stride).
Share Slice(const std::vector<Range>& ranges, std::int64_t begin, std::int64_t end);
}

#endif
