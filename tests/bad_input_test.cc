// Bad input through the command line: every case gets exactly one line on
// stderr that names the culprit, exit code 2, no crash, and no output file
// left behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "core/file_io.h"
#include "onnx/model_builder.h"
#include "onnx/tensor_io.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_bad_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // A valid model: y = Relu(x + w), x: float32 2x3.
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {2, 3});
    b.Initializer("w", Tensor::FromVector<float>({1, 2, 3}, {3}));
    b.Node("Add", {"x", "w"}, {"s"}, "add");
    b.Node("Relu", {"s"}, {"y"}, "relu");
    b.Output("y");
    ASSERT_TRUE(b.Save(path("good.onnx")).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void Write(const std::string& name, const std::string& bytes) {
    ASSERT_TRUE(WriteFileAtomically(dir_ / name, bytes).ok());
  }

  fs::path dir_;
};

TEST_F(BadInput, run_rejects_a_garbage_model_file) {
  Write("garbage.onnx", std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffjunk", 15));
  ExpectRejected(RunTessel("run " + path("garbage.onnx")),
                 {"garbage.onnx", "not a valid ONNX model"});
}

TEST_F(BadInput, run_rejects_a_truncated_model_file) {
  const std::string bytes = ReadAll(path("good.onnx"));
  Write("truncated.onnx", bytes.substr(0, bytes.size() - 7));
  ExpectRejected(RunTessel("run " + path("truncated.onnx")), {"truncated.onnx"});
}

TEST_F(BadInput, run_rejects_a_missing_model_file) {
  ExpectRejected(RunTessel("run " + path("nope.onnx")), {"nope.onnx", "no such file"});
}

TEST_F(BadInput, run_rejects_an_unknown_op_naming_it_and_its_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2});
  b.Node("Frobnicate", {"x"}, {"y"}, "frob_1");
  b.Output("y");
  ASSERT_TRUE(b.Save(path("unknown.onnx")).ok());
  ExpectRejected(RunTessel("run " + path("unknown.onnx")),
                 {"unsupported ops", "Frobnicate", "frob_1"});
}

TEST_F(BadInput, compile_rejects_an_out_of_range_attribute_and_writes_nothing) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3});
  ModelBuilder::SetAttr(b.Node("Concat", {"x", "x"}, {"y"}, "cat_7"), "axis", int64_t{3});
  b.Output("y");
  ASSERT_TRUE(b.Save(path("axis.onnx")).ok());
  ExpectRejected(RunTessel("compile " + path("axis.onnx") + " -o " + path("axis.tsl")),
                 {"Concat 'cat_7'", "3"});
  EXPECT_FALSE(fs::exists(path("axis.tsl")));
}

TEST_F(BadInput, run_rejects_a_missing_input_file) {
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --input x=" + path("nope.pb")),
                 {"nope.pb"});
}

TEST_F(BadInput, run_rejects_an_input_name_the_model_does_not_have) {
  ASSERT_TRUE(onnx_io::WriteTensorFile(dir_ / "x.pb", Tensor(DType::kFloat32, {2, 3}), "x").ok());
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --input z=" + path("x.pb")), {"'z'"});
}

TEST_F(BadInput, run_rejects_a_wrong_input_shape_and_writes_no_output) {
  ASSERT_TRUE(onnx_io::WriteTensorFile(dir_ / "x.pb", Tensor(DType::kFloat32, {3, 2}), "x").ok());
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --input x=" + path("x.pb") +
                           " --output-dir " + path("out")),
                 {"input 'x' has shape 3x2", "2x3"});
  EXPECT_FALSE(fs::exists(dir_ / "out" / "output_0.pb"));
}

TEST_F(BadInput, run_rejects_a_wrong_input_dtype) {
  ASSERT_TRUE(onnx_io::WriteTensorFile(dir_ / "x.pb", Tensor(DType::kInt32, {2, 3}), "x").ok());
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --input x=" + path("x.pb")),
                 {"input 'x' has dtype int32", "float32"});
}

TEST_F(BadInput, run_rejects_a_corrupt_input_file) {
  Write("x.pb", "\x0a\x05\x01garbage");
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --input x=" + path("x.pb")), {"x.pb"});
}

