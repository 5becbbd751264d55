// Every fast kernel against the reference kernel of its op, on awkward
// shapes: odd channel counts, 1x1, stride 2, asymmetric padding, groups,
// depthwise, dilation, batched MatMul with broadcasting, Gemm's transposes,
// alpha, beta and bias shapes, the fused residual + activation, Softmax
// axes, pooling with ceil mode and padding, Transpose and Slice copies.
#include "targets/cpu/fast_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "ops/op_registry.h"
#include "ops/op_test_util.h"
#include "snippets/isa.h"
#include "snippets/tokenize.h"
#include "targets/cpu/executor.h"
#include "targets/cpu/thread_pool.h"
#include "targets/testing.h"

namespace tessel::cpu {
namespace {

using ops::test_util::RandomFloats;

// The oneDNN kernels' tests say so and skip in a build without oneDNN
// (TESSEL_WITH_ONEDNN=OFF), where only the hand-written kernels exist.
#if TESSEL_WITH_ONEDNN
#define REQUIRE_ONEDNN() static_cast<void>(0)
#else
#define REQUIRE_ONEDNN() GTEST_SKIP() << "built without oneDNN (TESSEL_WITH_ONEDNN=OFF)"
#endif

// One node over graph inputs (for `variable` positions) and constants.
struct OneNode {
  ir::Graph g;
  ir::Node* node = nullptr;
  std::vector<Tensor> inputs;  // by node input position; undefined: omitted

  OneNode(const std::string& op_type, const std::string& domain, const std::vector<Shape>& shapes,
          const std::vector<bool>& constant, const AttributeMap& attrs, int opset = 17) {
    g.set_opset_version(opset);
    std::vector<ir::Value*> ins;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i].empty() && !constant[i]) {  // omitted optional input
        ins.push_back(nullptr);
        inputs.emplace_back();
        continue;
      }
      Tensor t = RandomFloats(shapes[i], 17 + static_cast<uint32_t>(i));
      const std::string name = "in" + std::to_string(i);
      ir::Value* v =
          constant[i] ? g.AddConstant(name, t) : g.AddValue(name, DType::kFloat32, shapes[i], true);
      if (!constant[i]) g.inputs().push_back(v);
      ins.push_back(v);
      inputs.push_back(std::move(t));
    }
    ir::Value* y = g.AddValue("y", DType::kUndefined);
    node = g.AddNode(op_type, "n", ins, {y});
    node->domain = domain;
    node->attrs = attrs;
    g.outputs().push_back(y);
    const Status s = ops::InferNode(*node, opset);
    EXPECT_TRUE(s.ok()) << s.message();
  }

  std::vector<const Tensor*> InputPtrs() const {
    std::vector<const Tensor*> p;
    for (const Tensor& t : inputs) p.push_back(t.defined() ? &t : nullptr);
    return p;
  }
};

// Runs the fast kernel (which must exist) and the reference on the node and
// compares them elementwise.
void ExpectMatchesReference(OneNode& t) {
  std::unique_ptr<FastKernel> k = SelectFastKernel(*t.node, t.g.opset_version());
  ASSERT_NE(k, nullptr) << "no fast kernel for " << t.node->Describe();
  StatusOr<std::vector<Tensor>> ref =
      ops::EvaluateNode(*t.node, t.g.opset_version(), t.InputPtrs());
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  const ir::Value* y = t.node->outputs[0];
  Tensor out(y->dtype, y->shape);
  // Garbage in the output and scratch: the kernel must overwrite all of it.
  std::fill(out.data<float>(), out.data<float>() + out.num_elements(), 1e30f);
  std::vector<Tensor> scratch;
  ops::KernelContext ctx{*t.node, t.g.opset_version(), t.InputPtrs(), {&out}};
  for (const ops::ScratchNeed& need : k->scratch_needs()) {
    scratch.emplace_back(DType::kUInt8, Shape{need.size_bytes});
    std::fill(scratch.back().data<uint8_t>(), scratch.back().data<uint8_t>() + need.size_bytes,
              uint8_t{0xAB});
  }
  for (Tensor& s : scratch) ctx.scratch.push_back(s.raw_data());
  ASSERT_TRUE(k->Run(ctx).ok());
  const Tensor& expected = (*ref)[0];
  ASSERT_EQ(expected.shape(), out.shape());
  const float* a = out.data<float>();
  const float* b = expected.data<float>();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) continue;  // infinities too
    ASSERT_NEAR(a[i], b[i], 1e-4f * (1.f + std::fabs(b[i])))
        << k->Choice().ToString() << " element " << i << " of " << ShapeToString(out.shape());
  }
}

// Runs `k` (a copy kernel) on `in` and expects exactly the reference's
// output for `n` at opset 13.
void ExpectCopyEqualsReference(FastKernel& k, const ir::Node& n,
                               const std::vector<const Tensor*>& in) {
  StatusOr<std::vector<Tensor>> ref = ops::EvaluateNode(n, 13, in);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  Tensor out(DType::kFloat32, n.outputs[0]->shape);
  ops::KernelContext ctx{n, 13, in, {&out}};
  ASSERT_TRUE(k.Run(ctx).ok());
  ASSERT_EQ(out.shape(), (*ref)[0].shape());
  for (int64_t i = 0; i < out.num_elements(); ++i)
    ASSERT_EQ(out.data<float>()[i], (*ref)[0].data<float>()[i])
        << k.Choice().ToString() << " " << i;
}

AttributeMap ConvAttrs(std::vector<int64_t> strides, std::vector<int64_t> pads,
                       std::vector<int64_t> dilations = {1, 1}, int64_t group = 1) {
  AttributeMap a;
  a.Set("strides", std::move(strides));
  a.Set("pads", std::move(pads));
  a.Set("dilations", std::move(dilations));
  a.Set("group", group);
  return a;
}

TEST(FastConv, Odd_channels_3x3_with_bias) {
  REQUIRE_ONEDNN();
  OneNode t("Conv", "", {{1, 3, 7, 9}, {5, 3, 3, 3}, {5}}, {false, true, true},
            ConvAttrs({1, 1}, {1, 1, 1, 1}));
  ExpectMatchesReference(t);
}

TEST(FastConv, Pointwise_1x1_without_bias) {
  REQUIRE_ONEDNN();
  OneNode t("Conv", "", {{1, 7, 5, 5}, {9, 7, 1, 1}}, {false, true},
            ConvAttrs({1, 1}, {0, 0, 0, 0}));
  ExpectMatchesReference(t);
}

TEST(FastConv, Stride_2_with_asymmetric_padding) {
  REQUIRE_ONEDNN();
  OneNode t("Conv", "", {{1, 4, 11, 8}, {6, 4, 3, 3}, {6}}, {false, true, true},
            ConvAttrs({2, 2}, {0, 1, 2, 0}));
  ExpectMatchesReference(t);
}

TEST(FastConv, Grouped) {
  REQUIRE_ONEDNN();
  OneNode t("Conv", "", {{2, 6, 9, 9}, {9, 2, 3, 3}, {9}}, {false, true, true},
            ConvAttrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 3));
  ExpectMatchesReference(t);
}

TEST(FastConv, Depthwise_stride_2) {
  REQUIRE_ONEDNN();
  OneNode t("Conv", "", {{1, 24, 14, 14}, {24, 1, 3, 3}, {24}}, {false, true, true},
            ConvAttrs({2, 2}, {1, 1, 1, 1}, {1, 1}, 24));
  ExpectMatchesReference(t);
}

TEST(FastConv, Dilated) {
  REQUIRE_ONEDNN();
  OneNode t("Conv", "", {{1, 5, 13, 12}, {3, 5, 3, 2}, {3}}, {false, true, true},
            ConvAttrs({1, 2}, {2, 1, 2, 0}, {2, 3}));
  ExpectMatchesReference(t);
}

TEST(FastConv, One_dimensional) {
  REQUIRE_ONEDNN();
  AttributeMap a;
  a.Set("pads", std::vector<int64_t>{1, 2});
  OneNode t("Conv", "", {{2, 3, 17}, {4, 3, 4}}, {false, true}, a);
  ExpectMatchesReference(t);
}

TEST(FastConv, Fused_residual_and_clip) {
  REQUIRE_ONEDNN();
  AttributeMap a = ConvAttrs({1, 1}, {1, 1, 1, 1});
  a.Set("activation", std::string("Clip"));
  a.Set("activation_min", 0.f);
  a.Set("activation_max", 0.5f);
  OneNode t("FusedConv", "tessel", {{1, 16, 6, 6}, {16, 16, 3, 3}, {16}, {1, 16, 6, 6}},
            {false, true, true, false}, a);
  ExpectMatchesReference(t);
}

TEST(FastConv, Fused_relu_without_bias_or_residual) {
  REQUIRE_ONEDNN();
  AttributeMap a = ConvAttrs({2, 2}, {0, 0, 1, 1});
  a.Set("activation", std::string("Relu"));
  OneNode t("FusedConv", "tessel", {{1, 5, 8, 8}, {7, 5, 2, 2}}, {false, true}, a);
  ExpectMatchesReference(t);
}

TEST(FastConv, Fused_residual_without_bias) {
  REQUIRE_ONEDNN();
  OneNode t("FusedConv", "tessel", {{1, 8, 5, 5}, {8, 8, 1, 1}, {}, {1, 8, 5, 5}},
            {false, true, false, false}, ConvAttrs({1, 1}, {0, 0, 0, 0}));
  ExpectMatchesReference(t);
}

