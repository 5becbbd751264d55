// The tuning cache: the best local size found for a launch, per device and
// driver, kept in a JSON file so that no launch is tuned twice.
//
//   std::vector<std::string> notes;
//   TuningCache cache = TuningCache::LoadOrEmpty("tune.json", &notes);   // never fails
//   cache.Invalidate(platform, device, driver, &notes);   // a new driver: re-tune
//   if (const TuneEntry* e = cache.Find(key)) local = e->local;
//   cache.Put(entry);
//   TESSEL_RETURN_IF_ERROR(cache.Save("tune.json"));       // temporary file, then rename
//
// The file (format "tessel-tuning-cache", version 1):
//   {"format": "tessel-tuning-cache", "version": 1,
//    "entries": [{"platform": "NVIDIA CUDA", "device": "NVIDIA H100 80GB HBM3",
//                 "driver": "560.35.03", "kernel": "f32_conv2d_direct",
//                 "source_hash": "9f3c...", "storage": "buffer", "args_hash": "51aa...",
//                 "global": [56, 56, 64], "local": [8, 8, 4], "ms": 0.0123,
//                 "default_ms": 0.0150, "strategy": "race", "launches": 41}, ...]}
// `global` and `local` list one number per dimension of the launch (1 to 3).
// A local size may exceed the global extent: the launch rounds it up.
// The key is everything before "local"; two entries never share one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessel::tuning {

// What identifies a launch for tuning: the device it runs on, the kernel's
// code, and everything of the launch that its best local size depends on.
struct TuneKey {
  std::string platform;     // CL_PLATFORM_NAME
  std::string device;       // CL_DEVICE_NAME
  std::string driver;       // CL_DRIVER_VERSION: a new driver invalidates
  std::string kernel;       // "f32_conv2d_direct"; every snippet is "f32_snippet"
  std::string source_hash;  // HashHex of the kernel's program source and build options
  std::string storage;      // how tensors are held: "buffer" (or "image2d")
  std::string args_hash;    // HashHex of the launch's scalar arguments (shapes, strides)
  int dims = 1;             // 1 to 3
  std::array<size_t, 3> global{1, 1, 1};  // the real extent, unrounded (1 past dims)

  bool operator==(const TuneKey&) const = default;
};

struct TuneEntry {
  TuneKey key;
  std::array<size_t, 3> local{1, 1, 1};  // 1 past dims
  double ms = 0;                         // measured time of one launch with `local`
  double default_ms = 0;                 // with the untuned default local size (0: not measured)
  std::string strategy;                  // which search found it
  int64_t launches = 0;                  // kernel launches the search used
};

// 16 lowercase hex digits of FNV-1a 64 of `bytes`.
std::string HashHex(std::string_view bytes);

class TuningCache {
 public:
  // Reads a cache file. NotFound when `path` does not exist; DataLoss naming
  // the file and what is wrong (not JSON, another format or version, an entry
  // missing a field or of the wrong type, dims outside 1..3, a zero size, two
  // entries with one key) for
  // anything else. Larger than 256 MiB: DataLoss without reading it.
  static StatusOr<TuningCache> Read(const std::filesystem::path& path);

  // Read, for a run: a missing file is an empty cache; a corrupt one is an
  // empty cache and one line in `notes` ("tuning cache FILE ignored: ...").
  // Never fails.
  static TuningCache LoadOrEmpty(const std::filesystem::path& path,
                                 std::vector<std::string>* notes);

  // Drops the entries of this platform and device that were tuned under
  // another driver, adding one line to `notes` that says how many and both
  // driver strings. Returns how many were dropped.
  int Invalidate(const std::string& platform, const std::string& device, const std::string& driver,
                 std::vector<std::string>* notes);

  // The entry of `key`, or null.
  const TuneEntry* Find(const TuneKey& key) const;
  // Adds `entry`, replacing the one of the same key.
  void Put(TuneEntry entry);
  // Adds every entry of `other`; where both have a key, keeps the faster
  // (smaller ms). Returns how many entries were added or replaced.
  int Merge(const TuningCache& other);

  // Writes the cache through a temporary file in the same folder, renamed
  // over `path` (creating the folder): readers never see half a file.
  // Entries are written in a stable order (sorted by key).
  Status Save(const std::filesystem::path& path) const;

  const std::vector<TuneEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<TuneEntry> entries_;
};

}  // namespace tessel::tuning
