// The c target on graphs whose outputs are not simply a node's: a graph
// input output as it is, a constant output, a node's output that the graph
// outputs twice and another node reads, and pools named alike but for their
// case. Each is generated with --check (the reference target's outputs on
// seeded inputs), built with the host C compiler at -Werror -pedantic, and
// run. (tests/c_target/*.sh take whole models and the ONNX node suites.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "onnx/model_builder.h"
#include "onnx/test_blocks.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class CTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessel_c_target_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Generates MODEL with --check and EXTRA, builds it with cc, runs it, and
  // returns what the check program printed; fails the test on any error.
  std::string GenerateBuildAndRun(const fs::path& model, const std::string& extra = "") {
    const fs::path gen = dir_ / "gen";
    CliResult c = RunTessel("compile " + model.string() + " --target c -o " + gen.string() +
                            " --name m --check " + extra);
    EXPECT_EQ(c.exit_code, 0) << c.err;
    const fs::path exe = dir_ / "check";
    const fs::path log = dir_ / "log.txt";
    const std::string build = "cc -std=c99 -Wall -Wextra -Werror -pedantic " + gen.string() +
                              "/*.c -lm -o " + exe.string() + " > " + log.string() + " 2>&1";
    EXPECT_EQ(std::system(build.c_str()), 0) << Read(log);
    const int run = std::system((exe.string() + " > " + log.string() + " 2>&1").c_str());
    EXPECT_EQ(run, 0) << Read(log);
    return Read(log);
  }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

TEST_F(CTarget, Outputs_that_no_node_writes_or_that_repeat_are_copied) {
  onnx_io::ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3});
  b.Initializer("k", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Add", {"r", "x"}, {"s"});
  b.Node("Mul", {"s", "k"}, {"t"});
  b.Output("r");
  b.Output("t");
  b.Output("r");  // again
  b.Output("x");  // the input, as it is
  b.Output("k");  // a constant
  const fs::path model = dir_ / "odd.onnx";
  ASSERT_TRUE(b.Save(model).ok());
  const std::string out = GenerateBuildAndRun(model);
  EXPECT_NE(out.find("PASS"), std::string::npos) << out;
  // Copied at the end: the second 'r', 'x' and 'k'.
  const std::string source = Read(dir_ / "gen" / "m.c");
  size_t copies = 0;
  for (size_t at = 0; (at = source.find("memcpy(outputs->", at)) != std::string::npos; ++at) {
    ++copies;
  }
  EXPECT_EQ(copies, 3u) << source;
  // The same with the weights in a constant pool the caller provides.
  const std::string pooled = GenerateBuildAndRun(model, "--constant-pool name=flash");
  EXPECT_NE(pooled.find("PASS"), std::string::npos) << pooled;
}

TEST_F(CTarget, Pools_named_alike_but_for_case_get_fields_of_their_own) {
  onnx_io::ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 256});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"a"}, {"c"});
  b.Node("Add", {"a", "c"}, {"y"});
  b.Output("y");
  const fs::path model = dir_ / "pools.onnx";
  ASSERT_TRUE(b.Save(model).ok());
  const std::string out = GenerateBuildAndRun(
      model, "--no-fusion --workspace-pool name=SRAM,size=1KiB --workspace-pool name=sram");
  EXPECT_NE(out.find("PASS"), std::string::npos) << out;
  std::ifstream header(dir_ / "gen" / "m.h");
  std::stringstream text;
  text << header.rdbuf();
  EXPECT_NE(text.str().find("TESSEL_M_SRAM_WORKSPACE_SIZE"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("TESSEL_M_SRAM_2_WORKSPACE_SIZE"), std::string::npos) << text.str();
}

// A Llama-style attention: rotary embeddings (rotate_half) on q and k,
// grouped-query heads repeated by Expand, torch's scaled_dot_product_attention
// with a mask and its NaN -> 0. Fused into Rotary and FusedAttention nodes,
// which the C target's library computes.
TEST_F(CTarget, Rotary_and_fused_attention_run_in_c) {
  onnx_io::ModelBuilder b(17);
  onnx_io::test_blocks::LlamaAttention(b, /*S=*/6, /*D=*/8, /*Hq=*/4, /*Hkv=*/2);
  b.Output("y");
  const fs::path model = dir_ / "llama_attention.onnx";
  ASSERT_TRUE(b.Save(model).ok());
  const std::string out = GenerateBuildAndRun(model);
  EXPECT_NE(out.find("PASS"), std::string::npos) << out;
  const std::string source = Read(dir_ / "gen" / "m.c");
  EXPECT_NE(source.find("tessel_attention("), std::string::npos);
  EXPECT_NE(source.find("tessel_rotary("), std::string::npos);
  EXPECT_EQ(source.find("tessel_softmax("), std::string::npos);
}

}  // namespace
}  // namespace tessel::testing
