#include "compiler/compile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "model/model_file.h"
#include "onnx/model_builder.h"
#include "onnx/tensor_io.h"
#include "targets/cpu/executor.h"
#include "targets/testing.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_compile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // y = Relu(x @ w + b), and a Shape -> Gather -> Concat -> Reshape chain that
  // must fold away.
  fs::path WriteMlp() {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {2, 3});
    b.Initializer("w", Tensor::FromVector<float>({1, 0, -1, 2, 0.5f, 1}, {3, 2}));
    b.Initializer("b", Tensor::FromVector<float>({0.25f, -0.5f}, {2}));
    b.Initializer("idx", Tensor::FromVector<int64_t>({0}, {1}));
    b.Initializer("minus1", Tensor::FromVector<int64_t>({-1}, {1}));
    b.Node("MatMul", {"x", "w"}, {"xw"});
    b.Node("Add", {"xw", "b"}, {"z"});
    b.Node("Relu", {"z"}, {"r"});
    b.Node("Shape", {"r"}, {"shape"});
    b.Node("Gather", {"shape", "idx"}, {"batch"});
    b.Node("Concat", {"batch", "minus1"}, {"new_shape"}).add_attribute()->CopyFrom([] {
      onnx::AttributeProto a;
      a.set_name("axis");
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(0);
      return a;
    }());
    b.Node("Reshape", {"r", "new_shape"}, {"y"});
    b.Output("y");
    const fs::path p = dir_ / "mlp.onnx";
    EXPECT_TRUE(b.Save(p).ok());
    return p;
  }

  fs::path dir_;
};

