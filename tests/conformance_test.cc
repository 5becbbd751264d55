// `tessel conformance`: the ONNX backend test suite (Debian package
// libonnx-testdata) as the judge of import and of every target (reference,
// cpu, opencl where a device is), and the command's own behaviour on small
// generated test folders.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "onnx/model_builder.h"
#include "onnx/tensor_io.h"
#include "opencl_env.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

// The last line of the command's output: "N passed, N failed, N skipped".
std::string LastLine(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
}

std::string SuitePaths() {
  std::string suites;
  for (const char* s : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    suites += " " + (kTestData / s).string();
  }
  return suites;
}

std::string FaultsOption() {
  return " --suite-faults " +
         (fs::path(TESSEL_SOURCE_DIR) / "tests/conformance/suite_faults.txt").string();
}

// The reference target's report (written once per process): the baseline
// the other targets are compared with.
const fs::path& ReferenceReport() {
  static const fs::path json = [] {
    const fs::path p = fs::temp_directory_path() /
                       ("tessel_conformance_ref_" + std::to_string(::getpid()) + ".json");
    RunTessel("conformance" + SuitePaths() + FaultsOption() + " --target reference --json " +
              p.string());
    return p;
  }();
  return json;
}

class OnnxBackendSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxBackendSuite, No_test_fails_and_the_passed_count_does_not_drop) {
  if (!fs::exists(kTestData)) {
    GTEST_SKIP() << "skipped: " << kTestData
                 << " is absent; scripts/install-deps.sh installs libonnx-testdata";
  }
  const std::string target = GetParam();
  if (target == "opencl" && !OpenClSkipReason().empty()) {
    GTEST_SKIP() << "skipped: " << OpenClSkipReason();
  }
  const fs::path json = fs::temp_directory_path() /
                        ("tessel_conformance_" + target + std::to_string(::getpid()) + ".json");
  const std::string baseline =
      target == "reference" ? "" : " --baseline " + ReferenceReport().string();
  CliResult r = RunTessel("conformance" + SuitePaths() + FaultsOption() + " --target " + target +
                              " --json " + json.string() + baseline,
                          target == "opencl" ? CacheEnv() : "");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << "\n" << r.err;
  const nlohmann::json report = nlohmann::json::parse(ReadAll(json), nullptr, false);
  fs::remove(json);
  ASSERT_FALSE(report.is_discarded()) << "--json did not write valid JSON";
  EXPECT_EQ(report["target"].get<std::string>().rfind(target, 0), 0u) << report["target"];

  const int passed = report["totals"]["passed"];
  const int failed = report["totals"]["failed"];
  const int skipped = report["totals"]["skipped"];
  EXPECT_EQ(LastLine(r.out), std::to_string(passed) + " passed, " + std::to_string(failed) +
                                 " failed, " + std::to_string(skipped) + " skipped");
  EXPECT_EQ(r.exit_code, failed == 0 ? 0 : 1);

  std::string failures;
  for (const auto& t : report["tests"]) {
    if (t["outcome"] != "failed") continue;
    failures += "  " + t["suite"].get<std::string>() + "/" + t["name"].get<std::string>() + ": " +
                t["reason"].get<std::string>() + "\n";
  }
  EXPECT_EQ(failed, 0) << "failed tests:\n" << failures;

