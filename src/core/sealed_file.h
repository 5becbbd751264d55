// A file that holds one blob under a key: what tessel's on-disk caches are
// made of (the OpenCL program cache). Written atomically; read back only
// when it is whole, of this format, for this key and with a matching
// checksum, so a truncated, foreign, renamed or damaged file is a cache miss,
// never a crash or a wrong program.
//
//   const std::string bytes = SealBlob(key, binary);           // the file
//   StatusOr<std::string> back = UnsealBlob(bytes, key);       // == binary
//   if (!WriteSealedFile(path, key, binary)) { /* not cached; go on */ }
//   StatusOr<std::string> cached = ReadSealedFile(path, key, 1 << 30);
//
// Layout: "TSLBLOB1", then three little-endian u64 (FNV-1a of the key,
// payload size, FNV-1a of the payload), then the payload.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tessel {

std::string SealBlob(std::string_view key, std::string_view payload);

// The payload of `bytes`, or an error saying what is wrong with them.
StatusOr<std::string> UnsealBlob(std::string_view bytes, std::string_view key);

// Writes through a file unique to this process, then renames it over `path`:
// readers see the old file or the new one, never half of one. Best effort;
// false when it could not be written (creates the folder).
bool WriteSealedFile(const std::filesystem::path& path, std::string_view key,
                     std::string_view payload);

// The payload of the file at `path`. NotFound when there is none; an error
// without reading it when it is larger than `max_payload_bytes` allows.
StatusOr<std::string> ReadSealedFile(const std::filesystem::path& path, std::string_view key,
                                     int64_t max_payload_bytes);

}  // namespace tessel
