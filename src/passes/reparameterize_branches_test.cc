#include "passes/reparameterize_branches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ops/op_test_util.h"
#include "passes/fold_batch_norm.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// A block: branch convolutions of x (kernel kh x kw, padded by half),
// identity branches (a BatchNormalization of x, or x itself), summed by a
// chain of Adds into y.
struct BranchSpec {
  int64_t kh = 3, kw = 3;
  bool bias = true;
  std::vector<int64_t> pads = {};  // empty: half the kernel on every side
};
struct Block {
  ir::Graph g;
  ir::Value *x = nullptr, *y = nullptr;
  std::vector<ir::Value*> branch_outputs;

  Block(const Shape& x_shape, int64_t out_channels, int64_t group, int64_t stride,
        const std::vector<BranchSpec>& convs, int bn_identities, bool bare_identity,
        uint32_t seed = 1) {
    g.set_opset_version(17);
    x = g.AddValue("x", DType::kFloat32, x_shape, true);
    g.inputs() = {x};
    const int64_t C = x_shape[1];
    std::vector<ir::Value*> terms;
    for (size_t i = 0; i < convs.size(); ++i) {
      const BranchSpec& s = convs[i];
      const std::string n = "conv" + std::to_string(i);
      std::vector<ir::Value*> in = {
          x, g.AddConstant(n + "/w", RandomFloats({out_channels, C / group, s.kh, s.kw}, seed++))};
      if (s.bias) in.push_back(g.AddConstant(n + "/b", RandomFloats({out_channels}, seed++)));
      ir::Value* out = g.AddValue(n + "/y");
      ir::Node* conv = g.AddNode("Conv", n, in, {out});
      conv->attrs.Set("pads", s.pads.empty()
                                  ? std::vector<int64_t>{s.kh / 2, s.kw / 2, s.kh / 2, s.kw / 2}
                                  : s.pads);
      conv->attrs.Set("group", AttrValue(group));
      conv->attrs.Set("strides", std::vector<int64_t>{stride, stride});
      terms.push_back(out);
      branch_outputs.push_back(out);
    }
    for (int i = 0; i < bn_identities; ++i) {
      const std::string n = "bn" + std::to_string(i);
      Tensor var = RandomFloats({C}, seed++);
      for (int64_t c = 0; c < C; ++c) var.data<float>()[c] = 0.5f + std::fabs(var.data<float>()[c]);
      ir::Value* out = g.AddValue(n + "/y");
      g.AddNode(
          "BatchNormalization", n,
          {x, g.AddConstant(n + "/scale", RandomFloats({C}, seed++)),
           g.AddConstant(n + "/shift", RandomFloats({C}, seed++)),
           g.AddConstant(n + "/mean", RandomFloats({C}, seed++)), g.AddConstant(n + "/var", var)},
          {out});
      terms.push_back(out);
    }
    if (bare_identity) terms.push_back(x);
    ir::Value* sum = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) {
      ir::Value* next = g.AddValue("sum" + std::to_string(i));
      g.AddNode("Add", "add" + std::to_string(i), {sum, terms[i]}, {next});
      sum = next;
    }
    y = sum;
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }

  // FoldBatchNorm then ReparameterizeBranches, as the compiler runs them;
  // the blocks folded.
  int Fold() {
    EXPECT_TRUE(FoldBatchNorm(g).ok());
    StatusOr<int> folded = ReparameterizeBranches(g);
    EXPECT_TRUE(folded.ok()) << folded.status().message();
    return folded.ok() ? *folded : -1;
  }
  std::vector<std::string> Ops() const {
    std::vector<std::string> ops;
    for (const auto& n : g.nodes()) ops.push_back(n->op_type);
    return ops;
  }
};

TEST(ReparameterizeBranches, A_repvgg_block_becomes_one_3x3_conv) {
  // Conv 3x3 + Conv 1x1 + BatchNormalization of x, summed.
  Block b({1, 8, 9, 7}, 8, 1, 1, {{3, 3}, {1, 1}}, 1, false);
  const std::vector<Tensor> inputs = {RandomFloats({1, 8, 9, 7}, 99)};
  const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
  EXPECT_EQ(b.Fold(), 1);
  ASSERT_EQ(b.Ops(), std::vector<std::string>{"Conv"});
  const ir::Node& conv = *b.g.nodes()[0];
  EXPECT_EQ(conv.outputs[0], b.y);
  EXPECT_EQ(conv.inputs[0], b.x);
  EXPECT_EQ(conv.input(1)->shape, (Shape{8, 8, 3, 3}));
  ExpectAllNear(before, EvaluateGraph(b.g, inputs), 1e-4f);
}

