#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

Tensor F32(const std::vector<float>& v, const Shape& s) { return Tensor::FromVector<float>(v, s); }
Tensor I64(const std::vector<int64_t>& v, const Shape& s) {
  return Tensor::FromVector<int64_t>(v, s);
}

// Runs a one-output op; an undefined Tensor (and a test failure) on error.
Tensor RunOne(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& in,
              int opset = 17) {
  StatusOr<std::vector<Tensor>> r = RunSingleOp(op, attrs, in, 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return Tensor();
  return r.value()[0];
}

Status RunError(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& in,
                int opset = 17) {
  return RunSingleOp(op, attrs, in, 1, opset).status();
}

void ExpectValues(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
                  double tol = 0.0) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.shape(), shape) << ShapeToString(t.shape());
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    EXPECT_NEAR(t.GetAsDouble(i), expected[i], tol) << "element " << i;
  }
}

AttributeMap Attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  AttributeMap m;
  for (const auto& [k, v] : kv) m.Set(k, v);
  return m;
}

AttributeMap Axes(std::vector<int64_t> axes, int64_t keepdims = 1) {
  return Attrs({{"axes", std::move(axes)}, {"keepdims", keepdims}});
}

AttributeMap KeepDims(int64_t keepdims) { return Attrs({{"keepdims", keepdims}}); }

// x[i][j][k] = 1 + 6i + 2j + k, shape 2x3x2.
Tensor X() { return F32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2}); }

// ---------------------------------------------------------------------------
// Reduce*

TEST(ReduceTest, SumWithAxesAttribute) {
  ExpectValues(RunOne("ReduceSum", Axes({1}), {X()}, 11), {2, 1, 2}, {9, 12, 27, 30});
  ExpectValues(RunOne("ReduceSum", Axes({1}, 0), {X()}, 11), {2, 2}, {9, 12, 27, 30});
  ExpectValues(RunOne("ReduceSum", Axes({-1}, 0), {X()}, 11), {2, 3}, {3, 7, 11, 15, 19, 23});
  ExpectValues(RunOne("ReduceSum", Axes({0, 2}), {X()}, 11), {1, 3, 1}, {18, 26, 34});
  ExpectValues(RunOne("ReduceSum", {}, {X()}, 11), {1, 1, 1}, {78});
  ExpectValues(RunOne("ReduceSum", KeepDims(0), {X()}, 11), {}, {78});
}

TEST(ReduceTest, SumWithAxesInput) {
  ExpectValues(RunOne("ReduceSum", KeepDims(0), {X(), I64({-1}, {1})}, 13), {2, 3},
               {3, 7, 11, 15, 19, 23});
  ExpectValues(RunOne("ReduceSum", {}, {X(), I64({2, 0}, {2})}, 13), {1, 3, 1}, {18, 26, 34});
  // No axes, or empty axes, reduce everything unless noop_with_empty_axes.
  ExpectValues(RunOne("ReduceSum", {}, {X()}, 13), {1, 1, 1}, {78});
  ExpectValues(RunOne("ReduceSum", KeepDims(0), {X(), I64({}, {0})}, 13), {}, {78});
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  ExpectValues(RunOne("ReduceSum", Attrs({{"noop_with_empty_axes", int64_t{1}}}), {X()}, 13),
               {2, 3, 2}, x);
  ExpectValues(
      RunOne("ReduceSum", Attrs({{"noop_with_empty_axes", int64_t{1}}}), {X(), I64({}, {0})}, 13),
      {2, 3, 2}, x);
  // noop_with_empty_axes does nothing when there are axes.
  ExpectValues(
      RunOne("ReduceSum", Attrs({{"noop_with_empty_axes", int64_t{1}}}), {X(), I64({1}, {1})}, 13),
      {2, 1, 2}, {9, 12, 27, 30});
}

TEST(ReduceTest, MeanMaxMin) {
  ExpectValues(RunOne("ReduceMean", Axes({0, 2}), {X()}), {1, 3, 1}, {4.5, 6.5, 8.5});
  ExpectValues(RunOne("ReduceMean", KeepDims(0), {X()}), {}, {6.5});
  ExpectValues(RunOne("ReduceMax", Axes({-2}, 0), {X()}), {2, 2}, {5, 6, 11, 12});
  ExpectValues(RunOne("ReduceMax", Axes({0}), {X()}), {1, 3, 2}, {7, 8, 9, 10, 11, 12});
  ExpectValues(RunOne("ReduceMin", Axes({1}), {X()}), {2, 1, 2}, {1, 2, 7, 8});
  ExpectValues(RunOne("ReduceMin", {}, {X()}), {1, 1, 1}, {1});
  Tensor nan = RunOne("ReduceMax", KeepDims(0), {F32({1, NAN, 3}, {3})});
  ASSERT_TRUE(nan.defined());
  EXPECT_TRUE(std::isnan(nan.GetAsDouble(0)));
}

