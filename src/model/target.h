// The seam between the compiler and the machines it compiles for. The
// compiler sees a target only through this interface; a concrete target
// (targets/reference, targets/cpu, targets/opencl) is made by name from a
// TargetSpec (targets/registry.h) by whoever drives the compiler: the CLI,
// the APIs, the tests.
//
//   TESSEL_ASSIGN_OR_RETURN(auto target, targets::MakeTarget(spec));
//   TESSEL_ASSIGN_OR_RETURN(CompiledModel m, Compile(path, *target, options));
//   WriteCompiledModel(m, "model.tsl");            // records m.target
//   ... later, maybe on another machine:
//   TESSEL_ASSIGN_OR_RETURN(auto target, targets::MakeTarget(m.target));  // refuses what
//                                                                          // this machine lacks
//   TESSEL_ASSIGN_OR_RETURN(auto exe, target->Prepare(m));
//   TESSEL_ASSIGN_OR_RETURN(auto outputs, exe->Run(inputs));
//
// What a target decides at compile time (SelectKernels: the kernel of every
// node and the scratch it needs, the layout and storage scope of every
// value, as typed data) is a stage of compilation, deterministic for a graph
// and a TargetSpec. The kernels built while deciding go to Prepare with the
// model (KernelDecisions::built), so compiling and running in one process
// builds each once; a model read from a file is decided again where it runs
// and compared field by field (model/prepare.h).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ops/op_registry.h"

namespace tessel {
struct CompiledModel;
}

namespace tessel::targets {

// A target and its options, as a compiled model records them: every option
// that changes what the compiler decides (the CPU's ISA, for instance) is
// here, resolved ("auto" becomes the ISA it chose), so that a model file runs
// the same on every machine that can run it.
struct TargetSpec {
  std::string name;                            // "reference", "cpu", "opencl"
  std::map<std::string, std::string> options;  // e.g. "isa" -> "avx2"

