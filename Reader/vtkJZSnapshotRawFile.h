/**
 * @file   vtkJZSnapshotRawFile.h
 * @brief  Checked reads of a binary snapshot file (Gadget binary, TIPSY).
 *
 * A read-only file whose size is known, so that every read is checked
 * against it before anything is allocated: a read past the end throws
 * vtkJZSnapshotHDF5::Error naming the file, what was read and where
 * ("truncated"). Large reads are split over a few threads, each reading
 * its slice of the file straight into its slice of the buffer (the first
 * touch of fresh output memory, not the copy, is most of a read from the
 * page cache, and it scales with cores). Byte-order helpers for files
 * written on the other endianness.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotRawFile_h
#define vtkJZSnapshotRawFile_h

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <sys/stat.h>

namespace vtkJZSnapshotRawFile
{
class File
{
public:
  /// Opens the file; throws Error when it does not exist or is unreadable.
  explicit File(const std::string& name);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& Name() const { return this->Path; }
  std::int64_t Size() const { return this->Bytes; }

  /// Reads `bytes` bytes at `offset`; throws Error naming `what` when the
  /// file ends before (also when it was cut after being opened).
  void Read(std::int64_t offset, void* buffer, std::size_t bytes, const std::string& what) const;

  /// The same into fresh memory: each piece's pages mapped at once before
  /// it is read (PopulatePages), large reads in slices on up to `threads`
  /// threads.
  void ReadInParallel(std::int64_t offset, void* buffer, std::size_t bytes,
    const std::string& what, int threads) const;

  /// Whether `descriptor` (an open file) is this very file (device and inode).
  bool SameFileAs(int descriptor) const;

  /// Whether `name` names this very file now.
  bool SameFileAs(const std::string& name) const;

  /// Threads of a parallel read for one of `processes` processes that share
  /// this machine's cores (at most 4 in all), and the bytes each reads at least.
  static int ReadThreads(int processes);
  static constexpr std::size_t SliceBytes = std::size_t(16) << 20;

private:
  void CheckRange(std::int64_t offset, std::size_t bytes, const std::string& what) const;
  bool Is(const struct stat& info) const; // device and inode
  void ReadSpan(std::int64_t offset, char* out, std::size_t bytes, const std::string& what) const;
  void ReadFresh(std::int64_t offset, char* out, std::size_t bytes, const std::string& what) const;

  std::string Path;
  int Descriptor = -1;
  std::int64_t Bytes = 0;
  std::uint64_t Device = 0, Inode = 0;
};

/// The message of a read of `bytes` bytes at `offset` past the end of a
/// file of `fileBytes` bytes (its name `path`; `what` was read).
std::string TruncatedMessage(const std::string& path, const std::string& what,
  std::int64_t offset, std::int64_t bytes, std::int64_t fileBytes);

/// Maps the pages of fresh memory [memory, memory + bytes) before they are
/// written (Linux MADV_POPULATE_WRITE; a whole page before `memory` too):
/// one call faults a range in, cheaper than a fault per page. Only advice:
/// nothing is written.
void PopulatePages(void* memory, std::size_t bytes);

/// Whether a file exists and can be opened for reading.
bool Readable(const std::string& name);

/// Reverses the bytes of each of `count` values of `size` bytes.
void SwapBytes(void* data, std::size_t count, int size);

/// Whether this machine stores numbers big-endian.
bool HostIsBigEndian();

/// A value of type T stored at `p`, in the other byte order when `swap`.
template <class T>
T Decode(const void* p, bool swap)
{
  T value;
  std::memcpy(&value, p, sizeof(T));
  if (swap)
  {
    SwapBytes(&value, 1, sizeof(T));
  }
  return value;
}
}

#endif
