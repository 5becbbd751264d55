// Linear algebra: Det.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// Input: ... x M x M; output: the determinant of each matrix, shape ...
Status InferDet(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  const Shape& x = node.input(0)->shape;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2]) {
    return InvalidArgument(node.Describe() + ": input shape " + ShapeToString(x) +
                           " must end in a square matrix (... x M x M)");
  }
  SetOutput(node, 0, node.input(0)->dtype, Shape(x.begin(), x.end() - 2));
  return Status::Ok();
}

// Gaussian elimination with partial pivoting, in double: the product of the
// pivots, negated once per row swap.
double Determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  for (int64_t col = 0; col < m; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < m; ++r) {
      if (std::fabs(a[r * m + col]) > std::fabs(a[pivot * m + col])) pivot = r;
    }
    if (a[pivot * m + col] == 0) return 0;
    if (pivot != col) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[pivot * m + c], a[col * m + c]);
      det = -det;
    }
    const double p = a[col * m + col];
    det *= p;
    for (int64_t r = col + 1; r < m; ++r) {
      const double f = a[r * m + col] / p;
      for (int64_t c = col; c < m; ++c) a[r * m + c] -= f * a[col * m + c];
    }
  }
  return det;
}

Status RunDet(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t m = x.dim(x.rank() - 1);
  const int64_t size = m * m;
  std::vector<double> a(static_cast<size_t>(size));
  for (int64_t b = 0; b < y.num_elements(); ++b) {
    for (int64_t i = 0; i < size; ++i) a[i] = x.GetAsDouble(b * size + i);
    const double det = Determinant(a, m);
    DispatchDType(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      y.data<T>()[b] = FromDouble<T>(det);
    });
  }
  return Status::Ok();
}

}  // namespace

void RegisterLinalgOps(OpRegistry& r) {
  r.Register({.op_type = "Det",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .infer = InferDet,
              .run = RunDet});
}

}  // namespace tessel::ops
