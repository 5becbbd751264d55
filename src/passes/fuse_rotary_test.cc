#include "passes/fuse_rotary.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "ops/op_test_util.h"
#include "passes/pass_test_util.h"

namespace tessel::passes {
namespace {

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();  // a Slice to the end

// Rotary embeddings as the exporters write them out.
struct Rope : testing::PassGraph {
  // x[..., start:end:step] on the last axis.
  ir::Value* Slice(ir::Value* x, int64_t start, int64_t end, int64_t step = 1) {
    return Op("Slice", {x, Ints({start}), Ints({end}), Ints({-1}), Ints({step})});
  }
  ir::Value* Concat(const std::vector<ir::Value*>& in) {
    ir::Value* y = Op("Concat", in);
    y->producer->attrs.Set("axis", int64_t{-1});
    return y;
  }
  // rotate_half(x): cat(-x[..., R/2:], x[..., :R/2]).
  ir::Value* RotateHalf(ir::Value* x, int64_t r) {
    return Concat({Op("Neg", {Slice(x, r / 2, kEnd)}), Slice(x, 0, r / 2)});
  }
  // timm's rot(x): stack([-x[..., 1::2], x[..., ::2]], -1).reshape(x.shape).
  ir::Value* Interleaved(ir::Value* x, const Shape& shape) {
    ir::Value* odd = Op("Unsqueeze", {Op("Neg", {Slice(x, 1, kEnd, 2)}), Ints({-1})});
    ir::Value* even = Op("Unsqueeze", {Slice(x, 0, kEnd, 2), Ints({-1})});
    return Op("Reshape", {Concat({odd, even}), Ints(std::vector<int64_t>(shape))});
  }
  ir::Value* Embed(ir::Value* x, ir::Value* rot, ir::Value* cos, ir::Value* sin) {
    return Op("Add", {Op("Mul", {x, cos}), Op("Mul", {sin, rot})});
  }
  void ExpectFused(int expected) { ExpectRewritten(FuseRotary, expected); }
};

// Llama's q * cos + rotate_half(q) * sin, cos and sin [S, D].
TEST(FuseRotary, Rotate_half_is_one_node) {
  Rope r;
  ir::Value* x = r.Input("x", {1, 4, 6, 8});
  ir::Value* cos = r.Input("cos", {6, 8});
  ir::Value* sin = r.Input("sin", {1, 1, 6, 8});
  r.Output(r.Embed(x, r.RotateHalf(x, 8), cos, sin));
  r.ExpectFused(1);
  EXPECT_EQ(r.Count("Slice") + r.Count("Concat") + r.Count("Neg") + r.Count("Mul"), 0);
  EXPECT_EQ(r.Count("Rotary"), 1);
}

// Phi's partial rotation: the first R features embedded, the rest after.
TEST(FuseRotary, A_partial_rotation_is_one_node_over_the_whole_features) {
  Rope r;
  ir::Value* x = r.Input("x", {2, 3, 5, 12});
  ir::Value* cos = r.Input("cos", {1, 1, 5, 4});
  ir::Value* sin = r.Input("sin", {1, 1, 5, 4});
  ir::Value* rot = r.Slice(x, 0, 4);
  ir::Value* pass = r.Slice(x, 4, kEnd);
  r.Output(r.Concat({r.Embed(rot, r.RotateHalf(rot, 4), cos, sin), pass}));
  r.ExpectFused(1);
  ASSERT_EQ(r.Count("Rotary"), 1);
  EXPECT_EQ(r.Count("Slice") + r.Count("Concat"), 0);
  for (const auto& n : r.g.nodes()) {
    if (n->op_type == "Rotary") {
      EXPECT_EQ(n->attrs.Int("rotary_dim", 0), 4);
    }
  }
}

// EVA-02's interleaved pairs.
TEST(FuseRotary, Interleaved_pairs_are_one_node) {
  Rope r;
  const Shape shape = {1, 3, 7, 10};
  ir::Value* x = r.Input("x", shape);
  ir::Value* cos = r.Input("cos", {7, 10});
  ir::Value* sin = r.Input("sin", {7, 10});
  r.Output(r.Embed(x, r.Interleaved(x, shape), cos, sin));
  r.ExpectFused(1);
  EXPECT_EQ(r.Count("Slice") + r.Count("Concat") + r.Count("Reshape"), 0);
}

// EVA-02's class token left out of the rotation: x's first row along the
// sequence sliced off and concatenated back before the embedded rest. With
// constant tables the node takes x whole (cos 1, sin 0 on that row).
TEST(FuseRotary, A_prefix_token_left_unrotated_joins_the_node) {
  Rope r;
  const Shape shape = {1, 3, 7, 8};
  ir::Value* x = r.Input("x", shape);
  ir::Value* cos = r.g.AddConstant("cos", ops::test_util::RandomFloats({6, 8}, 21));
  ir::Value* sin = r.g.AddConstant("sin", ops::test_util::RandomFloats({6, 8}, 22));
  auto rows = [&](int64_t start, int64_t end) {
    return r.Op("Slice", {x, r.Ints({start}), r.Ints({end}), r.Ints({2})});
  };
  ir::Value* prefix = rows(0, 1);
  ir::Value* rest = rows(1, 7);
  ir::Value* joined =
      r.Op("Concat", {prefix, r.Embed(rest, r.Interleaved(rest, {1, 3, 6, 8}), cos, sin)});
  joined->producer->attrs.Set("axis", int64_t{2});
  r.Output(joined);
  r.ExpectFused(1);
  EXPECT_EQ(r.Count("Slice") + r.Count("Concat"), 0);
  ASSERT_EQ(r.Count("Rotary"), 1);
  for (const auto& n : r.g.nodes()) {
    if (n->op_type == "Rotary") {
      EXPECT_EQ(n->inputs[0], x);
      EXPECT_EQ(n->inputs[1]->shape, (Shape{7, 8}));
    }
  }
}

// Halves swapped the other way, or a sine of one feature: not a rotary
// embedding the node computes; stays.
TEST(FuseRotary, Other_rotations_stay) {
  for (int variant = 0; variant < 2; ++variant) {
    Rope r;
    ir::Value* x = r.Input("x", {1, 2, 4, 8});
    ir::Value* cos = r.Input("cos", {4, 8});
    ir::Value* sin = r.Input("sin", {4, variant == 1 ? 1 : 8});
    ir::Value* rot = variant == 0 ? r.Concat({r.Op("Neg", {r.Slice(x, 0, 4)}), r.Slice(x, 4, kEnd)})
                                  : r.RotateHalf(x, 8);
    r.Output(r.Embed(x, rot, cos, sin));
    r.ExpectFused(0);
    EXPECT_EQ(r.Count("Rotary"), 0) << variant;
  }
}

}  // namespace
}  // namespace tessel::passes
