#include "onnx/importer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "core/file_io.h"
#include "onnx/model_builder.h"
#include "onnx/tensor_io.h"

namespace tessel::onnx_io {
namespace {

namespace fs = std::filesystem;

class ImporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_importer_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  StatusOr<std::unique_ptr<ir::Graph>> SaveAndImport(const ModelBuilder& b,
                                                     const ImportOptions& opts = {}) {
    const fs::path p = dir_ / "model.onnx";
    Status s = b.Save(p);
    if (!s.ok()) return s;
    return ImportModel(p, opts);
  }

  fs::path dir_;
};

Tensor Floats(std::vector<float> v, Shape s) { return Tensor::FromVector<float>(v, s); }

TEST_F(ImporterTest, Imports_inputs_initializers_nodes_and_outputs) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 2});
  b.Initializer("w", Floats({1, 2}, {1, 2}));
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  b.Output("y");
  auto g = SaveAndImport(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const ir::Graph& graph = **g;
  EXPECT_EQ(graph.opset_version(), 13);
  ASSERT_EQ(graph.inputs().size(), 1u);
  EXPECT_EQ(graph.inputs()[0]->shape, (Shape{1, 2}));
  ASSERT_EQ(graph.nodes().size(), 1u);
  EXPECT_TRUE(graph.nodes()[0]->inputs[1]->is_constant());
  EXPECT_EQ(graph.outputs()[0]->name, "y");
}

TEST_F(ImporterTest, Decodes_every_initializer_encoding_alike) {
  const Tensor f = Floats({1.5f, -2.0f, 3.25f}, {3});
  const Tensor i64 = Tensor::FromVector<int64_t>({-7, 0, 1LL << 40}, {3});
  const Tensor i8 = Tensor::FromVector<int8_t>({-128, 0, 127}, {3});
  Tensor h(DType::kFloat16, {2});
  static_cast<uint16_t*>(h.raw_data())[0] = FloatToHalf(0.5f);
  static_cast<uint16_t*>(h.raw_data())[1] = FloatToHalf(-4.0f);
  const Tensor d = Tensor::FromVector<double>({1e-300, 2.0}, {2});
  const Tensor u64 = Tensor::FromVector<uint64_t>({1ULL << 63, 5}, {2});
  for (TensorEncoding enc :
       {TensorEncoding::kRaw, TensorEncoding::kTyped, TensorEncoding::kExternal}) {
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {3});
    int k = 0;
    for (const Tensor* t : std::initializer_list<const Tensor*>{&f, &i64, &i8, &h, &d, &u64})
      b.Initializer("c" + std::to_string(k++), *t, enc);
    b.Node("Identity", {"x"}, {"y"});
    b.Output("y");
    auto g = SaveAndImport(b);
    ASSERT_TRUE(g.ok()) << g.status().message();
    k = 0;
    for (const Tensor* t : std::initializer_list<const Tensor*>{&f, &i64, &i8, &h, &d, &u64}) {
      const ir::Value* v = (*g)->FindValue("c" + std::to_string(k++));
      ASSERT_NE(v, nullptr);
      ASSERT_EQ(v->constant.dtype(), t->dtype());
      ASSERT_EQ(v->constant.shape(), t->shape());
      EXPECT_EQ(std::memcmp(v->constant.raw_data(), t->raw_data(), t->size_bytes()), 0)
          << "encoding " << static_cast<int>(enc) << " tensor " << k - 1;
    }
  }
}

TEST_F(ImporterTest, Uses_input_shape_for_symbolic_dims) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {-1, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  ImportOptions opts;
  opts.input_shapes["x"] = {4, 3};
  auto g = SaveAndImport(b, opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->inputs()[0]->shape, (Shape{4, 3}));
}

TEST_F(ImporterTest, Import_rejects_symbolic_dims_without_input_shape) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {-1, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  auto g = SaveAndImport(b);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("graph input 'x' has symbolic dimension 'N0'"),
            std::string::npos)
      << g.status().message();
  EXPECT_NE(g.status().message().find("--input-shape x="), std::string::npos);
}

