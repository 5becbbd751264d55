// End to end for snippets: fusion on by default in compile, --dump-snippets
// figures, the compiled file carrying Subgraph bodies, and the fallbacks
// (--no-fusion, --isa generic) giving the same answers. The shared models
// also pass `tessel check` with fusion on (models_test.cc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

#include "cli_runner.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

fs::path SharedModel(const std::string& name) {
  return fs::path(TESSEL_SHARED_DIR) / "models" / name;
}

// "bytes walked by WHAT: ... (N B -> M B, ...": returns {N, M}.
std::pair<int64_t, int64_t> BytesWalked(const std::string& out, const std::string& what) {
  const std::regex re("bytes walked by " + what + ": .*\\((\\d+) B -> (\\d+) B");
  std::smatch m;
  if (!std::regex_search(out, m, re)) return {-1, -1};
  return {std::stoll(m[1]), std::stoll(m[2])};
}

class SnippetsEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(SharedModel("transformer_encoder"))) {
      GTEST_SKIP() << "skipped: ../shared/models is absent (../shared not beside the checkout)";
    }
    dir_ = fs::temp_directory_path() / ("tessel_snippets_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SnippetsEndToEnd, Dump_snippets_shows_fusion_shrinking_the_bytes_walked) {
  const std::string tsl = (dir_ / "t.tsl").string();
  CliResult t =
      RunTessel("compile " + (SharedModel("transformer_encoder") / "model.onnx").string() + " -o " +
                tsl + " --dump-snippets");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  // The GeLU of each feed-forward block is one snippet (its bias add went
  // into the MatMul before it: fuse-matmul).
  EXPECT_NE(t.out.find("5 ops (Div Erf Add Mul Mul)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("registers: avx512 "), std::string::npos);
  const auto [fused_before, fused_after] = BytesWalked(t.out, "fused regions");
  ASSERT_GT(fused_after, 0) << t.out;
  EXPECT_GT(fused_before, 2 * fused_after);
  const auto [model_before, model_after] = BytesWalked(t.out, "the model");
  EXPECT_LT(model_after, model_before);

  const auto [unfused, fused] = BytesWalked(t.out, "the model, every fusion stage");
  EXPECT_EQ(fused, model_after);
  EXPECT_GE(unfused, model_before);

  // MobileNetV2's elementwise ops (Clip, residual Add) all follow a
  // convolution: fuse-conv folds them into FusedConv nodes first (issue 6),
  // which leaves the tokenizer nothing; the bytes it saves show against the
  // graph before every fusion stage.
  CliResult m = RunTessel("compile " + (SharedModel("mobilenet_v2") / "model.onnx").string() +
                          " -o " + (dir_ / "m.tsl").string() + " --dump-snippets");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("snippets: 0 subgraphs"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find(": 55 nodes"), std::string::npos) << m.out;
  const auto [m_unfused, m_fused] = BytesWalked(m.out, "the model, every fusion stage");
  ASSERT_GT(m_fused, 0) << m.out;
  EXPECT_LT(m_fused, m_unfused) << m.out;

  CliResult none = RunTessel("compile " + (SharedModel("mobilenet_v2") / "model.onnx").string() +
                             " -o " + (dir_ / "n.tsl").string() + " --dump-snippets --no-fusion");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("snippets: 0 subgraphs"), std::string::npos) << none.out;
  EXPECT_EQ(none.out.find(": 55 nodes"), std::string::npos) << none.out;
}

TEST_F(SnippetsEndToEnd, Compiled_file_keeps_subgraph_bodies_and_runs_identically) {
  const std::string onnx = (SharedModel("transformer_encoder") / "model.onnx").string();
  const std::string tsl = (dir_ / "t.tsl").string();
  ASSERT_EQ(RunTessel("compile " + onnx + " -o " + tsl).exit_code, 0);
  CliResult show = RunTessel("show " + tsl);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("= tessel.Subgraph("), std::string::npos);
  CliResult a = RunTessel("run " + onnx + " --output-dir " + (dir_ / "a").string());
  CliResult b = RunTessel("run " + tsl + " --output-dir " + (dir_ / "b").string());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(ReadAll(dir_ / "a" / "output_0.pb"), ReadAll(dir_ / "b" / "output_0.pb"));
}

TEST_F(SnippetsEndToEnd, Interpreter_fallback_and_unfused_graph_pass_check) {
  CliResult off =
      RunTessel("check " + SharedModel("transformer_encoder").string() + " --isa generic");
  EXPECT_EQ(off.exit_code, 0) << off.out << off.err;
  EXPECT_NE(off.out.find("all outputs match"), std::string::npos) << off.out;
  CliResult unfused = RunTessel("check " + SharedModel("mobilenet_v2").string() + " --no-fusion");
  EXPECT_EQ(unfused.exit_code, 0) << unfused.out << unfused.err;
}

}  // namespace
}  // namespace tessel::testing
