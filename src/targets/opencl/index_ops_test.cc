// The index, scatter/gather and along-axis kernels (index_launches.h)
// against the reference executor, on small one-op models: each op, its
// attribute variants, negative axes and indices, int64 outputs, and the
// cases refused as Unsupported. Without an OpenCL device the tests skip,
// saying why.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "onnx/test_data.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/test_env.h"
#include "targets/testing.h"

namespace tessel::opencl {
namespace {

using onnx_io::ModelBuilder;

class IndexOpsTest : public OpenClDeviceTest {
 protected:
  StatusOr<CompiledModel> CompileModel(ModelBuilder& b) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("tessel_index_ops_" + std::to_string(::getpid()) + ".onnx");
    TESSEL_RETURN_IF_ERROR(b.Save(path));
    StatusOr<CompiledModel> model = Compile(path, targets::testing::Reference());
    std::filesystem::remove(path);
    return model;
  }

  // Runs `b` on the reference target and on OpenCL with the same random
  // inputs (floats in [-2, 2], integers in [lo, hi]: small, so that ties
  // occur) and compares every output.
  void ExpectMatchesReference(ModelBuilder& b, int64_t lo = -3, int64_t hi = 5) {
    StatusOr<CompiledModel> model = CompileModel(b);
    ASSERT_TRUE(model.ok()) << model.status().message();
    std::mt19937 rng(11);
    std::vector<Tensor> inputs;
    for (const ir::Value* v : model->graph->inputs()) {
      Tensor t(v->dtype, v->shape);
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        if (v->dtype == DType::kFloat32) {
          t.data<float>()[i] = std::uniform_real_distribution<float>(-2, 2)(rng);
        } else {
          t.SetFromDouble(i,
                          static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi)(rng)));
        }
      }
      inputs.push_back(std::move(t));
    }
    StatusOr<std::unique_ptr<targets::Executable>> reference =
        Prepare(*model, targets::testing::Reference());
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    StatusOr<std::vector<Tensor>> expected = (*reference)->Run(inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<std::unique_ptr<OpenClExecutor>> exec =
        OpenClExecutor::Create(*model->graph, model->memory, *runtime_);
    ASSERT_TRUE(exec.ok()) << exec.status().message();
    StatusOr<std::vector<Tensor>> actual = (*exec)->Run(inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t k = 0; k < actual->size(); ++k) {
      ASSERT_EQ((*actual)[k].dtype(), (*expected)[k].dtype()) << "output " << k;
      const auto c = onnx_io::CompareTensors((*actual)[k], (*expected)[k], 1e-4, 1e-5);
      EXPECT_TRUE(c.ok) << "output " << k << ": " << c.problem << " max abs error "
                        << c.max_abs_error << ", " << c.mismatches << " elements off";
    }
    kernel_names_.clear();
    for (const Launch& l : (*exec)->launches()) kernel_names_.push_back(l.kernel_name);
  }

  // Compiles `b` and expects the OpenCL executor to refuse it as
  // Unsupported, naming node `node` and saying `why`.
  void ExpectRejected(ModelBuilder& b, const std::string& node, const std::string& why) {
    StatusOr<CompiledModel> model = CompileModel(b);
    ASSERT_TRUE(model.ok()) << model.status().message();
    auto exec = OpenClExecutor::Create(*model->graph, model->memory, *runtime_);
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(exec.status().message().find(node), std::string::npos) << exec.status().message();
    EXPECT_NE(exec.status().message().find(why), std::string::npos) << exec.status().message();
  }

  bool Used(const std::string& kernel) const {
    for (const std::string& k : kernel_names_) {
      if (k == kernel) return true;
    }
    return false;
  }

  std::vector<std::string> kernel_names_;
};

Tensor I64(std::vector<int64_t> v, Shape s) { return Tensor::FromVector<int64_t>(v, s); }

