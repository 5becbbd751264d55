// Kernel selection: the launches of one node, with their arguments and
// geometry, decided without a device (internal to the OpenCL target; see
// launch_plan.h). Tensor arguments name a buffer of the plan by index; the
// executor binds them to its cl_mem when it binds the launches.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ops/spatial_plan.h"
#include "targets/opencl/cl_include.h"
#include "targets/opencl/work_size.h"

namespace tessel::opencl {

// A tensor on the device: a buffer of the plan (LaunchPlan::buffers; -1:
// none) and an offset in elements of the tensor's dtype; or, for a value in
// a texture scope, an image of the plan and the texel (x, y) where the
// value's region starts (ir/texture.h).
struct TensorRef {
  int32_t buffer = -1;
  int32_t offset = 0;
  int32_t x = 0, y = 0;  // images only
  bool operator==(const TensorRef& o) const = default;
};

// Kernel arguments in order, as the bytes clSetKernelArg takes.
class KernelArgs {
 public:
  // The buffer is bound later (tensors(), SetBuffer); a null ref stays a
  // null buffer.
  KernelArgs& Tensor(const TensorRef& t) {
    if (t.buffer >= 0) tensors_.emplace_back(args_.size(), t.buffer);
    const cl_mem unbound = nullptr;
    Add(&unbound, sizeof(cl_mem), /*shape=*/false);
    const cl_int offset = t.offset;
    return Add(&offset, sizeof offset, /*shape=*/false);
  }
  // An image2d_t (bound later like a buffer) and the corner of the
  // tensor's region in it, as two int arguments: (image, x, y).
  KernelArgs& Image(const TensorRef& t) {
    if (t.buffer >= 0) tensors_.emplace_back(args_.size(), t.buffer);
    images_ = true;
    const cl_mem unbound = nullptr;
    Add(&unbound, sizeof(cl_mem), /*shape=*/false);
    const cl_int x = t.x, y = t.y;
    Add(&x, sizeof x, /*shape=*/false);
    return Add(&y, sizeof y, /*shape=*/false);
  }
  KernelArgs& Int(int64_t v) {
    const cl_int x = static_cast<cl_int>(v);
    return Add(&x, sizeof x);
  }
  KernelArgs& Float(float v) { return Add(&v, sizeof v); }
  // An argument of `size` bytes copied from `p` (a scalar of the kernel's
  // element type: Pad's fill value).
  KernelArgs& Raw(const void* p, size_t size) { return Add(p, size); }
  // A read-only table the kernel reads (Resize's taps), passed like a
  // tensor at offset 0: the executor uploads it once, into a buffer of its
  // own, when it binds the arguments.
  KernelArgs& Table(std::vector<unsigned char> bytes) {
    shape_bytes_.append(bytes.begin(), bytes.end());
    tables_.emplace_back(args_.size(), std::move(bytes));
    return Tensor(TensorRef{});
  }
  template <size_t N>
  KernelArgs& Ints(const std::array<int64_t, N>& v) {  // int4, int8 or int16
    static_assert(N == 4 || N == 8 || N == 16);
    cl_int x[N];
    for (size_t i = 0; i < N; ++i) x[i] = static_cast<cl_int>(v[i]);
    return Add(x, sizeof x);
  }
  const std::vector<std::vector<unsigned char>>& args() const { return args_; }
  // The bytes of every argument but the tensors' buffers and offsets: what
  // of the launch besides its geometry its speed depends on (the tuning
  // key's args_hash).
  const std::string& shape_bytes() const { return shape_bytes_; }
  // (argument index, bytes) of every Table, in order.
  const std::vector<std::pair<size_t, std::vector<unsigned char>>>& tables() const {
    return tables_;
  }
  // (argument index, plan buffer) of every bound Tensor, in order.
  const std::vector<std::pair<size_t, int32_t>>& tensors() const { return tensors_; }
  // Whether an argument is an image (the tuning key's storage).
  bool has_images() const { return images_; }
  // Binds argument `index` (a Tensor's or a Table's) to `mem`.
  void SetBuffer(size_t index, cl_mem mem) { std::memcpy(args_[index].data(), &mem, sizeof mem); }

 private:
  KernelArgs& Add(const void* p, size_t size, bool shape = true) {
    std::vector<unsigned char> bytes(size);
    std::memcpy(bytes.data(), p, size);
    if (shape) shape_bytes_.append(reinterpret_cast<const char*>(p), size);
    args_.push_back(std::move(bytes));
    return *this;
  }
  std::vector<std::vector<unsigned char>> args_;
  std::string shape_bytes_;
  std::vector<std::pair<size_t, std::vector<unsigned char>>> tables_;
  std::vector<std::pair<size_t, int32_t>> tensors_;
  bool images_ = false;
};

// Which program holds a launch's kernel: the op library (kernels.cl.inc) or
// the model's snippets (emitted from their kernel IR).
enum class KernelProgram { kOps, kSnippets };

struct PendingLaunch {
  std::string kernel_name;
  KernelProgram program = KernelProgram::kOps;
  int node = -1;  // index in the graph's schedule
  KernelArgs args;
  LaunchGeometry geometry;
  int64_t bytes = 0;
  int64_t flops = 0;
};

struct NodeContext {
  const ir::Node& node;
  int opset = 0;
  std::function<TensorRef(const ir::Value*)> ref;  // null value: a null ref
  // Subgraph nodes, and elementwise nodes run as a one-op snippet: the
  // emitted kernel's name, and its inputs when they are not the node's.
  std::string snippet_kernel;
  const std::vector<ir::Value*>* snippet_inputs = nullptr;
  // The device's compute units: kernel variants are chosen to fill them.
  int64_t compute_units = 1;
  // A scratch buffer of at least `bytes` for the node's launches alone (the
  // parts of a split-K product): one buffer of the plan that every node
  // shares, as large as its largest use.
  std::function<TensorRef(int64_t bytes)> scratch;
  // By value id (HeldStrides): the strides, per axis in elements, of a value
  // held as the Transpose next to it lies; empty (or null): plain.
  const std::vector<std::vector<int64_t>>* held = nullptr;
  const std::vector<int64_t>& HeldStrides(const ir::Value* v) const {
    static const std::vector<int64_t> plain;
    return held && v ? (*held)[static_cast<size_t>(v->id)] : plain;
  }
};

// The Transposes that produce a FusedAttention's Q, K or V or a Rotary's X
// (attention's heads), or alone read a FusedAttention's result, each value
// between theirs alone, in buffers (`in_buffer`, by value id): the kernel
// reads or writes it through the Transpose's strides (ops::TransposedStrides),
// and the Transpose copies its bytes as they are, or nothing where the plan
// gives both sides one buffer (a view: ir::KernelChoice::view). By value id,
// the strides of each value held so; empty for the others.
std::vector<std::vector<int64_t>> HeldStrides(const ir::Graph& graph,
                                              const std::vector<bool>& in_buffer);

// Appends the node's launches (none for a copy onto itself). Unsupported,
// naming the node, when no kernel here runs it.
Status BuildNodeLaunches(const NodeContext& ctx, std::vector<PendingLaunch>* out);

// Resize's taps on its two innermost axes as the kernels read them (rows,
// then columns): per output coordinate `taps` int32 input indices (-1:
// outside the input, the extrapolation value) and float32 weights.
struct ResizeTables {
  std::vector<unsigned char> index, weight;
};
ResizeTables MakeResizeTables(const ops::AxisSampling& rows, const ops::AxisSampling& cols);

}  // namespace tessel::opencl