TEST_F(ImporterTest, Import_rejects_input_shape_that_contradicts_the_model) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {-1, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  ImportOptions opts;
  opts.input_shapes["x"] = {4, 5};
  auto g = SaveAndImport(b, opts);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("does not match"), std::string::npos) << g.status().message();
}

TEST_F(ImporterTest, Binds_constant_inputs_as_constants) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3});
  b.Input("shape", DType::kInt64, {-1});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  ImportOptions opts;
  opts.constant_inputs["shape"] = Tensor::FromVector<int64_t>({3, 2}, {2});
  auto g = SaveAndImport(b, opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name, "x");
  const ir::Value* shape = (*g)->FindValue("shape");
  ASSERT_NE(shape, nullptr);
  ASSERT_TRUE(shape->is_constant());
  EXPECT_EQ(shape->constant.shape(), (Shape{2}));
  EXPECT_EQ(shape->constant.GetAsDouble(1), 2.0);
}

TEST_F(ImporterTest, Import_rejects_bindings_that_do_not_fit) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {2, 3});
  b.Input("shape", DType::kInt64, {2});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  struct Case {
    std::string name;
    Tensor value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {.name = "shape",
       .value = Tensor::FromVector<int32_t>({3, 2}, {2}),
       .message = "--bind shape: the value has dtype int32; the model declares int64"},
      {.name = "shape",
       .value = Tensor::FromVector<int64_t>({6}, {1}),
       .message = "--bind shape: the value has shape 1; the model declares 2"},
      {.name = "nope",
       .value = Tensor::FromVector<int64_t>({6}, {1}),
       .message = "--bind names 'nope', which is not a graph input (inputs: 'x', 'shape')"},
  };
  for (const Case& c : cases) {
    ImportOptions opts;
    opts.constant_inputs[c.name] = c.value;
    auto g = SaveAndImport(b, opts);
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << g.status().message();
    EXPECT_NE(g.status().message().find(c.message), std::string::npos) << g.status().message();
  }
}

TEST_F(ImporterTest, Reads_node_op_types_without_importing) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Frobnicate", {"a"}, {"y"});
  b.Output("y");
  ASSERT_TRUE(b.Save(dir_ / "model.onnx").ok());
  auto ops = ReadNodeOpTypes(dir_ / "model.onnx");
  ASSERT_TRUE(ops.ok()) << ops.status().message();
  EXPECT_EQ(*ops, (std::vector<std::string>{"Relu", "Frobnicate"}));
}

TEST_F(ImporterTest, Import_rejects_unsupported_ops_listing_all_of_them) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3});
  b.Node("Relu", {"x"}, {"a"}, "ok");
  b.Node("Loop2", {"a"}, {"b"}, "first").set_domain("com.example");
  b.Node("Frobnicate", {"b"}, {"c"}, "second");
  b.Node("Frobnicate", {"c"}, {"d"}, "third");
  b.Output("d");
  b.proto().add_opset_import()->set_domain("com.example");
  b.proto().mutable_opset_import(1)->set_version(1);
  auto g = SaveAndImport(b);
  ASSERT_FALSE(g.ok());
  const std::string& m = g.status().message();
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(m.find("com.example.Loop2 (node 'first')"), std::string::npos) << m;
  EXPECT_NE(m.find("Frobnicate (nodes 'second', 'third')"), std::string::npos) << m;
}

