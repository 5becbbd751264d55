// FNV-1a, 64 bits: checksums of files tessel writes and keys of its caches.
// Not for anything an attacker should be unable to forge.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessel {

// FNV-1a 64 of `bytes`, continuing from `seed` (chain calls to hash several
// pieces).
inline uint64_t Fnv1a64(const void* bytes, size_t size, uint64_t seed = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace tessel