TEST_F(CompileTest, Folds_shape_arithmetic_and_runs) {
  auto model = Compile(WriteMlp(), targets::testing::Cpu());
  ASSERT_TRUE(model.ok()) << model.status().message();
  // MatMul, Add+Relu (fused into one Subgraph), Reshape remain;
  // Shape/Gather/Concat are folded.
  ASSERT_EQ(model->graph->nodes().size(), 3u);
  EXPECT_EQ(model->graph->nodes()[1]->op_type, "Subgraph");
  EXPECT_EQ(model->graph->nodes()[2]->op_type, "Reshape");
  EXPECT_TRUE(model->graph->nodes()[2]->inputs[1]->is_constant());

  cpu::CpuExecutor exec(*model->graph);
  auto out = exec.Run({Tensor::FromVector<float>({1, 2, 3, -1, 0, 1}, {2, 3})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  // Row 0: [1*1+2*-1+3*0.5, 1*0+2*2+3*1] + b = [0.5+0.25, 7-0.5]
  // Row 1: [-1*1+0+1*0.5, 0+0+1] + b = [-0.5+0.25 -> relu 0, 1-0.5]
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ((*out)[0].ToFloatVector(), (std::vector<float>{0.75f, 6.5f, 0.0f, 0.5f}));
}

TEST_F(CompileTest, Compiled_file_round_trips_to_identical_outputs) {
  auto model = Compile(WriteMlp(), targets::testing::Cpu());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const fs::path file = dir_ / "mlp.tsl";
  ASSERT_TRUE(WriteCompiledModel(*model, file).ok());
  auto loaded = LoadOrCompile(file, targets::testing::Cpu());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(SerializeCompiledModel(*loaded), SerializeCompiledModel(*model));
  const Tensor x = Tensor::FromVector<float>({0.1f, -2, 3, 4, 5, -6}, {2, 3});
  cpu::CpuExecutor a(*model->graph), b(*loaded->graph);
  auto ya = a.Run({x});
  auto yb = b.Run({x});
  ASSERT_TRUE(ya.ok() && yb.ok());
  EXPECT_EQ((*ya)[0].ToFloatVector(), (*yb)[0].ToFloatVector());
}

TEST_F(CompileTest, ReadCompiledModel_rejects_corrupt_truncated_and_other_versions) {
  auto model = Compile(WriteMlp(), targets::testing::Cpu());
  ASSERT_TRUE(model.ok());
  const std::string bytes = SerializeCompiledModel(*model);

  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x5a;
  auto r = DeserializeCompiledModel(flipped, "m.tsl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("checksum mismatch"), std::string::npos)
      << r.status().message();

  r = DeserializeCompiledModel(bytes.substr(0, bytes.size() - 10), "m.tsl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();

  std::string other = bytes;
  other[8] = 99;
  r = DeserializeCompiledModel(other, "m.tsl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("format version 99"), std::string::npos)
      << r.status().message();

  r = DeserializeCompiledModel("TESSELCM", "m.tsl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST_F(CompileTest, Every_target_rejects_wrong_inputs_with_one_message) {
  for (const targets::Target* target : {&targets::testing::Cpu(), &targets::testing::Reference()}) {
    auto model = Compile(WriteMlp(), *target);
    ASSERT_TRUE(model.ok());
    auto exe = Prepare(*model, *target);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    auto r = (*exe)->Run({Tensor(DType::kFloat32, {3, 2})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "input 'x' has shape 3x2; the model expects 2x3");
    r = (*exe)->Run({Tensor(DType::kInt64, {2, 3})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "input 'x' has dtype int64; the model expects float32");
    r = (*exe)->Run({});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "the model takes 1 inputs; got 0");
  }
}

TEST_F(CompileTest, Compile_rejects_out_of_range_attribute_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3});
  ModelBuilder::SetAttr(b.Node("Softmax", {"x"}, {"y"}, "soft"), "axis", int64_t{5});
  b.Output("y");
  const fs::path p = dir_ / "bad_axis.onnx";
  ASSERT_TRUE(b.Save(p).ok());
  auto r = Compile(p, targets::testing::Cpu());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Softmax 'soft'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("5"), std::string::npos) << r.status().message();
}

// A ResNet basic block with a projection shortcut, in the node order
// PyTorch exports it: conv1 -> bn -> relu -> conv2 -> bn, then the
// shortcut's conv -> bn, then Add -> Relu. Both batch-normed convolutions
// read the Add; the fused graph must stay valid (every stage is verified)
// and compute what the unfused one does.
// Seeded tensors and Conv -> BatchNormalization pairs, as PyTorch exports
// them, for the blocks below.
struct BlockBuilder {
  ModelBuilder& b;
  uint32_t seed = 1;
  Tensor Random(const Shape& shape, float lo, float hi) {
    Tensor t(DType::kFloat32, shape);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      t.data<float>()[i] = lo + (hi - lo) * static_cast<float>(seed >> 8) / 16777216.0f;
    }
    return t;
  }
  // A BatchNormalization of `in` (cout channels) named `name`; its output.
  std::string Bn(const std::string& name, const std::string& in, int64_t cout) {
    b.Initializer(name + ".s", Random({cout}, 0.5f, 1.5f));
    b.Initializer(name + ".b", Random({cout}, -0.1f, 0.1f));
    b.Initializer(name + ".m", Random({cout}, -0.1f, 0.1f));
    b.Initializer(name + ".v", Random({cout}, 0.5f, 1.5f));
    b.Node("BatchNormalization", {in, name + ".s", name + ".b", name + ".m", name + ".v"},
           {name + ".y"});
    return name + ".y";
  }
  std::string ConvBn(const std::string& name, const std::string& in, int64_t cin, int64_t cout,
                     int64_t k, int64_t stride) {
    b.Initializer(name + ".w", Random({cout, cin, k, k}, -0.3f, 0.3f));
    auto& conv = b.Node("Conv", {in, name + ".w"}, {name + ".c"}, name);
    ModelBuilder::SetAttr(conv, "strides", std::vector<int64_t>{stride, stride});
    ModelBuilder::SetAttr(conv, "pads", std::vector<int64_t>(4, k / 2));
    return Bn(name + ".bn", name + ".c", cout);
  }
};

// Runs `fused` and `plain` on one random input; they agree, and the Relu
// does not zero everything.
void ExpectSameOutputs(const CompiledModel& fused, const CompiledModel& plain, BlockBuilder& r,
                       const Shape& x_shape) {
  const Tensor x = r.Random(x_shape, -1, 1);
  cpu::CpuExecutor a(*fused.graph), p(*plain.graph);
  auto ya = a.Run({x});
  auto yp = p.Run({x});
  ASSERT_TRUE(ya.ok() && yp.ok());
  const std::vector<float> got = (*ya)[0].ToFloatVector(), want = (*yp)[0].ToFloatVector();
  ASSERT_EQ(got.size(), want.size());
  int positive = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4f * (1 + std::fabs(want[i]))) << i;
    positive += want[i] > 0;
  }
  EXPECT_GT(positive, static_cast<int>(want.size() / 4));
}

// Saves `b` as `file` and compiles it for the CPU with fusion and without.
struct FusedAndPlain {
  StatusOr<CompiledModel> fused, plain;
};
FusedAndPlain CompileWithAndWithoutFusion(ModelBuilder& b, const fs::path& file) {
  const fs::path path = fs::temp_directory_path() /
                        ("tessel_compile_" + std::to_string(::getpid()) + "_" + file.string());
  EXPECT_TRUE(b.Save(path).ok());
  CompilerOptions plain_options;
  plain_options.fusion = false;
  FusedAndPlain r{Compile(path, targets::testing::Cpu()),
                  Compile(path, targets::testing::Cpu(), plain_options)};
  fs::remove(path);
  return r;
}

TEST_F(CompileTest, Projection_shortcut_block_compiles_and_matches_without_fusion) {
  ModelBuilder b(17);
  b.Input("x", DType::kFloat32, {1, 8, 10, 10});
  BlockBuilder r{b};
  b.Node("Relu", {r.ConvBn("conv1", "x", 8, 16, 3, 2)}, {"h"});
  const std::string main = r.ConvBn("conv2", "h", 16, 16, 3, 1);
  const std::string shortcut = r.ConvBn("downsample", "x", 8, 16, 1, 2);
  b.Node("Add", {main, shortcut}, {"sum"});
  b.Node("Relu", {"sum"}, {"y"});
  b.Output("y");
  auto [fused, plain] = CompileWithAndWithoutFusion(b, "block.onnx");
  ASSERT_TRUE(fused.ok()) << fused.status().message();
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  int fused_convs = 0;
  for (const auto& n : fused->graph->nodes()) fused_convs += n->op_type == "FusedConv";
  EXPECT_EQ(fused_convs, 2) << "conv1 + Relu, and one of the two convolutions + Add + Relu";
  EXPECT_EQ(fused->graph->nodes().size(), 3u);

  ExpectSameOutputs(*fused, *plain, r, {1, 8, 10, 10});
}

// A RepVGG block as trained: 3x3 and 1x1 convolutions of x, each batch-
// normed, and a BatchNormalization of x alone, summed, then Relu. Compiled,
// it is one convolution with the Relu fused.
TEST_F(CompileTest, Repvgg_block_compiles_to_one_convolution) {
  ModelBuilder b(17);
  b.Input("x", DType::kFloat32, {1, 8, 10, 10});
  BlockBuilder r{b};
  b.Node("Add", {r.ConvBn("dense", "x", 8, 8, 3, 1), r.ConvBn("one", "x", 8, 8, 1, 1)}, {"s"});
  b.Node("Add", {"s", r.Bn("identity", "x", 8)}, {"sum"});
  b.Node("Relu", {"sum"}, {"y"});
  b.Output("y");
  auto [fused, plain] = CompileWithAndWithoutFusion(b, "repvgg.onnx");
  ASSERT_TRUE(fused.ok()) << fused.status().message();
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_EQ(fused->graph->nodes().size(), 1u);
  EXPECT_EQ(fused->graph->nodes()[0]->op_type, "FusedConv");
  EXPECT_EQ(plain->graph->nodes().size(), 8u);  // 2 Conv, 3 BatchNormalization, 2 Add, Relu
  ExpectSameOutputs(*fused, *plain, r, {1, 8, 10, 10});
}

// What today's exporters write, IR version 11 at opset 21 (past Debian's
// libonnx checker), compiles and runs: ReduceMean with its axes as an input
// (opset 18), Gelu (opset 20, decomposed into fusable ops).
TEST_F(CompileTest, Ir_version_11_opset_21_model_compiles_and_runs) {
  ModelBuilder b(21, 11);
  b.Input("x", DType::kFloat32, {2, 3});
  b.Initializer("axes", Tensor::FromVector<int64_t>({1}, {1}));
  b.Node("ReduceMean", {"x", "axes"}, {"m"});
  b.Node("Sub", {"x", "m"}, {"c"});
  b.Node("Gelu", {"c"}, {"y"});
  b.Output("y");
  const fs::path path = dir_ / "ir11.onnx";
  ASSERT_TRUE(b.Save(path).ok());
  auto model = Compile(path, targets::testing::Cpu());
  ASSERT_TRUE(model.ok()) << model.status().message();
  cpu::CpuExecutor exec(*model->graph);
  auto out = exec.Run({Tensor::FromVector<float>({1, 2, 3, -1, 0, 4}, {2, 3})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  // Rows centred: [-1, 0, 1] and [-2, -1, 3]; Gelu(v) = v / 2 * (1 + erf(v / sqrt 2)).
  const std::vector<float> centred = {-1, 0, 1, -2, -1, 3};
  const std::vector<float> y = (*out)[0].ToFloatVector();
  ASSERT_EQ(y.size(), centred.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = centred[i];
    EXPECT_NEAR(y[i], v / 2 * (1 + std::erf(v / std::sqrt(2.0))), 1e-5) << i;
  }
}

}  // namespace
}  // namespace tessel
