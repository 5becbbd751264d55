#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "compiler/compile.h"
#include "model/model_file.h"
#include "onnx/model_builder.h"
#include "onnx/test_blocks.h"
#include "snippets/x86_generator.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/target.h"
#include "targets/reference/target.h"
#include "targets/testing.h"

namespace tessel::cpu {
namespace {

namespace fs = std::filesystem;

// Two 3x3 convolutions of 64 channels on 56x56 (Winograd's case, 2 x 231
// MFLOP), then a Transpose to channels last: an 800 KiB copy, which tessel's
// own thread pool splits over every thread it has.
fs::path WriteConvModel(const fs::path& dir) {
  onnx_io::ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 64, 56, 56});
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 0.05f);
  for (const char* w : {"w1", "w2"}) {
    Tensor t(DType::kFloat32, {64, 64, 3, 3});
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = normal(rng);
    b.Initializer(w, t);
  }
  for (const auto& [x, w, y] : {std::tuple{"x", "w1", "h"}, std::tuple{"h", "w2", "c"}}) {
    onnx::NodeProto& conv = b.Node("Conv", {x, w}, {y});
    onnx_io::ModelBuilder::SetAttr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
    onnx_io::ModelBuilder::SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  }
  onnx::NodeProto& transpose = b.Node("Transpose", {"c"}, {"y"});
  onnx_io::ModelBuilder::SetAttr(transpose, "perm", std::vector<int64_t>{0, 2, 3, 1});
  b.Output("y");
  const fs::path path = dir / "convs.onnx";
  EXPECT_TRUE(b.Save(path).ok());
  return path;
}

// The kernel names of the model's convolutions.
std::vector<std::string> ConvKernels(const CompiledModel& model) {
  std::vector<std::string> out;
  for (const auto& node : model.graph->nodes()) {
    if (node->op_type == "Conv" || node->op_type == "FusedConv") {
      out.push_back(node->kernel.ToString());
    }
  }
  return out;
}

bool AllWinograd(const std::vector<std::string>& kernels) {
  for (const std::string& k : kernels) {
    if (k.find("wino") == std::string::npos) return false;
  }
  return !kernels.empty();
}

bool NoneWinograd(const std::vector<std::string>& kernels) {
  for (const std::string& k : kernels) {
    if (k.find("wino") != std::string::npos) return false;
  }
  return !kernels.empty();
}

