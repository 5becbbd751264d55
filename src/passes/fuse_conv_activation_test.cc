#include "passes/fuse_conv_activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "ir/verifier.h"
#include "ops/op_registry.h"
#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// x -> Conv(W, B) -> c; c + z -> s; Clip(s, 0, 6) -> y, with z a second input.
struct Block {
  ir::Graph g;
  ir::Value *x, *z, *c, *s, *y, *lo;
  Block() {
    g.set_opset_version(13);
    x = g.AddValue("x", DType::kFloat32, {1, 4, 5, 5}, true);
    z = g.AddValue("z", DType::kFloat32, {1, 6, 5, 5}, true);
    g.inputs() = {x, z};
    ir::Value* w = g.AddConstant("w", RandomFloats({6, 4, 3, 3}, 1));
    ir::Value* b = g.AddConstant("b", RandomFloats({6}, 2));
    lo = g.AddConstant("lo", Tensor::FromVector<float>({0.f}, {}));
    ir::Value* hi = g.AddConstant("hi", Tensor::FromVector<float>({0.5f}, {}));
    c = g.AddValue("c");
    s = g.AddValue("s");
    y = g.AddValue("y");
    g.AddNode("Conv", "conv", {x, w, b}, {c})->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    g.AddNode("Add", "add", {z, c}, {s});
    g.AddNode("Clip", "clip", {s, lo, hi}, {y});
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

TEST(FuseConvActivation, Folds_conv_residual_add_and_clip_into_one_node) {
  Block b;
  const std::vector<Tensor> inputs = {RandomFloats({1, 4, 5, 5}, 3), RandomFloats({1, 6, 5, 5}, 4)};
  const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
  ASSERT_TRUE(FuseConvActivation(b.g).ok());
  ASSERT_EQ(b.g.nodes().size(), 1u);
  const ir::Node& n = *b.g.nodes()[0];
  EXPECT_EQ(n.op_type, "FusedConv");
  EXPECT_EQ(n.domain, "tessel");
  EXPECT_EQ(n.name, "conv");
  ASSERT_EQ(n.inputs.size(), 4u);
  EXPECT_EQ(n.inputs[3], b.z);
  EXPECT_EQ(n.outputs[0], b.y);
  EXPECT_EQ(n.attrs.String("activation", ""), "Clip");
  EXPECT_EQ(n.attrs.Float("activation_max", 0), 0.5f);
  ExpectAllNear(before, EvaluateGraph(b.g, inputs), 1e-5f);
}

TEST(FuseConvActivation, Keeps_a_conv_whose_output_has_another_reader) {
  Block b;
  b.g.outputs().push_back(b.c);
  ASSERT_TRUE(FuseConvActivation(b.g).ok());
  ASSERT_EQ(b.g.nodes().size(), 3u);
  EXPECT_EQ(b.g.nodes()[0]->op_type, "Conv");
}

TEST(FuseConvActivation, Keeps_a_clip_whose_bounds_are_computed_at_run_time) {
  Block b;
  ir::Value* lo = b.g.AddValue("lo_input", DType::kFloat32, {}, true);
  b.g.inputs().push_back(lo);
  b.g.nodes()[2]->inputs[1] = lo;
  ASSERT_TRUE(FuseConvActivation(b.g).ok());
  ASSERT_EQ(b.g.nodes().size(), 2u);  // Conv + Add fused, Clip kept
  EXPECT_EQ(b.g.nodes()[0]->op_type, "FusedConv");
  EXPECT_FALSE(b.g.nodes()[0]->attrs.Has("activation"));
  EXPECT_EQ(b.g.nodes()[1]->op_type, "Clip");
}

TEST(FuseConvActivation, Keeps_an_add_that_broadcasts) {
  ir::Graph g;
  g.set_opset_version(13);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 2, 4, 4}, true);
  g.inputs() = {x};
  ir::Value* c = g.AddValue("c");
  ir::Value* s = g.AddValue("s");
  ir::Value* y = g.AddValue("y");
  g.AddNode("Conv", "conv", {x, g.AddConstant("w", RandomFloats({3, 2, 1, 1}, 1))}, {c});
  g.AddNode("Add", "add", {c, g.AddConstant("k", RandomFloats({1, 3, 1, 1}, 2))}, {s});
  g.AddNode("Relu", "relu", {s}, {y});
  g.outputs() = {y};
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(FuseConvActivation(g).ok());
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0]->op_type, "Conv");
}