TEST(FastConv, Fused_sigmoid_swish_leaky_relu_hard_sigmoid_and_hard_swish) {
  REQUIRE_ONEDNN();
  for (const char* act : {"Sigmoid", "Swish", "LeakyRelu", "HardSigmoid", "HardSwish"}) {
    SCOPED_TRACE(act);
    AttributeMap a = ConvAttrs({1, 1}, {1, 1, 1, 1});
    a.Set("activation", std::string(act));
    a.Set("activation_alpha", 0.25f);
    a.Set("activation_beta", 0.4f);
    OneNode t("FusedConv", "tessel", {{1, 6, 9, 9}, {8, 6, 3, 3}, {8}, {1, 8, 9, 9}},
              {false, true, true, false}, a);
    ExpectMatchesReference(t);
  }
}

TEST(FastConv, Weights_computed_at_run_time_keep_the_reference_kernel) {
  OneNode t("Conv", "", {{1, 3, 5, 5}, {4, 3, 3, 3}}, {false, false},
            ConvAttrs({1, 1}, {1, 1, 1, 1}));
  EXPECT_EQ(SelectFastKernel(*t.node, 17), nullptr);
}

TEST(FastMatMul, Batched_with_constant_weights) {
  REQUIRE_ONEDNN();
  OneNode t("MatMul", "", {{2, 3, 5, 7}, {7, 4}}, {false, true}, {});
  ExpectMatchesReference(t);
}

TEST(FastMatMul, Broadcast_on_both_sides) {
  REQUIRE_ONEDNN();
  OneNode t("MatMul", "", {{3, 1, 4, 6}, {1, 5, 6, 3}}, {false, false}, {});
  ExpectMatchesReference(t);
}

TEST(FastMatMul, Lower_rank_activations) {
  REQUIRE_ONEDNN();
  OneNode t("MatMul", "", {{5, 7}, {2, 7, 3}}, {false, false}, {});
  ExpectMatchesReference(t);
}

TEST(FastMatMul, Vectors_keep_the_reference_kernel) {
  OneNode t("MatMul", "", {{7}, {7, 3}}, {false, true}, {});
  EXPECT_EQ(SelectFastKernel(*t.node, 17), nullptr);
}

AttributeMap GemmAttrs(int64_t trans_a, int64_t trans_b, float alpha, float beta) {
  AttributeMap a;
  a.Set("transA", trans_a);
  a.Set("transB", trans_b);
  a.Set("alpha", alpha);
  a.Set("beta", beta);
  return a;
}

TEST(FastGemm, TransB_with_vector_bias) {
  REQUIRE_ONEDNN();
  OneNode t("Gemm", "", {{3, 10}, {13, 10}, {13}}, {false, true, true}, GemmAttrs(0, 1, 1.f, 1.f));
  ExpectMatchesReference(t);
}

TEST(FastGemm, TransA_alpha_beta_matrix_bias) {
  REQUIRE_ONEDNN();
  OneNode t("Gemm", "", {{10, 3}, {10, 13}, {3, 13}}, {false, true, true},
            GemmAttrs(1, 0, 0.5f, 2.f));
  ExpectMatchesReference(t);
}

TEST(FastGemm, Scalar_bias_computed_at_run_time) {
  REQUIRE_ONEDNN();
  OneNode t("Gemm", "", {{4, 6}, {6, 5}, {1}}, {false, false, false}, GemmAttrs(0, 0, 1.f, 1.f));
  ExpectMatchesReference(t);
}

TEST(FastGemm, Column_bias) {
  REQUIRE_ONEDNN();
  OneNode t("Gemm", "", {{4, 6}, {5, 6}, {4, 1}}, {false, true, true}, GemmAttrs(0, 1, 1.f, 1.f));
  ExpectMatchesReference(t);
}

TEST(FastMatMul, Rows_by_constant_weights_never_run_the_repacking_gemm) {
  REQUIRE_ONEDNN();
  // oneDNN 2.6's matmul on AVX2 is its jit gemm, which packs the weights at
  // every call; tessel runs such a product as a 1x1 convolution over the
  // rows there (brgemm on AVX-512). With a bias and a residual (a
  // FusedMatMul), and Gemm's transposed weights.
  OneNode mm("MatMul", "", {{1, 64, 96}, {96, 72}}, {false, true}, {});
  OneNode fused("FusedMatMul", "tessel", {{64, 96}, {96, 72}, {72}, {64, 72}},
                {false, true, true, false}, {});
  OneNode gemm("Gemm", "", {{64, 96}, {72, 96}, {72}}, {false, true, true},
               GemmAttrs(0, 1, 1.f, 1.f));
  for (OneNode* t : {&mm, &fused, &gemm}) {
    const std::unique_ptr<FastKernel> k = SelectFastKernel(*t->node, 17);
    ASSERT_NE(k, nullptr) << t->node->op_type;
    EXPECT_NE(k->Choice().detail.rfind("gemm", 0), 0u) << k->Choice().ToString();
    ExpectMatchesReference(*t);
  }
}

TEST(FastMatMul, Shared_weights_fold_the_batch_into_rows) {
  REQUIRE_ONEDNN();
  OneNode t("MatMul", "", {{9, 1, 12}, {1, 12, 7}}, {false, true}, {});
  ExpectMatchesReference(t);
}

TEST(FastMatMul, Fused_bias_and_residual) {
  REQUIRE_ONEDNN();
  OneNode t("FusedMatMul", "tessel", {{2, 3, 7}, {7, 5}, {5}, {2, 3, 5}},
            {false, true, true, false}, {});
  ExpectMatchesReference(t);
}

TEST(FastMatMul, Fused_bias_without_residual) {
  REQUIRE_ONEDNN();
  OneNode t("FusedMatMul", "tessel", {{9, 16}, {16, 33}, {1, 33}}, {false, true, true}, {});
  ExpectMatchesReference(t);
}

TEST(FastSoftmax, Last_axis) {
  REQUIRE_ONEDNN();
  OneNode last("Softmax", "", {{2, 3, 17}}, {false}, {});
  ExpectMatchesReference(last);
}

TEST(FastSoftmax, A_middle_axis_runs_fast_only_where_onednn_has_a_real_kernel) {
  REQUIRE_ONEDNN();
  AttributeMap a;
  a.Set("axis", int64_t{1});
  OneNode middle("Softmax", "", {{2, 5, 3}}, {false}, a);
  // oneDNN 2.6 has only its reference implementation for a strided axis,
  // which tessel does not take; a later version may have a fast one.
  if (SelectFastKernel(*middle.node, 17)) ExpectMatchesReference(middle);
}

TEST(FastSoftmax, Before_opset_13_flattens_the_trailing_axes) {
  REQUIRE_ONEDNN();
  AttributeMap a;
  a.Set("axis", int64_t{1});
  OneNode t("Softmax", "", {{2, 3, 4}}, {false}, a, /*opset=*/11);
  ExpectMatchesReference(t);
}

AttributeMap PoolAttrs(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                       std::vector<int64_t> pads, int64_t ceil_mode) {
  AttributeMap a;
  a.Set("kernel_shape", std::move(kernel));
  a.Set("strides", std::move(strides));
  a.Set("pads", std::move(pads));
  a.Set("ceil_mode", ceil_mode);
  return a;
}

TEST(FastPool, Max_with_ceil_mode_and_asymmetric_padding) {
  REQUIRE_ONEDNN();
  OneNode t("MaxPool", "", {{1, 5, 13, 10}}, {false}, PoolAttrs({3, 3}, {2, 2}, {0, 1, 1, 0}, 1));
  ExpectMatchesReference(t);
  // A kernel wider than the input, stride 3: columns that never lie inside.
  OneNode wide("MaxPool", "", {{1, 2, 4, 3}}, {false}, PoolAttrs({3, 5}, {3, 3}, {0, 2, 1, 0}, 1));
  ExpectMatchesReference(wide);
  OneNode wide_avg("AveragePool", "", {{1, 2, 4, 3}}, {false},
                   PoolAttrs({3, 5}, {3, 3}, {0, 2, 1, 0}, 1));
  ExpectMatchesReference(wide_avg);
}

TEST(FastPool, Average_excluding_and_including_padding) {
  REQUIRE_ONEDNN();
  OneNode exclude("AveragePool", "", {{2, 3, 7, 7}}, {false},
                  PoolAttrs({3, 2}, {1, 2}, {1, 1, 1, 0}, 0));
  ExpectMatchesReference(exclude);
  AttributeMap a = PoolAttrs({3, 3}, {2, 2}, {1, 1, 1, 1}, 0);
  a.Set("count_include_pad", int64_t{1});
  OneNode include("AveragePool", "", {{1, 4, 8, 8}}, {false}, a);
  ExpectMatchesReference(include);
  // Ceil mode (timm's average-pool shortcuts): the last window of each odd
  // axis is partial, averaged over what it covers.
  OneNode ceil("AveragePool", "", {{1, 3, 7, 9}}, {false},
               PoolAttrs({2, 2}, {2, 2}, {0, 0, 0, 0}, 1));
  ExpectMatchesReference(ceil);
  OneNode ceil_padded("AveragePool", "", {{2, 3, 6, 5}}, {false},
                      PoolAttrs({3, 3}, {2, 2}, {1, 1, 0, 1}, 1));
  ExpectMatchesReference(ceil_padded);
}

