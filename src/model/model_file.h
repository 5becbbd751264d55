// The compiled-model file format (.tsl).
//
//   offset  size  field
//   0       8     magic "TESSELCM"
//   8       4     format version (kModelFormatVersion), little-endian
//   12      8     payload size in bytes
//   20      8     FNV-1a 64 checksum of the payload
//   28      ...   payload: the target (name, then option key/value pairs),
//                 the graph (values with their layout, storage scope and
//                 constants; nodes with their kernel (family, implementation,
//                 variant, library detail, slow flag), attributes
//                 and, for Subgraph nodes, their body graph in the same
//                 encoding, inputs, outputs) in node (= schedule) order,
//                 then the memory layout (a flag; pools; a placement per
//                 value; per node, the in-place input and scratch placements;
//                 texture pools (name, width, height, read-only) and a
//                 texture placement (pool, x, y) per value, or none when no
//                 value is a texture)
//
// A file of another version, a wrong checksum or a truncated payload is
// rejected with a message saying which; nothing is half-loaded.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include "core/status.h"
#include "model/compiled_model.h"

namespace tessel {

inline constexpr uint32_t kModelFormatVersion = 7;

// Writes atomically (temporary file, then rename).
Status WriteCompiledModel(const CompiledModel& model, const std::filesystem::path& path);
StatusOr<CompiledModel> ReadCompiledModel(const std::filesystem::path& path);

// Serialization to and from bytes (the file minus nothing: same layout).
std::string SerializeCompiledModel(const CompiledModel& model);
// `done`, when given, is told each range of `bytes` the parser has copied
// out and will not read again (a mapped file's pages to release).
StatusOr<CompiledModel> DeserializeCompiledModel(
    std::string_view bytes, const std::string& source,
    const std::function<void(const char*, size_t)>& done = nullptr);
// The payload alone (what follows the header, its checksum already
// checked): for the fuzzer, which reaches the parser without having to
// forge checksums.
StatusOr<CompiledModel> DeserializeCompiledModelPayload(
    std::string_view payload, const std::string& source,
    const std::function<void(const char*, size_t)>& done = nullptr);

// True if the file starts with the magic bytes; NotFound if it does not exist.
StatusOr<bool> IsCompiledModelFile(const std::filesystem::path& path);

}  // namespace tessel
