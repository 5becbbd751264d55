// Every OpenCL kernel against the reference executor, on small one-op (or
// fused) models, plus the runtime's device selection and program cache.
// Without an OpenCL platform (or in a sanitizer build, where PoCL's in-process
// LLVM is not reliable) the device tests skip, saying why.
#include "targets/opencl/executor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "onnx/test_blocks.h"
#include "onnx/test_data.h"
#include "ops/fused_activation.h"
#include "ops/op_test_util.h"
#include "targets/opencl/cl_error.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/test_env.h"
#include "targets/opencl/work_size.h"
#include "targets/testing.h"

namespace tessel::opencl {
namespace {

using ops::test_util::RandomFloats;

using onnx_io::ModelBuilder;

class OpenClTest : public OpenClDeviceTest {
 protected:
  // Compiles `b`, runs it on the reference target and on OpenCL with the
  // same random inputs, and compares every output.
  void ExpectMatchesReference(ModelBuilder& b, bool fusion = false, double rtol = 1e-4,
                              double atol = 1e-5) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tessel_opencl_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "m.onnx";
    ASSERT_TRUE(b.Save(path).ok());
    CompilerOptions options;
    options.fusion = fusion;
    StatusOr<CompiledModel> model = Compile(path, targets::testing::Reference(), options);
    ASSERT_TRUE(model.ok()) << model.status().message();
    fused_activations_.clear();
    for (const auto& node : model->graph->nodes()) {
      if (node->domain != "tessel" || node->op_type != "FusedConv") continue;
      StatusOr<ops::FusedActivation> a = ops::ParseFusedActivation(*node);
      ASSERT_TRUE(a.ok()) << a.status().message();
      fused_activations_.push_back(*a);
    }
    std::mt19937 rng(7);
    std::vector<Tensor> inputs;
    for (const ir::Value* v : model->graph->inputs()) {
      Tensor t(v->dtype, v->shape);
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        if (v->dtype == DType::kFloat32) {
          t.data<float>()[i] = std::uniform_real_distribution<float>(-2, 2)(rng);
        } else if (v->dtype == DType::kInt64) {
          t.data<int64_t>()[i] = std::uniform_int_distribution<int64_t>(-3, 5)(rng);
        } else if (v->dtype == DType::kUInt8) {
          t.data<uint8_t>()[i] = static_cast<uint8_t>(7 * i + 1);
        }
      }
      inputs.push_back(std::move(t));
    }
    StatusOr<std::unique_ptr<targets::Executable>> reference =
        Prepare(*model, targets::testing::Reference());
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    StatusOr<std::vector<Tensor>> expected = (*reference)->Run(inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<std::unique_ptr<OpenClExecutor>> exec =
        OpenClExecutor::Create(*model->graph, model->memory, *runtime_, executor_options_);
    ASSERT_TRUE(exec.ok()) << exec.status().message();
    StatusOr<std::vector<Tensor>> actual = (*exec)->Run(inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t k = 0; k < actual->size(); ++k) {
      const auto c = onnx_io::CompareTensors((*actual)[k], (*expected)[k], rtol, atol);
      EXPECT_TRUE(c.ok) << "output " << k << ": " << c.problem << " max abs error "
                        << c.max_abs_error << ", " << c.mismatches << " elements off";
    }
    launches_ = (*exec)->launches().size();
    kernel_names_.clear();
    programs_.clear();
    for (const Launch& l : (*exec)->launches()) {
      kernel_names_.push_back(l.kernel_name);
      programs_.push_back(l.program);
    }
    std::filesystem::remove_all(dir);
  }

  // Whether a launch ran a kernel whose name starts with `kernel`.
  bool Used(const std::string& kernel) const {
    for (const std::string& k : kernel_names_) {
      if (k.rfind(kernel, 0) == 0) return true;
    }
    return false;
  }

  // Whether a launch ran a strided copy (of any element size).
  bool Copied() const {
    for (const std::string& k : kernel_names_) {
      if (k.find("_strided_copy") != std::string::npos) return true;
    }
    return false;
  }

  ExecutorOptions executor_options_;  // for ExpectMatchesReference's executor
  size_t launches_ = 0;
  std::vector<std::string> kernel_names_;
  std::vector<KernelProgram> programs_;  // by launch
  // The activation of every FusedConv of the last compiled model.
  std::vector<ops::FusedActivation> fused_activations_;
};

// A one-Conv model; its output 'y' is the graph output unless `y_is_output`
// is false (the caller adds what reads it).
ModelBuilder ConvModel(Shape x, Shape w, int64_t group, std::vector<int64_t> strides,
                       std::vector<int64_t> pads, bool bias, bool y_is_output = true) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, x);
  b.Initializer("w", [&] {
    std::mt19937 rng(3);
    Tensor t(DType::kFloat32, w);
    for (int64_t i = 0; i < t.num_elements(); ++i)
      t.data<float>()[i] = std::uniform_real_distribution<float>(-1, 1)(rng);
    return t;
  }());
  std::vector<std::string> ins = {"x", "w"};
  if (bias) {
    b.Initializer("b", Tensor::FromVector<float>(
                           std::vector<float>(static_cast<size_t>(w[0]), 0.25f), {w[0]}));
    ins.push_back("b");
  }
  auto& n = b.Node("Conv", ins, {"y"});
  ModelBuilder::SetAttr(n, "group", group);
  ModelBuilder::SetAttr(n, "strides", strides);
  ModelBuilder::SetAttr(n, "pads", pads);
  if (y_is_output) b.Output("y");
  return b;
}