TEST(CpuTarget, Two_targets_in_one_process_keep_their_own_options) {
#if !TESSEL_WITH_ONEDNN
  GTEST_SKIP() << "built without oneDNN: no Winograd kernels to tell the targets apart";
#endif
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  const fs::path dir =
      fs::temp_directory_path() / ("tessel_two_targets_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path onnx_path = WriteConvModel(dir);

  // A first, then B with the opposite settings: B's creation must not
  // change what A compiles or how many threads A runs on.
  auto a = CpuTarget::Create({"cpu", {{"winograd", "off"}, {"threads", "1"}}});
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto b = CpuTarget::Create({"cpu", {{"winograd", "auto"}, {"threads", "2"}}});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ((*a)->options().winograd, Winograd::kOff);
  EXPECT_EQ((*b)->options().winograd, Winograd::kAuto);

  auto ref_target = targets::ReferenceTarget::Create({"reference", {}});
  ASSERT_TRUE(ref_target.ok());
  auto ref_model = Compile(onnx_path, **ref_target);
  ASSERT_TRUE(ref_model.ok()) << ref_model.status().message();
  auto ref_exe = Prepare(*ref_model, **ref_target);
  ASSERT_TRUE(ref_exe.ok());

  // Interleaved: compile A, compile B, prepare A, prepare B, run A, B, A, B.
  auto model_a = Compile(onnx_path, **a);
  ASSERT_TRUE(model_a.ok()) << model_a.status().message();
  auto model_b = Compile(onnx_path, **b);
  ASSERT_TRUE(model_b.ok()) << model_b.status().message();
  EXPECT_TRUE(NoneWinograd(ConvKernels(*model_a)))
      << "A (winograd=off) picked " << ConvKernels(*model_a).front();
  EXPECT_EQ(model_a->target.Option("winograd"), "off");
  EXPECT_EQ(model_b->target.Option("winograd"), "auto");
  // Winograd where oneDNN has it for this CPU (AVX-512 builds of oneDNN 2.x).
  const bool b_winograd = AllWinograd(ConvKernels(*model_b));
  auto exe_a = Prepare(*model_a, **a);
  ASSERT_TRUE(exe_a.ok()) << exe_a.status().message();
  auto exe_b = Prepare(*model_b, **b);
  ASSERT_TRUE(exe_b.ok()) << exe_b.status().message();

  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  Tensor x(DType::kFloat32, {1, 64, 56, 56});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = uniform(rng);
  auto expected = (*ref_exe)->Run({x});
  ASSERT_TRUE(expected.ok());
  for (int round = 0; round < 2; ++round) {
    for (targets::Executable* exe : {exe_a->get(), exe_b->get()}) {
      auto got = exe->Run({x});
      ASSERT_TRUE(got.ok()) << got.status().message();
      const Tensor& y = (*got)[0];
      const Tensor& e = (*expected)[0];
      ASSERT_EQ(y.num_elements(), e.num_elements());
      for (int64_t i = 0; i < y.num_elements(); ++i) {
        const float want = e.data<float>()[i];
        ASSERT_NEAR(y.data<float>()[i], want, 2e-3f * (1.f + std::fabs(want)))
            << exe->Describe() << " at " << i;
      }
    }
  }
  EXPECT_EQ((*exe_a)->stats().threads, 1) << "A was made with threads=1";
  EXPECT_EQ((*exe_b)->stats().threads, 2) << "B was made with threads=2";
  // And so many ran: the Transpose's copy went over every thread each had.
  EXPECT_EQ((*exe_a)->stats().widest_parallel_loop, 1);
  EXPECT_EQ((*exe_b)->stats().widest_parallel_loop, 2);
  // A's kernels, selected again now that B exists, are still direct ones.
  auto again = (*a)->SelectKernels(*model_a->graph);
  ASSERT_TRUE(again.ok());
  for (const targets::NodeKernel& k : again->nodes) {
    EXPECT_EQ(k.kernel.implementation.find("winograd"), std::string::npos) << k.kernel.ToString();
  }
  if (!b_winograd) {
    std::printf("note: oneDNN has no Winograd convolution on this CPU; B ran direct too\n");
  }
  fs::remove_all(dir);
}

// A model compiled and run in one process builds every kernel once: the
// kernels the select-kernels stage built (oneDNN primitives created,
// snippets JIT-compiled) are the ones the executor runs. A model read from
// a .tsl builds them once too, when it is prepared.
TEST(CpuTarget, Compiling_and_running_in_one_process_builds_each_kernel_once) {
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels, no JIT";
  }
  const fs::path dir =
      fs::temp_directory_path() / ("tessel_build_once_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The convolutions, and a Sigmoid * x that fuses into one snippet.
  onnx_io::ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 16, 20, 20});
  Tensor w(DType::kFloat32, {16, 16, 3, 3});
  for (int64_t i = 0; i < w.num_elements(); ++i) w.data<float>()[i] = 0.01f * (i % 17 - 8);
  b.Initializer("w", w);
  onnx::NodeProto& conv = b.Node("Conv", {"x", "w"}, {"c"});
  onnx_io::ModelBuilder::SetAttr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  onnx_io::ModelBuilder::SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.Node("Tanh", {"c"}, {"t"});
  b.Node("Mul", {"t", "x"}, {"y"});
  b.Output("y");
  const fs::path onnx_path = dir / "model.onnx";
  ASSERT_TRUE(b.Save(onnx_path).ok());

  auto target = CpuTarget::Create({"cpu", {{"threads", "1"}}});
  ASSERT_TRUE(target.ok()) << target.status().message();
  const int64_t kernels0 = FastKernelsBuilt(), jit0 = snippets::GeneratedFunctionCount();
  auto model = Compile(onnx_path, **target);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const int64_t compiled_kernels = FastKernelsBuilt() - kernels0;
  const int64_t compiled_jit = snippets::GeneratedFunctionCount() - jit0;
  ASSERT_GE(compiled_kernels, 2) << "a conv and a snippet";
  ASSERT_GE(compiled_jit, 1) << "the snippet";
  ASSERT_TRUE(WriteCompiledModel(*model, dir / "model.tsl").ok());
  auto exe = Prepare(*model, **target);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  Tensor x(DType::kFloat32, {1, 16, 20, 20});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = 0.1f * (i % 13 - 6);
  ASSERT_TRUE((*exe)->Run({x}).ok());
  EXPECT_EQ(FastKernelsBuilt() - kernels0, compiled_kernels) << "Prepare built kernels again";
  EXPECT_EQ(snippets::GeneratedFunctionCount() - jit0, compiled_jit)
      << "Prepare JIT-compiled snippets again";

  // From the file: decided and built once more, where it runs, and no more.
  auto loaded = ReadCompiledModel(dir / "model.tsl");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto loaded_exe = Prepare(*loaded, **target);
  ASSERT_TRUE(loaded_exe.ok()) << loaded_exe.status().message();
  EXPECT_EQ(FastKernelsBuilt() - kernels0, 2 * compiled_kernels);
  EXPECT_EQ(snippets::GeneratedFunctionCount() - jit0, 2 * compiled_jit);
  auto a = (*exe)->Run({x});
  auto c = (*loaded_exe)->Run({x});
  ASSERT_TRUE(a.ok() && c.ok());
  for (int64_t i = 0; i < (*a)[0].num_elements(); ++i) {
    ASSERT_EQ((*a)[0].data<float>()[i], (*c)[0].data<float>()[i]) << i;
  }
  fs::remove_all(dir);
}

