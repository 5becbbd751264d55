// Reference kernels and shape inference of the tensor (shape and data
// movement) op family, on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor F32(std::vector<float> v, Shape s) { return Tensor::FromVector(v, std::move(s)); }
Tensor I64(std::vector<int64_t> v, Shape s) { return Tensor::FromVector(v, std::move(s)); }
Tensor I32(std::vector<int32_t> v, Shape s) { return Tensor::FromVector(v, std::move(s)); }
Tensor I64s(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector(v, {n});
}
Tensor F16(const std::vector<float>& v, Shape s) {
  std::vector<Half> h;
  for (float f : v) h.push_back(Half{FloatToHalf(f)});
  return Tensor::FromVector(h, std::move(s));
}
// 0, 1, 2, ... as float32 of `shape`.
Tensor Iota(Shape s) {
  Tensor t(DType::kFloat32, std::move(s));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

AttributeMap Attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  AttributeMap m;
  for (const auto& [name, value] : list) m.Set(name, value);
  return m;
}

// Runs the op and returns its outputs; on failure records it and returns
// empty tensors, so the caller's value checks fail instead of crashing.
std::vector<Tensor> RunAll(const std::string& op, const AttributeMap& attrs,
                           const std::vector<Tensor>& inputs, int num_outputs, int opset = 17) {
  auto r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  if (!r.ok()) {
    ADD_FAILURE() << op << ": " << r.status().message();
    return std::vector<Tensor>(num_outputs, Tensor::FromVector<float>({}, {0}));
  }
  return std::move(r).value();
}

Tensor Run1(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& inputs,
            int opset = 17) {
  return RunAll(op, attrs, inputs, 1, opset)[0];
}

// The error of a run expected to fail (Ok when it did not fail).
Status RunError(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& inputs,
                int num_outputs = 1, int opset = 17) {
  auto r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  return r.ok() ? Status::Ok() : r.status();
}

std::vector<float> Floats(const Tensor& t) { return t.ToFloatVector(); }
std::vector<int64_t> Ints(const Tensor& t) { return t.ToInt64Vector(); }

// ---------------------------------------------------------------------------
// Concat, Split

TEST(Concat, Joins_along_axis_including_negative_axis) {
  Tensor a = I64({1, 2, 3, 4}, {2, 2});
  Tensor b = I64({5, 6}, {2, 1});
  for (int64_t axis : {1, -1}) {
    Tensor out = Run1("Concat", Attrs({{"axis", axis}}), {a, b});
    EXPECT_EQ(out.dtype(), DType::kInt64);
    EXPECT_EQ(out.shape(), (Shape{2, 3}));
    EXPECT_THAT(Ints(out), ElementsAre(1, 2, 5, 3, 4, 6));
  }
  Tensor rows = Run1("Concat", Attrs({{"axis", int64_t{0}}}), {a, I64({7, 8}, {1, 2})});
  EXPECT_THAT(Ints(rows), ElementsAre(1, 2, 3, 4, 7, 8));
}

TEST(Concat, Float16_and_empty_inputs) {
  Tensor out = Run1("Concat", Attrs({{"axis", int64_t{0}}}),
                    {F16({1.5f, -2}, {2}), F16({}, {0}), F16({0.25f}, {1})});
  EXPECT_EQ(out.dtype(), DType::kFloat16);
  EXPECT_THAT(Floats(out), ElementsAre(1.5f, -2.0f, 0.25f));
}

