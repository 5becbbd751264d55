// tessel's C++ API: compile an ONNX model for a target, save and load the
// compiled model, and run it from as many sessions and threads as the
// application likes.
//
//   tessel::Model model = tessel::Compile("model.onnx", tessel::CpuOptions{.threads = 2});
//   model.Save("model.tsl");                          // later: tessel::Load("model.tsl")
//   tessel::Session session = model.Prepare();
//   tessel::NamedArrays out = session.Run({{"input", tessel::Array::Borrow(
//       tessel::ElementType::kFloat32, {1, 3, 224, 224}, pixels)}});
//   const float* logits = out.at("logits").data<float>();
//
// Errors are exceptions: every call that can fail throws tessel::Error, whose
// code() says what kind of failure it is and whose what() is one line naming
// the culprit (the file, the input, the option, the node). Nothing here
// aborts or exits on anything a caller passes. docs/api.md lists every call
// and the errors it throws.
//
// Concurrency: a Model is immutable once made and may be prepared into any
// number of Sessions, from any threads. Sessions are independent (each has
// its own kernels' memory) and run concurrently. Calls to one Session's Run
// from several threads at once are safe: they run one after the other.
//
// This header is the whole API: no internal header is
// reachable from them, and the classes hold their state behind a pointer, so
// that tessel's internals change without breaking applications' builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#define TESSEL_API __attribute__((visibility("default")))

namespace tessel {

// "0.1.0": the version of the library the program runs with.
TESSEL_API const char* Version();

// ---------------------------------------------------------------- errors

enum class ErrorCode {
  kInvalidArgument = 1,  // an argument is wrong: an option, a name, a value
  kTypeMismatch,         // an array's element type is not the one expected
  kShapeMismatch,        // an array's shape is not the one expected
  kUnsupported,          // valid, but tessel (or this target) cannot do it
  kNotFound,             // a file, input, output or device that does not exist
  kCorruptFile,          // a truncated or damaged model or cache file
  kResourceExhausted,    // a memory pool or limit too small
  kInternal,             // the environment failed (I/O, a driver), or a bug
};
// "invalid argument", "type mismatch", ...
TESSEL_API const char* ErrorCodeName(ErrorCode code);

class TESSEL_API Error : public std::runtime_error {
 public:
  // what() is `message` on one line: line breaks folded, control bytes
  // escaped.
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// ---------------------------------------------------------------- arrays

enum class ElementType : uint8_t {
  kFloat32 = 1,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};
// "float32", "int64", ... (numpy's names; "bfloat16" has none there).
TESSEL_API const char* ElementTypeName(ElementType type);
// Bytes per element.
TESSEL_API size_t ElementSize(ElementType type);

template <typename T>
constexpr ElementType ElementTypeOf();
template <>
constexpr ElementType ElementTypeOf<float>() {
  return ElementType::kFloat32;
}
template <>
constexpr ElementType ElementTypeOf<double>() {
  return ElementType::kFloat64;
}
template <>
constexpr ElementType ElementTypeOf<int8_t>() {
  return ElementType::kInt8;
}
template <>
constexpr ElementType ElementTypeOf<int16_t>() {
  return ElementType::kInt16;
}
template <>
constexpr ElementType ElementTypeOf<int32_t>() {
  return ElementType::kInt32;
}
template <>
constexpr ElementType ElementTypeOf<int64_t>() {
  return ElementType::kInt64;
}
template <>
constexpr ElementType ElementTypeOf<uint8_t>() {
  return ElementType::kUInt8;
}
template <>
constexpr ElementType ElementTypeOf<uint16_t>() {
  return ElementType::kUInt16;
}
template <>
constexpr ElementType ElementTypeOf<uint32_t>() {
  return ElementType::kUInt32;
}
template <>
constexpr ElementType ElementTypeOf<uint64_t>() {
  return ElementType::kUInt64;
}
template <>
constexpr ElementType ElementTypeOf<bool>() {
  return ElementType::kBool;
}

// A dense, row-major array in host memory: an element type, a shape and the
// elements. It owns them (Allocate, FromVector) or borrows memory the caller
// owns (Borrow, Share), which tessel then reads or writes in place. Copies
// share the elements.
class TESSEL_API Array {
 public:
  Array() = default;
  // Zeroed elements, 64-byte aligned. InvalidArgument for a negative
  // dimension or a size that overflows.
  static Array Allocate(ElementType type, std::vector<int64_t> shape);
  // The caller's memory, which must outlive every use of the array.
  static Array Borrow(ElementType type, std::vector<int64_t> shape, void* data);
  // The caller's memory, kept alive by `owner` as long as the array (or a
  // copy) lives: how the Python binding lends a numpy array.
  static Array Share(ElementType type, std::vector<int64_t> shape, void* data,
                     std::shared_ptr<void> owner);
  // A copy of `values`, which must hold the shape's element count.
  template <typename T>
  static Array FromVector(std::vector<int64_t> shape, const std::vector<T>& values);