  // "cpu isa=avx2 threads=2", for messages and reports.
  std::string ToString() const;
  // The option's value, or `fallback` when it is not set.
  std::string Option(const std::string& key, const std::string& fallback = "") const;
  bool operator==(const TargetSpec&) const = default;
};

// What the machine that runs a target offers it, which no compiled model
// records: they change how a run is observed or cached, never its results.
// Only what every target may use is here; what one target alone reads is
// that target's own struct (opencl::OpenClHostOptions), which the registry
// passes beside this one (targets::TargetHostOptions, targets/registry.h).
struct HostOptions {
  // Record where the time goes (OpenCL: event-timed queues); it costs time.
  bool profile = false;
  // Where compiled device programs are cached; empty: nowhere.
  std::filesystem::path cache_dir;
  // Where a target writes the code it generates, for inspection (the CPU's
  // JIT machine code); empty: nowhere.
  std::filesystem::path dump_dir;
  // Whether the target may only compile here: a device target then opens
  // its device when a model is first prepared, not when it is made (a build
  // machine compiles for a GPU it does not have).
  bool compile_only = false;
  // Where one-line notes go (a cache ignored or invalidated, what tuning
  // did), and a line of progress to draw over the last; null: nowhere.
  std::function<void(const std::string&)> note;
  std::function<void(const std::string&)> progress;
  // Whether notes go into detail: one per value or node a note concerns,
  // rather than one line that counts them.
  bool verbose = false;
};

// What SelectKernels decides for one node.
struct NodeKernel {
  // The kernel, typed (ir::KernelChoice): what the .tsl records, reports
  // show, and Prepare compares with what this machine builds.
  ir::KernelChoice kernel;
  // The buffers the kernel needs besides its inputs and outputs, planned
  // with the tensors (ops::ScratchNeed).
  std::vector<ops::ScratchNeed> scratch;
};

// Where one value lives, decided with the kernels that read and write it.
struct ValuePlacement {
  ir::Layout layout = ir::Layout::kPlain;
  ir::StorageScope scope = ir::StorageScope::kGlobal;
  bool operator==(const ValuePlacement&) const = default;
};

// Kernels a target built while it selected them, handed to its Prepare so
// that a model compiled and run in one process builds each kernel once.
// Opaque to everyone but the target that made them.
class BuiltKernels {
 public:
  virtual ~BuiltKernels() = default;
};

// What the select-kernels stage decides, together: a kernel and the
// placement of its operands are one decision.
struct KernelDecisions {
  std::vector<NodeKernel> nodes;        // by node index
  std::vector<ValuePlacement> values;   // by value id
  std::shared_ptr<BuiltKernels> built;  // may be null
  // The spec these decisions were taken under, when an option of the
  // target's resolves per graph (OpenCL's storage=auto becomes buffer or
  // texture): what the compiled model records. Empty: the target's spec.
  std::optional<TargetSpec> resolved_spec;
};

// What `tessel tune` asks of a prepared model: search the launch sizes its
// target tunes (OpenCL: local work sizes), starting from and extending the
// target's tuning cache (where its host options say), then time the whole
// model with default and with tuned sizes.
struct TuneRequest {
  // The search: "race" (default), "mace", "mnn", "exhaustive", "random",
  // "annealing" (tuning::ParseStrategy).
  std::string strategy = "race";
  // Start no new kernel's tuning after this long; 0: no limit.
  double budget_seconds = 0;
  uint32_t seed = 1;
  // Timing the whole model: `rounds` interleaved rounds of `repeat` runs
  // per configuration, on `inputs` (graph-input order).
  int rounds = 3;
  int repeat = 10;
  std::vector<Tensor> inputs;
  // Called as each kernel's search goes: kernel `kernel` of `kernels`,
  // `candidates` timed, the best in ms. Null: nothing.
  std::function<void(int kernel, int kernels, const std::string& name, int candidates,
                     double best_ms)>
      progress;
};

// One distinct tuned launch. Sizes as text ("64x4"), for reports.
struct TunedKernel {
  std::string kernel;  // the kernel's name
  std::string node;    // the first node that launches it
  int uses = 0;        // launches of the model with the same tuning key
  std::string global, default_local, local;
  double default_ms = 0, ms = 0;
  int64_t launches = 0;  // tuning launches (0 when cached)
  bool cached = false;   // taken from the cache
  bool skipped = false;  // past the time budget: the default stays
};

struct TuneReport {
  std::string device, platform, driver;
  std::vector<TunedKernel> kernels;
  int64_t launches = 0;  // tuning launches in all
  double seconds = 0;    // wall time of the search
  int fixed = 0;         // launches whose kernel fixes its size
  // The whole model, default and tuned sizes (the faster default timing),
  // and how far the two default timings were apart, relatively. When the
  // tuned sizes were slower, the defaults are kept (and cached).
  double default_ms = 0, tuned_ms = 0, noise = 0;
  bool kept_tuned = true;
  std::string cache;  // the cache file, saved when something changed
  size_t cache_entries = 0;
};

// What a prepared model reports about its memory.
struct ExecutableStats {
  // Largest total of intermediate and output tensor bytes alive at once, as
  // the schedule implies (without in-place reuse or a plan).
  int64_t peak_activation_bytes = 0;
  // Bytes of the read-write arenas the run holds (activations and scratch).
  int64_t workspace_bytes = 0;
  // Weights the kernels hold in their own (packed) layouts, beyond the
  // model's constants.
  int64_t packed_weight_bytes = 0;
  // The threads the kernels run on (CPU: the target's pool), and the most
  // that ran one of tessel's own parallel loops so far (oneDNN's are
  // OpenMP's, of the same count).
  int threads = 1;
  int widest_parallel_loop = 1;
  // Where a device runs the kernels (OpenCL): host time of the last run
  // until it waited for the device, in ms; whether runs enqueue one
  // recorded command buffer (replay) rather than each launch; and that,
  // with why not, for reports ("command buffer (...)", "launch loop
  // (why)"). 0, false and empty elsewhere.
  double host_submit_ms = 0;
  bool replays = false;
  std::string submission;
};

// One line of a profile: the nodes of one op type that ran on one kernel.
struct ProfileRow {
  std::string op_type;
  std::string kernel;  // NodeKernel::kernel.ToString()
  int nodes = 0;
  double ms = 0;  // per run, all these nodes together
  // The target's word (ir::KernelChoice::slow): a reference kernel or a
  // library's reference-grade implementation, whose time a fast path
  // should take.
  bool slow = false;
  // A device target's launches (OpenCL): how many, and the bytes and
  // floating-point operations they do per run (their GB/s and GFLOP/s);
  // 0 elsewhere.
  int launches = 0;
  int64_t bytes = 0, flops = 0;
};

// The rows as a table, slowest first, slow paths marked, with a last line
// giving their share of the time.
std::string FormatProfile(const std::vector<ProfileRow>& rows, int runs);

// What an emitting target (c) is asked to write: sources in `directory`,
// their files and symbols named after `name`.
struct EmitRequest {
  std::filesystem::path directory;
  std::string name;  // a C identifier ("mobilenet"): NAME.h, tessel_NAME_run
  // Constants compiled into the sources as arrays, or placed in the
  // read-only pools of the plan, which the caller provides.
  bool constants_in_pools = false;
  // A self-checking program beside the model (NAME_check.c): these inputs
  // (graph-input order), and the outputs it must match within
  // |got - want| <= atol + rtol * |want|. Empty: none.
  std::vector<Tensor> check_inputs, check_outputs;
  double atol = 1e-4, rtol = 1e-3;
};

// What it wrote.
struct EmitReport {
  std::vector<std::filesystem::path> files;  // in the order written
  // Per pool the caller provides: name, bytes, read-only.
  struct Pool {
    std::string name;
    int64_t bytes = 0;
    bool read_only = false;
  };
  std::vector<Pool> pools;
  int64_t constant_bytes = 0;  // compiled in
  // What one run computes and moves (no timing: an emulator has none).
  int64_t macs = 0;
  int64_t bytes_moved = 0;
};

// A compiled model bound to a target's kernels and memory: what runs.
// Checks that `inputs` match the graph inputs in count, dtype and shape:
// InvalidArgument naming the input and both values otherwise.
Status ValidateInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs);