TEST_F(OpenClTest, Conv_general_3x3_stride2) {
  ModelBuilder b = ConvModel({1, 3, 11, 9}, {5, 3, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, true);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_conv2d_direct"));
}

TEST_F(OpenClTest, Conv_as_an_implicit_gemm) {
  // 24 output channels: the register-tiled implicit GEMM (its taps a table),
  // asymmetric pads, two images.
  ModelBuilder b = ConvModel({2, 5, 9, 8}, {24, 5, 3, 3}, 1, {1, 1}, {1, 0, 1, 2}, true);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_conv_gemm_"));
  EXPECT_EQ(launches_, 1u);
}

TEST_F(OpenClTest, Conv_implicit_gemm_grouped_strided_dilated) {
  // Two groups of 16 output channels, stride 2, dilation 2: each (image,
  // group) is one GEMM of the batch, its bias per group.
  ModelBuilder b = ConvModel({2, 6, 13, 11}, {32, 3, 3, 3}, 2, {2, 2}, {2, 1, 2, 1}, true, false);
  b.Node("Relu", {"y"}, {"z"});
  b.Output("z");
  for (auto& n : *b.proto().mutable_graph()->mutable_node()) {
    if (n.op_type() == "Conv") ModelBuilder::SetAttr(n, "dilations", std::vector<int64_t>{2, 2});
  }
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_TRUE(Used("f32_conv_gemm_"));
  EXPECT_EQ(launches_, 1u);
}

TEST_F(OpenClTest, Conv_split_k_when_the_tiles_leave_the_device_idle) {
  // 32 output channels on 5x5 pixels over 64 x 3 x 3 taps: one tile, fewer
  // work-groups than the device's compute units, so the k range splits in
  // parts that a second launch adds up through the epilogue (bias, residual,
  // activation).
  ModelBuilder b = ConvModel({1, 64, 5, 5}, {32, 64, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, false);
  b.Input("r", DType::kFloat32, {1, 32, 5, 5});
  b.Node("Add", {"y", "r"}, {"s"});
  b.Node("Relu", {"s"}, {"z"});
  b.Output("z");
  ExpectMatchesReference(b, /*fusion=*/true);
  if (runtime_->device().compute_units < 2) GTEST_SKIP() << "one compute unit: nothing to fill";
  EXPECT_TRUE(Used("f32_conv_gemm_"));
  EXPECT_TRUE(Used("f32_split_k_sum"));
  EXPECT_EQ(launches_, 2u);
}

TEST_F(OpenClTest, Conv_grouped_asymmetric_pads) {
  ModelBuilder b = ConvModel({2, 4, 7, 6}, {6, 2, 3, 2}, 2, {1, 2}, {0, 1, 2, 0}, false);
  ExpectMatchesReference(b);
}

TEST_F(OpenClTest, Conv_depthwise) {
  ModelBuilder b = ConvModel({1, 8, 10, 13}, {8, 1, 3, 3}, 8, {1, 1}, {1, 1, 1, 1}, true);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_conv2d_depthwise_x4"));
}

TEST_F(OpenClTest, Conv_depthwise_stride2) {
  ModelBuilder b = ConvModel({1, 4, 9, 11}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1, 1, 1}, false);
  ExpectMatchesReference(b);
}

TEST_F(OpenClTest, Conv_pointwise_runs_as_gemm) {
  ModelBuilder b = ConvModel({2, 37, 5, 7}, {45, 37, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, true);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_gemm_"));
}

TEST_F(OpenClTest, Conv_pointwise_on_one_pixel_runs_as_gemv) {
  // Squeeze-and-excitation: 1x1 convolutions on a pooled 1x1 image, with
  // bias, hard sigmoid and a residual in the epilogue (indexed by output
  // channel, which the transposed product walks as its column).
  ModelBuilder b =
      ConvModel({1, 600, 1, 1}, {150, 600, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, true, false);
  b.Input("r", DType::kFloat32, {1, 150, 1, 1});
  b.Node("Add", {"y", "r"}, {"s"});
  b.Node("HardSigmoid", {"s"}, {"z"});
  b.Output("z");
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_EQ(kernel_names_, std::vector<std::string>{"f32_gemv_rows"});
  // And a Gemm of one column: A (M x K) times a K-vector.
  ModelBuilder g(13);
  g.Initializer("a", RandomFloats({70, 300}, 18));
  g.Input("v", DType::kFloat32, {300, 1});
  g.Initializer("c", RandomFloats({70, 1}, 19));
  auto& n = g.Node("Gemm", {"a", "v", "c"}, {"y"});
  ModelBuilder::SetAttr(n, "alpha", 0.5f);
  ModelBuilder::SetAttr(n, "beta", 2.0f);
  g.Output("y");
  ExpectMatchesReference(g);
  EXPECT_TRUE(Used("f32_gemv_"));
}

TEST_F(OpenClTest, Conv_1d_signals_as_one_row_images) {
  // Audio front ends: strided, grouped with asymmetric pads, depthwise, and
  // a 1x1 (a GEMM); each a signal (N, C, L).
  ModelBuilder strided = ConvModel({1, 3, 40}, {8, 3, 5}, 1, {2}, {2, 1}, true);
  ExpectMatchesReference(strided);
  EXPECT_TRUE(Used("f32_conv2d_direct"));
  ModelBuilder wide = ConvModel({1, 20, 50}, {32, 20, 3}, 1, {2}, {1, 1}, true);
  ExpectMatchesReference(wide);
  EXPECT_TRUE(Used("f32_conv_gemm_"));
  ModelBuilder grouped = ConvModel({2, 6, 17}, {6, 2, 4}, 3, {1}, {2, 1}, false);
  ExpectMatchesReference(grouped);
  ModelBuilder depthwise = ConvModel({1, 8, 33}, {8, 1, 3}, 8, {1}, {1, 1}, true);
  ExpectMatchesReference(depthwise);
  EXPECT_TRUE(Used("f32_conv2d_depthwise_x4"));
  ModelBuilder pointwise = ConvModel({1, 16, 21}, {24, 16, 1}, 1, {1}, {0, 0}, true);
  ExpectMatchesReference(pointwise);
  EXPECT_TRUE(Used("f32_gemm_"));
}

TEST_F(OpenClTest, Copies_of_16_byte_runs_move_uint4s) {
  // Window partitions and head splits: a Transpose whose innermost runs are
  // 8 floats, merged axes and all, and a Gather of rows of 8 floats move
  // uint4s; a Slice starting 3 floats in moves words.
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 4, 8});
  ModelBuilder::SetAttr(b.Node("Transpose", {"x"}, {"t"}), "perm",
                        std::vector<int64_t>{0, 2, 1, 3});
  b.Initializer("ids", Tensor::FromVector<int64_t>({2, 0, -1}, {3}));
  ModelBuilder::SetAttr(b.Node("Gather", {"x", "ids"}, {"g"}), "axis", int64_t{2});
  b.Initializer("starts", Tensor::FromVector<int64_t>({3}, {1}));
  b.Initializer("ends", Tensor::FromVector<int64_t>({7}, {1}));
  b.Initializer("axes", Tensor::FromVector<int64_t>({3}, {1}));
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"s"});
  for (const char* out : {"t", "g", "s"}) b.Output(out);
  ExpectMatchesReference(b);
  ASSERT_EQ(kernel_names_.size(), 3u);
  EXPECT_EQ(kernel_names_[0], "b128_strided_copy");
  EXPECT_EQ(kernel_names_[1], "b128_gather_i64");
  EXPECT_EQ(kernel_names_[2], "b32_strided_copy");
}

