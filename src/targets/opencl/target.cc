#include "targets/opencl/target.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "model/compiled_model.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/launch_plan.h"
#include "targets/opencl/storage_calibration.h"
#include "targets/opencl/tune.h"
#include "targets/reference/planned_memory.h"
#include "tuning/tuner.h"

namespace tessel::opencl {

namespace {

class OpenClExecutable : public targets::Executable {
 public:
  OpenClExecutable(const ir::Graph& graph, std::shared_ptr<Runtime> runtime,
                   std::unique_ptr<OpenClExecutor> exec, tuning::TuningCache cache,
                   const targets::HostOptions& host, const OpenClHostOptions& opencl)
      : Executable(graph),
        graph_(graph),
        runtime_(std::move(runtime)),
        exec_(std::move(exec)),
        cache_(std::move(cache)),
        host_(host),
        opencl_(opencl),
        peak_(targets::PredictPeakActivationBytes(graph)) {}

  targets::ExecutableStats stats() const override {
    return {.peak_activation_bytes = peak_,
            .workspace_bytes = exec_->workspace_bytes(),
            .host_submit_ms = exec_->last_submit_ms(),
            .replays = exec_->replays(),
            .submission = exec_->DescribeSubmission()};
  }
  std::string Describe() const override {
    return "opencl:" + std::to_string(runtime_->device().index) + " " + runtime_->device().name;
  }
  void SetProfiling(bool on) override { exec_->set_record_timings(on); }
  std::vector<targets::ProfileRow> Profile() const override;
  std::string ProfileReport() const override;
  StatusOr<targets::TuneReport> Tune(const targets::TuneRequest& request) override;

  // --tune online: tunes (race) the launches the cache lacks, checks the
  // tuned sizes on the model, saves the cache, and says what it did.
  Status TuneOnline();

 protected:
  StatusOr<std::vector<Tensor>> RunChecked(const std::vector<Tensor>& inputs) override {
    return exec_->Run(inputs);
  }

 private:
  void Note(const std::string& line) const {
    if (host_.note) host_.note(line);
  }
  // Saves the cache where the host options say: empty, or why not.
  Status SaveCache();

