// Quantization ops (quantize.cc, quantized_linear.cc) on small hand-computed
// cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

Tensor U8Scalar(uint8_t v) { return U8({v}, {}); }
Tensor F32Scalar(float v) { return F32({v}, {}); }

// ---- QuantizeLinear, DequantizeLinear ---------------------------------------

TEST(QuantizeLinear, Rounds_half_to_even_and_saturates) {
  // x / 2 = 0, 1, 1.5, 2.5, 500, -127, -500; 1.5 and 2.5 both round to 2.
  Tensor x = F32({0, 2, 3, 5, 1000, -254, -1000}, {7});
  Tensor y = Run1("QuantizeLinear", {}, {x, F32Scalar(2), U8Scalar(128)});
  EXPECT_EQ(y.dtype(), DType::kUInt8);
  EXPECT_THAT(Ints(y), ElementsAre(128, 129, 130, 130, 255, 1, 0));
}

TEST(QuantizeLinear, Int8_zero_point_and_default_uint8) {
  Tensor y = Run1("QuantizeLinear", {}, {F32({-300, -1, 1}, {3}), F32Scalar(1), I8({0}, {})});
  EXPECT_EQ(y.dtype(), DType::kInt8);
  EXPECT_THAT(Ints(y), ElementsAre(-128, -1, 1));
  Tensor u = Run1("QuantizeLinear", {}, {F32({-1, 3.4f}, {2}), F32Scalar(1)});
  EXPECT_EQ(u.dtype(), DType::kUInt8);
  EXPECT_THAT(Ints(u), ElementsAre(0, 3));
  // An int32 input divides exactly: 7 / 2 = 3.5 rounds to 4.
  EXPECT_THAT(Ints(Run1("QuantizeLinear", {}, {I32({7}, {1}), F32Scalar(2)})), ElementsAre(4));
}

TEST(QuantizeLinear, NaN_quantizes_to_zero) {
  // 0 / 0 has no integer; tessel defines it as 0 rather than leaving the
  // conversion undefined.
  Tensor y = Run1("QuantizeLinear", {}, {F32({0, 4}, {2}), F32Scalar(0), U8Scalar(3)});
  EXPECT_THAT(Ints(y), ElementsAre(0, 255));
}

TEST(QuantizeLinear, Per_axis_scale_and_zero_point) {
  Tensor x = F32({1, 2, 30, -40}, {2, 2});
  Tensor y = Run1("QuantizeLinear", Attrs({{"axis", int64_t{0}}}),
                  {x, Vec<float>({1, 10}), Vec<uint8_t>({0, 100})});
  EXPECT_THAT(Ints(y), ElementsAre(1, 2, 103, 96));
}

TEST(DequantizeLinear, Per_tensor_per_axis_and_int32) {
  Tensor y = Run1("DequantizeLinear", {}, {U8({0, 3, 128, 255}, {4}), F32Scalar(2), U8Scalar(128)});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_THAT(Doubles(y), ElementsAre(-256, -250, 0, 254));
  Tensor axis = Run1("DequantizeLinear", Attrs({{"axis", int64_t{-1}}}),
                     {I8({-1, 5}, {1, 2}), Vec<float>({0.5f, 2}), Vec<int8_t>({1, 0})});
  EXPECT_THAT(Doubles(axis), ElementsAre(-1, 10));
  EXPECT_THAT(Doubles(Run1("DequantizeLinear", {}, {I32({1000000}, {1}), F32Scalar(0.5f)})),
              ElementsAre(500000));
}