TEST_F(OpenClTest, Products_planned_for_a_large_gpu) {
  // Planned for 132 compute units (an H100 or H200), the products that
  // cannot fill it take 32x32 tiles, and deep ones split k: the kernels a
  // GPU runs, checked on whatever device runs the tests.
  executor_options_.compute_units = 132;
  ModelBuilder deep =
      ConvModel({1, 256, 7, 7}, {64, 256, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, false);
  deep.Input("r", DType::kFloat32, {1, 64, 7, 7});
  deep.Node("Add", {"y", "r"}, {"s"});
  deep.Node("Relu", {"s"}, {"z"});
  deep.Output("z");
  ExpectMatchesReference(deep, /*fusion=*/true, 1e-4, 1e-4);
  EXPECT_TRUE(Used("f32_conv_gemm_32x32"));
  EXPECT_TRUE(Used("f32_split_k_sum"));
  EXPECT_EQ(launches_, 2u);
  ModelBuilder grouped = ConvModel({2, 64, 9, 9}, {64, 16, 3, 3}, 4, {2, 2}, {1, 1, 1, 1}, true);
  ExpectMatchesReference(grouped);
  EXPECT_TRUE(Used("f32_conv_gemm_32x32"));
  EXPECT_FALSE(Used("f32_split_k_sum"));  // k = 144: too short to split
  ModelBuilder pointwise =
      ConvModel({1, 40, 13, 11}, {72, 40, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, true);
  ExpectMatchesReference(pointwise);
  EXPECT_TRUE(Used("f32_gemm_32x32"));
  ModelBuilder gemm(13);
  gemm.Input("a", DType::kFloat32, {3, 600});
  gemm.Initializer("w", RandomFloats({70, 600}, 5));
  gemm.Initializer("c", RandomFloats({70}, 6));
  ModelBuilder::SetAttr(gemm.Node("Gemm", {"a", "w", "c"}, {"y"}), "transB", int64_t{1});
  gemm.Output("y");
  ExpectMatchesReference(gemm, false, 1e-4, 1e-4);
  EXPECT_TRUE(Used("f32_gemm_32x32"));
  EXPECT_TRUE(Used("f32_split_k_sum"));
}

TEST_F(OpenClTest, FusedConv_residual_and_clip_as_an_epilogue) {
  // Conv -> Add(r) -> Clip(0, 6) becomes one FusedConv (fuse-conv stage).
  // The convolution stores it: one launch, in the direct kernel (8 output
  // channels) and in the implicit GEMM (24).
  for (int64_t oc : {8, 24}) {
    ModelBuilder b = ConvModel({1, 4, 6, 5}, {oc, 4, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, false);
    b.Input("r", DType::kFloat32, {1, oc, 6, 5});
    b.Initializer("lo", Tensor::FromVector<float>({0.0f}, {}));
    b.Initializer("hi", Tensor::FromVector<float>({0.5f}, {}));
    b.Node("Add", {"y", "r"}, {"s"});
    b.Node("Clip", {"s", "lo", "hi"}, {"z"});
    b.Output("z");
    ExpectMatchesReference(b, /*fusion=*/true);
    EXPECT_EQ(launches_, 1u) << oc;
  }
}

TEST_F(OpenClTest, FusedConv_relu_without_residual) {
  ModelBuilder b = ConvModel({1, 3, 7, 7}, {5, 3, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, false, false);
  b.Node("Relu", {"y"}, {"z"});
  b.Output("z");
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_EQ(launches_, 1u);
}

TEST_F(OpenClTest, FusedConv_swish_and_hard_sigmoid_as_epilogues) {
  // Conv -> Mul(v, Sigmoid(v)) and Conv -> HardSigmoid each become one
  // FusedConv whose epilogue applies the activation.
  ModelBuilder swish = ConvModel({1, 3, 7, 7}, {5, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, false);
  swish.Node("Sigmoid", {"y"}, {"s"});
  swish.Node("Mul", {"y", "s"}, {"z"});
  swish.Output("z");
  ExpectMatchesReference(swish, /*fusion=*/true);
  EXPECT_EQ(launches_, 1u);
  ModelBuilder hard = ConvModel({1, 3, 7, 7}, {5, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, false);
  onnx::NodeProto& n = hard.Node("HardSigmoid", {"y"}, {"z"});
  ModelBuilder::SetAttr(n, "alpha", 0.3f);
  ModelBuilder::SetAttr(n, "beta", 0.4f);
  hard.Output("z");
  ExpectMatchesReference(hard, /*fusion=*/true);
  EXPECT_EQ(launches_, 1u);
}

TEST_F(OpenClTest, FusedConv_every_activation_kind_matches_the_reference) {
  // Each kind as the fusion pass finds it, with parameters that tell the
  // kinds apart: catches an epilogue code (TESSEL_ACT_*) that disagrees
  // with ops::ActivationKind, or a kind the epilogue lacks.
  using ops::ActivationKind;
  for (ActivationKind kind : ops::kActivationKinds) {
    SCOPED_TRACE(ops::ActivationName(kind));
    ModelBuilder b = ConvModel({1, 3, 6, 5}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, true, false);
    ops::FusedActivation want = ops::DefaultActivation(kind);
    switch (kind) {
      case ActivationKind::kNone:
        // Only a residual makes an epilogue run.
        b.Input("r", DType::kFloat32, {1, 4, 6, 5});
        b.Node("Add", {"y", "r"}, {"z"});
        break;
      case ActivationKind::kRelu:
        b.Node("Relu", {"y"}, {"z"});
        break;
      case ActivationKind::kClip:
        b.Initializer("lo", Tensor::FromVector<float>({-0.5f}, {}));
        b.Initializer("hi", Tensor::FromVector<float>({0.7f}, {}));
        b.Node("Clip", {"y", "lo", "hi"}, {"z"});
        want.alpha = -0.5f;
        want.beta = 0.7f;
        break;
      case ActivationKind::kLeakyRelu:
        ModelBuilder::SetAttr(b.Node("LeakyRelu", {"y"}, {"z"}), "alpha", 0.3f);
        want.alpha = 0.3f;
        break;
      case ActivationKind::kSigmoid:
        b.Node("Sigmoid", {"y"}, {"z"});
        break;
      case ActivationKind::kHardSigmoid: {
        onnx::NodeProto& n = b.Node("HardSigmoid", {"y"}, {"z"});
        ModelBuilder::SetAttr(n, "alpha", 0.3f);
        ModelBuilder::SetAttr(n, "beta", 0.4f);
        want.alpha = 0.3f;
        want.beta = 0.4f;
        break;
      }
      case ActivationKind::kHardSwish: {
        // Opset 13 has no HardSwish op: v * HardSigmoid(v; 1/6, 1/2).
        onnx::NodeProto& n = b.Node("HardSigmoid", {"y"}, {"s"});
        ModelBuilder::SetAttr(n, "alpha", 1.0f / 6.0f);
        ModelBuilder::SetAttr(n, "beta", 0.5f);
        b.Node("Mul", {"y", "s"}, {"z"});
        break;
      }
      case ActivationKind::kSwish:
        b.Node("Sigmoid", {"y"}, {"s"});
        b.Node("Mul", {"y", "s"}, {"z"});
        break;
    }
    b.Output("z");
    ExpectMatchesReference(b, /*fusion=*/true);
    EXPECT_EQ(launches_, 1u);
    ASSERT_EQ(fused_activations_.size(), 1u);
    EXPECT_EQ(fused_activations_[0], want);
  }
}

TEST_F(OpenClTest, Channel_shuffle_as_one_strided_copy_per_input_and_part) {
  // ShuffleNet's Concat -> Reshape -> Transpose -> Reshape -> two Slices
  // becomes one ChannelShuffle (fuse-shuffle stage): 2 inputs x 2 parts.
  ModelBuilder b(13);
  b.Input("a", DType::kFloat32, {1, 6, 3, 5});
  b.Input("b", DType::kFloat32, {1, 6, 3, 5});
  auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    b.Initializer(name, Tensor::FromVector<int64_t>(v, {n}));
  };
  ints("grouped", {1, 2, 6, 3, 5});
  ints("merged", {1, 12, 3, 5});
  ints("zero", {0});
  ints("six", {6});
  ints("twelve", {12});
  ints("axis", {1});
  ModelBuilder::SetAttr(b.Node("Concat", {"a", "b"}, {"cat"}), "axis", int64_t{1});
  b.Node("Reshape", {"cat", "grouped"}, {"g"});
  ModelBuilder::SetAttr(b.Node("Transpose", {"g"}, {"t"}), "perm",
                        std::vector<int64_t>{0, 2, 1, 3, 4});
  b.Node("Reshape", {"t", "merged"}, {"s"});
  b.Node("Slice", {"s", "zero", "six", "axis"}, {"y0"});
  b.Node("Slice", {"s", "six", "twelve", "axis"}, {"y1"});
  b.Output("y0");
  b.Output("y1");
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_EQ(launches_, 4u);
  EXPECT_TRUE(Used("b32_strided_copy"));
}

TEST_F(OpenClTest, FusedMatMul_bias_and_residual_in_the_product) {
  // MatMul -> Add(bias) -> Add(r) becomes one FusedMatMul (fuse-matmul stage).
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3, 2, 8});
  b.Input("r", DType::kFloat32, {3, 2, 5});
  b.Initializer("w", RandomFloats({8, 5}, 1));
  b.Initializer("bias", RandomFloats({5}, 2));
  b.Node("MatMul", {"x", "w"}, {"m"});
  b.Node("Add", {"m", "bias"}, {"s"});
  b.Node("Add", {"s", "r"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_EQ(launches_, 1u);
  EXPECT_TRUE(Used("f32_gemm_"));
}

// BERT's attention: q, k, v split into heads by Reshape + Transpose, the
// scores scaled and masked, the result merged back. One FusedAttention
// launch reads the heads and writes the merged result through the
// Transposes' strides: no copy is launched (each Transpose a view). Heads
// of up to 64 features run a blocked kernel: 32 query rows a work-group
// where the 10 blocks of 300 rows by 2 heads fill the device (the CPU
// devices tests run on), else 8 (planned for 132 compute units); larger
// heads a work-group per query row.
TEST_F(OpenClTest, Attention_reads_and_writes_its_heads_through_strides) {
  for (const int64_t D : {8, 80, -8}) {
    executor_options_.compute_units = D < 0 ? 132 : 0;
    const int64_t F = D < 0 ? -D : D;  // features per head
    const int64_t S = F == 80 ? 37 : 300, H = 2;
    ModelBuilder b(13);
    b.Initializer("heads", Tensor::FromVector<int64_t>({1, S, H, F}, {4}));
    b.Initializer("merged", Tensor::FromVector<int64_t>({1, S, H * F}, {3}));
    b.Initializer("root", Tensor::FromVector<float>({2.83f}, {}));
    for (const std::string x : {"q", "k", "v"}) {
      b.Input(x, DType::kFloat32, {1, S, H * F});
      b.Node("Reshape", {x, "heads"}, {x + ".h"});
      ModelBuilder::SetAttr(
          b.Node("Transpose", {x + ".h"}, {x + ".t"}), "perm",
          x == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
    }
    b.Input("mask", DType::kFloat32, {1, 1, 1, S});
    b.Node("MatMul", {"q.t", "k.t"}, {"s"});
    b.Node("Div", {"s", "root"}, {"sd"});
    b.Node("Add", {"sd", "mask"}, {"sm"});
    b.Node("Softmax", {"sm"}, {"p"});
    b.Node("MatMul", {"p", "v.t"}, {"o"});
    ModelBuilder::SetAttr(b.Node("Transpose", {"o"}, {"o.t"}), "perm",
                          std::vector<int64_t>{0, 2, 1, 3});
    b.Node("Reshape", {"o.t", "merged"}, {"y"});
    b.Output("y");
    ExpectMatchesReference(b, /*fusion=*/true);
    const bool wide = D > 0 && 20 >= runtime_->device().compute_units;
    EXPECT_TRUE(Used(F > 64 ? "f32_attention_rows"
                     : wide ? "f32_attention_32x8"
                            : "f32_attention_8x32"))
        << D;
    EXPECT_FALSE(Copied()) << D;
  }
}

// Llama's: rotary embeddings on q and k (read through the head Transposes'
// strides), grouped-query heads repeated by Expand (read as they are).
// Keys masked with -inf across block boundaries (70 keys), and a query row
// whose keys are all masked, which torch's Where after the softmax zeros:
// every attention kernel gives the reference's answer.
TEST_F(OpenClTest, Attention_with_masked_keys_and_a_fully_masked_row) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& [features, compute_units] :
       std::vector<std::pair<int64_t, int64_t>>{{16, 0}, {16, 132}, {80, 0}}) {
    executor_options_.compute_units = compute_units;
    const int64_t S = 40, L = 70;
    Tensor mask(DType::kFloat32, {1, 1, S, L});
    for (int64_t i = 0; i < S; ++i) {
      for (int64_t j = 0; j < L; ++j) {
        mask.data<float>()[i * L + j] = i == 5 || (j + i) % 3 == 0 ? -inf : 0.0f;
      }
    }
    ModelBuilder b(13);
    b.Input("q", DType::kFloat32, {1, 1, S, features});
    b.Input("k", DType::kFloat32, {1, 1, L, features});
    b.Input("v", DType::kFloat32, {1, 1, L, features});
    b.Initializer("mask", mask);
    b.Initializer("zero", Tensor::FromVector<float>({0.0f}, {}));
    ModelBuilder::SetAttr(b.Node("Transpose", {"k"}, {"kt"}), "perm",
                          std::vector<int64_t>{0, 1, 3, 2});
    b.Node("MatMul", {"q", "kt"}, {"s"});
    b.Node("Add", {"s", "mask"}, {"sm"});
    b.Node("Softmax", {"sm"}, {"p"});
    b.Node("IsNaN", {"p"}, {"nan"});
    b.Node("Where", {"nan", "zero", "p"}, {"pz"});
    b.Node("MatMul", {"pz", "v"}, {"y"});
    b.Output("y");
    ExpectMatchesReference(b, /*fusion=*/true);
    EXPECT_EQ(launches_, 1u) << features << " " << compute_units;
    EXPECT_TRUE(Used(features > 64   ? "f32_attention_rows"
                     : compute_units ? "f32_attention_8x32"
                                     : "f32_attention_32x8"));
  }
}

TEST_F(OpenClTest, Rotary_and_grouped_query_attention) {
  ModelBuilder b(17);
  onnx_io::test_blocks::LlamaAttention(b, /*S=*/7, /*D=*/8, /*Hq=*/4, /*Hkv=*/2);
  b.Output("y");
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_TRUE(Used("f32_rotary"));
  EXPECT_TRUE(Used("f32_attention_"));
  EXPECT_FALSE(Copied());
}

TEST_F(OpenClTest, MaxPool_ceil_mode) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 3, 10, 9});
  auto& n = b.Node("MaxPool", {"x"}, {"y"});
  ModelBuilder::SetAttr(n, "kernel_shape", std::vector<int64_t>{3, 3});
  ModelBuilder::SetAttr(n, "strides", std::vector<int64_t>{2, 2});
  ModelBuilder::SetAttr(n, "ceil_mode", int64_t{1});
  b.Output("y");
  ExpectMatchesReference(b);
}

TEST_F(OpenClTest, AveragePool_count_include_pad) {
  for (int64_t include : {0, 1}) {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {1, 2, 7, 8});
    auto& n = b.Node("AveragePool", {"x"}, {"y"});
    ModelBuilder::SetAttr(n, "kernel_shape", std::vector<int64_t>{3, 3});
    ModelBuilder::SetAttr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
    ModelBuilder::SetAttr(n, "strides", std::vector<int64_t>{2, 2});
    ModelBuilder::SetAttr(n, "count_include_pad", include);
    b.Output("y");
    ExpectMatchesReference(b);
  }
}