TEST_F(IndexOpsTest, ArgMax_ArgMin_keepdims_negative_axis_and_last_index) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3, 4, 5});
  b.Input("t", DType::kInt64, {4, 6});  // small integers: ties
  auto& a = b.Node("ArgMax", {"x"}, {"a"});
  ModelBuilder::SetAttr(a, "axis", int64_t{-2});
  auto& m = b.Node("ArgMin", {"x"}, {"m"});
  ModelBuilder::SetAttr(m, "axis", int64_t{2});
  ModelBuilder::SetAttr(m, "keepdims", int64_t{0});
  auto& last = b.Node("ArgMax", {"t"}, {"last"});
  ModelBuilder::SetAttr(last, "axis", int64_t{1});
  ModelBuilder::SetAttr(last, "select_last_index", int64_t{1});
  auto& first = b.Node("ArgMin", {"t"}, {"first"});
  ModelBuilder::SetAttr(first, "axis", int64_t{0});
  for (const char* o : {"a", "m", "last", "first"}) b.Output(o, DType::kInt64);
  ExpectMatchesReference(b, 0, 2);
  EXPECT_TRUE(Used("f32_arg_extreme"));
  EXPECT_TRUE(Used("i64_arg_extreme"));
}

TEST_F(IndexOpsTest, Hardmax_along_an_axis_and_flattened_before_opset_13) {
  ModelBuilder b13(13);
  b13.Input("x", DType::kFloat32, {2, 3, 4});
  ModelBuilder::SetAttr(b13.Node("Hardmax", {"x"}, {"y"}), "axis", int64_t{1});
  b13.Output("y");
  ExpectMatchesReference(b13);
  ModelBuilder b11(11);
  b11.Input("x", DType::kFloat32, {2, 3, 4});
  b11.Node("Hardmax", {"x"}, {"y"});  // axis 1: rows of 12
  b11.Output("y");
  ExpectMatchesReference(b11);
  EXPECT_TRUE(Used("f32_hardmax"));
}

TEST_F(IndexOpsTest, CumSum_exclusive_reverse_negative_axis_and_integers) {
  ModelBuilder b(14);
  b.Input("x", DType::kFloat32, {3, 5});
  b.Input("i", DType::kInt32, {4, 3});
  b.Input("l", DType::kInt64, {2, 3, 2});
  b.Initializer("last", I64({-1}, {}));
  b.Initializer("first", I64({0}, {}));
  b.Initializer("mid", I64({1}, {}));
  auto& ex = b.Node("CumSum", {"x", "last"}, {"ex"});
  ModelBuilder::SetAttr(ex, "exclusive", int64_t{1});
  ModelBuilder::SetAttr(ex, "reverse", int64_t{1});
  b.Node("CumSum", {"x", "first"}, {"plain"});
  ModelBuilder::SetAttr(b.Node("CumSum", {"i", "first"}, {"ints"}), "reverse", int64_t{1});
  ModelBuilder::SetAttr(b.Node("CumSum", {"l", "mid"}, {"longs"}), "exclusive", int64_t{1});
  b.Output("ex");
  b.Output("plain");
  b.Output("ints", DType::kInt32);
  b.Output("longs", DType::kInt64);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_cumsum"));
  EXPECT_TRUE(Used("i32_cumsum"));
  EXPECT_TRUE(Used("i64_cumsum"));
}

TEST_F(IndexOpsTest, TopK_largest_smallest_and_ties_to_the_lower_index) {
  ModelBuilder b(11);
  b.Input("x", DType::kFloat32, {3, 7});
  b.Input("t", DType::kInt64, {6, 2});
  b.Initializer("k3", I64({3}, {1}));
  b.Initializer("k4", I64({4}, {1}));
  b.Node("TopK", {"x", "k3"}, {"v", "i"});
  auto& small = b.Node("TopK", {"x", "k4"}, {"sv", "si"});
  ModelBuilder::SetAttr(small, "largest", int64_t{0});
  ModelBuilder::SetAttr(small, "axis", int64_t{-1});
  ModelBuilder::SetAttr(b.Node("TopK", {"t", "k4"}, {"tv", "ti"}), "axis", int64_t{0});
  b.Output("v");
  b.Output("i", DType::kInt64);
  b.Output("sv");
  b.Output("si", DType::kInt64);
  b.Output("tv", DType::kInt64);
  b.Output("ti", DType::kInt64);
  ExpectMatchesReference(b, 0, 2);
  EXPECT_TRUE(Used("f32_top_k"));
  EXPECT_TRUE(Used("i64_top_k"));
}