TEST(DequantizeLinear, DequantizeLinear_rejects_bad_parameters) {
  Tensor x = U8({1, 2, 3, 4}, {2, 2});
  Status s = RunError("DequantizeLinear", {}, {x, Vec<float>({1, 2}), Vec<uint8_t>({0, 0})}, 1, 10);
  EXPECT_EQ(s.message(),
            "DequantizeLinear 'node': scale and zero point must be single values before opset "
            "13; got scale shape 2");
  s = RunError("DequantizeLinear", {}, {x, Vec<float>({1, 2, 3})});
  EXPECT_EQ(s.message(),
            "DequantizeLinear 'node': scale 'in1' has shape 3; expected one value or 2 (one per "
            "slice along axis 1 of input shape 2x2)");
  s = RunError("DequantizeLinear", {}, {x, F32Scalar(1), I8({0}, {})});
  EXPECT_EQ(s.message(),
            "DequantizeLinear 'node': inputs 'in0' (uint8) and 'in2' (int8) must have the same "
            "dtype");
  s = RunError("QuantizeLinear", {}, {F64({1}, {1}), F32Scalar(1)});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(DynamicQuantizeLinear, Range_includes_zero) {
  // Range [-204, 51] spans 255, so the scale is 1 and the zero point 204.
  std::vector<Tensor> out =
      RunAll("DynamicQuantizeLinear", {}, {F32({0, 51, -204, 10.4f}, {4})}, 3);
  EXPECT_THAT(Ints(out[0]), ElementsAre(204, 255, 0, 214));
  EXPECT_EQ(out[1].shape(), Shape{});
  EXPECT_THAT(Doubles(out[1]), ElementsAre(1));
  EXPECT_THAT(Ints(out[2]), ElementsAre(204));
  // All zeros: scale 1 / 255, zero point 0.
  out = RunAll("DynamicQuantizeLinear", {}, {F32({0, 0}, {2})}, 3);
  EXPECT_THAT(Ints(out[0]), ElementsAre(0, 0));
  EXPECT_NEAR(out[1].GetAsDouble(0), 1.0 / 255, 1e-9);
  EXPECT_THAT(Ints(out[2]), ElementsAre(0));
}

// ---- MatMulInteger, QLinearMatMul -------------------------------------------

TEST(MatMulInteger, Zero_points_per_tensor_and_per_column) {
  Tensor a = U8({11, 7, 3, 10, 6, 2}, {2, 3});
  Tensor b = U8({1, 4, 2, 5, 3, 6}, {3, 2});
  Tensor y = Run1("MatMulInteger", {}, {a, b, U8({12}, {1})});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_THAT(Ints(y), ElementsAre(-38, -83, -44, -98));
  // b - [1, 4] per column = [[0, 0], [1, 1], [2, 2]].
  y = Run1("MatMulInteger", {}, {a, b, U8({12}, {1}), Vec<uint8_t>({1, 4})});
  EXPECT_THAT(Ints(y), ElementsAre(-23, -23, -26, -26));
}

TEST(MatMulInteger, Broadcasts_batches_and_takes_int8) {
  Tensor a = I8({-1, 2, 3, -4}, {2, 1, 2});
  Tensor b = I8({5, -6}, {2, 1});
  Tensor y = Run1("MatMulInteger", {}, {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 1, 1}));
  EXPECT_THAT(Ints(y), ElementsAre(-17, 39));
  // A 1-D a is a row, dropped from the output shape.
  Tensor v = Run1("MatMulInteger", {}, {I8({1, 1}, {2}), I8({1, 2, 3, 4}, {2, 2})});
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_THAT(Ints(v), ElementsAre(4, 6));
}

TEST(QLinearMatMul, Requantizes_and_saturates) {
  // (a - 0) . (b - 1) = [2, 4] . [0, 2] = 8; 8 * 0.5 * 1 / 2 = 2; + 10.
  Tensor a = U8({2, 4}, {1, 2});
  Tensor b = U8({1, 3}, {2, 1});
  Tensor y = Run1(
      "QLinearMatMul", {},
      {a, F32Scalar(0.5f), U8Scalar(0), b, F32Scalar(1), U8Scalar(1), F32Scalar(2), U8Scalar(10)});
  EXPECT_EQ(y.dtype(), DType::kUInt8);
  EXPECT_THAT(Ints(y), ElementsAre(12));
  y = Run1(
      "QLinearMatMul", {},
      {a, F32Scalar(0.5f), U8Scalar(0), b, F32Scalar(1), U8Scalar(1), F32Scalar(2), U8Scalar(250)});
  EXPECT_THAT(Ints(y), ElementsAre(252));
  y = Run1(
      "QLinearMatMul", {},
      {a, F32Scalar(50), U8Scalar(0), b, F32Scalar(1), U8Scalar(1), F32Scalar(2), I8({0}, {})});
  EXPECT_EQ(y.dtype(), DType::kInt8);
  EXPECT_THAT(Ints(y), ElementsAre(127));
}