TEST_F(OpenClTest, GlobalAveragePool_and_ReduceMean) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 5, 6, 7});
  b.Node("GlobalAveragePool", {"x"}, {"g"});
  auto& r = b.Node("ReduceMean", {"x"}, {"m"});
  ModelBuilder::SetAttr(r, "axes", std::vector<int64_t>{2, 3});
  ModelBuilder::SetAttr(r, "keepdims", int64_t{0});
  b.Output("g");
  b.Output("m");
  ExpectMatchesReference(b);
}

// Rows of 600 and 289: a work-group reduces each (f32_reduce_rows); rows of
// 49 (11 of them: not a whole work-group of 8): 16 items each
// (f32_reduce_rows_short). Every kind, with NaN in one row of max and min.
TEST_F(OpenClTest, Long_and_short_rows_reduce_by_work_group) {
  const std::vector<std::pair<Shape, std::string>> cases = {
      {{2, 3, 20, 30}, "f32_reduce_rows"},
      {{1, 4, 17, 17}, "f32_reduce_rows"},
      {{1, 11, 7, 7}, "f32_reduce_rows_short"}};
  for (const auto& [shape, kernel] : cases) {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, shape);
    Tensor nan(DType::kFloat32, {1, shape[1], shape[2], shape[3]});
    for (int64_t i = 0; i < nan.num_elements(); ++i) nan.data<float>()[i] = 0;
    nan.data<float>()[shape[2] * shape[3] + 5] = std::numeric_limits<float>::quiet_NaN();
    b.Initializer("nan", nan);
    b.Node("Add", {"x", "nan"}, {"xn"});
    b.Node("GlobalAveragePool", {"x"}, {"avg"});
    b.Node("GlobalMaxPool", {"xn"}, {"max"});
    b.Initializer("axes", Tensor::FromVector<int64_t>({2, 3}, {2}));
    b.Node("ReduceSum", {"x", "axes"}, {"sum"});
    b.Node("Mul", {"x", "x"}, {"xx"});  // positive, for the log of the sum
    for (const char* op :
         {"ReduceMin", "ReduceSumSquare", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum"}) {
      const std::string name = op;
      auto& n = b.Node(op,
                       {name == "ReduceMin"      ? "xn"
                        : name == "ReduceLogSum" ? "xx"
                                                 : "x"},
                       {op});
      ModelBuilder::SetAttr(n, "axes", std::vector<int64_t>{2, 3});
    }
    for (const char* out : {"avg", "max", "sum", "ReduceMin", "ReduceSumSquare", "ReduceProd",
                            "ReduceL1", "ReduceL2", "ReduceLogSum"}) {
      b.Output(out);
    }
    ExpectMatchesReference(b);
    EXPECT_TRUE(Used(kernel)) << ShapeToString(shape);
    if (kernel == "f32_reduce_rows") {
      EXPECT_FALSE(Used("f32_reduce_rows_short"));
    }
  }
}