TEST_F(IndexOpsTest, LpNormalization_p1_and_p2_RMSNormalization_and_LRN) {
  ModelBuilder b(23);
  b.Input("x", DType::kFloat32, {2, 3, 4});
  b.Initializer("w", Tensor::FromVector<float>({0.5f, -1.0f, 2.0f, 1.5f}, {4}));
  auto& l1 = b.Node("LpNormalization", {"x"}, {"l1"});
  ModelBuilder::SetAttr(l1, "p", int64_t{1});
  ModelBuilder::SetAttr(l1, "axis", int64_t{0});
  b.Node("LpNormalization", {"x"}, {"l2"});
  auto& rms = b.Node("RMSNormalization", {"x", "w"}, {"rms"});
  ModelBuilder::SetAttr(rms, "axis", int64_t{-2});  // rows of 3 x 4, the scale broadcast
  ModelBuilder::SetAttr(rms, "epsilon", 0.1f);
  b.Node("RMSNormalization", {"x", "w"}, {"rms_last"});
  auto& lrn = b.Node("LRN", {"x"}, {"lrn"});
  ModelBuilder::SetAttr(lrn, "size", int64_t{2});
  ModelBuilder::SetAttr(lrn, "alpha", 0.5f);
  ModelBuilder::SetAttr(lrn, "bias", 2.0f);
  for (const char* o : {"l1", "l2", "rms", "rms_last", "lrn"}) b.Output(o);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_lp_norm"));
  EXPECT_TRUE(Used("f32_rms_norm_rows"));
  EXPECT_TRUE(Used("f32_lrn"));
}

TEST_F(IndexOpsTest, RMSNormalization_of_rows_longer_than_a_work_group_with_broadcast_scales) {
  // Rows of 3 x 100 = 300 elements: more than the 128-item work group and
  // not a multiple of it, so items walk the row several times.
  ModelBuilder b(23);
  b.Input("x", DType::kFloat32, {2, 3, 100});
  b.Input("w_cols", DType::kFloat32, {100});   // broadcast over the 3 rows' parts
  b.Input("w_rows", DType::kFloat32, {3, 1});  // broadcast along each part
  ModelBuilder::SetAttr(b.Node("RMSNormalization", {"x", "w_cols"}, {"by_cols"}), "axis",
                        int64_t{-2});
  ModelBuilder::SetAttr(b.Node("RMSNormalization", {"x", "w_rows"}, {"by_rows"}), "axis",
                        int64_t{1});
  b.Output("by_cols");
  b.Output("by_rows");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_rms_norm_rows"));
}

TEST_F(IndexOpsTest, ReduceLogSumExp_over_split_axes_all_axes_and_negative_axes) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3, 4, 5});
  auto& split = b.Node("ReduceLogSumExp", {"x"}, {"split"});
  ModelBuilder::SetAttr(split, "axes", std::vector<int64_t>{0, -1});
  ModelBuilder::SetAttr(split, "keepdims", int64_t{0});
  b.Node("ReduceLogSumExp", {"x"}, {"all"});
  b.Output("split");
  b.Output("all");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_reduce_log_sum_exp"));
}

TEST_F(IndexOpsTest, Trilu_upper_lower_batched_with_k_at_run_time) {
  ModelBuilder b(14);
  b.Input("x", DType::kInt64, {2, 3, 5});
  b.Input("f", DType::kFloat32, {4, 3});
  b.Initializer("neg", I64({-1}, {}));
  b.Node("Trilu", {"x"}, {"upper"});
  ModelBuilder::SetAttr(b.Node("Trilu", {"x", "neg"}, {"lower"}), "upper", int64_t{0});
  b.Input("k", DType::kInt64, {});
  b.Node("Trilu", {"f", "k"}, {"f_upper"});
  b.Output("upper", DType::kInt64);
  b.Output("lower", DType::kInt64);
  b.Output("f_upper");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b64_trilu"));
  EXPECT_TRUE(Used("b32_trilu"));
}

TEST_F(IndexOpsTest, EyeLike_off_diagonal_and_with_a_dtype) {
  ModelBuilder b(9);
  b.Input("x", DType::kInt32, {4, 5});
  ModelBuilder::SetAttr(b.Node("EyeLike", {"x"}, {"same"}), "k", int64_t{-2});
  auto& f = b.Node("EyeLike", {"x"}, {"f"});
  ModelBuilder::SetAttr(f, "k", int64_t{1});
  ModelBuilder::SetAttr(f, "dtype", int64_t{1});  // float32
  b.Output("same", DType::kInt32);
  b.Output("f");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_eye_like"));
}

