#include "passes/fuse_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"
#include "passes/pass_test_util.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::RandomFloats;

// Attention graphs: PassGraph with Llama's repeated heads.
struct Attention : testing::PassGraph {
  // Llama's repeat_kv: [B, Hkv, S, D] -> [B, Hkv * reps, S, D].
  ir::Value* Repeat(ir::Value* x, const Shape& s, int64_t reps, const std::string& out) {
    ir::Value* u = Op("Unsqueeze", {x, Ints({2})}, out + ".u");
    ir::Value* e = Op("Expand", {u, Ints({s[0], s[1], reps, s[2], s[3]})}, out + ".e");
    return Op("Reshape", {e, Ints({s[0], s[1] * reps, s[2], s[3]})}, out);
  }
  const ir::Node* Fused() const {
    for (const auto& node : g.nodes()) {
      if (node->op_type == "FusedAttention") return node.get();
    }
    return nullptr;
  }
  void ExpectFused(int expected = 1) { ExpectRewritten(FuseAttention, expected); }
};

// torch's scaled_dot_product_attention as torch.onnx writes it, with Llama's
// grouped-query heads: q * s, (k^T) * s, MatMul, + mask, Softmax, NaN -> 0.
TEST(FuseAttention, Scaled_dot_product_with_grouped_query_heads_is_one_node) {
  const Shape q_shape = {1, 4, 10, 8}, kv_shape = {1, 2, 10, 8};
  Attention a;
  ir::Value* q = a.Input("q", q_shape);
  ir::Value* k = a.Repeat(a.Input("k", kv_shape), kv_shape, 2, "k.rep");
  ir::Value* v = a.Repeat(a.Input("v", kv_shape), kv_shape, 2, "v.rep");
  ir::Value* mask = a.Input("mask", {1, 1, 10, 10});
  const float root = 1 / std::sqrt(std::sqrt(8.f));
  ir::Value* qs = a.Op("Mul", {q, a.Scalar("s1", root)}, "qs");
  ir::Value* kt = a.Transpose(k, {0, 1, 3, 2}, "kt");
  ir::Value* ks = a.Op("Mul", {kt, a.Scalar("s2", root)}, "ks");
  ir::Value* s = a.Op("MatMul", {qs, ks}, "s");
  ir::Value* sm = a.Op("Add", {s, mask}, "sm");
  ir::Value* p = a.Op("Softmax", {sm}, "p");
  ir::Value* nan = a.Op("IsNaN", {p}, "nan");
  ir::Value* pz = a.Op("Where", {nan, a.Scalar("zero", 0.f), p}, "pz");
  a.Output(a.Op("MatMul", {pz, v}, "y"));
  a.ExpectFused();
  const ir::Node* f = a.Fused();
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->attrs.Float("scale", 0), 1 / std::sqrt(8.f), 1e-6);
  EXPECT_EQ(f->attrs.Int("zero_masked_rows", 0), 1);
  // The repeated heads are read as they are: K and V are the inputs.
  EXPECT_EQ(f->inputs[1]->name, "k");
  EXPECT_EQ(f->inputs[2]->name, "v");
  EXPECT_EQ(f->inputs[3]->name, "mask");
  EXPECT_EQ(a.Count("Expand"), 0);
  EXPECT_EQ(a.Count("Softmax"), 0);
  EXPECT_EQ(a.Count("MatMul"), 0);
}