  if (target == "opencl") {
    // Fewer ops have OpenCL kernels: every test the reference passes and
    // OpenCL does not is listed, with its reason.
    EXPECT_NE(r.out.find("pass on reference but not here"), std::string::npos) << r.out;
    return;
  }
  if (target == "cpu") {
    EXPECT_NE(r.out.find("\n0 test(s) pass on reference but not here"), std::string::npos) << r.out;
  }
  std::ifstream min_file(fs::path(TESSEL_SOURCE_DIR) / "tests/conformance/expected_min_passed.txt");
  int expected_min = -1;
  ASSERT_TRUE(min_file >> expected_min) << "tests/conformance/expected_min_passed.txt: no number";
  EXPECT_GE(passed, expected_min) << "fewer ONNX backend tests pass than recorded in "
                                     "tests/conformance/expected_min_passed.txt";
  if (passed > expected_min) {
    std::cout << "note: " << passed << " tests pass; raise "
              << "tests/conformance/expected_min_passed.txt from " << expected_min << " to "
              << passed << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, OnnxBackendSuite, ::testing::Values("reference", "cpu", "opencl"),
                         [](const auto& info) { return info.param; });

// Small test folders in the ONNX format, written by the test itself, so the
// command's rules are checked whether or not the suite is installed.
class ConformanceCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_conf_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name()) /
           "node";
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  // DIR/NAME/model.onnx and one data set.
  void AddTest(const std::string& name, const ModelBuilder& b,
               const std::vector<std::pair<std::string, Tensor>>& inputs, const Tensor& output) {
    const fs::path test = dir_ / name;
    const fs::path set = test / "test_data_set_0";
    fs::create_directories(set);
    ASSERT_TRUE(b.Save(test / "model.onnx").ok());
    for (size_t k = 0; k < inputs.size(); ++k) {
      ASSERT_TRUE(onnx_io::WriteTensorFile(set / ("input_" + std::to_string(k) + ".pb"),
                                           inputs[k].second, inputs[k].first)
                      .ok());
    }
    ASSERT_TRUE(onnx_io::WriteTensorFile(set / "output_0.pb", output, "y").ok());
  }

  // y = Reshape(x, shape) with `shape` a graph input: compiles only bound.
  void AddReshapeTest(const std::string& name, const Tensor& expected) {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {2, 3});
    b.Input("shape", DType::kInt64, {2});
    b.Node("Reshape", {"x", "shape"}, {"y"});
    b.Output("y");
    AddTest(name, b,
            {{"x", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})},
             {"shape", Tensor::FromVector<int64_t>({3, 2}, {2})}},
            expected);
  }

  fs::path dir_;
};