TEST_F(IndexOpsTest, Tile_DepthToSpace_and_SpaceToDepth_in_both_modes) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 8, 2, 3});
  b.Initializer("reps", I64({2, 1, 3, 1}, {4}));
  b.Node("Tile", {"x", "reps"}, {"tiled"});
  ModelBuilder::SetAttr(b.Node("DepthToSpace", {"x"}, {"dcr"}), "blocksize", int64_t{2});
  auto& crd = b.Node("DepthToSpace", {"x"}, {"crd"});
  ModelBuilder::SetAttr(crd, "blocksize", int64_t{2});
  ModelBuilder::SetAttr(crd, "mode", std::string("CRD"));
  b.Input("s", DType::kFloat32, {2, 3, 4, 6});
  ModelBuilder::SetAttr(b.Node("SpaceToDepth", {"s"}, {"s2d"}), "blocksize", int64_t{2});
  for (const char* o : {"tiled", "dcr", "crd", "s2d"}) b.Output(o);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_tile"));
  EXPECT_TRUE(Used("b32_strided_copy"));
}

TEST_F(IndexOpsTest, Compress_along_an_axis_and_flattened) {
  ModelBuilder b(11);
  b.Input("x", DType::kFloat32, {3, 4});
  b.Initializer("cols", Tensor::FromVector<bool>({true, false, true}, {3}));
  b.Initializer("flat", Tensor::FromVector<bool>({false, true, true, false, true}, {5}));
  ModelBuilder::SetAttr(b.Node("Compress", {"x", "cols"}, {"by_col"}), "axis", int64_t{-1});
  b.Node("Compress", {"x", "flat"}, {"flattened"});
  b.Output("by_col");
  b.Output("flattened");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_gather_i32"));
}

TEST_F(IndexOpsTest, ReverseSequence_batch_major_and_time_major) {
  ModelBuilder b(10);
  b.Input("x", DType::kFloat32, {3, 4, 2});
  b.Initializer("by_batch", I64({4, 1, 3}, {3}));
  b.Initializer("by_time", I64({0, 3, 2, 1}, {4}));
  auto& batch = b.Node("ReverseSequence", {"x", "by_batch"}, {"batch"});
  ModelBuilder::SetAttr(batch, "batch_axis", int64_t{0});
  ModelBuilder::SetAttr(batch, "time_axis", int64_t{1});
  b.Node("ReverseSequence", {"x", "by_time"}, {"time"});
  b.Output("batch");
  b.Output("time");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_reverse_sequence"));
}

TEST_F(IndexOpsTest, GatherElements_negative_indices_and_int32_indices) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {3, 4});
  b.Initializer("i64", I64({-1, 0, 2, -3, 1, 1}, {2, 3}));
  b.Initializer("i32", Tensor::FromVector<int32_t>({3, -4, 0, 1, -1, 2}, {3, 2}));
  b.Node("GatherElements", {"x", "i64"}, {"rows"});
  ModelBuilder::SetAttr(b.Node("GatherElements", {"x", "i32"}, {"cols"}), "axis", int64_t{-1});
  b.Output("rows");
  b.Output("cols");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_gather_elements_i64"));
  EXPECT_TRUE(Used("b32_gather_elements_i32"));
}

TEST_F(IndexOpsTest, ScatterElements_every_reduction_over_duplicate_and_negative_indices) {
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(reduction);
    ModelBuilder b(18);
    b.Input("x", DType::kFloat32, {3, 4});
    b.Input("u", DType::kFloat32, {3, 3});
    b.Initializer("idx", I64({1, -3, 1, 0, 3, 3, -1, 2, 0}, {3, 3}));
    auto& n = b.Node("ScatterElements", {"x", "idx", "u"}, {"y"});
    ModelBuilder::SetAttr(n, "axis", int64_t{1});
    ModelBuilder::SetAttr(n, "reduction", std::string(reduction));
    b.Input("l", DType::kInt64, {2, 3});
    b.Input("lu", DType::kInt64, {2, 2});
    b.Initializer("lidx", I64({1, 1, 0, -2}, {2, 2}));
    ModelBuilder::SetAttr(b.Node("ScatterElements", {"l", "lidx", "lu"}, {"ly"}), "reduction",
                          std::string(reduction));
    b.Output("y");
    b.Output("ly", DType::kInt64);
    ExpectMatchesReference(b);
    EXPECT_TRUE(Used("f32_scatter_elements_i64"));
    EXPECT_TRUE(Used("i64_scatter_elements_i64"));
  }
}

