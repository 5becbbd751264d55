// The spatial kernels (spatial_kernels.cl.inc, spatial_launches.h) and
// ConvWith's volumes against the reference executor, on small one-op
// models: convolutions of volumes, pools of signals and volumes (LpPool,
// MaxPool's Indices), MaxUnpool, ConvTranspose and the two losses; what
// they refuse, naming the node. Without an OpenCL platform the device
// tests skip, saying why.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "model/prepare.h"
#include "onnx/model_builder.h"
#include "onnx/test_data.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/test_env.h"
#include "targets/registry.h"
#include "targets/testing.h"

namespace tessel::opencl {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

Tensor Random(const Shape& shape, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.data<float>()[i] = std::uniform_real_distribution<float>(lo, hi)(rng);
  }
  return t;
}

// Classes in [0, classes), every `ignore_every`-th element `ignore`.
Tensor Targets(const Shape& shape, int64_t classes, int64_t ignore = 0, int ignore_every = 0) {
  Tensor t(DType::kInt64, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.data<int64_t>()[i] = ignore_every && i % ignore_every == 1 ? ignore : (i * 7 + 3) % classes;
  }
  return t;
}

class SpatialOpsTest : public OpenClDeviceTest {
 protected:
  void SetUp() override {
    OpenClDeviceTest::SetUp();
    if (IsSkipped()) return;
    dir_ = fs::temp_directory_path() /
           ("tessel_spatial_ops_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `b` compiled for the reference target; its inputs from `given` by
  // name, the others random floats.
  StatusOr<CompiledModel> CompileReference(ModelBuilder& b, bool fusion = false) {
    const fs::path path = dir_ / "m.onnx";
    TESSEL_RETURN_IF_ERROR(b.Save(path));
    CompilerOptions options;
    options.fusion = fusion;
    return Compile(path, targets::testing::Reference(), options);
  }
  std::vector<Tensor> Inputs(const ir::Graph& graph, const std::map<std::string, Tensor>& given) {
    std::vector<Tensor> inputs;
    uint32_t seed = 11;
    for (const ir::Value* v : graph.inputs()) {
      const auto it = given.find(v->name);
      inputs.push_back(it != given.end() ? it->second : Random(v->shape, seed++));
    }
    return inputs;
  }
  static void ExpectClose(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected,
                          double rtol, double atol) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t k = 0; k < actual.size(); ++k) {
      const auto c = onnx_io::CompareTensors(actual[k], expected[k], rtol, atol);
      EXPECT_TRUE(c.ok) << "output " << k << ": " << c.problem << " max abs error "
                        << c.max_abs_error << ", " << c.mismatches << " elements off";
    }
  }

  // Runs `b` on the reference target and on OpenCL (buffers), compares
  // every output, and records the kernels the OpenCL launches ran.
  void ExpectMatchesReference(ModelBuilder& b, const std::map<std::string, Tensor>& given = {},
                              bool fusion = false, double rtol = 1e-4, double atol = 1e-5) {
    StatusOr<CompiledModel> model = CompileReference(b, fusion);
    ASSERT_TRUE(model.ok()) << model.status().message();
    const std::vector<Tensor> inputs = Inputs(*model->graph, given);
    auto reference = Prepare(*model, targets::testing::Reference());
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    StatusOr<std::vector<Tensor>> expected = (*reference)->Run(inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    ExecutorOptions options;
    options.compute_units = compute_units_;
    auto exec = OpenClExecutor::Create(*model->graph, model->memory, *runtime_, options);
    ASSERT_TRUE(exec.ok()) << exec.status().message();
    StatusOr<std::vector<Tensor>> actual = (*exec)->Run(inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    ExpectClose(*actual, *expected, rtol, atol);
    kernel_names_.clear();
    for (const Launch& l : (*exec)->launches()) kernel_names_.push_back(l.kernel_name);
  }

  // The status OpenCL gives a model the reference runs.
  Status OpenClStatus(ModelBuilder& b) {
    StatusOr<CompiledModel> model = CompileReference(b);
    if (!model.ok()) return model.status();
    return OpenClExecutor::Create(*model->graph, model->memory, *runtime_).status();
  }

  // How many launches ran a kernel whose name starts with `kernel`.
  int Used(const std::string& kernel) const {
    int n = 0;
    for (const std::string& k : kernel_names_) n += k.rfind(kernel, 0) == 0;
    return n;
  }

  fs::path dir_;
  int64_t compute_units_ = 0;  // ExecutorOptions::compute_units
  std::vector<std::string> kernel_names_;
};

// ---- Convolutions of volumes ------------------------------------------------

struct ConvCase {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides{1, 1, 1}, dilations{1, 1, 1}, pads{0, 0, 0, 0, 0, 0};
  bool bias = true;
};

ModelBuilder Conv3dModel(const ConvCase& k) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, k.x);
  b.Initializer("w", Random(k.w, 3, -1, 1));
  std::vector<std::string> ins = {"x", "w"};
  if (k.bias) {
    b.Initializer("b", Random({k.w[0]}, 4));
    ins.push_back("b");
  }
  auto& n = b.Node("Conv", ins, {"y"});
  ModelBuilder::SetAttr(n, "group", k.group);
  ModelBuilder::SetAttr(n, "strides", k.strides);
  ModelBuilder::SetAttr(n, "dilations", k.dilations);
  ModelBuilder::SetAttr(n, "pads", k.pads);
  b.Output("y");
  return b;
}

