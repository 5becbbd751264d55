#include "targets/opencl/storage_calibration.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/file_io.h"
#include "ir/attribute.h"
#include "targets/opencl/executor.h"
#include "tuning/cache.h"

namespace tessel::opencl {

namespace {

using json = nlohmann::json;

constexpr int kFormat = 1;
constexpr int kRounds = 5;
constexpr int kRunsPerRound = 3;

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
  }
  if (note) note("storage calibration cache '" + file.string() + "' is unreadable: measured again");
  return json::array();
}

bool Matches(const json& e, const DeviceInfo& dev, const std::string& graph) {
  return e.is_object() && e.value("platform", "") == dev.platform_name &&
         e.value("device", "") == dev.name && e.value("driver", "") == dev.driver_version &&
         e.value("graph", "") == graph;
}

// The best of `runs` runs of `exec` on `inputs`, in ms.
StatusOr<double> BestMs(OpenClExecutor& exec, const std::vector<Tensor>& inputs, int runs) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    TESSEL_RETURN_IF_ERROR(exec.Run(inputs).status());
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
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
    TESSEL_ASSIGN_OR_RETURN(
        std::unique_ptr<OpenClExecutor> buffer,
        OpenClExecutor::Create(graph, ir::MemoryLayout{}, runtime, {.storage = Storage::kBuffer}));
    StatusOr<std::unique_ptr<OpenClExecutor>> made =
        OpenClExecutor::Create(graph, ir::MemoryLayout{}, runtime, {.storage = Storage::kTexture});
    // Textures this device cannot hold (or run) leave buffers, said once.
    Status texture_ok = made.status();
    if (texture_ok.ok()) texture_ok = BestMs(**made, inputs, 1).status();  // warm up
    if (!texture_ok.ok()) {
      if (note) note("--storage auto: textures do not run here (" + texture_ok.message() + ")");
      return StorageCalibration{.storage = Storage::kBuffer};
    }
    std::unique_ptr<OpenClExecutor> texture = std::move(*made);
    buffer->set_record_timings(false);
    texture->set_record_timings(false);
    TESSEL_RETURN_IF_ERROR(BestMs(*buffer, inputs, 1).status());  // warm up
    c.buffer_ms = c.texture_ms = 1e300;
    for (int round = 0; round < kRounds; ++round) {
      TESSEL_ASSIGN_OR_RETURN(const double b, BestMs(*buffer, inputs, kRunsPerRound));
      TESSEL_ASSIGN_OR_RETURN(const double t, BestMs(*texture, inputs, kRunsPerRound));
      c.buffer_ms = std::min(c.buffer_ms, b);
      c.texture_ms = std::min(c.texture_ms, t);
    }
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

}  // namespace tessel::opencl