  const ir::Graph& graph_;
  std::shared_ptr<Runtime> runtime_;
  std::unique_ptr<OpenClExecutor> exec_;
  tuning::TuningCache cache_;  // read when prepared; what tuning extends
  targets::HostOptions host_;
  OpenClHostOptions opencl_;
  int64_t peak_ = 0;
};

Status OpenClExecutable::SaveCache() {
  if (opencl_.tune_cache.empty()) return Status::Ok();
  return cache_.Save(opencl_.tune_cache);
}

StatusOr<targets::TuneReport> OpenClExecutable::Tune(const targets::TuneRequest& request) {
  TESSEL_ASSIGN_OR_RETURN(const tuning::Strategy strategy, tuning::ParseStrategy(request.strategy));
  exec_->set_record_timings(false);
  TESSEL_RETURN_IF_ERROR(Run(request.inputs).status());  // checks, builds, warms up
  TuneLaunchesOptions topts{
      .strategy = strategy, .budget_seconds = request.budget_seconds, .seed = request.seed};
  if (request.progress) {
    topts.progress = [&request](const TuneProgress& p) {
      request.progress(p.kernel, p.kernels, p.name, p.candidates, p.best_ms);
    };
  }
  TESSEL_ASSIGN_OR_RETURN(const TuneReport tuned, TuneLaunches(*exec_, cache_, topts));
  // The model before and after; slower tuned sizes go back to the default.
  TESSEL_ASSIGN_OR_RETURN(
      const ModelCheck check,
      CheckOnModel(*exec_, request.inputs, request.rounds, request.repeat, tuned, cache_));
  exec_->set_record_timings(host_.profile);
  if (tuned.launches > 0 || !check.kept_tuned) TESSEL_RETURN_IF_ERROR(SaveCache());

  const DeviceInfo& dev = runtime_->device();
  targets::TuneReport report{.device = dev.name,
                             .platform = dev.platform_name,
                             .driver = dev.driver_version,
                             .launches = tuned.launches,
                             .seconds = tuned.seconds,
                             .fixed = tuned.fixed,
                             .default_ms = check.default_ms,
                             .tuned_ms = check.tuned_ms,
                             .noise = check.noise,
                             .kept_tuned = check.kept_tuned,
                             .cache = opencl_.tune_cache.string(),
                             .cache_entries = cache_.size()};
  for (const KernelTuning& k : tuned.kernels) {
    report.kernels.push_back({.kernel = k.kernel,
                              .node = k.node,
                              .uses = k.uses,
                              .global = tuning::ToString(k.key.global, k.key.dims),
                              .default_local = tuning::ToString(k.default_local, k.key.dims),
                              .local = tuning::ToString(k.local, k.key.dims),
                              .default_ms = k.default_ms,
                              .ms = k.ms,
                              .launches = k.launches,
                              .cached = k.cached,
                              .skipped = k.skipped});
  }
  return report;
}

Status OpenClExecutable::TuneOnline() {
  TuneLaunchesOptions topts;
  if (host_.progress) {
    topts.progress = [this](const TuneProgress& p) {
      char line[160];
      std::snprintf(line, sizeof line, "tuning kernel %d/%d %-28.28s %3d candidates, best %.4f ms",
                    p.kernel, p.kernels, p.name.c_str(), p.candidates, p.best_ms);
      host_.progress(line);
    };
  }
  TESSEL_ASSIGN_OR_RETURN(TuneReport report, TuneLaunches(*exec_, cache_, topts));
  if (host_.progress) host_.progress("");
  // When something was tuned, a short check on the whole model (zero
  // inputs): tuned sizes that make it slower go back to the default. A
  // run that found everything in the cache launches nothing more.
  ModelCheck check;
  if (report.launches > 0) {
    exec_->set_record_timings(false);
    std::vector<Tensor> zeros;
    for (const ir::Value* v : graph_.inputs()) zeros.emplace_back(v->dtype, v->shape);
    TESSEL_ASSIGN_OR_RETURN(
        check, CheckOnModel(*exec_, zeros, /*rounds=*/3, /*repeat=*/3, report, cache_));
  }
  exec_->set_record_timings(host_.profile);
  if (!check.kept_tuned) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "tuned sizes were slower on the whole model (%.3f ms against %.3f): the "
                  "defaults are kept",
                  check.tuned_ms, check.default_ms);
    Note(line);
  }
  if (report.launches > 0 || !check.kept_tuned) {
    int tuned = 0;
    for (const KernelTuning& k : report.kernels) tuned += k.cached ? 0 : 1;
    std::string where = "; not saved (no --tune-cache)";
    if (!opencl_.tune_cache.empty()) {
      const Status saved = SaveCache();
      where = saved.ok() ? "; saved to " + opencl_.tune_cache.string()
                         : "; not saved: " + saved.message();
    }
    char line[200];
    std::snprintf(line, sizeof line, "tuned %d kernel%s in %.1f s (%lld launches)", tuned,
                  tuned == 1 ? "" : "s", report.seconds, static_cast<long long>(report.launches));
    Note(line + where);
  }
  return Status::Ok();
}

