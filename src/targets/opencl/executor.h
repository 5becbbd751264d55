// The OpenCL executor: runs a compiled graph on one device, one kernel launch
// (or a few) per node, over buffers laid out by the memory plan.
//
//   TESSEL_ASSIGN_OR_RETURN(auto rt, opencl::Runtime::Create("opencl:0"));
//   TESSEL_ASSIGN_OR_RETURN(auto exec, opencl::OpenClExecutor::Create(graph, layout, *rt));
//   TESSEL_ASSIGN_OR_RETURN(auto outputs, exec->Run(inputs));
//
// Memory: one cl_mem per planned pool; every tensor is its pool buffer plus
// its planned offset, passed to kernels as an element offset argument (no
// sub-buffers, so CL_DEVICE_MEM_BASE_ADDR_ALIGN never constrains the plan).
// Constants are uploaded once, by Create. Values in no pool (the caller's
// inputs and outputs, or everything when the graph has no plan) get a buffer
// each, allocated once.
//
// Create validates once, in stages (executor.cc):
//
//   PlanLaunches     every node's launches and every tensor's buffer, without
//                    a device (launch_plan.h; what SelectKernels checks too):
//                    Unsupported, naming the node, when one has no kernel
//   EmitProgram      the model's snippets as one OpenCL C program (one kernel
//                    each, emitted from the snippets kernel IR)
//   AllocateBuffers  one cl_mem per planned buffer; constants uploaded
//   BuildPrograms    the op library and the snippets, through the runtime's
//                    program cache
//   BindLaunches     kernels created, arguments set, local sizes chosen (the
//                    default, or the tuning cache's)
//
// Run only writes inputs, enqueues the launches in schedule order on the
// in-order queue, and reads the outputs. Record once, replay: where the
// runtime has command buffers (cl_khr_command_buffer, Runtime::
// command_buffers), Create also records every launch into one command
// buffer, each waiting on the one before through a sync point (a command
// buffer's commands are unordered otherwise), and Run enqueues it with one
// call instead of one per launch. Runs that need each launch's event or a
// wait between launches (timings on a profiling runtime, a queue window),
// ExecutorOptions::replay off, and a recording the driver refused all take
// the launch loop; SetLocal makes the next Run record again.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/memory_layout.h"
#include "targets/opencl/launch_plan.h"
#include "targets/opencl/op_launches.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/storage.h"
#include "targets/opencl/work_size.h"
#include "tuning/cache.h"
#include "tuning/space.h"

namespace tessel::opencl {

// One kernel launch of the schedule, as it will be enqueued.
struct Launch {
  std::string kernel_name;  // "f32_conv2d_direct", "f32_snippet_12__opencl"
  KernelProgram program = KernelProgram::kOps;
  int node = -1;  // index in the graph's schedule
  cl_kernel kernel = nullptr;
  LaunchGeometry geometry;                // the real extent
  std::array<size_t, 3> local{1, 1, 1};   // chosen local size
  std::array<size_t, 3> global{1, 1, 1};  // rounded up to it
  // Tuning: whether the local size is free (not fixed by the kernel), the
  // untuned default, what the tuner knows of the launch, and its cache key.
  bool tunable = false;
  tuning::LocalSize default_local{1, 1, 1};
  tuning::Problem problem;
  tuning::TuneKey key;
  // Work estimates for reports: bytes moved to or from global memory (each
  // tensor once) and floating-point operations.
  int64_t bytes = 0;
  int64_t flops = 0;
};

// Timing of one launch in the last profiled Run.
struct LaunchTiming {
  const Launch* launch = nullptr;
  double ms = 0;
};

// The program of the op kernels: kernels.cl.inc, after the TESSEL_ACT_*
// codes of ops::ActivationCDefines. For tests and tools.
const std::string& OpKernelSource();
// Build options of every program.
const std::string& ProgramOptions();

struct ExecutorOptions {
  // Tuned local sizes: a launch whose key has an entry (legal for its
  // kernel here) takes that local size instead of the default. Need not
  // outlive Create.
  const tuning::TuningCache* tuning_cache = nullptr;
  // MACE's queue window: Run waits for the device after every this many
  // launches, so that a UI sharing the GPU stays responsive; 0: never.
  int queue_window = 0;
  // Where values live (storage.h): the graph's values must carry the
  // decisions CollectStorageInfo takes for it (SelectKernels recorded them).
  Storage storage = Storage::kBuffer;
  // Record the launches once and replay them (see above) where the runtime
  // has command buffers; off: the launch loop, always (`--no-replay`, to
  // measure the difference).
  bool replay = true;
  // The compute units kernel variants are chosen to fill (tile sizes,
  // split-K; launch_plan.h); 0: the device's. Tests plan for a GPU's count
  // on a CPU device with it.
  int64_t compute_units = 0;
  // Inputs and outputs cross the bus through pinned host memory mapped once
  // (on an H200 a 4 MB output reads at 54 GB/s so, 11 from pageable memory);
  // unset: on GPUs (a CPU device's buffers are host memory already).
  std::optional<bool> stage_copies;
};

class OpenClExecutor {
 public:
  // `graph` and `runtime` must outlive the executor; `layout` need not.
  static StatusOr<std::unique_ptr<OpenClExecutor>> Create(const ir::Graph& graph,
                                                          const ir::MemoryLayout& layout,
                                                          Runtime& runtime,
                                                          const ExecutorOptions& options = {});
  ~OpenClExecutor();

