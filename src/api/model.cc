// Model, Session, Load (include/tessel/tessel.h): the runtime half of the
// API, which links no importer (libtessel_runtime).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "api/bridge.h"
#include "core/process.h"
#include "ir/printer.h"
#include "memory/lower_bound.h"
#include "memory/report.h"
#include "model/graph_memory.h"
#include "model/model_file.h"
#include "model/prepare.h"
#include "targets/registry.h"
#ifdef TESSEL_WITH_OPENCL
#include "targets/opencl/runtime.h"
#endif

namespace tessel {

namespace api {

std::string DefaultCacheDir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string dir = env("TESSEL_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty()) return dir + "/tessel";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.cache/tessel";
  return (std::filesystem::temp_directory_path() / "tessel-cache").string();
}

// A copy of `model` that its owner may prepare (and strip of weights): its
// own graph, sharing the constants' storage; no built kernels.
CompiledModel CopyForSession(const CompiledModel& model) {
  CompiledModel copy;
  copy.graph = model.graph->Clone();
  copy.source = model.source;
  copy.memory = model.memory;
  copy.target = model.target;
  copy.planned_here = model.planned_here;
  return copy;
}

Model MakeModel(CompiledModel model, const OpenClOptions& opencl, bool compiled_here) {
  auto impl = ModelAccess::New();
  for (const ir::Value* v : model.graph->inputs()) impl->inputs.push_back(InfoOf(*v));
  for (const ir::Value* v : model.graph->outputs()) impl->outputs.push_back(InfoOf(*v));
  impl->opencl = opencl;
  impl->model = CopyForSession(model);
  if (compiled_here) impl->handoff = std::make_unique<CompiledModel>(std::move(model));
  return ModelAccess::Make(std::move(impl));
}

namespace {

// The memory plan of `model`, described for users: its target's kernels
// decide the scratch buffers (selected again here, on a target that only
// compiles).
MemoryPlan DescribePlan(const CompiledModel& model) {
  const ir::Graph& graph = *model.graph;
  const ir::MemoryLayout& layout = model.memory;
  targets::HostOptions host;
  host.compile_only = true;
  auto target = Unwrap(targets::MakeTarget(model.target, host));
  targets::KernelDecisions decisions = Unwrap(target->SelectKernels(graph));
  MemoryOptions options;
  options.algorithm = layout.algorithm;
  for (const ir::MemoryPool& p : layout.pools) {
    memory::PoolInfo pool;
    pool.name = p.name;
    pool.read_only = p.read_only;
    options.pools.push_back(pool);
  }
  for (const ir::Value* v : graph.inputs()) {
    options.plan_io = options.plan_io || layout.values[static_cast<size_t>(v->id)].planned();
  }
  GraphMemoryProblem buffers = Unwrap(BuildMemoryProblem(graph, decisions.nodes, options));
  const memory::Problem& problem = buffers.problem;

  MemoryPlan plan;
  plan.algorithm = layout.algorithm;
  for (const ir::MemoryPool& p : layout.pools) {
    plan.pools.push_back({p.name, p.size_bytes, p.read_only});
    if (!p.read_only) plan.workspace_bytes += p.size_bytes;
  }
  memory::Plan placed;
  placed.algorithm = layout.algorithm;
  placed.pool_used_bytes.assign(problem.pools.size(), 0);
  bool all_placed = problem.pools.size() == layout.pools.size();
  auto is_in = [](const std::vector<ir::Value*>& list, const ir::Value* v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const GraphMemoryProblem::Origin& o = buffers.origins[i];
    MemoryPlan::Buffer b;
    ir::BufferPlacement where;
    if (o.node >= 0) {
      const ir::Node& node = *graph.nodes()[static_cast<size_t>(o.node)];
      b.name = node.name + ":scratch" + std::to_string(o.scratch);
      b.kind = "scratch";
      where = layout.scratch[static_cast<size_t>(o.node)][static_cast<size_t>(o.scratch)];
    } else {
      const ir::Value* v = graph.values()[static_cast<size_t>(o.value_id)].get();
      b.name = v->name;
      b.kind = v->is_constant()            ? "constant"
               : is_in(graph.inputs(), v)  ? "input"
               : is_in(graph.outputs(), v) ? "output"
                                           : "activation";
      where = layout.values[static_cast<size_t>(o.value_id)];
    }
    b.size_bytes = problem.buffers[i].size_bytes;
    b.first_step = static_cast<int32_t>(problem.buffers[i].live.first_use);
    b.last_step = static_cast<int32_t>(problem.buffers[i].live.last_use);
    if (where.planned()) {
      b.pool = layout.pools[static_cast<size_t>(where.pool)].name;
      b.offset_bytes = where.offset_bytes;
    } else {
      all_placed = false;
    }
    placed.placements.push_back({where.pool, where.offset_bytes});
    plan.buffers.push_back(std::move(b));
  }
  // Inputs and outputs the plan leaves in the caller's memory.
  const auto last = static_cast<int32_t>(graph.nodes().size());
  for (const auto* list : {&graph.inputs(), &graph.outputs()}) {
    for (const ir::Value* v : *list) {
      if (buffers.value_buffer[static_cast<size_t>(v->id)] >= 0) continue;
      const bool input = list == &graph.inputs();
      plan.buffers.push_back({v->name, input ? "input" : "output", "", 0,
                              static_cast<int64_t>(v->size_bytes()), 0, last});
    }
  }
  if (all_placed) {
    for (size_t i = 0; i < problem.buffers.size(); ++i) {
      const memory::Placement& pl = placed.placements[i];
      int64_t& used = placed.pool_used_bytes[static_cast<size_t>(pl.pool)];
      used = std::max(used, pl.offset_bytes + problem.buffers[i].size_bytes);
    }
    const std::vector<int64_t> bounds = memory::PoolLowerBounds(problem, placed.placements);
    for (size_t p = 0; p < problem.pools.size(); ++p) {
      if (!problem.pools[p].read_only) plan.lower_bound_bytes += bounds[p];
    }
    const std::string title = std::filesystem::path(model.source).filename().string() + ", " +
                              (layout.algorithm.empty() ? "plan" : layout.algorithm);
    plan.svg = memory::PlanSvg(problem, placed, title);
  }
  return plan;
}

void CheckInput(const TensorInfo& info, const Array& given) {
  if (given.type() != info.type) {
    throw Error(ErrorCode::kTypeMismatch,
                "input '" + info.name + "': " + ElementTypeName(given.type()) +
                    " given; the model takes " + ElementTypeName(info.type));
  }
  if (given.shape() != info.shape) {
    throw Error(ErrorCode::kShapeMismatch,
                "input '" + info.name + "': shape " + ShapeToString(given.shape()) +
                    " given; the model takes " + ShapeToString(info.shape));
  }
}

}  // namespace
}  // namespace api

// ---------------------------------------------------------------- Model

Model::Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
Model::Model(const Model&) = default;
Model& Model::operator=(const Model&) = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const std::vector<TensorInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_->outputs; }
const std::string& Model::target() const { return impl_->model.target.name; }
const std::map<std::string, std::string>& Model::target_options() const {
  return impl_->model.target.options;
}
std::string Model::target_description() const { return impl_->model.target.ToString(); }
const std::string& Model::source() const { return impl_->model.source; }