TEST_F(SpatialOpsTest, Conv3d_as_an_implicit_gemm_padded_asymmetrically) {
  ModelBuilder b =
      Conv3dModel({.x = {2, 3, 5, 7, 6}, .w = {20, 3, 3, 2, 3}, .pads = {1, 0, 1, 0, 1, 2}});
  ExpectMatchesReference(b);
  EXPECT_EQ(Used("f32_conv3d_gemm_"), 1);
}

TEST_F(SpatialOpsTest, Conv3d_grouped_strided_dilated_gemm) {
  ModelBuilder b = Conv3dModel({.x = {1, 6, 9, 8, 7},
                                .w = {32, 3, 3, 3, 2},
                                .group = 2,
                                .strides = {2, 1, 2},
                                .dilations = {1, 2, 2},
                                .pads = {1, 2, 0, 1, 1, 1}});
  ExpectMatchesReference(b);
  EXPECT_EQ(Used("f32_conv3d_gemm_"), 1);
}

TEST_F(SpatialOpsTest, Conv3d_split_k_sums_its_parts) {
  // Few output tiles over k = 64 * 27: split-K when planned for a large GPU.
  compute_units_ = 132;
  ModelBuilder b =
      Conv3dModel({.x = {1, 64, 4, 4, 4}, .w = {16, 64, 3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}});
  ExpectMatchesReference(b, {}, false, 1e-4, 1e-4);
  EXPECT_EQ(Used("f32_conv3d_gemm_"), 1);
  EXPECT_EQ(Used("f32_split_k_sum"), 1);
}

TEST_F(SpatialOpsTest, Conv3d_depthwise_and_few_channels_per_group_run_direct) {
  for (const ConvCase& k : {ConvCase{.x = {2, 4, 5, 6, 7},
                           .w = {4, 1, 3, 3, 3},
                           .group = 4,
                           .strides = {1, 2, 1},
                           .pads = {1, 1, 1, 1, 1, 1}},
                            ConvCase{.x = {1, 4, 6, 5, 4},
                            .w = {6, 2, 2, 3, 1},
                            .group = 2,
                            .dilations = {2, 1, 1},
                            .bias = false}}) {
    ModelBuilder b = Conv3dModel(k);
    ExpectMatchesReference(b);
    EXPECT_EQ(Used("f32_conv3d_direct"), 1);
  }
}

TEST_F(SpatialOpsTest, Conv3d_pointwise_is_a_matrix_product) {
  ModelBuilder b = Conv3dModel({.x = {2, 8, 3, 4, 5}, .w = {24, 8, 1, 1, 1}});
  ExpectMatchesReference(b);
  EXPECT_EQ(Used("f32_gemm"), 1);
}

TEST_F(SpatialOpsTest, Conv3d_fused_with_relu_applies_the_epilogue) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 3, 6, 6, 6});
  b.Initializer("w", Random({16, 3, 3, 3, 3}, 5, -1, 1));
  b.Initializer("b", Random({16}, 6));
  ModelBuilder::SetAttr(b.Node("Conv", {"x", "w", "b"}, {"c"}), "pads",
                        std::vector<int64_t>{1, 1, 1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b, {}, /*fusion=*/true);
  EXPECT_EQ(Used("f32_conv3d_gemm_"), 1);
  EXPECT_EQ(kernel_names_.size(), 1u);  // the Relu in the GEMM's epilogue
}

TEST_F(SpatialOpsTest, Conv_of_images_and_signals_keeps_its_kernels) {
  ModelBuilder image(13);
  image.Input("x", DType::kFloat32, {1, 5, 9, 8});
  image.Initializer("w", Random({24, 5, 3, 3}, 7, -1, 1));
  image.Node("Conv", {"x", "w"}, {"y"});
  image.Output("y");
  ExpectMatchesReference(image);
  EXPECT_EQ(Used("f32_conv_gemm_"), 1);
  ModelBuilder signal(13);
  signal.Input("x", DType::kFloat32, {2, 3, 17});
  signal.Initializer("w", Random({4, 3, 5}, 8, -1, 1));
  signal.Node("Conv", {"x", "w"}, {"y"});
  signal.Output("y");
  ExpectMatchesReference(signal);
  EXPECT_EQ(Used("f32_conv2d_direct"), 1);
}