  // Inputs must match the graph's (targets::Executable::Run checks them).
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);

  const ir::Graph& graph() const { return graph_; }
  const std::vector<Launch>& launches() const { return launches_; }
  // How many launches took their local size from the tuning cache.
  int tuned_from_cache() const { return tuned_from_cache_; }

  // Tuning. Sets launch `k`'s local size (global rounded up to it);
  // InvalidArgument when the kernel cannot take it.
  Status SetLocal(size_t k, const tuning::LocalSize& local);
  // Launches launch `k` `repeats` times back to back with `local` and
  // returns the mean of their device times in ms (the runtime must
  // profile). Back to back, a short kernel is timed as a model runs it,
  // with the device busy, and the mean resolves what one launch's event
  // clock cannot. Its inputs hold whatever the buffers hold: every kernel
  // is safe on any data (indices clamp), and a tuning pass is followed by a
  // real run. Fails when a launch does.
  StatusOr<double> TimeLaunch(size_t k, const tuning::LocalSize& local, int repeats = 1);
  // With a profiling runtime: every launch of the last Run, in schedule order.
  const std::vector<LaunchTiming>& last_timings() const { return timings_; }
  // Whether Run records timings (with a profiling runtime; on by default).
  // Off, launches take no events, so timed runs pay nothing for them.
  void set_record_timings(bool on) { record_timings_ = on; }
  // Device bytes of the read-write pools (the planned workspace).
  int64_t workspace_bytes() const { return workspace_bytes_; }
  // Whether the next Run enqueues the recorded command buffer rather than
  // the launch loop.
  bool replays() const;
  // For reports: "command buffer (cl_khr_command_buffer 0.9.5)", or
  // "launch loop (why)".
  std::string DescribeSubmission() const;
  // How many times the launches were recorded into a command buffer: once
  // by Create, again by the first Run after a SetLocal that changed one.
  int recordings() const { return recordings_; }
  // Host time of the last Run until it waits for the device (writing the
  // inputs, enqueuing the launches and the output reads), in ms: what
  // replaying saves shows here.
  double last_submit_ms() const { return last_submit_ms_; }
  // The last profiled run's copies across the bus (OpenCL events): the
  // inputs' writes and the outputs' reads, in ms and bytes.
  struct CopyTiming {
    double input_ms = 0, output_ms = 0;
    int64_t input_bytes = 0, output_bytes = 0;
  };
  const CopyTiming& last_copy_timing() const { return copy_timing_; }
  // Whether inputs and outputs cross through pinned host memory (on GPUs).
  bool stages_copies() const { return stage_copies_; }

 private:
  struct Impl;
  explicit OpenClExecutor(const ir::Graph& graph, Runtime& runtime);
  // One cl_mem per buffer of `plan`, its values placed in them, and the
  // graph's constants uploaded (blocking).
  Status AllocateBuffers(const LaunchPlan& plan);
  // Creates the kernel of every launch of `pending` (from `ops_program`, or
  // `snippet_program` for snippets, whose tuning keys hash
  // `snippet_hashes[node]`), binds its tensors to the buffers and uploads
  // its tables, and sizes it for the device: the default local size, or the
  // tuning cache's. ResourceExhausted when a kernel's fixed work-group is
  // beyond the device.
  Status BindLaunches(std::vector<PendingLaunch> pending,
                      const std::vector<std::string>& snippet_hashes, cl_program ops_program,
                      cl_program snippet_program, const ExecutorOptions& options);
  // Records every launch into one finalized command buffer (released
  // first if there was one); false, with nothing held, when the driver
  // refuses any step.
  bool RecordLaunches();
  void ReleaseCommandBuffer();
  // Enqueues every launch on the queue, with events where timings or the
  // queue window need them.
  Status EnqueueLaunches(bool profiling);

  const ir::Graph& graph_;
  Runtime& runtime_;
  std::unique_ptr<Impl> impl_;
  std::vector<Launch> launches_;
  std::vector<LaunchTiming> timings_;
  int64_t workspace_bytes_ = 0;
  int tuned_from_cache_ = 0;
  int queue_window_ = 0;
  bool record_timings_ = true;
  bool replay_requested_ = true;  // ExecutorOptions::replay
  // Replay is possible: requested, the runtime has command buffers, and no
  // queue window.
  bool replay_ = false;
  bool replay_refused_ = false;  // the driver refused to record or to enqueue
  int recordings_ = 0;
  double last_submit_ms_ = 0;
  CopyTiming copy_timing_;
  // Maps the pinned staging of inputs and outputs (Impl::Staging), at the
  // first run.
  Status MapStaging();
  bool stage_copies_ = false;
};

}  // namespace tessel::opencl