// Skips, saying why, where oneDNN's kernels do not run: built without it,
// or a CPU with neither AVX2 nor AVX-512.
#if TESSEL_WITH_ONEDNN
#define REQUIRE_FAST_ONEDNN()                             \
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) \
  GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels"
#else
#define REQUIRE_FAST_ONEDNN() GTEST_SKIP() << "built without oneDNN (TESSEL_WITH_ONEDNN=OFF)"
#endif

// Uniform in [-0.5, 0.5), seeded.
Tensor RandomTensor(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = uniform(rng);
  return t;
}

void AddConv(onnx_io::ModelBuilder& b, const std::string& x, const std::string& y, int64_t cin,
             int64_t cout, int64_t k, int64_t group, uint32_t seed) {
  b.Initializer(y + ".w", RandomTensor({cout, cin / group, k, k}, seed));
  onnx::NodeProto& conv = b.Node("Conv", {x, y + ".w"}, {y});
  onnx_io::ModelBuilder::SetAttr(conv, "pads", std::vector<int64_t>(4, k / 2));
  onnx_io::ModelBuilder::SetAttr(conv, "group", group);
}

void AddTranspose(onnx_io::ModelBuilder& b, const std::string& x, const std::string& y,
                  std::vector<int64_t> perm) {
  onnx_io::ModelBuilder::SetAttr(b.Node("Transpose", {x}, {y}), "perm", perm);
}

// `b` compiled for the CPU (its kernels by op type, in node order, and its
// memory plan's in-place choices); its outputs on a random input of
// `x_shape`, run on that plan and read back from a .tsl, are the reference's.
struct Compiled {
  std::map<std::string, std::vector<std::string>> kernels;
  std::map<std::string, std::vector<int32_t>> in_place;
};
Compiled CompileAndCompare(onnx_io::ModelBuilder& b, const std::string& name,
                           const std::vector<Shape>& input_shapes) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_TRUE(b.Save(dir / "model.onnx").ok());
  Compiled out;
  auto model = Compile(dir / "model.onnx", targets::testing::Cpu());
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return out;
  const auto& nodes = model->graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.kernels[nodes[i]->op_type].push_back(nodes[i]->kernel.ToString());
    out.in_place[nodes[i]->op_type].push_back(model->memory.in_place[i]);
  }
  std::vector<Tensor> inputs;
  for (const Shape& shape : input_shapes) {
    inputs.push_back(RandomTensor(shape, static_cast<int>(11 + inputs.size())));
  }
  auto want = targets::testing::RunReference(*model->graph, inputs);
  EXPECT_TRUE(WriteCompiledModel(*model, dir / "model.tsl").ok());
  auto loaded = ReadCompiledModel(dir / "model.tsl");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  for (CompiledModel* m : {&*model, &*loaded}) {
    auto exe = Prepare(*m, targets::testing::Cpu());
    EXPECT_TRUE(exe.ok()) << exe.status().message();
    auto got = (*exe)->Run(inputs);
    EXPECT_TRUE(want.ok() && got.ok());
    const std::vector<float> g = (*got)[0].ToFloatVector(), w = (*want)[0].ToFloatVector();
    EXPECT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
      if (std::fabs(g[i] - w[i]) > 1e-4f * (1 + std::fabs(w[i]))) {
        ADD_FAILURE() << "element " << i << ": " << g[i] << ", reference " << w[i];
        break;
      }
    }
  }
  fs::remove_all(dir);
  return out;
}
Compiled CompileAndCompare(onnx_io::ModelBuilder& b, const std::string& name,
                           const Shape& x_shape) {
  return CompileAndCompare(b, name, std::vector<Shape>{x_shape});
}

