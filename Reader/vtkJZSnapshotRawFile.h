/**
 * @file   vtkJZSnapshotRawFile.h
 * @brief  Checked reads of a binary snapshot file (Gadget binary, TIPSY).
 *
 * A read-only file whose size is known, so that every read is checked
 * against it before anything is allocated: a read past the end throws
 * vtkJZSnapshotHDF5::Error naming the file, what was read and where
 * ("truncated"). Byte-order helpers for files written on the other
 * endianness.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotRawFile_h
#define vtkJZSnapshotRawFile_h

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

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
  /// file ends before.
  void Read(std::int64_t offset, void* buffer, std::size_t bytes, const std::string& what) const;

private:
  std::string Path;
  int Descriptor = -1;
  std::int64_t Bytes = 0;
};

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
