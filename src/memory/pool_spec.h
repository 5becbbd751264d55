// Pools as users write them on the command line:
//
//   name=sram,size=256KiB             a read-write pool of at most 256 KiB
//   name=flash,size=4MiB,access=ro    a read-only pool (constants only)
//   name=dram,targets=cpu+c           unbounded, reachable from cpu and c
//
// Keys: name (required), size (bytes, with an optional B, KiB, MiB, GiB, KB,
// MB or GB suffix), access (rw, the default, or ro), targets (joined by '+').
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "memory/problem.h"

namespace tessel::memory {

// Errors quote the spec and name the key: "--pool 'name=x,size=12Q': size
// '12Q' is not a byte count (like 65536, 256KiB or 4MiB)".
StatusOr<PoolInfo> ParsePoolSpec(std::string_view spec);

// "65536", "256KiB", "4MiB", "1GB": bytes. Rejects negatives and overflow.
StatusOr<int64_t> ParseByteCount(std::string_view text);

}  // namespace tessel::memory
