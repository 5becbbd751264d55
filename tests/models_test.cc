// End to end: `tessel check` on every model in ../shared/models, and the
// bundled demo model through compile and run.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_runner.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class SharedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModels, Check_passes_at_default_tolerances) {
  const fs::path dir = fs::path(TESSEL_SHARED_DIR) / "models" / GetParam();
  if (!fs::exists(dir))
    GTEST_SKIP() << "skipped: " << dir << " is absent (../shared not beside the checkout)";
  CliResult r = RunTessel("check " + dir.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("all outputs match"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModels,
                         ::testing::Values("mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0",
                                           "transformer_encoder"));

TEST(Demo, Compiles_and_runs_the_bundled_model) {
  const fs::path out = fs::temp_directory_path() / ("tessel_demo_" + std::to_string(::getpid()));
  fs::create_directories(out);
  const std::string tsl = (out / "demo.tsl").string();
  CliResult c = RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + tsl);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("nodes"), std::string::npos) << c.out;

  CliResult a =
      RunTessel(std::string("run ") + TESSEL_DEMO_MODEL + " --output-dir " + (out / "a").string());
  CliResult b = RunTessel("run " + tsl + " --repeat 2 --output-dir " + (out / "b").string());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("output  'logits': float32 1x1000"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("latency min"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("peak activations"), std::string::npos) << b.out;
  // The ONNX and the compiled model give the same bits on the same inputs.
  EXPECT_EQ(ReadAll(out / "a" / "output_0.pb"), ReadAll(out / "b" / "output_0.pb"));
  EXPECT_GT(ReadAll(out / "a" / "output_0.pb").size(), 4000u);
  fs::remove_all(out);
}

TEST(Cli, Help_is_available_on_every_subcommand) {
  for (const char* cmd : {"", "run", "check", "show", "compile", "bench", "conformance"}) {
    CliResult r = RunTessel(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST(Cli, Show_prints_the_graph) {
  CliResult r = RunTessel(std::string("show ") + TESSEL_DEMO_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("graph 'mobilenet_v2_demo' opset 13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("= Conv("), std::string::npos);
  EXPECT_NE(r.out.find("output %logits: float32 1x1000"), std::string::npos);
}

}  // namespace
}  // namespace tessel::testing
