// The OpenCL target decides at compile time, without a device, which nodes
// it runs: a model with a node it has no kernel for is rejected by
// `tessel compile --target opencl`, naming the node and why, and no .tsl is
// written. Compiling opens no device, so these tests run wherever tessel
// was built with OpenCL, device or not.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_runner.h"
#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "targets/registry.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

class OpenClSelectKernels : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef TESSEL_WITH_OPENCL
    GTEST_SKIP() << "built without OpenCL (TESSEL_WITH_OPENCL=OFF)";
#endif
    dir_ = fs::temp_directory_path() /
           ("tessel_opencl_select_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Compiles `onnx` for opencl without a device, as `tessel compile` does.
  StatusOr<CompiledModel> CompileForOpenCl(const std::string& onnx) {
    TESSEL_ASSIGN_OR_RETURN(auto target,
                            targets::MakeTarget({"opencl", {}}, {.compile_only = true}));
    return Compile(onnx, *target);
  }

  fs::path dir_;
};

// y = Det(Relu(x)): the reference runs Det, the OpenCL target has no
// kernel for it.
void SaveDetModel(const std::string& file) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3, 3});
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.Node("Det", {"r"}, {"y"}, "det_1");
  b.Output("y");
  ASSERT_TRUE(b.Save(file).ok());
}

TEST_F(OpenClSelectKernels, compile_rejects_an_op_without_an_opencl_kernel) {
  SaveDetModel(path("det.onnx"));
  StatusOr<CompiledModel> m = CompileForOpenCl(path("det.onnx"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported) << m.status().message();
  EXPECT_NE(m.status().message().find("Det 'det_1'"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("OpenCL target has no kernel"), std::string::npos)
      << m.status().message();

  const CliResult r =
      RunTessel("compile --target opencl " + path("det.onnx") + " -o " + path("det.tsl"));
  ExpectRejected(r, {"Det 'det_1'", "OpenCL target has no kernel"});
  EXPECT_FALSE(fs::exists(path("det.tsl")));
}

// MaxPool over four spatial axes is a form of the op the OpenCL kernels do
// not take (they pool signals, images and volumes): the shape check, not
// the op table, says no.
TEST_F(OpenClSelectKernels, compile_rejects_maxpool_of_four_spatial_axes) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 2, 4, 4, 4, 4});
  auto& n = b.Node("MaxPool", {"x"}, {"y"}, "pool_1");
  ModelBuilder::SetAttr(n, "kernel_shape", std::vector<int64_t>{2, 2, 2, 2});
  b.Output("y");
  ASSERT_TRUE(b.Save(path("pool.onnx")).ok());

  StatusOr<CompiledModel> m = CompileForOpenCl(path("pool.onnx"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("MaxPool 'pool_1'"), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("rank 3 to 5"), std::string::npos) << m.status().message();
  ExpectRejected(
      RunTessel("compile --target opencl " + path("pool.onnx") + " -o " + path("pool.tsl")),
      {"MaxPool 'pool_1'", "rank 3 to 5"});
  EXPECT_FALSE(fs::exists(path("pool.tsl")));
}

// What the OpenCL target runs compiles without a device, and the CLI writes
// its .tsl.
TEST_F(OpenClSelectKernels, compile_accepts_what_opencl_runs_without_a_device) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3});
  b.Initializer("w", Tensor::FromVector<float>({1, 2, 3}, {3}));
  b.Node("Add", {"x", "w"}, {"s"}, "add");
  b.Node("Relu", {"s"}, {"r"}, "relu");
  b.Node("Softmax", {"r"}, {"y"}, "softmax");
  b.Output("y");
  ASSERT_TRUE(b.Save(path("good.onnx")).ok());
  StatusOr<CompiledModel> m = CompileForOpenCl(path("good.onnx"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->target.name, "opencl");
  const CliResult r =
      RunTessel("compile --target opencl " + path("good.onnx") + " -o " + path("good.tsl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("good.tsl")));
}

}  // namespace
}  // namespace tessel::testing
