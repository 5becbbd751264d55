// Ops whose output length is decided by the data: Compress (by its
// condition) and Unique (by the values). tessel compiles static shapes, so the
// deciding input must be known at compile time; shape inference computes the
// selection itself.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// A tensor viewed as outer x n x inner around one axis (the whole tensor as
// 1 x elements x 1 when there is no axis).
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisView ViewAround(const Shape& shape, std::optional<int64_t> axis) {
  AxisView v;
  if (!axis) {
    v.n = NumElements(shape);
    return v;
  }
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < *axis) v.outer *= shape[d];
    if (d == *axis) v.n = shape[d];
    if (d > *axis) v.inner *= shape[d];
  }
  return v;
}

StatusOr<std::optional<int64_t>> OptionalAxis(const ir::Node& node, const Shape& shape) {
  if (!node.attrs.Has("axis")) return std::optional<int64_t>();
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.attrs.Int("axis", 0),
                                                      static_cast<int64_t>(shape.size())));
  return std::optional<int64_t>(axis);
}

// Copies slices `picked` (indices along the view's axis, in output order) of
// `in` to `out`, which has picked.size() slices.
void GatherSlices(const Tensor& in, const AxisView& v, const std::vector<int64_t>& picked,
                  Tensor& out) {
  const size_t es = DTypeSize(in.dtype());
  const auto* src = static_cast<const uint8_t*>(in.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  const int64_t m = static_cast<int64_t>(picked.size());
  const size_t run = static_cast<size_t>(v.inner) * es;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t j = 0; j < m; ++j) {
      std::memcpy(dst + (o * m + j) * run, src + (o * v.n + picked[j]) * run, run);
    }
  }
}

// ---- Compress ---------------------------------------------------------------

// Inputs: 0 the data, 1 condition (1-D bool). Slices along `axis` (elements of
// the flattened data without one) whose condition is true; a condition
// shorter than the axis drops the rest.
StatusOr<std::vector<int64_t>> CompressPicks(const ir::Node& node, const Shape& shape,
                                             const Tensor& condition) {
  TESSEL_ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(node, shape));
  const AxisView v = ViewAround(shape, axis);
  if (condition.num_elements() > v.n) {
    return InvalidArgument(
        node.Describe() + ": condition has " + std::to_string(condition.num_elements()) +
        " values, more than the " + std::to_string(v.n) +
        (axis ? " slices along axis " + std::to_string(*axis) : std::string(" elements")) +
        " of input shape " + ShapeToString(shape));
  }
  std::vector<int64_t> picks;
  const bool* c = condition.data<bool>();
  for (int64_t i = 0; i < condition.num_elements(); ++i) {
    if (c[i]) picks.push_back(i);
  }
  return picks;
}

Status InferCompress(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kBool}));
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 1, 1));
  TESSEL_ASSIGN_OR_RETURN(const Tensor* condition, RequireConstantInput(node, 1, "condition"));
  const Shape& shape = node.input(0)->shape;
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> picks, CompressPicks(node, shape, *condition));
  TESSEL_ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(node, shape));
  const int64_t m = static_cast<int64_t>(picks.size());
  Shape out = {m};
  if (axis) {
    out = shape;
    out[*axis] = m;
  }
  SetOutput(node, 0, node.input(0)->dtype, out);
  return Status::Ok();
}

Status RunCompress(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> picks,
                          CompressPicks(ctx.node, x.shape(), ctx.in(1)));
  TESSEL_ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(ctx.node, x.shape()));
  GatherSlices(x, ViewAround(x.shape(), axis), picks, ctx.out(0));
  return Status::Ok();
}

// ---- Unique -----------------------------------------------------------------

// Unique slices along `axis` (unique elements of the flattened input without
// one), in ascending lexicographic order or (sorted=0) in order of first
// occurrence. Outputs: 0 the unique values, 1 the index of each one's first
// occurrence, 2 for every input slice the index of its unique value, 3 how
// often each occurs.
struct UniqueResult {
  AxisView view;
  std::optional<int64_t> axis;
  std::vector<int64_t> first, inverse, counts;
};