TEST_F(OpenClTest, Gemm_transB_with_bias) {
  ModelBuilder b(13);
  b.Input("a", DType::kFloat32, {3, 70});
  b.Initializer("w", RandomFloats({50, 70}, 5));
  b.Initializer("c", RandomFloats({50}, 6));
  auto& n = b.Node("Gemm", {"a", "w", "c"}, {"y"});
  ModelBuilder::SetAttr(n, "transB", int64_t{1});
  ModelBuilder::SetAttr(n, "alpha", 0.5f);
  b.Output("y");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_gemm_"));
}

TEST_F(OpenClTest, Gemm_both_operands_transposed_with_a_full_c) {
  // A stored k-major and B n-major: both tiles staged along their
  // contiguous axis; C a full matrix scaled by beta.
  ModelBuilder b(13);
  b.Input("a", DType::kFloat32, {70, 37});
  b.Initializer("w", RandomFloats({45, 70}, 7));
  b.Initializer("c", RandomFloats({37, 45}, 8));
  auto& n = b.Node("Gemm", {"a", "w", "c"}, {"y"});
  ModelBuilder::SetAttr(n, "transA", int64_t{1});
  ModelBuilder::SetAttr(n, "transB", int64_t{1});
  ModelBuilder::SetAttr(n, "alpha", 0.75f);
  ModelBuilder::SetAttr(n, "beta", -0.5f);
  b.Output("y");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_gemm_"));
}