TEST_F(SpatialOpsTest, Conv_of_four_spatial_axes_rejects_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 2, 3, 3, 3, 3});
  b.Initializer("w", Random({2, 2, 1, 1, 1, 1}, 9));
  b.Node("Conv", {"x", "w"}, {"y"}, "conv4d");
  b.Output("y");
  const Status s = OpenClStatus(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("conv4d"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("3D volumes"), std::string::npos) << s.message();
}

// ---- Pools -----------------------------------------------------------------

struct PoolCase {
  std::string op;
  Shape x;
  std::vector<int64_t> kernel, strides, pads, dilations;
  int64_t ceil_mode = 0, count_include_pad = 0, p = 0, storage_order = -1;
  bool indices = false;
};

ModelBuilder PoolModel(const PoolCase& k, int opset = 19) {
  ModelBuilder b(opset);
  b.Input("x", DType::kFloat32, k.x);
  std::vector<std::string> outs = {"y"};
  if (k.indices) outs.push_back("i");
  auto& n = b.Node(k.op, {"x"}, outs);
  ModelBuilder::SetAttr(n, "kernel_shape", k.kernel);
  if (!k.strides.empty()) ModelBuilder::SetAttr(n, "strides", k.strides);
  if (!k.pads.empty()) ModelBuilder::SetAttr(n, "pads", k.pads);
  if (!k.dilations.empty()) ModelBuilder::SetAttr(n, "dilations", k.dilations);
  if (k.ceil_mode) ModelBuilder::SetAttr(n, "ceil_mode", k.ceil_mode);
  if (k.op == "AveragePool") ModelBuilder::SetAttr(n, "count_include_pad", k.count_include_pad);
  if (k.p) ModelBuilder::SetAttr(n, "p", k.p);
  if (k.storage_order >= 0) ModelBuilder::SetAttr(n, "storage_order", k.storage_order);
  b.Output("y");
  if (k.indices) b.Output("i", DType::kInt64);
  return b;
}

TEST_F(SpatialOpsTest, Pools_of_signals) {
  for (const PoolCase& k : {
           PoolCase{
               .op = "MaxPool", .x = {2, 3, 11}, .kernel = {3}, .strides = {2}, .ceil_mode = 1},
           PoolCase{.op = "MaxPool",
           .x = {1, 2, 13},
           .kernel = {2},
           .strides = {2},
           .pads = {1, 1},
           .dilations = {3}},
           PoolCase{.op = "AveragePool",
           .x = {2, 2, 10},
           .kernel = {3},
           .strides = {2},
           .pads = {1, 1},
           .count_include_pad = 1},
           PoolCase{.op = "AveragePool",
           .x = {2, 2, 10},
           .kernel = {4},
           .strides = {3},
           .pads = {2, 1},
           .ceil_mode = 1},
       }) {
    ModelBuilder b = PoolModel(k);
    ExpectMatchesReference(b);
    EXPECT_EQ(Used("f32_pool3d"), 1) << k.op;
  }
}

TEST_F(SpatialOpsTest, Pools_of_volumes_with_ceil_mode_and_count_include_pad) {
  for (int64_t include : {0, 1}) {
    for (int64_t ceil : {0, 1}) {
      for (const std::string op : {"AveragePool", "MaxPool"}) {
        ModelBuilder b = PoolModel({.op = op,
                                    .x = {1, 3, 7, 8, 6},
                                    .kernel = {3, 2, 3},
                                    .strides = {2, 2, 2},
                                    .pads = {1, 0, 1, 1, 1, 0},
                                    .dilations = {1, 2, 1},
                                    .ceil_mode = ceil,
                                    .count_include_pad = include});
        ExpectMatchesReference(b);
        EXPECT_EQ(Used("f32_pool3d"), 1) << op;
      }
    }
  }
}

TEST_F(SpatialOpsTest, LpPool_of_each_rank_and_exponent) {
  for (int64_t p : {1, 2, 3}) {
    for (const Shape& x : {Shape{2, 3, 12}, Shape{1, 2, 7, 6}, Shape{1, 2, 5, 4, 6}}) {
      const size_t n = x.size() - 2;
      ModelBuilder b = PoolModel({.op = "LpPool",
                                  .x = x,
                                  .kernel = std::vector<int64_t>(n, 2),
                                  .strides = std::vector<int64_t>(n, 2),
                                  .pads = std::vector<int64_t>(2 * n, 1),
                                  .p = p});
      ExpectMatchesReference(b, {}, false, 1e-4, 1e-4);
      EXPECT_EQ(Used("f32_pool3d"), 1) << "p " << p << " rank " << x.size();
    }
  }
}