// BERT: heads by Reshape + Transpose, K^T by one Transpose [0, 2, 3, 1], the
// scores divided by the root of the head size, an additive mask.
TEST(FuseAttention, Bert_heads_leave_one_transpose_per_operand) {
  const int64_t S = 12, H = 2, D = 4;
  Attention a;
  ir::Value* heads = a.Ints({1, S, H, D});
  ir::Value* in[3];
  const char* names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    in[i] =
        a.Op("Reshape", {a.Input(names[i], {1, S, H * D}), heads}, std::string(names[i]) + ".h");
  }
  ir::Value* q = a.Transpose(in[0], {0, 2, 1, 3}, "q.t");
  ir::Value* kt = a.Transpose(in[1], {0, 2, 3, 1}, "k.t");
  ir::Value* v = a.Transpose(in[2], {0, 2, 1, 3}, "v.t");
  ir::Value* mask = a.Input("mask", {1, 1, 1, S});
  ir::Value* s = a.Op("MatMul", {q, kt}, "s");
  ir::Value* sd = a.Op("Div", {s, a.Scalar("root", 2.f)}, "sd");
  ir::Value* p = a.Op("Softmax", {a.Op("Add", {mask, sd}, "sm")}, "p");
  a.Output(a.Op("MatMul", {p, v}, "y"));
  a.ExpectFused();
  const ir::Node* f = a.Fused();
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->attrs.Float("scale", 0), 0.5f, 1e-7);
  EXPECT_EQ(f->attrs.Int("zero_masked_rows", 1), 0);
  // K^T transposed back merged with the head Transpose: [0, 2, 1, 3] of k.
  EXPECT_EQ(a.Count("Transpose"), 3);
  ASSERT_NE(f->inputs[1]->producer, nullptr);
  EXPECT_EQ(f->inputs[1]->producer->op_type, "Transpose");
  EXPECT_EQ(f->inputs[1]->producer->attrs.Ints("perm", {}), (std::vector<int64_t>{0, 2, 1, 3}));
}

// torchvision's heads: a Transpose, then a Reshape adding the batch axis.
// The Transpose moves last, next to the attention that reads it.
TEST(FuseAttention, Heads_made_by_a_transpose_and_a_view_end_with_the_transpose) {
  const int64_t S = 9, H = 3, D = 4;
  Attention a;
  ir::Value* to4 = a.Ints({1, H, S, D});
  ir::Value* heads[3];
  const char* names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    ir::Value* x = a.Input(names[i], {S, H, D});
    ir::Value* t = a.Transpose(x, {1, 0, 2}, std::string(names[i]) + ".t");
    heads[i] = a.Op("Reshape", {t, to4}, std::string(names[i]) + ".h");
  }
  ir::Value* kt = a.Transpose(heads[1], {0, 1, 3, 2}, "kt");
  ir::Value* s = a.Op("MatMul", {a.Op("Mul", {heads[0], a.Scalar("c", 0.5f)}, "qs"), kt}, "s");
  a.Output(a.Op("MatMul", {a.Op("Softmax", {s}, "p"), heads[2]}, "y"));
  a.ExpectFused();
  const ir::Node* f = a.Fused();
  ASSERT_NE(f, nullptr);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_NE(f->inputs[i]->producer, nullptr) << i;
    EXPECT_EQ(f->inputs[i]->producer->op_type, "Transpose") << i;
  }
}