MemoryPlan Model::plan() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->plan) impl_->plan = api::DescribePlan(impl_->model);
  return *impl_->plan;
}

std::string Model::Summary() const {
  std::ostringstream os;
  ir::PrintGraph(*impl_->model.graph, os);
  return os.str();
}

void Model::Save(const std::string& path) const {
  api::ThrowIfError(WriteCompiledModel(impl_->model, path));
}

std::string Model::Serialize() const { return SerializeCompiledModel(impl_->model); }

Model Load(const std::string& path) {
  ConfigureAllocatorOnce();
  const bool compiled = api::Unwrap(IsCompiledModelFile(path));
  if (!compiled) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "'" + path + "' is not a compiled tessel model (.tsl): tessel::Compile an ONNX file");
  }
  return api::MakeModel(api::Unwrap(ReadCompiledModel(path)), {}, false);
}

Model Deserialize(std::string_view bytes) {
  ConfigureAllocatorOnce();
  return api::MakeModel(api::Unwrap(DeserializeCompiledModel(std::string(bytes), "<bytes>")), {},
                        false);
}

// ---------------------------------------------------------------- Session

struct Session::Impl {
  std::shared_ptr<api::ModelState> model_state;  // the names, types and shapes
  CompiledModel model;                           // this session's graph
  std::unique_ptr<targets::Target> target;
  std::unique_ptr<targets::Executable> exe;
  std::mutex run;  // one Run at a time
  int profiled_runs = 0;
  bool profile = false;