TEST_F(SpatialOpsTest, MaxPool_indices_in_either_storage_order) {
  for (int64_t order : {0, 1}) {
    for (const Shape& x : {Shape{2, 3, 7, 6}, Shape{1, 2, 5, 6, 4}, Shape{2, 2, 9}}) {
      const size_t n = x.size() - 2;
      ModelBuilder b = PoolModel({.op = "MaxPool",
                                  .x = x,
                                  .kernel = std::vector<int64_t>(n, 3),
                                  .strides = std::vector<int64_t>(n, 2),
                                  .pads = std::vector<int64_t>(2 * n, 1),
                                  .storage_order = order,
                                  .indices = true});
      ExpectMatchesReference(b);
      EXPECT_EQ(Used("f32_pool3d"), 1) << "order " << order << " rank " << x.size();
    }
  }
}

TEST_F(SpatialOpsTest, MaxPool_of_images_keeps_its_kernel) {
  ModelBuilder b = PoolModel(
      {.op = "MaxPool", .x = {1, 3, 10, 9}, .kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = 1});
  ExpectMatchesReference(b);
  EXPECT_EQ(Used("f32_pool2d"), 1);
}

TEST_F(SpatialOpsTest, Pool_of_float64_rejects_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat64, {1, 2, 6});
  ModelBuilder::SetAttr(b.Node("MaxPool", {"x"}, {"y"}, "pool_f64"), "kernel_shape",
                        std::vector<int64_t>{2});
  b.Output("y", DType::kFloat64);
  const Status s = OpenClStatus(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("pool_f64"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("float32 only"), std::string::npos) << s.message();
}

TEST_F(SpatialOpsTest, Pool_of_four_spatial_axes_rejects_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 2, 4, 4, 4, 4});
  ModelBuilder::SetAttr(b.Node("MaxPool", {"x"}, {"y"}, "pool_4d"), "kernel_shape",
                        std::vector<int64_t>{2, 2, 2, 2});
  b.Output("y");
  const Status s = OpenClStatus(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("pool_4d"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("rank 3 to 5"), std::string::npos) << s.message();
}

TEST_F(SpatialOpsTest, MaxUnpool_of_MaxPool_indices_with_and_without_output_shape) {
  for (const bool output_shape : {false, true}) {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {2, 3, 6, 8});  // the unpooled shape: the indices address it
    auto& pool = b.Node("MaxPool", {"x"}, {"p", "i"});
    ModelBuilder::SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
    ModelBuilder::SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
    std::vector<std::string> ins = {"p", "i"};
    if (output_shape) {
      b.Initializer("shape", Tensor::FromVector<int64_t>({2, 3, 9, 10}, {4}));
      ins.push_back("shape");
    }
    auto& unpool = b.Node("MaxUnpool", ins, {"y"});
    ModelBuilder::SetAttr(unpool, "kernel_shape", std::vector<int64_t>{2, 2});
    ModelBuilder::SetAttr(unpool, "strides", std::vector<int64_t>{2, 2});
    b.Output("y");
    ExpectMatchesReference(b);
    EXPECT_EQ(Used("b32_max_unpool"), 1);
    EXPECT_EQ(Used("b32_zero"), 1);
  }
}

// ---- ConvTranspose ---------------------------------------------------------

struct TransposeCase {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, pads, output_padding, dilations, output_shape;
  std::string auto_pad;
  bool bias = true;
};

ModelBuilder ConvTransposeModel(const TransposeCase& k) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, k.x);
  b.Initializer("w", Random(k.w, 3, -1, 1));
  std::vector<std::string> ins = {"x", "w"};
  if (k.bias) {
    b.Initializer("b", Random({k.w[1] * k.group}, 4));
    ins.push_back("b");
  }
  auto& n = b.Node("ConvTranspose", ins, {"y"});
  ModelBuilder::SetAttr(n, "group", k.group);
  if (!k.strides.empty()) ModelBuilder::SetAttr(n, "strides", k.strides);
  if (!k.pads.empty()) ModelBuilder::SetAttr(n, "pads", k.pads);
  if (!k.output_padding.empty()) ModelBuilder::SetAttr(n, "output_padding", k.output_padding);
  if (!k.dilations.empty()) ModelBuilder::SetAttr(n, "dilations", k.dilations);
  if (!k.output_shape.empty()) ModelBuilder::SetAttr(n, "output_shape", k.output_shape);
  if (!k.auto_pad.empty()) ModelBuilder::SetAttr(n, "auto_pad", k.auto_pad);
  b.Output("y");
  return b;
}