  bool empty() const { return data_ == nullptr && shape_.empty(); }
  ElementType type() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t element_count() const;
  size_t byte_size() const { return static_cast<size_t>(element_count()) * ElementSize(type_); }
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  // The elements as T; TypeMismatch when T is not the array's type.
  template <typename T>
  T* data() {
    CheckType(ElementTypeOf<T>());
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    CheckType(ElementTypeOf<T>());
    return static_cast<const T*>(data_);
  }
  template <typename T>
  std::vector<T> ToVector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + element_count());
  }

 private:
  void CheckType(ElementType wanted) const;
  ElementType type_ = ElementType::kFloat32;
  std::vector<int64_t> shape_;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

template <typename T>
Array Array::FromVector(std::vector<int64_t> shape, const std::vector<T>& values) {
  Array a = Allocate(ElementTypeOf<T>(), std::move(shape));
  if (static_cast<size_t>(a.element_count()) != values.size()) {
    throw Error(ErrorCode::kShapeMismatch, "Array::FromVector: " + std::to_string(values.size()) +
                                               " values for a shape of " +
                                               std::to_string(a.element_count()) + " elements");
  }
  T* out = a.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return a;
}

// Arrays by input or output name.
using NamedArrays = std::map<std::string, Array>;

// ---------------------------------------------------------------- targets

// The CPU: oneDNN and tessel's JIT kernels, on a pool of threads.
struct CpuOptions {
  std::string isa = "auto";       // auto (this CPU's best), avx512, avx2, generic
  int threads = 0;                // 0: one per physical core
  std::string winograd = "auto";  // auto, 4x3, off
};
// The ops' own kernels on one thread: the oracle every target is checked
// against.
struct ReferenceOptions {};
// An OpenCL device.
struct OpenClOptions {
  std::string device;  // "opencl:N" or a substring of its name; empty: the first GPU
  // The tuned work-group sizes (`tessel tune` or Session::Tune write it);
  // empty: <cache_dir>/tuning.json.
  std::string tuning_cache;
  bool tune_online = false;  // tune what the cache lacks at the first run
  int queue_window = 0;      // wait for the device every N launches; 0: never
};
using TargetOptions = std::variant<CpuOptions, OpenClOptions, ReferenceOptions>;

// A memory pool of the plan: a name, and optionally a size limit in bytes
// (0: none); read-only pools take the constants (weights).
struct PoolOptions {
  std::string name;
  int64_t size_limit_bytes = 0;
  bool read_only = false;
};

struct CompileOptions {
  // Shapes for inputs with symbolic dimensions, by input name.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Fuse elementwise regions into JIT kernels.
  bool fusion = true;
  // The memory planner ("auto", "greedy", "optimal", "none", ...; see
  // tessel plan --help) and its pools, in order of preference.
  std::string planner = "auto";
  std::vector<PoolOptions> pools;
  // Stop the planner's search after this many seconds (0: its deterministic
  // node budget).
  double planner_time_limit_seconds = 0;
  // Refuse a model whose plan needs more than this (0: the machine's memory).
  int64_t max_memory_bytes = 0;
  // Called with a line of progress while compiling (null: nothing).
  std::function<void(const std::string&)> progress;
};

// What a session may do beyond its target's options.
struct SessionOptions {
  // Record where the time goes (Session::Profile); it costs time.
  bool profile = false;
  // CPU: the threads of this session's kernels; 0: the model's.
  int threads = 0;
  // Where device programs are cached (OpenCL); empty: tessel's cache folder
  // ($TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel).
  std::string cache_dir;
  // Called with one-line notes (a cache ignored, what tuning did).
  std::function<void(const std::string&)> note;
};

// ---------------------------------------------------------------- models

struct TensorInfo {
  std::string name;
  ElementType type = ElementType::kFloat32;
  std::vector<int64_t> shape;
};

// The memory plan: every pool, and where each buffer lives in it.
struct MemoryPlan {
  struct Pool {
    std::string name;
    int64_t size_bytes = 0;
    bool read_only = false;
  };
  struct Buffer {
    std::string name;  // the value, or "<node>:scratch<i>"
    std::string kind;  // "activation", "input", "output", "constant", "scratch"
    std::string pool;  // empty: the caller's memory (inputs and outputs)
    int64_t offset_bytes = 0;
    int64_t size_bytes = 0;
    // The schedule steps (node indices) between which it is alive.
    int32_t first_step = 0, last_step = 0;
  };
  std::string algorithm;
  std::vector<Pool> pools;
  std::vector<Buffer> buffers;
  // The read-write pools together, and the lower bound of any plan of them.
  int64_t workspace_bytes = 0;
  int64_t lower_bound_bytes = 0;
  // The workspace drawn as SVG: schedule across, address down.
  std::string svg;
};

// One line of a profile: the nodes of one op type on one kernel.
struct ProfileRow {
  std::string op_type;
  std::string kernel;
  int nodes = 0;
  double ms = 0;      // per run, these nodes together
  bool slow = false;  // a reference-grade kernel a fast path should replace
};

class Session;

// A compiled model: immutable, cheap to copy (copies share it).
class TESSEL_API Model {
 public:
  ~Model();
  Model(const Model&);
  Model& operator=(const Model&);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // The target it was compiled for: "cpu", "opencl", "reference", and the
  // options that decided its kernels ("isa" -> "avx2").
  const std::string& target() const;
  const std::map<std::string, std::string>& target_options() const;
  // "cpu isa=avx2 winograd=auto".
  std::string target_description() const;
  // The file it was compiled from.
  const std::string& source() const;
  MemoryPlan plan() const;
  // The graph as text, each node with its kernel (tessel show).
  std::string Summary() const;

