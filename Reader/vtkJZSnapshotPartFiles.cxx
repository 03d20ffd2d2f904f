// VTK-HeaderTest-Exclude: vtkJZSnapshotPartFiles.h
#include "vtkJZSnapshotPartFiles.h"

#include "vtkJZSnapshotHDF5.h" // Error

#include <algorithm>
#include <cctype>
#include <sstream>

namespace vtkJZSnapshotPartFiles
{
namespace
{
// Whether [begin, end) of `name` is a non-empty run of digits.
bool Digits(const std::string& name, std::size_t begin, std::size_t end)
{
  return end > begin && std::all_of(name.begin() + begin, name.begin() + end,
                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}
}

std::vector<std::string> Names(
  const std::string& fileName, std::int64_t numFiles, const std::string& countSource)
{
  if (numFiles <= 1)
  {
    return { fileName };
  }
  if (numFiles > MaximumParts) // a damaged header: no list of a billion names
  {
    std::ostringstream msg;
    msg << "'" << fileName << "' is damaged: " << countSource << " says the snapshot has "
        << numFiles << " files (at most " << MaximumParts << " are accepted).";
    throw vtkJZSnapshotHDF5::Error(msg.str());
  }
  const std::size_t base = fileName.find_last_of('/') + 1; // 0 when no directory
  const std::size_t last = fileName.find_last_of('.');
  std::size_t dot = std::string::npos, end = fileName.size();
  if (last != std::string::npos && last >= base && Digits(fileName, last + 1, fileName.size()))
  {
    dot = last; // name.<part>
  }
  else if (last != std::string::npos && last > base)
  {
    const std::size_t previous = fileName.find_last_of('.', last - 1);
    if (previous != std::string::npos && previous >= base && Digits(fileName, previous + 1, last))
    {
      dot = previous; // name.<part>.<extension>
      end = last;
    }
  }
  if (dot == std::string::npos)
  {
    std::ostringstream msg;
    msg << "'" << fileName << "' says it is one of " << numFiles
        << " files of a multi-file snapshot (" << countSource
        << "), but its name does not end in '.<part>' or '.<part>.<extension>', so the other "
           "parts cannot be found.";
    throw vtkJZSnapshotHDF5::Error(msg.str());
  }
  std::vector<std::string> parts;
  for (std::int64_t i = 0; i < numFiles; ++i)
  {
    parts.push_back(fileName.substr(0, dot + 1) + std::to_string(i) + fileName.substr(end));
  }
  return parts;
}
}
