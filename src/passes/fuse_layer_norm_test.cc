#include "passes/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// PyTorch's nn.LayerNorm at opset 13, over the last `axes` of x [2, 3, 8]:
// ReduceMean, Sub, Pow | Mul, ReduceMean, Add(eps), Sqrt, Div [, Mul, Add].
struct Decomposed {
  ir::Graph g;
  ir::Value *x, *d, *y;
  Decomposed(std::vector<int64_t> axes, bool square_by_mul, bool affine) {
    g.set_opset_version(13);
    x = g.AddValue("x", DType::kFloat32, {2, 3, 8}, true);
    g.inputs() = {x};
    auto node = [&](const std::string& op, std::vector<ir::Value*> in) {
      ir::Value* out = g.AddValue(op + std::to_string(g.nodes().size()));
      ir::Node* n = g.AddNode(op, op + std::to_string(g.nodes().size()), std::move(in), {out});
      if (op == "ReduceMean") n->attrs.Set("axes", axes);
      return out;
    };
    auto scalar = [&](float v) {
      return g.AddConstant(g.UniqueValueName("c"), Tensor::FromVector<float>({v}, {}));
    };
    ir::Value* mean = node("ReduceMean", {x});
    d = node("Sub", {x, mean});
    ir::Value* sq = square_by_mul ? node("Mul", {d, d}) : node("Pow", {d, scalar(2.f)});
    ir::Value* var = node("ReduceMean", {sq});
    ir::Value* s = node("Sqrt", {node("Add", {var, scalar(1e-5f)})});
    y = node("Div", {d, s});
    if (affine) {
      const Shape shape = axes.size() == 1 ? Shape{8} : Shape{3, 8};
      Tensor gamma = RandomFloats(shape, 2), beta = RandomFloats(shape, 3);
      y = node("Add",
               {node("Mul", {y, g.AddConstant("gamma", gamma)}), g.AddConstant("beta", beta)});
    }
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

TEST(FuseLayerNorm, Makes_one_node_of_the_decomposed_form_with_scale_and_shift) {
  for (const bool by_mul : {false, true}) {
    Decomposed t({-1}, by_mul, /*affine=*/true);
    const std::vector<Tensor> inputs = {RandomFloats({2, 3, 8}, 4)};
    const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
    ASSERT_TRUE(FuseLayerNorm(t.g).ok());
    ASSERT_EQ(t.g.nodes().size(), 1u);
    const ir::Node& n = *t.g.nodes()[0];
    EXPECT_EQ(n.op_type, "LayerNormalization");
    EXPECT_EQ(n.attrs.Int("axis", 0), 2);
    EXPECT_FLOAT_EQ(n.attrs.Float("epsilon", 0), 1e-5f);
    EXPECT_EQ(n.inputs.size(), 3u);
    EXPECT_EQ(n.outputs[0], t.y);
    ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
  }
}

TEST(FuseLayerNorm, Two_trailing_axes_without_scale_get_ones) {
  Decomposed t({1, 2}, false, /*affine=*/false);
  const std::vector<Tensor> inputs = {RandomFloats({2, 3, 8}, 4)};
  const std::vector<Tensor> before = EvaluateGraph(t.g, inputs);
  ASSERT_TRUE(FuseLayerNorm(t.g).ok());
  ASSERT_EQ(t.g.nodes().size(), 1u);
  EXPECT_EQ(t.g.nodes()[0]->attrs.Int("axis", 0), 1);
  EXPECT_EQ(t.g.nodes()[0]->inputs[1]->shape, (Shape{3, 8}));
  ExpectAllNear(before, EvaluateGraph(t.g, inputs), 1e-5f);
}

TEST(FuseLayerNorm, Leaves_a_leading_axis_and_a_centred_value_read_elsewhere) {
  Decomposed leading({1}, false, true);  // axis 1 of 3: not trailing
  ASSERT_TRUE(FuseLayerNorm(leading.g).ok());
  EXPECT_GT(leading.g.nodes().size(), 1u);
  Decomposed shared({-1}, false, true);
  shared.g.outputs().push_back(shared.d);
  ASSERT_TRUE(FuseLayerNorm(shared.g).ok());
  EXPECT_GT(shared.g.nodes().size(), 1u);
}

}  // namespace
}  // namespace tessel::passes