TEST(FastCopy, Transpose_of_inner_and_outer_axes) {
  AttributeMap shuffle;
  shuffle.Set("perm", std::vector<int64_t>{0, 2, 1, 3, 4});
  OneNode channels("Transpose", "", {{1, 2, 5, 3, 7}}, {false}, shuffle);
  ExpectMatchesReference(channels);
  AttributeMap inner;
  inner.Set("perm", std::vector<int64_t>{2, 0, 3, 1});
  OneNode gather("Transpose", "", {{3, 4, 5, 6}}, {false}, inner);
  ExpectMatchesReference(gather);
  OneNode big("Transpose", "", {{64, 48, 33}}, {false}, {});  // reversed, over the pool
  ExpectMatchesReference(big);
}

TEST(FastCopy, Transposes_of_matrices_copy_by_tiles) {
  // NCHW -> NHWC, NHWC -> NCHW, a batch of matrices, with rows and columns
  // past the last whole 8x8 tile; attention's heads (whole rows) copy rows.
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has no AVX2: the tiles are AVX2's";
  }
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
    const char* implementation;
  };
  const std::vector<Case> cases = {{{1, 37, 8, 3}, {0, 2, 3, 1}, "transpose tiles"},
                                   {{1, 24, 37}, {0, 2, 1}, "transpose tiles"},
                                   {{3, 19, 21}, {0, 2, 1}, "transpose tiles"},
                                   {{2, 4, 9, 17}, {0, 1, 3, 2}, "transpose tiles"},
                                   {{1, 4, 13, 11}, {0, 2, 3, 1}, "transpose tiles"},
                                   {{2, 3, 70}, {0, 2, 1}, "transpose tiles"},
                                   {{1, 16, 4, 40}, {0, 2, 1, 3}, "strided copy"}};
  for (const Case& c : cases) {
    AttributeMap a;
    a.Set("perm", c.perm);
    OneNode t("Transpose", "", {c.shape}, {false}, a);
    ExpectMatchesReference(t);
    EXPECT_EQ(SelectFastKernel(*t.node, 17)->Choice().implementation, c.implementation)
        << ShapeToString(c.shape);
  }
}

TEST(FastCopy, Expand_reads_broadcast_axes_again) {
  // A new leading axis, broadcast axes inside and innermost, a kept axis
  // between them: each output element must be its input element.
  for (const Shape& target : {Shape{4, 2, 5, 3, 6}, Shape{2, 1, 3, 1}, Shape{2, 7, 3, 9}}) {
    ir::Graph g;
    g.set_opset_version(13);
    Tensor data = RandomFloats({2, 1, 3, 1}, 5);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 1, 3, 1}, true);
    g.inputs() = {x};
    ir::Value* y = g.AddValue("y");
    const auto rank = static_cast<int64_t>(target.size());
    ir::Node* n =
        g.AddNode("Expand", "e",
                  {x, g.AddConstant("shape", Tensor::FromVector<int64_t>(target, {rank}))}, {y});
    ASSERT_TRUE(ops::InferNode(*n, 13).ok());
    std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 13);
    ASSERT_NE(k, nullptr);
    std::vector<const Tensor*> in = {&data, &n->inputs[1]->constant};
    ExpectCopyEqualsReference(*k, *n, in);
  }
}

TEST(FastCopy, Slice_with_negative_step_and_clamped_ends) {
  ir::Graph g;
  g.set_opset_version(13);
  Tensor data = RandomFloats({4, 9, 6}, 5);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {4, 9, 6}, true);
  g.inputs() = {x};
  ir::Value* y = g.AddValue("y");
  ir::Node* n = g.AddNode("Slice", "s",
                          {x, g.AddConstant("starts", Tensor::FromVector<int64_t>({-1, 1}, {2})),
                           g.AddConstant("ends", Tensor::FromVector<int64_t>({-100, 100}, {2})),
                           g.AddConstant("axes", Tensor::FromVector<int64_t>({1, 2}, {2})),
                           g.AddConstant("steps", Tensor::FromVector<int64_t>({-2, 2}, {2}))},
                          {y});
  ASSERT_TRUE(ops::InferNode(*n, 13).ok());
  std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 13);
  ASSERT_NE(k, nullptr);
  std::vector<const Tensor*> in = {&data};
  for (size_t i = 1; i < 5; ++i) in.push_back(&n->inputs[i]->constant);
  ExpectCopyEqualsReference(*k, *n, in);
}

// A Resize (opset 18) of a float input of `shape` with constant roi, scales
// or sizes (empty: absent), against the reference; or, with `fast` false,
// checks that no fast kernel takes it.
void CheckResize(const Shape& shape, const AttributeMap& attrs, const std::vector<float>& roi,
                 const std::vector<float>& scales, const std::vector<int64_t>& sizes,
                 bool fast = true) {
  ir::Graph g;
  g.set_opset_version(18);
  Tensor data = RandomFloats(shape, 11);
  ir::Value* x = g.AddValue("x", DType::kFloat32, shape, true);
  g.inputs() = {x};
  auto constant = [&](const std::string& name, Tensor t) {
    return g.AddConstant(name, std::move(t));
  };
  const int64_t n_roi = static_cast<int64_t>(roi.size());
  const int64_t n_scales = static_cast<int64_t>(scales.size());
  const int64_t n_sizes = static_cast<int64_t>(sizes.size());
  std::vector<ir::Value*> ins = {
      x, roi.empty() ? nullptr : constant("roi", Tensor::FromVector<float>(roi, {n_roi})),
      scales.empty() ? nullptr : constant("scales", Tensor::FromVector<float>(scales, {n_scales})),
      sizes.empty() ? nullptr : constant("sizes", Tensor::FromVector<int64_t>(sizes, {n_sizes}))};
  while (ins.back() == nullptr) ins.pop_back();
  ir::Value* y = g.AddValue("y");
  ir::Node* n = g.AddNode("Resize", "r", ins, {y});
  n->attrs = attrs;
  ASSERT_TRUE(ops::InferNode(*n, 18).ok());
  std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 18);
  if (!fast) {
    EXPECT_EQ(k, nullptr) << k->Choice().ToString();
    return;
  }
  ASSERT_NE(k, nullptr);
  std::vector<const Tensor*> in = {&data};
  for (size_t i = 1; i < ins.size(); ++i) in.push_back(ins[i] ? &ins[i]->constant : nullptr);
  StatusOr<std::vector<Tensor>> ref = ops::EvaluateNode(*n, 18, in);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  Tensor out(DType::kFloat32, y->shape);
  std::fill(out.data<float>(), out.data<float>() + out.num_elements(), 1e30f);
  ops::KernelContext ctx{*n, 18, in, {&out}};
  ASSERT_TRUE(k->Run(ctx).ok());
  ASSERT_EQ(out.shape(), (*ref)[0].shape());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const float a = out.data<float>()[i], b = (*ref)[0].data<float>()[i];
    ASSERT_NEAR(a, b, 1e-5f * (1.f + std::fabs(b)))
        << ShapeToString(out.shape()) << " element " << i;
  }
}

AttributeMap ResizeAttrs(const std::string& mode, const std::string& coord,
                         const std::string& nearest = "round_prefer_floor") {
  AttributeMap a;
  a.Set("mode", mode);
  a.Set("coordinate_transformation_mode", coord);
  a.Set("nearest_mode", nearest);
  return a;
}

TEST(FastResize, Linear_in_every_coordinate_mode) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                            "half_pixel_symmetric"}) {
    SCOPED_TRACE(coord);
    CheckResize({1, 3, 7, 5}, ResizeAttrs("linear", coord), {}, {1, 1, 2.5f, 3}, {});
    CheckResize({2, 2, 9, 8}, ResizeAttrs("linear", coord), {}, {}, {2, 2, 4, 3});  // shrinks
  }
  // Big enough to spread its rows over the thread pool.
  CheckResize({1, 21, 28, 28}, ResizeAttrs("linear", "half_pixel"), {}, {}, {1, 21, 224, 224});
}

TEST(FastResize, Nearest_in_every_rounding_mode_and_rows_or_columns_only) {
  for (const char* mode : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    SCOPED_TRACE(mode);
    CheckResize({1, 2, 5, 6}, ResizeAttrs("nearest", "asymmetric", mode), {}, {1, 1, 3, 0.5f}, {});
    CheckResize({1, 2, 5, 6}, ResizeAttrs("nearest", "half_pixel", mode), {}, {}, {1, 2, 8, 6});
    CheckResize({5, 6}, ResizeAttrs("nearest", "tf_half_pixel_for_nn", mode), {}, {}, {7, 9});
  }
  // tf_half_pixel_for_nn moves even an axis that keeps its length: channel
  // 0 reads channel 1.
  CheckResize({1, 2, 5, 6}, ResizeAttrs("nearest", "tf_half_pixel_for_nn", "ceil"), {}, {},
              {1, 2, 8, 6}, /*fast=*/false);
  CheckResize({2, 3, 4, 6}, ResizeAttrs("linear", "half_pixel"), {}, {1, 1, 2, 1}, {});
  CheckResize({2, 3, 4, 6}, ResizeAttrs("linear", "half_pixel"), {}, {1, 1, 1, 2}, {});
  CheckResize({3, 10}, ResizeAttrs("linear", "align_corners"), {}, {2, 1.5f}, {});  // rank 2
}