TEST(ReduceTest, ProdL1L2SumSquare) {
  const Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectValues(RunOne("ReduceProd", Axes({1}, 0), {a}), {2}, {6, 120});
  ExpectValues(RunOne("ReduceProd", Axes({-2}), {a}), {1, 3}, {4, 10, 18});
  const Tensor signed_a = F32({1, -2, 3, -4, 5, -6}, {2, 3});
  ExpectValues(RunOne("ReduceL1", Axes({1}, 0), {signed_a}), {2}, {6, 15});
  ExpectValues(RunOne("ReduceL1", {}, {signed_a}), {1, 1}, {21});
  const Tensor b = F32({3, 4, 6, 8}, {2, 2});
  ExpectValues(RunOne("ReduceL2", Axes({1}, 0), {b}), {2}, {5, 10});
  ExpectValues(RunOne("ReduceL2", Axes({0}), {b}), {1, 2}, {std::sqrt(45.0), std::sqrt(80.0)},
               1e-6);
  ExpectValues(RunOne("ReduceSumSquare", Axes({-1}, 0), {b}), {2}, {25, 100});
  ExpectValues(RunOne("ReduceSumSquare", KeepDims(0), {signed_a}), {}, {91});
}

TEST(ReduceTest, LogSumAndStableLogSumExp) {
  const Tensor a = F32({1, 2, 3, 4}, {2, 2});
  ExpectValues(RunOne("ReduceLogSum", Axes({1}, 0), {a}), {2}, {std::log(3.0), std::log(7.0)},
               1e-6);
  ExpectValues(RunOne("ReduceLogSum", {}, {a}), {1, 1}, {std::log(10.0)}, 1e-6);
  // A naive exp(1000) overflows; the shifted form does not.
  const Tensor big = F32({1, 2, 1000, 1000}, {2, 2});
  ExpectValues(RunOne("ReduceLogSumExp", Axes({1}, 0), {big}), {2},
               {std::log(std::exp(1.0) + std::exp(2.0)), 1000 + std::log(2.0)}, 1e-4);
  ExpectValues(RunOne("ReduceLogSumExp", Axes({0}), {F32({-INFINITY, 0}, {2})}), {1}, {0});
}

TEST(ReduceTest, IntegerReductions) {
  const Tensor a = Tensor::FromVector<int32_t>({1, -2, 3, 4, 5, -6}, {2, 3});
  Tensor sum = RunOne("ReduceSum", Axes({1}, 0), {a}, 11);
  ASSERT_EQ(sum.dtype(), DType::kInt32);
  ExpectValues(sum, {2}, {2, 3});
  ExpectValues(RunOne("ReduceMin", Axes({0}, 0), {a}), {3}, {1, -2, -6});
  ExpectValues(RunOne("ReduceMean", Axes({1}, 0), {a}), {2}, {0, 1});
  const Tensor b = Tensor::FromVector<int64_t>({3000000000LL, 3, -7, 2}, {2, 2});
  Tensor prod = RunOne("ReduceProd", Axes({1}, 0), {b});
  ASSERT_EQ(prod.dtype(), DType::kInt64);
  EXPECT_EQ(prod.data<int64_t>()[0], 9000000000LL);
  EXPECT_EQ(prod.data<int64_t>()[1], -14);
  Tensor max = RunOne("ReduceMax", Axes({0}, 0), {b});
  EXPECT_EQ(max.data<int64_t>()[0], 3000000000LL);
  EXPECT_EQ(max.data<int64_t>()[1], 3);
  ExpectValues(RunOne("ReduceL1", KeepDims(0), {a}), {}, {21});
}

TEST(ReduceTest, AxesInputFromOpset18) {
  ExpectValues(RunOne("ReduceMean", KeepDims(0), {X(), I64({1}, {1})}, 18), {2, 2}, {3, 4, 9, 10});
}

TEST(ReduceTest, Reduce_rejects_bad_axis) {
  Status s = RunError("ReduceSum", Axes({3}), {X()}, 11);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "ReduceSum 'node': axis 3 is out of range [-3, 2] for rank 3");
  s = RunError("ReduceMax", Axes({-4}), {X()});
  EXPECT_EQ(s.message(), "ReduceMax 'node': axis -4 is out of range [-3, 2] for rank 3");
  s = RunError("ReduceSum", {}, {X(), I64({5}, {1})}, 13);
  EXPECT_EQ(s.message(), "ReduceSum 'node': axis 5 is out of range [-3, 2] for rank 3");
}

