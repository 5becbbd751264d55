#include "targets/opencl/storage_calibration.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "core/file_io.h"
#include "ir/attribute.h"
#include "model/plan_memory.h"
#include "targets/opencl/executor.h"
#include "tuning/cache.h"

namespace tessel::opencl {

namespace {

using json = nlohmann::json;

// 2: measured on planned memory (1: every value in a buffer of its own,
// which made buffers look slower than they run).
constexpr int kFormat = 2;
// Runs of each storage: alternating, to warm up until both have run a few
// times and for a while (a GPU raises its clocks over tens of
// milliseconds of work, and the storages would otherwise be timed at
// different clocks), then rounds of a few each, the first of each round
// untimed (the other storage's run has just evicted this one's data from
// the caches, which a model run back to back does not see); a storage's
// time is the median of its timed runs (what `tessel bench` reports),
// which one slow or lucky run does not move.
constexpr int kWarmupRuns = 3;
constexpr double kWarmupMs = 250;
constexpr int kRounds = 8;
constexpr int kRunsPerRound = 4;

// The graph's ops, attributes and value types, nested bodies included; not
// the weights, names or any decision taken on it, so that a graph hashes
// alike before select-kernels and after.
void Describe(const ir::Graph& graph, std::ostringstream& os) {
  const auto type = [&os](const ir::Value* v) {
    if (!v) {
      os << "_ ";
      return;
    }
    os << DTypeName(v->dtype) << ShapeToString(v->shape) << (v->is_constant() ? "c " : " ");
  };
  for (const auto& n : graph.nodes()) {
    os << n->domain << "." << n->op_type << "(";
    for (const ir::Value* v : n->inputs) type(v);
    os << ")->";
    for (const ir::Value* v : n->outputs) type(v);
    for (const auto& [name, value] : n->attrs.all()) {
      os << name << "=" << AttrValueToString(value) << " ";
    }
    if (n->body) {
      os << "{";
      Describe(*n->body, os);
      os << "}";
    }
    os << "\n";
  }
}

}  // namespace

std::string StorageGraphHash(const ir::Graph& graph) {
  std::ostringstream os;
  Describe(graph, os);
  return tuning::HashHex(os.str());
}

namespace {

// The cache's entries; empty (with a note) when the file is unreadable.
json ReadCache(const std::filesystem::path& file,
               const std::function<void(const std::string&)>& note) {
  if (file.empty() || !std::filesystem::exists(file)) return json::array();
  StatusOr<std::string> text = ReadFileBytes(file);
  if (text.ok()) {
    json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.value("format", 0) == kFormat && doc.contains("entries") &&
        doc["entries"].is_array()) {
      return doc["entries"];
    }
    if (doc.is_object() && doc.contains("format") && doc["format"].is_number_integer()) {
      if (note) {
        note("storage calibration cache '" + file.string() +
             "' was measured by another version of tessel: measured again");
      }
      return json::array();
    }
  }
  if (note) note("storage calibration cache '" + file.string() + "' is unreadable: measured again");
  return json::array();
}

bool Matches(const json& e, const DeviceInfo& dev, const std::string& graph) {
  return e.is_object() && e.value("platform", "") == dev.platform_name &&
         e.value("device", "") == dev.name && e.value("driver", "") == dev.driver_version &&
         e.value("graph", "") == graph;
}

// An executor of `graph` with `storage`, on memory planned as compiling
// plans it: where each value lives decided as select-kernels decides it
// (CollectStorageInfo), then the default planners. Planned, because a plan
// packs buffers and images tighter than one allocation each, and the two
// storages gain differently from it (buffers 10-25% on MobileNets on an
// H200, images about nothing).
struct PlannedRun {
  std::unique_ptr<ir::Graph> graph;  // the executor's, with the decision recorded
  std::unique_ptr<OpenClExecutor> exec;
};
StatusOr<PlannedRun> MakePlannedRun(const ir::Graph& graph, Storage storage, Runtime& runtime) {
  PlannedRun run{.graph = graph.Clone()};
  const StorageDecisions decided = CollectStorageInfo(*run.graph, storage);
  for (const auto& v : run.graph->values()) {
    v->layout = decided.values[static_cast<size_t>(v->id)].layout;
    v->scope = decided.values[static_cast<size_t>(v->id)].scope;
  }
  // OpenCL kernels need no scratch.
  const std::vector<targets::NodeKernel> kernels(run.graph->nodes().size());
  TESSEL_ASSIGN_OR_RETURN(const ir::MemoryLayout layout,
                          PlanMemory(*run.graph, kernels, MemoryOptions{}));
  TESSEL_ASSIGN_OR_RETURN(
      run.exec, OpenClExecutor::Create(*run.graph, layout, runtime, {.storage = storage}));
  return run;
}

// Runs `exec` on `inputs` `runs` times, adding each time (ms) to `times`.
Status TimeRuns(OpenClExecutor& exec, const std::vector<Tensor>& inputs, int runs,
                std::vector<double>* times) {
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    TESSEL_RETURN_IF_ERROR(exec.Run(inputs).status());
    times->push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return Status::Ok();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

StatusOr<StorageCalibration> CalibrateStorage(const ir::Graph& graph, Runtime& runtime,
                                              const std::filesystem::path& cache_file,
                                              const std::function<void(const std::string&)>& note) {
  const DeviceInfo& dev = runtime.device();
  const std::string hash = StorageGraphHash(graph);
  json entries = ReadCache(cache_file, note);
  for (const json& e : entries) {
    if (!Matches(e, dev, hash)) continue;
    StatusOr<Storage> s = ParseStorage(e.value("storage", ""));
    if (!s.ok()) break;
    return StorageCalibration{.storage = *s,
                              .buffer_ms = e.value("buffer_ms", 0.0),
                              .texture_ms = e.value("texture_ms", 0.0),
                              .cached = true};
  }

  StorageCalibration c;
  if (!dev.image_support) {
    c.storage = Storage::kBuffer;
  } else {
    std::vector<Tensor> inputs;
    for (const ir::Value* v : graph.inputs()) inputs.emplace_back(v->dtype, v->shape);
    TESSEL_ASSIGN_OR_RETURN(PlannedRun buffer_run,
                            MakePlannedRun(graph, Storage::kBuffer, runtime));
    StatusOr<PlannedRun> made = MakePlannedRun(graph, Storage::kTexture, runtime);
    // Textures this device cannot hold (or run) leave buffers, said once.
    std::vector<double> buffer_times, texture_times;
    Status texture_ok = made.status();
    if (texture_ok.ok()) texture_ok = TimeRuns(*made->exec, inputs, kWarmupRuns, &texture_times);
    if (!texture_ok.ok()) {
      if (note) note("--storage auto: textures do not run here (" + texture_ok.message() + ")");
      return StorageCalibration{.storage = Storage::kBuffer};
    }
    OpenClExecutor* buffer = buffer_run.exec.get();
    OpenClExecutor* texture = made->exec.get();
    buffer->set_record_timings(false);
    texture->set_record_timings(false);
    TESSEL_RETURN_IF_ERROR(TimeRuns(*buffer, inputs, kWarmupRuns, &buffer_times));
    for (double warm = 0; warm < kWarmupMs;) {
      TESSEL_RETURN_IF_ERROR(TimeRuns(*buffer, inputs, 1, &buffer_times));
      TESSEL_RETURN_IF_ERROR(TimeRuns(*texture, inputs, 1, &texture_times));
      warm = std::accumulate(buffer_times.begin(), buffer_times.end(), 0.0) +
             std::accumulate(texture_times.begin(), texture_times.end(), 0.0);
    }
    buffer_times.clear();
    texture_times.clear();
    std::vector<double> untimed;
    for (int round = 0; round < kRounds; ++round) {
      TESSEL_RETURN_IF_ERROR(TimeRuns(*buffer, inputs, 1, &untimed));
      TESSEL_RETURN_IF_ERROR(TimeRuns(*buffer, inputs, kRunsPerRound, &buffer_times));
      TESSEL_RETURN_IF_ERROR(TimeRuns(*texture, inputs, 1, &untimed));
      TESSEL_RETURN_IF_ERROR(TimeRuns(*texture, inputs, kRunsPerRound, &texture_times));
    }
    c.buffer_ms = Median(buffer_times);
    c.texture_ms = Median(texture_times);
    c.storage = c.texture_ms < c.buffer_ms ? Storage::kTexture : Storage::kBuffer;
  }
  if (!cache_file.empty()) {
    json kept = json::array();
    for (const json& e : entries) {
      if (!Matches(e, dev, hash)) kept.push_back(e);
    }
    kept.push_back({{"platform", dev.platform_name},
                    {"device", dev.name},
                    {"driver", dev.driver_version},
                    {"graph", hash},
                    {"storage", StorageName(c.storage)},
                    {"buffer_ms", c.buffer_ms},
                    {"texture_ms", c.texture_ms}});
    const json doc = {{"format", kFormat}, {"entries", kept}};
    std::error_code ec;
    std::filesystem::create_directories(cache_file.parent_path(), ec);
    const Status saved = WriteFileAtomically(cache_file, doc.dump(1) + "\n");
    if (!saved.ok() && note) note("storage calibration not cached: " + saved.message());
  }
  return c;
}

std::vector<StorageRecord> RecordedStorage(const ir::Graph& graph,
                                           const std::filesystem::path& cache_file,
                                           const std::string& device,
                                           const std::function<void(const std::string&)>& note) {
  const std::string hash = StorageGraphHash(graph);
  const bool any_device = device.empty() || device.rfind("opencl:", 0) == 0;
  std::vector<StorageRecord> records;
  for (const json& e : ReadCache(cache_file, note)) {
    if (!e.is_object() || e.value("graph", "") != hash) continue;
    const std::string name = e.value("device", "");
    StatusOr<Storage> s = ParseStorage(e.value("storage", ""));
    if (!s.ok() || *s == Storage::kAuto) continue;
    if (any_device || name.find(device) != std::string::npos) {
      records.push_back({.device = name, .storage = *s});
    }
  }
  return records;
}

}  // namespace tessel::opencl