TEST_F(BadInput, run_rejects_a_corrupt_compiled_model) {
  CliResult c = RunTessel("compile " + path("good.onnx") + " -o " + path("good.tsl"));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::string bytes = ReadAll(path("good.tsl"));
  bytes[bytes.size() - 3] ^= 0x40;
  Write("corrupt.tsl", bytes);
  ExpectRejected(RunTessel("run " + path("corrupt.tsl")), {"corrupt.tsl", "checksum mismatch"});
  Write("short.tsl", bytes.substr(0, 40));
  ExpectRejected(RunTessel("run " + path("short.tsl")), {"short.tsl", "truncated"});
}

TEST_F(BadInput, run_rejects_symbolic_dims_without_input_shape) {
  ModelBuilder b(13);
  b.Input("tokens", DType::kFloat32, {-1, 4});
  b.Node("Relu", {"tokens"}, {"y"});
  b.Output("y");
  ASSERT_TRUE(b.Save(path("sym.onnx")).ok());
  ExpectRejected(RunTessel("run " + path("sym.onnx")), {"'tokens'", "--input-shape"});
  CliResult ok = RunTessel("run " + path("sym.onnx") + " --input-shape tokens=3,4");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("float32 3x4"), std::string::npos) << ok.out;
}

TEST_F(BadInput, cli_rejects_unknown_options_and_bad_values) {
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --frobnicate"), {"--frobnicate"});
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --repeat 0"), {"--repeat"});
  ExpectRejected(RunTessel("run " + path("good.onnx") + " --input-shape x"), {"--input-shape"});
  ExpectRejected(RunTessel("frobnicate"), {"frobnicate"});
}

TEST_F(BadInput, check_rejects_a_directory_without_data_sets) {
  ExpectRejected(RunTessel("check " + dir_.string()), {"test_data_set"});
  ExpectRejected(RunTessel("check " + path("nope")), {"nope"});
}

TEST_F(BadInput, check_reports_a_numeric_mismatch_with_exit_1) {
  fs::create_directories(dir_ / "case" / "test_data_set_0");
  fs::copy_file(path("good.onnx"), dir_ / "case" / "model.onnx");
  ASSERT_TRUE(onnx_io::WriteTensorFile(dir_ / "case/test_data_set_0/input_0.pb",
                                       Tensor::FromVector<float>({0, 0, 0, -9, 0, 0}, {2, 3}), "x")
                  .ok());
  // Correct would be {1,2,3,0,2,3}; one element is off.
  ASSERT_TRUE(onnx_io::WriteTensorFile(dir_ / "case/test_data_set_0/output_0.pb",
                                       Tensor::FromVector<float>({1, 2, 3, 0, 2, 3.5f}, {2, 3}),
                                       "y")
                  .ok());
  CliResult r = RunTessel("check " + (dir_ / "case").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("max abs err 0.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

TEST_F(BadInput, run_check_and_bench_reject_a_bad_thread_count) {
  for (const std::string& cmd :
       {"run " + path("good.onnx"), "bench " + path("good.onnx"), "check " + dir_.string()}) {
    ExpectRejected(RunTessel(cmd + " --threads 0"), {"--threads"});
    ExpectRejected(RunTessel(cmd + " --threads two"), {"--threads"});
  }
}

TEST_F(BadInput, bench_json_reports_the_thread_count_and_memory) {
  CliResult r = RunTessel("bench " + path("good.onnx") + " --threads 1 --repeat 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
  EXPECT_GE(j["rss_delta_bytes"].get<int64_t>(), 0);
  EXPECT_LE(j["latency_ms"]["min"].get<double>(), j["latency_ms"]["median"].get<double>());
  EXPECT_LE(j["latency_ms"]["median"].get<double>(), j["latency_ms"]["p90"].get<double>());
}

TEST_F(BadInput, run_and_bench_profile_the_cpu_per_op_and_kernel) {
  for (const std::string& cmd :
       {"run " + path("good.onnx") + " --repeat 2", "bench " + path("good.onnx") + " --repeat 2"}) {
    CliResult r = RunTessel(cmd + " --profile");
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find("profile  per run, by op and kernel"), std::string::npos) << cmd << r.out;
    // Add and Relu are fused into one snippet: the row names its kernel and
    // the path it runs on ("snippet avx512", "snippet interpreter"), and a
    // last line on the slow paths.
    const size_t row = r.out.find("Subgraph  snippet ");
    ASSERT_NE(row, std::string::npos) << cmd << r.out;
    EXPECT_NE(r.out.find(" (1 node)", row), std::string::npos) << cmd << r.out;
    EXPECT_NE(r.out.find("slow paths  none"), std::string::npos) << cmd << r.out;
  }
}

}  // namespace
}  // namespace tessel::testing
