// Pooling: MaxPool, AveragePool, LpPool and their Global forms, N-d.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

namespace {

struct PoolGeometry {
  int64_t planes = 0;  // N * C
  Shape in_spatial, out_spatial, kernel;
  std::vector<int64_t> strides, dilations, pads;  // pads: all begins, then all ends
};

Status CheckPoolInput(const ir::Node& node) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  const ir::Value* x = node.input(0);
  if (x->shape.size() < 3) {
    return InvalidArgument(node.Describe() + ": input '" + x->name + "' has shape " +
                           ShapeToString(x->shape) + "; expected rank >= 3 (N x C x D1 ...)");
  }
  return Status::Ok();
}

Status ReadFlag(const ir::Node& node, const char* name, int64_t* value) {
  *value = node.attrs.Int(name, 0);
  if (*value == 0 || *value == 1) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + name + " " + std::to_string(*value) +
                         " must be 0 or 1");
}

// LpPool's and GlobalLpPool's exponent: an int from opset 2, a float before.
double LpExponent(const ir::Node& node) { return node.attrs.Float("p", 2.0f); }

Status CheckLpExponent(const ir::Node& node) {
  const double p = LpExponent(node);
  if (p >= 1) return Status::Ok();
  std::ostringstream os;
  os << p;
  return InvalidArgument(node.Describe() + ": p " + os.str() + " must be >= 1");
}

Status ResolvePool(const ir::Node& node, const Shape& x, PoolGeometry* g) {
  const size_t n = x.size() - 2;
  if (!node.attrs.Has("kernel_shape")) {
    return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  }
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "kernel_shape", n, 1, 1, &g->kernel));
  int64_t ceil_mode = 0;
  TESSEL_RETURN_IF_ERROR(ReadFlag(node, "ceil_mode", &ceil_mode));
  g->planes = x[0] * x[1];
  g->in_spatial.assign(x.begin() + 2, x.end());
  TESSEL_RETURN_IF_ERROR(ResolveWindow(node, g->in_spatial, g->kernel, ceil_mode != 0, &g->strides,
                                       &g->dilations, &g->pads, &g->out_spatial));
  // A window may not lie entirely in the padding.
  for (size_t i = 0; i < n; ++i) {
    if (g->pads[i] >= g->kernel[i] || g->pads[i + n] >= g->kernel[i]) {
      return InvalidArgument(node.Describe() + ": pads " + IntsToString(g->pads) +
                             " must be smaller than kernel_shape " + IntsToString(g->kernel));
    }
  }
  return Status::Ok();
}