TEST(ReduceTest, Reduce_rejects_repeated_axes) {
  Status s = RunError("ReduceMean", Axes({1, -2}), {X()});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "ReduceMean 'node': axis -2 is repeated in axes [1,-2]");
  s = RunError("ReduceSum", {}, {X(), I64({0, 0}, {2})}, 13);
  EXPECT_EQ(s.message(), "ReduceSum 'node': axis 0 is repeated in axes [0,0]");
}

TEST(ReduceTest, Reduce_rejects_axes_in_the_wrong_place) {
  Status s = RunError("ReduceSum", {}, {X(), I64({1}, {1})}, 11);
  EXPECT_EQ(s.message(), "ReduceSum 'node': axes is an attribute in opset 11, not an input");
  s = RunError("ReduceSum", Axes({1}), {X()}, 13);
  EXPECT_EQ(s.message(), "ReduceSum 'node': axes is an input in opset 13, not an attribute");
}

TEST(ReduceTest, Reduce_rejects_non_constant_axes) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3}, true);
  ir::Value* axes = g.AddValue("axes", DType::kInt64, {1}, true);
  ir::Node* n = g.AddNode("ReduceSum", "rs", {x, axes}, {g.AddValue("y")});
  Status s = InferNode(*n, 13);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "ReduceSum 'rs': input axes ('axes') must be known at compile time; tessel "
            "compiles static shapes");
}

TEST(ReduceTest, Reduce_rejects_integer_l2) {
  Status s = RunError("ReduceL2", {}, {Tensor::FromVector<int32_t>({1, 2}, {2})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("has dtype int32"), std::string::npos) << s.message();
}

// ---------------------------------------------------------------------------
// ArgMax / ArgMin

TEST(ArgTest, ArgMaxArgMin) {
  const Tensor a = F32({1, 3, 3, 5, 2, 5}, {2, 3});
  Tensor y = RunOne("ArgMax", Attrs({{"axis", int64_t{1}}}), {a});
  ASSERT_EQ(y.dtype(), DType::kInt64);
  ExpectValues(y, {2, 1}, {1, 0});
  ExpectValues(RunOne("ArgMax", Attrs({{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}), {a}), {2},
               {1, 0});
  ExpectValues(RunOne("ArgMax", {}, {a}), {1, 3}, {1, 0, 1});
  ExpectValues(RunOne("ArgMin", Attrs({{"axis", int64_t{0}}, {"keepdims", int64_t{0}}}), {a}), {3},
               {0, 1, 0});
  ExpectValues(RunOne("ArgMin", Attrs({{"axis", int64_t{1}}}), {a}), {2, 1}, {0, 1});
  ExpectValues(RunOne("ArgMax", Attrs({{"axis", int64_t{1}}}),
                      {Tensor::FromVector<int64_t>({-5, 9000000000LL, 8999999999LL}, {1, 3})}),
               {1, 1}, {1});
}

TEST(ArgTest, SelectLastIndexOnTies) {
  const Tensor a = F32({1, 3, 3, 5, 2, 5}, {2, 3});
  const AttributeMap last = Attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}});
  ExpectValues(RunOne("ArgMax", last, {a}), {2, 1}, {2, 2});
  const Tensor b = F32({2, 1, 1, 0, 4, 0}, {2, 3});
  ExpectValues(RunOne("ArgMin", last, {b}), {2, 1}, {2, 2});
  ExpectValues(RunOne("ArgMin", Attrs({{"axis", int64_t{1}}}), {b}), {2, 1}, {1, 0});
}

TEST(ArgTest, ArgMax_rejects_bad_axis) {
  Status s = RunError("ArgMax", Attrs({{"axis", int64_t{2}}}), {F32({1, 2}, {1, 2})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "ArgMax 'node': axis 2 is out of range [-2, 1] for rank 2");
  s = RunError("ArgMin", Attrs({{"axis", int64_t{1}}}), {Tensor(DType::kFloat32, {2, 0})});
  EXPECT_EQ(s.message(), "ArgMin 'node': axis 1 of input shape 2x0 is empty");
}

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

// Softmax of a strided group of `n` elements of x written to the same
// positions of y.
void NaiveSoftmax(const std::vector<double>& x, std::vector<double>& y, int64_t base, int64_t n,
                  int64_t stride) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[base + j * stride]);
  for (int64_t j = 0; j < n; ++j) y[base + j * stride] = std::exp(x[base + j * stride]) / sum;
}