// A vision transformer's Mix-FFN (PVT-v2, SegFormer): tokens -> Linear ->
// Transpose and Reshape to an image -> depthwise conv -> Reshape and
// Transpose back to tokens -> Linear. With the conv channels last, the
// tokens are already its image's bytes: both Transposes are views, and the
// plan gives each one its input's buffer.
TEST(CpuTarget, Token_transposes_around_a_channels_last_conv_are_views) {
  REQUIRE_FAST_ONEDNN();
  onnx_io::ModelBuilder b(17);
  b.Input("x", DType::kFloat32, {1, 16, 8});
  b.Initializer("w1", RandomTensor({8, 32}, 1));
  b.Initializer("w2", RandomTensor({32, 8}, 2));
  b.Initializer("image", Tensor::FromVector<int64_t>({1, 32, 4, 4}, {4}));
  b.Initializer("tokens", Tensor::FromVector<int64_t>({1, 32, 16}, {3}));
  b.Node("MatMul", {"x", "w1"}, {"h"});
  AddTranspose(b, "h", "ht", {0, 2, 1});
  b.Node("Reshape", {"ht", "image"}, {"img"});
  AddConv(b, "img", "dw", 32, 32, 3, 32, 3);
  b.Node("Reshape", {"dw", "tokens"}, {"flat"});
  AddTranspose(b, "flat", "back", {0, 2, 1});
  b.Node("Relu", {"back"}, {"act"});
  b.Node("MatMul", {"act", "w2"}, {"y"});
  b.Output("y");
  const Compiled c = CompileAndCompare(b, "tessel_mix_ffn", {1, 16, 8});
  EXPECT_EQ(c.kernels.at("Transpose"),
            (std::vector<std::string>{"native relayout to channels last",
                                      "native relayout from channels last"}));
  EXPECT_EQ(c.kernels.at("Reshape"),
            (std::vector<std::string>{"native view channels last", "native view channels last"}));
  ASSERT_EQ(c.kernels.at("Conv").size(), 1u);
  EXPECT_NE(c.kernels.at("Conv")[0].find("direct x,y"), std::string::npos)
      << c.kernels.at("Conv")[0];
  EXPECT_EQ(c.in_place.at("Transpose"), (std::vector<int32_t>{0, 0}));
}

// ConvNeXt's block: conv -> permute to NHWC -> LayerNorm over channels ->
// Linear -> permute back -> residual Add -> conv. The first permute reads
// the conv's channels-last output as it lies (a copy: the residual still
// needs it), the second writes the Add's channels-last input in place.
TEST(CpuTarget, Permutes_around_a_channels_last_layer_norm_are_views) {
  REQUIRE_FAST_ONEDNN();
  onnx_io::ModelBuilder b(17);
  b.Input("x", DType::kFloat32, {1, 8, 6, 6});
  AddConv(b, "x", "c", 8, 16, 3, 1, 4);
  AddTranspose(b, "c", "nhwc", {0, 2, 3, 1});
  b.Initializer("scale", RandomTensor({16}, 5));
  b.Initializer("bias", RandomTensor({16}, 6));
  b.Initializer("w", RandomTensor({16, 16}, 7));
  onnx_io::ModelBuilder::SetAttr(b.Node("LayerNormalization", {"nhwc", "scale", "bias"}, {"ln"}),
                                 "axis", int64_t{-1});
  b.Node("MatMul", {"ln", "w"}, {"lin"});
  AddTranspose(b, "lin", "nchw", {0, 3, 1, 2});
  b.Node("Add", {"nchw", "c"}, {"sum"});
  AddConv(b, "sum", "y", 16, 8, 1, 1, 8);
  b.Output("y");
  const Compiled c = CompileAndCompare(b, "tessel_convnext_block", {1, 8, 6, 6});
  EXPECT_EQ(c.kernels.at("Transpose"),
            (std::vector<std::string>{"native relayout from channels last",
                                      "native relayout to channels last"}));
  EXPECT_EQ(c.in_place.at("Transpose"), (std::vector<int32_t>{-1, 0}));
}

