#include "snippets/approx_error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "core/check.h"
#include "ops/op_registry.h"

namespace tessel::snippets {

namespace {

constexpr int64_t kChunk = 1 << 16;
constexpr double kFltMin = 1.17549435082228750797e-38;
constexpr double kFltEpsilon = 1.1920928955078125e-07;

double Exact(const std::string& f, double x) {
  if (f == "exp") return std::exp(x);
  if (f == "log") return std::log(x);
  if (f == "erf") return std::erf(x);
  if (f == "tanh") return std::tanh(x);
  if (f == "sigmoid") return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
  return std::expm1(x);
}

std::unique_ptr<ir::Graph> OneOpBody(const std::string& function) {
  auto g = std::make_unique<ir::Graph>();
  g->set_opset_version(17);
  g->set_name("approx_" + function);
  ir::Value* x = g->AddValue("x", DType::kFloat32, {kChunk}, true);
  g->inputs().push_back(x);
  ir::Value* y = g->AddValue("y");
  std::string op = function == "expm1" ? "Elu" : function;
  op[0] = static_cast<char>(std::toupper(op[0]));
  g->AddNode(op, "op", {x}, {y});
  TESSEL_CHECK(ops::InferNode(*g->nodes()[0], 17).ok());
  g->outputs().push_back(y);
  return g;
}

void Merge(ApproxError& into, const ApproxError& e) {
  if (e.max_ulp > into.max_ulp) {
    into.max_ulp = e.max_ulp;
    into.max_ulp_at = e.max_ulp_at;
  }
  into.max_rel_eps = std::max(into.max_rel_eps, e.max_rel_eps);
  into.max_abs_subnormal = std::max(into.max_abs_subnormal, e.max_abs_subnormal);
  into.special_mismatches += e.special_mismatches;
  into.inputs += e.inputs;
}

void Score(const std::string& f, float x, float got, ApproxError& e) {
  const double exact = Exact(f, static_cast<double>(x));
  ++e.inputs;
  const float rounded = static_cast<float>(exact);
  if (std::isnan(exact) || std::isnan(got) || std::isinf(rounded) || std::isinf(got)) {
    const bool same = (std::isnan(exact) && std::isnan(got)) || rounded == got;
    if (!same) ++e.special_mismatches;
    return;
  }
  const double err = std::fabs(static_cast<double>(got) - exact);
  if (std::fabs(exact) < kFltMin) {
    e.max_abs_subnormal = std::max(e.max_abs_subnormal, err);
    return;
  }
  int exponent;
  std::frexp(std::fabs(exact), &exponent);
  const double ulp = std::ldexp(1.0, exponent - 24);
  if (err / ulp > e.max_ulp) {
    e.max_ulp = err / ulp;
    e.max_ulp_at = x;
  }
  e.max_rel_eps = std::max(e.max_rel_eps, err / std::fabs(exact) / kFltEpsilon);
}

}  // namespace

const std::vector<std::string>& ApproxFunctions() {
  static const std::vector<std::string> names = {"exp", "log", "erf", "tanh", "sigmoid", "expm1"};
  return names;
}

ApproxError MeasureApproxError(const std::string& function, Isa isa, uint64_t stride,
                               uint64_t first, const ParallelFor& parallel_for) {
  const auto body = OneOpBody(function);
  SnippetOptions options;
  options.isa = isa;
  auto kernel = SnippetKernel::Compile(*body, options);
  TESSEL_CHECK_MSG(kernel.ok(), kernel.status().message().c_str());
  const uint64_t count =
      first < (uint64_t{1} << 32) ? ((uint64_t{1} << 32) - first + stride - 1) / stride : 0;
  const int64_t chunks = static_cast<int64_t>((count + kChunk - 1) / kChunk);
  ApproxError total;
  total.function = function;
  std::mutex mu;
  auto run_chunk = [&](int64_t c) {
    std::vector<float> in(kChunk, 0.0f), out(kChunk);
    int64_t n = 0;
    for (; n < kChunk; ++n) {
      const uint64_t k = static_cast<uint64_t>(c) * kChunk + static_cast<uint64_t>(n);
      if (k >= count) break;
      const uint32_t bits = static_cast<uint32_t>(first + k * stride);
      std::memcpy(&in[static_cast<size_t>(n)], &bits, 4);
    }
    (*kernel)->Run({in.data()}, {out.data()});
    ApproxError local;
    for (int64_t i = 0; i < n; ++i) {
      const float x = in[static_cast<size_t>(i)];
      if (std::isnan(x) || (function == "expm1" && !(x < 0))) continue;
      Score(function, x, out[static_cast<size_t>(i)], local);
    }
    std::lock_guard<std::mutex> lock(mu);
    Merge(total, local);
  };
  if (parallel_for) {
    parallel_for(chunks, run_chunk);
  } else {
    for (int64_t c = 0; c < chunks; ++c) run_chunk(c);
  }
  return total;
}

}  // namespace tessel::snippets
