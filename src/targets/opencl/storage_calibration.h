// storage=auto: the storage (storage.h) that runs a graph faster on this
// device, measured rather than guessed from a vendor list, once per graph,
// device and driver, and cached. Textures that cannot be made or run on the
// device resolve to buffers, with a note.
//
//   TESSEL_ASSIGN_OR_RETURN(StorageCalibration c,
//                           CalibrateStorage(graph, runtime, cache_dir / "storage.json"));
//
// Both storages are prepared on memory planned as compiling plans it (a
// plan packs values tighter than a buffer or image each, and buffers gain
// more from that) and timed on zero inputs, interleaved over rounds, each
// storage's median run kept; texture wins only when it is faster. The cache is
// JSON, one entry per (platform, device, driver, graph), the graph known by
// a hash of its printed form (ops, shapes, attributes; not the weights,
// which do not change the time). A cache that cannot be read is rebuilt,
// with a note; it is written atomically.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "core/status.h"
#include "ir/graph.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/storage.h"

namespace tessel::opencl {

struct StorageCalibration {
  Storage storage = Storage::kBuffer;
  double buffer_ms = 0, texture_ms = 0;  // median run of each
  bool cached = false;                   // taken from the cache file
};

// The key a graph's calibration is cached under: a hash of its ops,
// attributes and value types (not its weights, names or decisions).
std::string StorageGraphHash(const ir::Graph& graph);

// `note`: where one-line notes go (a cache ignored); may be null.
StatusOr<StorageCalibration> CalibrateStorage(const ir::Graph& graph, Runtime& runtime,
                                              const std::filesystem::path& cache_file,
                                              const std::function<void(const std::string&)>& note);

// For compiling with no device at hand: what the cache recorded for
// `graph`, on each device whose name contains `device` (every device when
// it is empty or an index, "opencl:N"). An unreadable cache records
// nothing (with a note).
struct StorageRecord {
  std::string device;  // the device's name, as `tessel info` shows it
  Storage storage = Storage::kBuffer;
};
std::vector<StorageRecord> RecordedStorage(const ir::Graph& graph,
                                           const std::filesystem::path& cache_file,
                                           const std::string& device,
                                           const std::function<void(const std::string&)>& note);

}  // namespace tessel::opencl