// -1, 0, 1 as slice a orders before, equal to or after slice b. NaNs equal
// each other and order after every number, so the order is total.
template <typename T>
int CompareSlices(const T* x, const AxisView& v, int64_t a, int64_t b) {
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const T p = x[(o * v.n + a) * v.inner + i];
      const T q = x[(o * v.n + b) * v.inner + i];
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
                    std::is_floating_point_v<T>) {
        const double dp = ToDouble(p), dq = ToDouble(q);
        const bool np = std::isnan(dp), nq = std::isnan(dq);
        if (np || nq) {
          if (np != nq) return np ? 1 : -1;
          continue;
        }
        if (dp != dq) return dp < dq ? -1 : 1;
      } else {
        if (p != q) return p < q ? -1 : 1;
      }
    }
  }
  return 0;
}

StatusOr<UniqueResult> FindUnique(const ir::Node& node, const Tensor& x) {
  UniqueResult r;
  TESSEL_ASSIGN_OR_RETURN(r.axis, OptionalAxis(node, x.shape()));
  r.view = ViewAround(x.shape(), r.axis);
  const AxisView& v = r.view;
  const bool sorted = node.attrs.Int("sorted", 1) != 0;
  std::vector<int64_t> order(static_cast<size_t>(v.n));
  std::iota(order.begin(), order.end(), 0);
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = x.data<T>();
    // Stable, so each run of equal slices starts with the first occurrence.
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return CompareSlices(data, v, a, b) < 0; });
    std::vector<int64_t> group_of(static_cast<size_t>(v.n));
    for (size_t k = 0; k < order.size(); ++k) {
      if (k == 0 || CompareSlices(data, v, order[k - 1], order[k]) != 0) {
        r.first.push_back(order[k]);
        r.counts.push_back(0);
      }
      group_of[order[k]] = static_cast<int64_t>(r.first.size()) - 1;
      ++r.counts.back();
    }
    // Unsorted output lists the groups by first occurrence instead.
    std::vector<int64_t> rank(r.first.size());
    std::iota(rank.begin(), rank.end(), 0);
    if (!sorted) {
      std::vector<int64_t> by_first(r.first.size());
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t a, int64_t b) { return r.first[a] < r.first[b]; });
      std::vector<int64_t> first, counts;
      for (size_t k = 0; k < by_first.size(); ++k) {
        rank[by_first[k]] = static_cast<int64_t>(k);
        first.push_back(r.first[by_first[k]]);
        counts.push_back(r.counts[by_first[k]]);
      }
      r.first = std::move(first);
      r.counts = std::move(counts);
    }
    for (int64_t j = 0; j < v.n; ++j) r.inverse.push_back(rank[group_of[j]]);
  });
  return r;
}

Status InferUnique(ir::Node& node, int opset) {
  TESSEL_ASSIGN_OR_RETURN(const Tensor* x, RequireConstantInput(node, 0, "X"));
  TESSEL_ASSIGN_OR_RETURN(UniqueResult r, FindUnique(node, *x));
  const int64_t unique = static_cast<int64_t>(r.first.size());
  Shape y = {unique};
  if (r.axis) {
    y = x->shape();
    y[*r.axis] = unique;
  }
  SetOutput(node, 0, x->dtype(), y);
  SetOutput(node, 1, DType::kInt64, {unique});
  SetOutput(node, 2, DType::kInt64, {r.view.n});
  SetOutput(node, 3, DType::kInt64, {unique});
  return Status::Ok();
}

Status RunUnique(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(UniqueResult r, FindUnique(ctx.node, ctx.in(0)));
  if (ctx.out(0).num_elements() !=
      static_cast<int64_t>(r.first.size()) * r.view.outer * r.view.inner) {
    return InvalidArgument(ctx.node.Describe() + ": found " + std::to_string(r.first.size()) +
                           " unique values; compiled for another input");
  }
  GatherSlices(ctx.in(0), r.view, r.first, ctx.out(0));
  const std::vector<int64_t>* lists[] = {&r.first, &r.inverse, &r.counts};
  for (size_t k = 0; k < 3; ++k) {
    if (ctx.has_out(k + 1))
      std::copy(lists[k]->begin(), lists[k]->end(), ctx.out(k + 1).data<int64_t>());
  }
  return Status::Ok();
}

}  // namespace

void RegisterSelectionOps(OpRegistry& r) {
  r.Register({.op_type = "Compress",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferCompress,
              .run = RunCompress});
  r.Register({.op_type = "Unique",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_outputs = 1,
              .max_outputs = 4,
              .infer = InferUnique,
              .run = RunUnique});
}

}  // namespace tessel::ops
