// The machine's physical memory: what budgets and the memory rule
// (memoryError in jz/Validate.h) measure against.
#pragma once

#include <cstddef>

namespace jz
{
// Bytes of physical memory, or 0 when the system does not say.
std::size_t physicalMemoryBytes();
} // namespace jz
