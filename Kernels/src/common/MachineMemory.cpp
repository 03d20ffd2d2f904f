#include "jz/MachineMemory.h"

#include <unistd.h>

namespace jz
{
std::size_t physicalMemoryBytes()
{
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return std::size_t(pages) * std::size_t(pageSize);
}
} // namespace jz