TEST_F(ImporterTest, Import_rejects_garbage_and_truncated_files) {
  const fs::path garbage = dir_ / "garbage.onnx";
  ASSERT_TRUE(WriteFileAtomically(garbage, std::string("\xff\xff\xff\xff not a model", 17)).ok());
  auto g = ImportModel(garbage);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("not a valid ONNX model"), std::string::npos)
      << g.status().message();

  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1000});
  b.Initializer("w", Tensor(DType::kFloat32, {1000}));
  b.Node("Add", {"x", "w"}, {"y"});
  b.Output("y");
  std::string bytes = b.proto().SerializeAsString();
  const fs::path truncated = dir_ / "truncated.onnx";
  ASSERT_TRUE(WriteFileAtomically(truncated, bytes.substr(0, bytes.size() / 2)).ok());
  g = ImportModel(truncated);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss) << g.status().message();
}

TEST_F(ImporterTest, Import_rejects_missing_file_and_unsupported_opset) {
  auto g = ImportModel(dir_ / "nope.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("no such file"), std::string::npos);

  ModelBuilder b(29, 14);
  b.Input("x", DType::kFloat32, {3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  g = SaveAndImport(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(g.status().message().find("uses opset 29 of the default domain; supported: 1 to 28"),
            std::string::npos)
      << g.status().message();
}

// What today's exporters write: IR version 11 (and beyond), opset 21, past
// what Debian's libonnx checker judges; tessel validates it itself.
TEST_F(ImporterTest, Imports_ir_version_11_at_opset_21) {
  for (int ir : {10, 11, 14}) {
    ModelBuilder b(21, ir);
    b.Input("x", DType::kFloat32, {2, 3});
    b.Initializer("axes", Tensor::FromVector<int64_t>({1}, {1}));
    b.Node("ReduceMean", {"x", "axes"}, {"m"});  // axes as an input: opset 18 on
    b.Node("Sub", {"x", "m"}, {"y"});
    b.Output("y");
    auto g = SaveAndImport(b);
    ASSERT_TRUE(g.ok()) << "IR " << ir << ": " << g.status().message();
    EXPECT_EQ((*g)->opset_version(), 21);
  }
}

// tessel's own validation, for models the libonnx checker cannot judge.
TEST_F(ImporterTest, Validation_rejects_bad_nodes_of_new_models_naming_them) {
  struct Case {
    const char* what;
    std::function<void(ModelBuilder&)> build;
    const char* message;
    int opset = 21;
  };
  const std::vector<Case> cases = {
      {"unknown attribute",
       [](ModelBuilder& b) {
         ModelBuilder::SetAttr(b.Node("Relu", {"x"}, {"y"}, "r"), "alpha", 1.0f);
       },
       "Relu 'r' has attribute 'alpha', which Relu-14 does not define"},
      {"attribute of the wrong type",
       [](ModelBuilder& b) {
         ModelBuilder::SetAttr(b.Node("Softmax", {"x"}, {"y"}, "s"), "axis", 1.0f);
       },
       "Softmax 's' attribute 'axis' is FLOAT; Softmax-13 takes INT"},
      {"missing required attribute", [](ModelBuilder& b) { b.Node("Cast", {"x"}, {"y"}, "c"); },
       "Cast 'c' lacks attribute 'to', which Cast-21 requires"},
      {"too many inputs",
       [](ModelBuilder& b) {
         b.Node("Relu", {"x", "x"}, {"y"}, "r");
       },
       "Relu 'r' has 2 inputs; Relu-14 takes 1"},
      {"op newer than the opset", [](ModelBuilder& b) { b.Node("Mish", {"x"}, {"y"}, "m"); },
       "Mish 'm': Mish does not exist at opset 17; it was added at opset 18", 17},
      {"undefined input", [](ModelBuilder& b) { b.Node("Relu", {"nowhere"}, {"y"}, "r"); },
       "Relu 'r' reads 'nowhere', which no initializer, graph input or node defines"},
  };
  for (const Case& c : cases) {
    ModelBuilder b(c.opset, 10);
    b.Input("x", DType::kFloat32, {2, 3});
    c.build(b);
    b.Output("y");
    auto g = SaveAndImport(b);
    ASSERT_FALSE(g.ok()) << c.what;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(g.status().message().find(c.message), std::string::npos)
        << c.what << ": " << g.status().message();
  }
}

// A version of an op newer than tessel implements is unsupported, named,
// unless it only added element types (Relu-14 at opset 28 runs).
TEST_F(ImporterTest, Import_rejects_op_versions_newer_than_implemented) {
  ModelBuilder b(20, 10);
  b.Input("x", DType::kFloat32, {1, 4, 2});
  b.Node("DFT", {"x"}, {"y"}, "dft");
  b.Output("y");
  auto g = SaveAndImport(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(g.status().message().find("DFT at opset 20 (version 20 changed it; tessel implements "
                                      "version 17) (node 'dft')"),
            std::string::npos)
      << g.status().message();

  ModelBuilder relu(28, 14);
  relu.Input("x", DType::kFloat32, {3});
  relu.Node("Relu", {"x"}, {"y"});
  relu.Output("y");
  auto ok = SaveAndImport(relu);
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

TEST_F(ImporterTest, Imports_opset_1_models) {
  ModelBuilder b(1, 3);
  b.Input("x", DType::kFloat32, {2, 3});
  b.Input("y", DType::kFloat32, {3});
  ModelBuilder::SetAttr(b.Node("Add", {"x", "y"}, {"z"}, "add"), "broadcast", int64_t{1});
  b.Output("z");
  auto g = SaveAndImport(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->opset_version(), 1);
}

TEST_F(ImporterTest, Import_rejects_old_forms_tessel_does_not_implement) {
  ModelBuilder b(1, 3);
  b.Input("x", DType::kFloat32, {1, 1, 2, 2});
  auto& pad = b.Node("Pad", {"x"}, {"p"}, "pad");
  ModelBuilder::SetAttr(pad, "paddings", std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1});
  auto& up = b.Node("Upsample", {"p"}, {"u"}, "up");
  ModelBuilder::SetAttr(up, "height_scale", 2.0f);
  ModelBuilder::SetAttr(up, "width_scale", 2.0f);
  b.Output("u");
  auto g = SaveAndImport(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(g.status().message(),
            "unsupported ops: Pad before opset 2 (attribute 'paddings') (node 'pad'); Upsample "
            "before opset 7 (attributes 'height_scale' and 'width_scale') (node 'up')");
}

TEST_F(ImporterTest, Import_rejects_a_model_that_fails_the_checker) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3});
  b.Node("Relu", {"x"}, {"y"});
  b.Node("Relu", {"x"}, {"y"});  // y defined twice
  b.Output("y");
  auto g = SaveAndImport(b);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("ONNX checker"), std::string::npos) << g.status().message();
}

TEST(TensorFile, Round_trips_and_rejects_corrupt_data) {
  const fs::path p =
      fs::temp_directory_path() / ("tessel_tensor_" + std::to_string(::getpid()) + ".pb");
  const Tensor t = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  ASSERT_TRUE(WriteTensorFile(p, t, "t").ok());
  std::string name;
  auto r = ReadTensorFile(p, &name);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(name, "t");
  EXPECT_EQ(r->ToFloatVector(), (std::vector<float>{1, 2, 3, 4}));

  onnx::TensorProto proto;
  TensorToProto(t, "t", &proto);
  proto.mutable_raw_data()->resize(7);
  ASSERT_TRUE(WriteFileAtomically(p, proto.SerializeAsString()).ok());
  r = ReadTensorFile(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("7 bytes of raw data"), std::string::npos)
      << r.status().message();
  fs::remove(p);
}

TEST(ParseInputShape, Parses_and_rejects) {
  auto ok = ParseInputShape("input=1,3,224,224");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->first, "input");
  EXPECT_EQ(ok->second, (Shape{1, 3, 224, 224}));
  EXPECT_FALSE(ParseInputShape("input").ok());
  EXPECT_FALSE(ParseInputShape("input=1,x").ok());
  EXPECT_FALSE(ParseInputShape("input=1,-3").ok());
}

}  // namespace
}  // namespace tessel::onnx_io