TEST_F(SpatialOpsTest, ConvTranspose_as_implicit_gemms_one_per_phase) {
  const TransposeCase cases[] = {
      // A U-Net's 2x up-sampling: 4 phases of one tap each.
      {.x = {2, 8, 5, 6}, .w = {8, 16, 2, 2}, .strides = {2, 2}},
      // 3x3, stride 2, pads and output_padding: phases of 4, 2, 2 and 1 taps.
      {.x = {1, 6, 5, 4},
       .w = {6, 20, 3, 3},
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .output_padding = {1, 1}},
      // Grouped, dilated, stride 3 by 1.
      {.x = {1, 4, 4, 5},
       .w = {4, 16, 3, 2},
       .group = 2,
       .strides = {3, 1},
       .pads = {0, 1, 2, 0},
       .dilations = {2, 3},
       .bias = false},
      // A signal, and a volume.
      {.x = {2, 5, 7}, .w = {5, 17, 4}, .strides = {2}, .pads = {1, 2}},
      {.x = {1, 3, 3, 4, 3},
       .w = {3, 16, 3, 2, 3},
       .strides = {2, 1, 2},
       .pads = {1, 0, 1, 0, 1, 0}},
  };
  for (const TransposeCase& k : cases) {
    ModelBuilder b = ConvTransposeModel(k);
    ExpectMatchesReference(b);
    EXPECT_GE(Used("f32_conv_transpose_gemm_"), 1) << ShapeToString(k.w);
  }
}

TEST_F(SpatialOpsTest, ConvTranspose_with_few_channels_per_group_runs_direct) {
  const TransposeCase cases[] = {
      {.x = {1, 3, 4, 5},
       .w = {3, 2, 3, 3},
       .strides = {3, 2},
       .pads = {1, 0, 2, 1},
       .output_padding = {1, 1}},
      {.x = {2, 4, 5}, .w = {4, 1, 3}, .group = 4, .strides = {2}, .dilations = {2}},
      {.x = {1, 2, 3, 3, 3}, .w = {2, 3, 2, 2, 2}, .strides = {2, 2, 2}, .bias = false},
  };
  for (const TransposeCase& k : cases) {
    ModelBuilder b = ConvTransposeModel(k);
    ExpectMatchesReference(b);
    EXPECT_EQ(Used("f32_conv_transpose_direct"), 1) << ShapeToString(k.w);
  }
}

TEST_F(SpatialOpsTest, ConvTranspose_output_shape_and_auto_pad) {
  for (const int64_t out_channels : {2, 16}) {
    const TransposeCase cases[] = {
        {.x = {1, 3, 3, 3},
         .w = {3, out_channels, 3, 3},
         .strides = {3, 2},
         .output_shape = {8, 6}},
        // Larger than the full output: the extra trailing elements hold the bias.
        {.x = {1, 3, 3, 3},
         .w = {3, out_channels, 3, 3},
         .strides = {2, 2},
         .output_shape = {9, 10}},
        {.x = {1, 3, 3, 4},
         .w = {3, out_channels, 3, 3},
         .strides = {2, 2},
         .auto_pad = "SAME_UPPER"},
        {.x = {1, 3, 3, 4},
         .w = {3, out_channels, 3, 3},
         .strides = {2, 2},
         .auto_pad = "SAME_LOWER"},
        {.x = {1, 3, 3, 4}, .w = {3, out_channels, 2, 3}, .strides = {2, 2}, .auto_pad = "VALID"},
    };
    for (const TransposeCase& k : cases) {
      ModelBuilder b = ConvTransposeModel(k);
      ExpectMatchesReference(b);
    }
  }
}

TEST_F(SpatialOpsTest, ConvTranspose_phase_no_tap_reaches_holds_the_bias) {
  // Dilation 2 under stride 2: the odd outputs meet no tap.
  for (const int64_t out_channels : {3, 16}) {
    ModelBuilder b = ConvTransposeModel(
        {.x = {1, 2, 4, 4}, .w = {2, out_channels, 2, 2}, .strides = {2, 2}, .dilations = {2, 2}});
    ExpectMatchesReference(b);
  }
}

TEST_F(SpatialOpsTest, ConvTranspose_of_float64_rejects_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat64, {1, 2, 3, 3});
  b.Initializer("w", Tensor(DType::kFloat64, {2, 2, 2, 2}));
  b.Node("ConvTranspose", {"x", "w"}, {"y"}, "deconv_f64");
  b.Output("y", DType::kFloat64);
  const Status s = OpenClStatus(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("deconv_f64"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("float32 only"), std::string::npos) << s.message();
}

// ---- Losses ----------------------------------------------------------------