TEST(FastResize, Cubic_antialias_and_crop_with_extrapolation) {
  AttributeMap cubic = ResizeAttrs("cubic", "half_pixel");
  cubic.Set("exclude_outside", int64_t{1});
  CheckResize({1, 2, 6, 7}, cubic, {}, {1, 1, 1.7f, 2}, {});
  AttributeMap antialias = ResizeAttrs("linear", "half_pixel");
  antialias.Set("antialias", int64_t{1});
  CheckResize({1, 2, 16, 15}, antialias, {}, {1, 1, 0.3f, 0.45f}, {});
  AttributeMap crop = ResizeAttrs("linear", "tf_crop_and_resize");
  crop.Set("extrapolation_value", 7.5f);
  CheckResize({6, 6}, crop, {-0.2f, 0.1f, 0.9f, 1.3f}, {}, {5, 7});
}

TEST(FastResize, Resampling_channels_keeps_the_reference_kernel) {
  CheckResize({1, 4, 3, 3}, ResizeAttrs("linear", "half_pixel"), {}, {1, 2, 2, 2}, {},
              /*fast=*/false);
}

// A constant-mode Pad (opset 18) of `shape` by `pads`, optionally over
// `axes` and with `value`, against the reference.
void CheckPad(const Shape& shape, const std::vector<int64_t>& pads, float value,
              const std::vector<int64_t>& axes = {}) {
  ir::Graph g;
  g.set_opset_version(18);
  Tensor data = RandomFloats(shape, 31);
  ir::Value* x = g.AddValue("x", DType::kFloat32, shape, true);
  g.inputs() = {x};
  const auto n = static_cast<int64_t>(pads.size());
  std::vector<ir::Value*> ins = {x, g.AddConstant("pads", Tensor::FromVector<int64_t>(pads, {n})),
                                 g.AddConstant("value", Tensor::FromVector<float>({value}, {}))};
  if (!axes.empty()) {
    const auto a = static_cast<int64_t>(axes.size());
    ins.push_back(g.AddConstant("axes", Tensor::FromVector<int64_t>(axes, {a})));
  }
  ir::Value* y = g.AddValue("y");
  ir::Node* node = g.AddNode("Pad", "pad", ins, {y});
  ASSERT_TRUE(ops::InferNode(*node, 18).ok());
  std::unique_ptr<FastKernel> k = SelectFastKernel(*node, 18);
  ASSERT_NE(k, nullptr);
  std::vector<const Tensor*> in = {&data};
  for (size_t i = 1; i < ins.size(); ++i) in.push_back(&ins[i]->constant);
  StatusOr<std::vector<Tensor>> ref = ops::EvaluateNode(*node, 18, in);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  Tensor out(DType::kFloat32, y->shape);
  std::fill(out.data<float>(), out.data<float>() + out.num_elements(), 1e30f);
  ops::KernelContext ctx{*node, 18, in, {&out}};
  ASSERT_TRUE(k->Run(ctx).ok());
  ASSERT_EQ(out.shape(), (*ref)[0].shape());
  for (int64_t i = 0; i < out.num_elements(); ++i)
    ASSERT_EQ(out.data<float>()[i], (*ref)[0].data<float>()[i]) << ShapeToString(shape) << " " << i;
}

TEST(FastPad, Constant_padding_cropping_axes_and_a_fill_value) {
  CheckPad({1, 3, 5, 4}, {0, 0, 1, 2, 0, 0, 2, 1}, 0.f);      // spatial zeros
  CheckPad({2, 3, 5, 4}, {0, 1, -1, 0, 1, 0, -2, 3}, -7.5f);  // crop and fill
  CheckPad({7}, {3, 2}, 1.f);                                 // rank 1
  CheckPad({1, 56, 56, 96}, {0, 2, 3, 0}, 0.f, {1, 2});       // Swin's, over the pool
  CheckPad({2, 3, 4}, {0, 0, 0, 0, 0, 0}, 5.f);               // nothing to pad
}

TEST(FastGather, Constant_indices_on_any_axis_negative_ones_included) {
  for (int64_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    ir::Graph g;
    g.set_opset_version(13);
    Tensor data = RandomFloats({3, 4, 5}, 32);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {3, 4, 5}, true);
    g.inputs() = {x};
    ir::Value* idx = g.AddConstant("i", Tensor::FromVector<int64_t>({2, -1, 0, 2}, {2, 2}));
    ir::Value* y = g.AddValue("y");
    ir::Node* n = g.AddNode("Gather", "g", {x, idx}, {y});
    n->attrs.Set("axis", axis);
    ASSERT_TRUE(ops::InferNode(*n, 13).ok());
    std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 13);
    ASSERT_NE(k, nullptr);
    std::vector<const Tensor*> in = {&data, &idx->constant};
    ExpectCopyEqualsReference(*k, *n, in);
  }
}

TEST(FastGather, Indices_at_run_time_as_an_embedding_lookup_and_out_of_range) {
  // Token ids (int64 and int32, a negative one too) into a [7, 5] table; an
  // id past the table gets the reference kernel's error, naming the index.
  for (DType type : {DType::kInt64, DType::kInt32}) {
    ir::Graph g;
    g.set_opset_version(13);
    Tensor table = RandomFloats({7, 5}, 33);
    ir::Value* x = g.AddConstant("table", table);
    ir::Value* ids = g.AddValue("ids", type, {1, 4}, true);
    g.inputs() = {ids};
    ir::Value* y = g.AddValue("y");
    ir::Node* n = g.AddNode("Gather", "embed", {x, ids}, {y});
    ASSERT_TRUE(ops::InferNode(*n, 13).ok());
    std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 13);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->Choice().implementation, "gather rows");
    const std::vector<int64_t> values = {6, 0, -1, 3};
    Tensor index = type == DType::kInt64 ? Tensor::FromVector<int64_t>(values, {1, 4})
                                         : Tensor::FromVector<int32_t>({6, 0, -1, 3}, {1, 4});
    std::vector<const Tensor*> in = {&table, &index};
    ExpectCopyEqualsReference(*k, *n, in);
    Tensor bad = type == DType::kInt64 ? Tensor::FromVector<int64_t>({1, 7, 0, 0}, {1, 4})
                                       : Tensor::FromVector<int32_t>({1, 7, 0, 0}, {1, 4});
    in[1] = &bad;
    Tensor out(DType::kFloat32, y->shape);
    ops::KernelContext bad_ctx{*n, 13, in, {&out}};
    const Status s = k->Run(bad_ctx);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("indices[1] = 7 is out of range"), std::string::npos) << s.message();
  }
}

TEST(FastKernels, Executor_releasing_packed_weights_gives_the_same_outputs) {
  REQUIRE_ONEDNN();
  // Conv (packs W) -> Relu; W is read by the Conv only, B stays (not packed).
  auto build = [](ir::Graph& g) {
    g.set_opset_version(17);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 16, 9, 9}, true);
    g.inputs() = {x};
    ir::Value* c = g.AddValue("c", DType::kFloat32, {1, 32, 9, 9}, true);
    ir::Value* y = g.AddValue("y", DType::kFloat32, {1, 32, 9, 9}, true);
    ir::Node* conv = g.AddNode("Conv", "conv",
                               {x, g.AddConstant("w", RandomFloats({32, 16, 3, 3}, 1)),
                                g.AddConstant("b", RandomFloats({32}, 2))},
                               {c});
    conv->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    g.AddNode("Relu", "relu", {c}, {y});
    g.outputs() = {y};
  };
  ir::Graph plain_graph, released_graph;
  build(plain_graph);
  build(released_graph);
  const std::vector<Tensor> inputs = {RandomFloats({1, 16, 9, 9}, 3)};
  CpuExecutor plain(plain_graph);
  std::unique_ptr<CpuExecutor> released =
      CpuExecutor::ReleasingPackedConstants(released_graph, nullptr);
  ASSERT_NE(released->fast_kernel(0), nullptr);
  const ir::Value* w = released_graph.nodes()[0]->input(1);
  const ir::Value* b = released_graph.nodes()[0]->input(2);
  if (!released->fast_kernel(0)->packed_inputs().empty()) {
    EXPECT_EQ(w->constant.raw_data(), nullptr);
    EXPECT_EQ(released->stats().released_constant_bytes, 32 * 16 * 3 * 3 * 4);
  }
  EXPECT_NE(b->constant.raw_data(), nullptr);
  EXPECT_EQ(w->shape, (Shape{32, 16, 3, 3}));
  StatusOr<std::vector<Tensor>> a = plain.Run(inputs);
  StatusOr<std::vector<Tensor>> r = released->Run(inputs);
  ASSERT_TRUE(a.ok() && r.ok());
  for (int64_t i = 0; i < (*a)[0].num_elements(); ++i)
    ASSERT_EQ((*a)[0].data<float>()[i], (*r)[0].data<float>()[i]) << i;
}