TEST_F(OpenClTest, Thin_products_an_item_per_output) {
  // Talking heads: scores [1, 50, 50, 4] mixed over their 4 heads by a
  // 4 x 4 matrix with a bias, as a batched MatMul; N = K = 4.
  ModelBuilder b(13);
  b.Input("s", DType::kFloat32, {1, 50, 50, 4});
  b.Initializer("w", RandomFloats({4, 4}, 9));
  b.Initializer("bias", RandomFloats({4}, 10));
  b.Node("MatMul", {"s", "w"}, {"m"});
  b.Node("Add", {"m", "bias"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b, /*fusion=*/true);
  EXPECT_EQ(kernel_names_, std::vector<std::string>{"f32_gemm_thin"});
}

TEST_F(OpenClTest, Gemv_both_layouts) {
  ModelBuilder b(13);
  b.Input("a", DType::kFloat32, {1, 300});
  b.Initializer("wt", RandomFloats({40, 300}, 15));
  b.Initializer("w", RandomFloats({300, 40}, 16));
  b.Initializer("c", RandomFloats({40}, 17));
  auto& n = b.Node("Gemm", {"a", "wt", "c"}, {"y"});
  ModelBuilder::SetAttr(n, "transB", int64_t{1});
  b.Node("Gemm", {"a", "w", "c"}, {"z"});
  b.Output("y");
  b.Output("z");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_gemv_rows"));
  EXPECT_TRUE(Used("f32_gemv_cols"));
}

TEST_F(OpenClTest, MatMul_batched_and_broadcast) {
  ModelBuilder b(13);
  b.Input("a", DType::kFloat32, {2, 3, 33, 40});
  b.Input("b", DType::kFloat32, {2, 3, 40, 35});
  b.Initializer("w", RandomFloats({35, 17}, 9));
  b.Node("MatMul", {"a", "b"}, {"ab"});
  b.Node("MatMul", {"ab", "w"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b);
}

TEST_F(OpenClTest, MatMul_stack_of_rows_against_one_matrix) {
  ModelBuilder b(13);
  b.Input("a", DType::kFloat32, {40, 1, 24});
  b.Initializer("w", RandomFloats({24, 36}, 19));
  b.Node("MatMul", {"a", "w"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b);
  ASSERT_EQ(launches_, 1u);
  EXPECT_TRUE(Used("f32_gemm_"));
}

TEST_F(OpenClTest, Softmax_last_axis_and_middle_axis) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 200});
  b.Node("Softmax", {"x"}, {"y"});
  auto& n = b.Node("Softmax", {"x"}, {"z"});
  ModelBuilder::SetAttr(n, "axis", int64_t{1});
  b.Output("y");
  b.Output("z");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_softmax_rows"));
  EXPECT_TRUE(Used("f32_softmax_strided"));
}

TEST_F(OpenClTest, LayerNormalization_long_and_short_rows) {
  // Rows of 300: a work-group each; of 40 (13 rows: not a whole work-group
  // of 8): 16 items each; one row of 9000, fewer rows than the device has
  // compute units: by parts (three launches). With the mean and inverse
  // deviation outputs.
  for (const int64_t len : {300, 40, 9000}) {
    const int64_t rows = len == 9000 ? 1 : 13;
    ModelBuilder b(17);
    b.Input("x", DType::kFloat32, {rows, len});
    b.Initializer("s", RandomFloats({len}, 11));
    b.Initializer("b", RandomFloats({len}, 12));
    auto& n = b.Node("LayerNormalization", {"x", "s", "b"}, {"y", "mean", "inv_std"});
    ModelBuilder::SetAttr(n, "epsilon", 1e-5f);
    for (const char* out : {"y", "mean", "inv_std"}) b.Output(out);
    ExpectMatchesReference(b);
    if (len == 9000 && runtime_->device().compute_units > 1) {
      EXPECT_EQ(kernel_names_,
                (std::vector<std::string>{"f32_norm_parts", "f32_norm_parts", "f32_norm_apply"}));
    } else if (len != 9000) {
      EXPECT_EQ(kernel_names_, std::vector<std::string>{len > 256 ? "f32_layer_norm_rows"
                                                                  : "f32_layer_norm_rows_short"});
    }
  }
}

TEST_F(OpenClTest, InstanceNormalization_per_channel_scale_and_bias) {
  // As GroupNorm is exported (a 1-channel-per-group instance norm over a
  // reshaped tensor) and on images, with planes over and under a work-group.
  for (const Shape& shape : {Shape{2, 3, 300}, Shape{1, 5, 7, 6}, Shape{1, 1, 10000}}) {
    ModelBuilder b(17);
    b.Input("x", DType::kFloat32, shape);
    b.Initializer("s", RandomFloats({shape[1]}, 11));
    b.Initializer("b", RandomFloats({shape[1]}, 12));
    auto& n = b.Node("InstanceNormalization", {"x", "s", "b"}, {"y"});
    ModelBuilder::SetAttr(n, "epsilon", 1e-3f);
    b.Output("y");
    ExpectMatchesReference(b);
    EXPECT_TRUE(Used(shape[2] == 300     ? "f32_layer_norm_rows"
                     : shape[2] == 10000 ? "f32_norm_"
                                         : "f32_layer_norm_rows_short"));
  }
}

TEST_F(OpenClTest, Concat_transpose_reshape) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 4, 3, 5});
  b.Input("y", DType::kFloat32, {1, 2, 3, 5});
  auto& c = b.Node("Concat", {"x", "y"}, {"c"});
  ModelBuilder::SetAttr(c, "axis", int64_t{1});
  b.Initializer("shape", Tensor::FromVector<int64_t>({1, 2, 3, 3, 5}, {5}));
  b.Node("Reshape", {"c", "shape"}, {"r"});
  auto& t = b.Node("Transpose", {"r"}, {"t"});
  ModelBuilder::SetAttr(t, "perm", std::vector<int64_t>{0, 2, 1, 4, 3});
  b.Output("t");
  ExpectMatchesReference(b);
}

TEST_F(OpenClTest, Gather_slice_split) {
  ModelBuilder b(13);
  b.Input("ids", DType::kInt64, {2, 6});
  b.Input("x", DType::kFloat32, {3, 10, 8});
  b.Initializer("table", RandomFloats({6, 16}, 13));
  b.Node("Gather", {"table", "ids"}, {"emb"});  // indices -3..5: negative ones too
  b.Initializer("starts", Tensor::FromVector<int64_t>({1, 7}, {2}));
  b.Initializer("ends", Tensor::FromVector<int64_t>({10, 0}, {2}));
  b.Initializer("axes", Tensor::FromVector<int64_t>({1, 2}, {2}));
  b.Initializer("steps", Tensor::FromVector<int64_t>({2, -2}, {2}));
  b.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"});
  b.Initializer("split", Tensor::FromVector<int64_t>({3, 7}, {2}));
  auto& sp = b.Node("Split", {"x", "split"}, {"p", "q"});
  ModelBuilder::SetAttr(sp, "axis", int64_t{1});
  b.Output("emb");
  b.Output("s");
  b.Output("p");
  b.Output("q");
  ExpectMatchesReference(b);
}