// ONNX's Attention (opset 23) runs as FusedAttention: 3-D inputs split into
// heads (grouped-query), a boolean mask and a causal one; with past keys it
// stays.
TEST(FuseAttention, Onnx_attention_becomes_the_fused_node) {
  for (int variant = 0; variant < 3; ++variant) {
    Attention a;
    a.g.set_opset_version(23);
    const bool rank3 = variant != 1;
    ir::Value* q = a.Input("q", rank3 ? Shape{2, 5, 4 * 6} : Shape{2, 4, 5, 6});
    ir::Value* k = a.Input("k", rank3 ? Shape{2, 7, 2 * 6} : Shape{2, 2, 7, 6});
    ir::Value* v = a.Input("v", rank3 ? Shape{2, 7, 2 * 3} : Shape{2, 2, 7, 3});
    std::vector<ir::Value*> in = {q, k, v};
    if (variant == 0) {  // a boolean mask, and causal
      std::vector<bool> keep(5 * 7);
      for (size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 != 1;
      in.push_back(a.g.AddConstant("mask", Tensor::FromVector<bool>(keep, {5, 7})));
    } else if (variant == 1) {  // a float mask per head
      in.push_back(a.Input("mask", {1, 4, 5, 7}));
    } else {  // past keys: stays
      in.push_back(nullptr);
      in.push_back(a.Input("past_k", {2, 2, 3, 6}));
      in.push_back(a.Input("past_v", {2, 2, 3, 3}));
    }
    ir::Value* y = a.g.AddValue("y");
    ir::Node* n = a.g.AddNode("Attention", "attention", in, {y});
    if (rank3) {
      n->attrs.Set("q_num_heads", int64_t{4});
      n->attrs.Set("kv_num_heads", int64_t{2});
    }
    if (variant == 0) n->attrs.Set("is_causal", int64_t{1});
    if (variant == 1) n->attrs.Set("scale", 0.25f);
    a.Output(y);
    a.ExpectFused(variant == 2 ? 0 : 1);
    EXPECT_EQ(a.Count("Attention"), variant == 2 ? 1 : 0) << variant;
  }
}

// What is not attention as the kernel computes it stays as it is.
TEST(FuseAttention, Other_chains_stay) {
  const Shape shape = {1, 2, 6, 4};
  for (int variant = 0; variant < 4; ++variant) {
    Attention a;
    ir::Value* q = a.Input("q", shape);
    ir::Value* k = a.Input("k", shape);
    ir::Value* v = a.Input("v", shape);
    ir::Value* s = a.Op("MatMul", {q, a.Transpose(k, {0, 1, 3, 2}, "kt")}, "s");
    ir::Value* p = nullptr;
    if (variant == 0) {  // a scale per head (XCiT's temperature), not one scalar
      ir::Value* t = a.g.AddConstant("t", RandomFloats({2, 1, 1}, 9));
      p = a.Op("Softmax", {a.Op("Mul", {s, t}, "st")}, "p");
    } else if (variant == 1) {  // softmax over the queries
      p = a.g.AddValue("p");
      a.g.AddNode("Softmax", "p", {s}, {p})->attrs.Set("axis", int64_t{2});
    } else if (variant == 2) {  // the scores read twice
      p = a.Op("Softmax", {s}, "p");
      ir::Value* y = a.Op("MatMul", {p, v}, "y");
      a.Output(a.Op("Add", {y, a.Op("ReduceSum", {s}, "r")}, "sum"));
    } else {  // the probabilities are an output too
      p = a.Op("Softmax", {s}, "p");
    }
    if (variant != 2) a.Output(a.Op("MatMul", {p, v}, "y"));
    if (variant == 3) a.g.outputs().push_back(p);
    StatusOr<int> fused = FuseAttention(a.g);
    ASSERT_TRUE(fused.ok());
    EXPECT_EQ(*fused, 0) << variant;
    EXPECT_EQ(a.Count("Softmax"), 1) << variant;
  }
}

// A query row whose keys are all masked (-inf): softmax gives NaN, torch's
// Where after it zeros; the fused node gives each what the graph gave.
TEST(FuseAttention, Fully_masked_rows_keep_their_answer) {
  for (bool where : {false, true}) {
    Attention a;  // 3 queries, 4 keys
    ir::Value* q = a.Input("q", {1, 1, 3, 4});
    ir::Value* k = a.Input("k", {1, 1, 4, 4});
    ir::Value* v = a.Input("v", {1, 1, 4, 4});
    const float inf = std::numeric_limits<float>::infinity();
    ir::Value* mask = a.g.AddConstant(
        "mask", Tensor::FromVector<float>({0, 0, -inf, 0, -inf, -inf, -inf, -inf, 0, -inf, 0, 0},
                                          {1, 1, 3, 4}));
    ir::Value* s = a.Op("MatMul", {q, a.Transpose(k, {0, 1, 3, 2}, "kt")}, "s");
    ir::Value* p = a.Op("Softmax", {a.Op("Add", {s, mask}, "sm")}, "p");
    if (where) {
      p = a.Op("Where", {a.Op("IsNaN", {p}, "nan"), a.Scalar("zero", 0.f), p}, "pz");
    }
    ir::Value* y = a.Op("MatMul", {p, v}, "y");
    a.g.outputs() = {y};
    const Status inferred = InferShapes(a.g);
    ASSERT_TRUE(inferred.ok()) << inferred.message();
    const std::vector<Tensor> before = EvaluateGraph(a.g, a.inputs);
    ASSERT_EQ(*FuseAttention(a.g), 1);
    const std::vector<Tensor> after = EvaluateGraph(a.g, a.inputs);
    const float* x = before[0].data<float>();
    const float* z = after[0].data<float>();
    for (int64_t i = 0; i < before[0].num_elements(); ++i) {
      const bool masked_row = i / 4 == 1;
      EXPECT_EQ(std::isnan(x[i]), masked_row && !where) << i;
      EXPECT_EQ(std::isnan(z[i]), std::isnan(x[i])) << i;
      if (!std::isnan(x[i])) {
        EXPECT_NEAR(z[i], x[i], 1e-5f) << i;
      }
      if (masked_row && where) {
        EXPECT_EQ(z[i], 0.f);
      }
    }
  }
}

}  // namespace
}  // namespace tessel::passes
