#include "targets/cpu/target.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "targets/reference/target.h"

namespace tessel::cpu {
namespace {

namespace fs = std::filesystem;

// Two 3x3 convolutions of 64 channels on 56x56: Winograd's case, and work
// enough (2 x 231 MFLOP) that the kernels run on every thread they have.
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
  for (const auto& [x, w, y] : {std::tuple{"x", "w1", "h"}, std::tuple{"h", "w2", "y"}}) {
    onnx::NodeProto& conv = b.Node("Conv", {x, w}, {y});
    onnx_io::ModelBuilder::SetAttr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
    onnx_io::ModelBuilder::SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  }
  b.Output("y");
  const fs::path path = dir / "convs.onnx";
  EXPECT_TRUE(b.Save(path).ok());
  return path;
}

// The kernel names of the model's convolutions.
std::vector<std::string> ConvKernels(const CompiledModel& model) {
  std::vector<std::string> out;
  for (const auto& node : model.graph->nodes()) {
    if (node->op_type == "Conv" || node->op_type == "FusedConv") out.push_back(node->kernel);
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
  const fs::path dir = fs::temp_directory_path() / ("tessel_two_targets_" +
                                                    std::to_string(::getpid()));
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
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_EQ((*exe_b)->stats().threads, 2) << "B was made with threads=2";
  }
  // A's kernels, selected again now that B exists, are still direct ones.
  auto again = (*a)->SelectKernels(*model_a->graph);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < again->size(); ++i) {
    EXPECT_EQ((*again)[i].kernel.find("wino"), std::string::npos) << (*again)[i].kernel;
  }
  if (!b_winograd) {
    std::printf("note: oneDNN has no Winograd convolution on this CPU; B ran direct too\n");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel::cpu