TEST(ReparameterizeBranches, Mobileone_branches_grouped_and_asymmetric_kernels_fold) {
  // MobileOne's depthwise stage: three 3x3 branches, a 1x1 and a BN
  // identity, group = channels; ACNet's 3x3 + 1x3 + 3x1; and a bare
  // identity (x itself) with a 5x5 grouped conv.
  struct Case {
    int64_t group;
    std::vector<BranchSpec> convs;
    int bns;
    bool bare;
  };
  const Case cases[] = {{8, {{3, 3}, {3, 3}, {3, 3}, {1, 1, false}}, 1, false},
                        {1, {{3, 3}, {1, 3}, {3, 1}}, 0, false},
                        {2, {{5, 5, false}, {1, 1}}, 2, true}};
  for (const Case& k : cases) {
    Block b({2, 8, 6, 10}, 8, k.group, 1, k.convs, k.bns, k.bare, 7);
    const std::vector<Tensor> inputs = {RandomFloats({2, 8, 6, 10}, 98)};
    const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
    EXPECT_EQ(b.Fold(), 1) << k.convs.size();
    EXPECT_EQ(b.Ops(), std::vector<std::string>{"Conv"});
    ExpectAllNear(before, EvaluateGraph(b.g, inputs), 1e-4f);
  }
}

TEST(ReparameterizeBranches, Constant_terms_fold_into_the_bias) {
  // MobileOne adds a 0 where a block has no identity branch; a per-channel
  // constant [1, C, 1, 1] is a bias too. A constant of the last axis's
  // length ([W] broadcasts over width) is not: the block under it folds,
  // and the Add of the constant stays.
  for (const Shape& shape : {Shape{}, Shape{1, 6, 1, 1}, Shape{6, 1, 1}, Shape{7}}) {
    SCOPED_TRACE(ShapeToString(shape));
    Block b({1, 6, 5, 7}, 6, 1, 1, {{3, 3}, {1, 1}}, 1, false, 21);
    ir::Value* c = b.g.AddConstant("c", RandomFloats(shape, 22));
    ir::Value* sum = b.g.AddValue("sum_c");
    b.g.AddNode("Add", "add_c", {b.y, c}, {sum});
    b.g.outputs() = {sum};
    ASSERT_TRUE(InferShapes(b.g).ok());
    const std::vector<Tensor> inputs = {RandomFloats({1, 6, 5, 7}, 23)};
    const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
    const bool per_channel = shape.size() != 1;
    EXPECT_EQ(b.Fold(), 1);
    if (per_channel) {
      EXPECT_EQ(b.Ops(), std::vector<std::string>{"Conv"});
    } else {
      EXPECT_EQ(b.Ops(), (std::vector<std::string>{"Conv", "Add"}));
    }
    ExpectAllNear(before, EvaluateGraph(b.g, inputs), 1e-4f);
  }
}

TEST(ReparameterizeBranches, A_block_under_a_residual_from_elsewhere_still_folds) {
  // (conv 3x3 (x) + conv 1x1 (x) + BN (x)) + r: r is not a term of x, so
  // the whole tree does not fold, but the block under it does.
  Block b({1, 6, 5, 7}, 6, 1, 1, {{3, 3}, {1, 1}}, 1, false, 31);
  ir::Value* r = b.g.AddValue("r", DType::kFloat32, {1, 6, 5, 7}, true);
  b.g.inputs().push_back(r);
  ir::Value* sum = b.g.AddValue("sum_r");
  b.g.AddNode("Add", "add_r", {b.y, r}, {sum});
  b.g.outputs() = {sum};
  ASSERT_TRUE(InferShapes(b.g).ok());
  const std::vector<Tensor> inputs = {RandomFloats({1, 6, 5, 7}, 32),
                                      RandomFloats({1, 6, 5, 7}, 33)};
  const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
  EXPECT_EQ(b.Fold(), 1);
  EXPECT_EQ(b.Ops(), (std::vector<std::string>{"Conv", "Add"}));
  ExpectAllNear(before, EvaluateGraph(b.g, inputs), 1e-4f);
}

TEST(ReparameterizeBranches, A_strided_block_that_changes_channels_folds_without_identity) {
  Block b({1, 4, 9, 9}, 12, 1, 2, {{3, 3}, {1, 1}}, 0, false);
  const std::vector<Tensor> inputs = {RandomFloats({1, 4, 9, 9}, 97)};
  const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
  EXPECT_EQ(b.Fold(), 1);
  ASSERT_EQ(b.Ops(), std::vector<std::string>{"Conv"});
  EXPECT_EQ(b.g.nodes()[0]->attrs.Ints("strides"), (std::vector<int64_t>{2, 2}));
  ExpectAllNear(before, EvaluateGraph(b.g, inputs), 1e-4f);
}