std::vector<targets::ProfileRow> OpenClExecutable::Profile() const {
  // Per (op, kernel) of the last run, slowest first.
  std::map<std::pair<std::string, std::string>, targets::ProfileRow> rows;
  std::map<std::pair<std::string, std::string>, std::set<int>> nodes;
  for (const LaunchTiming& t : exec_->last_timings()) {
    const Launch& l = *t.launch;
    const std::string& op = graph_.nodes()[static_cast<size_t>(l.node)]->op_type;
    const auto key = std::make_pair(op, l.kernel_name);
    targets::ProfileRow& r = rows[key];
    r.op_type = op;
    r.kernel = l.kernel_name;
    r.ms += t.ms;
    r.launches += 1;
    r.bytes += l.bytes;
    r.flops += l.flops;
    nodes[key].insert(l.node);
  }
  std::vector<targets::ProfileRow> out;
  for (auto& [key, r] : rows) {
    r.nodes = static_cast<int>(nodes[key].size());
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
  return out;
}

std::string OpenClExecutable::ProfileReport() const {
  const auto& timings = exec_->last_timings();
  if (timings.empty()) return "";
  // Per kernel name: total time, launches, bytes, flops.
  struct Row {
    double ms = 0;
    int launches = 0;
    int64_t bytes = 0, flops = 0;
  };
  std::map<std::string, Row> rows;
  double total = 0;
  for (const auto& t : timings) {
    Row& r = rows[t.launch->kernel_name];
    r.ms += t.ms;
    r.launches += 1;
    r.bytes += t.launch->bytes;
    r.flops += t.launch->flops;
    total += t.ms;
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "profile (OpenCL events, last run): %zu launches, %.3f ms of kernels\n",
                timings.size(), total);
  out += line;
  std::snprintf(line, sizeof line, "  %-34s %8s %6s %9s %10s %10s\n", "kernel", "ms", "share",
                "launches", "GB/s", "GFLOP/s");
  out += line;
  constexpr size_t kMaxRows = 15;
  for (size_t i = 0; i < sorted.size() && i < kMaxRows; ++i) {
    const auto& [name, r] = sorted[i];
    const double s = r.ms * 1e-3;
    std::snprintf(line, sizeof line, "  %-34s %8.3f %5.1f%% %9d %10.1f %10.1f\n", name.c_str(),
                  r.ms, total > 0 ? 100.0 * r.ms / total : 0.0, r.launches,
                  s > 0 ? static_cast<double>(r.bytes) / s * 1e-9 : 0.0,
                  s > 0 ? static_cast<double>(r.flops) / s * 1e-9 : 0.0);
    out += line;
  }
  if (sorted.size() > kMaxRows) {
    std::snprintf(line, sizeof line, "  ... %zu more kernels\n", sorted.size() - kMaxRows);
    out += line;
  }
  const OpenClExecutor::CopyTiming& copies = exec_->last_copy_timing();
  auto rate = [](int64_t bytes, double ms) {
    return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) * 1e-9 : 0.0;
  };
  std::snprintf(line, sizeof line,
                "  copies across the bus: inputs %.3f ms (%.2f MB, %.1f GB/s), outputs %.3f ms "
                "(%.2f MB, %.1f GB/s)%s\n",
                copies.input_ms, static_cast<double>(copies.input_bytes) * 1e-6,
                rate(copies.input_bytes, copies.input_ms), copies.output_ms,
                static_cast<double>(copies.output_bytes) * 1e-6,
                rate(copies.output_bytes, copies.output_ms),
                exec_->stages_copies() ? ", through pinned staging" : "");
  out += line;
  // The slowest single launches, with their nodes.
  std::vector<const LaunchTiming*> slow;
  for (const auto& t : timings) slow.push_back(&t);
  std::sort(slow.begin(), slow.end(), [](const auto* a, const auto* b) { return a->ms > b->ms; });
  out += "  slowest launches:\n";
  for (size_t i = 0; i < std::min<size_t>(slow.size(), 10); ++i) {
    const auto& l = *slow[i]->launch;
    const double s = slow[i]->ms * 1e-3;
    std::snprintf(line, sizeof line, "    %8.3f ms  %-26s %-30s %8.1f GB/s %8.1f GFLOP/s\n",
                  slow[i]->ms, l.kernel_name.c_str(),
                  graph_.nodes()[static_cast<size_t>(l.node)]->name.substr(0, 30).c_str(),
                  s > 0 ? static_cast<double>(l.bytes) / s * 1e-9 : 0.0,
                  s > 0 ? static_cast<double>(l.flops) / s * 1e-9 : 0.0);
    out += line;
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<OpenClTarget>> OpenClTarget::Create(const targets::TargetSpec& spec,
                                                             const targets::HostOptions& host,
                                                             const OpenClHostOptions& opencl) {
  for (const auto& [key, value] : spec.options) {
    if (key != "device" && key != "storage") {
      return InvalidArgument("opencl target: unknown option '" + key +
                             "' (options: device, storage)");
    }
  }
  TESSEL_ASSIGN_OR_RETURN(const Storage storage, ParseStorage(spec.Option("storage", "buffer")));
  RuntimeOptions options;
  options.profiling = host.profile || opencl.tune_online;  // tuning times launches by events
  options.cache_dir = host.cache_dir;
  targets::TargetSpec resolved{"opencl", {}};
  if (!spec.Option("device").empty()) resolved.options["device"] = spec.Option("device");
  // What the kernels decide with is what a model records; buffers, the
  // default, are not written, so that models compiled before storage
  // existed keep their spec.
  if (storage != Storage::kBuffer) resolved.options["storage"] = StorageName(storage);
  std::unique_ptr<OpenClTarget> target(
      new OpenClTarget(std::move(resolved), options, host, opencl));
  target->storage_ = storage;
  if (!host.compile_only) TESSEL_RETURN_IF_ERROR(target->runtime().status());
  return target;
}

StatusOr<std::shared_ptr<Runtime>> OpenClTarget::runtime() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!runtime_) {
    TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> opened,
                            Runtime::Create(spec_.Option("device"), options_));
    runtime_ = std::move(opened);
  }
  return runtime_;
}

