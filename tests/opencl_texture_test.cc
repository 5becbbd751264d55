// Texture storage on the OpenCL target (--storage texture): what the
// select-kernels stage decides per value and node, without a device; that
// a model with images runs like the reference (on whatever OpenCL device is
// here, PoCL in CI); the CLI's --storage, and auto's measured, cached and
// recorded choice.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "cli_runner.h"
#include "compiler/compile.h"
#include "model/prepare.h"
#include "onnx/model_builder.h"
#include "opencl_env.h"
#include "targets/registry.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

Tensor Random(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  for (float& x : v) x = u(rng);
  return Tensor::FromVector<float>(v, shape);
}

// A small CNN with what texture storage meets in real ones:
//   x[1,3,20,18] -> Conv 3x3 (10 channels, not a multiple of 4) + Relu
//   -> MaxPool 2x2 -> depthwise Conv 3x3 -> squeeze-excite (GlobalAveragePool,
//   Sigmoid, Mul: a spatial broadcast) -> Mul by a channel mean (ReduceMean
//   over channels, which has no image kernel: a channel broadcast from a
//   staged buffer) -> Conv 1x1 -> Flatten -> y
void SaveCnn(const std::string& file) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 3, 20, 18});
  b.Initializer("w1", Random({10, 3, 3, 3}, 1));
  b.Initializer("b1", Random({10}, 2));
  b.Initializer("w2", Random({10, 1, 3, 3}, 3));
  b.Initializer("w3", Random({6, 10, 1, 1}, 4));
  auto& c1 = b.Node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  ModelBuilder::SetAttr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& p = b.Node("MaxPool", {"r1"}, {"p1"}, "pool1");
  ModelBuilder::SetAttr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  ModelBuilder::SetAttr(p, "strides", std::vector<int64_t>{2, 2});
  auto& dw = b.Node("Conv", {"p1", "w2"}, {"d1"}, "depthwise");
  ModelBuilder::SetAttr(dw, "group", int64_t{10});
  ModelBuilder::SetAttr(dw, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.Node("GlobalAveragePool", {"d1"}, {"g"}, "squeeze");
  b.Node("Sigmoid", {"g"}, {"s"}, "excite");
  b.Node("Mul", {"d1", "s"}, {"e"}, "scale");
  auto& m = b.Node("ReduceMean", {"e"}, {"mean"}, "channel_mean");
  ModelBuilder::SetAttr(m, "axes", std::vector<int64_t>{1});
  b.Node("Mul", {"e", "mean"}, {"f"}, "by_mean");
  b.Node("Conv", {"f", "w3"}, {"c3"}, "project");
  b.Node("Flatten", {"c3"}, {"y"}, "flatten");
  b.Output("y");
  ASSERT_TRUE(b.Save(file).ok());
}

class OpenClTexture : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef TESSEL_WITH_OPENCL
    GTEST_SKIP() << "built without OpenCL (TESSEL_WITH_OPENCL=OFF)";
#endif
    dir_ = fs::temp_directory_path() /
           ("tessel_opencl_texture_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    SaveCnn(path("cnn.onnx"));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static StatusOr<CompiledModel> CompileFor(const std::string& onnx, const std::string& storage) {
    TESSEL_ASSIGN_OR_RETURN(auto target, targets::MakeTarget({"opencl", {{"storage", storage}}},
                                                             {.compile_only = true}));
    return Compile(onnx, *target);
  }

  fs::path dir_;
};

const ir::Value& ValueNamed(const ir::Graph& g, const std::string& name) {
  for (const auto& v : g.values()) {
    if (v->name == name) return *v;
  }
  ADD_FAILURE() << "no value " << name;
  return *g.values().front();
}

std::map<std::string, std::string> KernelsByNode(const ir::Graph& g) {
  std::map<std::string, std::string> out;
  for (const auto& n : g.nodes()) out[n->name] = n->kernel.implementation;
  return out;
}

