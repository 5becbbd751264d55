#include "passes/fold_batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// x -> Conv(W[, B]) -> c -> BatchNormalization -> y.
struct ConvBn {
  ir::Graph g;
  ir::Value *x, *c, *y, *w, *mean;
  explicit ConvBn(bool bias) {
    g.set_opset_version(15);
    x = g.AddValue("x", DType::kFloat32, {1, 3, 6, 5}, true);
    g.inputs() = {x};
    w = g.AddConstant("w", RandomFloats({4, 3, 3, 3}, 1));
    std::vector<ir::Value*> conv_inputs = {x, w};
    if (bias) conv_inputs.push_back(g.AddConstant("b", RandomFloats({4}, 2)));
    Tensor var = RandomFloats({4}, 6);
    for (int64_t i = 0; i < 4; ++i) var.data<float>()[i] = 0.5f + std::fabs(var.data<float>()[i]);
    mean = g.AddConstant("mean", RandomFloats({4}, 5));
    c = g.AddValue("c");
    y = g.AddValue("y");
    g.AddNode("Conv", "conv", conv_inputs, {c})->attrs.Set("pads", std::vector<int64_t>(4, 1));
    g.AddNode("BatchNormalization", "bn",
              {c, g.AddConstant("scale", RandomFloats({4}, 3)),
               g.AddConstant("shift", RandomFloats({4}, 4)), mean, g.AddConstant("var", var)},
              {y})
        ->attrs.Set("epsilon", 1e-3f);
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

TEST(FoldBatchNorm, Folds_into_the_conv_with_and_without_a_bias) {
  for (const bool bias : {true, false}) {
    ConvBn t(bias);
    const std::vector<Tensor> inputs = {RandomFloats({1, 3, 6, 5}, 7)};
    const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
    ASSERT_TRUE(FoldBatchNorm(t.g).ok());
    ASSERT_EQ(t.g.nodes().size(), 1u);
    const ir::Node& conv = *t.g.nodes()[0];
    EXPECT_EQ(conv.op_type, "Conv");
    EXPECT_EQ(conv.outputs[0], t.y);
    EXPECT_EQ(t.y->producer, &conv);
    ASSERT_EQ(conv.inputs.size(), 3u);
    EXPECT_NE(conv.inputs[1], t.w);  // a new constant: W may have other readers
    ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
  }
}

TEST(FoldBatchNorm, A_conv_read_elsewhere_keeps_its_output_and_the_bn_becomes_per_channel_ops) {
  ConvBn t(true);
  t.g.outputs().push_back(t.c);
  const std::vector<Tensor> inputs = {RandomFloats({1, 3, 6, 5}, 7)};
  const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
  ASSERT_TRUE(FoldBatchNorm(t.g).ok());
  std::vector<std::string> ops;
  for (const auto& n : t.g.nodes()) ops.push_back(n->op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "Sub", "Mul", "Add"}));
  EXPECT_EQ(t.g.nodes()[0]->outputs[0], t.c);
  EXPECT_EQ(t.y->producer, t.g.nodes()[3].get());
  // Per-channel constants broadcast over axis 1.
  EXPECT_EQ(t.g.nodes()[2]->inputs[1]->shape, (Shape{4, 1, 1}));
  ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
}

TEST(FoldBatchNorm, A_bn_of_features_or_volumes_becomes_per_channel_ops) {
  for (const Shape& shape : {Shape{2, 5}, Shape{1, 5, 2, 3, 4}}) {
    ir::Graph g;
    g.set_opset_version(15);
    ir::Value* x = g.AddValue("x", DType::kFloat32, shape, true);
    g.inputs() = {x};
    Tensor var = RandomFloats({5}, 6);
    for (int64_t i = 0; i < 5; ++i) var.data<float>()[i] = 0.5f + std::fabs(var.data<float>()[i]);
    ir::Value* y = g.AddValue("y");
    g.AddNode("BatchNormalization", "bn",
              {x, g.AddConstant("scale", RandomFloats({5}, 3)),
               g.AddConstant("shift", RandomFloats({5}, 4)),
               g.AddConstant("mean", RandomFloats({5}, 5)), g.AddConstant("var", var)},
              {y});
    g.outputs() = {y};
    ASSERT_TRUE(InferShapes(g).ok());
    const std::vector<Tensor> inputs = {RandomFloats(shape, 7)};
    const std::vector<Tensor> before = EvaluateGraph(g, inputs);
    ASSERT_TRUE(FoldBatchNorm(g).ok());
    ASSERT_EQ(g.nodes().size(), 3u) << ShapeToString(shape);
    EXPECT_EQ(g.nodes()[2]->op_type, "Add");
    ExpectAllNear(before, EvaluateGraph(g, inputs), 1e-5f);
  }
}

TEST(FoldBatchNorm, Leaves_statistics_computed_at_run_time) {
  ConvBn t(true);
  // The mean becomes a graph input: nothing to fold at compile time.
  t.mean->constant = Tensor();
  t.g.inputs().push_back(t.mean);
  ASSERT_TRUE(FoldBatchNorm(t.g).ok());
  EXPECT_EQ(t.g.nodes().size(), 2u);
  EXPECT_EQ(t.g.nodes()[1]->op_type, "BatchNormalization");
}

}  // namespace
}  // namespace tessel::passes