Shape PoolOutputShape(const Shape& x, const Shape& out_spatial) {
  Shape out = {x[0], x[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  return out;
}

Status InferPool(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(CheckPoolInput(node));
  // LpPool-1 left kernel_shape optional without saying what its absence means.
  if (opset < 2 && node.op_type == "LpPool" && !node.attrs.Has("kernel_shape")) {
    return Unsupported(node.Describe() +
                       ": attribute kernel_shape is missing; before opset 2 LpPool allowed that "
                       "without defining the window, and tessel does not guess one");
  }
  PoolGeometry g;
  const ir::Value* x = node.input(0);
  TESSEL_RETURN_IF_ERROR(ResolvePool(node, x->shape, &g));
  int64_t flag = 0;
  if (node.op_type == "MaxPool") {
    TESSEL_RETURN_IF_ERROR(ReadFlag(node, "storage_order", &flag));
  } else if (node.op_type == "AveragePool") {
    TESSEL_RETURN_IF_ERROR(ReadFlag(node, "count_include_pad", &flag));
  } else {
    TESSEL_RETURN_IF_ERROR(CheckLpExponent(node));
  }
  const Shape out = PoolOutputShape(x->shape, g.out_spatial);
  SetOutput(node, 0, x->dtype, out);
  SetOutput(node, 1, DType::kInt64, out);  // MaxPool's Indices
  return Status::Ok();
}

Status InferGlobalPool(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(CheckPoolInput(node));
  const ir::Value* x = node.input(0);
  if (node.op_type == "GlobalLpPool") TESSEL_RETURN_IF_ERROR(CheckLpExponent(node));
  SetOutput(node, 0, x->dtype, PoolOutputShape(x->shape, Shape(x->shape.size() - 2, 1)));
  return Status::Ok();
}

// For one spatial axis: which input indices the window of each output index
// reads, and how many of its taps fall inside the padded input (the divisor
// of AveragePool with count_include_pad).
struct AxisTaps {
  std::vector<int64_t> begin;  // taps of output o: index[begin[o], begin[o + 1])
  std::vector<int64_t> index;
  std::vector<int64_t> padded;
};

// Tap k of output o reads input o * stride + k * dilation - pad_begin. The
// taps inside the input, and those inside the padded input, are ranges of k
// found by division: a window of 2^40 taps over a padded input of 3 costs
// nothing more than one of 3.
AxisTaps MakeAxisTaps(const PoolGeometry& g, size_t axis) {
  const size_t n = g.in_spatial.size();
  const WideInt in = g.in_spatial[axis], pb = g.pads[axis], pe = g.pads[axis + n];
  const WideInt s = g.strides[axis], d = g.dilations[axis], taps = g.kernel[axis];
  AxisTaps t;
  for (int64_t o = 0; o < g.out_spatial[axis]; ++o) {
    t.begin.push_back(static_cast<int64_t>(t.index.size()));
    const WideInt start = WideInt{o} * s - pb;  // input index of tap 0
    const WideInt first = std::max<WideInt>(0, CeilDiv(-start, d));
    const WideInt last = std::min(taps, CeilDiv(in - start, d));  // exclusive
    for (WideInt k = first; k < last; ++k) t.index.push_back(static_cast<int64_t>(start + k * d));
    const WideInt padded_end = std::min(taps, CeilDiv(in + pe - start, d));
    const WideInt padded_begin = std::max<WideInt>(0, CeilDiv(-pb - start, d));
    t.padded.push_back(static_cast<int64_t>(std::max<WideInt>(0, padded_end - padded_begin)));
  }
  t.begin.push_back(static_cast<int64_t>(t.index.size()));
  return t;
}

// Walks the output positions of a pool in row-major order and lists, for the
// current one, the input elements under its window as offsets within a plane.
class WindowWalker {
 public:
  explicit WindowWalker(const PoolGeometry& g) : in_(g.in_spatial), out_(g.out_spatial.size(), 0) {
    for (size_t d = 0; d < in_.size(); ++d) axes_.push_back(MakeAxisTaps(g, d));
    Load();
  }

  const std::vector<int64_t>& offsets() const { return offsets_; }
  // The same elements as column-major offsets (MaxPool storage_order 1).
  const std::vector<int64_t>& col_offsets() const { return col_offsets_; }
  int64_t padded_count() const { return padded_count_; }

  void Next() {
    for (int64_t d = static_cast<int64_t>(out_.size()) - 1; d >= 0; --d) {
      if (++out_[d] < static_cast<int64_t>(axes_[d].begin.size()) - 1) break;
      out_[d] = 0;
    }
    Load();
  }

 private:
  void Load() {
    const size_t n = in_.size();
    offsets_.clear();
    col_offsets_.clear();
    padded_count_ = 1;
    std::vector<int64_t> first(n), count(n), j(n, 0);
    int64_t total = 1;
    for (size_t d = 0; d < n; ++d) {
      const AxisTaps& t = axes_[d];
      first[d] = t.begin[out_[d]];
      count[d] = t.begin[out_[d] + 1] - first[d];
      total *= count[d];
      padded_count_ *= t.padded[out_[d]];
    }
    for (int64_t e = 0; e < total; ++e) {
      int64_t row = 0, col = 0, col_stride = 1;
      for (size_t d = 0; d < n; ++d) {
        const int64_t i = axes_[d].index[first[d] + j[d]];
        row = row * in_[d] + i;
        col += i * col_stride;
        col_stride *= in_[d];
      }
      offsets_.push_back(row);
      col_offsets_.push_back(col);
      for (int64_t d = static_cast<int64_t>(n) - 1; d >= 0 && ++j[d] == count[d]; --d) j[d] = 0;
    }
  }

  Shape in_;
  std::vector<int64_t> out_;
  std::vector<AxisTaps> axes_;
  std::vector<int64_t> offsets_, col_offsets_;
  int64_t padded_count_ = 0;
};

template <typename T>
Status RunMaxPoolT(KernelContext& ctx) {
  PoolGeometry g;
  TESSEL_RETURN_IF_ERROR(ResolvePool(ctx.node, ctx.in(0).shape(), &g));
  const bool col_major = ctx.node.attrs.Int("storage_order", 0) == 1;
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  int64_t* indices = ctx.has_out(1) ? ctx.out(1).data<int64_t>() : nullptr;
  const int64_t in_plane = NumElements(g.in_spatial), out_plane = NumElements(g.out_spatial);
  WindowWalker w(g);
  for (int64_t o = 0; o < out_plane; ++o, w.Next()) {
    const std::vector<int64_t>& offs = w.offsets();
    for (int64_t p = 0; p < g.planes; ++p) {
      const T* plane = x + p * in_plane;
      T best = -std::numeric_limits<T>::infinity();
      size_t arg = 0;
      for (size_t e = 0; e < offs.size(); ++e) {
        const T v = plane[offs[e]];
        if (e == 0 || v > best) {
          best = v;
          arg = e;
        }
      }
      y[p * out_plane + o] = best;
      if (indices != nullptr && !offs.empty()) {
        indices[p * out_plane + o] = p * in_plane + (col_major ? w.col_offsets()[arg] : offs[arg]);
      }
    }
  }
  return Status::Ok();
}

// AveragePool (kLp false) and LpPool (kLp true) share the window walk.
template <typename T, bool kLp>
Status RunSumPoolT(KernelContext& ctx) {
  PoolGeometry g;
  TESSEL_RETURN_IF_ERROR(ResolvePool(ctx.node, ctx.in(0).shape(), &g));
  const bool include_pad = ctx.node.attrs.Int("count_include_pad", 0) == 1;
  const double p = LpExponent(ctx.node);
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  const int64_t in_plane = NumElements(g.in_spatial), out_plane = NumElements(g.out_spatial);
  WindowWalker w(g);
  for (int64_t o = 0; o < out_plane; ++o, w.Next()) {
    const std::vector<int64_t>& offs = w.offsets();
    const int64_t divisor = include_pad ? w.padded_count() : static_cast<int64_t>(offs.size());
    for (int64_t pl = 0; pl < g.planes; ++pl) {
      const T* plane = x + pl * in_plane;
      double acc = 0;
      for (int64_t off : offs) {
        const double v = plane[off];
        if (!kLp) {
          acc += v;
        } else if (p == 1) {
          acc += std::fabs(v);
        } else if (p == 2) {
          acc += v * v;
        } else {
          acc += std::pow(std::fabs(v), p);
        }
      }
      double r = 0;
      if (!kLp) {
        r = divisor > 0 ? acc / static_cast<double>(divisor) : 0.0;
      } else {
        r = p == 1 ? acc : p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p);
      }
      y[pl * out_plane + o] = static_cast<T>(r);
    }
  }
  return Status::Ok();
}

enum class GlobalKind { kAverage, kMax, kLp };

template <typename T, GlobalKind kKind>
Status RunGlobalPoolT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const int64_t planes = xs[0] * xs[1];
  const int64_t size = NumElements(Shape(xs.begin() + 2, xs.end()));
  const double p = LpExponent(ctx.node);
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* plane = x + pl * size;
    if (kKind == GlobalKind::kMax) {
      // NaN propagates, as in ReduceMax (numpy's max, ONNX's reference).
      T best = size > 0 ? plane[0] : -std::numeric_limits<T>::infinity();
      for (int64_t i = 1; i < size && !std::isnan(best); ++i) {
        best = plane[i] > best || std::isnan(plane[i]) ? plane[i] : best;
      }
      y[pl] = best;
      continue;
    }
    double acc = 0;
    for (int64_t i = 0; i < size; ++i) {
      const double v = plane[i];
      if (kKind == GlobalKind::kAverage) {
        acc += v;
      } else {
        acc += p == 2 ? v * v : std::pow(std::fabs(v), p);
      }
    }
    double r = 0;
    if (kKind == GlobalKind::kAverage) {
      r = size > 0 ? acc / static_cast<double>(size) : 0.0;
    } else {
      r = p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p);
    }
    y[pl] = static_cast<T>(r);
  }
  return Status::Ok();
}

