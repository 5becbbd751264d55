#include "targets/opencl/launch_util.h"

#include <algorithm>

#include "core/check.h"

namespace tessel::opencl {

namespace {

// A strided copy's axes with the 1s dropped and neighbours merged where
// both sides walk them as one (the outer's strides are the inner's times its
// extent), right-aligned again: fewer divisions an element, and the
// innermost run as long as it is.
void MergeCopyAxes(Dims6& dims, Dims6& xs, Dims6& ys) {
  std::vector<int64_t> d, a, b;  // outermost first
  for (size_t i = 0; i < 6; ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && a.back() == xs[i] * dims[i] && b.back() == ys[i] * dims[i]) {
      d.back() *= dims[i];
      a.back() = xs[i];
      b.back() = ys[i];
    } else {
      d.push_back(dims[i]);
      a.push_back(xs[i]);
      b.push_back(ys[i]);
    }
  }
  dims = {1, 1, 1, 1, 1, 1, 0, 0};
  xs = ys = {0, 0, 0, 0, 0, 0, 0, 0};
  const size_t r = d.size();
  for (size_t i = 0; i < r; ++i) {
    dims[6 - r + i] = d[i];
    xs[6 - r + i] = a[i];
    ys[6 - r + i] = b[i];
  }
}

}  // namespace

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int64_t Bytes(const ir::Value* v) { return v ? static_cast<int64_t>(v->size_bytes()) : 0; }

Status Unsupported(const ir::Node& node, const std::string& why) {
  return tessel::Unsupported(node.Describe() + ": the OpenCL target " + why);
}

Dims6 Pad6(const std::vector<int64_t>& v, int64_t fill) {
  Dims6 d{fill, fill, fill, fill, fill, fill, 0, 0};
  const size_t r = v.size();
  TESSEL_CHECK(r <= 6);
  for (size_t i = 0; i < r; ++i) d[6 - r + i] = v[i];
  return d;
}

Dims6 Strides6(const Shape& s) {
  Dims6 st{0, 0, 0, 0, 0, 0, 0, 0};
  TESSEL_CHECK(s.size() <= 6);
  int64_t stride = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[6 - s.size() + i] = stride;
    stride *= s[i];
  }
  return st;
}

StatusOr<const char*> MovePrefix(const ir::Node& node, DType dtype) {
  const size_t size = DTypeSize(dtype);
  if (size == 1) return "b8";
  if (size == 2) return "b16";
  if (size == 4) return "b32";
  if (size == 8) return "b64";
  return Unsupported(node,
                     std::string("moves only 1- to 8-byte elements, not ") + DTypeName(dtype));
}

LaunchGeometry Linear(int64_t n) {
  LaunchGeometry g;
  g.dims = 1;
  g.global = {static_cast<size_t>(std::max<int64_t>(n, 1)), 1, 1};
  return g;
}

LaunchGeometry Grid(int64_t x, int64_t y, int64_t z) {
  LaunchGeometry g;
  g.dims = z > 1 ? 3 : 2;
  g.global = {static_cast<size_t>(std::max<int64_t>(x, 1)),
              static_cast<size_t>(std::max<int64_t>(y, 1)),
              static_cast<size_t>(std::max<int64_t>(z, 1))};
  return g;
}

LaunchGeometry Rows(int64_t rows) {
  LaunchGeometry g = Grid(kRowGroup, rows, 1);
  g.local = {static_cast<size_t>(kRowGroup), 1, 1};
  return g;
}

int64_t VectorFactor(size_t elem_size, std::initializer_list<int64_t> multiples) {
  const int64_t f = 16 / static_cast<int64_t>(std::max<size_t>(elem_size, 1));
  if (f <= 1) return 1;
  for (int64_t m : multiples) {
    if (m % f != 0) return 1;
  }
  return f;
}

StatusOr<std::vector<int64_t>> ConstantInts(const NodeContext& c, size_t input, const char* what) {
  const ir::Value* v = c.node.input(input);
  if (!v) return std::vector<int64_t>{};
  if (!v->is_constant()) {
    return Unsupported(c.node, std::string("needs ") + what + " known at compile time");
  }
  return v->constant.ToInt64Vector();
}

Status StridedCopy(const NodeContext& c, const ir::Value* in, const ir::Value* out, Dims6 dims,
                   Dims6 xs, Dims6 ys, int64_t x_extra, int64_t y_extra,
                   std::vector<PendingLaunch>* launches) {
  TESSEL_ASSIGN_OR_RETURN(const char* prefix, MovePrefix(c.node, out->dtype));
  int64_t n = 1;
  for (int i = 0; i < 6; ++i) n *= dims[static_cast<size_t>(i)];
  if (n == 0) return Status::Ok();
  TensorRef x = c.ref(in), y = c.ref(out);
  x.offset += static_cast<int32_t>(x_extra);
  y.offset += static_cast<int32_t>(y_extra);
  MergeCopyAxes(dims, xs, ys);
  int64_t f = 1;
  if (xs[5] == 1 && ys[5] == 1) {
    f = VectorFactor(DTypeSize(out->dtype), {dims[5], xs[0], xs[1], xs[2], xs[3], xs[4], ys[0],
                                             ys[1], ys[2], ys[3], ys[4], x.offset, y.offset});
  }
  if (f > 1) {
    dims[5] /= f;
    for (size_t i = 0; i < 5; ++i) {
      xs[i] /= f;
      ys[i] /= f;
    }
    x.offset /= static_cast<int32_t>(f);
    y.offset /= static_cast<int32_t>(f);
    n /= f;
  }
  PendingLaunch l;
  l.kernel_name = std::string(f > 1 ? "b128" : prefix) + "_strided_copy";
  l.args.Tensor(x).Tensor(y).Int(n).Ints(dims).Ints(xs).Ints(ys);
  l.geometry = Linear(n);
  l.bytes = 2 * n * f * static_cast<int64_t>(DTypeSize(out->dtype));
  launches->push_back(std::move(l));
  return Status::Ok();
}

}  // namespace tessel::opencl