TEST_F(OpenClTest, Fused_snippet_with_broadcast_and_erf) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 5, 7});
  b.Input("bias", DType::kFloat32, {3, 1, 1});
  b.Initializer("half", Tensor::FromVector<float>({0.5f}, {}));
  b.Node("Add", {"x", "bias"}, {"a"});
  b.Node("Erf", {"a"}, {"e"});
  b.Node("Mul", {"e", "half"}, {"m"});
  b.Node("Relu", {"m"}, {"r"});
  b.Node("Sigmoid", {"a"}, {"s"});
  b.Node("Max", {"r", "s"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b, /*fusion=*/true);
  ASSERT_EQ(launches_, 1u);
  EXPECT_EQ(programs_[0], KernelProgram::kSnippets) << kernel_names_[0];
}

// A view of elements narrower than a word, between buffers of its own (the
// caller's input and output): an element-wise move, whatever the plan.
TEST_F(OpenClTest, A_reshape_of_bytes_moves_elements) {
  ModelBuilder b(13);
  b.Input("x", DType::kUInt8, {2, 3});
  b.Initializer("shape", Tensor::FromVector<int64_t>({3, 2}, {2}));
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y", DType::kUInt8);
  ExpectMatchesReference(b);
  ASSERT_EQ(launches_, 1u);
  EXPECT_EQ(kernel_names_[0], "b8_strided_copy");
  EXPECT_EQ(programs_[0], KernelProgram::kOps);
}

TEST_F(OpenClTest, BatchNormalization) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 4, 5});
  b.Initializer("s", RandomFloats({3}, 21));
  b.Initializer("b", RandomFloats({3}, 22));
  b.Initializer("m", RandomFloats({3}, 23));
  Tensor var = RandomFloats({3}, 24);
  for (int64_t i = 0; i < 3; ++i) var.data<float>()[i] = 1.5f + var.data<float>()[i];
  b.Initializer("v", var);
  b.Node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_batch_norm"));
}

TEST_F(OpenClTest, Unfused_elementwise_ops_run_as_one_op_snippets) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 5});
  b.Input("y", DType::kFloat32, {3, 1});
  b.Initializer("two", Tensor::FromVector<float>({2.0f}, {}));
  b.Node("Add", {"x", "y"}, {"a"});
  b.Node("Pow", {"a", "two"}, {"p"});
  b.Node("Tanh", {"p"}, {"t"});
  b.Output("t");
  ExpectMatchesReference(b, /*fusion=*/false);
  ASSERT_EQ(launches_, 3u);
  for (size_t k = 0; k < launches_; ++k) {
    EXPECT_EQ(programs_[k], KernelProgram::kSnippets) << kernel_names_[k];
  }
}

TEST_F(OpenClTest, Cast_expand_and_a_gather_of_bools) {
  ModelBuilder b(13);
  b.Input("ids", DType::kInt64, {2, 6});
  b.Input("x", DType::kFloat32, {3, 1});
  Tensor flags(DType::kBool, {6});
  for (int64_t i = 0; i < 6; ++i) flags.data<bool>()[i] = i % 3 == 1;
  b.Initializer("flags", flags);
  b.Node("Gather", {"flags", "ids"}, {"picked"});  // bool elements: the b8 kernels
  auto& to_float = b.Node("Cast", {"picked"}, {"picked_f"});
  ModelBuilder::SetAttr(to_float, "to", int64_t{1});
  auto& ids_f = b.Node("Cast", {"ids"}, {"ids_f"});
  ModelBuilder::SetAttr(ids_f, "to", int64_t{1});
  auto& ids_b = b.Node("Cast", {"ids"}, {"ids_b"});
  ModelBuilder::SetAttr(ids_b, "to", int64_t{9});
  auto& x_i = b.Node("Cast", {"x"}, {"x_i"});  // truncates toward zero
  ModelBuilder::SetAttr(x_i, "to", int64_t{6});
  auto& x_l = b.Node("Cast", {"x"}, {"x_l"});
  ModelBuilder::SetAttr(x_l, "to", int64_t{7});
  b.Initializer("shape", Tensor::FromVector<int64_t>({2, 3, 4}, {3}));
  b.Node("Expand", {"x", "shape"}, {"e"});
  for (const char* out : {"picked_f", "ids_f", "ids_b", "x_i", "x_l", "e"}) b.Output(out);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b8_gather_i64"));
  EXPECT_TRUE(Used("i64_cast_f32"));
  EXPECT_TRUE(Used("i64_cast_bool"));
  EXPECT_TRUE(Used("f32_cast_i32"));
  EXPECT_TRUE(Used("b32_strided_copy"));
}

TEST_F(OpenClTest, GatherND_with_batch_dims_and_negative_indices) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 4, 5});
  b.Initializer("pick", Tensor::FromVector<int64_t>({0, -1, 1, 1, -2, 0}, {3, 2}));
  b.Node("GatherND", {"x", "pick"}, {"rows"});  // 3 rows of 5 picked by (i, j) from a 2x3 grid
  b.Initializer("per_batch", Tensor::FromVector<int64_t>({2, 0, 1, 1}, {2, 2, 1}));
  auto& nd = b.Node("GatherND", {"x", "per_batch"}, {"batched"});
  ModelBuilder::SetAttr(nd, "batch_dims", int64_t{1});
  b.Output("rows");
  b.Output("batched");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_gather_nd"));
}

TEST_F(OpenClTest, Pad_constant_reflect_edge_and_crop) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 5, 4});
  b.Initializer("pads", Tensor::FromVector<int64_t>({0, 1, 2, -1, 0, 0, 3, 2}, {8}));
  b.Initializer("value", Tensor::FromVector<float>({0.5f}, {}));
  auto& c = b.Node("Pad", {"x", "pads", "value"}, {"constant"});
  ModelBuilder::SetAttr(c, "mode", std::string("constant"));
  for (const char* mode : {"reflect", "edge"}) {
    b.Initializer(std::string("pads_") + mode,
                  Tensor::FromVector<int64_t>({0, 0, 3, 1, 0, 0, 4, 2}, {8}));
    auto& n = b.Node("Pad", {"x", std::string("pads_") + mode}, {mode});
    ModelBuilder::SetAttr(n, "mode", std::string(mode));
    b.Output(mode);
  }
  b.Output("constant");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_pad"));
}

TEST_F(OpenClTest, Resize_linear_nearest_and_cubic) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 3, 5, 7});
  b.Initializer("scales", Tensor::FromVector<float>({1, 1, 2, 1.5f}, {4}));
  auto& linear = b.Node("Resize", {"x", "", "scales"}, {"linear"});
  ModelBuilder::SetAttr(linear, "mode", std::string("linear"));
  b.Initializer("sizes", Tensor::FromVector<int64_t>({1, 3, 9, 4}, {4}));
  auto& nearest = b.Node("Resize", {"x", "", "", "sizes"}, {"nearest"});
  ModelBuilder::SetAttr(nearest, "mode", std::string("nearest"));
  ModelBuilder::SetAttr(nearest, "coordinate_transformation_mode", std::string("asymmetric"));
  ModelBuilder::SetAttr(nearest, "nearest_mode", std::string("floor"));
  b.Initializer("down", Tensor::FromVector<int64_t>({1, 3, 3, 4}, {4}));
  auto& cubic = b.Node("Resize", {"x", "", "", "down"}, {"cubic"});
  ModelBuilder::SetAttr(cubic, "mode", std::string("cubic"));
  ModelBuilder::SetAttr(cubic, "coordinate_transformation_mode", std::string("align_corners"));
  for (const char* out : {"linear", "nearest", "cubic"}) b.Output(out);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_resize2d"));
}