TEST(QLinearMatMul, MatMulInteger_rejects_bad_zero_points_and_floats) {
  Tensor a = U8({1, 2, 3, 4}, {2, 2});
  Status s = RunError("MatMulInteger", {}, {a, a, U8Scalar(0), Vec<uint8_t>({1, 2, 3})});
  EXPECT_EQ(s.message(),
            "MatMulInteger 'node': b_zero_point 'in3' has shape 3; expected one value or 2 (one "
            "per column of 'in1')");
  s = RunError("MatMulInteger", {}, {a, U8({1, 2, 3}, {3, 1})});
  EXPECT_EQ(s.message(),
            "MatMulInteger 'node': operand shapes 2x2 and 3x1 do not multiply (inner dimensions 2 "
            "and 3)");
  s = RunError("MatMulInteger", {}, {F32({1}, {1, 1}), F32({1}, {1, 1})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  s = RunError("QLinearMatMul", {},
               {a, F32Scalar(1), U8Scalar(0), a, F32Scalar(1), U8Scalar(0), Vec<float>({1, 2}),
                U8Scalar(0)});
  EXPECT_EQ(s.message(), "QLinearMatMul 'node': y_scale 'in6' has shape 2; expected one value");
}

// ---- ConvInteger, QLinearConv -----------------------------------------------

TEST(ConvInteger, Subtracts_zero_points_and_pads_with_them) {
  Tensor x = U8({2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 1, 3, 3});
  Tensor w = U8({1, 1, 1, 1}, {1, 1, 2, 2});
  Tensor y = Run1("ConvInteger", {}, {x, w, U8Scalar(1)});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_THAT(Ints(y), ElementsAre(12, 16, 24, 28));
  // Padding holds the zero point, so corners see one element: x - 1 = 1.
  y = Run1("ConvInteger", Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}), {x, w, U8Scalar(1)});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_THAT(Ints(y), ElementsAre(1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9));
}

TEST(ConvInteger, Per_channel_weight_zero_points_and_groups) {
  // Two groups of one channel; channel 1's zero point equals its weight.
  Tensor x = U8({1, 2, 3, 4}, {1, 2, 1, 2});
  Tensor w = U8({3, 5}, {2, 1, 1, 1});
  Tensor y = Run1("ConvInteger", Attrs({{"group", int64_t{2}}}),
                  {x, w, U8Scalar(0), Vec<uint8_t>({1, 5})});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 2}));
  EXPECT_THAT(Ints(y), ElementsAre(2, 4, 0, 0));
}

TEST(QLinearConv, Requantizes_with_bias) {
  // (x - 10) * (3 - 1) + 4 = 4, 24; * 0.5 * 2 / 1; + 5.
  Tensor y = Run1("QLinearConv", {},
                  {U8({10, 20}, {1, 1, 1, 2}), F32Scalar(0.5f), U8Scalar(10), U8({3}, {1, 1, 1, 1}),
                   F32Scalar(2), U8Scalar(1), F32Scalar(1), U8Scalar(5), I32({4}, {1})});
  EXPECT_EQ(y.dtype(), DType::kUInt8);
  EXPECT_THAT(Ints(y), ElementsAre(9, 29));
}

TEST(QLinearConv, ConvInteger_rejects_mismatched_shapes) {
  Tensor x = U8({1, 2, 3, 4}, {1, 2, 1, 2});
  Status s = RunError("ConvInteger", {}, {x, U8({1}, {1, 1, 1, 1})});
  EXPECT_EQ(s.message(),
            "ConvInteger 'node': input shape 1x2x1x2 and weight shape 1x1x1x1 do not fit group 1");
  s = RunError("ConvInteger", {}, {x, U8({1, 1}, {1, 2, 1, 1}), U8({1, 2}, {2})});
  EXPECT_EQ(s.message(), "ConvInteger 'node': x_zero_point 'in2' has shape 2; expected one value");
  s = RunError("QLinearConv", {},
               {x, F32Scalar(1), U8Scalar(0), U8({1, 1}, {1, 2, 1, 1}), F32Scalar(1), U8Scalar(0),
                F32Scalar(1), U8Scalar(0), I32({1, 2}, {2})});
  EXPECT_EQ(s.message(),
            "QLinearConv 'node': bias 'in8' has shape 2; expected 1 (one per output channel)");
}

}  // namespace
}  // namespace tessel::ops
