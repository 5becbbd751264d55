// What this machine has, for the limits checked before memory is allocated
// for a model (compiler/compile.h: ResourceLimits).
#pragma once

#include <cstdint>
#include <string>

namespace tessel {

// Physical memory in bytes (sysconf), or 1 TiB when it cannot be read.
int64_t PhysicalMemoryBytes();

// "23.4 GiB", "512 B": sizes in messages.
std::string FormatByteSize(int64_t bytes);

}  // namespace tessel