TEST_F(OpenClTexture, Select_kernels_puts_activations_between_image_kernels_in_textures) {
  StatusOr<CompiledModel> m = CompileFor(path("cnn.onnx"), "texture");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->target.Option("storage"), "texture");
  const ir::Graph& g = *m->graph;
  // The caller's tensors stay buffers.
  EXPECT_EQ(ValueNamed(g, "x").scope, ir::StorageScope::kGlobal);
  EXPECT_EQ(ValueNamed(g, "y").scope, ir::StorageScope::kGlobal);
  // Written and read by image kernels: textures, NCHW4c; the weights image
  // kernels read: texture:weight, OIHW4o (dense) and OHW4o (depthwise).
  int textures = 0, dense = 0, depthwise = 0;
  for (const auto& v : g.values()) {
    if (v->scope == ir::StorageScope::kTexture) {
      ++textures;
      EXPECT_EQ(v->layout, ir::Layout::kNCHW4c) << v->name;
      EXPECT_EQ(v->shape.size(), 4u) << v->name;
    }
    if (v->scope == ir::StorageScope::kTextureWeight) {
      EXPECT_TRUE(v->is_constant()) << v->name;
      dense += v->layout == ir::Layout::kOIHW4o;
      depthwise += v->layout == ir::Layout::kOHW4o;
    }
  }
  EXPECT_GE(textures, 3);
  EXPECT_EQ(dense, 2);
  EXPECT_EQ(depthwise, 1);
  // ReduceMean has no image kernel: its input and output stay buffers, so
  // the Mul after it reads the mean from a buffer, staged into a texture.
  const auto kernels = KernelsByNode(g);
  for (const auto& n : g.nodes()) {
    if (n->op_type == "ReduceMean") {
      EXPECT_NE(n->kernel.implementation, "image");
      EXPECT_EQ(n->outputs[0]->scope, ir::StorageScope::kGlobal);
    }
    // The Mul by the mean reads both operands from buffers and writes a
    // texture: it stages them (the mean, one channel, as lane 0 of its
    // texels).
    if (n->op_type == "FusedConv" || n->op_type == "Conv" || n->op_type == "MaxPool" ||
        n->name == "by_mean") {
      EXPECT_EQ(n->kernel.implementation, "image") << n->Describe();
    }
  }
}

TEST_F(OpenClTexture, Buffer_storage_keeps_every_value_global_and_plain) {
  StatusOr<CompiledModel> m = CompileFor(path("cnn.onnx"), "buffer");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->target.Option("storage"), "");  // the default is not recorded
  for (const auto& v : m->graph->values()) {
    EXPECT_EQ(v->scope, ir::StorageScope::kGlobal) << v->name;
    EXPECT_EQ(v->layout, ir::Layout::kPlain) << v->name;
  }
  for (const auto& n : m->graph->nodes()) EXPECT_NE(n->kernel.implementation, "image");
}

TEST_F(OpenClTexture, An_activation_wider_than_every_device_allows_stays_a_buffer) {
  // Conv 1x1 -> Conv 1x3 over a row `width` wide: at 20000 its image would be
  // 20000 texels wide, over the 16384 every device with images offers.
  for (const int64_t width : {16000, 20000}) {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {1, 4, 1, width});
    b.Initializer("w", Random({4, 4, 1, 1}, 5));
    b.Initializer("w2", Random({4, 4, 1, 3}, 6));  // 1x3: not folded into the first
    b.Node("Conv", {"x", "w"}, {"c"}, "conv");
    ModelBuilder::SetAttr(b.Node("Conv", {"c", "w2"}, {"y"}, "conv2"), "pads",
                          std::vector<int64_t>{0, 1, 0, 1});
    b.Output("y");
    const std::string file = path("wide" + std::to_string(width) + ".onnx");
    ASSERT_TRUE(b.Save(file).ok());
    StatusOr<CompiledModel> m = CompileFor(file, "texture");
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(ValueNamed(*m->graph, "c").scope,
              width <= 16384 ? ir::StorageScope::kTexture : ir::StorageScope::kGlobal)
        << width;
  }
  // The CLI counts such values; --verbose names each.
  const std::string compile = "compile " + path("wide20000.onnx") +
                              " --target opencl --storage texture -o " + path("wide.tsl");
  CliResult r = RunTessel(compile);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("1 activation(s) stay in buffers"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("value 'c'"), std::string::npos) << r.err;
  r = RunTessel(compile + " --verbose");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find(
          "value 'c' stays in a buffer: its NCHW4c image would be 20000x1 texels, over 16384"),
      std::string::npos)
      << r.err;
  r = RunTessel("compile " + path("wide16000.onnx") + " --target opencl --storage texture -o " +
                path("narrow.tsl") + " -v");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("stay"), std::string::npos) << r.err;
}

