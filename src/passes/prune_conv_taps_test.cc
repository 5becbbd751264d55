#include "passes/prune_conv_taps.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// x [1, 4, H, W] -> Conv 3x3 (6 filters, bias), dilation d, padding d.
struct Atrous {
  ir::Graph g;
  ir::Node* conv = nullptr;
  Atrous(int64_t h, int64_t w, std::vector<int64_t> dilations) {
    g.set_opset_version(17);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 4, h, w}, true);
    g.inputs() = {x};
    ir::Value* y = g.AddValue("y");
    conv = g.AddNode("Conv", "conv",
                     {x, g.AddConstant("w", RandomFloats({6, 4, 3, 3}, 1)),
                      g.AddConstant("b", RandomFloats({6}, 2))},
                     {y});
    conv->attrs.Set("dilations", dilations);
    conv->attrs.Set("pads",
                    std::vector<int64_t>{dilations[0], dilations[1], dilations[0], dilations[1]});
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

TEST(PruneConvTaps, A_dilation_past_the_map_leaves_the_centre_tap) {
  Atrous t(5, 5, {6, 6});
  const std::vector<Tensor> inputs = {RandomFloats({1, 4, 5, 5}, 3)};
  const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
  ASSERT_TRUE(PruneConvTaps(t.g).ok());
  EXPECT_EQ(t.conv->inputs[1]->shape, (Shape{6, 4, 1, 1}));
  EXPECT_EQ(t.conv->attrs.Ints("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(t.conv->attrs.Ints("kernel_shape"), (std::vector<int64_t>{1, 1}));
  ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
}

TEST(PruneConvTaps, Each_axis_keeps_its_own_live_taps) {
  // 3 rows: the taps 4 rows away never read one; 20 columns: all do.
  Atrous t(3, 20, {4, 4});
  const std::vector<Tensor> inputs = {RandomFloats({1, 4, 3, 20}, 3)};
  const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
  ASSERT_TRUE(PruneConvTaps(t.g).ok());
  EXPECT_EQ(t.conv->inputs[1]->shape, (Shape{6, 4, 1, 3}));
  EXPECT_EQ(t.conv->attrs.Ints("pads"), (std::vector<int64_t>{0, 4, 0, 4}));
  ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
}

TEST(PruneConvTaps, Leaves_a_conv_whose_taps_all_read_the_input) {
  Atrous t(9, 9, {2, 2});
  const ir::Value* w = t.conv->inputs[1];
  ASSERT_TRUE(PruneConvTaps(t.g).ok());
  EXPECT_EQ(t.conv->inputs[1], w);
}

}  // namespace
}  // namespace tessel::passes
