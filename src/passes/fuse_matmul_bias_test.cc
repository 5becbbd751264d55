#include "passes/fuse_matmul_bias.h"

#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// x [2, 3, 4] -> MatMul(W [4, 5]) -> m; m + bias -> s; s + z -> y.
struct Linear {
  ir::Graph g;
  ir::Value *x, *z, *w, *bias, *m, *s, *y;
  explicit Linear(const Shape& bias_shape = {5}) {
    g.set_opset_version(13);
    x = g.AddValue("x", DType::kFloat32, {2, 3, 4}, true);
    z = g.AddValue("z", DType::kFloat32, {2, 3, 5}, true);
    g.inputs() = {x, z};
    w = g.AddConstant("w", RandomFloats({4, 5}, 1));
    bias = g.AddConstant("bias", RandomFloats(bias_shape, 2));
    m = g.AddValue("m");
    s = g.AddValue("s");
    y = g.AddValue("y");
    g.AddNode("MatMul", "matmul", {x, w}, {m});
    g.AddNode("Add", "bias_add", {bias, m}, {s});
    g.AddNode("Add", "residual", {s, z}, {y});
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
  std::vector<Tensor> Inputs() const {
    return {RandomFloats({2, 3, 4}, 3), RandomFloats({2, 3, 5}, 4)};
  }
};

TEST(FuseMatMulBias, Folds_the_bias_and_the_residual_into_one_node) {
  for (const Shape& bias_shape : {Shape{5}, Shape{1, 1, 5}}) {
    Linear t(bias_shape);
    const std::vector<Tensor> before = EvaluateGraph(t.g, t.Inputs());
    ASSERT_TRUE(FuseMatMulBias(t.g).ok());
    ASSERT_EQ(t.g.nodes().size(), 1u);
    const ir::Node& n = *t.g.nodes()[0];
    EXPECT_EQ(n.op_type, "FusedMatMul");
    EXPECT_EQ(n.domain, "tessel");
    EXPECT_EQ(n.name, "matmul");
    EXPECT_EQ(n.inputs, (std::vector<ir::Value*>{t.x, t.w, t.bias, t.z}));
    EXPECT_EQ(n.outputs[0], t.y);
    ExpectAllNear(before, EvaluateGraph(t.g, t.Inputs()), 1e-5f);
  }
}

TEST(FuseMatMulBias, Stops_at_the_bias_when_its_sum_is_read_elsewhere) {
  Linear t;
  t.g.outputs().push_back(t.s);
  const std::vector<Tensor> before = EvaluateGraph(t.g, t.Inputs());
  ASSERT_TRUE(FuseMatMulBias(t.g).ok());
  ASSERT_EQ(t.g.nodes().size(), 2u);
  EXPECT_EQ(t.g.nodes()[0]->op_type, "FusedMatMul");
  EXPECT_EQ(t.g.nodes()[0]->inputs.size(), 3u);
  EXPECT_EQ(t.g.nodes()[1]->op_type, "Add");
  ExpectAllNear(before, EvaluateGraph(t.g, t.Inputs()), 1e-5f);
}

TEST(FuseMatMulBias, Leaves_a_bias_that_is_not_one_row) {
  Linear t(Shape{3, 5});  // varies along the rows: not a bias
  ASSERT_TRUE(FuseMatMulBias(t.g).ok());
  EXPECT_EQ(t.g.nodes().size(), 3u);
  EXPECT_EQ(t.g.nodes()[0]->op_type, "MatMul");
}

TEST(FuseMatMulBias, Leaves_weights_computed_at_run_time) {
  Linear t;
  t.w->constant = Tensor();
  t.g.inputs().push_back(t.w);
  ASSERT_TRUE(FuseMatMulBias(t.g).ok());
  EXPECT_EQ(t.g.nodes().size(), 3u);
}

// Two linear layers summed, (x W1 + b1) + (x W2 + b2): both biased sums see
// the final Add as their sole reader; only one may take it as its residual.
TEST(FuseMatMulBias, Two_linear_layers_meeting_at_one_add_fuse_validly) {
  ir::Graph g;
  g.set_opset_version(13);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3, 4}, true);
  g.inputs() = {x};
  ir::Value* y = g.AddValue("y");
  std::vector<ir::Value*> sums;
  for (int k = 0; k < 2; ++k) {
    const std::string id = std::to_string(k);
    ir::Value* m = g.AddValue("m" + id);
    sums.push_back(g.AddValue("s" + id));
    g.AddNode("MatMul", "matmul" + id, {x, g.AddConstant("w" + id, RandomFloats({4, 5}, 1 + k))},
              {m});
    g.AddNode("Add", "bias" + id, {m, g.AddConstant("b" + id, RandomFloats({5}, 3 + k))},
              {sums.back()});
  }
  g.AddNode("Add", "sum", {sums[0], sums[1]}, {y});
  g.outputs() = {y};
  ASSERT_TRUE(InferShapes(g).ok());
  const std::vector<Tensor> inputs = {RandomFloats({2, 3, 4}, 5)};
  const std::vector<Tensor> before = EvaluateGraph(g, inputs);
  ASSERT_TRUE(FuseMatMulBias(g).ok());
  const Status valid = ir::VerifyGraph(g);
  ASSERT_TRUE(valid.ok()) << valid.message();
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0]->op_type, "FusedMatMul");
  EXPECT_EQ(g.nodes()[1]->op_type, "FusedMatMul");
  EXPECT_EQ(g.nodes()[0]->inputs.size() + g.nodes()[1]->inputs.size(), 7u);  // one residual
  ExpectAllNear(before, EvaluateGraph(g, inputs), 1e-5f);
}

}  // namespace
}  // namespace tessel::passes