struct LossCase {
  std::string op;
  Shape x;
  std::string reduction;
  bool weight = false;
  bool ignore = false;
  int64_t ignore_index = 0;
  bool log_prob = false;
};

void LossTest(const LossCase& k,
              const std::function<void(ModelBuilder&, const std::map<std::string, Tensor>&)>& run) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, k.x);
  Shape ts = k.x;
  ts.erase(ts.begin() + 1);
  b.Input("t", DType::kInt64, ts);
  std::vector<std::string> ins = {"x", "t"};
  if (k.weight) {
    b.Input("w", DType::kFloat32, {k.x[1]});
    ins.push_back("w");
  }
  std::vector<std::string> outs = {"loss"};
  if (k.log_prob) outs.push_back("log_prob");
  auto& n = b.Node(k.op, ins, outs);
  ModelBuilder::SetAttr(n, "reduction", k.reduction);
  if (k.ignore) ModelBuilder::SetAttr(n, "ignore_index", k.ignore_index);
  b.Output("loss");
  if (k.log_prob) b.Output("log_prob");
  std::map<std::string, Tensor> given = {
      {"t", Targets(ts, k.x[1], k.ignore_index, k.ignore ? 3 : 0)}};
  if (k.weight) given["w"] = Random({k.x[1]}, 21, 0.1f, 1.5f);
  run(b, given);
}

TEST_F(SpatialOpsTest, Losses_every_reduction_weight_and_ignore_index) {
  for (const std::string op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    for (const std::string reduction : {"none", "sum", "mean"}) {
      for (const bool weight : {false, true}) {
        for (const int64_t ignore : {int64_t{-1}, int64_t{2}}) {
          for (const Shape& x : {Shape{5, 4}, Shape{3, 5, 4, 3}, Shape{2, 3, 2, 2, 3}}) {
            const LossCase k{.op = op,
                             .x = x,
                             .reduction = reduction,
                             .weight = weight,
                             .ignore = true,
                             .ignore_index = ignore};
            LossTest(k, [&](ModelBuilder& b, const std::map<std::string, Tensor>& given) {
              ExpectMatchesReference(b, given, false, 1e-4, 1e-5);
            });
            EXPECT_EQ(Used("f32_loss_i64"), 1) << op << " " << reduction;
            EXPECT_EQ(Used("f32_loss_total"), reduction == "none" ? 0 : 1) << op;
          }
        }
      }
    }
  }
}

TEST_F(SpatialOpsTest, Loss_without_ignore_index_and_over_many_work_groups) {
  // 2 x 300 positions: the sum over three work-groups' partial sums.
  for (const std::string reduction : {"sum", "mean"}) {
    const LossCase k{
        .op = "SoftmaxCrossEntropyLoss", .x = {2, 7, 300}, .reduction = reduction, .weight = true};
    LossTest(k, [&](ModelBuilder& b, const std::map<std::string, Tensor>& given) {
      ExpectMatchesReference(b, given, false, 1e-4, 1e-4);
    });
  }
}

TEST_F(SpatialOpsTest, SoftmaxCrossEntropyLoss_log_prob_output) {
  for (const std::string reduction : {"none", "mean"}) {
    const LossCase k{.op = "SoftmaxCrossEntropyLoss",
                     .x = {3, 6, 5},
                     .reduction = reduction,
                     .ignore = true,
                     .ignore_index = 4,
                     .log_prob = true};
    LossTest(k, [&](ModelBuilder& b, const std::map<std::string, Tensor>& given) {
      ExpectMatchesReference(b, given);
    });
  }
}