StatusOr<Storage> OpenClTarget::ResolveStorage(const ir::Graph& graph) const {
  if (storage_ != Storage::kAuto) return storage_;
  // Resolved once per graph by this target: Prepare decides again on the
  // compiled graph, and must take what compiling took.
  const std::string hash = StorageGraphHash(graph);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = resolved_texture_.find(hash);
    if (it != resolved_texture_.end()) return it->second ? Storage::kTexture : Storage::kBuffer;
  }
  const std::filesystem::path cache =
      host_.cache_dir.empty() ? std::filesystem::path() : host_.cache_dir / "storage.json";
  StatusOr<std::shared_ptr<Runtime>> runtime = this->runtime();
  if (!runtime.ok()) {
    // A build machine compiling for a GPU it does not have: what that GPU
    // measured before, when the cache holds it and every record agrees.
    const std::vector<StorageRecord> records =
        RecordedStorage(graph, cache, spec_.Option("device"), host_.note);
    Storage storage = Storage::kBuffer;
    std::string why = "no calibration of this model recorded in '" + cache.string() + "'";
    if (!records.empty()) {
      const bool agree = std::all_of(records.begin(), records.end(), [&](const StorageRecord& r) {
        return r.storage == records[0].storage;
      });
      why = agree ? "as calibrated on " : "calibrations disagree (--device picks one): ";
      for (size_t i = 0; i < records.size(); ++i) {
        why += (i ? ", " : "") + records[i].device;
        if (!agree) why += std::string(" ") + StorageName(records[i].storage);
      }
      if (agree) storage = records[0].storage;
    }
    if (host_.note) {
      host_.note("--storage auto: no OpenCL device to measure on (" + runtime.status().message() +
                 "): " + StorageName(storage) + ", " + why);
    }
    std::lock_guard<std::mutex> lock(mu_);
    resolved_texture_[hash] = storage == Storage::kTexture;
    return storage;
  }
  TESSEL_ASSIGN_OR_RETURN(const StorageCalibration c,
                          CalibrateStorage(graph, **runtime, cache, host_.note));
  if (host_.note) {
    char line[200];
    std::snprintf(line, sizeof line, "--storage auto on %s: buffer %.3f ms, texture %.3f ms%s: %s",
                  (*runtime)->device().name.c_str(), c.buffer_ms, c.texture_ms,
                  c.cached ? " (cached)" : "", StorageName(c.storage));
    host_.note(line);
  }
  std::lock_guard<std::mutex> lock(mu_);
  resolved_texture_[hash] = c.storage == Storage::kTexture;
  return c.storage;
}