// ResNet's projection shortcut: two convolutions of one input meet at the
// residual Add, then a Relu. Both see the Add as their sole reader; only one
// may take it, and the graph must stay valid whichever comes first.
TEST(FuseConvActivation, Two_convolutions_meeting_at_one_add_fuse_once) {
  for (const bool shortcut_first : {true, false}) {
    ir::Graph g;
    g.set_opset_version(13);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 4, 6, 6}, true);
    g.inputs() = {x};
    ir::Value* main_out = g.AddValue("main");
    ir::Value* shortcut_out = g.AddValue("shortcut");
    ir::Value* s = g.AddValue("s");
    ir::Value* y = g.AddValue("y");
    auto add_main = [&] {
      g.AddNode("Conv", "main_conv", {x, g.AddConstant("w1", RandomFloats({8, 4, 3, 3}, 1))},
                {main_out})
          ->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    };
    auto add_shortcut = [&] {
      g.AddNode("Conv", "shortcut_conv", {x, g.AddConstant("w2", RandomFloats({8, 4, 1, 1}, 2))},
                {shortcut_out});
    };
    if (shortcut_first) {
      add_shortcut();
      add_main();
    } else {
      add_main();
      add_shortcut();
    }
    g.AddNode("Add", "add", {main_out, shortcut_out}, {s});
    g.AddNode("Relu", "relu", {s}, {y});
    g.outputs() = {y};
    ASSERT_TRUE(InferShapes(g).ok());
    const std::vector<Tensor> inputs = {RandomFloats({1, 4, 6, 6}, 3)};
    const std::vector<Tensor> before = EvaluateGraph(g, inputs);
    ASSERT_TRUE(FuseConvActivation(g).ok());
    const Status valid = ir::VerifyGraph(g);
    ASSERT_TRUE(valid.ok()) << valid.message();
    ASSERT_EQ(g.nodes().size(), 2u);
    EXPECT_EQ(g.nodes()[0]->op_type, "Conv");
    EXPECT_EQ(g.nodes()[1]->op_type, "FusedConv");
    EXPECT_EQ(g.nodes()[1]->attrs.String("activation", ""), "Relu");
    ExpectAllNear(before, EvaluateGraph(g, inputs), 1e-5f);
  }
}