// Attention's heads: q, k and v split into heads by Reshape + Transpose
// (k's transposed for q k^T), and the result merged back by Transpose +
// Reshape. The kernels reading them take them through permuted strides, so
// the Transposes are views: the fused attention's (the products around a
// Softmax are one FusedAttention), and oneDNN's matrix products (around
// another op: a sigmoid attention). torch's MultiheadAttention's [S, 1, E]
// <-> [1, S, E] moves only an axis of one element, the same bytes.
void ExpectHeadTransposesStrided(const std::string& between) {
  const int64_t S = 24, H = 2, D = 16;
  onnx_io::ModelBuilder b(17);
  b.Input("x", DType::kFloat32, {S, 1, H * D});
  AddTranspose(b, "x", "tokens", {1, 0, 2});
  b.Initializer("heads", Tensor::FromVector<int64_t>({1, S, H, D}, {4}));
  b.Initializer("merged", Tensor::FromVector<int64_t>({1, S, H * D}, {3}));
  for (const char* name : {"q", "k", "v"}) {
    b.Initializer(std::string(name) + ".w", RandomTensor({H * D, H * D}, name[0]));
    b.Node("MatMul", {"tokens", std::string(name) + ".w"}, {std::string(name) + ".p"});
    b.Node("Reshape", {std::string(name) + ".p", "heads"}, {std::string(name) + ".h"});
  }
  AddTranspose(b, "q.h", "q.t", {0, 2, 1, 3});
  AddTranspose(b, "k.h", "k.t", {0, 2, 3, 1});
  AddTranspose(b, "v.h", "v.t", {0, 2, 1, 3});
  b.Node("MatMul", {"q.t", "k.t"}, {"scores"});
  b.Node(between, {"scores"}, {"p"});
  b.Node("MatMul", {"p", "v.t"}, {"o"});
  AddTranspose(b, "o", "o.t", {0, 2, 1, 3});
  b.Node("Reshape", {"o.t", "merged"}, {"y"});
  b.Output("y");
  const Compiled c = CompileAndCompare(b, "tessel_attention_heads_" + between, {S, 1, H * D});
  const std::vector<std::string>& t = c.kernels.at("Transpose");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0], "native view");
  EXPECT_EQ(c.in_place.at("Transpose")[0], -1) << "x is a graph input, the caller's";
  if (between == "Softmax") {
    EXPECT_EQ(c.kernels.count("Softmax"), 0u);
    ASSERT_EQ(c.kernels.at("FusedAttention").size(), 1u);
  } else {
    const std::vector<std::string>& products = c.kernels.at("MatMul");
    if (products.back().find("brg") == std::string::npos) {
      std::printf("note: oneDNN runs these products on %s here, not brgemm: heads copied\n",
                  products.back().c_str());
      return;
    }
  }
  // q, k (its two Transposes merged into one) and v unpermuted, the result
  // permuted back.
  EXPECT_EQ(std::vector<std::string>(t.begin() + 1, t.end()),
            (std::vector<std::string>{"native relayout unpermuted", "native relayout unpermuted",
                                      "native relayout unpermuted", "native relayout permuted"}));
  for (size_t i = 1; i < t.size(); ++i) EXPECT_EQ(c.in_place.at("Transpose")[i], 0) << i;
}

TEST(CpuTarget, Attention_head_transposes_are_strided_operands_of_the_fused_attention) {
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  ExpectHeadTransposesStrided("Softmax");
}

// Llama's attention: the rotary embeddings read q's and k's head
// Transposes through their strides, the fused attention v's (its repeats
// read as they are): no Transpose, Slice, Concat or Expand copies.
TEST(CpuTarget, Rotary_and_attention_read_the_heads_where_they_lie) {
  if (snippets::HostIsa() == snippets::Isa::kInterpreter) {
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no fast kernels";
  }
  const int64_t S = 7, D = 8, Hq = 4, Hkv = 2;
  onnx_io::ModelBuilder b(17);
  onnx_io::test_blocks::LlamaAttention(b, S, D, Hq, Hkv);
  b.Output("y");
  const Compiled c = CompileAndCompare(
      b, "tessel_llama_attention",
      {{S, D}, {S, D}, {1, 1, S, S}, {1, S, Hq * D}, {1, S, Hkv * D}, {1, S, Hkv * D}});
  EXPECT_EQ(c.kernels.at("Rotary"),
            (std::vector<std::string>{"native rotary rotate-half", "native rotary rotate-half"}));
  ASSERT_EQ(c.kernels.at("FusedAttention").size(), 1u);
  for (const char* copy : {"Slice", "Concat", "Expand", "Softmax"}) {
    EXPECT_EQ(c.kernels.count(copy), 0u) << copy;
  }
  EXPECT_EQ(c.kernels.at("Transpose"), (std::vector<std::string>(3, "native relayout unpermuted")));
}

TEST(CpuTarget, Attention_head_transposes_are_strided_operands_of_the_products) {
  REQUIRE_FAST_ONEDNN();
  ExpectHeadTransposesStrided("Sigmoid");
}

}  // namespace
}  // namespace tessel::cpu