TEST_F(OpenClTest, Resize_rejects_resizing_the_channels_naming_the_axis) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 3, 4, 4});
  b.Initializer("scales", Tensor::FromVector<float>({1, 2, 1, 1}, {4}));
  b.Node("Resize", {"x", "", "scales"}, {"y"}, "channel_resize");
  b.Output("y");
  const auto path = std::filesystem::temp_directory_path() /
                    ("tessel_opencl_resize_" + std::to_string(::getpid()) + ".onnx");
  ASSERT_TRUE(b.Save(path).ok());
  StatusOr<CompiledModel> model = Compile(path, targets::testing::Reference());
  std::filesystem::remove(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto exec = OpenClExecutor::Create(*model->graph, model->memory, *runtime_);
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(exec.status().message().find("channel_resize"), std::string::npos)
      << exec.status().message();
  EXPECT_NE(exec.status().message().find("axis 1"), std::string::npos) << exec.status().message();
}

TEST_F(OpenClTest, Unsupported_op_rejects_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 2});
  b.Node("Det", {"x"}, {"y"}, "my_det");
  b.Output("y");
  const auto path = std::filesystem::temp_directory_path() / "tessel_opencl_det.onnx";
  ASSERT_TRUE(b.Save(path).ok());
  StatusOr<CompiledModel> model = Compile(path, targets::testing::Reference());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto exec = OpenClExecutor::Create(*model->graph, model->memory, *runtime_);
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(exec.status().message().find("my_det"), std::string::npos) << exec.status().message();
  std::filesystem::remove(path);
}

TEST_F(OpenClTest, Corrupt_cache_file_is_rebuilt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tessel_cl_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  RuntimeOptions options;
  options.cache_dir = dir;
  const std::string source = "__kernel void k(__global float* x) { x[get_global_id(0)] = 1.0f; }\n";
  {
    auto rt = Runtime::Create("", options);
    ASSERT_TRUE(rt.ok()) << rt.status().message();
    ASSERT_TRUE((*rt)->BuildProgram(source, ProgramOptions()).ok());
    EXPECT_FALSE((*rt)->last_build_from_cache());
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  {
    auto rt = Runtime::Create("", options);
    ASSERT_TRUE(rt.ok());
    ASSERT_TRUE((*rt)->BuildProgram(source, ProgramOptions()).ok());
    EXPECT_TRUE((*rt)->last_build_from_cache());
  }
  // Flip bytes in the middle of the binary, then truncate: both rebuild.
  for (int damage = 0; damage < 2; ++damage) {
    const auto size = std::filesystem::file_size(files[0]);
    if (damage == 0) {
      std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(size / 2));
      f.write("\xde\xad\xbe\xef", 4);
    } else {
      std::filesystem::resize_file(files[0], size / 3);
    }
    auto rt = Runtime::Create("", options);
    ASSERT_TRUE(rt.ok());
    auto program = (*rt)->BuildProgram(source, ProgramOptions());
    ASSERT_TRUE(program.ok()) << program.status().message();
    EXPECT_FALSE((*rt)->last_build_from_cache());
  }
  std::filesystem::remove_all(dir);
}

TEST_F(OpenClTest, Build_failure_reports_the_log) {
  auto program = runtime_->BuildProgram("__kernel void broken( { }\n", ProgramOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("clBuildProgram"), std::string::npos);
  EXPECT_NE(program.status().message().find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos);
}

// No device needed below.

// The plan is decided without a device (what SelectKernels checks at
// compile time): a snippet and a library kernel, each on its program, and
// a node without a kernel named with its reason.
TEST(LaunchPlan, Decides_without_a_device) {
  ir::Graph g;
  g.set_opset_version(13);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 5}, true);
  g.inputs().push_back(x);
  ir::Value* r = g.AddValue("r", DType::kFloat32, {2, 5}, true);
  ir::Value* y = g.AddValue("y", DType::kFloat32, {2, 5}, true);
  g.AddNode("Relu", "relu", {x}, {r});
  g.AddNode("Softmax", "softmax", {r}, {y});
  g.outputs().push_back(y);
  StatusOr<LaunchPlan> plan = PlanLaunches(g, ir::MemoryLayout{}, PlanOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->launches.size(), 2u);
  EXPECT_EQ(plan->launches[0].program, KernelProgram::kSnippets);
  EXPECT_EQ(plan->launches[0].kernel_name, SnippetKernelName(0));
  EXPECT_EQ(plan->launches[1].program, KernelProgram::kOps);
  EXPECT_EQ(plan->launches[1].node, 1);
  EXPECT_EQ(plan->buffers.size(), 3u);  // no plan: one buffer per value

  ir::Value* square = g.AddValue("square", DType::kFloat32, {2, 2}, true);
  g.inputs().push_back(square);
  ir::Value* det = g.AddValue("det", DType::kFloat32, {}, true);
  g.AddNode("Det", "pick", {square}, {det});
  g.outputs().push_back(det);
  plan = PlanLaunches(g, ir::MemoryLayout{}, PlanOptions{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(plan.status().message().find("Det 'pick': the OpenCL target has no kernel"),
            std::string::npos)
      << plan.status().message();
}

TEST(OpenClDevices, Select_rejects_unknown_device) {
  DeviceInfo d;
  d.name = "pthread-cpu";
  d.platform_name = "Portable Computing Language";
  std::vector<DeviceInfo> devices = {d};
  EXPECT_TRUE(SelectDevice(devices, "opencl:0").ok());
  EXPECT_TRUE(SelectDevice(devices, "PTHREAD").ok());
  EXPECT_TRUE(SelectDevice(devices, "").ok());
  for (const char* bad : {"opencl:1", "opencl:x", "H100"}) {
    auto s = SelectDevice(devices, bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find(bad), std::string::npos) << s.status().message();
  }
  EXPECT_FALSE(SelectDevice({}, "").ok());
}

TEST(OpenClErrors, Name_the_call_and_the_code) {
  const Status s = ClStatus(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel 'k'");
  EXPECT_EQ(s.message(), "OpenCL: clEnqueueNDRangeKernel 'k' failed: CL_OUT_OF_RESOURCES (-5)");
  EXPECT_STREQ(ClErrorName(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_STREQ(ClErrorName(-12345), "unknown OpenCL error");
  EXPECT_TRUE(ClStatus(CL_SUCCESS, "x").ok());
}

}  // namespace
}  // namespace tessel::opencl