StatusOr<targets::KernelDecisions> OpenClTarget::SelectKernels(const ir::Graph& graph) const {
  // The decision the executor takes again at prepare time, with the plan
  // and the device, which only place tensors and size launches.
  TESSEL_ASSIGN_OR_RETURN(const Storage resolved, ResolveStorage(graph));
  const StorageDecisions storage = CollectStorageInfo(graph, resolved);
  if (host_.note && host_.verbose) {
    for (const std::string& line : storage.notes) host_.note(line);
  } else if (host_.note && !storage.notes.empty()) {
    host_.note(std::to_string(storage.notes.size()) +
               " activation(s) stay in buffers, their images too large for an OpenCL device "
               "(--verbose names them)");
  }
  TESSEL_ASSIGN_OR_RETURN(LaunchPlan plan,
                          PlanLaunches(graph, ir::MemoryLayout{}, {.storage = &storage}));
  targets::KernelDecisions decisions;
  decisions.nodes.resize(graph.nodes().size());
  for (size_t i = 0; i < decisions.nodes.size(); ++i) {
    decisions.nodes[i].kernel = {.family = ir::KernelFamily::kOpenCl,
                                 .implementation = storage.image_node[i] ? "image"
                                                   : plan.snippets[i]    ? "snippet"
                                                   : plan.typed[i]       ? "typed"
                                                                         : "op"};
  }
  for (const PendingLaunch& l : plan.launches) {
    std::string& detail = decisions.nodes[static_cast<size_t>(l.node)].kernel.detail;
    if (detail.find(l.kernel_name) == std::string::npos) {
      detail += (detail.empty() ? "" : "+") + l.kernel_name;
    }
  }
  decisions.values = storage.values;
  // Transposes a FusedAttention or Rotary reads or writes through (the
  // heads): views, which the planner may give one buffer.
  const std::vector<std::vector<int64_t>> held =
      HeldStrides(graph, InBuffers(graph, {.storage = &storage}));
  for (size_t i = 0; i < decisions.nodes.size(); ++i) {
    const ir::Node& n = *graph.nodes()[i];
    if (n.op_type != "Transpose" || !n.domain.empty()) continue;
    const bool unpermuted = !held[static_cast<size_t>(n.output(0)->id)].empty();
    const bool permuted = !held[static_cast<size_t>(n.input(0)->id)].empty();
    if (!unpermuted && !permuted) continue;
    ir::KernelChoice& k = decisions.nodes[i].kernel;
    k.implementation = "view";
    k.detail = unpermuted ? "unpermuted" : "permuted";
    k.view = true;
    const ir::Value* between = unpermuted ? n.output(0) : n.input(0);
    decisions.values[static_cast<size_t>(between->id)].layout =
        unpermuted ? ir::Layout::kUnpermuted : ir::Layout::kPermuted;
  }
  if (storage_ == Storage::kAuto) {
    decisions.resolved_spec = spec_;
    if (resolved == Storage::kBuffer) {
      decisions.resolved_spec->options.erase("storage");
    } else {
      decisions.resolved_spec->options["storage"] = StorageName(resolved);
    }
  }
  return decisions;
}

StatusOr<std::unique_ptr<targets::Executable>> OpenClTarget::Prepare(CompiledModel& model) const {
  TESSEL_ASSIGN_OR_RETURN(std::shared_ptr<Runtime> runtime, this->runtime());
  std::vector<std::string> notes;
  tuning::TuningCache cache;
  if (!opencl_.tune_cache.empty()) {
    const DeviceInfo& dev = runtime->device();
    cache = tuning::TuningCache::LoadOrEmpty(opencl_.tune_cache, &notes);
    cache.Invalidate(dev.platform_name, dev.name, dev.driver_version, &notes);
  }
  if (host_.note) {
    for (const std::string& line : notes) host_.note(line);
  }
  // What the model was compiled with (storage=auto resolved then).
  TESSEL_ASSIGN_OR_RETURN(const Storage storage,
                          ParseStorage(model.target.Option("storage", "buffer")));
  if (storage == Storage::kAuto) {
    return InvalidArgument("'" + model.source + "' records storage=auto, which compiling resolves");
  }
  ExecutorOptions eopts{.tuning_cache = &cache,
                        .queue_window = opencl_.queue_window,
                        .storage = storage,
                        .replay = opencl_.replay};
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<OpenClExecutor> exec,
                          OpenClExecutor::Create(*model.graph, model.memory, *runtime, eopts));
  auto executable = std::make_unique<OpenClExecutable>(
      *model.graph, std::move(runtime), std::move(exec), std::move(cache), host_, opencl_);
  if (opencl_.tune_online) TESSEL_RETURN_IF_ERROR(executable->TuneOnline());
  return std::unique_ptr<targets::Executable>(std::move(executable));
}

}  // namespace tessel::opencl
