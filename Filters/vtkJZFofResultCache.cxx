#include "vtkJZFofResultCache.h"

#include "vtkJZParticleInput.h"

#include "jz/ContentHash.h"
#include "jz/MachineMemory.h"

#include <cstdlib>

bool vtkJZFofResultCache::Key::operator==(const Key& o) const
{
  // Times compare bitwise-equal: a step's time is the same double each time.
  return Time == o.Time && NumPoints == o.NumPoints && Content == o.Content &&
    Settings == o.Settings;
}

std::uint64_t vtkJZFofResultCache::Hash(const vtkJZKernelAdapter::ParticleInput& in)
{
  std::uint64_t h = in.useFloat
    ? jz::contentHash(in.coordsF.data, in.coordsF.size * 3 * sizeof(float), 1)
    : jz::contentHash(in.coordsD.data, in.coordsD.size * 3 * sizeof(double), 2);
  // A missing array hashes as an empty one with its own seed.
  h = jz::contentHash(in.ids.data, in.ids.data ? in.ids.size * sizeof(jz::GlobalId) : 0, h + 3);
  h = jz::contentHash(in.masses.data, in.masses.data ? in.masses.size * sizeof(double) : 0, h + 5);
  return jz::contentHash(
    in.velocities.data, in.velocities.data ? in.velocities.size * 3 * sizeof(double) : 0, h + 7);
}

void vtkJZFofResultCache::Validate(vtkMTimeType pipelineMTime)
{
  if (pipelineMTime != this->PipelineMTime)
  {
    this->Clear();
    this->PipelineMTime = pipelineMTime;
  }
}

const vtkJZFofResultCache::Result* vtkJZFofResultCache::Find(const Key& key)
{
  for (auto it = this->Entries.begin(); it != this->Entries.end(); ++it)
  {
    if (it->K == key)
    {
      this->Entries.splice(this->Entries.begin(), this->Entries, it);
      return &this->Entries.front().R;
    }
  }
  return nullptr;
}

void vtkJZFofResultCache::Store(const Key& key, const Result& result)
{
  // GetActualMemorySize is in KiB.
  std::size_t bytes =
    result.Catalogue ? static_cast<std::size_t>(result.Catalogue->GetActualMemorySize()) * 1024 : 0;
  for (vtkDataArray* a : { result.GroupId.Get(), result.GroupSize.Get() })
  {
    bytes += a ? static_cast<std::size_t>(a->GetActualMemorySize()) * 1024 : 0;
  }
  for (auto it = this->Entries.begin(); it != this->Entries.end(); ++it)
  {
    if (it->K == key)
    {
      this->Bytes -= it->Bytes;
      this->Entries.erase(it);
      break;
    }
  }
  // The budget may have shrunk: the entries alone must fit too.
  const std::size_t budget = BudgetBytes();
  const std::size_t added = bytes <= budget ? bytes : 0;
  while (!this->Entries.empty() && this->Bytes + added > budget)
  {
    this->Bytes -= this->Entries.back().Bytes;
    this->Entries.pop_back();
  }
  if (bytes <= budget)
  {
    this->Entries.push_front(Entry{ key, result, bytes });
    this->Bytes += bytes;
  }
}

void vtkJZFofResultCache::Clear()
{
  this->Entries.clear();
  this->Bytes = 0;
}

std::size_t vtkJZFofResultCache::BudgetBytes()
{
  if (const char* env = std::getenv("JZ_FOF_RESULT_CACHE_BYTES"))
  {
    return static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
  }
  const std::size_t physical = jz::physicalMemoryBytes();
  return physical > 0 ? physical / 8 : std::size_t(1) << 30;
}
