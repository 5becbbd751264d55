#include "passes/infer_shapes.h"

#include <gtest/gtest.h>

namespace tessel::passes {
namespace {

TEST(InferShapes, Folded_identity_and_reshape_share_the_constant_instead_of_copying_it) {
  ir::Graph g;
  g.set_opset_version(13);
  ir::Value* w = g.AddConstant("w", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  ir::Value* copy = g.AddValue("copy");
  ir::Value* flat = g.AddValue("flat");
  ir::Value* neg = g.AddValue("neg");
  g.AddNode("Identity", "id", {w}, {copy});
  g.AddNode("Reshape", "reshape",
            {copy, g.AddConstant("shape", Tensor::FromVector<int64_t>({6}, {1}))}, {flat});
  g.AddNode("Neg", "neg", {flat}, {neg});
  g.outputs() = {neg};
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(copy->is_constant() && flat->is_constant() && neg->is_constant());
  EXPECT_EQ(copy->constant.raw_data(), w->constant.raw_data());
  EXPECT_EQ(flat->constant.raw_data(), w->constant.raw_data());
  EXPECT_EQ(flat->constant.shape(), (Shape{6}));
  // Ops that compute still produce their own tensor.
  EXPECT_NE(neg->constant.raw_data(), w->constant.raw_data());
  EXPECT_EQ(neg->constant.data<float>()[5], -6.f);
}

}  // namespace
}  // namespace tessel::passes
