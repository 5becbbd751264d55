#include "snippets/tokenize.h"

#include <gtest/gtest.h>

#include <random>

#include "ir/verifier.h"
#include "ops/subgraph.h"
#include "snippets/assign_registers.h"
#include "snippets/lower.h"
#include "snippets/statistics.h"
#include "snippets/test_util.h"

namespace tessel::snippets {
namespace {

using testing::Attrs;
using testing::BodyBuilder;

// Graphs are built with BodyBuilder too: inputs, constants, typed nodes.
class TokenizeTest : public ::testing::Test {
 protected:
  // Tokenizes a copy-free graph and returns the op types left, in order.
  std::vector<std::string> Tokenize(ir::Graph& g) {
    original_ = Snapshot(g);
    Status s = TokenizeSnippets(g);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(ir::VerifyGraph(g).ok());
    std::vector<std::string> ops;
    for (const auto& n : g.nodes()) ops.push_back(n->op_type);
    return ops;
  }

  static const ir::Node* OnlySubgraph(const ir::Graph& g) {
    const ir::Node* found = nullptr;
    for (const auto& n : g.nodes()) {
      if (ops::IsSubgraph(*n)) {
        EXPECT_EQ(found, nullptr) << "more than one Subgraph";
        found = n.get();
      }
    }
    return found;
  }

  static std::vector<std::string> BodyOps(const ir::Node& n) {
    std::vector<std::string> ops;
    for (const auto& b : n.body->nodes()) ops.push_back(b->op_type);
    return ops;
  }

  // Runs `g` with the reference kernels (Subgraph nodes interpret their
  // bodies) on seeded inputs.
  static std::vector<Tensor> Evaluate(const ir::Graph& g, uint32_t seed) {
    std::mt19937 rng(seed);
    std::unordered_map<const ir::Value*, Tensor> values;
    for (const ir::Value* in : g.inputs()) {
      values[in] = testing::RandomTensor(in->dtype, in->shape, rng, -3, 3, false);
    }
    for (const auto& n : g.nodes()) {
      std::vector<const Tensor*> in;
      for (const ir::Value* v : n->inputs) {
        in.push_back(!v ? nullptr : v->is_constant() ? &v->constant : &values.at(v));
      }
      auto outs = ops::EvaluateNode(*n, g.opset_version(), in);
      EXPECT_TRUE(outs.ok()) << outs.status().message();
      for (size_t k = 0; k < n->outputs.size(); ++k) values[n->outputs[k]] = (*outs)[k];
    }
    std::vector<Tensor> out;
    for (const ir::Value* o : g.outputs()) out.push_back(values.at(o));
    return out;
  }

  // Same outputs before and after tokenization, and every Subgraph lowers
  // within the AVX2 register budget.
  void ExpectEquivalent(const ir::Graph& g) {
    const auto after = Evaluate(g, 7);
    ASSERT_EQ(after.size(), original_.size());
    for (size_t i = 0; i < after.size(); ++i) {
      testing::ExpectClose(after[i], original_[i], 0, 0, "output " + std::to_string(i));
    }
    for (const auto& n : g.nodes()) {
      if (!ops::IsSubgraph(*n)) continue;
      EXPECT_TRUE(ops::ValidateSubgraph(*n, g.opset_version()).ok());
      auto ir = LowerSubgraph(*n->body);
      ASSERT_TRUE(ir.ok()) << ir.status().message();
      EXPECT_TRUE(AssignRegisters(*ir, ir->body, 16).ok()) << n->name;
    }
  }

  std::vector<Tensor> Snapshot(const ir::Graph& g) { return Evaluate(g, 7); }