  // The arrays in graph-input order, each checked by name, type and shape.
  std::vector<Tensor> Order(const NamedArrays& given) const {
    const std::vector<TensorInfo>& infos = model_state->inputs;
    std::vector<Tensor> ordered(infos.size());
    for (const auto& [name, array] : given) {
      auto it = std::find_if(infos.begin(), infos.end(),
                             [&](const TensorInfo& i) { return i.name == name; });
      if (it == infos.end()) {
        std::string names;
        for (const TensorInfo& i : infos) names += (names.empty() ? "'" : ", '") + i.name + "'";
        throw Error(ErrorCode::kInvalidArgument,
                    "no input named '" + name + "' (the model's inputs: " + names + ")");
      }
      api::CheckInput(*it, array);
      ordered[static_cast<size_t>(it - infos.begin())] = api::ViewOf(array);
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!ordered[i].defined()) {
        throw Error(ErrorCode::kInvalidArgument, "input '" + infos[i].name + "' is missing (" +
                                                     ElementTypeName(infos[i].type) + " " +
                                                     ShapeToString(infos[i].shape) + ")");
      }
    }
    return ordered;
  }

  std::vector<Tensor> RunOrdered(const std::vector<Tensor>& inputs) {
    std::lock_guard<std::mutex> lock(run);
    std::vector<Tensor> outputs = api::Unwrap(exe->Run(inputs));
    if (profile) ++profiled_runs;
    // An output the plan placed in the workspace is a view of it, which
    // the next run overwrites: the caller gets a copy.
    const ir::MemoryLayout& layout = model.memory;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const int id = model.graph->outputs()[k]->id;
      if (static_cast<size_t>(id) < layout.values.size() &&
          layout.values[static_cast<size_t>(id)].planned()) {
        outputs[k] = outputs[k].Clone();
      }
    }
    return outputs;
  }

  std::vector<Tensor> ZeroInputs() const {
    std::vector<Tensor> inputs;
    for (const TensorInfo& i : model_state->inputs)
      inputs.emplace_back(api::ToDType(i.type), i.shape);
    return inputs;
  }
};

Session Model::Prepare(const SessionOptions& options) const {
  api::ModelState& st = *impl_;
  targets::TargetSpec spec = st.model.target;
  if (options.threads < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "SessionOptions::threads " + std::to_string(options.threads) + " is negative");
  }
  if (options.threads > 0) {
    if (spec.name != "cpu") {
      throw Error(ErrorCode::kInvalidArgument,
                  "SessionOptions::threads is an option of the cpu "
                  "target; this model is compiled for '" +
                      spec.name + "'");
    }
    spec.options["threads"] = std::to_string(options.threads);
  }
  const std::filesystem::path cache =
      options.cache_dir.empty() ? api::DefaultCacheDir() : options.cache_dir;
  targets::HostOptions host;
  host.profile = options.profile;
  host.cache_dir = cache / "opencl";
  host.note = options.note;
  targets::TargetHostOptions per_target;
  per_target.opencl.tune_cache = st.opencl.tuning_cache.empty()
                                     ? cache / "opencl" / "tuning.json"
                                     : std::filesystem::path(st.opencl.tuning_cache);
  per_target.opencl.tune_online = st.opencl.tune_online;
  per_target.opencl.queue_window = st.opencl.queue_window;

  auto impl = std::make_unique<Session::Impl>();
  impl->model_state = impl_;
  impl->profile = options.profile;
  StatusOr<std::unique_ptr<targets::Target>> target = targets::MakeTarget(spec, host, per_target);
  if (!target.ok()) {
    api::Throw(Status(target.status().code(), "'" + st.model.source + "' (compiled for '" +
                                                  st.model.target.ToString() +
                                                  "'): " + target.status().message()));
  }
  impl->target = std::move(*target);
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.handoff && st.handoff->target == impl->target->spec()) {
      impl->model = std::move(*st.handoff);
      st.handoff.reset();
    }
  }
  if (!impl->model.graph) impl->model = api::CopyForSession(st.model);
  impl->exe = api::Unwrap(tessel::Prepare(impl->model, *impl->target));
  if (options.profile) impl->exe->SetProfiling(true);
  return Session(std::move(impl));
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const std::vector<TensorInfo>& Session::inputs() const { return impl_->model_state->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->model_state->outputs; }

NamedArrays Session::Run(const NamedArrays& inputs) {
  std::vector<Tensor> outputs = impl_->RunOrdered(impl_->Order(inputs));
  NamedArrays named;
  for (size_t k = 0; k < outputs.size(); ++k) {
    named.emplace(impl_->model_state->outputs[k].name, api::ArrayOf(std::move(outputs[k])));
  }
  return named;
}

void Session::Run(const NamedArrays& inputs, NamedArrays& outputs) {
  const std::vector<TensorInfo>& infos = impl_->model_state->outputs;
  std::vector<Array*> into(infos.size(), nullptr);
  for (auto& [name, array] : outputs) {
    auto it = std::find_if(infos.begin(), infos.end(),
                           [&](const TensorInfo& i) { return i.name == name; });
    if (it == infos.end()) {
      throw Error(ErrorCode::kInvalidArgument, "no output named '" + name + "'");
    }
    if (array.type() != it->type || array.shape() != it->shape) {
      throw Error(array.type() != it->type ? ErrorCode::kTypeMismatch : ErrorCode::kShapeMismatch,
                  "output '" + name + "': an array of " + ElementTypeName(array.type()) + " " +
                      ShapeToString(array.shape()) + " given for " + ElementTypeName(it->type) +
                      " " + ShapeToString(it->shape));
    }
    if (array.raw_data() == nullptr && array.byte_size() > 0) {
      throw Error(ErrorCode::kInvalidArgument, "output '" + name + "': the array has no memory");
    }
    into[static_cast<size_t>(it - infos.begin())] = &array;
  }
  std::vector<Tensor> results = impl_->RunOrdered(impl_->Order(inputs));
  for (size_t k = 0; k < results.size(); ++k) {
    if (into[k] && results[k].size_bytes() > 0) {
      std::memcpy(into[k]->raw_data(), results[k].raw_data(), results[k].size_bytes());
    }
  }
}