TEST_F(OpenClTexture, A_snippet_whose_operand_cannot_be_an_image_runs_on_buffers) {
  // c = Conv(s) is small, but Mul broadcasts it against a [1,4,20000,2]
  // buffer, too tall for an image: the Mul has no image kernel, so c stays
  // a buffer and the model compiles.
  ModelBuilder b(13);
  b.Input("s", DType::kFloat32, {1, 3, 1, 1});
  b.Input("xb", DType::kFloat32, {1, 4, 20000, 2});
  b.Initializer("w", Random({4, 3, 1, 1}, 7));
  b.Node("Conv", {"s", "w"}, {"c"}, "conv");
  b.Node("Mul", {"xb", "c"}, {"m"}, "mul");
  b.Node("Relu", {"m"}, {"y"}, "relu");
  b.Output("y");
  ASSERT_TRUE(b.Save(path("tall.onnx")).ok());
  StatusOr<CompiledModel> m = CompileFor(path("tall.onnx"), "texture");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(ValueNamed(*m->graph, "c").scope, ir::StorageScope::kGlobal);
  for (const auto& n : m->graph->nodes()) EXPECT_NE(n->kernel.implementation, "image");
}

TEST_F(OpenClTexture, Runs_like_the_reference_with_textures) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  auto reference = targets::MakeTarget({"reference", {}});
  ASSERT_TRUE(reference.ok());
  StatusOr<CompiledModel> want_model = Compile(path("cnn.onnx"), **reference);
  ASSERT_TRUE(want_model.ok()) << want_model.status().message();
  auto want_exe = Prepare(*want_model, **reference);
  ASSERT_TRUE(want_exe.ok()) << want_exe.status().message();
  const std::vector<Tensor> inputs = {Random({1, 3, 20, 18}, 9)};
  auto want = (*want_exe)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().message();

  for (const std::string storage : {"texture", "buffer"}) {
    auto target = targets::MakeTarget(
        {"opencl", {{"storage", storage}}},
        {.cache_dir = fs::path(TESSEL_BINARY).parent_path() / "opencl-cache" / "opencl"});
    ASSERT_TRUE(target.ok()) << target.status().message();
    StatusOr<CompiledModel> m = Compile(path("cnn.onnx"), **target);
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto exe = Prepare(*m, **target);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    auto got = (*exe)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), 1u);
    const Tensor& a = (*got)[0];
    const Tensor& e = (*want)[0];
    ASSERT_EQ(a.shape(), e.shape());
    for (int64_t i = 0; i < NumElements(e.shape()); ++i) {
      const float x = a.data<float>()[i], w = e.data<float>()[i];
      ASSERT_LE(std::fabs(x - w), 1e-4f + 1e-3f * std::fabs(w)) << storage << " at " << i;
    }
  }
}

