// The OpenCL target end to end: `tessel check --target opencl` on every
// shared model (buffers and textures), and the CLI's OpenCL options. Without an OpenCL device, or
// in a sanitizer build (PoCL JIT-compiles with LLVM in process), the device tests skip with the
// reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "opencl_env.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class OpenClSharedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenClSharedModels, Check_passes_on_opencl) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  const fs::path dir = fs::path(TESSEL_SHARED_DIR) / "models" / GetParam();
  if (!fs::exists(dir))
    GTEST_SKIP() << "skipped: " << dir << " is absent (../shared not beside the checkout)";
  CliResult r = RunTessel("check " + dir.string() + " --target opencl", CacheEnv());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("all outputs match"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target opencl:"), std::string::npos) << r.out;
}

// The same with activations and weights in 2D images where image kernels
// run (--storage texture); the compiled model says which nodes do.
TEST_P(OpenClSharedModels, Check_passes_on_opencl_with_textures) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  const fs::path dir = fs::path(TESSEL_SHARED_DIR) / "models" / GetParam();
  if (!fs::exists(dir))
    GTEST_SKIP() << "skipped: " << dir << " is absent (../shared not beside the checkout)";
  CliResult r =
      RunTessel("check " + dir.string() + " --target opencl --storage texture", CacheEnv());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("all outputs match"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Models, OpenClSharedModels,
                         ::testing::Values("mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0",
                                           "transformer_encoder"));

TEST(OpenClCli, Run_profile_lists_kernels_sorted) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  CliResult r =
      RunTessel(std::string("run ") + TESSEL_DEMO_MODEL + " --target opencl --profile", CacheEnv());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const size_t at = r.out.find("profile (OpenCL events");
  ASSERT_NE(at, std::string::npos) << r.out;
  // Each kernel's achieved rates: the products' GFLOP/s.
  EXPECT_NE(r.out.find("GFLOP/s", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f32_gemm_", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f32_conv2d_depthwise_x4", at), std::string::npos) << r.out;
}

TEST(OpenClCli, Bench_profile_json_gives_each_kernel_its_rates) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  CliResult r = RunTessel(std::string("bench ") + TESSEL_DEMO_MODEL +
                              " --target opencl --profile --json --repeat 3 --warmup 1",
                          CacheEnv());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << r.out;
  ASSERT_TRUE(j.contains("profile")) << r.out;
  bool product = false;
  double previous = 1e300;
  for (const nlohmann::json& row : j["profile"]) {
    EXPECT_GE(row["launches"].get<int>(), row["nodes"].get<int>()) << row.dump();
    EXPECT_LE(row["ms"].get<double>(), previous) << "slowest first";
    previous = row["ms"].get<double>();
    if (row["kernel"].get<std::string>().rfind("f32_gemm_", 0) == 0) {
      product = true;
      EXPECT_GT(row["gflop_per_s"].get<double>(), 0.0) << row.dump();
    }
  }
  EXPECT_TRUE(product) << r.out;
}

TEST(OpenClCli, Info_lists_devices_or_says_none) {
#ifdef TESSEL_SANITIZED_BUILD
  GTEST_SKIP() << "skipped: sanitizer build: listing devices loads PoCL and its LLVM, which leak "
                  "under LeakSanitizer";
#endif
  CliResult r = RunTessel("info");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const bool listed = r.out.find("opencl:0") != std::string::npos;
  const bool none = r.out.find("no OpenCL platform") != std::string::npos ||
                    r.out.find("built without OpenCL") != std::string::npos;
  EXPECT_TRUE(listed || none) << r.out;
}

TEST(OpenClCli, Run_rejects_unknown_device) {
#ifdef TESSEL_SANITIZED_BUILD
  GTEST_SKIP() << "skipped: sanitizer build: listing devices loads PoCL and its LLVM, which leak "
                  "under LeakSanitizer";
#endif
  CliResult r = RunTessel(std::string("run ") + TESSEL_DEMO_MODEL +
                          " --target opencl --device no-such-gpu-xyz");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("tessel: error:"), std::string::npos) << r.err;
}

TEST(OpenClCli, Run_rejects_unknown_target) {
  CliResult r = RunTessel(std::string("run ") + TESSEL_DEMO_MODEL + " --target vulkan");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--target"), std::string::npos) << r.err;
}

TEST(OpenClCli, Device_without_opencl_target_rejects) {
  CliResult r = RunTessel(std::string("run ") + TESSEL_DEMO_MODEL + " --device opencl:0");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--target opencl"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tessel::testing
