// VTK-HeaderTest-Exclude: vtkJZSnapshotRawFile.h
#include "vtkJZSnapshotRawFile.h"

#include "vtkJZSnapshotHDF5.h" // Error

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace vtkJZSnapshotRawFile
{
//------------------------------------------------------------------------------
File::File(const std::string& name)
  : Path(name)
{
  this->Descriptor = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (this->Descriptor < 0 || ::fstat(this->Descriptor, &info) != 0 || !S_ISREG(info.st_mode))
  {
    if (this->Descriptor >= 0)
    {
      ::close(this->Descriptor);
    }
    throw vtkJZSnapshotHDF5::Error(
      "Cannot open '" + name + "': the file does not exist or is not readable.");
  }
  this->Bytes = static_cast<std::int64_t>(info.st_size);
  this->Device = static_cast<std::uint64_t>(info.st_dev);
  this->Inode = static_cast<std::uint64_t>(info.st_ino);
}

//------------------------------------------------------------------------------
File::~File()
{
  ::close(this->Descriptor);
}

//------------------------------------------------------------------------------
void File::CheckRange(std::int64_t offset, std::size_t bytes, const std::string& what) const
{
  if (offset < 0 || offset > this->Bytes ||
    static_cast<std::int64_t>(bytes) > this->Bytes - offset)
  {
    throw vtkJZSnapshotHDF5::Error(TruncatedMessage(
      this->Path, what, offset, static_cast<std::int64_t>(bytes), this->Bytes));
  }
}

//------------------------------------------------------------------------------
std::string TruncatedMessage(const std::string& path, const std::string& what,
  std::int64_t offset, std::int64_t bytes, std::int64_t fileBytes)
{
  std::ostringstream msg;
  msg << "'" << path << "' is truncated or damaged: " << what << " needs bytes " << offset
      << " to " << offset + bytes << " but the file has " << fileBytes << " bytes.";
  return msg.str();
}

//------------------------------------------------------------------------------
// pread until done: it may return fewer bytes than asked (signals, large
// requests); 0 means the file ended, cut after it was opened.
void File::ReadSpan(std::int64_t offset, char* out, std::size_t bytes, const std::string& what) const
{
  while (bytes > 0)
  {
    const ssize_t got = ::pread(this->Descriptor, out, std::min<std::size_t>(bytes, 1 << 30),
      static_cast<off_t>(offset));
    if (got <= 0)
    {
      if (got < 0 && errno == EINTR)
      {
        continue;
      }
      std::ostringstream msg;
      msg << "Cannot read '" << this->Path << "' (" << what << ") at byte " << offset << ": "
          << (got == 0 ? std::string("the file ends there (was it cut while being read?)")
                       : std::generic_category().message(errno))
          << ".";
      throw vtkJZSnapshotHDF5::Error(msg.str());
    }
    out += got;
    offset += got;
    bytes -= static_cast<std::size_t>(got);
  }
}

//------------------------------------------------------------------------------
// In pieces that stay in the cache between the mapping and the read.
void File::ReadFresh(std::int64_t offset, char* out, std::size_t bytes, const std::string& what) const
{
  const std::size_t piece = std::size_t(4) << 20;
  for (std::size_t done = 0; done < bytes; done += piece)
  {
    const std::size_t n = std::min(piece, bytes - done);
    PopulatePages(out + done, n);
    this->ReadSpan(offset + static_cast<std::int64_t>(done), out + done, n, what);
  }
}

//------------------------------------------------------------------------------
void File::Read(std::int64_t offset, void* buffer, std::size_t bytes, const std::string& what) const
{
  this->CheckRange(offset, bytes, what);
  this->ReadSpan(offset, static_cast<char*>(buffer), bytes, what);
}

//------------------------------------------------------------------------------
int File::ReadThreads(int processes)
{
  const int cores = static_cast<int>(std::min(std::thread::hardware_concurrency(), 4u));
  return std::max(1, cores / std::max(1, processes));
}

//------------------------------------------------------------------------------
void File::ReadInParallel(std::int64_t offset, void* buffer, std::size_t bytes,
  const std::string& what, int threads) const
{
  this->CheckRange(offset, bytes, what);
  auto* out = static_cast<char*>(buffer);
  const std::size_t slices =
    std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), bytes / SliceBytes);
  if (slices < 2)
  {
    this->ReadFresh(offset, out, bytes, what);
    return;
  }
  // Slice boundaries on 4 KiB of the buffer, so no page is shared by two threads.
  auto boundary = [&](std::size_t i) -> std::size_t
  {
    if (i == slices)
    {
      return bytes;
    }
    const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(out);
    const std::uintptr_t at = (base + bytes / slices * i) & ~std::uintptr_t(4095);
    return static_cast<std::size_t>(std::max(at, base) - base);
  };
  std::mutex lock;
  std::string error;
  auto readSlice = [&](std::size_t i)
  {
    const std::size_t begin = boundary(i), end = boundary(i + 1);
    try
    {
      this->ReadFresh(offset + static_cast<std::int64_t>(begin), out + begin, end - begin, what);
    }
    catch (const std::exception& e)
    {
      std::lock_guard<std::mutex> guard(lock);
      if (error.empty())
      {
        error = e.what();
      }
    }
  };
  std::vector<std::thread> workers;
  std::size_t next = 1; // slice 0 is this thread's
  for (; next < slices; ++next)
  {
    try
    {
      workers.emplace_back(readSlice, next);
    }
    catch (const std::system_error&) // no thread: this one reads the rest
    {
      break;
    }
  }
  readSlice(0);
  for (std::size_t i = next; i < slices; ++i)
  {
    readSlice(i);
  }
  for (std::thread& thread : workers)
  {
    thread.join();
  }
  if (!error.empty())
  {
    throw vtkJZSnapshotHDF5::Error(error);
  }
}

//------------------------------------------------------------------------------
bool File::SameFileAs(int descriptor) const
{
  struct stat info;
  return descriptor >= 0 && ::fstat(descriptor, &info) == 0 && this->Is(info);
}

//------------------------------------------------------------------------------
bool File::SameFileAs(const std::string& name) const
{
  struct stat info;
  return ::stat(name.c_str(), &info) == 0 && this->Is(info);
}

//------------------------------------------------------------------------------
bool File::Is(const struct stat& info) const
{
  return static_cast<std::uint64_t>(info.st_dev) == this->Device &&
    static_cast<std::uint64_t>(info.st_ino) == this->Inode;
}

//------------------------------------------------------------------------------
void PopulatePages(void* memory, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  const std::uintptr_t page = 4096;
  const auto begin = reinterpret_cast<std::uintptr_t>(memory);
  const std::uintptr_t first = begin & ~(page - 1);
  if (bytes > 0)
  {
    madvise(reinterpret_cast<void*>(first), begin + bytes - first, MADV_POPULATE_WRITE);
  }
#else
  (void)memory;
  (void)bytes;
#endif
}

//------------------------------------------------------------------------------
bool Readable(const std::string& name)
{
  struct stat info;
  return ::stat(name.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
    ::access(name.c_str(), R_OK) == 0;
}

//------------------------------------------------------------------------------
void SwapBytes(void* data, std::size_t count, int size)
{
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < count; ++i, p += size)
  {
    std::reverse(p, p + size);
  }
}

//------------------------------------------------------------------------------
bool HostIsBigEndian()
{
  const std::uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 0;
}
}