TEST_F(IndexOpsTest, Scatter_before_opset_11_is_ScatterElements) {
  ModelBuilder b(10);
  b.Input("x", DType::kFloat32, {3, 3});
  b.Input("u", DType::kFloat32, {2, 3});
  b.Initializer("idx", I64({1, 0, 2, 0, 2, 1}, {2, 3}));
  b.Node("Scatter", {"x", "idx", "u"}, {"y"});
  b.Output("y");
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_scatter_elements_i64"));
}

TEST_F(IndexOpsTest, ScatterND_slices_and_elements_every_reduction_with_duplicates) {
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(reduction);
    ModelBuilder b(18);
    b.Input("x", DType::kFloat32, {4, 2, 3});
    b.Input("u", DType::kFloat32, {3, 2, 3});
    b.Initializer("rows", I64({0, 2, -4}, {3, 1}));  // -4 is row 0 again
    auto& slices = b.Node("ScatterND", {"x", "rows", "u"}, {"y"});
    ModelBuilder::SetAttr(slices, "reduction", std::string(reduction));
    b.Input("e", DType::kFloat32, {2, 2});
    b.Initializer("at", I64({1, 0, 0, 1, -1, 0}, {3, 2}));
    b.Input("eu", DType::kFloat32, {3});
    auto& elements = b.Node("ScatterND", {"e", "at", "eu"}, {"ey"});
    ModelBuilder::SetAttr(elements, "reduction", std::string(reduction));
    b.Output("y");
    b.Output("ey");
    ExpectMatchesReference(b);
    EXPECT_TRUE(Used("f32_scatter_nd"));
  }
}

TEST_F(IndexOpsTest, OneHot_negative_out_of_range_and_float_indices_on_any_axis) {
  ModelBuilder b(11);
  b.Initializer("depth", Tensor::FromVector<float>({4}, {}));
  b.Input("values", DType::kFloat32, {2});
  b.Initializer("idx", I64({-1, 0, 5, 3, -4, -5}, {2, 3}));
  ModelBuilder::SetAttr(b.Node("OneHot", {"idx", "depth", "values"}, {"y"}), "axis", int64_t{1});
  b.Input("fidx", DType::kFloat32, {3});
  b.Node("OneHot", {"fidx", "depth", "values"}, {"fy"});
  b.Input("ivalues", DType::kInt32, {2});
  ModelBuilder::SetAttr(b.Node("OneHot", {"idx", "depth", "ivalues"}, {"iy"}), "axis", int64_t{-3});
  b.Output("y");
  b.Output("fy");
  b.Output("iy", DType::kInt32);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("b32_one_hot_i64"));
  EXPECT_TRUE(Used("b32_one_hot_f32"));
}

TEST_F(IndexOpsTest, Einsum_products_sums_transposes_and_diagonals) {
  ModelBuilder b(12);
  b.Input("x", DType::kFloat32, {2, 3, 4});
  b.Input("y", DType::kFloat32, {2, 4, 5});
  b.Input("v", DType::kFloat32, {6});
  b.Input("m", DType::kFloat32, {3, 3});
  b.Input("d", DType::kFloat32, {2, 3, 3});
  ModelBuilder::SetAttr(b.Node("Einsum", {"x", "y"}, {"bmm"}), "equation",
                        std::string("bij, bjk -> bik"));
  ModelBuilder::SetAttr(b.Node("Einsum", {"v", "v"}, {"dot"}), "equation", std::string("i,i"));
  ModelBuilder::SetAttr(b.Node("Einsum", {"x"}, {"sum"}), "equation", std::string("bij->i"));
  ModelBuilder::SetAttr(b.Node("Einsum", {"m"}, {"t"}), "equation", std::string("ij->ji"));
  ModelBuilder::SetAttr(b.Node("Einsum", {"d"}, {"diag"}), "equation", std::string("...ii ->...i"));
  ModelBuilder::SetAttr(b.Node("Einsum", {"m", "m"}, {"implicit"}), "equation",
                        std::string("ij,jk"));
  for (const char* o : {"bmm", "dot", "sum", "t", "diag", "implicit"}) b.Output(o);
  ExpectMatchesReference(b);
  EXPECT_TRUE(Used("f32_einsum"));
}