  std::vector<Tensor> original_;
  std::mt19937 rng_{1};
};

TEST_F(TokenizeTest, A_long_chain_is_cut_into_subgraphs_of_at_most_max_ops) {
  BodyBuilder b;
  ir::Graph& g = b.graph();
  ir::Value* v = b.Input("x", {1, 64});
  for (int i = 0; i < 100; ++i) v = b.Op(i % 2 ? "Relu" : "Neg", {v});
  b.Output(v);
  const std::vector<std::string> ops = Tokenize(g);
  // 100 ops, 32 at most in each: four subgraphs, in a chain.
  EXPECT_EQ(ops, (std::vector<std::string>(4, "Subgraph")));
  size_t fused = 0;
  for (const auto& n : g.nodes()) {
    EXPECT_LE(n->body->nodes().size(), 32u);
    fused += n->body->nodes().size();
  }
  EXPECT_EQ(fused, 100u);
  ExpectEquivalent(g);
}

TEST_F(TokenizeTest, GeLU_with_its_bias_add_is_one_subgraph) {
  BodyBuilder b;
  ir::Graph& g = b.graph();
  ir::Value* x = b.Input("x", {1, 8, 64});
  ir::Value* bias = g.AddConstant("bias", testing::RandomTensor(DType::kFloat32, {64}, rng_));
  ir::Value* h = b.Op("Add", {bias, x});
  ir::Value* e = b.Op("Erf", {b.Op("Div", {h, b.Scalar(1.41421354f)})});
  ir::Value* y = b.Op("Mul", {b.Op("Mul", {h, b.Op("Add", {e, b.Scalar(1.0f)})}), b.Scalar(0.5f)});
  b.Output(y);
  EXPECT_EQ(Tokenize(g), (std::vector<std::string>{"Subgraph"}));
  const ir::Node* s = OnlySubgraph(g);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(BodyOps(*s), (std::vector<std::string>{"Add", "Div", "Erf", "Add", "Mul", "Mul"}));
  ASSERT_EQ(s->inputs.size(), 2u);  // the bias and x; the scalars are immediates
  EXPECT_EQ(s->inputs[0]->name, "bias");
  EXPECT_EQ(s->inputs[1]->name, "x");
  ASSERT_EQ(s->outputs.size(), 1u);
  EXPECT_EQ(s->outputs[0], y);  // outer values keep their identity
  ExpectEquivalent(g);

  const SnippetReport r = ReportSnippets(g);
  ASSERT_EQ(r.snippets.size(), 1u);
  // Before: six ops over 512 floats each (Add reads the 64-float bias, the
  // scalar ops a 4-byte constant); after: x, bias and y once.
  const int64_t t = 512 * 4;
  EXPECT_EQ(r.snippets[0].bytes_before,
            (t + 256 + t) + (t + 4 + t) + (t + t) + (t + 4 + t) + (3 * t) + (t + 4 + t));
  EXPECT_EQ(r.snippets[0].bytes_after, t + 256 + t);
  EXPECT_EQ(r.snippets[0].immediates, 3);
  EXPECT_GT(r.snippets[0].registers_avx2, 0);
}

TEST_F(TokenizeTest, Tanh_GeLU_with_Pow_SiLU_and_HardSwish_are_one_subgraph_each) {
  {
    BodyBuilder b;
    ir::Value* x = b.Input("x", {4, 33});
    ir::Value* cube = b.Op("Pow", {x, b.Scalar(3.0f)});
    ir::Value* inner = b.Op("Add", {x, b.Op("Mul", {cube, b.Scalar(0.044715f)})});
    ir::Value* t = b.Op("Tanh", {b.Op("Mul", {inner, b.Scalar(0.7978846f)})});
    ir::Value* half_x = b.Op("Mul", {x, b.Scalar(0.5f)});
    b.Output(b.Op("Mul", {half_x, b.Op("Add", {t, b.Scalar(1.0f)})}));
    EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph"}));
    ExpectEquivalent(b.graph());
  }
  {
    BodyBuilder b;
    ir::Value* x = b.Input("x", {2, 3, 5, 5});
    b.Output(b.Op("Mul", {x, b.Op("Sigmoid", {x})}));
    EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph"}));
    EXPECT_EQ(BodyOps(*OnlySubgraph(b.graph())), (std::vector<std::string>{"Sigmoid", "Mul"}));
    ExpectEquivalent(b.graph());
  }
  {
    BodyBuilder b;
    ir::Value* x = b.Input("x", {17});
    ir::Value* relu6 =
        b.Op("Clip", {b.Op("Add", {x, b.Scalar(3.0f)}), b.Scalar(0.0f), b.Scalar(6.0f)});
    b.Output(b.Op("Div", {b.Op("Mul", {x, relu6}), b.Scalar(6.0f)}));
    b.Output(b.Op("HardSwish", {b.Input("z", {17})}));
    EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph", "Subgraph"}));
    ExpectEquivalent(b.graph());
  }
}

TEST_F(TokenizeTest, Residual_add_then_activation_is_one_subgraph_between_opaque_ops) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {4, 16});
  ir::Value* w = b.graph().AddConstant(
      "w", testing::RandomTensor(DType::kFloat32, {16, 16}, rng_, -1, 1, false));
  ir::Value* m = b.Op("MatMul", {x, w});
  ir::Value* r = b.Op("Relu", {b.Op("Add", {m, x})});
  b.Output(b.Op("MatMul", {r, w}));
  EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"MatMul", "Subgraph", "MatMul"}));
  EXPECT_EQ(BodyOps(*OnlySubgraph(b.graph())), (std::vector<std::string>{"Add", "Relu"}));
  ExpectEquivalent(b.graph());
}