Status RunMaxPool(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunMaxPoolT<float>, RunMaxPoolT<double>);
}
Status RunAveragePool(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunSumPoolT<float, false>, RunSumPoolT<double, false>);
}
Status RunLpPool(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunSumPoolT<float, true>, RunSumPoolT<double, true>);
}
Status RunGlobalAveragePool(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunGlobalPoolT<float, GlobalKind::kAverage>,
                        RunGlobalPoolT<double, GlobalKind::kAverage>);
}
Status RunGlobalMaxPool(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunGlobalPoolT<float, GlobalKind::kMax>,
                        RunGlobalPoolT<double, GlobalKind::kMax>);
}
Status RunGlobalLpPool(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunGlobalPoolT<float, GlobalKind::kLp>,
                        RunGlobalPoolT<double, GlobalKind::kLp>);
}

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  struct Entry {
    const char* op_type;
    int max_outputs;
    InferFn infer;
    KernelFn run;
  };
  const Entry entries[] = {
      {"MaxPool", 2, InferPool, RunMaxPool},  // optional Indices
      {"AveragePool", 1, InferPool, RunAveragePool},
      {"LpPool", 1, InferPool, RunLpPool},
      {"GlobalAveragePool", 1, InferGlobalPool, RunGlobalAveragePool},
      {"GlobalMaxPool", 1, InferGlobalPool, RunGlobalMaxPool},
      {"GlobalLpPool", 1, InferGlobalPool, RunGlobalLpPool},
  };
  for (const Entry& e : entries) {
    r.Register({.op_type = e.op_type,
                .domain = "",
                .op_class = OpClass::kOpaque,
                .min_inputs = 1,
                .max_inputs = 1,
                .min_outputs = 1,
                .max_outputs = e.max_outputs,
                .infer = e.infer,
                .run = e.run});
  }
}

}  // namespace tessel::ops