TEST_F(ConformanceCommand, Sorts_tests_into_passed_failed_and_skipped) {
  AddReshapeTest("test_reshape_ok", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  AddReshapeTest("test_reshape_wrong_numbers",
                 Tensor::FromVector<float>({1, 2, 3, 4, 5, 7}, {3, 2}));
  AddReshapeTest("test_reshape_wrong_shape", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {6}));
  ModelBuilder unsupported(13);
  unsupported.Input("x", DType::kFloat32, {2});
  unsupported.Node("Frobnicate", {"x"}, {"y"});
  unsupported.Output("y");
  AddTest("test_frobnicate", unsupported, {{"x", Tensor::FromVector<float>({1, 2}, {2})}},
          Tensor::FromVector<float>({1, 2}, {2}));

  const fs::path json = dir_.parent_path() / "report.json";
  CliResult r = RunTessel("conformance " + dir_.string() + " --json " + json.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 2 failed, 1 skipped") << r.out;
  EXPECT_NE(r.out.find("node/test_reshape_wrong_numbers [Reshape]: test_data_set_0 output 'y': "
                       "1 of 6 elements off"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("node/test_reshape_wrong_shape [Reshape]: test_data_set_0 output 'y': "
                       "shape 3x2, expected 6"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal

  const nlohmann::json report = nlohmann::json::parse(ReadAll(json), nullptr, false);
  ASSERT_FALSE(report.is_discarded());
  ASSERT_EQ(report["tests"].size(), 4u);
  const auto& frob = report["tests"][0];
  EXPECT_EQ(frob["name"], "test_frobnicate");
  EXPECT_EQ(frob["outcome"], "skipped");
  EXPECT_NE(frob["reason"].get<std::string>().find("unsupported ops: Frobnicate"),
            std::string::npos);
  const auto& ok = report["tests"][1];
  EXPECT_EQ(ok["name"], "test_reshape_ok");
  EXPECT_EQ(ok["outcome"], "passed");
  EXPECT_EQ(ok["op"], "Reshape");
  EXPECT_EQ(ok["needed_binding"], true);
  EXPECT_EQ(ok["bound_inputs"], nlohmann::json::array({"shape"}));
}

TEST_F(ConformanceCommand, Suite_faults_turn_listed_mismatches_into_cited_skips) {
  AddReshapeTest("test_reshape_ok", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  AddReshapeTest("test_reshape_bad_data", Tensor::FromVector<float>({1, 2, 3, 4, 5, 7}, {3, 2}));
  AddReshapeTest("test_reshape_unlisted", Tensor::FromVector<float>({0, 2, 3, 4, 5, 6}, {3, 2}));
  const fs::path faults = dir_.parent_path() / "faults.txt";
  {
    std::ofstream f(faults);
    f << "# comment\nnode/test_reshape_bad_data\tthe expected output is wrong\n"
      << "node/test_reshape_ok\tlisted but fine\n";
  }
  CliResult r = RunTessel("conformance " + dir_.string() + " --suite-faults " + faults.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the unlisted mismatch still fails
  EXPECT_EQ(LastLine(r.out), "1 passed, 1 failed, 1 skipped") << r.out;
  EXPECT_NE(r.err.find("node/test_reshape_ok is listed in --suite-faults but passed"),
            std::string::npos)
      << r.err;

  {
    std::ofstream f(faults);
    f << "no tab here\n";
  }
  CliResult bad = RunTessel("conformance " + dir_.string() + " --suite-faults " + faults.string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("line 1: expected SUITE/NAME<TAB>reason"), std::string::npos) << bad.err;
}

TEST_F(ConformanceCommand, Filter_selects_tests_by_suite_and_name) {
  AddReshapeTest("test_reshape_ok", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  AddReshapeTest("test_reshape_wrong", Tensor::FromVector<float>({0, 0, 0, 0, 0, 0}, {3, 2}));
  CliResult r = RunTessel("conformance " + dir_.string() + " --filter 'node/.*_ok$'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed, 0 skipped") << r.out;
}

TEST_F(ConformanceCommand, Conformance_rejects_missing_paths_bad_filters_and_no_tests) {
  CliResult missing = RunTessel("conformance " + (dir_ / "nope").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope' does not exist"), std::string::npos) << missing.err;

  AddReshapeTest("test_reshape_ok", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  CliResult bad_regex = RunTessel("conformance " + dir_.string() + " --filter '('");
  EXPECT_EQ(bad_regex.exit_code, 2);
  EXPECT_NE(bad_regex.err.find("not a valid regular expression"), std::string::npos)
      << bad_regex.err;

  CliResult none = RunTessel("conformance " + dir_.string() + " --filter nothing_matches");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no test folder"), std::string::npos) << none.err;
}

TEST_F(ConformanceCommand, Bind_fixes_a_shape_input_for_check_and_run) {
  AddReshapeTest("test_reshape_ok", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  const fs::path test = dir_ / "test_reshape_ok";
  const std::string bind = " --bind shape=" + (test / "test_data_set_0" / "input_1.pb").string();

  CliResult unbound = RunTessel("check " + test.string());
  EXPECT_EQ(unbound.exit_code, 2);
  EXPECT_NE(unbound.err.find("must be known at compile time"), std::string::npos) << unbound.err;

  CliResult check = RunTessel("check " + test.string() + bind);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("all outputs match"), std::string::npos) << check.out;

  CliResult run = RunTessel("run " + (test / "model.onnx").string() + bind);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("output  'y': float32 3x2"), std::string::npos) << run.out;

  CliResult wrong = RunTessel("run " + (test / "model.onnx").string() +
                              " --bind x=" + (test / "test_data_set_0" / "input_1.pb").string());
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("--bind x: the value has dtype int64; the model declares float32"),
            std::string::npos)
      << wrong.err;
}

}  // namespace
}  // namespace tessel::testing