TEST_F(SpatialOpsTest, Loss_of_float64_rejects_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat64, {3, 4});
  b.Input("t", DType::kInt64, {3});
  b.Node("NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}, "nll_f64");
  b.Output("loss", DType::kFloat64);
  const Status s = OpenClStatus(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("nll_f64"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("float32 only"), std::string::npos) << s.message();
}

// ---- GridSample -------------------------------------------------------------

TEST_F(SpatialOpsTest, GridSample_every_mode_padding_and_alignment) {
  for (const std::string mode : {"nearest", "bilinear", "bicubic"}) {
    for (const std::string padding : {"zeros", "border", "reflection"}) {
      for (const int64_t align : {0, 1}) {
        ModelBuilder b(16);
        b.Input("x", DType::kFloat32, {2, 3, 5, 6});
        b.Input("grid", DType::kFloat32, {2, 4, 7, 2});
        auto& n = b.Node("GridSample", {"x", "grid"}, {"y"});
        ModelBuilder::SetAttr(n, "mode", mode);
        ModelBuilder::SetAttr(n, "padding_mode", padding);
        ModelBuilder::SetAttr(n, "align_corners", align);
        b.Output("y");
        // Positions inside and up to a plane beyond each border.
        ExpectMatchesReference(b, {{"grid", Random({2, 4, 7, 2}, 31, -2.3f, 2.3f)}}, false, 1e-4,
                               1e-4);
        EXPECT_EQ(Used("f32_grid_sample"), 1) << mode << " " << padding << " " << align;
      }
    }
  }
}

// ---- Col2Im -----------------------------------------------------------------

TEST_F(SpatialOpsTest, Col2Im_of_images_and_volumes_strided_padded_dilated) {
  struct Case {
    std::vector<int64_t> image, block, strides, dilations, pads;
    int64_t blocks;  // the columns' length, prod over axes of the blocks
  };
  const Case cases[] = {
      {{5, 5}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 16},
      {{6, 7}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 1, 1}, 3 * 6},
      {{3, 4, 5}, {2, 2, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1, 1, 0, 1}, 3 * 2 * 3},
      {{9}, {3}, {3}, {2}, {2, 2}, 3},
  };
  for (const Case& k : cases) {
    int64_t kernel = 1;
    for (int64_t v : k.block) kernel *= v;
    const auto n = static_cast<int64_t>(k.image.size());
    ModelBuilder b(18);
    b.Input("x", DType::kFloat32, {2, 3 * kernel, k.blocks});
    b.Initializer("image", Tensor::FromVector<int64_t>(k.image, {n}));
    b.Initializer("block", Tensor::FromVector<int64_t>(k.block, {n}));
    auto& node = b.Node("Col2Im", {"x", "image", "block"}, {"y"});
    ModelBuilder::SetAttr(node, "strides", k.strides);
    ModelBuilder::SetAttr(node, "dilations", k.dilations);
    ModelBuilder::SetAttr(node, "pads", k.pads);
    b.Output("y");
    ExpectMatchesReference(b);
    EXPECT_EQ(Used("f32_col2im"), 1) << n << " axes";
  }
}

// ---- RoiAlign ---------------------------------------------------------------

TEST_F(SpatialOpsTest, RoiAlign_each_mode_transform_and_sampling) {
  // Rois inside the image, across its edge, tiny and flipped.
  const Tensor rois = Tensor::FromVector<float>({0.5f, 1.0f, 6.0f, 5.5f,   //
                                                 -1.5f, 2.0f, 3.0f, 9.5f,  //
                                                 4.2f, 4.1f, 4.3f, 4.4f,   //
                                                 7.0f, 6.0f, 2.0f, 1.0f},  //
                                                {4, 4});
  const Tensor batch = Tensor::FromVector<int64_t>({0, 1, 1, 0}, {4});
  for (const std::string mode : {"avg", "max"}) {
    for (const std::string coord : {"half_pixel", "output_half_pixel"}) {
      for (const int64_t sampling : {0, 2}) {
        ModelBuilder b(16);
        b.Input("x", DType::kFloat32, {2, 3, 8, 9});
        b.Input("rois", DType::kFloat32, {4, 4});
        b.Input("batch", DType::kInt64, {4});
        auto& n = b.Node("RoiAlign", {"x", "rois", "batch"}, {"y"});
        ModelBuilder::SetAttr(n, "mode", mode);
        ModelBuilder::SetAttr(n, "coordinate_transformation_mode", coord);
        ModelBuilder::SetAttr(n, "sampling_ratio", sampling);
        ModelBuilder::SetAttr(n, "output_height", int64_t{3});
        ModelBuilder::SetAttr(n, "output_width", int64_t{2});
        ModelBuilder::SetAttr(n, "spatial_scale", 0.9f);
        b.Output("y");
        ExpectMatchesReference(b, {{"rois", rois}, {"batch", batch}}, false, 1e-4, 1e-4);
        EXPECT_EQ(Used("f32_roi_align"), 1) << mode << " " << coord << " " << sampling;
      }
    }
  }
}