TEST(FastKernels, Equal_weights_of_two_nodes_are_packed_once) {
  REQUIRE_ONEDNN();
  // Two MatMuls whose weights are distinct constants with the same bytes
  // (as a model repeating a layer's weights has).
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {64, 96}, true);
  g.inputs() = {x};
  ir::Value* h = g.AddValue("h", DType::kFloat32, {64, 96}, true);
  ir::Value* y = g.AddValue("y", DType::kFloat32, {64, 96}, true);
  const Tensor w = RandomFloats({96, 96}, 7);
  g.AddNode("MatMul", "m0", {x, g.AddConstant("w0", w.Clone())}, {h});
  g.AddNode("MatMul", "m1", {h, g.AddConstant("w1", w.Clone())}, {y});
  g.outputs() = {y};
  CpuExecutor exec(g);
  ASSERT_NE(exec.fast_kernel(0), nullptr);
  ASSERT_NE(exec.fast_kernel(1), nullptr);
  // At most one of them made a packed copy, the other shares it. (On AVX2
  // oneDNN may run these MatMuls on the plain weights and pack nothing; the
  // convolutions of Equal_conv_weights_are_packed_once always pack.)
  EXPECT_TRUE(exec.fast_kernel(0)->packed_weight_bytes() == 0 ||
              exec.fast_kernel(1)->packed_weight_bytes() == 0);
  const Tensor in = RandomFloats({64, 96}, 8);
  StatusOr<std::vector<Tensor>> out = exec.Run({in});
  ASSERT_TRUE(out.ok());
  // Against the reference: (x w) w.
  StatusOr<std::vector<Tensor>> r0 = ops::RunSingleOp("MatMul", {}, {in, w});
  ASSERT_TRUE(r0.ok());
  StatusOr<std::vector<Tensor>> r1 = ops::RunSingleOp("MatMul", {}, {(*r0)[0], w});
  ASSERT_TRUE(r1.ok());
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) {
    const float e = (*r1)[0].data<float>()[i];
    ASSERT_NEAR((*out)[0].data<float>()[i], e, 1e-3f * (1.f + std::fabs(e))) << i;
  }
}

// Runs `body` with the CPU target's isa capped at AVX-512 and at AVX2 (a cap
// above the CPU's falls back to it).
void OnEveryFastIsa(const std::function<void()>& body) {
  for (snippets::Isa isa : {snippets::Isa::kAvx512, snippets::Isa::kAvx2}) {
    CpuOptions options;
    options.isa = std::min(isa, snippets::HostIsa());
    const CpuScope scope(options, ThreadPool::Current());
    SCOPED_TRACE(snippets::IsaName(options.isa));
    body();
  }
}

TEST(FastLayerNorm, Last_axis_with_bias_and_two_axes_without_on_every_isa) {
  // The kernel's rows are compiled for AVX-512, AVX2 and baseline x86-64;
  // the CPU target's isa picks (on a CPU without AVX2, and at isa generic,
  // no fast kernel runs at all).
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  OnEveryFastIsa([] {
    AttributeMap a;
    a.Set("epsilon", 1e-5f);
    OneNode last("LayerNormalization", "", {{2, 5, 33}, {33}, {33}}, {false, true, true}, a);
    ExpectMatchesReference(last);
    a.Set("axis", int64_t{1});
    OneNode two("LayerNormalization", "", {{3, 4, 7}, {4, 7}}, {false, false}, a);
    ExpectMatchesReference(two);
  });
}

TEST(FastInstanceNorm, One_scale_and_bias_per_channel_on_every_isa) {
  // GroupNorm as exported (instance norm over (N, groups, rest)) and images.
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  OnEveryFastIsa([] {
    AttributeMap a;
    a.Set("epsilon", 1e-3f);
    for (const Shape& shape : {Shape{2, 3, 301}, Shape{1, 5, 7, 6}}) {
      OneNode t("InstanceNormalization", "", {shape, {shape[1]}, {shape[1]}}, {false, true, true},
                a);
      ExpectMatchesReference(t);
      EXPECT_EQ(SelectFastKernel(*t.node, 17)->Choice().implementation, "instance norm rows");
    }
  });
}

TEST(FastAttention, Matches_the_reference_on_every_isa) {
  // Head sizes off the vector width, keys in several blocks, grouped-query
  // heads, biases broadcast along every axis, rank 3, one query.
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  struct Case {
    Shape q, k, v, bias;
  };
  const Case cases[] = {
      {{1, 3, 197, 64}, {1, 3, 197, 64}, {1, 3, 197, 64}, {}},
      {{2, 4, 7, 40}, {2, 2, 9, 40}, {2, 2, 9, 24}, {2, 1, 7, 9}},
      {{1, 2, 5, 8}, {1, 2, 700, 8}, {1, 2, 700, 8}, {700}},
      {{6, 33, 16}, {6, 20, 16}, {6, 20, 16}, {6, 33, 20}},
      {{1, 1, 1, 3}, {1, 1, 1, 3}, {1, 1, 1, 5}, {1, 1, 1, 1}},
      {{1, 8, 64, 32}, {1, 2, 64, 32}, {1, 2, 64, 32}, {1, 1, 64, 64}},
  };
  OnEveryFastIsa([&] {
    for (const Case& c : cases) {
      for (int zero_masked = 0; zero_masked < 2; ++zero_masked) {
        AttributeMap a;
        a.Set("scale", 0.3f);
        a.Set("zero_masked_rows", int64_t{zero_masked});
        OneNode t("FusedAttention", "tessel", {c.q, c.k, c.v, c.bias},
                  {false, false, false, !c.bias.empty()}, a);
        if (!c.bias.empty() && c.bias.size() == 4 && c.bias[2] > 1) {
          // Query row 1 sees no key (NaN, or zeros), row 2 only the last.
          Tensor& bias = t.g.values()[3]->constant;
          float* b = bias.data<float>();
          const int64_t keys = c.bias[3];
          for (int64_t r = 0; r < bias.num_elements() / (c.bias[2] * keys); ++r) {
            float* rows = b + r * c.bias[2] * keys;
            std::fill(rows + keys, rows + 2 * keys, -std::numeric_limits<float>::infinity());
            std::fill(rows + 2 * keys, rows + 3 * keys - 1,
                      -std::numeric_limits<float>::infinity());
          }
          t.inputs[3] = bias;
        }
        ExpectMatchesReference(t);
        EXPECT_EQ(SelectFastKernel(*t.node, 17)->Choice().implementation,
                  "attention (online softmax)");
      }
    }
  });
}

TEST(FastRotary, Matches_the_reference_on_every_isa) {
  // rotate_half with halves of whole vectors and not, a partial rotation,
  // interleaved pairs; cos and sin broadcast along every axis.
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  struct Case {
    Shape x, table;
    int64_t rotary;
    bool interleaved;
  };
  const Case cases[] = {
      {{1, 8, 64, 64}, {64, 64}, 64, false},     {{1, 8, 64, 32}, {1, 1, 64, 16}, 16, false},
      {{2, 3, 5, 40}, {2, 1, 5, 40}, 40, false}, {{1, 3, 7, 10}, {7, 10}, 10, true},
      {{6, 9, 24}, {9, 24}, 24, false},          {{4, 12}, {8}, 8, true},
  };
  OnEveryFastIsa([&] {
    for (const Case& c : cases) {
      AttributeMap a;
      a.Set("rotary_dim", c.rotary);
      a.Set("interleaved", int64_t{c.interleaved ? 1 : 0});
      OneNode t("Rotary", "tessel", {c.x, c.table, c.table}, {false, true, true}, a);
      ExpectMatchesReference(t);
    }
  });
}

TEST(FastSplit, Uneven_parts_on_the_last_and_a_middle_axis) {
  for (int64_t axis : {-1, 1}) {
    SCOPED_TRACE(axis);
    ir::Graph g;
    g.set_opset_version(13);
    Tensor data = RandomFloats({2, 6, 9}, 33);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 6, 9}, true);
    g.inputs() = {x};
    const std::vector<int64_t> parts =
        axis == 1 ? std::vector<int64_t>{1, 3, 2} : std::vector<int64_t>{4, 5};
    ir::Value* split = g.AddConstant(
        "split", Tensor::FromVector<int64_t>(parts, {static_cast<int64_t>(parts.size())}));
    std::vector<ir::Value*> outs;
    for (size_t i = 0; i < parts.size(); ++i) outs.push_back(g.AddValue("y" + std::to_string(i)));
    ir::Node* n = g.AddNode("Split", "s", {x, split}, outs);
    n->attrs.Set("axis", axis);
    ASSERT_TRUE(ops::InferNode(*n, 13).ok());
    std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 13);
    ASSERT_NE(k, nullptr);
    std::vector<const Tensor*> in = {&data, &split->constant};
    StatusOr<std::vector<Tensor>> ref = ops::EvaluateNode(*n, 13, in);
    ASSERT_TRUE(ref.ok());
    std::vector<Tensor> out;
    for (const ir::Value* y : outs) out.emplace_back(DType::kFloat32, y->shape);
    std::vector<Tensor*> out_ptrs;
    for (Tensor& t : out) out_ptrs.push_back(&t);
    ops::KernelContext ctx{*n, 13, in, out_ptrs};
    ASSERT_TRUE(k->Run(ctx).ok());
    for (size_t p = 0; p < out.size(); ++p) {
      for (int64_t i = 0; i < out[p].num_elements(); ++i)
        ASSERT_EQ(out[p].data<float>()[i], (*ref)[p].data<float>()[i]) << p << " " << i;
    }
  }
}