TEST(Concat, Concat_rejects_shape_mismatch) {
  Status s = RunError("Concat", Attrs({{"axis", int64_t{1}}}),
                      {I64({1, 2, 3, 4}, {2, 2}), I64({5, 6, 7}, {3, 1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Concat 'node': input 'in1' has shape 3x1 but input 'in0' has shape 2x2; they must "
            "agree except on axis 1");
}

TEST(Concat, Concat_rejects_bad_axis) {
  Status s = RunError("Concat", Attrs({{"axis", int64_t{2}}}), {I64({1, 2}, {1, 2})});
  EXPECT_EQ(s.message(), "Concat 'node': axis 2 is out of range [-2, 1] for rank 2");
}

TEST(Concat, Axis_defaults_to_1_before_opset_4) {
  Tensor out = Run1("Concat", {}, {I64({1, 2}, {2, 1}), I64({3, 4}, {2, 1})}, 3);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_THAT(Ints(out), ElementsAre(1, 3, 2, 4));
  Status s = RunError("Concat", {}, {I64({1, 2}, {2, 1})}, 1, 4);
  EXPECT_EQ(s.message(), "Concat 'node': attribute axis is required");
}

TEST(Split, Equal_parts) {
  auto out = RunAll("Split", {}, {I64({1, 2, 3, 4, 5, 6}, {6})}, 3);
  EXPECT_THAT(Ints(out[0]), ElementsAre(1, 2));
  EXPECT_THAT(Ints(out[1]), ElementsAre(3, 4));
  EXPECT_THAT(Ints(out[2]), ElementsAre(5, 6));
}

TEST(Split, Uneven_parts_give_the_last_one_the_remainder) {
  auto out = RunAll("Split", {}, {I64({1, 2, 3, 4, 5}, {5})}, 3);
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(out[2].shape(), (Shape{1}));
  EXPECT_THAT(Ints(out[2]), ElementsAre(5));
}

TEST(Split, Split_input_since_opset_13_and_attribute_before) {
  Tensor x = Iota({2, 3});
  auto out = RunAll("Split", Attrs({{"axis", int64_t{-1}}}), {x, I64s({1, 2})}, 2, 13);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1}));
  EXPECT_THAT(Floats(out[0]), ElementsAre(0, 3));
  EXPECT_THAT(Floats(out[1]), ElementsAre(1, 2, 4, 5));
  auto old = RunAll("Split", Attrs({{"axis", int64_t{1}}, {"split", std::vector<int64_t>{2, 1}}}),
                    {x}, 2, 11);
  EXPECT_THAT(Floats(old[0]), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(Floats(old[1]), ElementsAre(2, 5));
}

TEST(Split, Split_rejects_sizes_that_do_not_sum_to_the_dimension) {
  Status s = RunError("Split", {}, {Iota({3}), I64s({2, 2})}, 2);
  EXPECT_EQ(s.message(), "Split 'node': split [2,2] does not divide dimension 3 into 2 outputs");
}

TEST(Split, Opset1_takes_split_as_input_or_attribute) {
  const Tensor x = Iota({2, 3});
  const AttributeMap axis1 = Attrs({{"axis", int64_t{1}}});
  auto in = RunAll("Split", axis1, {x, F32({1, 2}, {2})}, 2, 1);
  EXPECT_THAT(Floats(in[0]), ElementsAre(0, 3));
  EXPECT_THAT(Floats(in[1]), ElementsAre(1, 2, 4, 5));
  auto attr = RunAll("Split", Attrs({{"axis", int64_t{1}}, {"split", std::vector<int64_t>{2, 1}}}),
                     {x}, 2, 1);
  EXPECT_THAT(Floats(attr[1]), ElementsAre(2, 5));
  auto equal = RunAll("Split", Attrs({{"axis", int64_t{0}}}), {x}, 2, 1);
  EXPECT_THAT(Floats(equal[1]), ElementsAre(3, 4, 5));
}

TEST(Split, Split_rejects_opset1_without_axis_or_with_fractional_sizes) {
  Status s = RunError("Split", {}, {Iota({4})}, 2, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "Split 'node': attribute axis is missing; before opset 2 Split has no defined "
            "default axis, and tessel does not guess one");
  s = RunError("Split", Attrs({{"axis", int64_t{0}}}), {Iota({4}), F32({1.5f, 2.5f}, {2})}, 2, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("expected non-negative whole numbers"));
}

// ---------------------------------------------------------------------------
// Slice

TEST(Slice, Starts_and_ends_on_leading_axes) {
  Tensor out = Run1("Slice", {}, {Iota({3, 4}), I64s({1, 0}), I64s({3, 3})});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(Floats(out), ElementsAre(4, 5, 6, 8, 9, 10));
}

TEST(Slice, Negative_axes_and_clamped_ends) {
  Tensor out = Run1("Slice", {}, {Iota({2, 3}), I64s({1}), I64s({1000}), I64s({-1})});
  EXPECT_THAT(Floats(out), ElementsAre(1, 2, 4, 5));
  Tensor all =
      Run1("Slice", {}, {Iota({4}), I64s({-100}), I64s({std::numeric_limits<int64_t>::max()})});
  EXPECT_THAT(Floats(all), ElementsAre(0, 1, 2, 3));
}

TEST(Slice, Negative_steps) {
  // ends = -11 on a dim of 10 clamps to -1: through index 0.
  Tensor rev = Run1("Slice", {}, {Iota({10}), I64s({-1}), I64s({-11}), I64s({0}), I64s({-1})});
  EXPECT_THAT(Floats(rev), ElementsAre(9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  Tensor by2 = Run1("Slice", {}, {Iota({10}), I64s({8}), I64s({1}), I64s({0}), I64s({-2})});
  EXPECT_THAT(Floats(by2), ElementsAre(8, 6, 4, 2));
  Tensor big = Run1("Slice", {},
                    {Iota({5}), I64s({std::numeric_limits<int64_t>::max()}),
                     I64s({std::numeric_limits<int64_t>::min()}), I64s({0}), I64s({-3})});
  EXPECT_THAT(Floats(big), ElementsAre(4, 1));
}

TEST(Slice, Positive_steps_on_one_axis_and_empty_results) {
  Tensor out = Run1("Slice", {}, {Iota({3, 4}), I64s({0}), I64s({4}), I64s({1}), I64s({2})});
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_THAT(Floats(out), ElementsAre(0, 2, 4, 6, 8, 10));
  Tensor empty = Run1("Slice", {}, {Iota({4}), I64s({3}), I64s({1})});
  EXPECT_EQ(empty.shape(), (Shape{0}));
}

TEST(Slice, Attributes_before_opset_10) {
  Tensor out = Run1("Slice",
                    Attrs({{"starts", std::vector<int64_t>{1}},
                           {"ends", std::vector<int64_t>{-1}},
                           {"axes", std::vector<int64_t>{1}}}),
                    {Iota({2, 4})}, 9);
  EXPECT_THAT(Floats(out), ElementsAre(1, 2, 5, 6));
}

TEST(Slice, Int32_starts_and_int64_data) {
  Tensor out = Run1("Slice", {}, {I64({10, 20, 30}, {3}), I32({1}, {1}), I32({3}, {1})});
  EXPECT_THAT(Ints(out), ElementsAre(20, 30));
}

TEST(Slice, Slice_rejects_zero_step_and_repeated_axes) {
  Status s = RunError("Slice", {}, {Iota({4}), I64s({0}), I64s({4}), I64s({0}), I64s({0})});
  EXPECT_EQ(s.message(), "Slice 'node': steps [0] contain 0");
  s = RunError("Slice", {}, {Iota({2, 2}), I64s({0, 0}), I64s({1, 1}), I64s({1, -1})});
  EXPECT_EQ(s.message(), "Slice 'node': axes [1,-1] repeat axis 1");
}

// ---------------------------------------------------------------------------
// Gather family

TEST(Gather, Negative_indices_and_axes) {
  Tensor data = I64({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor rows = Run1("Gather", {}, {data, I64s({2, -3})});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_THAT(Ints(rows), ElementsAre(5, 6, 1, 2));
  Tensor cols = Run1("Gather", Attrs({{"axis", int64_t{-1}}}), {data, I32({1, 0}, {2})});
  EXPECT_THAT(Ints(cols), ElementsAre(2, 1, 4, 3, 6, 5));
  Tensor scalar = Run1("Gather", {}, {data, I64({1}, {})});
  EXPECT_EQ(scalar.shape(), (Shape{2}));
  EXPECT_THAT(Ints(scalar), ElementsAre(3, 4));
  Tensor nested = Run1("Gather", {}, {Iota({3}), I64({0, 2, 1, 1}, {2, 2})});
  EXPECT_EQ(nested.shape(), (Shape{2, 2}));
  EXPECT_THAT(Floats(nested), ElementsAre(0, 2, 1, 1));
}

TEST(Gather, Gather_rejects_index_out_of_range) {
  Status s = RunError("Gather", {}, {I64({1, 2, 3, 4, 5, 6}, {3, 2}), I64s({0, 3})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Gather 'node': indices[1] = 3 is out of range [-3, 2] for axis 0 of data shape 3x2");
}

TEST(Gather, Gather_rejects_index_out_of_range_at_run_time) {
  // Indices not known at compile time: the kernel reports the bad value.
  ir::Graph g;
  ir::Value* data = g.AddValue("data", DType::kFloat32, {3}, true);
  ir::Value* idx = g.AddValue("idx", DType::kInt64, {2}, true);
  ir::Node* n = g.AddNode("Gather", "g1", {data, idx}, {g.AddValue("y")});
  ASSERT_TRUE(InferNode(*n, 17).ok());
  Tensor d = Iota({3});
  Tensor bad = I64s({1, -4});
  auto r = EvaluateNode(*n, 17, {&d, &bad});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Gather 'g1': indices[1] = -4 is out of range [-3, 2] for axis 0 of data shape 3");
}

TEST(Gather, Gather_rejects_bad_axis) {
  Status s = RunError("Gather", Attrs({{"axis", int64_t{-3}}}), {Iota({2, 2}), I64s({0})});
  EXPECT_EQ(s.message(), "Gather 'node': axis -3 is out of range [-2, 1] for rank 2");
}

TEST(GatherElements, Both_axes_with_negative_index) {
  Tensor data = I64({1, 2, 3, 4}, {2, 2});
  Tensor a1 =
      Run1("GatherElements", Attrs({{"axis", int64_t{1}}}), {data, I64({0, 0, 1, 0}, {2, 2})});
  EXPECT_THAT(Ints(a1), ElementsAre(1, 1, 4, 3));
  Tensor a0 = Run1("GatherElements", {}, {data, I64({1, 0, 0, -1}, {2, 2})});
  EXPECT_THAT(Ints(a0), ElementsAre(3, 2, 1, 4));
}

TEST(GatherND, Tuples_slices_and_batch_dims) {
  Tensor data = I64({0, 1, 2, 3}, {2, 2});
  EXPECT_THAT(Ints(Run1("GatherND", {}, {data, I64({0, 0, 1, 1}, {2, 2})})), ElementsAre(0, 3));
  Tensor rows = Run1("GatherND", {}, {data, I64({1, 0}, {2, 1})});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_THAT(Ints(rows), ElementsAre(2, 3, 0, 1));
  Tensor batched = Run1("GatherND", Attrs({{"batch_dims", int64_t{1}}}),
                        {I64({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}), I64({1, 0}, {2, 1})});
  EXPECT_EQ(batched.shape(), (Shape{2, 2}));
  EXPECT_THAT(Ints(batched), ElementsAre(2, 3, 4, 5));
}

// ---------------------------------------------------------------------------
// Scatter family

TEST(ScatterElements, Spec_example_axis_0) {
  Tensor out = Run1("ScatterElements", {},
                    {F32(std::vector<float>(9, 0), {3, 3}), I64({1, 0, 2, 0, 2, 1}, {2, 3}),
                     F32({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, {2, 3})});
  EXPECT_THAT(Floats(out), ElementsAre(2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f));
}

TEST(ScatterElements, Reductions_and_negative_index) {
  Tensor data = I64({1, 2, 3, 4, 5}, {1, 5});
  Tensor idx = I64({1, 1}, {1, 2});
  Tensor upd = I64({2, 3}, {1, 2});
  AttributeMap add = Attrs({{"axis", int64_t{1}}, {"reduction", std::string("add")}});
  AttributeMap mul = Attrs({{"axis", int64_t{1}}, {"reduction", std::string("mul")}});
  EXPECT_THAT(Ints(Run1("ScatterElements", add, {data, idx, upd})), ElementsAre(1, 7, 3, 4, 5));
  EXPECT_THAT(Ints(Run1("ScatterElements", mul, {data, idx, upd})), ElementsAre(1, 12, 3, 4, 5));
  Tensor last = Run1("ScatterElements", Attrs({{"axis", int64_t{-1}}}),
                     {data, I64({-1}, {1, 1}), I64({9}, {1, 1})});
  EXPECT_THAT(Ints(last), ElementsAre(1, 2, 3, 4, 9));
}

TEST(ScatterElements, ScatterElements_rejects_index_out_of_range) {
  Status s =
      RunError("ScatterElements", {}, {Iota({2, 2}), I64({0, 2}, {1, 2}), F32({1, 1}, {1, 2})});
  EXPECT_EQ(s.message(),
            "ScatterElements 'node': indices[1] = 2 is out of range [-2, 1] for axis 0 of data "
            "shape 2x2");
}

TEST(ScatterND, Spec_example_slices_and_add) {
  Tensor out = Run1(
      "ScatterND", {},
      {I64({1, 2, 3, 4, 5, 6, 7, 8}, {8}), I64({4, 3, 1, 7}, {4, 1}), I64({9, 10, 11, 12}, {4})});
  EXPECT_THAT(Ints(out), ElementsAre(1, 11, 3, 10, 9, 6, 7, 12));
  Tensor rows =
      Run1("ScatterND", {}, {I64({1, 2, 3, 4}, {2, 2}), I64({1}, {1, 1}), I64({7, 8}, {1, 2})});
  EXPECT_THAT(Ints(rows), ElementsAre(1, 2, 7, 8));
  Tensor add = Run1("ScatterND", Attrs({{"reduction", std::string("add")}}),
                    {I64({1, 2}, {2}), I64({0, 0}, {2, 1}), I64({5, 6}, {2})});
  EXPECT_THAT(Ints(add), ElementsAre(12, 2));
}

// ---------------------------------------------------------------------------
// Reshape family

TEST(Reshape, Zero_copies_and_minus_one_infers) {
  Tensor x = Iota({2, 3, 4});
  Tensor a = Run1("Reshape", {}, {x, I64s({0, -1})});
  EXPECT_EQ(a.shape(), (Shape{2, 12}));
  EXPECT_THAT(Floats(a), ElementsAreArray(Floats(x)));
  EXPECT_EQ(Run1("Reshape", {}, {x, I64s({-1})}).shape(), (Shape{24}));
  EXPECT_EQ(Run1("Reshape", {}, {x, I64s({4, 0, -1})}).shape(), (Shape{4, 3, 2}));
}

TEST(Reshape, Allowzero_keeps_zero_dimensions) {
  Tensor empty(DType::kFloat32, {0, 3});
  Tensor out = Run1("Reshape", Attrs({{"allowzero", int64_t{1}}}), {empty, I64s({3, 0})});
  EXPECT_EQ(out.shape(), (Shape{3, 0}));
}

TEST(Reshape, Reshape_rejects_count_mismatch) {
  Status s = RunError("Reshape", {}, {Iota({1, 3, 4}), I64s({5, -1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Reshape 'node': cannot reshape 1x3x4 (12 elements) to 5x-1");
  s = RunError("Reshape", {}, {Iota({1, 3, 4}), I64s({5, 3})});
  EXPECT_EQ(s.message(), "Reshape 'node': cannot reshape 1x3x4 (12 elements) to 5x3");
  s = RunError("Reshape", {}, {Iota({12}), I64s({-1, -1})});
  EXPECT_EQ(s.message(),
            "Reshape 'node': cannot reshape 12 (12 elements) to -1x-1: more than one -1");
}

TEST(Reshape, Reshape_rejects_a_shape_unknown_at_compile_time) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3}, true);
  ir::Value* shape = g.AddValue("shape", DType::kInt64, {2}, true);
  ir::Node* n = g.AddNode("Reshape", "r1", {x, shape}, {g.AddValue("y")});
  Status s = InferNode(*n, 17);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("must be known at compile time"));
}

TEST(Reshape, Shape_attribute_before_opset_5) {
  Tensor x = Iota({2, 3});
  Tensor out = Run1("Reshape", Attrs({{"shape", std::vector<int64_t>{0, -1, 1}}}), {x}, 4);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 1}));
  EXPECT_THAT(Floats(out), ElementsAreArray(Floats(x)));
}

TEST(Reshape, Reshape_rejects_the_form_of_another_opset) {
  Status s = RunError("Reshape", {}, {Iota({2, 3})}, 1, 4);
  EXPECT_EQ(s.message(), "Reshape 'node': attribute shape is required before opset 5");
  s = RunError("Reshape", {}, {Iota({2, 3}), I64s({6})}, 1, 4);
  EXPECT_THAT(s.message(), HasSubstr("'shape' is an attribute before opset 5, not an input"));
  s = RunError("Reshape", {}, {Iota({2, 3})}, 1, 5);
  EXPECT_EQ(s.message(), "Reshape 'node': input shape is required since opset 5");
}

TEST(Flatten, Axes_including_zero_and_negative) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_EQ(Run1("Flatten", Attrs({{"axis", int64_t{2}}}), {x}).shape(), (Shape{6, 4}));
  EXPECT_EQ(Run1("Flatten", Attrs({{"axis", int64_t{0}}}), {x}).shape(), (Shape{1, 24}));
  EXPECT_EQ(Run1("Flatten", Attrs({{"axis", int64_t{-1}}}), {x}).shape(), (Shape{6, 4}));
  EXPECT_EQ(Run1("Flatten", {}, {x}).shape(), (Shape{2, 12}));
  EXPECT_EQ(RunError("Flatten", Attrs({{"axis", int64_t{4}}}), {x}).message(),
            "Flatten 'node': axis 4 is out of range [-3, 3] for rank 3");
}

TEST(Squeeze, Axes_input_attribute_and_default) {
  Tensor x = Iota({1, 3, 1});
  EXPECT_EQ(Run1("Squeeze", {}, {x, I64s({-1})}).shape(), (Shape{1, 3}));
  EXPECT_EQ(Run1("Squeeze", {}, {x}).shape(), (Shape{3}));
  EXPECT_EQ(Run1("Squeeze", Attrs({{"axes", std::vector<int64_t>{0}}}), {x}, 11).shape(),
            (Shape{3, 1}));
}

TEST(Squeeze, Squeeze_rejects_dimension_not_of_size_one) {
  Status s = RunError("Squeeze", {}, {Iota({1, 3, 1}), I64s({1})});
  EXPECT_EQ(s.message(), "Squeeze 'node': cannot squeeze axis 1 of size 3 (input shape 1x3x1)");
}

TEST(Squeeze, Squeeze_rejects_axes_attribute_at_opset_13) {
  Status s = RunError("Squeeze", Attrs({{"axes", std::vector<int64_t>{0}}}), {Iota({1, 3})});
  EXPECT_EQ(s.message(),
            "Squeeze 'node': 'axes' is an input since opset 13, not an attribute (model opset 17)");
}

TEST(Unsqueeze, Axes_input_and_attribute) {
  Tensor x = I64({1, 2, 3}, {3});
  Tensor out = Run1("Unsqueeze", {}, {x, I64s({0, -1})});
  EXPECT_EQ(out.shape(), (Shape{1, 3, 1}));
  EXPECT_THAT(Ints(out), ElementsAre(1, 2, 3));
  EXPECT_EQ(Run1("Unsqueeze", Attrs({{"axes", std::vector<int64_t>{1}}}), {x}, 11).shape(),
            (Shape{3, 1}));
  EXPECT_EQ(Run1("Unsqueeze", {}, {I64({7}, {}), I64s({0})}).shape(), (Shape{1}));
}

TEST(Unsqueeze, Unsqueeze_rejects_bad_axis) {
  Status s = RunError("Unsqueeze", {}, {Iota({3}), I64s({3})});
  EXPECT_EQ(s.message(), "Unsqueeze 'node': axis 3 is out of range [-2, 1] for rank 2");
}

// ---------------------------------------------------------------------------
// Transpose, Expand, Tile

TEST(Transpose, Default_reverses_and_explicit_perm) {
  Tensor x = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = Run1("Transpose", {}, {x});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_THAT(Floats(t), ElementsAre(1, 4, 2, 5, 3, 6));
  Tensor p = Run1("Transpose", Attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}),
                  {F32({1, 2, 3, 4, 5, 6}, {1, 2, 3})});
  EXPECT_EQ(p.shape(), (Shape{3, 1, 2}));
  EXPECT_THAT(Floats(p), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(Transpose, Float16_and_int64) {
  Tensor h = Run1("Transpose", {}, {F16({1, 2, 3, 4}, {2, 2})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_THAT(Floats(h), ElementsAre(1, 3, 2, 4));
  const int64_t big = int64_t{1} << 60;
  Tensor i = Run1("Transpose", {}, {I64({big, 2, 3, big + 1}, {2, 2})});
  EXPECT_THAT(Ints(i), ElementsAre(big, 3, 2, big + 1));
}

TEST(Transpose, Transpose_rejects_bad_perm) {
  Status s = RunError("Transpose", Attrs({{"perm", std::vector<int64_t>{0, 0}}}), {Iota({2, 3})});
  EXPECT_EQ(s.message(),
            "Transpose 'node': perm [0,0] is not a permutation of 0..1 (input shape 2x3)");
  s = RunError("Transpose", Attrs({{"perm", std::vector<int64_t>{1, 0, 2}}}), {Iota({2, 3})});
  EXPECT_EQ(s.message(),
            "Transpose 'node': perm [1,0,2] is not a permutation of 0..1 (input shape 2x3)");
}

TEST(Expand, Broadcasts_both_ways) {
  Tensor a = Run1("Expand", {}, {F32({1, 2, 3}, {3}), I64s({2, 1})});
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_THAT(Floats(a), ElementsAre(1, 2, 3, 1, 2, 3));
  Tensor b = Run1("Expand", {}, {I64({1, 2, 3}, {3, 1}), I64s({1, 4})});
  EXPECT_EQ(b.shape(), (Shape{3, 4}));
  EXPECT_THAT(Ints(b), ElementsAre(1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
  Tensor c = Run1("Expand", {}, {F16({1, 2}, {1, 2}), I64s({2})});
  EXPECT_EQ(c.shape(), (Shape{1, 2}));
  EXPECT_THAT(Floats(c), ElementsAre(1, 2));
}

TEST(Expand, Expand_rejects_incompatible_shape) {
  Status s = RunError("Expand", {}, {Iota({3}), I64s({2})});
  EXPECT_EQ(s.message(), "Expand 'node': shapes 3, 2 do not broadcast");
}

TEST(Tile, Repeats_each_axis) {
  Tensor x = I64({1, 2, 3, 4}, {2, 2});
  Tensor a = Run1("Tile", {}, {x, I64s({1, 2})});
  EXPECT_EQ(a.shape(), (Shape{2, 4}));
  EXPECT_THAT(Ints(a), ElementsAre(1, 2, 1, 2, 3, 4, 3, 4));
  Tensor b = Run1("Tile", {}, {x, I64s({2, 1})});
  EXPECT_THAT(Ints(b), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
  EXPECT_EQ(Run1("Tile", {}, {x, I64s({0, 3})}).shape(), (Shape{0, 6}));
}

TEST(Tile, Tile_rejects_repeats_of_wrong_length) {
  Status s = RunError("Tile", {}, {Iota({2, 2}), I64s({2})});
  EXPECT_EQ(s.message(), "Tile 'node': repeats [2] has 1 entries; the input 2x2 has rank 2");
}

TEST(Tile, Opset1_tiles_along_one_axis) {
  Tensor x = I64({1, 2, 3, 4}, {2, 2});
  Tensor a = Run1("Tile", {}, {x, I64({3}, {}), I64({-1}, {})}, 1);
  EXPECT_EQ(a.shape(), (Shape{2, 6}));
  EXPECT_THAT(Ints(a), ElementsAre(1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4));
  Status s = RunError("Tile", {}, {x, I64({3}, {})}, 1, 5);
  EXPECT_EQ(s.message(), "Tile 'node': input axis is required before opset 6");
  s = RunError("Tile", {}, {x, I64s({1, 1}), I64({0}, {})}, 1, 6);
  EXPECT_EQ(s.message(), "Tile 'node': takes inputs input and repeats since opset 6");
}

// ---------------------------------------------------------------------------
// Shape, Size, Constant, ConstantOfShape, Identity, Dropout

TEST(Shape, Full_and_opset_15_start_end) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_THAT(Ints(Run1("Shape", {}, {x})), ElementsAre(2, 3, 4));
  EXPECT_THAT(Ints(Run1("Shape", Attrs({{"start", int64_t{1}}}), {x})), ElementsAre(3, 4));
  EXPECT_THAT(Ints(Run1("Shape", Attrs({{"end", int64_t{-1}}}), {x})), ElementsAre(2, 3));
  EXPECT_THAT(Ints(Run1("Shape", Attrs({{"start", int64_t{-2}}, {"end", int64_t{10}}}), {x})),
              ElementsAre(3, 4));
  EXPECT_EQ(Run1("Shape", Attrs({{"start", int64_t{2}}, {"end", int64_t{1}}}), {x}).shape(),
            (Shape{0}));
}

TEST(Shape, Shape_and_Size_are_constants_of_a_runtime_input) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3}, true);
  ir::Node* shape = g.AddNode("Shape", "s", {x}, {g.AddValue("s_out")});
  ir::Node* size = g.AddNode("Size", "n", {x}, {g.AddValue("n_out")});
  ASSERT_TRUE(InferNode(*shape, 17).ok());
  ASSERT_TRUE(InferNode(*size, 17).ok());
  ASSERT_TRUE(shape->output(0)->is_constant());
  EXPECT_THAT(Ints(shape->output(0)->constant), ElementsAre(2, 3));
  ASSERT_TRUE(size->output(0)->is_constant());
  EXPECT_EQ(size->output(0)->shape, Shape{});
  EXPECT_THAT(Ints(size->output(0)->constant), ElementsAre(6));
}

TEST(Size, Counts_elements) {
  Tensor n = Run1("Size", {}, {Iota({2, 3})});
  EXPECT_EQ(n.dtype(), DType::kInt64);
  EXPECT_EQ(n.shape(), Shape{});
  EXPECT_THAT(Ints(n), ElementsAre(6));
}

TEST(Constant, Every_value_form) {
  Tensor t = Run1("Constant", Attrs({{"value", I64({4, 5}, {2})}}), {});
  EXPECT_THAT(Ints(t), ElementsAre(4, 5));
  Tensor f = Run1("Constant", Attrs({{"value_float", 2.5f}}), {});
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.shape(), Shape{});
  EXPECT_THAT(Floats(f), ElementsAre(2.5f));
  Tensor fs = Run1("Constant", Attrs({{"value_floats", std::vector<float>{1, 2}}}), {});
  EXPECT_EQ(fs.shape(), (Shape{2}));
  Tensor i = Run1("Constant", Attrs({{"value_int", int64_t{-3}}}), {});
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_THAT(Ints(i), ElementsAre(-3));
  Tensor is = Run1("Constant", Attrs({{"value_ints", std::vector<int64_t>{1, 2, 3}}}), {});
  EXPECT_THAT(Ints(is), ElementsAre(1, 2, 3));
}

TEST(Constant, Constant_rejects_strings_and_missing_value) {
  Status s = RunError("Constant", Attrs({{"value_string", std::string("hi")}}), {});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "Constant 'node': string constants are not supported");
  s = RunError("Constant", {}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("needs exactly one of the attributes"));
}

TEST(ConstantOfShape, Default_zero_float_and_typed_value) {
  Tensor z = Run1("ConstantOfShape", {}, {I64s({2, 3})});
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_THAT(Floats(z), ElementsAre(0, 0, 0, 0, 0, 0));
  Tensor sevens = Run1("ConstantOfShape", Attrs({{"value", I64({7}, {1})}}), {I64s({3})});
  EXPECT_EQ(sevens.dtype(), DType::kInt64);
  EXPECT_THAT(Ints(sevens), ElementsAre(7, 7, 7));
  Tensor scalar = Run1("ConstantOfShape", Attrs({{"value", F16({1.5f}, {1})}}), {I64s({})});
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_THAT(Floats(scalar), ElementsAre(1.5f));
}

TEST(Identity, Copies_any_dtype) {
  Tensor out = Run1("Identity", {}, {I64({-1, 5}, {2})});
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_THAT(Ints(out), ElementsAre(-1, 5));
}

TEST(Dropout, Inference_passes_through_with_an_all_true_mask) {
  Tensor x = F32({1, -2, 3}, {3});
  auto out = RunAll("Dropout", {}, {x, F32({0.5f}, {})}, 2);
  EXPECT_THAT(Floats(out[0]), ElementsAre(1, -2, 3));
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_THAT(Ints(out[1]), ElementsAre(1, 1, 1));
  Status s = RunError("Dropout", {}, {x, F32({0.5f}, {}), Tensor::FromVector<bool>({true}, {})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(Dropout, Opset6_needs_is_test) {
  Tensor x = F32({1, -2, 3}, {3});
  auto out = RunAll("Dropout", Attrs({{"is_test", int64_t{1}}, {"ratio", 0.3f}}), {x}, 2, 6);
  EXPECT_THAT(Floats(out[0]), ElementsAre(1, -2, 3));
  EXPECT_EQ(out[1].dtype(), DType::kFloat32);
  Status s = RunError("Dropout", {}, {x}, 1, 6);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("is_test=0 (training mode, the default before opset 7)"));
}

// ---------------------------------------------------------------------------
// Range, EyeLike, Trilu

TEST(Range, Integer_float_and_negative_delta) {
  Tensor a = Run1("Range", {}, {I64({0}, {}), I64({10}, {}), I64({3}, {})});
  EXPECT_THAT(Ints(a), ElementsAre(0, 3, 6, 9));
  Tensor b = Run1("Range", {}, {F32({1}, {}), F32({2}, {}), F32({0.25f}, {})});
  EXPECT_THAT(Floats(b), ElementsAre(1, 1.25f, 1.5f, 1.75f));
  Tensor c = Run1("Range", {}, {I32({10}, {}), I32({4}, {}), I32({-2}, {})});
  EXPECT_EQ(c.dtype(), DType::kInt32);
  EXPECT_THAT(Ints(c), ElementsAre(10, 8, 6));
  EXPECT_EQ(Run1("Range", {}, {I64({5}, {}), I64({1}, {}), I64({1}, {})}).shape(), (Shape{0}));
}

TEST(Range, Range_rejects_zero_delta) {
  Status s = RunError("Range", {}, {I64({0}, {}), I64({3}, {}), I64({0}, {})});
  EXPECT_EQ(s.message(), "Range 'node': delta is 0");
}

TEST(EyeLike, Diagonals_and_dtype) {
  Tensor id = Run1("EyeLike", {}, {Iota({3, 3})});
  EXPECT_THAT(Floats(id), ElementsAre(1, 0, 0, 0, 1, 0, 0, 0, 1));
  Tensor up = Run1("EyeLike", Attrs({{"k", int64_t{1}}, {"dtype", int64_t{7}}}), {Iota({2, 3})});
  EXPECT_EQ(up.dtype(), DType::kInt64);
  EXPECT_THAT(Ints(up), ElementsAre(0, 1, 0, 0, 0, 1));
  Tensor down = Run1("EyeLike", Attrs({{"k", int64_t{-2}}}), {Iota({3, 2})});
  EXPECT_THAT(Floats(down), ElementsAre(0, 0, 0, 0, 1, 0));
}

TEST(Trilu, Upper_and_lower_with_k) {
  Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_THAT(Floats(Run1("Trilu", {}, {x})), ElementsAre(1, 2, 3, 0, 5, 6, 0, 0, 9));
  EXPECT_THAT(Floats(Run1("Trilu", {}, {x, I64({1}, {})})), ElementsAre(0, 2, 3, 0, 0, 6, 0, 0, 0));
  EXPECT_THAT(Floats(Run1("Trilu", Attrs({{"upper", int64_t{0}}}), {x, I64({-1}, {})})),
              ElementsAre(0, 0, 0, 4, 0, 0, 7, 8, 0));
}

// ---------------------------------------------------------------------------
// Pad

TEST(Pad, Constant_mode_with_value_input) {
  // pads: [row_begin, col_begin, row_end, col_end].
  Tensor x = F32({1, 2, 3, 4}, {2, 2});
  Tensor out = Run1("Pad", {}, {x, I64s({1, 0, 0, 1}), F32({9}, {})});
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_THAT(Floats(out), ElementsAre(9, 9, 9, 1, 2, 9, 3, 4, 9));
  Tensor zeros = Run1("Pad", {}, {x, I64s({0, 1, 0, 0})});
  EXPECT_THAT(Floats(zeros), ElementsAre(0, 1, 2, 0, 3, 4));
}

TEST(Pad, Reflect_edge_and_wrap_modes) {
  Tensor x = I64({1, 2, 3}, {3});
  auto mode = [](const char* m) { return Attrs({{"mode", std::string(m)}}); };
  EXPECT_THAT(Ints(Run1("Pad", mode("reflect"), {x, I64s({2, 2})})),
              ElementsAre(3, 2, 1, 2, 3, 2, 1));
  EXPECT_THAT(Ints(Run1("Pad", mode("reflect"), {x, I64s({5, 0})})),
              ElementsAre(2, 1, 2, 3, 2, 1, 2, 3));
  EXPECT_THAT(Ints(Run1("Pad", mode("edge"), {x, I64s({2, 1})})), ElementsAre(1, 1, 1, 2, 3, 3));
  EXPECT_THAT(Ints(Run1("Pad", mode("wrap"), {x, I64s({2, 1})})), ElementsAre(2, 3, 1, 2, 3, 1));
  Tensor m = Run1("Pad", mode("reflect"), {F32({1, 2, 3, 4}, {2, 2}), I64s({0, 1, 0, 1})});
  EXPECT_THAT(Floats(m), ElementsAre(2, 1, 2, 1, 4, 3, 4, 3));
}

TEST(Pad, Negative_pads_crop) {
  Tensor out = Run1("Pad", {}, {I64({1, 2, 3, 4}, {4}), I64s({-1, 1})});
  EXPECT_THAT(Ints(out), ElementsAre(2, 3, 4, 0));
  Tensor edge =
      Run1("Pad", Attrs({{"mode", std::string("edge")}}), {I64({1, 2, 3, 4}, {4}), I64s({2, -3})});
  EXPECT_THAT(Ints(edge), ElementsAre(1, 1, 1));
}

TEST(Pad, Attributes_before_opset_11) {
  Tensor out = Run1("Pad", Attrs({{"pads", std::vector<int64_t>{1, 1}}, {"value", 5.0f}}),
                    {F32({1, 2, 3}, {3})}, 10);
  EXPECT_THAT(Floats(out), ElementsAre(5, 1, 2, 3, 5));
}

TEST(Pad, Pad_rejects_wrong_pad_count_and_overcrop) {
  Status s = RunError("Pad", {}, {Iota({2, 2}), I64s({1, 1})});
  EXPECT_EQ(s.message(), "Pad 'node': pads [1,1] must have 4 values for input shape 2x2");
  s = RunError("Pad", {}, {Iota({2}), I64s({-2, -1})});
  EXPECT_EQ(s.message(), "Pad 'node': pads [-2,-1] crop axis 0 of input shape 2 below size 0");
}

// ---------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth

TEST(DepthToSpace, DCR_and_CRD) {
  Tensor x = Iota({1, 8, 1, 1});
  Tensor dcr = Run1("DepthToSpace", Attrs({{"blocksize", int64_t{2}}}), {x});
  EXPECT_EQ(dcr.shape(), (Shape{1, 2, 2, 2}));
  // DCR: output (c, i, j) reads channel (i * 2 + j) * 2 + c.
  EXPECT_THAT(Floats(dcr), ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  Tensor crd =
      Run1("DepthToSpace", Attrs({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}), {x});
  // CRD: output (c, i, j) reads channel c * 4 + i * 2 + j.
  EXPECT_THAT(Floats(crd), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST(DepthToSpace, Interleaves_spatial_positions) {
  // Channels 0..3 of a 1x4x1x2 input hold 10*c + w.
  Tensor x = F32({0, 1, 10, 11, 20, 21, 30, 31}, {1, 4, 1, 2});
  Tensor out = Run1("DepthToSpace", Attrs({{"blocksize", int64_t{2}}}), {x});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 2, 4}));
  EXPECT_THAT(Floats(out), ElementsAre(0, 10, 1, 11, 20, 30, 21, 31));
}

TEST(DepthToSpace, DepthToSpace_rejects_channels_not_divisible) {
  Status s = RunError("DepthToSpace", Attrs({{"blocksize", int64_t{2}}}), {Iota({1, 6, 1, 1})});
  EXPECT_EQ(s.message(),
            "DepthToSpace 'node': channels 6 of input shape 1x6x1x1 are not a multiple of "
            "blocksize^2 = 4");
}

TEST(SpaceToDepth, Moves_blocks_to_channels_and_inverts_DCR) {
  Tensor x = Iota({1, 2, 2, 2});
  Tensor out = Run1("SpaceToDepth", Attrs({{"blocksize", int64_t{2}}}), {x});
  EXPECT_EQ(out.shape(), (Shape{1, 8, 1, 1}));
  EXPECT_THAT(Floats(out), ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  Tensor big = Iota({1, 3, 4, 6});
  Tensor round = Run1("DepthToSpace", Attrs({{"blocksize", int64_t{2}}}),
                      {Run1("SpaceToDepth", Attrs({{"blocksize", int64_t{2}}}), {big})});
  EXPECT_THAT(Floats(round), ElementsAreArray(Floats(big)));
}

// ---------------------------------------------------------------------------
// Resize, Upsample

Tensor Square() { return F32({1, 2, 3, 4}, {1, 1, 2, 2}); }
Tensor Scales(std::vector<float> s) {
  const int64_t n = static_cast<int64_t>(s.size());
  return F32(s, {n});
}
AttributeMap ResizeAttrs(const char* mode, const char* coord,
                         const char* nearest = "round_prefer_floor") {
  return Attrs({{"mode", std::string(mode)},
                {"coordinate_transformation_mode", std::string(coord)},
                {"nearest_mode", std::string(nearest)}});
}

TEST(Resize, Nearest_half_pixel_upsample) {
  Tensor out = Run1("Resize", {}, {Square(), Tensor(), Scales({1, 1, 2, 2})});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_THAT(Floats(out), ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4));
}

TEST(Resize, Nearest_modes_with_asymmetric_coordinates) {
  // Source columns x / 2 = 0, 0.5, 1, 1.5 for the four output columns.
  Tensor row = F32({1, 2}, {1, 1, 1, 2});
  Tensor s = Scales({1, 1, 1, 2});
  auto run = [&](const char* nearest) {
    return Floats(
        Run1("Resize", ResizeAttrs("nearest", "asymmetric", nearest), {row, Tensor(), s}));
  };
  EXPECT_THAT(run("round_prefer_floor"), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(run("round_prefer_ceil"), ElementsAre(1, 2, 2, 2));
  EXPECT_THAT(run("floor"), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(run("ceil"), ElementsAre(1, 2, 2, 2));
}

TEST(Resize, Nearest_downsample_spec_example) {
  Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  Tensor out = Run1("Resize", ResizeAttrs("nearest", "asymmetric"),
                    {x, Tensor(), Scales({1, 1, 0.6f, 0.6f})});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_THAT(Floats(out), ElementsAre(1, 3));
}

TEST(Resize, Linear_half_pixel_and_pytorch_half_pixel) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel"}) {
    Tensor out =
        Run1("Resize", ResizeAttrs("linear", coord), {Square(), Tensor(), Scales({1, 1, 2, 2})});
    EXPECT_THAT(Floats(out), ElementsAre(1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f,
                                         3.25f, 3.5f, 3, 3.25f, 3.75f, 4))
        << coord;
  }
}

TEST(Resize, Linear_align_corners) {
  Tensor out = Run1("Resize", ResizeAttrs("linear", "align_corners"),
                    {Square(), Tensor(), Scales({1, 1, 2, 2})});
  const float t = 1.0f / 3, tt = 2.0f / 3;
  EXPECT_THAT(Floats(out),
              Pointwise(FloatNear(1e-6f),
                        std::vector<float>{1, 1 + t, 1 + tt, 2, 1 + tt, 2, 2 + t, 2 + tt, 2 + t,
                                           2 + tt, 3, 3 + t, 3, 3 + t, 3 + tt, 4}));
}

TEST(Resize, Linear_asymmetric) {
  Tensor out = Run1("Resize", ResizeAttrs("linear", "asymmetric"),
                    {Square(), Tensor(), Scales({1, 1, 2, 2})});
  EXPECT_THAT(Floats(out), ElementsAre(1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4));
}

TEST(Resize, Sizes_to_one_pixel_per_coordinate_mode) {
  // One output pixel of two: half_pixel samples the middle, the others pixel 0.
  Tensor sizes = I64s({1, 1, 1, 1});
  auto run = [&](const char* coord) {
    return Floats(
        Run1("Resize", ResizeAttrs("linear", coord), {Square(), Tensor(), Tensor(), sizes}));
  };
  EXPECT_THAT(run("half_pixel"), ElementsAre(2.5f));
  EXPECT_THAT(run("pytorch_half_pixel"), ElementsAre(1));
  EXPECT_THAT(run("align_corners"), ElementsAre(1));
  EXPECT_THAT(run("asymmetric"), ElementsAre(1));
}

TEST(Resize, Opset_11_sizes_with_empty_roi_and_scales) {
  Tensor empty = F32({}, {0});
  Tensor out = Run1("Resize", {}, {Square(), empty, empty, I64s({1, 1, 3, 3})}, 11);
  EXPECT_EQ(out.shape(), (Shape{1, 1, 3, 3}));
  // Scale 1.5, half_pixel: sources -1/6, 0.5, 7/6; round_prefer_floor takes 0.5 to 0.
  EXPECT_THAT(Floats(out), ElementsAre(1, 1, 2, 1, 1, 2, 3, 3, 4));
}

TEST(Resize, Opset_10_takes_scales_as_second_input) {
  Tensor out = Run1("Resize", {}, {Square(), Scales({1, 1, 2, 2})}, 10);
  EXPECT_THAT(Floats(out), ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4));
}

TEST(Resize, Integer_and_float16_data) {
  Tensor u8 = Tensor::FromVector<uint8_t>({10, 20}, {1, 2});
  Tensor out = Run1("Resize", ResizeAttrs("linear", "asymmetric"), {u8, Tensor(), Scales({1, 2})});
  EXPECT_EQ(out.dtype(), DType::kUInt8);
  EXPECT_THAT(Ints(out), ElementsAre(10, 15, 20, 20));
  Tensor h = Run1("Resize", {}, {F16({1.5f, -2}, {2}), Tensor(), Scales({2})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_THAT(Floats(h), ElementsAre(1.5f, 1.5f, -2, -2));
}

// Resize-18's antialias stretches the linear filter by 1 / scale when
// shrinking: 8 -> 3 averages over about three inputs per output (the values
// are the ONNX reference implementation's).
TEST(Resize, Antialias_widens_the_filter_when_shrinking) {
  Tensor x(DType::kFloat32, {1, 8});
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  Tensor y = Run1("Resize", Attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}),
                  {x, Tensor(), Tensor(), I64s({1, 3})}, 18);
  EXPECT_THAT(Floats(y), ElementsAre(FloatNear(1.97674419f, 1e-5f), FloatNear(4.5f, 1e-5f),
                                     FloatNear(7.02325581f, 1e-5f)));
  Tensor plain = Run1("Resize", Attrs({{"mode", std::string("linear")}}),
                      {x, Tensor(), Tensor(), I64s({1, 3})}, 18);
  EXPECT_NE(Floats(plain)[0], Floats(y)[0]);
}

TEST(Resize, Resize_rejects_a_bad_aspect_policy_and_both_scales_and_sizes) {
  Status s = RunError("Resize", Attrs({{"keep_aspect_ratio_policy", std::string("squash")}}),
                      {Square(), Tensor(), Tensor(), I64s({1, 1, 4, 4})}, 1, 18);
  EXPECT_EQ(s.message(),
            "Resize 'node': keep_aspect_ratio_policy 'squash' must be stretch, not_larger or "
            "not_smaller");
  s = RunError("Resize", {}, {Square(), Tensor(), Scales({1, 1, 2, 2}), I64s({1, 1, 4, 4})});
  EXPECT_EQ(s.message(), "Resize 'node': exactly one of scales and sizes must be given");
  s = RunError("Resize", {}, {Square(), Tensor(), Scales({2, 2})});
  EXPECT_EQ(s.message(), "Resize 'node': scales have 2 values; input shape 1x1x2x2 has rank 4");
}

TEST(Upsample, Nearest_opset_9_and_linear_opset_7) {
  Tensor near = Run1("Upsample", {}, {Square(), Scales({1, 1, 2, 3})}, 9);
  EXPECT_EQ(near.shape(), (Shape{1, 1, 4, 6}));
  EXPECT_THAT(Floats(near),
              ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4));
  Tensor lin =
      Run1("Upsample",
           Attrs({{"mode", std::string("linear")}, {"scales", std::vector<float>{1, 1, 2, 4}}}),
           {Square()}, 7);
  EXPECT_EQ(lin.shape(), (Shape{1, 1, 4, 8}));
  const std::vector<float> r0 = {1, 1.25f, 1.5f, 1.75f, 2, 2, 2, 2};
  std::vector<float> want;
  for (float add : {0.0f, 1.0f, 2.0f, 2.0f}) {
    for (float v : r0) want.push_back(v + add);
  }
  EXPECT_THAT(Floats(lin), ElementsAreArray(want));
}

// ---------------------------------------------------------------------------
// OneHot, NonZero, CumSum, TopK

TEST(OneHot, Negative_and_out_of_range_indices) {
  Tensor out = Run1("OneHot", {}, {I64s({0, 2, -1, 5}), I64({3}, {}), F32({0, 1}, {2})});
  EXPECT_EQ(out.shape(), (Shape{4, 3}));
  EXPECT_THAT(Floats(out), ElementsAre(1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0));
  Tensor axis0 = Run1("OneHot", Attrs({{"axis", int64_t{0}}}),
                      {I64s({1, 0}), F32({3}, {1}), I64({2, 5}, {2})});
  EXPECT_EQ(axis0.shape(), (Shape{3, 2}));
  EXPECT_EQ(axis0.dtype(), DType::kInt64);
  EXPECT_THAT(Ints(axis0), ElementsAre(2, 5, 5, 2, 2, 2));
}

TEST(NonZero, Coordinates_of_a_constant_input) {
  Tensor out = Run1("NonZero", {}, {F32({1, 0, 1, 1}, {2, 2})});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(Ints(out), ElementsAre(0, 1, 1, 0, 0, 1));
}

TEST(NonZero, NonZero_rejects_an_input_unknown_at_compile_time) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {4}, true);
  ir::Node* n = g.AddNode("NonZero", "nz", {x}, {g.AddValue("y")});
  Status s = InferNode(*n, 17);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("NonZero 'nz': the output shape depends on the values"));
}