TEST(ReparameterizeBranches, Leaves_what_is_not_one_convolution) {
  const Shape shape = {1, 4, 6, 6};
  {  // A branch also read outside the block.
    Block b(shape, 4, 1, 1, {{3, 3}, {1, 1}}, 0, false);
    b.g.outputs().push_back(b.branch_outputs[1]);
    EXPECT_EQ(b.Fold(), 0);
    EXPECT_EQ(b.Ops(), (std::vector<std::string>{"Conv", "Conv", "Add"}));
  }
  {  // One branch and the identity: a residual that folds too.
    Block b(shape, 4, 1, 1, {{3, 3}}, 0, true);
    EXPECT_EQ(b.Fold(), 1);
  }
  {  // A branch padded off its centre.
    Block b(shape, 4, 1, 1, {{3, 3, true, {0, 0, 2, 2}}, {1, 1}}, 0, false);
    EXPECT_EQ(b.Fold(), 0);
  }
  {  // Even kernels have no centre.
    Block b(shape, 4, 1, 1, {{2, 2, true, {0, 0, 1, 1}}, {1, 1}}, 0, false);
    EXPECT_EQ(b.Fold(), 0);
  }
  {  // Convolutions of two different inputs.
    Block b(shape, 4, 1, 1, {{3, 3}, {1, 1}}, 0, false);
    ir::Value* x2 = b.g.AddValue("x2", DType::kFloat32, shape, true);
    b.g.inputs().push_back(x2);
    b.g.nodes()[1]->inputs[0] = x2;
    EXPECT_EQ(b.Fold(), 0);
  }
}

TEST(ReparameterizeBranches, Random_blocks_match_the_reference) {
  std::mt19937 rng(5);
  int folded = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t group = std::vector<int64_t>{1, 2, 4}[rng() % 3];
    const int64_t C = group * (1 + static_cast<int64_t>(rng() % 3));
    const bool identity_ok = rng() % 3 != 0;
    const int64_t O = identity_ok ? C : group * (1 + static_cast<int64_t>(rng() % 4));
    const int64_t stride = identity_ok ? 1 : 1 + static_cast<int64_t>(rng() % 2);
    std::vector<BranchSpec> convs(1 + rng() % 3);
    for (BranchSpec& s : convs) {
      s.kh = 1 + 2 * static_cast<int64_t>(rng() % 3);
      s.kw = 1 + 2 * static_cast<int64_t>(rng() % 3);
      s.bias = rng() % 2;
    }
    const int bns = identity_ok ? static_cast<int>(rng() % 3) : 0;
    const bool bare = identity_ok && rng() % 2;
    const Shape shape = {1 + static_cast<int64_t>(rng() % 2), C,
                         3 + static_cast<int64_t>(rng() % 6), 3 + static_cast<int64_t>(rng() % 6)};
    SCOPED_TRACE("trial " + std::to_string(trial));
    Block b(shape, O, group, stride, convs, bns, bare, 100 + static_cast<uint32_t>(trial) * 20);
    const std::vector<Tensor> inputs = {RandomFloats(shape, 300 + static_cast<uint32_t>(trial))};
    const std::vector<Tensor> before = EvaluateGraph(b.g, inputs);
    const int n = b.Fold();
    const bool sums = convs.size() + static_cast<size_t>(bns) + (bare ? 1 : 0) >= 2;
    EXPECT_EQ(n, sums ? 1 : 0);
    if (sums) {
      EXPECT_EQ(b.Ops(), std::vector<std::string>{"Conv"});
    }
    folded += n;
    ExpectAllNear(before, EvaluateGraph(b.g, inputs), 2e-4f);
  }
  EXPECT_GT(folded, 20);
}