TEST(FastConcat, Channels_of_odd_sizes) {
  REQUIRE_ONEDNN();
  AttributeMap a;
  a.Set("axis", int64_t{1});
  OneNode t("Concat", "", {{2, 3, 5, 4}, {2, 7, 5, 4}, {2, 1, 5, 4}}, {false, false, false}, a);
  ExpectMatchesReference(t);
}

TEST(FastKernels, Convs_pool_and_concat_exchanging_channels_last_match_the_reference) {
  REQUIRE_ONEDNN();
  // conv -> maxpool -> {conv, conv} -> concat -> conv: every tensor in
  // between may stay nhwc; outputs must match the reference executor. The
  // concat has 20x20 rows: several chunks of its row copy, over the pool.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 40, 40}, true);
  g.inputs() = {x};
  auto conv = [&](const std::string& name, ir::Value* in, int64_t cin, int64_t cout, int64_t k) {
    ir::Value* out = g.AddValue(name + "_out");
    ir::Node* n = g.AddNode("Conv", name,
                            {in, g.AddConstant(name + "_w", RandomFloats({cout, cin, k, k}, 11)),
                             g.AddConstant(name + "_b", RandomFloats({cout}, 12))},
                            {out});
    n->attrs.Set("pads", std::vector<int64_t>(4, k / 2));
    return out;
  };
  ir::Value* c0 = conv("c0", x, 8, 64, 3);
  ir::Value* p = g.AddValue("p");
  ir::Node* pool = g.AddNode("MaxPool", "pool", {c0}, {p});
  pool->attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
  pool->attrs.Set("strides", std::vector<int64_t>{2, 2});
  ir::Value* a = conv("a", p, 64, 32, 1);
  // 40 channels: no Winograd (it needs them by 16), so channels last.
  ir::Value* b = conv("b", p, 64, 40, 3);
  ir::Value* cat = g.AddValue("cat");
  g.AddNode("Concat", "cat", {a, b}, {cat})->attrs.Set("axis", int64_t{1});
  ir::Value* y = conv("c1", cat, 72, 16, 1);
  g.outputs() = {y};
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  const std::vector<Tensor> inputs = {RandomFloats({1, 8, 40, 40}, 13)};
  CpuExecutor fast(g);
  StatusOr<std::vector<Tensor>> out = fast.Run(inputs);
  ASSERT_TRUE(out.ok());
  std::map<const ir::Value*, Tensor> ref;
  ref[x] = inputs[0];
  for (const auto& n : g.nodes()) {
    std::vector<const Tensor*> in;
    for (const ir::Value* v : n->inputs) in.push_back(v->is_constant() ? &v->constant : &ref.at(v));
    StatusOr<std::vector<Tensor>> r = ops::EvaluateNode(*n, 17, in);
    ASSERT_TRUE(r.ok());
    ref[n->outputs[0]] = (*r)[0];
  }
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i]->op_type != "Concat" || !fast.fast_kernel(i)) continue;
    const std::string kernel = fast.fast_kernel(i)->Choice().ToString();
    std::printf("concat runs as: %s\n", kernel.c_str());
    // Channels last it must be the row copy, not oneDNN's generic concat.
    if (kernel.find("channels last") == std::string::npos) {
      EXPECT_EQ(kernel.find("simple"), std::string::npos) << kernel;
    }
  }
  const Tensor& e = ref.at(y);
  for (int64_t i = 0; i < e.num_elements(); ++i) {
    ASSERT_NEAR((*out)[0].data<float>()[i], e.data<float>()[i],
                1e-3f * (1.f + std::fabs(e.data<float>()[i])))
        << i;
  }
}

// Runs `g` on the CPU executor (fast kernels, negotiated layouts) and on the
// reference target; expects the same outputs within float rounding of a
// different summation order (and Winograd's transforms).
void ExpectExecutorMatchesReference(CpuExecutor& fast, const ir::Graph& g,
                                    const std::vector<Tensor>& inputs) {
  StatusOr<std::vector<Tensor>> out = fast.Run(inputs);
  ASSERT_TRUE(out.ok()) << out.status().message();
  StatusOr<std::vector<Tensor>> reference = targets::testing::RunReference(g, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  const std::vector<Tensor>& ref = *reference;
  ASSERT_EQ(out->size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    ASSERT_EQ((*out)[k].shape(), ref[k].shape());
    for (int64_t i = 0; i < ref[k].num_elements(); ++i) {
      const float e = ref[k].data<float>()[i];
      ASSERT_NEAR((*out)[k].data<float>()[i], e, 1e-3f * (1.f + std::fabs(e))) << k << " " << i;
    }
  }
}

// The kernel descriptions of a graph's nodes with this op type.
std::vector<std::string> KernelsOf(const CpuExecutor& fast, const ir::Graph& g,
                                   const std::string& op_type) {
  std::vector<std::string> kernels;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i]->op_type == op_type && fast.fast_kernel(i))
      kernels.push_back(fast.fast_kernel(i)->Choice().ToString());
  }
  return kernels;
}

ir::Value* AddConv(ir::Graph& g, const std::string& name, ir::Value* in, int64_t cin, int64_t cout,
                   int64_t k) {
  ir::Value* out = g.AddValue(name + "_out");
  ir::Node* n = g.AddNode("Conv", name,
                          {in, g.AddConstant(name + "_w", RandomFloats({cout, cin, k, k}, 21)),
                           g.AddConstant(name + "_b", RandomFloats({cout}, 22))},
                          {out});
  n->attrs.Set("pads", std::vector<int64_t>(4, k / 2));
  return out;
}

TEST(FastKernels, Winograd_convs_exchanging_nChw16c_match_the_reference) {
  // conv 3x3 -> maxpool -> {conv 3x3, conv 1x1} -> concat -> conv 1x1: most
  // of the work is in 3x3 convs with channels by 16, so the graph runs
  // blocked, the 3x3s by Winograd, and everything in between stays nChw16c.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 16, 20, 20}, true);
  g.inputs() = {x};
  ir::Value* a = AddConv(g, "a", x, 16, 32, 3);
  ir::Value* p = g.AddValue("p");
  ir::Node* pool = g.AddNode("MaxPool", "pool", {a}, {p});
  pool->attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
  pool->attrs.Set("strides", std::vector<int64_t>{2, 2});
  ir::Value* b = AddConv(g, "b", p, 32, 32, 3);
  ir::Value* c = AddConv(g, "c", p, 32, 16, 1);
  ir::Value* cat = g.AddValue("cat");
  g.AddNode("Concat", "cat", {b, c}, {cat})->attrs.Set("axis", int64_t{1});
  g.outputs() = {AddConv(g, "d", cat, 48, 16, 1)};
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  if (ChooseActivationLayout(g) != ActivationLayout::kBlocked16) {
    GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU (or TESSEL_WINOGRAD=off)";
  }
  CpuExecutor fast(g);
  const std::vector<std::string> convs = KernelsOf(fast, g, "Conv");
  ASSERT_EQ(convs.size(), 4u);
  EXPECT_NE(convs[0].find("wino"), std::string::npos) << convs[0];
  EXPECT_NE(convs[1].find("wino"), std::string::npos) << convs[1];
  EXPECT_EQ(KernelsOf(fast, g, "Concat"),
            std::vector<std::string>{"onednn concat (block copy, nChw16c) nChw16c"});
  ExpectExecutorMatchesReference(fast, g, {RandomFloats({1, 16, 20, 20}, 23)});
}

TEST(FastKernels, Squeeze_excitation_runs_channels_last) {
  REQUIRE_ONEDNN();
  // EfficientNet's block: conv -> swish -> global average -> conv -> relu
  // -> conv -> sigmoid -> scale the swish's output -> conv. The snippets
  // and the average run on the convs' nhwc tensors (the scale, one pixel
  // per channel, is read as it is), and nothing is reordered on the way.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 12, 12}, true);
  g.inputs() = {x};
  auto unary = [&](const std::string& op, ir::Value* in) {
    ir::Value* out = g.AddValue(op + "_" + in->name);
    g.AddNode(op, op + "_" + in->name, {in}, {out});
    return out;
  };
  auto mul = [&](ir::Value* a, ir::Value* b) {
    ir::Value* out = g.AddValue("mul_" + a->name);
    g.AddNode("Mul", "mul_" + a->name, {a, b}, {out});
    return out;
  };
  ir::Value* a = AddConv(g, "a", x, 8, 24, 1);
  ir::Value* swish = mul(a, unary("Sigmoid", a));
  ir::Value* pooled = unary("GlobalAveragePool", swish);
  ir::Value* squeezed = unary("Relu", AddConv(g, "fc1", pooled, 24, 6, 1));
  ir::Value* scale = unary("Sigmoid", AddConv(g, "fc2", squeezed, 6, 24, 1));
  g.outputs() = {AddConv(g, "out", mul(swish, scale), 24, 8, 3)};
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  ASSERT_TRUE(snippets::TokenizeSnippets(g).ok());
  if (ChooseActivationLayout(g) != ActivationLayout::kChannelsLast) {
    GTEST_SKIP() << "this graph runs blocked on this CPU";
  }
  CpuExecutor fast(g);
  const std::vector<std::string> snippets = KernelsOf(fast, g, "Subgraph");
  ASSERT_GE(snippets.size(), 2u);
  for (const std::string& k : snippets) EXPECT_NE(k.find("channels last"), std::string::npos) << k;
  EXPECT_EQ(KernelsOf(fast, g, "GlobalAveragePool"),
            std::vector<std::string>{"native global average channels last"});
  // The first conv writes nhwc for the snippet, the last reads it so.
  const std::vector<std::string> convs = KernelsOf(fast, g, "Conv");
  ASSERT_EQ(convs.size(), 4u);
  EXPECT_NE(convs[0].find("direct y"), std::string::npos) << convs[0];
  EXPECT_NE(convs[3].find("direct x"), std::string::npos) << convs[3];
  ExpectExecutorMatchesReference(fast, g, {RandomFloats({1, 8, 12, 12}, 24)});
}

