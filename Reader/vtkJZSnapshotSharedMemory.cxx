// VTK-HeaderTest-Exclude: vtkJZSnapshotSharedMemory.h
#include "vtkJZSnapshotSharedMemory.h"

#include "vtkAbstractArray.h"
#include "vtkDataArray.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace vtkJZSnapshotSharedMemory
{
namespace
{
// Memory held by several arrays (or mapped): released with the last.
struct Holding
{
  long Holders = 0;
  std::size_t MappedBytes = 0; // 0: from malloc
};

// Never destroyed: arrays may outlive static destruction at exit.
std::mutex& HoldingsLock()
{
  static auto* lock = new std::mutex;
  return *lock;
}

std::map<void*, Holding>& Holdings()
{
  static auto* holdings = new std::map<void*, Holding>;
  return *holdings;
}

// The free function of every array given memory here (VTK calls it when
// the array is destroyed or its memory replaced).
void Release(void* memory)
{
  if (!memory)
  {
    return;
  }
  std::size_t mapped = 0;
  {
    std::lock_guard<std::mutex> guard(HoldingsLock());
    auto it = Holdings().find(memory);
    if (it == Holdings().end() || --it->second.Holders > 0)
    {
      return;
    }
    mapped = it->second.MappedBytes;
    Holdings().erase(it);
  }
#if defined(__linux__)
  if (mapped)
  {
    munmap(memory, mapped);
    return;
  }
#endif
  std::free(memory);
}

// Gives `array` `values` values at `memory`, released through Release.
void Hand(vtkDataArray* array, void* memory, vtkIdType values)
{
  array->SetVoidArray(memory, values, 0, vtkAbstractArray::VTK_DATA_ARRAY_USER_DEFINED);
  array->SetArrayFreeFunction(Release);
}
}

//------------------------------------------------------------------------------
bool ShareMemory(vtkDataArray* owner, vtkDataArray* alias, vtkIdType values)
{
  if (!owner || !alias || values <= 0 || values > owner->GetNumberOfValues() ||
    owner->GetDataTypeSize() != alias->GetDataTypeSize() || !owner->HasStandardMemoryLayout() ||
    !alias->HasStandardMemoryLayout())
  {
    return false;
  }
  void* memory = owner->GetVoidPointer(0);
  if (!memory)
  {
    return false;
  }
  bool first = false;
  {
    std::lock_guard<std::mutex> guard(HoldingsLock());
    Holding& holding = Holdings()[memory];
    first = holding.Holders == 0; // the owner's own memory until now
    holding.Holders += first ? 2 : 1;
  }
  if (first)
  {
    Hand(owner, memory, owner->GetNumberOfValues());
  }
  Hand(alias, memory, values); // outside the lock: its old memory may be released
  return true;
}

//------------------------------------------------------------------------------
bool MapConstant(vtkDataArray* array, vtkIdType values, const void* value)
{
#if defined(__linux__) && defined(MFD_CLOEXEC)
  const std::size_t size = static_cast<std::size_t>(array->GetDataTypeSize());
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (values <= 0 || size == 0 || page % size != 0 || !array->HasStandardMemoryLayout())
  {
    return false;
  }
  const std::size_t total = (static_cast<std::size_t>(values) * size + page - 1) / page * page;
  // One file of `chunk` bytes, mapped over and over (at most 256 mappings).
  const std::size_t least = std::size_t(1) << 20;
  const std::size_t chunk =
    std::min(total, (std::max(least, total / 256) + page - 1) / page * page);
  const int file = memfd_create("jz-constant-array", MFD_CLOEXEC);
  if (file < 0)
  {
    return false;
  }
  char* base = nullptr;
  void* fill = ftruncate(file, static_cast<off_t>(chunk)) == 0
    ? mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0)
    : MAP_FAILED;
  if (fill != MAP_FAILED)
  {
    char* bytes = static_cast<char*>(fill);
    std::memcpy(bytes, value, size);
    for (std::size_t done = size; done < chunk; done *= 2)
    {
      std::memcpy(bytes + done, bytes, std::min(done, chunk - done));
    }
    munmap(fill, chunk);
    void* reserved =
      mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base = reserved == MAP_FAILED ? nullptr : static_cast<char*>(reserved);
  }
  for (std::size_t offset = 0; base && offset < total; offset += chunk)
  {
    if (mmap(base + offset, std::min(chunk, total - offset), PROT_READ | PROT_WRITE,
          MAP_PRIVATE | MAP_FIXED, file, 0) == MAP_FAILED)
    {
      munmap(base, total);
      base = nullptr;
    }
  }
  close(file); // the mappings keep it
  if (!base)
  {
    return false;
  }
  {
    std::lock_guard<std::mutex> guard(HoldingsLock());
    Holdings()[base] = Holding{ 1, total };
  }
  Hand(array, base, values);
  return true;
#else
  (void)array;
  (void)values;
  (void)value;
  return false;
#endif
}
}