  // Writes the compiled model (.tsl) atomically: all or nothing.
  void Save(const std::string& path) const;
  std::string Serialize() const;

  // Binds the model to its target's kernels and memory on this machine.
  // Weights: a Model holds the model's; each Session holds its kernels'
  // packed copies. Drop the Model after preparing to hold them once.
  Session Prepare(const SessionOptions& options = {}) const;

 private:
  struct Impl;
  explicit Model(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
  friend struct ModelAccess;
};

// Compiles an ONNX model (a file, or its bytes) for a target.
TESSEL_API Model Compile(const std::string& onnx_path, const TargetOptions& target = CpuOptions{},
                         const CompileOptions& options = {});
TESSEL_API Model CompileBytes(std::string_view onnx_bytes,
                              const TargetOptions& target = CpuOptions{},
                              const CompileOptions& options = {});
// Reads a compiled model (.tsl), or the bytes Model::Serialize made.
TESSEL_API Model Load(const std::string& path);
TESSEL_API Model Deserialize(std::string_view bytes);

// ---------------------------------------------------------------- sessions

struct SessionStats {
  int64_t workspace_bytes = 0;      // the arenas a run uses
  int64_t packed_weight_bytes = 0;  // weights the kernels hold in their own layout
  int threads = 1;
};

struct TuneOptions {
  std::string strategy = "race";  // race, mace, mnn, exhaustive, random, annealing
  double budget_seconds = 0;      // 0: no limit
  int rounds = 3, repeat = 10;    // timing the whole model, before and after
};
struct TuneResult {
  std::string device;
  int kernels = 0;       // distinct launches searched or taken from the cache
  int64_t launches = 0;  // tuning launches
  double default_ms = 0, tuned_ms = 0;
  bool kept_tuned = true;  // false: the defaults were faster, and kept
  std::string cache;       // the cache file written
  std::string report;      // the same as text (tessel tune)
};

struct BenchResult {
  int runs = 0;
  double min_ms = 0, median_ms = 0, mean_ms = 0;
};

class TESSEL_API Session {
 public:
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Runs on `inputs`, one array per model input by name, and returns one
  // newly allocated array per output. Inputs are read in place (no copy).
  // InvalidArgument for a missing or unknown name, TypeMismatch /
  // ShapeMismatch naming the input and both types or shapes.
  NamedArrays Run(const NamedArrays& inputs);
  // The same, writing each output into the caller's array of `outputs`
  // (by name, of the output's type and shape; copied once from where the
  // kernels wrote it); outputs it does not name are not written.
  void Run(const NamedArrays& inputs, NamedArrays& outputs);

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // "cpu isa=avx512 threads=2", "opencl:0 NVIDIA H100 80GB HBM3".
  std::string Describe() const;
  SessionStats stats() const;
  // With SessionOptions::profile: where the time of the runs so far went,
  // slowest first, and the same as a table.
  std::vector<ProfileRow> Profile() const;
  std::string ProfileReport() const;
  // Times `repeat` runs after `warmup`, on zero-filled inputs.
  BenchResult Benchmark(int warmup = 5, int repeat = 50);
  // OpenCL: searches the work-group sizes of the model's launches, keeps
  // them for this session's runs, and saves them in the tuning cache. The
  // session must be prepared with SessionOptions::profile (launches are
  // timed by events). Unsupported on other targets.
  TuneResult Tune(const TuneOptions& options = {});

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class Model;
};

// ---------------------------------------------------------------- tools

// The targets this build has ("reference", "cpu", "opencl").
TESSEL_API std::vector<std::string> Targets();

struct DeviceInfo {
  std::string id;  // "opencl:0"
  std::string name, platform, vendor, driver, version;
  bool gpu = false;
  int64_t compute_units = 0;
  int64_t global_memory_bytes = 0;
};
// The OpenCL devices; empty without OpenCL (or in a build without it).
TESSEL_API std::vector<DeviceInfo> Devices();

// A planning instance (tessel plan --instance: CSV of buffers with sizes and
// lifetimes) planned by `algorithm` ("auto", "all" is not accepted here).
struct InstancePlan {
  std::string algorithm;
  int64_t pool_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int buffers = 0;
  std::vector<int64_t> offsets;  // by buffer, in the file's order
  std::string svg;
};
TESSEL_API std::vector<std::string> PlannerAlgorithms();
TESSEL_API InstancePlan PlanInstance(const std::string& csv_path,
                                     const std::string& algorithm = "auto",
                                     double time_limit_seconds = 0);

// tessel check: runs a model in the ONNX test layout (DIR/model.onnx and
// DIR/test_data_set_N/{input,output}_K.pb) and compares with the expected
// outputs.
struct CheckResult {
  std::string data_set, output;
  bool ok = false;
  double max_abs_error = 0, max_rel_error = 0;
  int64_t mismatches = 0;
  std::string problem;  // a shape or type mismatch, in words
};
struct CheckReport {
  bool ok = false;
  std::string target;
  std::vector<CheckResult> results;
};
TESSEL_API CheckReport Check(const std::string& dir, const TargetOptions& target = CpuOptions{},
                             double rtol = 1e-3, double atol = 1e-4);

// Reads a tensor file of the ONNX test layout (TensorProto, .pb): how test
// data and expected outputs travel.
TESSEL_API Array ReadTensorFile(const std::string& path);

}  // namespace tessel