TEST(FastKernels, Snippets_and_global_average_run_in_nChw16c_between_winograd_convs) {
  // DenseNet's pre-activation: conv 3x3 -> scale per channel + relu (a
  // snippet) -> conv 3x3 -> global average. The graph runs blocked, and the
  // snippet and the average read and write nChw16c.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 16, 20, 20}, true);
  g.inputs() = {x};
  ir::Value* a = AddConv(g, "a", x, 16, 32, 3);
  ir::Value* scaled = g.AddValue("scaled");
  g.AddNode("Mul", "scale", {a, g.AddConstant("s", RandomFloats({32, 1, 1}, 25))}, {scaled});
  ir::Value* r = g.AddValue("r");
  g.AddNode("Relu", "relu", {scaled}, {r});
  ir::Value* b = AddConv(g, "b", r, 32, 32, 3);
  ir::Value* y = g.AddValue("y");
  g.AddNode("GlobalAveragePool", "gap", {b}, {y});
  g.outputs() = {y};
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  ASSERT_TRUE(snippets::TokenizeSnippets(g).ok());
  if (ChooseActivationLayout(g) != ActivationLayout::kBlocked16) {
    GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU (or TESSEL_WINOGRAD=off)";
  }
  CpuExecutor fast(g);
  const std::vector<std::string> snippets = KernelsOf(fast, g, "Subgraph");
  ASSERT_EQ(snippets.size(), 1u);
  EXPECT_NE(snippets[0].find("nChw16c"), std::string::npos) << snippets[0];
  EXPECT_EQ(KernelsOf(fast, g, "GlobalAveragePool"),
            std::vector<std::string>{"native global average nChw16c"});
  const std::vector<std::string> convs = KernelsOf(fast, g, "Conv");
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_NE(convs[0].find("direct y"), std::string::npos) << convs[0];
  EXPECT_NE(convs[1].find("direct x,y"), std::string::npos) << convs[1];
  ExpectExecutorMatchesReference(fast, g, {RandomFloats({1, 16, 20, 20}, 26)});
}

TEST(FastKernels, Global_average_plain_matches_the_reference) {
  OneNode wide("GlobalAveragePool", "", {{2, 3, 40, 41}}, {false}, {});
  ExpectMatchesReference(wide);
  OneNode volume("GlobalAveragePool", "", {{1, 70, 3, 2, 5}}, {false}, {});
  ExpectMatchesReference(volume);
}

TEST(FastKernels, Channel_shuffle_between_convs_runs_channels_last) {
  REQUIRE_ONEDNN();
  // Two convs -> ChannelShuffle into two parts -> a conv on each part.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 7, 9}, true);
  g.inputs() = {x};
  ir::Value* a = AddConv(g, "a", x, 8, 10, 1);
  ir::Value* b = AddConv(g, "b", x, 8, 10, 3);
  ir::Value* part0 = g.AddValue("part0");
  ir::Value* part1 = g.AddValue("part1");
  g.AddNode("ChannelShuffle", "shuffle", {a, b}, {part0, part1})->domain = "tessel";
  g.outputs() = {AddConv(g, "c", part0, 10, 4, 1), AddConv(g, "d", part1, 10, 4, 3)};
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  CpuExecutor fast(g);
  // oneDNN's convolutions compute channels last (on AVX2 because the graph
  // asks for it), and so does the shuffle between them.
  const std::vector<std::string> convs = KernelsOf(fast, g, "Conv");
  ASSERT_EQ(convs.size(), 4u);
  EXPECT_EQ(KernelsOf(fast, g, "ChannelShuffle"),
            std::vector<std::string>{"native channel gather channels last"})
      << convs[0];
  ExpectExecutorMatchesReference(fast, g, {RandomFloats({1, 8, 7, 9}, 24)});
}

// Types `g`'s nodes, builds the CPU executor on it, and expects the kernels
// of its `op` nodes to be `kernels` and its outputs the reference's on a
// random input of `shape`.
void ExpectKernelsAndReference(ir::Graph& g, const std::string& op,
                               const std::vector<std::string>& kernels, const Shape& shape,
                               uint32_t seed) {
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  CpuExecutor fast(g);
  EXPECT_EQ(KernelsOf(fast, g, op), kernels);
  ExpectExecutorMatchesReference(fast, g, {RandomFloats(shape, seed)});
}

TEST(FastKernels, Split_and_channel_slice_between_convs_run_channels_last) {
  REQUIRE_ONEDNN();
  // A conv -> Split along the channels (uneven) -> a conv on each part, and
  // a conv -> Slice of a channel range -> a conv (MixNet's and GhostNet's
  // blocks): every tensor may stay channels last.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 7, 9}, true);
  g.inputs() = {x};
  ir::Value* a = AddConv(g, "a", x, 8, 24, 1);
  ir::Value* part0 = g.AddValue("part0");
  ir::Value* part1 = g.AddValue("part1");
  g.AddNode("Split", "split",
            {a, g.AddConstant("sizes", Tensor::FromVector<int64_t>({8, 16}, {2}))}, {part0, part1})
      ->attrs.Set("axis", int64_t{1});
  ir::Value* b = AddConv(g, "b", x, 8, 32, 3);
  ir::Value* cut = g.AddValue("cut");
  auto ints = [&](const std::string& name, int64_t v) {
    return g.AddConstant(name, Tensor::FromVector<int64_t>({v}, {1}));
  };
  g.AddNode("Slice", "slice", {b, ints("starts", 8), ints("ends", 24), ints("axes", 1)}, {cut});
  g.outputs() = {AddConv(g, "c", part0, 8, 4, 1), AddConv(g, "d", part1, 16, 4, 3),
                 AddConv(g, "e", cut, 16, 4, 1)};
  ExpectKernelsAndReference(g, "Split", {"native split blocks channels last"}, {1, 8, 7, 9}, 25);
  CpuExecutor fast(g);
  EXPECT_EQ(KernelsOf(fast, g, "Slice"),
            std::vector<std::string>{"native channel rows channels last"});
}

TEST(FastKernels, Resize_between_convs_runs_channels_last) {
  REQUIRE_ONEDNN();
  // conv -> Resize (roi omitted, scales 2x: nearest, then linear with
  // half-pixel centers) -> conv: the resizes blend whole pixel rows.
  for (const char* mode : {"nearest", "linear"}) {
    SCOPED_TRACE(mode);
    ir::Graph g;
    g.set_opset_version(17);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 5, 7}, true);
    g.inputs() = {x};
    ir::Value* a = AddConv(g, "a", x, 8, 16, 3);
    ir::Value* up = g.AddValue("up");
    ir::Node* r = g.AddNode(
        "Resize", "resize",
        {a, nullptr, g.AddConstant("scales", Tensor::FromVector<float>({1, 1, 2, 2}, {4}))}, {up});
    r->attrs.Set("mode", std::string(mode));
    g.outputs() = {AddConv(g, "b", up, 16, 4, 3)};
    ExpectKernelsAndReference(g, "Resize", {"native resize pixels channels last"}, {1, 8, 5, 7},
                              26);
  }
}

TEST(FastKernels, Reduction_over_pixels_between_convs_runs_channels_last) {
  REQUIRE_ONEDNN();
  // As in ConvNeXt-V2's global response norm: conv -> ReduceL2 over the
  // pixels (keepdims) -> a 1x1 conv of the norms, and the first conv's
  // output also read by a second conv. Channels last the reduction is a
  // (N, H*W, C) one: columns of channels.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 6, 7}, true);
  g.inputs() = {x};
  ir::Value* a = AddConv(g, "a", x, 8, 16, 3);
  ir::Value* norm = g.AddValue("norm");
  ir::Node* r = g.AddNode("ReduceL2", "l2", {a}, {norm});
  r->attrs.Set("axes", std::vector<int64_t>{2, 3});
  g.outputs() = {AddConv(g, "b", norm, 16, 4, 1), AddConv(g, "c", a, 16, 4, 3)};
  ExpectKernelsAndReference(g, "ReduceL2", {"native reduce columns channels last"}, {1, 8, 6, 7},
                            27);
}