TEST_F(OpenClTexture, Cli_storage_is_an_opencl_option_and_a_model_keeps_its_own) {
  CliResult r = RunTessel("compile " + path("cnn.onnx") + " --storage texture -o " + path("a.tsl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--storage is an option of --target opencl"), std::string::npos) << r.err;
  r = RunTessel("compile " + path("cnn.onnx") + " --target opencl --storage texture -o " +
                path("t.tsl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunTessel("show " + path("t.tsl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opencl storage=texture"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<NCHW4c texture>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<OIHW4o texture:weight>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("opencl image"), std::string::npos) << r.out;
  r = RunTessel("run " + path("t.tsl") + " --storage buffer");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("it cannot run with --storage buffer"), std::string::npos) << r.err;
  r = RunTessel("compile " + path("cnn.onnx") + " --target opencl --storage textures -o " +
                path("x.tsl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(path("x.tsl")));
}

TEST_F(OpenClTexture, Auto_measures_once_caches_and_records_what_it_chose) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  const std::string env = "TESSEL_CACHE_DIR=" + path("cache") + " ";
  CliResult r = RunTessel(
      "compile " + path("cnn.onnx") + " --target opencl --storage auto -o " + path("a.tsl"), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--storage auto on "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(cached)"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(path("cache") + "/opencl/storage.json"));
  const bool texture = r.err.find("ms: texture") != std::string::npos;
  r = RunTessel("show " + path("a.tsl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("storage=auto"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("opencl storage=texture") != std::string::npos, texture) << r.out;
  // The second time, from the cache; a corrupt cache is measured again.
  r = RunTessel(
      "compile " + path("cnn.onnx") + " --target opencl --storage auto -o " + path("b.tsl"), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(cached)"), std::string::npos) << r.err;
  { std::ofstream(path("cache") + "/opencl/storage.json") << "{ not json"; }
  r = RunTessel(
      "compile " + path("cnn.onnx") + " --target opencl --storage auto -o " + path("c.tsl"), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("is unreadable: measured again"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(cached)"), std::string::npos) << r.err;
  // Compiling and running in one process resolves auto once: Prepare takes
  // what compiling took, whatever a second measurement would say.
  fs::remove_all(path("cache"));
  r = RunTessel("run " + path("cnn.onnx") + " --target opencl --storage auto", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t first = r.err.find("--storage auto on ");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--storage auto on ", first + 1), std::string::npos) << r.err;
}

TEST_F(OpenClTexture, Auto_without_a_device_takes_a_recorded_calibration_or_buffer) {
  // No OpenCL platform at all: the ICD loader reads its vendors from an
  // empty folder.
  fs::create_directories(path("no-vendors"));
  const std::string env = "TESSEL_CACHE_DIR=" + path("cache") + " ";
  const std::string no_device = env + "OCL_ICD_VENDORS=" + path("no-vendors") + " ";
  const std::string compile =
      "compile " + path("cnn.onnx") + " --target opencl --storage auto -o " + path("n.tsl");
  CliResult r = RunTessel(compile, no_device);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--storage auto: no OpenCL device to measure on"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("): buffer, no calibration of this model recorded in"), std::string::npos)
      << r.err;
  r = RunTessel("show " + path("n.tsl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("storage="), std::string::npos) << r.out;

  // A calibration recorded on a device that is not here (the graph's key
  // taken from a real one, when this machine has OpenCL).
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped (recorded calibrations): " << skip;
  r = RunTessel(compile, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cache = path("cache") + "/opencl/storage.json";
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(cache));
  ASSERT_EQ(doc["entries"].size(), 1u) << doc.dump();
  nlohmann::json entry = doc["entries"][0];
  entry["device"] = "Imaginary GPU 9000";
  entry["storage"] = "texture";
  doc["entries"] = nlohmann::json::array({entry});
  std::ofstream(cache) << doc.dump();
  r = RunTessel(compile, no_device);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("): texture, as calibrated on Imaginary GPU 9000"), std::string::npos)
      << r.err;
  r = RunTessel("show " + path("n.tsl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opencl storage=texture"), std::string::npos) << r.out;
  // --device names another GPU: nothing recorded for it.
  r = RunTessel(compile + " --device 'Other GPU'", no_device);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("): buffer, no calibration"), std::string::npos) << r.err;
  // Two devices that disagree: buffer, naming both; --device picks one.
  entry["device"] = "Second GPU";
  entry["storage"] = "buffer";
  doc["entries"].push_back(entry);
  std::ofstream(cache) << doc.dump();
  r = RunTessel(compile, no_device);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("): buffer, calibrations disagree (--device picks one): Imaginary GPU 9000 "
                       "texture, Second GPU buffer"),
            std::string::npos)
      << r.err;
  r = RunTessel(compile + " --device Imaginary", no_device);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("): texture, as calibrated on Imaginary GPU 9000"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tessel::testing