TEST(SoftmaxTest, Opset11FlattensOpset13UsesOneAxis) {
  std::vector<float> xf(24);
  std::vector<double> xd(24);
  for (int i = 0; i < 24; ++i) xd[i] = xf[i] = static_cast<float>(std::sin(i * 0.7) * 2);
  const Tensor x = F32(xf, {2, 3, 4});

  // Opset 11, default axis 1: each batch row of 12 elements is one softmax.
  std::vector<double> y11(24), y13(24), y13_axis1(24);
  for (int b = 0; b < 2; ++b) NaiveSoftmax(xd, y11, b * 12, 12, 1);
  // Opset 13, default axis -1: groups of 4.
  for (int r = 0; r < 6; ++r) NaiveSoftmax(xd, y13, r * 4, 4, 1);
  // Opset 13, axis 1: groups of 3 with stride 4.
  for (int b = 0; b < 2; ++b) {
    for (int k = 0; k < 4; ++k) NaiveSoftmax(xd, y13_axis1, b * 12 + k, 3, 4);
  }
  ExpectValues(RunOne("Softmax", {}, {x}, 11), {2, 3, 4}, y11, 1e-6);
  ExpectValues(RunOne("Softmax", {}, {x}, 13), {2, 3, 4}, y13, 1e-6);
  ExpectValues(RunOne("Softmax", Attrs({{"axis", int64_t{1}}}), {x}, 13), {2, 3, 4}, y13_axis1,
               1e-6);
  // Opset 11 with axis 2 flattens only the last dimension: same as opset 13.
  ExpectValues(RunOne("Softmax", Attrs({{"axis", int64_t{2}}}), {x}, 11), {2, 3, 4}, y13, 1e-6);
}

TEST(SoftmaxTest, ExactValuesAndStability) {
  ExpectValues(RunOne("Softmax", {}, {F32({0, std::log(3.0f)}, {2})}), {2}, {0.25, 0.75}, 1e-6);
  ExpectValues(RunOne("LogSoftmax", {}, {F32({0, std::log(3.0f)}, {2})}), {2},
               {std::log(0.25), std::log(0.75)}, 1e-6);
  // Shifted inputs give the same result and no overflow.
  Tensor small = RunOne("Softmax", {}, {F32({0, 1, 2}, {1, 3})});
  Tensor large = RunOne("Softmax", {}, {F32({1000, 1001, 1002}, {1, 3})});
  ASSERT_TRUE(small.defined() && large.defined());
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(small.GetAsDouble(i), large.GetAsDouble(i), 1e-6);
  Tensor log_large = RunOne("LogSoftmax", {}, {F32({1000, 1000}, {2})});
  ExpectValues(log_large, {2}, {-std::log(2.0), -std::log(2.0)}, 1e-6);
  Tensor d = RunOne("Softmax", {}, {Tensor::FromVector<double>({1, 1, 1, 1}, {4})});
  ASSERT_EQ(d.dtype(), DType::kFloat64);
  ExpectValues(d, {4}, {0.25, 0.25, 0.25, 0.25});
}

TEST(SoftmaxTest, Hardmax) {
  const Tensor a = F32({1, 3, 3, 2, 0, 1}, {2, 3});
  ExpectValues(RunOne("Hardmax", {}, {a}), {2, 3}, {0, 1, 0, 1, 0, 0});
  ExpectValues(RunOne("Hardmax", Attrs({{"axis", int64_t{0}}}), {a}, 13), {2, 3},
               {0, 1, 1, 1, 0, 0});
  // Opset 11 with axis 0 flattens everything: one 1 in the whole tensor.
  ExpectValues(RunOne("Hardmax", Attrs({{"axis", int64_t{0}}}), {a}, 11), {2, 3},
               {0, 1, 0, 0, 0, 0});
}

TEST(SoftmaxTest, Softmax_rejects_bad_axis_and_dtype) {
  Status s =
      RunError("Softmax", Attrs({{"axis", int64_t{3}}}), {Tensor(DType::kFloat32, {2, 3, 4})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Softmax 'node': axis 3 is out of range [-3, 2] for rank 3");
  s = RunError("LogSoftmax", {}, {Tensor(DType::kFloat32, {4})}, 11);
  EXPECT_EQ(s.message(), "LogSoftmax 'node': axis 1 is out of range [-1, 0] for rank 1");
  s = RunError("Softmax", {}, {Tensor(DType::kInt32, {4})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace tessel::ops
