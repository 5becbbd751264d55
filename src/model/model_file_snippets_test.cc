// The compiled-model file with Subgraph nodes: bodies round-trip (recursively
// encoded), fused and unfused compilations agree, and an inconsistent body
// is rejected when the file is loaded, naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "compiler/compile.h"
#include "model/model_file.h"
#include "onnx/model_builder.h"
#include "ops/subgraph.h"
#include "targets/cpu/executor.h"
#include "targets/testing.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

class ModelFileSnippets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessel_model_file_snippets_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // h = x @ w + b; y = GeLU(h) (the erf form); z = Sigmoid(y) * y.
    ModelBuilder m(13);
    m.Input("x", DType::kFloat32, {4, 8});
    m.Initializer("w", Tensor::FromVector<float>(std::vector<float>(64, 0.125f), {8, 8}));
    m.Initializer("b", Tensor::FromVector<float>({0, 1, 2, 3, -1, -2, -3, 0.5f}, {8}));
    m.Initializer("sqrt2", Tensor::FromVector<float>({1.41421356f}, {}));
    m.Initializer("one", Tensor::FromVector<float>({1.0f}, {}));
    m.Initializer("half", Tensor::FromVector<float>({0.5f}, {}));
    m.Node("MatMul", {"x", "w"}, {"xw"});
    m.Node("Add", {"xw", "b"}, {"h"});
    m.Node("Div", {"h", "sqrt2"}, {"s"});
    m.Node("Erf", {"s"}, {"e"});
    m.Node("Add", {"e", "one"}, {"e1"});
    m.Node("Mul", {"h", "e1"}, {"he"});
    m.Node("Mul", {"he", "half"}, {"y"});
    m.Node("MatMul", {"y", "w"}, {"y2"});
    m.Node("Sigmoid", {"y2"}, {"g"});
    m.Node("Mul", {"g", "y2"}, {"z"});
    m.Output("z");
    path_ = dir_ / "m.onnx";
    ASSERT_TRUE(m.Save(path_).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<float> Run(const ir::Graph& g) {
    std::vector<float> x(32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f - 4;
    cpu::CpuExecutor exec(g);
    auto out = exec.Run({Tensor::FromVector<float>(x, {4, 8})});
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? (*out)[0].ToFloatVector() : std::vector<float>{};
  }

  fs::path dir_, path_;
};

TEST_F(ModelFileSnippets, Bodies_round_trip_and_fusion_changes_no_result_beyond_rounding) {
  auto fused = Compile(path_, targets::testing::Cpu());
  ASSERT_TRUE(fused.ok()) << fused.status().message();
  int subgraphs = 0;
  for (const auto& n : fused->graph->nodes()) subgraphs += ops::IsSubgraph(*n) ? 1 : 0;
  EXPECT_EQ(subgraphs, 2);

  const std::string bytes = SerializeCompiledModel(*fused);
  auto loaded = DeserializeCompiledModel(bytes, "m.tsl");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(SerializeCompiledModel(*loaded), bytes);
  EXPECT_EQ(Run(*loaded->graph), Run(*fused->graph));

  CompilerOptions unfused_options;
  unfused_options.fusion = false;
  auto unfused = Compile(path_, targets::testing::Cpu(), unfused_options);
  ASSERT_TRUE(unfused.ok());
  const auto a = Run(*fused->graph);
  const auto b = Run(*unfused->graph);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f * (1 + std::fabs(b[i])));
}

TEST_F(ModelFileSnippets, Load_rejects_an_inconsistent_body_naming_the_node) {
  auto model = Compile(path_, targets::testing::Cpu());
  ASSERT_TRUE(model.ok());
  ir::Node* subgraph = nullptr;
  for (const auto& n : model->graph->nodes()) {
    if (ops::IsSubgraph(*n)) subgraph = n.get();
  }
  ASSERT_NE(subgraph, nullptr);

  // A body input of another shape than the node's input.
  ir::Value* in = subgraph->body->inputs()[0];
  const Shape saved = in->shape;
  in->shape = {3, 3};
  auto r = DeserializeCompiledModel(SerializeCompiledModel(*model), "m.tsl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("inconsistent"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(subgraph->name), std::string::npos) << r.status().message();
  in->shape = saved;

  // A body op this tessel does not know.
  subgraph->body->nodes()[0]->op_type = "NoSuchOp";
  r = DeserializeCompiledModel(SerializeCompiledModel(*model), "m.tsl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("NoSuchOp"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace tessel
