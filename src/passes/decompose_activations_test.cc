#include "passes/decompose_activations.h"

#include <gtest/gtest.h>

#include <set>

#include "ir/verifier.h"
#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// x -> Op(attrs) -> Relu -> y: the decomposition sits between a graph input
// and a reader, and must compute what the op's own kernel computes.
void ExpectDecomposed(const std::string& op_type, const AttributeMap& attrs,
                      const std::set<std::string>& expected_ops, DType dtype = DType::kFloat32) {
  ir::Graph g;
  g.set_opset_version(24);
  ir::Value* x = g.AddValue("x", dtype, {2, 3, 5}, true);
  g.inputs() = {x};
  ir::Value* a = g.AddValue("a");
  ir::Value* y = g.AddValue("y");
  g.AddNode(op_type, "act", {x}, {a})->attrs = attrs;
  g.AddNode("Relu", "relu", {a}, {y});
  g.outputs() = {y};
  ASSERT_TRUE(InferShapes(g).ok());
  const std::vector<Tensor> inputs = {RandomFloats({2, 3, 5}, 1)};
  const std::vector<Tensor> before = EvaluateGraph(g, inputs);
  ASSERT_TRUE(DecomposeActivations(g).ok());
  const Status valid = ir::VerifyGraph(g);
  ASSERT_TRUE(valid.ok()) << valid.message();
  std::set<std::string> ops;
  for (const auto& n : g.nodes()) ops.insert(n->op_type);
  EXPECT_EQ(ops, expected_ops) << op_type;
  EXPECT_EQ(g.nodes().back()->op_type, "Relu");
  ExpectAllNear(before, EvaluateGraph(g, inputs), 1e-6f);
}

TEST(DecomposeActivations, Gelu_becomes_erf_and_arithmetic) {
  ExpectDecomposed("Gelu", {}, {"Mul", "Erf", "Add", "Relu"});
}

TEST(DecomposeActivations, Tanh_approximate_gelu_becomes_tanh_and_arithmetic) {
  AttributeMap a;
  a.Set("approximate", std::string("tanh"));
  ExpectDecomposed("Gelu", a, {"Mul", "Tanh", "Add", "Relu"});
}

TEST(DecomposeActivations, Swish_becomes_a_sigmoid_gate) {
  AttributeMap a;
  a.Set("alpha", 1.5f);
  ExpectDecomposed("Swish", a, {"Mul", "Sigmoid", "Relu"});
}

TEST(DecomposeActivations, Keeps_the_op_for_other_dtypes) {
  ir::Graph g;
  g.set_opset_version(24);
  ir::Value* x = g.AddValue("x", DType::kFloat64, {4}, true);
  g.inputs() = {x};
  ir::Value* y = g.AddValue("y");
  g.AddNode("Gelu", "gelu", {x}, {y});
  g.outputs() = {y};
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(DecomposeActivations(g).ok());
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->op_type, "Gelu");
}

}  // namespace
}  // namespace tessel::passes