// x -> Conv -> c -> `activation` -> y, the activation built by `add` from c.
struct ConvThen {
  ir::Graph g;
  ir::Value *x, *c;
  explicit ConvThen(const std::function<ir::Value*(ir::Graph&, ir::Value*)>& add) {
    g.set_opset_version(17);
    x = g.AddValue("x", DType::kFloat32, {1, 3, 6, 6}, true);
    g.inputs() = {x};
    c = g.AddValue("c");
    g.AddNode("Conv", "conv",
              {x, g.AddConstant("w", RandomFloats({5, 3, 3, 3}, 1)),
               g.AddConstant("b", RandomFloats({5}, 2))},
              {c})
        ->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    g.outputs() = {add(g, c)};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

ir::Value* Unary(ir::Graph& g, const std::string& op, ir::Value* in, AttributeMap attrs = {}) {
  ir::Value* out = g.AddValue(op + "_out");
  g.AddNode(op, op, {in}, {out})->attrs = std::move(attrs);
  return out;
}

TEST(FuseConvActivation, Folds_sigmoid_leaky_relu_hard_sigmoid_and_hard_swish) {
  AttributeMap leaky;
  leaky.Set("alpha", 0.3f);
  AttributeMap hard;
  hard.Set("alpha", 1.0f / 6);
  hard.Set("beta", 0.5f);
  const std::vector<std::pair<std::string, AttributeMap>> cases = {
      {"Sigmoid", {}}, {"LeakyRelu", leaky}, {"HardSigmoid", hard}, {"HardSwish", {}}};
  for (const auto& [op, attrs] : cases) {
    SCOPED_TRACE(op);
    ConvThen t([&](ir::Graph& g, ir::Value* c) { return Unary(g, op, c, attrs); });
    const std::vector<Tensor> inputs = {RandomFloats({1, 3, 6, 6}, 3)};
    const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
    ASSERT_TRUE(FuseConvActivation(t.g).ok());
    ASSERT_EQ(t.g.nodes().size(), 1u);
    EXPECT_EQ(t.g.nodes()[0]->attrs.String("activation", ""), op);
    ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
  }
}

TEST(FuseConvActivation, Folds_swish_written_as_mul_of_sigmoid_either_way_round) {
  for (const bool sigmoid_first : {true, false}) {
    ConvThen t([&](ir::Graph& g, ir::Value* c) {
      ir::Value* s = Unary(g, "Sigmoid", c);
      ir::Value* y = g.AddValue("y");
      g.AddNode("Mul", "mul",
                sigmoid_first ? std::vector<ir::Value*>{s, c} : std::vector<ir::Value*>{c, s}, {y});
      return y;
    });
    const std::vector<Tensor> inputs = {RandomFloats({1, 3, 6, 6}, 3)};
    const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
    ASSERT_TRUE(FuseConvActivation(t.g).ok());
    ASSERT_EQ(t.g.nodes().size(), 1u);
    EXPECT_EQ(t.g.nodes()[0]->attrs.String("activation", ""), "Swish");
    EXPECT_EQ(t.g.nodes()[0]->outputs[0], t.g.outputs()[0]);
    ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
  }
}

// Opset 13 has no HardSwish: torch writes Mul(y, HardSigmoid(y)) with alpha
// 1/6 and beta 1/2 (MobileNetV3). Other alphas are a gated product, not
// HardSwish, and stay.
TEST(FuseConvActivation, Folds_hard_swish_written_as_mul_of_hard_sigmoid) {
  for (const float alpha : {1.0f / 6, 0.2f}) {
    SCOPED_TRACE(alpha);
    ConvThen t([&](ir::Graph& g, ir::Value* c) {
      AttributeMap attrs;
      attrs.Set("alpha", alpha);
      attrs.Set("beta", 0.5f);
      ir::Value* s = Unary(g, "HardSigmoid", c, attrs);
      ir::Value* y = g.AddValue("y");
      g.AddNode("Mul", "mul", {c, s}, {y});
      return y;
    });
    const std::vector<Tensor> inputs = {RandomFloats({1, 3, 6, 6}, 3)};
    const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
    ASSERT_TRUE(FuseConvActivation(t.g).ok());
    if (alpha == 1.0f / 6) {
      ASSERT_EQ(t.g.nodes().size(), 1u);
      EXPECT_EQ(t.g.nodes()[0]->attrs.String("activation", ""), "HardSwish");
    } else {
      EXPECT_EQ(t.g.nodes().size(), 3u);
    }
    ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
  }
}

TEST(FuseConvActivation, Keeps_a_swish_whose_sigmoid_is_read_elsewhere) {
  ir::Value* gate = nullptr;
  ConvThen t([&](ir::Graph& g, ir::Value* c) {
    gate = Unary(g, "Sigmoid", c);
    ir::Value* y = g.AddValue("y");
    g.AddNode("Mul", "mul", {c, gate}, {y});
    return y;
  });
  t.g.outputs().push_back(gate);
  ASSERT_TRUE(FuseConvActivation(t.g).ok());
  EXPECT_EQ(t.g.nodes().size(), 3u);
  EXPECT_EQ(t.g.nodes()[0]->op_type, "Conv");
}

}  // namespace
}  // namespace tessel::passes
