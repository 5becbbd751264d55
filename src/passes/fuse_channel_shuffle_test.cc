#include "passes/fuse_channel_shuffle.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// ShuffleNetV2's unit tail as torchvision exports it: Concat(a, b) ->
// Reshape [1, 2, C, H, W] -> Transpose(0 2 1 3 4) -> Reshape [1, 2C, H, W],
// then one Slice per part along the channels (none: read whole).
struct Shuffle {
  ir::Graph g;
  ir::Value *a, *b, *shuffled;
  std::vector<ir::Value*> parts;
  explicit Shuffle(int num_slices, int64_t channels = 6) {
    g.set_opset_version(13);
    const Shape x = {1, channels, 3, 4};
    a = g.AddValue("a", DType::kFloat32, x, true);
    b = g.AddValue("b", DType::kFloat32, x, true);
    g.inputs() = {a, b};
    auto ints = [&](const std::string& name, std::vector<int64_t> v) {
      const auto n = static_cast<int64_t>(v.size());
      return g.AddConstant(name, Tensor::FromVector<int64_t>(v, {n}));
    };
    ir::Value* cat = g.AddValue("cat");
    ir::Value* grouped = g.AddValue("grouped");
    ir::Value* swapped = g.AddValue("swapped");
    shuffled = g.AddValue("shuffled");
    g.AddNode("Concat", "concat", {a, b}, {cat})->attrs.Set("axis", int64_t{1});
    g.AddNode("Reshape", "view", {cat, ints("g_shape", {1, 2, channels, 3, 4})}, {grouped});
    g.AddNode("Transpose", "swap", {grouped}, {swapped})
        ->attrs.Set("perm", std::vector<int64_t>{0, 2, 1, 3, 4});
    g.AddNode("Reshape", "merge", {swapped, ints("m_shape", {1, 2 * channels, 3, 4})}, {shuffled});
    const int64_t part = 2 * channels / std::max(num_slices, 1);
    for (int k = 0; k < num_slices; ++k) {
      parts.push_back(g.AddValue("part" + std::to_string(k)));
      const std::string n = std::to_string(k);
      g.AddNode("Slice", "slice" + n,
                {shuffled, ints("s" + n, {k * part}), ints("e" + n, {(k + 1) * part}),
                 ints("ax" + n, {1})},
                {parts.back()});
    }
    g.outputs() = num_slices > 0 ? parts : std::vector<ir::Value*>{shuffled};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

std::vector<Tensor> Inputs() {
  return {RandomFloats({1, 6, 3, 4}, 1), RandomFloats({1, 6, 3, 4}, 2)};
}

TEST(FuseChannelShuffle, Folds_the_chain_and_its_two_slices_into_one_node) {
  Shuffle s(2);
  const std::vector<Tensor> before = EvaluateGraph(s.g, Inputs());
  ASSERT_TRUE(FuseChannelShuffle(s.g).ok());
  ASSERT_EQ(s.g.nodes().size(), 1u);
  const ir::Node& n = *s.g.nodes()[0];
  EXPECT_EQ(n.op_type, "ChannelShuffle");
  EXPECT_EQ(n.domain, "tessel");
  EXPECT_EQ(n.inputs, (std::vector<ir::Value*>{s.a, s.b}));
  EXPECT_EQ(n.outputs, s.parts);
  EXPECT_EQ(s.parts[1]->producer, &n);
  ExpectAllNear(before, EvaluateGraph(s.g, Inputs()), 0.f);
}

TEST(FuseChannelShuffle, Keeps_one_output_when_the_shuffled_tensor_is_read_whole) {
  Shuffle s(0);
  const std::vector<Tensor> before = EvaluateGraph(s.g, Inputs());
  ASSERT_TRUE(FuseChannelShuffle(s.g).ok());
  ASSERT_EQ(s.g.nodes().size(), 1u);
  EXPECT_EQ(s.g.nodes()[0]->outputs, std::vector<ir::Value*>{s.shuffled});
  ExpectAllNear(before, EvaluateGraph(s.g, Inputs()), 0.f);
}

TEST(FuseChannelShuffle, Three_equal_slices_become_three_outputs) {
  Shuffle s(3);
  const std::vector<Tensor> before = EvaluateGraph(s.g, Inputs());
  ASSERT_TRUE(FuseChannelShuffle(s.g).ok());
  ASSERT_EQ(s.g.nodes().size(), 1u);
  EXPECT_EQ(s.g.nodes()[0]->outputs.size(), 3u);
  ExpectAllNear(before, EvaluateGraph(s.g, Inputs()), 0.f);
}

TEST(FuseChannelShuffle, Leaves_the_chain_when_an_inner_value_is_a_graph_output) {
  Shuffle s(2);
  s.g.outputs().push_back(s.g.nodes()[0]->outputs[0]);  // the Concat's output
  ASSERT_TRUE(FuseChannelShuffle(s.g).ok());
  EXPECT_EQ(s.g.nodes().size(), 6u);
  EXPECT_EQ(s.g.nodes()[0]->op_type, "Concat");
}

TEST(FuseChannelShuffle, Leaves_a_transpose_that_is_not_the_shuffle) {
  Shuffle s(2);
  s.g.nodes()[2]->attrs.Set("perm", std::vector<int64_t>{0, 1, 2, 4, 3});
  ASSERT_TRUE(InferShapes(s.g).ok());
  ASSERT_TRUE(FuseChannelShuffle(s.g).ok());
  EXPECT_EQ(s.g.nodes().size(), 6u);
}

// The op itself (ops/tensor.cc): each output channel j of the shuffled
// concatenation comes from channel j / G of input j % G.
TEST(ChannelShuffleOp, Gathers_channels_across_inputs_and_splits_the_result) {
  ir::Graph g;
  g.set_opset_version(13);
  ir::Value* a = g.AddValue("a", DType::kFloat32, {1, 2, 1, 1}, true);
  ir::Value* b = g.AddValue("b", DType::kFloat32, {1, 2, 1, 1}, true);
  ir::Value* c = g.AddValue("c", DType::kFloat32, {1, 2, 1, 1}, true);
  ir::Value* y0 = g.AddValue("y0");
  ir::Value* y1 = g.AddValue("y1");
  g.inputs() = {a, b, c};
  ir::Node* n = g.AddNode("ChannelShuffle", "shuffle", {a, b, c}, {y0, y1});
  n->domain = "tessel";
  g.outputs() = {y0, y1};
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(y0->shape, (Shape{1, 3, 1, 1}));
  auto t = [](float x, float y) { return Tensor::FromVector<float>({x, y}, {1, 2, 1, 1}); };
  const std::vector<Tensor> out = EvaluateGraph(g, {t(0, 1), t(10, 11), t(20, 21)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(ops::test_util::Doubles(out[0]), (std::vector<double>{0, 10, 20}));
  EXPECT_EQ(ops::test_util::Doubles(out[1]), (std::vector<double>{1, 11, 21}));
}

TEST(ChannelShuffleOp, Rejects_inputs_of_different_shapes_and_uneven_parts) {
  for (const bool uneven : {false, true}) {
    ir::Graph g;
    g.set_opset_version(13);
    ir::Value* a = g.AddValue("a", DType::kFloat32, {1, 3, 2, 2}, true);
    ir::Value* b = g.AddValue("b", DType::kFloat32, {1, uneven ? 3 : 4, 2, 2}, true);
    std::vector<ir::Value*> outs;
    for (int k = 0; k < (uneven ? 4 : 2); ++k) outs.push_back(g.AddValue("y" + std::to_string(k)));
    g.inputs() = {a, b};
    g.AddNode("ChannelShuffle", "shuffle", {a, b}, outs)->domain = "tessel";
    g.outputs() = outs;
    const Status s = InferShapes(g);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(uneven ? "do not split into 4" : "input 'b'"), std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace tessel::passes
