// Helpers for the op unit tests (src/ops/*_test.cc): tensor literals and
// running one op through shape inference and its reference kernel.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops::test_util {

template <typename T>
Tensor Make(std::vector<T> v, Shape s) {
  return Tensor::FromVector(v, std::move(s));
}
inline Tensor F32(std::vector<float> v, Shape s) { return Make(std::move(v), std::move(s)); }
inline Tensor F64(std::vector<double> v, Shape s) { return Make(std::move(v), std::move(s)); }
inline Tensor I64(std::vector<int64_t> v, Shape s) { return Make(std::move(v), std::move(s)); }
inline Tensor I32(std::vector<int32_t> v, Shape s) { return Make(std::move(v), std::move(s)); }
inline Tensor U8(std::vector<uint8_t> v, Shape s) { return Make(std::move(v), std::move(s)); }
inline Tensor I8(std::vector<int8_t> v, Shape s) { return Make(std::move(v), std::move(s)); }
// float32 values drawn uniformly from [-1, 1), the same for the same seed.
inline Tensor RandomFloats(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}
// A 1-D tensor of `v`.
template <typename T>
Tensor Vec(std::vector<T> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Make(std::move(v), {n});
}

// Runs a typed graph node by node on the reference kernels; returns its
// outputs. Failures are recorded.
inline std::vector<Tensor> EvaluateGraph(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  std::map<const ir::Value*, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) values[g.inputs()[i]] = inputs[i];
  for (const auto& node : g.nodes()) {
    std::vector<const Tensor*> in;
    for (const ir::Value* v : node->inputs) {
      in.push_back(!v ? nullptr : v->is_constant() ? &v->constant : &values.at(v));
    }
    StatusOr<std::vector<Tensor>> out = EvaluateNode(*node, g.opset_version(), in);
    EXPECT_TRUE(out.ok()) << out.status().message();
    if (!out.ok()) return {};
    for (size_t k = 0; k < node->outputs.size(); ++k) values[node->outputs[k]] = (*out)[k];
  }
  std::vector<Tensor> outs;
  for (const ir::Value* v : g.outputs()) outs.push_back(values.at(v));
  return outs;
}

// Float tensors of the same shapes, elementwise within `tolerance`.
inline void ExpectAllNear(const std::vector<Tensor>& a, const std::vector<Tensor>& b,
                          float tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].shape(), b[k].shape()) << "output " << k;
    for (int64_t i = 0; i < a[k].num_elements(); ++i)
      ASSERT_NEAR(a[k].data<float>()[i], b[k].data<float>()[i], tolerance)
          << "output " << k << " at " << i;
  }
}

inline AttributeMap Attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  AttributeMap m;
  for (const auto& [name, value] : list) m.Set(name, value);
  return m;
}

// Runs the op and returns its outputs; on failure records it and returns
// empty tensors, so the caller's value checks fail instead of crashing.
inline std::vector<Tensor> RunAll(const std::string& op, const AttributeMap& attrs,
                                  const std::vector<Tensor>& inputs, int num_outputs,
                                  int opset = 17) {
  auto r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  if (!r.ok()) {
    ADD_FAILURE() << op << ": " << r.status().message();
    return std::vector<Tensor>(num_outputs, Tensor::FromVector<float>({}, {0}));
  }
  return std::move(r).value();
}

inline Tensor Run1(const std::string& op, const AttributeMap& attrs,
                   const std::vector<Tensor>& inputs, int opset = 17) {
  return RunAll(op, attrs, inputs, 1, opset)[0];
}

// The error of a run expected to fail (Ok when it did not fail).
inline Status RunError(const std::string& op, const AttributeMap& attrs,
                       const std::vector<Tensor>& inputs, int num_outputs = 1, int opset = 17) {
  auto r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  return r.ok() ? Status::Ok() : r.status();
}

inline std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}
inline std::vector<int64_t> Ints(const Tensor& t) { return t.ToInt64Vector(); }

}  // namespace tessel::ops::test_util
