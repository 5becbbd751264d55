// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Both view the input as N x C x D (D the product of the dimensions after the
// class axis 1) and the target as N x D. SoftmaxCrossEntropyLoss is the
// negative log-likelihood of log-softmax(scores) along the class axis, so the
// two share one kernel. Everything accumulates in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

enum class Reduction { kNone, kSum, kMean };

StatusOr<Reduction> ReadReduction(const ir::Node& node) {
  const std::string r = node.attrs.String("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  return InvalidArgument(node.Describe() + ": reduction '" + r + "' is not one of none, sum, mean");
}

// Inputs: 0 the (log-)probabilities or scores N x C x d1 ... dk, 1 the
// target classes N x d1 ... dk, 2 the optional per-class weights C.
Status InferLoss(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt32, DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 2}));
  TESSEL_ASSIGN_OR_RETURN(Reduction reduction, ReadReduction(node));
  const ir::Value& in = *node.input(0);
  const ir::Value& target = *node.input(1);
  if (in.shape.size() < 2) {
    return InvalidArgument(node.Describe() + ": input '" + in.name + "' has shape " +
                           ShapeToString(in.shape) + "; expected rank >= 2 (N x C x d1 ... dk)");
  }
  Shape expected = in.shape;
  expected.erase(expected.begin() + 1);
  if (target.shape != expected) {
    return InvalidArgument(node.Describe() + ": target '" + target.name + "' has shape " +
                           ShapeToString(target.shape) + "; expected " + ShapeToString(expected) +
                           " for input shape " + ShapeToString(in.shape));
  }
  if (const ir::Value* w = node.input(2); w && w->shape != Shape{in.shape[1]}) {
    return InvalidArgument(node.Describe() + ": weight '" + w->name + "' has shape " +
                           ShapeToString(w->shape) + "; expected " + std::to_string(in.shape[1]) +
                           " (one per class)");
  }
  SetOutput(node, 0, in.dtype, reduction == Reduction::kNone ? target.shape : Shape{});
  SetOutput(node, 1, in.dtype, in.shape);  // SoftmaxCrossEntropyLoss's log_prob
  return Status::Ok();
}

void StoreDouble(Tensor& t, int64_t i, double v) { t.SetFromDouble(i, v); }

// The loss of log-probabilities `logp` (N x C x D, row-major) against the
// target classes in ctx.in(1), written to ctx.out(0).
Status NllFromLogProb(KernelContext& ctx, const std::vector<double>& logp) {
  const Shape& shape = ctx.in(0).shape();
  const int64_t n = shape[0], c = shape[1];
  const int64_t d = NumElements(shape) / (n * c == 0 ? 1 : n * c);
  const Tensor& target = ctx.in(1);
  const Tensor* weight = ctx.has_in(2) ? &ctx.in(2) : nullptr;
  const bool has_ignore = ctx.node.attrs.Has("ignore_index");
  const int64_t ignore_index = ctx.node.attrs.Int("ignore_index", 0);
  const Reduction reduction = ReadReduction(ctx.node).value();
  Tensor& out = ctx.out(0);
  double sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t at = i * d + j;
      const int64_t cls = target.GetAsInt64(at);
      double loss = 0, w = 0;
      if (!has_ignore || cls != ignore_index) {
        if (cls < 0 || cls >= c) {
          return InvalidArgument(ctx.node.Describe() + ": target class " + std::to_string(cls) +
                                 " at element " + std::to_string(at) + " is out of range [0, " +
                                 std::to_string(c) + ")");
        }
        w = weight ? weight->GetAsDouble(cls) : 1.0;
        loss = -w * logp[(i * c + cls) * d + j];
      }
      if (reduction == Reduction::kNone) StoreDouble(out, at, loss);
      sum += loss;
      weight_sum += w;
    }
  }
  // Mean divides by the total weight of the elements that count (their number
  // without weights), as the ONNX reference does; no such element gives NaN.
  if (reduction == Reduction::kSum) StoreDouble(out, 0, sum);
  if (reduction == Reduction::kMean) {
    StoreDouble(out, 0,
                weight_sum != 0 ? sum / weight_sum : std::numeric_limits<double>::quiet_NaN());
  }
  return Status::Ok();
}

Status RunNll(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  std::vector<double> logp(static_cast<size_t>(in.num_elements()));
  for (int64_t i = 0; i < in.num_elements(); ++i) logp[i] = in.GetAsDouble(i);
  return NllFromLogProb(ctx, logp);
}

Status RunSoftmaxCrossEntropy(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  const Shape& shape = in.shape();
  const int64_t n = shape[0], c = shape[1];
  const int64_t d = NumElements(shape) / (n * c == 0 ? 1 : n * c);
  std::vector<double> logp(static_cast<size_t>(in.num_elements()));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      // log softmax = x - max - log(sum(exp(x - max))), so no exp overflows.
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < c; ++k) max = std::max(max, in.GetAsDouble((i * c + k) * d + j));
      double sum = 0;
      for (int64_t k = 0; k < c; ++k) sum += std::exp(in.GetAsDouble((i * c + k) * d + j) - max);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < c; ++k) {
        const int64_t at = (i * c + k) * d + j;
        logp[at] = in.GetAsDouble(at) - max - log_sum;
      }
    }
  }
  if (ctx.has_out(1)) {
    for (int64_t i = 0; i < in.num_elements(); ++i) StoreDouble(ctx.out(1), i, logp[i]);
  }
  return NllFromLogProb(ctx, logp);
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  r.Register({.op_type = "NegativeLogLikelihoodLoss",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .infer = InferLoss,
              .run = RunNll});
  r.Register({.op_type = "SoftmaxCrossEntropyLoss",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .min_outputs = 1,
              .max_outputs = 2,
              .infer = InferLoss,
              .run = RunSoftmaxCrossEntropy});
}

}  // namespace tessel::ops
