#include "targets/opencl/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "core/check.h"
#include "ir/texture.h"
#include "ops/fused_activation.h"
#include "ops/op_registry.h"
#include "snippets/c_emitter.h"
#include "targets/opencl/cl_error.h"

namespace tessel::opencl {

namespace {

// One program, in this order: the later sources use the earlier ones'
// macros and helpers (clang-format would sort the includes).
// clang-format off
constexpr char kOpKernelSource[] =
#include "targets/opencl/kernels.cl.inc"
#include "targets/opencl/texture_kernels.cl.inc"
#include "targets/opencl/index_kernels.cl.inc"
#include "targets/opencl/spatial_kernels.cl.inc"
    ;
// clang-format on

// The device time of a finished, profiled command, in ms.
StatusOr<double> EventMs(cl_event event) {
  cl_ulong start = 0, end = 0;
  TESSEL_CL_RETURN_IF_ERROR(
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
      "clGetEventProfilingInfo");
  TESSEL_CL_RETURN_IF_ERROR(
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
      "clGetEventProfilingInfo");
  return static_cast<double>(end - start) * 1e-6;
}

// The name every snippet kernel has in its tuning key.
constexpr char kSnippetKernel[] = "f32_snippet";

}  // namespace

const std::string& OpKernelSource() {
  // The codes FusedConv's epilogue compares with come from the C++ enum,
  // so that they are written once.
  static const std::string source = ops::ActivationCDefines() + kOpKernelSource;
  return source;
}

const std::string& ProgramOptions() {
  // No fast-math: the kernels are checked against the reference.
  static const std::string options = "-cl-std=CL1.2";
  return options;
}

struct OpenClExecutor::Impl {
  std::vector<cl_mem> buffers;    // by LaunchPlan::buffers index
  std::vector<TensorRef> values;  // by value id
  std::vector<cl_event> events;   // profiling: one per launch of the last Run
  // Profiling: the last Run's input writes, then its output reads.
  std::vector<cl_event> copy_events;
  // On a GPU, inputs and outputs cross the bus through pinned host memory
  // (CL_MEM_ALLOC_HOST_PTR, mapped once): the driver's DMA reads and writes
  // it directly, where pageable memory goes through its own bounce buffers
  // a piece at a time. By graph input, then output; empty elsewhere (a CPU
  // device's buffers are host memory already: a staging copy would only
  // add one).
  struct Staging {
    cl_mem mem = nullptr;
    void* host = nullptr;
  };
  std::vector<Staging> staging;
  // Every launch, recorded (RecordLaunches); null before, or after a
  // SetLocal that changed a launch.
  CommandBufferApi::Handle command_buffer = nullptr;
  cl_mem mem(const TensorRef& ref) const { return buffers[static_cast<size_t>(ref.buffer)]; }
};

OpenClExecutor::OpenClExecutor(const ir::Graph& graph, Runtime& runtime)
    : graph_(graph), runtime_(runtime), impl_(std::make_unique<Impl>()) {}

OpenClExecutor::~OpenClExecutor() {
  for (cl_event e : impl_->events) clReleaseEvent(e);
  for (cl_event e : impl_->copy_events) clReleaseEvent(e);
  for (const Impl::Staging& s : impl_->staging) {
    if (s.host) clEnqueueUnmapMemObject(runtime_.queue(), s.mem, s.host, 0, nullptr, nullptr);
  }
  if (!impl_->staging.empty()) clFinish(runtime_.queue());
  ReleaseCommandBuffer();
  for (Launch& l : launches_) {
    if (l.kernel) clReleaseKernel(l.kernel);
  }
}

namespace {

// The model's snippets as one OpenCL C program, and what tunes each.
struct EmittedProgram {
  std::string snippet_source;  // empty: the model has no snippet
  // By node index: the hash of the snippet's own source, emitted under one
  // name, so that one snippet in two models (or at two places) is tuned
  // once; empty for other nodes.
  std::vector<std::string> snippet_hashes;
};

// Emits every snippet of `plan` (one kernel each, named SnippetKernelName)
// into one program. Needs no device.
EmittedProgram EmitProgram(const LaunchPlan& plan) {
  EmittedProgram out;
  out.snippet_hashes.resize(plan.snippets.size());
  for (size_t i = 0; i < plan.snippets.size(); ++i) {
    if (!plan.snippets[i]) continue;
    const std::vector<bool>& images = plan.snippet_image_args[i];
    const auto emit = [&](const std::string& name) {
      return images.empty() ? snippets::EmitOpenClKernel(*plan.snippets[i], name)
                            : snippets::EmitOpenClImageKernel(*plan.snippets[i], name, images);
    };
    out.snippet_source += emit(SnippetKernelName(i)) + "\n";
    out.snippet_hashes[i] = tuning::HashHex(emit(kSnippetKernel) + ProgramOptions());
  }
  // The typed elementwise kernels after the snippets, their helpers once;
  // each is tuned by its source with the helpers, like a snippet.
  const std::string& prelude = TypedElementwisePrelude();
  bool typed = false;
  for (size_t i = 0; i < plan.typed.size(); ++i) {
    if (!plan.typed[i]) continue;
    if (!typed) out.snippet_source += prelude;
    typed = true;
    out.snippet_source += EmitTypedElementwise(*plan.typed[i], TypedKernelName(*plan.typed[i], i));
    out.snippet_hashes[i] = tuning::HashHex(
        prelude + EmitTypedElementwise(*plan.typed[i], kSnippetKernel) + ProgramOptions());
  }
  return out;
}

// The built programs; the runtime owns them.
struct Programs {
  cl_program ops = nullptr;
  cl_program snippets = nullptr;  // null without snippets
};

// Builds the op library and the emitted snippets for the runtime's device,
// through its program cache (a program built before, by this process or one
// with the same cache folder, is not compiled again).
StatusOr<Programs> BuildPrograms(Runtime& runtime, const EmittedProgram& emitted) {
  Programs programs;
  TESSEL_ASSIGN_OR_RETURN(programs.ops, runtime.BuildProgram(OpKernelSource(), ProgramOptions()));
  if (!emitted.snippet_source.empty()) {
    TESSEL_ASSIGN_OR_RETURN(programs.snippets,
                            runtime.BuildProgram(emitted.snippet_source, ProgramOptions()));
  }
  return programs;
}

}  // namespace

Status OpenClExecutor::AllocateBuffers(const LaunchPlan& plan) {
  Impl& impl = *impl_;
  for (const PlannedBuffer& b : plan.buffers) {
    if (b.image) {
      TESSEL_ASSIGN_OR_RETURN(cl_mem m, runtime_.AllocateImage(b.width, b.height));
      impl.buffers.push_back(m);
      // Texture pools and scratch textures are workspace too (texels of
      // four floats).
      if (!b.read_only) workspace_bytes_ += b.width * b.height * 16;
      continue;
    }
    TESSEL_ASSIGN_OR_RETURN(cl_mem m, runtime_.Allocate(b.size_bytes));
    impl.buffers.push_back(m);
    // Pools and the split-K scratch (neither a pool nor a value's own).
    if ((b.pool >= 0 || b.value < 0) && !b.read_only) workspace_bytes_ += b.size_bytes;
  }
  impl.values = plan.values;
  for (const auto& v : graph_.values()) {
    const int64_t size = static_cast<int64_t>(v->size_bytes());
    if (!v->is_constant() || size == 0) continue;
    const TensorRef& ref = impl.values[static_cast<size_t>(v->id)];
    if (plan.buffers[static_cast<size_t>(ref.buffer)].image) {
      // A texture:weight constant, packed into texels of its layout.
      const ir::Layout layout = plan.placements[static_cast<size_t>(v->id)].layout;
      const std::vector<float> texels = ir::PackTexels(v->constant, layout);
      const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v->shape, layout);
      const size_t origin[3] = {static_cast<size_t>(ref.x), static_cast<size_t>(ref.y), 0};
      const size_t region[3] = {static_cast<size_t>(e->width), static_cast<size_t>(e->height), 1};
      TESSEL_CL_RETURN_IF_ERROR(
          clEnqueueWriteImage(runtime_.queue(), impl.mem(ref), CL_TRUE, origin, region, 0, 0,
                              texels.data(), 0, nullptr, nullptr),
          "clEnqueueWriteImage (constant '" + v->name + "')");
      continue;
    }
    const size_t elem = std::max<size_t>(DTypeSize(v->dtype), 1);
    TESSEL_CL_RETURN_IF_ERROR(
        clEnqueueWriteBuffer(runtime_.queue(), impl.mem(ref), CL_TRUE,
                             static_cast<size_t>(ref.offset) * elem, static_cast<size_t>(size),
                             v->constant.raw_data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer (constant '" + v->name + "')");
  }
  return Status::Ok();
}

Status OpenClExecutor::BindLaunches(std::vector<PendingLaunch> pending,
                                    const std::vector<std::string>& snippet_hashes,
                                    cl_program ops_program, cl_program snippet_program,
                                    const ExecutorOptions& options) {
  Impl& impl = *impl_;
  const auto& nodes = graph_.nodes();
  cl_command_queue queue = runtime_.queue();
  const DeviceInfo& dev = runtime_.device();
  const std::string ops_hash = tuning::HashHex(OpKernelSource() + ProgramOptions());
  for (PendingLaunch& p : pending) {
    Launch l;
    l.kernel_name = p.kernel_name;
    l.program = p.program;
    l.node = p.node;
    l.geometry = p.geometry;
    l.bytes = p.bytes;
    l.flops = p.flops;
    const bool is_snippet = p.program == KernelProgram::kSnippets;
    cl_int rc = CL_SUCCESS;
    l.kernel =
        clCreateKernel(is_snippet ? snippet_program : ops_program, p.kernel_name.c_str(), &rc);
    if (rc == CL_INVALID_KERNEL_NAME && p.kernel_name.rfind("f64_", 0) == 0) {
      // The op library's float64 kernels are built only where the device
      // has cl_khr_fp64.
      return Unsupported(graph_.nodes()[static_cast<size_t>(p.node)]->Describe() +
                         ": float64 on OpenCL needs cl_khr_fp64, which '" + runtime_.device().name +
                         "' lacks");
    }
    TESSEL_CL_RETURN_IF_ERROR(rc, "clCreateKernel '" + p.kernel_name + "'");
    launches_.push_back(l);
    for (const auto& [index, buffer] : p.args.tensors()) {
      p.args.SetBuffer(index, impl.buffers[static_cast<size_t>(buffer)]);
    }
    for (const auto& [index, bytes] : p.args.tables()) {
      TESSEL_ASSIGN_OR_RETURN(
          cl_mem table, runtime_.Allocate(static_cast<int64_t>(bytes.size()), CL_MEM_READ_ONLY));
      TESSEL_CL_RETURN_IF_ERROR(clEnqueueWriteBuffer(queue, table, CL_TRUE, 0, bytes.size(),
                                                     bytes.data(), 0, nullptr, nullptr),
                                "clEnqueueWriteBuffer (a table of '" + p.kernel_name + "')");
      p.args.SetBuffer(index, table);
    }
    const auto& args = p.args.args();
    for (size_t a = 0; a < args.size(); ++a) {
      TESSEL_CL_RETURN_IF_ERROR(
          clSetKernelArg(l.kernel, static_cast<cl_uint>(a), args[a].size(), args[a].data()),
          "clSetKernelArg " + std::to_string(a) + " of '" + p.kernel_name + "' (" +
              nodes[static_cast<size_t>(l.node)]->Describe() + ")");
    }
    size_t max_wg = 0, multiple = 1;
    TESSEL_CL_RETURN_IF_ERROR(
        clGetKernelWorkGroupInfo(l.kernel, dev.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg,
                                 &max_wg, nullptr),
        "clGetKernelWorkGroupInfo '" + p.kernel_name + "'");
    TESSEL_CL_RETURN_IF_ERROR(
        clGetKernelWorkGroupInfo(l.kernel, dev.device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof multiple, &multiple, nullptr),
        "clGetKernelWorkGroupInfo '" + p.kernel_name + "'");
    if (l.geometry.fixed_local() &&
        l.geometry.local[0] * l.geometry.local[1] * l.geometry.local[2] > max_wg) {
      return ResourceExhausted(nodes[static_cast<size_t>(l.node)]->Describe() + ": kernel '" +
                               p.kernel_name + "' needs work-groups of " +
                               std::to_string(l.geometry.local[0] * l.geometry.local[1]) +
                               " items; " + dev.name + " allows " + std::to_string(max_wg));
    }
    Launch& placed = launches_.back();
    tuning::Problem& problem = placed.problem;
    problem.dims = l.geometry.dims;
    problem.global = l.geometry.global;
    problem.max_group = max_wg;
    for (size_t d = 0; d < 3; ++d) {
      problem.max_item[d] = static_cast<size_t>(std::max<int64_t>(dev.max_work_item_sizes[d], 1));
    }
    problem.preferred_multiple = std::max<size_t>(multiple, 1);
    problem.compute_units = std::max<int64_t>(dev.compute_units, 1);
    problem.global_mem_cache_bytes = dev.global_mem_cache_bytes;
    placed.tunable = !l.geometry.fixed_local();
    placed.default_local = placed.tunable ? tuning::DefaultLocal(problem) : l.geometry.local;
    placed.key = {
        .platform = dev.platform_name,
        .device = dev.name,
        .driver = dev.driver_version,
        .kernel = is_snippet ? kSnippetKernel : p.kernel_name,
        .source_hash = is_snippet ? snippet_hashes[static_cast<size_t>(l.node)] : ops_hash,
        .storage = p.args.has_images() ? "texture" : "buffer",
        .args_hash = tuning::HashHex(p.args.shape_bytes()),
        .dims = l.geometry.dims,
        .global = l.geometry.global};
    placed.local = placed.default_local;
    if (placed.tunable && options.tuning_cache) {
      const tuning::TuneEntry* e = options.tuning_cache->Find(placed.key);
      if (e && tuning::IsLegal(problem, e->local)) {
        placed.local = e->local;
        ++tuned_from_cache_;
      }
    }
    placed.global = RoundedGlobal(l.geometry, placed.local);
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<OpenClExecutor>> OpenClExecutor::Create(const ir::Graph& graph,
                                                                 const ir::MemoryLayout& layout,
                                                                 Runtime& runtime,
                                                                 const ExecutorOptions& options) {
  const StorageDecisions storage = CollectStorageInfo(graph, options.storage);
  TESSEL_ASSIGN_OR_RETURN(
      LaunchPlan plan,
      PlanLaunches(graph, layout,
                   {.compute_units = options.compute_units > 0 ? options.compute_units
                                                               : runtime.device().compute_units,
                    .storage = &storage}));
  TESSEL_RETURN_IF_ERROR(CheckTypedKernelsRun(plan.typed, graph, runtime.device()));
  const EmittedProgram emitted = EmitProgram(plan);
  std::unique_ptr<OpenClExecutor> exec(new OpenClExecutor(graph, runtime));
  exec->queue_window_ = std::max(options.queue_window, 0);
  exec->stage_copies_ = options.stage_copies.value_or(runtime.device().is_gpu);
  TESSEL_RETURN_IF_ERROR(exec->AllocateBuffers(plan));
  TESSEL_ASSIGN_OR_RETURN(const Programs programs, BuildPrograms(runtime, emitted));
  TESSEL_RETURN_IF_ERROR(exec->BindLaunches(std::move(plan.launches), emitted.snippet_hashes,
                                            programs.ops, programs.snippets, options));
  TESSEL_CL_RETURN_IF_ERROR(clFinish(runtime.queue()), "clFinish");
  exec->replay_requested_ = options.replay;
  exec->replay_ = options.replay && exec->queue_window_ == 0 && runtime.command_buffers();
  // Recorded now, even when timings are on (a profiling runtime), so that
  // replays() tells at once whether the driver took it.
  if (exec->replay_ && !exec->RecordLaunches()) exec->replay_refused_ = true;
  return exec;
}

bool OpenClExecutor::RecordLaunches() {
  const CommandBufferApi& api = *runtime_.command_buffers();
  ReleaseCommandBuffer();
  cl_command_queue queue = runtime_.queue();
  cl_int rc = CL_SUCCESS;
  CommandBufferApi::Handle cb = api.create(1, &queue, nullptr, &rc);
  if (rc != CL_SUCCESS || !cb) return false;
  // The commands of a command buffer run in no order but the one their
  // sync points give, whatever the queue's: each launch waits on the one
  // before, which is what the in-order queue does for the launch loop.
  // Kernel arguments are captured now; BindLaunches set them for good.
  CommandBufferApi::SyncPoint previous = 0;
  for (size_t k = 0; k < launches_.size() && rc == CL_SUCCESS; ++k) {
    const Launch& l = launches_[k];
    CommandBufferApi::SyncPoint recorded = 0;
    rc = api.nd_range_kernel(cb, nullptr, nullptr, l.kernel, static_cast<cl_uint>(l.geometry.dims),
                             nullptr, l.global.data(), l.local.data(), k > 0 ? 1 : 0,
                             k > 0 ? &previous : nullptr, &recorded, nullptr);
    previous = recorded;
  }
  if (rc == CL_SUCCESS) rc = api.finalize(cb);
  if (rc != CL_SUCCESS) {
    api.release(cb);
    return false;
  }
  impl_->command_buffer = cb;
  ++recordings_;
  return true;
}

void OpenClExecutor::ReleaseCommandBuffer() {
  if (!impl_->command_buffer) return;
  runtime_.command_buffers()->release(impl_->command_buffer);
  impl_->command_buffer = nullptr;
}

bool OpenClExecutor::replays() const {
  return replay_ && !replay_refused_ && !(runtime_.profiling() && record_timings_);
}

std::string OpenClExecutor::DescribeSubmission() const {
  const uint32_t version = runtime_.device().command_buffer_version;
  if (replays()) {
    return "command buffer (" +
           DescribeCommandBufferSupport(CommandBufferSupport::kAvailable, version) + ")";
  }
  std::string why;
  if (!replay_requested_) {
    why = "replay off";
  } else if (!runtime_.command_buffers()) {
    why = DescribeCommandBufferSupport(runtime_.command_buffer_support(), version);
  } else if (queue_window_ > 0) {
    why = "a queue window";
  } else if (replay_refused_) {
    why = "the driver refused the command buffer";
  } else {
    why = "timings per launch";
  }
  return "launch loop (" + why + ")";
}

Status OpenClExecutor::SetLocal(size_t k, const tuning::LocalSize& local) {
  TESSEL_CHECK(k < launches_.size());
  Launch& l = launches_[k];
  if (!l.tunable && local != l.default_local) {
    return InvalidArgument("kernel '" + l.kernel_name + "' requires the local size " +
                           tuning::ToString(l.default_local, l.geometry.dims));
  }
  if (!tuning::IsLegal(l.problem, local)) {
    return InvalidArgument("kernel '" + l.kernel_name + "' cannot take the local size " +
                           tuning::ToString(local, 3) + " on this device");
  }
  if (l.local == local) return Status::Ok();
  l.local = local;
  l.global = RoundedGlobal(l.geometry, local);
  // The recording holds the old size: the next Run records again.
  ReleaseCommandBuffer();
  return Status::Ok();
}

StatusOr<double> OpenClExecutor::TimeLaunch(size_t k, const tuning::LocalSize& local, int repeats) {
  TESSEL_CHECK(k < launches_.size());
  if (!runtime_.profiling()) {
    return InvalidArgument("timing a launch needs a profiling OpenCL queue");
  }
  if (repeats < 1) return InvalidArgument("timing a launch needs at least one repeat");
  const Launch& l = launches_[k];
  if (!tuning::IsLegal(l.problem, local)) {
    return InvalidArgument("local size " + tuning::ToString(local, 3) + " is not legal");
  }
  const std::array<size_t, 3> global = RoundedGlobal(l.geometry, local);
  std::vector<cl_event> events;
  const auto release = [&events] {
    for (cl_event e : events) clReleaseEvent(e);
  };
  for (int r = 0; r < repeats; ++r) {
    cl_event event = nullptr;
    const cl_int err =
        clEnqueueNDRangeKernel(runtime_.queue(), l.kernel, static_cast<cl_uint>(l.geometry.dims),
                               nullptr, global.data(), local.data(), 0, nullptr, &event);
    if (err != CL_SUCCESS) {
      // What was enqueued finishes before its events go.
      clFinish(runtime_.queue());
      release();
      return ClStatus(err, "clEnqueueNDRangeKernel '" + l.kernel_name + "' (tuning)");
    }
    events.push_back(event);
  }
  const cl_int waited = clWaitForEvents(static_cast<cl_uint>(events.size()), events.data());
  StatusOr<double> total = 0.0;
  if (waited != CL_SUCCESS) total = ClStatus(waited, "clWaitForEvents");
  for (size_t r = 0; r < events.size() && total.ok(); ++r) {
    StatusOr<double> ms = EventMs(events[r]);
    total = ms.ok() ? StatusOr<double>(*total + *ms) : ms;
  }
  release();
  if (!total.ok()) return total.status().WithContext("timing '" + l.kernel_name + "'");
  return *total / repeats;
}

Status OpenClExecutor::EnqueueLaunches(bool profiling) {
  cl_command_queue queue = runtime_.queue();
  for (size_t k = 0; k < launches_.size(); ++k) {
    const Launch& l = launches_[k];
    // The queue window waits for every queue_window-th launch.
    const bool window = queue_window_ > 0 && (k + 1) % static_cast<size_t>(queue_window_) == 0;
    cl_event event = nullptr;
    TESSEL_CL_RETURN_IF_ERROR(
        clEnqueueNDRangeKernel(queue, l.kernel, static_cast<cl_uint>(l.geometry.dims), nullptr,
                               l.global.data(), l.local.data(), 0, nullptr,
                               profiling || window ? &event : nullptr),
        "clEnqueueNDRangeKernel '" + l.kernel_name + "' (" +
            graph_.nodes()[static_cast<size_t>(l.node)]->Describe() + ")");
    if (window) {
      TESSEL_CL_RETURN_IF_ERROR(clWaitForEvents(1, &event), "clWaitForEvents (queue window)");
    }
    if (profiling) {
      impl_->events.push_back(event);
    } else if (event) {
      clReleaseEvent(event);
    }
  }
  return Status::Ok();
}

Status OpenClExecutor::MapStaging() {
  const auto& ins = graph_.inputs();
  const auto& outs = graph_.outputs();
  impl_->staging.resize(ins.size() + outs.size());
  for (size_t k = 0; k < impl_->staging.size(); ++k) {
    const ir::Value& v = k < ins.size() ? *ins[k] : *outs[k - ins.size()];
    const int64_t bytes = NumElements(v.shape) * static_cast<int64_t>(DTypeSize(v.dtype));
    if (bytes == 0) continue;
    Impl::Staging& s = impl_->staging[k];
    TESSEL_ASSIGN_OR_RETURN(s.mem,
                            runtime_.Allocate(bytes, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR));
    cl_int rc = CL_SUCCESS;
    s.host = clEnqueueMapBuffer(runtime_.queue(), s.mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                static_cast<size_t>(bytes), 0, nullptr, nullptr, &rc);
    if (rc != CL_SUCCESS) {
      s.host = nullptr;
      return ClStatus(rc, "clEnqueueMapBuffer (staging of '" + v.name + "')");
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> OpenClExecutor::Run(const std::vector<Tensor>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  const auto& graph_inputs = graph_.inputs();
  // Checked by targets::Executable::Run, once for every target.
  TESSEL_CHECK(inputs.size() == graph_inputs.size());
  cl_command_queue queue = runtime_.queue();
  const bool profiling = runtime_.profiling() && record_timings_;
  for (cl_event e : impl_->copy_events) clReleaseEvent(e);
  impl_->copy_events.clear();
  if (impl_->staging.empty() && stage_copies_ && !MapStaging().ok()) {
    // No pinned memory to be had (or mapped): pageable copies, slower but
    // as right, from now on.
    for (const Impl::Staging& s : impl_->staging) {
      if (s.host) clEnqueueUnmapMemObject(queue, s.mem, s.host, 0, nullptr, nullptr);
    }
    impl_->staging.clear();
    stage_copies_ = false;
  }
  // Each copy's event when profiling (copy_events), else none.
  auto copy_event = [&]() -> cl_event* {
    if (!profiling) return nullptr;
    impl_->copy_events.push_back(nullptr);
    return &impl_->copy_events.back();
  };
  copy_timing_ = {};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = *graph_inputs[i];
    const TensorRef& ref = impl_->values[static_cast<size_t>(v.id)];
    if (inputs[i].size_bytes() == 0) continue;
    const void* from = inputs[i].raw_data();
    if (!impl_->staging.empty()) {
      // The previous run has finished (clFinish): its staging is free.
      std::memcpy(impl_->staging[i].host, from, inputs[i].size_bytes());
      from = impl_->staging[i].host;
    }
    copy_timing_.input_bytes += static_cast<int64_t>(inputs[i].size_bytes());
    TESSEL_CL_RETURN_IF_ERROR(
        clEnqueueWriteBuffer(queue, impl_->mem(ref), CL_FALSE,
                             static_cast<size_t>(ref.offset) * DTypeSize(v.dtype),
                             inputs[i].size_bytes(), from, 0, nullptr, copy_event()),
        "clEnqueueWriteBuffer (input '" + v.name + "')");
  }
  const size_t input_copies = impl_->copy_events.size();
  for (cl_event e : impl_->events) clReleaseEvent(e);
  impl_->events.clear();
  bool replayed = false;
  if (replays()) {
    // The in-order queue orders the command buffer after the input writes
    // and before the output reads. A driver that refuses to record or to
    // enqueue (which then enqueued nothing) gets the launch loop, now and
    // from then on.
    if (impl_->command_buffer || RecordLaunches()) {
      replayed = runtime_.command_buffers()->enqueue(0, nullptr, impl_->command_buffer, 0, nullptr,
                                                     nullptr) == CL_SUCCESS;
    }
    if (!replayed) {
      replay_refused_ = true;
      ReleaseCommandBuffer();
    }
  }
  if (!replayed) TESSEL_RETURN_IF_ERROR(EnqueueLaunches(profiling));
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < graph_.outputs().size(); ++k) {
    const ir::Value* o = graph_.outputs()[k];
    // Filled whole by the read (or from the staging) before it is returned.
    Tensor t = Tensor::Uninitialized(o->dtype, o->shape);
    const TensorRef& ref = impl_->values[static_cast<size_t>(o->id)];
    if (t.size_bytes() > 0) {
      void* to = impl_->staging.empty() ? t.raw_data() : impl_->staging[inputs.size() + k].host;
      copy_timing_.output_bytes += static_cast<int64_t>(t.size_bytes());
      TESSEL_CL_RETURN_IF_ERROR(
          clEnqueueReadBuffer(queue, impl_->mem(ref), CL_FALSE,
                              static_cast<size_t>(ref.offset) * DTypeSize(o->dtype), t.size_bytes(),
                              to, 0, nullptr, copy_event()),
          "clEnqueueReadBuffer (output '" + o->name + "')");
    }
    outputs.push_back(std::move(t));
  }
  last_submit_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  TESSEL_CL_RETURN_IF_ERROR(clFinish(queue), "clFinish");
  if (!impl_->staging.empty()) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].size_bytes() == 0) continue;
      std::memcpy(outputs[k].raw_data(), impl_->staging[inputs.size() + k].host,
                  outputs[k].size_bytes());
    }
  }
  for (size_t k = 0; k < impl_->copy_events.size(); ++k) {
    TESSEL_ASSIGN_OR_RETURN(const double ms, EventMs(impl_->copy_events[k]));
    (k < input_copies ? copy_timing_.input_ms : copy_timing_.output_ms) += ms;
  }
  timings_.clear();
  if (profiling) {
    for (size_t k = 0; k < launches_.size(); ++k) {
      TESSEL_ASSIGN_OR_RETURN(const double ms, EventMs(impl_->events[k]));
      timings_.push_back({&launches_[k], ms});
    }
  }
  return outputs;
}

}  // namespace tessel::opencl
