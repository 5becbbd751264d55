// Helpers for the snippets tests: build Subgraph bodies by hand, run them
// with the reference kernels and through SnippetKernel, compare.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ops/op_registry.h"
#include "ops/op_test_util.h"
#include "snippets/snippet_kernel.h"

namespace tessel::snippets::testing {

// A body under construction: inputs, scalar constants and ONNX nodes, each
// typed by shape inference as it is added.
class BodyBuilder {
 public:
  explicit BodyBuilder(int opset = 17) : g_(std::make_unique<ir::Graph>()) {
    g_->set_opset_version(opset);
    g_->set_name("test_body");
  }
  ir::Value* Input(const std::string& name, Shape shape, DType dtype = DType::kFloat32) {
    ir::Value* v = g_->AddValue(name, dtype, std::move(shape), true);
    g_->inputs().push_back(v);
    return v;
  }
  ir::Value* Scalar(float v, Shape shape = {}) {
    return g_->AddConstant(g_->UniqueValueName("c"),
                           Tensor::FromVector<float>({v}, std::move(shape)));
  }
  ir::Value* Op(const std::string& op_type, std::vector<ir::Value*> inputs,
                AttributeMap attrs = {}) {
    ir::Value* out = g_->AddValue(g_->UniqueValueName(op_type + "_out"));
    ir::Node* n = g_->AddNode(op_type, op_type + "_" + std::to_string(g_->nodes().size()),
                              std::move(inputs), {out});
    n->attrs = std::move(attrs);
    Status s = ops::InferNode(*n, g_->opset_version());
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  }
  void Output(ir::Value* v) { g_->outputs().push_back(v); }
  ir::Graph& graph() { return *g_; }
  std::unique_ptr<ir::Graph> Take() { return std::move(g_); }

 private:
  std::unique_ptr<ir::Graph> g_;
};

inline AttributeMap Attrs(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  AttributeMap m;
  for (const auto& [k, v] : list) m.Set(k, v);
  return m;
}

// The reference: every body node through its reference kernel.
inline std::vector<Tensor> RunReference(const ir::Graph& body, const std::vector<Tensor>& inputs) {
  return ops::test_util::EvaluateGraph(body, inputs);
}

// Items in reverse order, so a kernel that depends on item order shows it.
// Tests use a small grain so that modest shapes split into many items.
inline void ReverseParallelFor(int64_t n, const std::function<void(int64_t)>& fn) {
  for (int64_t i = n - 1; i >= 0; --i) fn(i);
}

inline std::vector<Tensor> RunSnippet(const ir::Graph& body, const std::vector<Tensor>& inputs,
                                      Isa isa, int64_t grain = 512) {
  SnippetOptions options;
  options.isa = isa;
  options.grain_elements = grain;
  options.min_parallel_elements = 0;
  auto kernel = SnippetKernel::Compile(body, options);
  EXPECT_TRUE(kernel.ok()) << kernel.status().message();
  if (!kernel.ok()) return {};
  EXPECT_EQ((*kernel)->isa(), isa) << (*kernel)->jit_status().message();
  std::vector<const void*> in;
  for (const Tensor& t : inputs) in.push_back(t.raw_data());
  std::vector<Tensor> outs;
  std::vector<void*> out;
  for (const ir::Value* o : body.outputs()) outs.emplace_back(o->dtype, o->shape);
  for (Tensor& t : outs) out.push_back(t.raw_data());
  (*kernel)->Run(in, out, ReverseParallelFor);
  return outs;
}

// Uniform in [lo, hi), with special values (zeros, infinities, NaN,
// subnormals, huge values) sprinkled in when `specials`.
inline Tensor RandomTensor(DType dtype, const Shape& shape, std::mt19937& rng, float lo = -4,
                           float hi = 4, bool specials = true) {
  Tensor t(dtype, shape);
  const int64_t n = t.num_elements();
  if (dtype == DType::kBool) {
    bool* p = t.data<bool>();
    for (int64_t i = 0; i < n; ++i) p[i] = (rng() & 1) != 0;
    return t;
  }
  if (dtype != DType::kFloat32) {
    DispatchDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* p = static_cast<T*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i) p[i] = FromDouble<T>(static_cast<double>(rng() % 7) - 3);
    });
    return t;
  }
  static const float kSpecials[] = {0.0f,    -0.0f, INFINITY, -INFINITY, NAN,   1e-40f,
                                    -1e-40f, 1e30f, -1e30f,   1.0f,      -1.0f, 0.5f};
  std::uniform_real_distribution<float> u(lo, hi);
  float* p = t.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    p[i] = (specials && rng() % 8 == 0) ? kSpecials[rng() % std::size(kSpecials)] : u(rng);
  }
  return t;
}

inline double UlpOf(double r) {
  const float rf = static_cast<float>(std::fabs(r));
  if (rf < 1.17549435e-38f) return std::ldexp(1.0, -149);
  int e;
  std::frexp(rf, &e);
  return std::ldexp(1.0, e - 24);
}

// Element i of `got` vs `want`: equal (NaN matches NaN), or within `ulps`
// units in the last place of `want`, or within `atol`.
inline bool Close(float got, float want, double ulps, double atol) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (got == want) return true;
  if (std::isinf(got) || std::isinf(want)) return false;
  const double err = std::fabs(static_cast<double>(got) - want);
  return err <= atol || err <= ulps * UlpOf(want);
}

// Compares every element; reports the first few mismatches.
inline void ExpectClose(const Tensor& got, const Tensor& want, double ulps, double atol,
                        const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    bool ok;
    std::string g, w;
    if (got.dtype() == DType::kBool) {
      ok = got.data<bool>()[i] == want.data<bool>()[i];
      g = std::to_string(got.data<bool>()[i]);
      w = std::to_string(want.data<bool>()[i]);
    } else {
      const float a = got.data<float>()[i], b = want.data<float>()[i];
      ok = Close(a, b, ulps, atol);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", a);
      g = buf;
      std::snprintf(buf, sizeof buf, "%.9g", b);
      w = buf;
    }
    if (!ok && reported++ < 5) {
      ADD_FAILURE() << what << ": element " << i << ": got " << g << ", want " << w;
    }
  }
}

}  // namespace tessel::snippets::testing