TEST_F(TokenizeTest, Never_creates_a_cycle_through_an_outside_node) {
  // a = Relu(x); m = MatMul(a, w); y = Add(a, m): Relu and Add in one
  // subgraph would both feed and read the MatMul.
  BodyBuilder b;
  ir::Value* x = b.Input("x", {4, 4});
  ir::Value* w = b.graph().AddConstant(
      "w", testing::RandomTensor(DType::kFloat32, {4, 4}, rng_, -1, 1, false));
  ir::Value* a = b.Op("Relu", {x});
  ir::Value* m = b.Op("MatMul", {a, w});
  b.Output(b.Op("Add", {a, m}));
  EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph", "MatMul", "Subgraph"}));
  ExpectEquivalent(b.graph());
}

TEST_F(TokenizeTest, Outputs_must_span_the_domain) {
  // r = Relu(bias) is read outside, at its own 8-wide shape: it cannot be an
  // output of the 4x8 subgraph computing Add(x, r).
  BodyBuilder b;
  ir::Value* x = b.Input("x", {4, 8});
  ir::Value* bias = b.Input("bias", {8});
  ir::Value* r = b.Op("Relu", {bias});
  b.Output(b.Op("Add", {x, r}));
  b.Output(b.Op("Softmax", {r}));
  EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph", "Softmax", "Subgraph"}));
  ExpectEquivalent(b.graph());
}

TEST_F(TokenizeTest, A_value_read_outside_becomes_a_second_output) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {3, 7});
  ir::Value* t = b.Op("Tanh", {x});
  b.Output(t);
  b.Output(b.Op("Mul", {t, b.Op("Exp", {x})}));
  EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph"}));
  EXPECT_EQ(OnlySubgraph(b.graph())->outputs.size(), 2u);
  ExpectEquivalent(b.graph());
}

TEST_F(TokenizeTest, Stays_within_the_argument_and_register_budgets) {
  // Eleven inputs summed: one Sum would need 12 arguments. Seventeen scaled
  // copies of x reduced by one Max keep 17 values live at once.
  BodyBuilder b;
  std::vector<ir::Value*> ins;
  for (int i = 0; i < 11; ++i) ins.push_back(b.Input("in" + std::to_string(i), {40}));
  b.Output(b.Op("Sum", ins));
  ir::Value* x = b.Input("x", {40});
  std::vector<ir::Value*> scaled;
  for (int i = 0; i < 17; ++i) scaled.push_back(b.Op("Mul", {x, b.Scalar(0.5f + i)}));
  b.Output(b.Op("Max", scaled));
  const auto ops = Tokenize(b.graph());
  EXPECT_EQ(ops.front(), "Sum");  // left unfused
  for (const auto& n : b.graph().nodes()) {
    if (ops::IsSubgraph(*n)) {
      EXPECT_LE(n->inputs.size() + n->outputs.size(), 10u);
    }
  }
  ExpectEquivalent(b.graph());
}

TEST_F(TokenizeTest, Leaves_unsupported_dtypes_and_dynamic_exponents_alone) {
  BodyBuilder b;
  ir::Value* i = b.Input("i", {5}, DType::kInt64);
  b.Output(b.Op("Add", {i, i}));
  ir::Value* x = b.Input("x", {5});
  b.Output(b.Op("Pow", {x, b.Input("e", {5})}));
  b.Output(b.Op("Pow", {x, b.Scalar(0.5f)}));
  EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Add", "Pow", "Pow"}));
}

TEST_F(TokenizeTest, Fuses_comparisons_logic_and_Where) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {6, 9});
  ir::Value* mask = b.Input("mask", {9}, DType::kBool);
  ir::Value* keep = b.Op("And", {b.Op("Greater", {x, b.Scalar(0.0f)}), mask});
  b.Output(b.Op("Where", {keep, x, b.Scalar(-1e9f)}));
  EXPECT_EQ(Tokenize(b.graph()), (std::vector<std::string>{"Subgraph"}));
  ExpectEquivalent(b.graph());
}

}  // namespace
}  // namespace tessel::snippets