class Executable {
 public:
  // `graph` is the model's; it must outlive the executable.
  explicit Executable(const ir::Graph& graph) : graph_(graph) {}
  virtual ~Executable() = default;
  // Runs on inputs in graph-input order. They are checked here, once for
  // every target (ValidateInputs), and then run on the target's kernels.
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs) {
    TESSEL_RETURN_IF_ERROR(ValidateInputs(graph_, inputs));
    return RunChecked(inputs);
  }
  virtual ExecutableStats stats() const = 0;
  // "cpu isa=avx512 threads=2", "opencl:0 NVIDIA H100 80GB HBM3".
  virtual std::string Describe() const = 0;
  // Whether the next runs record where the time goes (it costs time).
  virtual void SetProfiling(bool on) {}
  // With profiling on: where the time of the profiled runs went, per op and
  // kernel, slowest first; empty otherwise.
  virtual std::vector<ProfileRow> Profile() const { return {}; }
  const ir::Graph& graph() const { return graph_; }
  // The same as text (FormatProfile), or the target's own richer report.
  virtual std::string ProfileReport() const { return ""; }
  // Tunes the launches (`tessel tune`), keeping the sizes found for the
  // runs that follow. By default: Unsupported, naming the target, which
  // has nothing to tune.
  virtual StatusOr<TuneReport> Tune(const TuneRequest& request) {
    return Unsupported("target '" + Describe() + "' has nothing to tune");
  }

 protected:
  // Runs on inputs Run has checked.
  virtual StatusOr<std::vector<Tensor>> RunChecked(const std::vector<Tensor>& inputs) = 0;

 private:
  const ir::Graph& graph_;
};

class Target {
 public:
  virtual ~Target() = default;
  // The target and its resolved options (what a compiled model records).
  virtual const TargetSpec& spec() const = 0;
  // Whether this target runs a model compiled for `compiled_for`: by
  // default only for the same spec. A target whose options include some
  // that only tune the run (a thread count) accepts any value of those; the
  // plan is then checked against its kernels before it runs (Prepare).
  virtual bool Accepts(const TargetSpec& compiled_for) const { return compiled_for == spec(); }

  // The select-kernels stage: every node's kernel and scratch, and every
  // value's layout and storage scope, decided together. Unsupported,
  // naming the node and why, when the target cannot run one. `graph` is
  // typed, verified and final but for the plan. Deterministic for a graph
  // and a spec: Prepare decides again on the machine that runs a model
  // read from a file, and compares field by field.
  virtual StatusOr<KernelDecisions> SelectKernels(const ir::Graph& graph) const = 0;

  // Binds a model compiled for this target (model.target == spec()) to its
  // kernels and memory. The model must outlive the executable, and may give
  // up weights the kernels copied into their own layouts: after Prepare,
  // only the executable uses the model's graph.
  virtual StatusOr<std::unique_ptr<Executable>> Prepare(CompiledModel& model) const = 0;

  // Whether this target writes sources (Emit) rather than running a model
  // in this process (Prepare, which it refuses).
  virtual bool emits_sources() const { return false; }
  // Writes the sources of a model compiled for this target. By default:
  // Unsupported, naming the target, which runs models in process.
  virtual StatusOr<EmitReport> Emit(const CompiledModel& model, const EmitRequest& request) const;

  // The most memory a model compiled for this target may plan (its pools
  // together) when the user sets no limit: by default, this machine's.
  virtual int64_t memory_limit_bytes() const;
};

}  // namespace tessel::targets