TEST(CumSum, Exclusive_and_reverse) {
  Tensor x = I64({1, 2, 3, 4, 5}, {5});
  Tensor axis = I64({0}, {});
  auto run = [&](int64_t exclusive, int64_t reverse) {
    return Ints(Run1("CumSum", Attrs({{"exclusive", exclusive}, {"reverse", reverse}}), {x, axis}));
  };
  EXPECT_THAT(run(0, 0), ElementsAre(1, 3, 6, 10, 15));
  EXPECT_THAT(run(1, 0), ElementsAre(0, 1, 3, 6, 10));
  EXPECT_THAT(run(0, 1), ElementsAre(15, 14, 12, 9, 5));
  EXPECT_THAT(run(1, 1), ElementsAre(14, 12, 9, 5, 0));
  Tensor rows = Run1("CumSum", {}, {F32({1, 2, 3, 4, 5, 6}, {2, 3}), I32({-1}, {})});
  EXPECT_THAT(Floats(rows), ElementsAre(1, 3, 6, 4, 9, 15));
}

TEST(TopK, Largest_smallest_and_ties) {
  Tensor x = Iota({3, 4});
  auto out = RunAll("TopK", {}, {x, I64s({3})}, 2);
  EXPECT_EQ(out[0].shape(), (Shape{3, 3}));
  EXPECT_THAT(Floats(out[0]), ElementsAre(3, 2, 1, 7, 6, 5, 11, 10, 9));
  EXPECT_THAT(Ints(out[1]), ElementsAre(3, 2, 1, 3, 2, 1, 3, 2, 1));
  auto small =
      RunAll("TopK", Attrs({{"largest", int64_t{0}}, {"axis", int64_t{0}}}), {x, I64s({1})}, 2);
  EXPECT_THAT(Floats(small[0]), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Ints(small[1]), ElementsAre(0, 0, 0, 0));
  auto ties = RunAll("TopK", {}, {I64({1, 3, 3, 2}, {4}), I64s({2})}, 2);
  EXPECT_THAT(Ints(ties[0]), ElementsAre(3, 3));
  EXPECT_THAT(Ints(ties[1]), ElementsAre(1, 2));
  auto nan = RunAll("TopK", {}, {F32({1, std::nanf(""), 3}, {3}), I64s({2})}, 2);
  EXPECT_THAT(Ints(nan[1]), ElementsAre(1, 2));
  auto attr = RunAll("TopK", Attrs({{"k", int64_t{1}}}), {F32({4, 9, 2}, {3})}, 2, 9);
  EXPECT_THAT(Floats(attr[0]), ElementsAre(9));
}

TEST(TopK, TopK_rejects_k_larger_than_the_axis) {
  Status s = RunError("TopK", {}, {Iota({3}), I64s({4})}, 2);
  EXPECT_EQ(s.message(), "TopK 'node': K = 4 is out of range [0, 3] for axis 0 of input shape 3");
}

// ---------------------------------------------------------------------------
// Registration

TEST(TensorOps, Registered_with_their_op_class) {
  const OpRegistry& r = OpRegistry::Global();
  for (const char* op : {"Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
                         "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Expand",
                         "Identity", "Dropout", "Tile", "Pad", "DepthToSpace", "SpaceToDepth"}) {
    const OpSchema* s = r.Find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kInjective) << op;
  }
  for (const char* op :
       {"ScatterElements", "ScatterND", "Shape", "Size", "Constant", "ConstantOfShape", "Range",
        "Resize", "Upsample", "Trilu", "OneHot", "NonZero", "CumSum", "TopK", "EyeLike"}) {
    const OpSchema* s = r.Find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kOpaque) << op;
  }
}

}  // namespace
}  // namespace tessel::ops