// x -> Conv (cin -> mid, k x k, stride, dilation) -> Conv 1x1 (mid -> out) -> y.
struct Chain {
  ir::Graph g;
  ir::Value *x, *mid, *y;
  Chain(int64_t cin, int64_t mid_channels, int64_t out, int64_t k, int64_t stride, int64_t dilation,
        bool biases, uint32_t seed) {
    g.set_opset_version(17);
    x = g.AddValue("x", DType::kFloat32, {1, cin, 9, 8}, true);
    g.inputs() = {x};
    std::vector<ir::Value*> in1 = {
        x, g.AddConstant("w1", RandomFloats({mid_channels, cin, k, k}, seed))};
    std::vector<ir::Value*> in2 = {
        nullptr, g.AddConstant("w2", RandomFloats({out, mid_channels, 1, 1}, seed + 1))};
    if (biases) {
      in1.push_back(g.AddConstant("b1", RandomFloats({mid_channels}, seed + 2)));
      in2.push_back(g.AddConstant("b2", RandomFloats({out}, seed + 3)));
    }
    mid = g.AddValue("mid");
    in2[0] = mid;
    ir::Node* first = g.AddNode("Conv", "first", in1, {mid});
    first->attrs.Set("strides", std::vector<int64_t>{stride, stride});
    first->attrs.Set("dilations", std::vector<int64_t>{dilation, dilation});
    first->attrs.Set("pads", std::vector<int64_t>(4, k / 2));
    y = g.AddValue("y");
    g.AddNode("Conv", "second", in2, {y});
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

TEST(ReparameterizeBranches, A_1x1_after_a_convolution_folds_when_no_dearer) {
  struct Case {
    int64_t cin, mid, out, k, stride, dilation;
    bool biases, folds;
  };
  // MobileNetV3's 16 -> 16 projection before a 16 -> 72 expansion folds
  // (1152 multiply-adds a pixel against 1408); a 16 -> 4 -> 64 bottleneck
  // would cost 16 times more folded, and stays.
  const Case cases[] = {{16, 16, 72, 1, 1, 1, true, true}, {6, 8, 5, 3, 2, 1, true, true},
                        {6, 8, 8, 3, 1, 2, false, true},   {5, 12, 3, 5, 1, 1, true, true},
                        {16, 4, 64, 1, 1, 1, true, false}, {3, 2, 16, 3, 1, 1, true, false}};
  uint32_t seed = 40;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::to_string(k.cin) + " -> " + std::to_string(k.mid) + " -> " +
                 std::to_string(k.out) + ", " + std::to_string(k.k) + "x" + std::to_string(k.k));
    Chain c(k.cin, k.mid, k.out, k.k, k.stride, k.dilation, k.biases, seed += 4);
    const std::vector<Tensor> inputs = {RandomFloats(c.x->shape, seed)};
    const std::vector<Tensor> before = EvaluateGraph(c.g, inputs);
    StatusOr<int> folded = ReparameterizeBranches(c.g);
    ASSERT_TRUE(folded.ok()) << folded.status().message();
    EXPECT_EQ(*folded, k.folds ? 1 : 0);
    EXPECT_EQ(c.g.nodes().size(), k.folds ? 1u : 2u);
    EXPECT_EQ(c.y->producer->inputs[0], k.folds ? c.x : c.mid);
    ExpectAllNear(before, EvaluateGraph(c.g, inputs), 1e-4f);
  }
  // The middle also read elsewhere: no fold.
  Chain read(8, 8, 8, 3, 1, 1, true, 90);
  read.g.outputs().push_back(read.mid);
  EXPECT_EQ(*ReparameterizeBranches(read.g), 0);
}

// MixNet's MixConv: x split along its channels (sizes `parts` of
// `channels_per_part` each), a Conv of kernel `kernels[i]` on each part
// (`group` of them per part: depthwise when group = the part's channels),
// concatenated into y; x [1, sum, 9, 8].
struct MixedConv {
  ir::Graph g;
  ir::Value *x = nullptr, *y = nullptr;