TEST(FastKernels, Equal_conv_weights_are_packed_once) {
  REQUIRE_ONEDNN();
  // Two convolutions with the same weights and bias (AddConv seeds them
  // alike): oneDNN reorders convolution weights into its blocked layout on
  // every ISA, and the second kernel shares the first one's copy.
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 9, 9}, true);
  g.inputs() = {x};
  g.outputs() = {AddConv(g, "b", AddConv(g, "a", x, 8, 8, 3), 8, 8, 3)};
  for (const auto& n : g.nodes()) ASSERT_TRUE(ops::InferNode(*n, 17).ok()) << n->name;
  CpuExecutor fast(g);
  ASSERT_NE(fast.fast_kernel(0), nullptr);
  ASSERT_NE(fast.fast_kernel(1), nullptr);
  EXPECT_GT(fast.stats().packed_weight_bytes, 0);
  EXPECT_EQ(fast.fast_kernel(0)->packed_weight_bytes() + fast.fast_kernel(1)->packed_weight_bytes(),
            fast.stats().packed_weight_bytes);
  EXPECT_TRUE(fast.fast_kernel(0)->packed_weight_bytes() == 0 ||
              fast.fast_kernel(1)->packed_weight_bytes() == 0);
  ExpectExecutorMatchesReference(fast, g, {RandomFloats({1, 8, 9, 9}, 25)});
}

TEST(FastKernels, Channel_shuffle_of_graph_inputs_copies_planes) {
  // Three inputs, odd sizes, read and written plain.
  ir::Graph g;
  g.set_opset_version(17);
  std::vector<ir::Value*> ins;
  std::vector<Tensor> inputs;
  for (int i = 0; i < 3; ++i) {
    ins.push_back(g.AddValue("x" + std::to_string(i), DType::kFloat32, {2, 5, 3, 3}, true));
    inputs.push_back(RandomFloats({2, 5, 3, 3}, 30 + i));
  }
  g.inputs() = ins;
  std::vector<ir::Value*> outs = {g.AddValue("y0"), g.AddValue("y1"), g.AddValue("y2")};
  g.AddNode("ChannelShuffle", "shuffle", ins, outs)->domain = "tessel";
  g.outputs() = outs;
  ASSERT_TRUE(ops::InferNode(*g.nodes()[0], 17).ok());
  CpuExecutor fast(g);
  EXPECT_EQ(KernelsOf(fast, g, "ChannelShuffle"), std::vector<std::string>{"native plane copy"});
  ExpectExecutorMatchesReference(fast, g, inputs);
}

TEST(FastReduce, Mean_over_spatial_axes_without_keepdims_and_sum_over_all) {
  REQUIRE_ONEDNN();
  AttributeMap mean;
  mean.Set("axes", std::vector<int64_t>{2, -1});
  mean.Set("keepdims", int64_t{0});
  OneNode m("ReduceMean", "", {{2, 5, 7, 3}}, {false}, mean, /*opset=*/13);
  ExpectMatchesReference(m);
  OneNode all("ReduceSum", "", {{3, 4, 5}}, {false}, {}, /*opset=*/13);
  ExpectMatchesReference(all);
  OneNode global("GlobalAveragePool", "", {{2, 9, 6, 5}}, {false}, {}, /*opset=*/13);
  ExpectMatchesReference(global);
}

// Reductions over contiguous axes run natively: rows (the last axis, as
// F.normalize), columns (axes before a long inner run, as selective kernels'
// sum over branches or GRN's norm over pixels, over several chunks of 512),
// size-1 axes between reduced ones, every kind.
TEST(FastReduce, Contiguous_axes_run_the_native_rows_and_columns_kernels) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    int64_t keepdims;
    const char* implementation;
  };
  const std::vector<Case> cases = {
      {{3, 4, 2, 37}, {-1}, 1, "reduce rows"},
      {{1, 2, 3, 1, 700}, {1, 2, 3}, 0, "reduce columns"},
      {{2, 5, 6, 1300}, {1, 2}, 1, "reduce columns"},
      {{2, 1, 5, 8}, {1, 2}, 0, "reduce columns"},
      // An image's pixels: the global-average kernel's for a mean only.
      {{2, 3, 4, 5}, {2, 3}, 1, "reduce rows"},
  };
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum"}) {
    for (const Case& c : cases) {
      AttributeMap a;
      a.Set("axes", c.axes);
      a.Set("keepdims", c.keepdims);
      OneNode t(op, "", {c.shape}, {false}, a, /*opset=*/11);
      if (std::string(op) == "ReduceLogSum") {  // of positive values
        for (int64_t i = 0; i < t.inputs[0].num_elements(); ++i)
          t.inputs[0].data<float>()[i] = std::fabs(t.inputs[0].data<float>()[i]) + 0.1f;
      }
      ExpectMatchesReference(t);
      std::unique_ptr<FastKernel> k = SelectFastKernel(*t.node, 11);
      ASSERT_NE(k, nullptr);
      const bool pixels_mean = std::string(op) == "ReduceMean" && c.axes.size() == 2 &&
                               c.axes[0] == 2 && c.shape.size() == 4;
      EXPECT_EQ(k->Choice().implementation, pixels_mean ? "global average" : c.implementation)
          << op << " " << ShapeToString(c.shape);
    }
  }
  // Axes apart (a kept axis of more than one between them) are not one run.
  AttributeMap apart;
  apart.Set("axes", std::vector<int64_t>{0, 2});
  OneNode split("ReduceL2", "", {{3, 4, 5}}, {false}, apart, /*opset=*/11);
  EXPECT_EQ(SelectFastKernel(*split.node, 11), nullptr);
}

// torch's x.mean([2, 3]) (MnasNet's head): the global-average kernel, with
// keepdims or without, axes as an attribute (opset 13) or a constant input
// (opset 18); a mean over other axes is not its.
TEST(FastReduce, Mean_over_an_images_pixels_runs_the_global_average_kernel) {
  for (int64_t keepdims : {0, 1}) {
    AttributeMap attrs;
    attrs.Set("axes", std::vector<int64_t>{-2, 3});
    attrs.Set("keepdims", keepdims);
    OneNode m("ReduceMean", "", {{2, 20, 7, 5}}, {false}, attrs, /*opset=*/13);
    std::unique_ptr<FastKernel> k = SelectFastKernel(*m.node, 13);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->Choice().ToString(), "native global average") << "keepdims " << keepdims;
    ExpectMatchesReference(m);
  }
  ir::Graph g;
  g.set_opset_version(18);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 33, 4, 3, 2}, true);
  g.inputs() = {x};
  ir::Value* y = g.AddValue("y");
  ir::Node* n =
      g.AddNode("ReduceMean", "mean",
                {x, g.AddConstant("axes", Tensor::FromVector<int64_t>({2, 3, 4}, {3}))}, {y});
  g.outputs() = {y};
  ASSERT_TRUE(ops::InferNode(*n, 18).ok());
  std::unique_ptr<FastKernel> k = SelectFastKernel(*n, 18);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->Choice().ToString(), "native global average");
  CpuExecutor fast(g);
  ExpectExecutorMatchesReference(fast, g, {RandomFloats({1, 33, 4, 3, 2}, 41)});

  AttributeMap channels;
  channels.Set("axes", std::vector<int64_t>{1, 2, 3});
  OneNode other("ReduceMean", "", {{2, 20, 7, 5}}, {false}, channels, /*opset=*/13);
  std::unique_ptr<FastKernel> not_global = SelectFastKernel(*other.node, 13);
  EXPECT_TRUE(not_global == nullptr ||
              not_global->Choice().ToString().find("global") == std::string::npos);
}

// A masked attention row is all -inf: its maximum is -inf, not the lowest
// finite float, and a NaN anywhere makes the maximum NaN (as in numpy).
TEST(FastReduce, Max_keeps_infinities_and_nan) {
  REQUIRE_ONEDNN();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> rows = {-inf, -inf, -inf, -inf, 1, nan, 2, 3, -inf, 5, -inf, 0};
  AttributeMap last;
  last.Set("axes", std::vector<int64_t>{-1});
  OneNode max("ReduceMax", "", {{3, 4}}, {false}, last, /*opset=*/13);
  std::copy(rows.begin(), rows.end(), max.inputs[0].data<float>());
  if (SelectFastKernel(*max.node, 13)) ExpectMatchesReference(max);
  OneNode global("GlobalMaxPool", "", {{1, 3, 2, 2}}, {false}, {}, /*opset=*/13);
  std::copy(rows.begin(), rows.end(), global.inputs[0].data<float>());
  if (SelectFastKernel(*global.node, 13)) ExpectMatchesReference(global);
  AttributeMap window;
  window.Set("kernel_shape", std::vector<int64_t>{2, 2});
  OneNode pool("MaxPool", "", {{1, 3, 2, 2}}, {false}, window, /*opset=*/13);
  std::copy(rows.begin(), rows.end(), pool.inputs[0].data<float>());
  if (SelectFastKernel(*pool.node, 13)) ExpectMatchesReference(pool);
}

TEST(FastKernels, Run_on_two_threads_like_on_one) {
  REQUIRE_ONEDNN();
  // 180 MFLOP: above the single-thread threshold, so oneDNN splits it.
  OneNode t("Conv", "", {{1, 64, 40, 40}, {96, 64, 3, 3}, {96}}, {false, true, true},
            ConvAttrs({1, 1}, {1, 1, 1, 1}));
  const CpuOptions options;
  for (int threads : {2, 1}) {
    const std::unique_ptr<ThreadPool> pool = ThreadPool::Make(threads);
    const CpuScope scope(options, *pool);
    EXPECT_EQ(pool->num_threads(), threads);
    ExpectMatchesReference(t);
  }
}

}  // namespace
}  // namespace tessel::cpu