std::string Session::Describe() const { return impl_->exe->Describe(); }

SessionStats Session::stats() const {
  std::lock_guard<std::mutex> lock(impl_->run);  // a run updates them
  const targets::ExecutableStats s = impl_->exe->stats();
  return {s.workspace_bytes, s.packed_weight_bytes, s.threads};
}

std::vector<ProfileRow> Session::Profile() const {
  std::lock_guard<std::mutex> lock(impl_->run);
  std::vector<ProfileRow> rows;
  for (const targets::ProfileRow& r : impl_->exe->Profile()) {
    rows.push_back({r.op_type, r.kernel, r.nodes, r.ms, r.slow});
  }
  return rows;
}

std::string Session::ProfileReport() const {
  std::lock_guard<std::mutex> lock(impl_->run);
  std::string report = impl_->exe->ProfileReport();
  if (report.empty()) {
    report = targets::FormatProfile(impl_->exe->Profile(), std::max(1, impl_->profiled_runs));
  }
  return report;
}

BenchResult Session::Benchmark(int warmup, int repeat) {
  if (warmup < 0 || repeat < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "Session::Benchmark: warmup " + std::to_string(warmup) + ", repeat " +
                    std::to_string(repeat) + " (warmup >= 0, repeat >= 1)");
  }
  const std::vector<Tensor> inputs = impl_->ZeroInputs();
  for (int i = 0; i < warmup; ++i) impl_->RunOrdered(inputs);
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    impl_->RunOrdered(inputs);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  BenchResult r;
  r.runs = repeat;
  double sum = 0;
  for (double m : ms) sum += m;
  r.mean_ms = sum / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  r.min_ms = ms.front();
  r.median_ms = ms[ms.size() / 2];
  return r;
}

TuneResult Session::Tune(const TuneOptions& options) {
  if (!impl_->profile && impl_->model.target.name == "opencl") {
    throw Error(ErrorCode::kInvalidArgument,
                "Session::Tune times launches on a profiling queue: prepare the session with "
                "SessionOptions::profile");
  }
  targets::TuneRequest request;
  request.strategy = options.strategy;
  request.budget_seconds = options.budget_seconds;
  request.rounds = options.rounds;
  request.repeat = options.repeat;
  request.inputs = impl_->ZeroInputs();
  std::lock_guard<std::mutex> lock(impl_->run);
  const targets::TuneReport report = api::Unwrap(impl_->exe->Tune(request));
  TuneResult r;
  r.device = report.device;
  r.kernels = static_cast<int>(report.kernels.size());
  r.launches = report.launches;
  r.default_ms = report.default_ms;
  r.tuned_ms = report.tuned_ms;
  r.kept_tuned = report.kept_tuned;
  r.cache = report.cache;
  std::ostringstream os;
  os << report.device << ": " << r.kernels << " kernels, " << report.launches
     << " tuning launches in " << report.seconds << " s; model " << report.default_ms
     << " ms with default sizes, " << report.tuned_ms << " ms tuned"
     << (report.kept_tuned ? "" : " (defaults kept)") << "\n";
  for (const targets::TunedKernel& k : report.kernels) {
    os << "  " << k.kernel << " (" << k.node << ", x" << k.uses << "): global " << k.global
       << ", local " << k.default_local << " -> " << k.local << ", " << k.default_ms << " -> "
       << k.ms << " ms" << (k.cached ? " (cached)" : "") << (k.skipped ? " (skipped)" : "") << "\n";
  }
  r.report = os.str();
  return r;
}

// ---------------------------------------------------------------- tools

std::vector<std::string> Targets() { return targets::TargetNames(); }

std::vector<DeviceInfo> Devices() {
  std::vector<DeviceInfo> out;
#ifdef TESSEL_WITH_OPENCL
  for (const opencl::DeviceInfo& d : api::Unwrap(opencl::ListDevices())) {
    out.push_back({"opencl:" + std::to_string(d.index), d.name, d.platform_name, d.vendor,
                   d.driver_version, d.device_version, d.is_gpu, d.compute_units,
                   d.global_mem_bytes});
  }
#endif
  return out;
}

}  // namespace tessel