  MixedConv(const std::vector<int64_t>& kernels, int64_t part_channels, int64_t out_channels,
            int64_t group, int64_t stride, bool reverse_concat = false, bool slices = false,
            uint32_t seed = 1) {
    g.set_opset_version(17);
    const auto n = static_cast<int64_t>(kernels.size());
    x = g.AddValue("x", DType::kFloat32, {1, n * part_channels, 9, 8}, true);
    g.inputs() = {x};
    std::vector<ir::Value*> parts, outs;
    for (int64_t i = 0; i < n; ++i) parts.push_back(g.AddValue("part" + std::to_string(i)));
    auto ints = [&](const std::string& name, int64_t v) {
      return g.AddConstant(name, Tensor::FromVector<int64_t>({v}, {1}));
    };
    if (slices) {  // torch.export's torch.split
      for (int64_t i = 0; i < n; ++i) {
        const std::string s = std::to_string(i);
        g.AddNode("Slice", "slice" + s,
                  {x, ints("start" + s, i * part_channels),
                   ints("end" + s, (i + 1) * part_channels), ints("axes" + s, 1)},
                  {parts[static_cast<size_t>(i)]});
      }
    } else {
      g.AddNode("Split", "split",
                {x, g.AddConstant("sizes",
                                  Tensor::FromVector<int64_t>(
                                      std::vector<int64_t>(kernels.size(), part_channels), {n}))},
                parts)
          ->attrs.Set("axis", int64_t{1});
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = kernels[static_cast<size_t>(i)];
      const std::string name = "conv" + std::to_string(i);
      ir::Value* out = g.AddValue(name + "/y");
      ir::Node* conv = g.AddNode(
          "Conv", name,
          {parts[static_cast<size_t>(i)],
           g.AddConstant(name + "/w",
                         RandomFloats({out_channels, part_channels / group, k, k}, seed++)),
           g.AddConstant(name + "/b", RandomFloats({out_channels}, seed++))},
          {out});
      conv->attrs.Set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
      conv->attrs.Set("group", AttrValue(group));
      conv->attrs.Set("strides", std::vector<int64_t>{stride, stride});
      outs.push_back(out);
    }
    if (reverse_concat) std::reverse(outs.begin(), outs.end());
    y = g.AddValue("y");
    g.AddNode("Concat", "concat", outs, {y})->attrs.Set("axis", int64_t{1});
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
};

TEST(MergeMixedConvs, Mixed_depthwise_and_grouped_pointwise_convs_become_one_conv) {
  // Depthwise 3x3/5x5/7x7 (stride 2, multiplier 2) and two dense 1x1 parts
  // (MixNet's grouped pointwise convs): one Conv each, group = all parts';
  // the parts cut by a Split, or by Slices as torch.export writes them.
  struct Case {
    std::vector<int64_t> kernels;
    int64_t part_channels, out_channels, group, stride;
    bool slices;
    Shape weight;
    int64_t merged_group;
  };
  const Case cases[] = {{{3, 5, 7}, 4, 8, 4, 2, false, {24, 1, 7, 7}, 12},
                        {{1, 1}, 6, 5, 1, 1, false, {10, 6, 1, 1}, 2},
                        {{3, 5}, 4, 4, 4, 1, true, {8, 1, 5, 5}, 8}};
  for (const Case& c : cases) {
    MixedConv m(c.kernels, c.part_channels, c.out_channels, c.group, c.stride, false, c.slices);
    const std::vector<Tensor> inputs = {RandomFloats(m.x->shape, 99)};
    const std::vector<Tensor> before = EvaluateGraph(m.g, inputs);
    StatusOr<int> merged = MergeMixedConvs(m.g);
    ASSERT_TRUE(merged.ok()) << merged.status().message();
    EXPECT_EQ(*merged, 1);
    ASSERT_EQ(m.g.nodes().size(), 1u);
    const ir::Node& conv = *m.g.nodes()[0];
    EXPECT_EQ(conv.op_type, "Conv");
    EXPECT_EQ(conv.inputs[0], m.x);
    EXPECT_EQ(conv.outputs[0], m.y);
    EXPECT_EQ(conv.input(1)->shape, c.weight);
    EXPECT_EQ(conv.attrs.Int("group", 1), c.merged_group);
    ExpectAllNear(before, EvaluateGraph(m.g, inputs), 1e-4f);
  }
}

TEST(MergeMixedConvs, Parts_that_are_no_groups_of_one_conv_stay) {
  // Concatenated in another order than split (or sliced); dense parts of
  // different output sizes; a part read by a second node too.
  for (bool slices : {false, true}) {
    MixedConv m({3, 5}, 4, 4, 4, 1, /*reverse_concat=*/true, slices);
    EXPECT_EQ(*MergeMixedConvs(m.g), 0);
  }
  {
    MixedConv m({1, 1}, 4, 4, 1, 1);
    ir::Node* second = m.g.nodes()[2].get();
    ASSERT_EQ(second->op_type, "Conv");
    second->inputs[1] = m.g.AddConstant("other/w", RandomFloats({6, 4, 1, 1}, 7));
    second->inputs[2] = m.g.AddConstant("other/b", RandomFloats({6}, 8));
    ASSERT_TRUE(InferShapes(m.g).ok());
    EXPECT_EQ(*MergeMixedConvs(m.g), 0);
  }
  {
    MixedConv m({3, 5}, 4, 4, 4, 1);
    m.g.outputs().push_back(m.g.nodes()[0]->outputs[0]);
    EXPECT_EQ(*MergeMixedConvs(m.g), 0);
  }
}

}  // namespace
}  // namespace tessel::passes
