// VTK-HeaderTest-Exclude: vtkJZSnapshotRawFile.h
#include "vtkJZSnapshotRawFile.h"

#include "vtkJZSnapshotHDF5.h" // Error

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

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
}

//------------------------------------------------------------------------------
File::~File()
{
  ::close(this->Descriptor);
}

//------------------------------------------------------------------------------
void File::Read(std::int64_t offset, void* buffer, std::size_t bytes, const std::string& what) const
{
  if (offset < 0 || offset > this->Bytes ||
    static_cast<std::int64_t>(bytes) > this->Bytes - offset)
  {
    std::ostringstream msg;
    msg << "'" << this->Path << "' is truncated or damaged: " << what << " needs bytes " << offset
        << " to " << offset + static_cast<std::int64_t>(bytes) << " but the file has "
        << this->Bytes << " bytes.";
    throw vtkJZSnapshotHDF5::Error(msg.str());
  }
  auto* out = static_cast<char*>(buffer);
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
      throw vtkJZSnapshotHDF5::Error("Cannot read '" + this->Path + "' (" + what + ").");
    }
    out += got;
    offset += got;
    bytes -= static_cast<std::size_t>(got);
  }
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