TEST_F(SpatialOpsTest, RoiAlign_of_a_roi_not_finite_gives_zeros) {
  // The reference rejects such rois at run time; the kernel samples an empty
  // grid for them (outputs 0) rather than casting NaN to a grid size.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor rois = Tensor::FromVector<float>({0.5f, 1.0f, 6.0f, 5.5f,  //
                                                 nan, 1.0f, 6.0f, 5.5f,   //
                                                 0.5f, 1.0f, inf, 5.5f,   //
                                                 -inf, 1.0f, 6.0f, inf},  //
                                                {4, 4});
  const Tensor batch = Tensor::FromVector<int64_t>({0, 1, 1, 0}, {4});
  for (const std::string mode : {"avg", "max"}) {
    for (const int64_t sampling : {0, 2}) {
      SCOPED_TRACE(mode + " " + std::to_string(sampling));
      ModelBuilder b(16);
      b.Input("x", DType::kFloat32, {2, 3, 8, 9});
      b.Input("rois", DType::kFloat32, {4, 4});
      b.Input("batch", DType::kInt64, {4});
      auto& n = b.Node("RoiAlign", {"x", "rois", "batch"}, {"y"});
      ModelBuilder::SetAttr(n, "mode", mode);
      ModelBuilder::SetAttr(n, "sampling_ratio", sampling);
      ModelBuilder::SetAttr(n, "output_height", int64_t{3});
      ModelBuilder::SetAttr(n, "output_width", int64_t{2});
      b.Output("y");
      StatusOr<CompiledModel> model = CompileReference(b);
      ASSERT_TRUE(model.ok()) << model.status().message();
      std::vector<Tensor> inputs = Inputs(*model->graph, {{"rois", rois}, {"batch", batch}});
      auto exec = OpenClExecutor::Create(*model->graph, model->memory, *runtime_);
      ASSERT_TRUE(exec.ok()) << exec.status().message();
      StatusOr<std::vector<Tensor>> y = (*exec)->Run(inputs);
      ASSERT_TRUE(y.ok()) << y.status().message();
      const Tensor& out = (*y)[0];
      const int64_t per_roi = 3 * 3 * 2;
      bool some_nonzero = false;
      for (int64_t i = 0; i < per_roi; ++i) some_nonzero |= out.data<float>()[i] != 0.0f;
      EXPECT_TRUE(some_nonzero) << "the finite roi samples the image";
      for (int64_t i = per_roi; i < 4 * per_roi; ++i) {
        EXPECT_EQ(out.data<float>()[i], 0.0f) << "element " << i;
      }
    }
  }
}

// ---- Texture storage -------------------------------------------------------

TEST_F(SpatialOpsTest, Texture_storage_runs_the_new_shapes_in_buffers) {
  // Two Convs (image kernels, a texture between them) feeding MaxPool with
  // Indices, LpPool and a ConvTranspose, which have none: they read the
  // second Conv's output from a buffer.
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 3, 10, 9});
  b.Initializer("w", Random({8, 3, 3, 3}, 5, -1, 1));
  b.Initializer("w2", Random({8, 8, 3, 3}, 7, -1, 1));
  b.Initializer("wt", Random({8, 4, 2, 2}, 6, -1, 1));
  ModelBuilder::SetAttr(b.Node("Conv", {"x", "w"}, {"c1"}, "conv1"), "pads",
                        std::vector<int64_t>{1, 1, 1, 1});
  ModelBuilder::SetAttr(b.Node("Conv", {"c1", "w2"}, {"c"}, "conv2"), "pads",
                        std::vector<int64_t>{1, 1, 1, 1});
  auto& pool = b.Node("MaxPool", {"c"}, {"p", "i"}, "pool");
  ModelBuilder::SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  auto& lp = b.Node("LpPool", {"c"}, {"l"}, "lp");
  ModelBuilder::SetAttr(lp, "kernel_shape", std::vector<int64_t>{3, 3});
  ModelBuilder::SetAttr(b.Node("ConvTranspose", {"c", "wt"}, {"t"}, "up"), "strides",
                        std::vector<int64_t>{2, 2});
  b.Output("p");
  b.Output("i", DType::kInt64);
  b.Output("l");
  b.Output("t");
  const fs::path path = dir_ / "texture.onnx";
  ASSERT_TRUE(b.Save(path).ok());
  StatusOr<CompiledModel> want_model = Compile(path, targets::testing::Reference());
  ASSERT_TRUE(want_model.ok()) << want_model.status().message();
  const std::vector<Tensor> inputs = Inputs(*want_model->graph, {});
  auto want_exe = Prepare(*want_model, targets::testing::Reference());
  ASSERT_TRUE(want_exe.ok()) << want_exe.status().message();
  auto want = (*want_exe)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto target = targets::MakeTarget({"opencl", {{"storage", "texture"}}},
                                    {.cache_dir = fs::path(TESSEL_TEST_CACHE_DIR)});
  ASSERT_TRUE(target.ok()) << target.status().message();
  StatusOr<CompiledModel> m = Compile(path, **target);
  ASSERT_TRUE(m.ok()) << m.status().message();
  int images = 0;
  for (const auto& n : m->graph->nodes()) {
    const bool image = n->kernel.implementation == "image";
    images += image;
    if (n->op_type != "Conv") {
      EXPECT_FALSE(image) << n->Describe();
    }
  }
  if (runtime_->device().image_support) {
    EXPECT_EQ(images, 2);  // the Convs
  }
  auto exe = Prepare(*m, **target);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  auto got = (*exe)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectClose(*got, *want, 1e-4, 1e-4);
}

}  // namespace
}  // namespace tessel::opencl