TEST_F(IndexOpsTest, Einsum_of_bfloat16_sums_in_float32) {
  ModelBuilder b(12);
  b.Input("x", DType::kBFloat16, {2, 3, 4});
  b.Input("y", DType::kBFloat16, {2, 4, 5});
  ModelBuilder::SetAttr(b.Node("Einsum", {"x", "y"}, {"bmm"}), "equation",
                        std::string("bij,bjk->bik"));
  b.Output("bmm", DType::kBFloat16);
  ExpectMatchesReference(b);  // small integers: every sum exact in bfloat16
  EXPECT_TRUE(Used("bf16_einsum"));
}

TEST_F(IndexOpsTest, Einsum_rejects_three_inputs_naming_the_node) {
  ModelBuilder b(12);
  b.Input("v", DType::kFloat32, {4});
  b.Node("Einsum", {"v", "v", "v"}, {"y"}, "triple");
  ModelBuilder::SetAttr(*b.proto().mutable_graph()->mutable_node(0), "equation",
                        std::string("i,i,i"));
  b.Output("y");
  ExpectRejected(b, "triple", "one or two inputs");
}

TEST_F(IndexOpsTest, Einsum_rejects_2_to_the_31_summed_terms_naming_the_node) {
  // 50,000 x 50,000 summed terms per output: past the kernel's int count.
  ModelBuilder b(12);
  b.Input("u", DType::kFloat32, {50000});
  b.Input("v", DType::kFloat32, {50000});
  b.Node("Einsum", {"u", "v"}, {"y"}, "huge_sum");
  ModelBuilder::SetAttr(*b.proto().mutable_graph()->mutable_node(0), "equation",
                        std::string("i,j->"));
  b.Output("y");
  ExpectRejected(b, "huge_sum", "fewer than 2^31 outputs and summed terms");
}

TEST_F(IndexOpsTest, ArgMax_rejects_uint8_data_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kUInt8, {3, 4});
  b.Node("ArgMax", {"x"}, {"y"}, "bytes_argmax");
  b.Output("y", DType::kInt64);
  ExpectRejected(b, "bytes_argmax", "not uint8");
}

TEST_F(IndexOpsTest, ScatterND_rejects_uint8_data_naming_the_node) {
  ModelBuilder b(18);
  b.Input("x", DType::kUInt8, {4});
  b.Initializer("at", I64({1}, {1, 1}));
  b.Input("u", DType::kUInt8, {1});
  b.Node("ScatterND", {"x", "at", "u"}, {"y"}, "bytes_scatter");
  b.Output("y", DType::kUInt8);
  ExpectRejected(b, "bytes_scatter", "not uint8");
}

TEST_F(IndexOpsTest, GatherElements_rejects_indices_into_an_empty_axis_naming_the_node) {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {0, 3});
  b.Initializer("idx", I64({0, 0, 0}, {1, 3}));
  b.Node("GatherElements", {"x", "idx"}, {"y"}, "empty_gather");
  b.Output("y");
  ExpectRejected(b, "empty_gather", "indexes an empty axis");
}

TEST_F(IndexOpsTest, ScatterElements_rejects_indices_into_an_empty_axis_naming_the_node) {
  ModelBuilder b(18);
  b.Input("x", DType::kFloat32, {2, 0});
  b.Initializer("idx", I64({0, 0}, {2, 1}));
  b.Input("u", DType::kFloat32, {2, 1});
  ModelBuilder::SetAttr(b.Node("ScatterElements", {"x", "idx", "u"}, {"y"}, "empty_scatter"),
                        "axis", int64_t{1});
  b.Output("y");
  ExpectRejected(b, "empty_scatter", "indexes an empty axis");
}

TEST_F(IndexOpsTest, ScatterND_rejects_indices_into_an_empty_axis_naming_the_node) {
  ModelBuilder b(18);
  b.Input("x", DType::kFloat32, {0, 3});
  b.Initializer("at", I64({0}, {1, 1}));
  b.Input("u", DType::kFloat32, {1, 3});
  b.Node("ScatterND", {"x", "at", "u"}, {"y"}, "empty_scatter_nd");
  b.Output("y");
  ExpectRejected(b, "empty_scatter_nd", "indexes an empty axis");
}

}  // namespace
}  // namespace tessel::opencl
