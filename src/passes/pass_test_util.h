// Graphs for the passes' tests, written the way the exporters write them:
//
//   PassGraph p;
//   ir::Value* x = p.Input("x", {1, 4, 6, 8});     // random values, seeded
//   p.Output(p.Op("Neg", {x}, "y"));                // then a reader, as in a model
//   p.ExpectRewritten(FuseSomething, 1);            // same outputs, verified graph
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/verifier.h"
#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes::testing {

struct PassGraph {
  ir::Graph g;
  std::vector<Tensor> inputs;  // by graph input

  explicit PassGraph(int opset = 17) { g.set_opset_version(opset); }

  ir::Value* Input(const std::string& name, const Shape& shape) {
    ir::Value* v = g.AddValue(name, DType::kFloat32, shape, true);
    g.inputs().push_back(v);
    inputs.push_back(ops::test_util::RandomFloats(shape, static_cast<uint32_t>(inputs.size() + 3)));
    return v;
  }
  ir::Value* Scalar(const std::string& name, float x) {
    return g.AddConstant(name, Tensor::FromVector<float>({x}, {}));
  }
  // An int64 vector constant (its name made up when empty).
  ir::Value* Ints(const std::vector<int64_t>& v, std::string name = "") {
    if (name.empty()) name = "c" + std::to_string(g.values().size());
    return g.AddConstant(name, Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}));
  }
  // A node of one output (named `out`, or made up when empty).
  ir::Value* Op(const std::string& op, const std::vector<ir::Value*>& in, std::string out = "") {
    if (out.empty()) out = op + std::to_string(g.nodes().size());
    ir::Value* y = g.AddValue(out);
    g.AddNode(op, out, in, {y});
    return y;
  }
  ir::Value* Transpose(ir::Value* x, const std::vector<int64_t>& perm, const std::string& out) {
    ir::Value* y = Op("Transpose", {x}, out);
    y->producer->attrs.Set("perm", perm);
    return y;
  }
  // `y`, read by a Relu that is the graph's output (a reader after the
  // rewritten nodes, as in a model), and the shapes inferred.
  void Output(ir::Value* y) {
    g.outputs() = {Op("Relu", {y}, "after")};
    const Status s = InferShapes(g);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  int Count(const std::string& op) const {
    int n = 0;
    for (const auto& node : g.nodes()) n += node->op_type == op;
    return n;
  }
  // Runs `pass` (StatusOr<int>(ir::Graph&)): it rewrote `expected` times,
  // the graph verifies, and its outputs are what they were.
  template <typename Pass>
  void ExpectRewritten(Pass pass, int expected, float tolerance = 1e-5f) {
    const std::vector<Tensor> before = ops::test_util::EvaluateGraph(g, inputs);
    StatusOr<int> done = pass(g);
    ASSERT_TRUE(done.ok()) << done.status().message();
    EXPECT_EQ(*done, expected);
    const Status ok = ir::VerifyGraph(g, true);
    EXPECT_TRUE(ok.ok()) << ok.message();
    ops::test_util::ExpectAllNear(before, ops::test_util::EvaluateGraph(g, inputs), tolerance);
  }
};

}  // namespace tessel::passes::testing
