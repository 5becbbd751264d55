#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename T>
Tensor Make(const std::vector<T>& v, Shape shape) {
  return Tensor::FromVector<T>(v, std::move(shape));
}
template <typename T>
Tensor Make(const std::vector<T>& v) {
  return Make<T>(v, {static_cast<int64_t>(v.size())});
}
Tensor F(const std::vector<float>& v, Shape shape) { return Make<float>(v, std::move(shape)); }
Tensor F(const std::vector<float>& v) { return Make<float>(v); }
template <typename T>
Tensor Scalar(T v) {
  return Make<T>({v}, {});
}
Tensor Half16(const std::vector<float>& v) {
  Tensor t(DType::kFloat16, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<Half>()[i] = Half{FloatToHalf(v[i])};
  return t;
}
Tensor BF16(const std::vector<float>& v) {
  Tensor t(DType::kBFloat16, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<BFloat16>()[i] = BFloat16{FloatToBFloat16(v[i])};
  return t;
}

AttributeMap Attrs(std::initializer_list<std::pair<std::string, AttrValue>> kv) {
  AttributeMap m;
  for (const auto& [k, v] : kv) m.Set(k, v);
  return m;
}

// Runs a one-output op; a failure is reported and yields an undefined tensor.
Tensor Eval(const std::string& op, const std::vector<Tensor>& ins, const AttributeMap& attrs = {},
            int opset = 17) {
  auto r = RunSingleOp(op, attrs, ins, 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value()[0] : Tensor();
}
Status RunStatus(const std::string& op, const std::vector<Tensor>& ins,
                 const AttributeMap& attrs = {}, int opset = 17) {
  return RunSingleOp(op, attrs, ins, 1, opset).status();
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  if (!t.defined()) return {};
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.num_elements());
}

void ExpectNear(const Tensor& t, const std::vector<float>& expected, float tol = 1e-6f) {
  ASSERT_TRUE(t.defined());
  const std::vector<float> got = t.ToFloatVector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " = " << got[i];
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
    }
  }
}

// --- Binary arithmetic and broadcasting ------------------------------------

TEST(Elementwise, Add_same_shape) {
  Tensor y = Eval("Add", {F({1, 2, 3, 4}, {2, 2}), F({10, 20, 30, 40}, {2, 2})});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{11, 22, 33, 44}));
}

TEST(Elementwise, Add_broadcasts_scalar) {
  Tensor y = Eval("Add", {F({1, 2, 3, 4, 5, 6}, {2, 3}), Scalar(100.0f)});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{101, 102, 103, 104, 105, 106}));
  Tensor z = Eval("Add", {Scalar(100.0f), F({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_EQ(Values<float>(z), Values<float>(y));
}

TEST(Elementwise, Add_broadcasts_row) {
  Tensor y = Eval("Add", {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({10, 20, 30})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(Elementwise, Add_broadcasts_column) {
  Tensor y = Eval("Add", {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({10, 20}, {2, 1})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{11, 12, 13, 24, 25, 26}));
}

TEST(Elementwise, Add_broadcasts_rank_extension) {
  // [2,1,3] + [4,1] -> [2,4,3]: y[i][j][k] = a[i][0][k] + b[j][0].
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 1, 3});
  Tensor b = F({0, 10, 20, 30}, {4, 1});
  Tensor y = Eval("Add", {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 4, 3}));
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 3; ++k) expected.push_back(float(1 + i * 3 + k) + float(10 * j));
    }
  }
  EXPECT_EQ(Values<float>(y), expected);
  EXPECT_EQ(Values<float>(y)[0 * 12 + 3 * 3 + 2], 33.0f);
  EXPECT_EQ(Values<float>(y)[1 * 12 + 1 * 3 + 0], 14.0f);
}

TEST(Elementwise, Add_broadcasts_both_sides) {
  Tensor y = Eval("Add", {F({1, 2, 3}, {3, 1}), F({10, 20, 30, 40}, {1, 4})});
  ASSERT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
}

TEST(Elementwise, Add_broadcasts_middle_dimension) {
  Tensor y = Eval("Add", {F({1, 2, 3, 4}, {2, 1, 2}), F({10, 20, 30, 40, 50, 60}, {1, 3, 2})});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{11, 22, 31, 42, 51, 62, 13, 24, 33, 44, 53, 64}));
}

TEST(Elementwise, Add_scalars_and_empty) {
  Tensor s = Eval("Add", {Scalar(1.5f), Scalar(2.0f)});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(Values<float>(s), (std::vector<float>{3.5f}));
  Tensor e = Eval("Add", {Tensor(DType::kFloat32, {0, 3}), F({1, 2, 3})});
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.num_elements(), 0);
}

TEST(Elementwise, Add_int_wraps_on_overflow) {
  Tensor y = Eval(
      "Add", {Make<int32_t>({std::numeric_limits<int32_t>::max(), -5}), Make<int32_t>({1, 3})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -2}));
  Tensor z = Eval("Add", {Make<int8_t>({127, -128}), Make<int8_t>({1, -1})});
  EXPECT_EQ(Values<int8_t>(z), (std::vector<int8_t>{-128, 127}));
}

TEST(Elementwise, Add_float16_and_bfloat16) {
  Tensor h = Eval("Add", {Half16({1.5f, -2.0f, 1024.0f}), Half16({0.25f, 0.5f, 0.5f})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  // 1024.5 is not a half: it rounds to even (1024).
  EXPECT_EQ(h.ToFloatVector(), (std::vector<float>{1.75f, -1.5f, 1024.0f}));
  Tensor b = Eval("Add", {BF16({1.0f, 256.0f}), BF16({0.5f, 1.0f})});
  EXPECT_EQ(b.dtype(), DType::kBFloat16);
  EXPECT_EQ(b.ToFloatVector(), (std::vector<float>{1.5f, 256.0f}));
}

TEST(Elementwise, Sub_and_Mul) {
  EXPECT_EQ(Values<int64_t>(Eval("Sub", {Make<int64_t>({5, -3}), Make<int64_t>({7})})),
            (std::vector<int64_t>{-2, -10}));
  EXPECT_EQ(Values<double>(Eval("Mul", {Make<double>({1.5, -2}), Make<double>({4, 0.5})})),
            (std::vector<double>{6, -1}));
  // uint16 * uint16 must not overflow a promoted int: 65535^2 mod 2^16 = 1.
  EXPECT_EQ(
      Values<uint16_t>(Eval("Mul", {Make<uint16_t>({65535, 300}), Make<uint16_t>({65535, 2})})),
      (std::vector<uint16_t>{1, 600}));
}

TEST(Elementwise, Div_float) {
  ExpectNear(Eval("Div", {F({1, -3, 1}), F({4, 2, 0})}), {0.25f, -1.5f, kInf});
}

TEST(Elementwise, Div_int_truncates_toward_zero) {
  Tensor y = Eval("Div", {Make<int32_t>({7, -7, 7, -7, 6}), Make<int32_t>({2, 2, -2, -2, 3})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{3, -3, -3, 3, 2}));
  Tensor u = Eval("Div", {Make<uint8_t>({255, 7}), Make<uint8_t>({2})});
  EXPECT_EQ(Values<uint8_t>(u), (std::vector<uint8_t>{127, 3}));
}

TEST(Elementwise, Div_int_by_zero_and_min_by_minus_one_do_not_crash) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  Tensor y = Eval("Div", {Make<int64_t>({5, min}), Make<int64_t>({0, -1})});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, min}));
}

TEST(Elementwise, Mod_int_takes_sign_of_divisor) {
  Tensor y = Eval("Mod", {Make<int32_t>({5, -5, 5, -5, 6}), Make<int32_t>({3, 3, -3, -3, 3})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, 1, -1, -2, 0}));
  Tensor z = Eval("Mod", {Make<int8_t>({-128, 7}), Make<int8_t>({-1, 0})});
  EXPECT_EQ(Values<int8_t>(z), (std::vector<int8_t>{0, 0}));
}

TEST(Elementwise, Mod_fmod_takes_sign_of_dividend) {
  Tensor y = Eval("Mod", {Make<int32_t>({5, -5, 5, -5}), Make<int32_t>({3, 3, -3, -3})},
                  Attrs({{"fmod", int64_t{1}}}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, -2, 2, -2}));
  Tensor f = Eval("Mod", {F({5.5f, -5.5f, 5.5f}), F({2, 2, -2})}, Attrs({{"fmod", int64_t{1}}}));
  ExpectNear(f, {1.5f, -1.5f, 1.5f});
}

TEST(Elementwise, Mod_broadcasts_unsigned) {
  Tensor y = Eval("Mod", {Make<uint32_t>({10, 11, 12, 13}, {2, 2}), Make<uint32_t>({3, 5})});
  EXPECT_EQ(Values<uint32_t>(y), (std::vector<uint32_t>{1, 1, 0, 3}));
}

TEST(Elementwise, Pow_float) {
  ExpectNear(Eval("Pow", {F({2, 4, 9, -2}), F({3, 0.5f, 0.5f, 2})}), {8, 2, 3, 4});
}

TEST(Elementwise, Pow_with_int_exponent) {
  Tensor y = Eval("Pow", {F({2, 3, 4}), Make<int64_t>({3, 2, -1})});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  ExpectNear(y, {8, 9, 0.25f});
  Tensor s = Eval("Pow", {F({1, 2, 3, 4}, {2, 2}), Scalar<int32_t>(2)});
  EXPECT_EQ(Values<float>(s), (std::vector<float>{1, 4, 9, 16}));
}

TEST(Elementwise, Pow_int_base) {
  Tensor y = Eval(
      "Pow", {Make<int32_t>({2, -3, 5, 2, 1, -1, -1}), Make<int32_t>({10, 3, 0, -1, -5, -2, -3})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{1024, -27, 1, 0, 1, 1, -1}));
  Tensor big = Eval("Pow", {Make<int64_t>({3}), Make<uint8_t>({39})});
  EXPECT_EQ(Values<int64_t>(big), (std::vector<int64_t>{4052555153018976267}));
  // A float exponent on an int base truncates the result.
  Tensor f = Eval("Pow", {Make<int64_t>({4, 9, 2}), F({0.5f, 0.5f, 0.5f})});
  EXPECT_EQ(Values<int64_t>(f), (std::vector<int64_t>{2, 3, 1}));
}

TEST(Elementwise, PRelu_broadcasts_slope) {
  Tensor y = Eval("PRelu", {F({-1, 2, -3, -4, 5, -6}, {2, 3}), F({0.5f, 1, 2})});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-0.5f, 2, -6, -2, 5, -12}));
  Tensor c = Eval("PRelu", {F({-1, 2, -3, 4}, {1, 2, 2}), F({0.1f, 0.2f}, {2, 1})});
  ExpectNear(c, {-0.1f, 2, -0.6f, 4});
  Tensor i = Eval("PRelu", {Make<int32_t>({-3, 3}), Scalar<int32_t>(2)});
  EXPECT_EQ(Values<int32_t>(i), (std::vector<int32_t>{-6, 3}));
}

TEST(Elementwise, BitShift_left_and_right) {
  Tensor l = Eval("BitShift", {Make<uint8_t>({1, 2, 255, 1}), Make<uint8_t>({1, 3, 1, 8})},
                  Attrs({{"direction", std::string("LEFT")}}));
  EXPECT_EQ(Values<uint8_t>(l), (std::vector<uint8_t>{2, 16, 254, 0}));
  Tensor r =
      Eval("BitShift", {Make<uint32_t>({16, 256, 1, 0xffffffffu}), Make<uint32_t>({4, 8, 1, 31})},
           Attrs({{"direction", std::string("RIGHT")}}));
  EXPECT_EQ(Values<uint32_t>(r), (std::vector<uint32_t>{1, 1, 0, 1}));
  Tensor b = Eval("BitShift", {Make<uint64_t>({1, 3}), Scalar<uint64_t>(63)},
                  Attrs({{"direction", std::string("LEFT")}}));
  EXPECT_EQ(Values<uint64_t>(b), (std::vector<uint64_t>{uint64_t{1} << 63, uint64_t{1} << 63}));
  Tensor w = Eval("BitShift", {Make<uint16_t>({65535}), Make<uint16_t>({15})},
                  Attrs({{"direction", std::string("LEFT")}}));
  EXPECT_EQ(Values<uint16_t>(w), (std::vector<uint16_t>{32768}));
}

// --- Variadic ---------------------------------------------------------------

TEST(Elementwise, Max_and_Min_variadic_broadcast) {
  Tensor a = F({1, 5, 3, 8}, {2, 2});
  Tensor b = F({4, 2});
  Tensor c = Scalar(3.0f);
  EXPECT_EQ(Values<float>(Eval("Max", {a, b, c})), (std::vector<float>{4, 5, 4, 8}));
  EXPECT_EQ(Values<float>(Eval("Min", {a, b, c})), (std::vector<float>{1, 2, 3, 2}));
}

TEST(Elementwise, Max_single_input_and_ints) {
  EXPECT_EQ(Values<float>(Eval("Max", {F({1, -2})})), (std::vector<float>{1, -2}));
  Tensor y = Eval("Min", {Make<int64_t>({-5, 7}), Make<int64_t>({3, 2})});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{-5, 2}));
  Tensor u = Eval("Max", {Make<uint8_t>({200, 1}), Make<uint8_t>({100, 2})});
  EXPECT_EQ(Values<uint8_t>(u), (std::vector<uint8_t>{200, 2}));
}

TEST(Elementwise, Max_propagates_nan) {
  ExpectNear(Eval("Max", {F({kNaN, 1, 2}), F({1, kNaN, 3})}), {kNaN, kNaN, 3});
  ExpectNear(Eval("Min", {F({kNaN, 1, 2}), F({1, kNaN, 3})}), {kNaN, kNaN, 2});
}

TEST(Elementwise, Sum_and_Mean_broadcast) {
  Tensor a = F({1, 2, 3, 4}, {2, 2});
  Tensor b = F({10, 20}, {2, 1});
  Tensor c = F({100, 200});
  EXPECT_EQ(Values<float>(Eval("Sum", {a, b, c})), (std::vector<float>{111, 212, 123, 224}));
  EXPECT_EQ(Values<float>(Eval("Mean", {a, b, c})),
            (std::vector<float>{37, 212.0f / 3, 41, 224.0f / 3}));
  EXPECT_EQ(Values<float>(Eval("Sum", {a})), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Values<double>(Eval("Mean", {Make<double>({1, 2}), Make<double>({2, 4})})),
            (std::vector<double>{1.5, 3}));
}

TEST(Elementwise, Mean_float16_rounds_once) {
  Tensor y = Eval("Mean", {Half16({1, 2048}), Half16({2, 1}), Half16({3, 1})});
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  // 2048+1+1 = 2050 exactly in float; 2050/3 = 683.33 -> half 683.5.
  EXPECT_EQ(y.ToFloatVector(), (std::vector<float>{2, 683.5f}));
}

// --- Comparison and logic -------------------------------------------------

TEST(Elementwise, Comparisons_output_bool) {
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = F({2, 2, 7});
  Tensor eq = Eval("Equal", {a, b});
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_EQ(eq.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<bool>(eq), (std::vector<bool>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Values<bool>(Eval("Less", {a, b})), (std::vector<bool>{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(Values<bool>(Eval("Greater", {a, b})), (std::vector<bool>{0, 0, 0, 1, 1, 0}));
  EXPECT_EQ(Values<bool>(Eval("LessOrEqual", {a, b})), (std::vector<bool>{1, 1, 1, 0, 0, 1}));
  EXPECT_EQ(Values<bool>(Eval("GreaterOrEqual", {a, b})), (std::vector<bool>{0, 1, 0, 1, 1, 0}));
}

TEST(Elementwise, Comparisons_on_ints_bools_and_nan) {
  EXPECT_EQ(Values<bool>(Eval("Less", {Make<int64_t>({-1, 5}), Scalar<int64_t>(0)})),
            (std::vector<bool>{1, 0}));
  EXPECT_EQ(Values<bool>(Eval("Greater", {Make<uint64_t>({1ull << 63, 0}), Scalar<uint64_t>(1)})),
            (std::vector<bool>{1, 0}));
  EXPECT_EQ(Values<bool>(Eval("Equal", {Make<bool>({true, false}), Make<bool>({true, true})})),
            (std::vector<bool>{1, 0}));
  EXPECT_EQ(Values<bool>(Eval("Equal", {F({kNaN, 1}), F({kNaN, 1})})), (std::vector<bool>{0, 1}));
  EXPECT_EQ(Values<bool>(Eval("Equal", {Half16({0.5f, 1}), Half16({0.5f, 2})})),
            (std::vector<bool>{1, 0}));
}

TEST(Elementwise, Logic_ops_broadcast) {
  Tensor a = Make<bool>({true, true, false, false}, {2, 2});
  Tensor b = Make<bool>({true, false});
  EXPECT_EQ(Values<bool>(Eval("And", {a, b})), (std::vector<bool>{1, 0, 0, 0}));
  EXPECT_EQ(Values<bool>(Eval("Or", {a, b})), (std::vector<bool>{1, 1, 1, 0}));
  EXPECT_EQ(Values<bool>(Eval("Xor", {a, b})), (std::vector<bool>{0, 1, 1, 0}));
  Tensor n = Eval("Not", {a});
  EXPECT_EQ(n.dtype(), DType::kBool);
  EXPECT_EQ(Values<bool>(n), (std::vector<bool>{0, 0, 1, 1}));
}

// --- Where -----------------------------------------------------------------

TEST(Elementwise, Where_three_way_broadcast) {
  Tensor cond = Make<bool>({true, false}, {2, 1});
  Tensor x = F({1, 2, 3}, {1, 3});
  Tensor y = Scalar(-1.0f);
  Tensor z = Eval("Where", {cond, x, y});
  ASSERT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>(z), (std::vector<float>{1, 2, 3, -1, -1, -1}));
}

TEST(Elementwise, Where_int64_and_bool_values) {
  Tensor z = Eval("Where", {Make<bool>({true, false, true}), Make<int64_t>({1, 2, 3}),
                            Make<int64_t>({-1, -2, -3})});
  EXPECT_EQ(Values<int64_t>(z), (std::vector<int64_t>{1, -2, 3}));
  Tensor b = Eval("Where", {Make<bool>({false, true}), Scalar(true), Scalar(false)});
  EXPECT_EQ(Values<bool>(b), (std::vector<bool>{0, 1}));
}

// --- Unary math ---------------------------------------------------------------

TEST(Elementwise, Sqrt_Exp_Log_Reciprocal) {
  ExpectNear(Eval("Sqrt", {F({0, 4, 2.25f, -1})}), {0, 2, 1.5f, kNaN});
  ExpectNear(Eval("Exp", {F({0, 1, -1})}), {1, 2.7182817f, 0.36787945f});
  ExpectNear(Eval("Log", {F({1, 2.7182817f, 0})}), {0, 1, -kInf});
  ExpectNear(Eval("Reciprocal", {F({2, -4, 0})}), {0.5f, -0.25f, kInf});
  Tensor d = Eval("Sqrt", {Make<double>({2})});
  EXPECT_DOUBLE_EQ(Values<double>(d)[0], std::sqrt(2.0));
}

TEST(Elementwise, Abs_Neg_Sign) {
  ExpectNear(Eval("Abs", {F({-1.5f, 2, -0.0f})}), {1.5f, 2, 0});
  EXPECT_FALSE(std::signbit(Eval("Abs", {F({-0.0f})}).ToFloatVector()[0]));
  EXPECT_EQ(Values<int32_t>(Eval("Abs", {Make<int32_t>({-3, 4, 0})})),
            (std::vector<int32_t>{3, 4, 0}));
  EXPECT_EQ(Values<uint8_t>(Eval("Abs", {Make<uint8_t>({200, 0})})),
            (std::vector<uint8_t>{200, 0}));
  ExpectNear(Eval("Neg", {F({1, -2})}), {-1, 2});
  EXPECT_EQ(Values<int8_t>(Eval("Neg", {Make<int8_t>({5, -128})})),
            (std::vector<int8_t>{-5, -128}));
  ExpectNear(Eval("Sign", {F({-2, 0, 3, kNaN})}), {-1, 0, 1, kNaN});
  EXPECT_EQ(Values<int64_t>(Eval("Sign", {Make<int64_t>({-7, 0, 9})})),
            (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(Values<uint16_t>(Eval("Sign", {Make<uint16_t>({0, 9})})),
            (std::vector<uint16_t>{0, 1}));
}

TEST(Elementwise, Floor_Ceil_Round_half_to_even) {
  ExpectNear(Eval("Floor", {F({1.5f, -1.5f, 2})}), {1, -2, 2});
  ExpectNear(Eval("Ceil", {F({1.5f, -1.5f, 2})}), {2, -1, 2});
  ExpectNear(Eval("Round", {F({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, 2.6f})}),
             {0, 2, 2, 0, -2, 2, 3});
}

TEST(Elementwise, Erf_and_trigonometry) {
  const float pi = 3.14159265f;
  ExpectNear(Eval("Erf", {F({0, 1, -1})}), {0, 0.84270079f, -0.84270079f});
  ExpectNear(Eval("Sin", {F({0, pi / 2})}), {0, 1});
  ExpectNear(Eval("Cos", {F({0, pi})}), {1, -1});
  ExpectNear(Eval("Tan", {F({0, pi / 4})}), {0, 1});
  ExpectNear(Eval("Asin", {F({0, 1})}), {0, pi / 2});
  ExpectNear(Eval("Acos", {F({1, 0})}), {0, pi / 2});
  ExpectNear(Eval("Atan", {F({0, 1})}), {0, pi / 4});
  ExpectNear(Eval("Sinh", {F({0, 1})}), {0, 1.17520119f});
  ExpectNear(Eval("Cosh", {F({0, 1})}), {1, 1.54308063f});
  ExpectNear(Eval("Asinh", {F({0, 1})}), {0, 0.88137359f});
  ExpectNear(Eval("Acosh", {F({1, 2})}), {0, 1.31695790f});
  ExpectNear(Eval("Atanh", {F({0, 0.5f})}), {0, 0.54930614f});
  ExpectNear(Eval("Tanh", {F({0, 1, -20})}), {0, 0.76159416f, -1});
}

TEST(Elementwise, IsNaN_and_IsInf) {
  Tensor x = F({1, kNaN, kInf, -kInf});
  Tensor n = Eval("IsNaN", {x});
  EXPECT_EQ(n.dtype(), DType::kBool);
  EXPECT_EQ(Values<bool>(n), (std::vector<bool>{0, 1, 0, 0}));
  EXPECT_EQ(Values<bool>(Eval("IsInf", {x})), (std::vector<bool>{0, 0, 1, 1}));
  EXPECT_EQ(Values<bool>(Eval("IsInf", {x}, Attrs({{"detect_negative", int64_t{0}}}))),
            (std::vector<bool>{0, 0, 1, 0}));
  EXPECT_EQ(Values<bool>(Eval("IsInf", {x}, Attrs({{"detect_positive", int64_t{0}}}))),
            (std::vector<bool>{0, 0, 0, 1}));
}

TEST(Elementwise, Unary_math_on_float16_and_double) {
  Tensor h = Eval("Sqrt", {Half16({4, 2})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(h.ToFloatVector(), (std::vector<float>{2, HalfToFloat(FloatToHalf(std::sqrt(2.0f)))}));
  Tensor b = Eval("Exp", {BF16({0})});
  EXPECT_EQ(b.ToFloatVector(), (std::vector<float>{1}));
  Tensor d = Eval("Sigmoid", {Make<double>({0, 800, -800})});
  EXPECT_EQ(Values<double>(d), (std::vector<double>{0.5, 1, 0}));
}

// --- Activations -------------------------------------------------------------

TEST(Elementwise, Relu_float_and_int) {
  ExpectNear(Eval("Relu", {F({-1, 0, 2.5f})}), {0, 0, 2.5f});
  EXPECT_EQ(Values<int32_t>(Eval("Relu", {Make<int32_t>({-5, 7})})), (std::vector<int32_t>{0, 7}));
}

TEST(Elementwise, LeakyRelu_Elu_Selu_Celu) {
  ExpectNear(Eval("LeakyRelu", {F({-2, 3})}), {-0.02f, 3});
  ExpectNear(Eval("LeakyRelu", {F({-2, 3})}, Attrs({{"alpha", 0.5f}})), {-1, 3});
  ExpectNear(Eval("Elu", {F({-1, 2})}), {std::exp(-1.0f) - 1, 2});
  ExpectNear(Eval("Elu", {F({-1})}, Attrs({{"alpha", 2.0f}})), {2 * (std::exp(-1.0f) - 1)});
  const float alpha = 1.67326319217681884765625f, gamma = 1.05070102214813232421875f;
  ExpectNear(Eval("Selu", {F({-1, 0, 2})}), {gamma * alpha * (std::exp(-1.0f) - 1), 0, gamma * 2});
  ExpectNear(Eval("Selu", {F({-1, 2})}, Attrs({{"alpha", 2.0f}, {"gamma", 3.0f}})),
             {3 * 2 * (std::exp(-1.0f) - 1), 6});
  ExpectNear(Eval("Celu", {F({-1, 2})}), {std::exp(-1.0f) - 1, 2});
  ExpectNear(Eval("Celu", {F({-1})}, Attrs({{"alpha", 2.0f}})), {2 * (std::exp(-0.5f) - 1)});
}

TEST(Elementwise, Sigmoid_HardSigmoid_HardSwish) {
  ExpectNear(Eval("Sigmoid", {F({0, 2, -2, 100, -100})}), {0.5f, 0.88079708f, 0.11920292f, 1, 0});
  ExpectNear(Eval("HardSigmoid", {F({-5, 0, 1, 5})}), {0, 0.5f, 0.7f, 1});
  ExpectNear(Eval("HardSigmoid", {F({1})}, Attrs({{"alpha", 0.5f}, {"beta", 0.25f}})), {0.75f});
  ExpectNear(Eval("HardSwish", {F({-4, -1, 0, 1, 4})}), {0, -1.0f / 3, 0, 2.0f / 3, 4});
}

TEST(Elementwise, Softplus_Softsign_Mish) {
  ExpectNear(Eval("Softplus", {F({0, 1, -1, 100, -100})}),
             {0.69314718f, 1.31326169f, 0.31326169f, 100, 0});
  ExpectNear(Eval("Softsign", {F({1, -3, 0})}), {0.5f, -0.75f, 0});
  ExpectNear(Eval("Mish", {F({0, 1, -1})}), {0, 0.86509839f, -0.30340147f});
}

TEST(Elementwise, ThresholdedRelu_and_Shrink) {
  ExpectNear(Eval("ThresholdedRelu", {F({0.5f, 1, 1.5f, -3})}), {0, 0, 1.5f, 0});
  ExpectNear(Eval("ThresholdedRelu", {F({0.5f, 2})}, Attrs({{"alpha", 0.25f}})), {0.5f, 2});
  ExpectNear(Eval("Shrink", {F({-1, -0.5f, 0, 0.5f, 1})}), {-1, 0, 0, 0, 1});
  ExpectNear(Eval("Shrink", {F({-2, 0.5f, 2})}, Attrs({{"bias", 1.0f}, {"lambd", 1.0f}})),
             {-1, 0, 1});
  Tensor i = Eval("Shrink", {Make<int32_t>({-5, 1, 5})}, Attrs({{"bias", 2.0f}, {"lambd", 1.5f}}));
  EXPECT_EQ(Values<int32_t>(i), (std::vector<int32_t>{-3, 0, 3}));
}

// --- Clip --------------------------------------------------------------------

TEST(Elementwise, Clip_opset6_attributes) {
  Tensor x = F({-3, -1, 0, 2, 5});
  ExpectNear(Eval("Clip", {x}, Attrs({{"min", -1.5f}, {"max", 2.5f}}), 6), {-1.5f, -1, 0, 2, 2.5f});
  ExpectNear(Eval("Clip", {x}, Attrs({{"max", 1.0f}}), 6), {-3, -1, 0, 1, 1});
  ExpectNear(Eval("Clip", {x}, {}, 6), {-3, -1, 0, 2, 5});
}

TEST(Elementwise, Clip_opset13_inputs) {
  Tensor x = F({-3, -1, 0, 2, 5});
  ExpectNear(Eval("Clip", {x, Scalar(-1.5f), Scalar(2.5f)}, {}, 13), {-1.5f, -1, 0, 2, 2.5f});
  ExpectNear(Eval("Clip", {x, Tensor(), Scalar(1.0f)}, {}, 13), {-3, -1, 0, 1, 1});
  ExpectNear(Eval("Clip", {x, Scalar(0.0f)}, {}, 13), {0, 0, 0, 2, 5});
  ExpectNear(Eval("Clip", {x}, {}, 13), {-3, -1, 0, 2, 5});
  // min > max: every value becomes max.
  ExpectNear(Eval("Clip", {x, Scalar(3.0f), Scalar(1.0f)}, {}, 13), {1, 1, 1, 1, 1});
  ExpectNear(Eval("Clip", {F({kNaN, kInf}), Scalar(0.0f)}, {}, 13), {kNaN, kInf});
}

TEST(Elementwise, Clip_ints_and_float16) {
  Tensor y = Eval("Clip", {Make<int32_t>({-100, 5, 100}), Scalar<int32_t>(0), Scalar<int32_t>(10)},
                  {}, 13);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{0, 5, 10}));
  Tensor u = Eval("Clip", {Make<uint8_t>({1, 250}), Tensor(), Scalar<uint8_t>(200)}, {}, 13);
  EXPECT_EQ(Values<uint8_t>(u), (std::vector<uint8_t>{1, 200}));
  Tensor h = Eval("Clip", {Half16({-7, 0.5f, 7})}, Attrs({{"min", -6.0f}, {"max", 6.0f}}), 6);
  EXPECT_EQ(h.ToFloatVector(), (std::vector<float>{-6, 0.5f, 6}));
}

// --- Cast ----------------------------------------------------------------------

TEST(Elementwise, Cast_float_to_int_truncates) {
  Tensor y = Eval("Cast", {F({1.7f, -1.7f, 2.5f, -0.5f})}, Attrs({{"to", int64_t{6}}}));
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{1, -1, 2, 0}));
  Tensor l = Eval("Cast", {Make<double>({-1e10, 3.99})}, Attrs({{"to", int64_t{7}}}));
  EXPECT_EQ(Values<int64_t>(l), (std::vector<int64_t>{-10000000000, 3}));
}

TEST(Elementwise, Cast_float_to_int_saturates_out_of_range) {
  Tensor y = Eval("Cast", {F({300, -5, kNaN, kInf, 255.9f})}, Attrs({{"to", int64_t{2}}}));
  EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{255, 0, 0, 255, 255}));
  Tensor z = Eval("Cast", {F({1e20f, -1e20f})}, Attrs({{"to", int64_t{7}}}));
  EXPECT_EQ(Values<int64_t>(z), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                      std::numeric_limits<int64_t>::min()}));
}

TEST(Elementwise, Cast_bool_conversions) {
  Tensor b = Eval("Cast", {F({0, -0.0f, 0.1f, kNaN, -2})}, Attrs({{"to", int64_t{9}}}));
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(Values<bool>(b), (std::vector<bool>{0, 0, 1, 1, 1}));
  Tensor f = Eval("Cast", {Make<bool>({true, false})}, Attrs({{"to", int64_t{1}}}));
  EXPECT_EQ(Values<float>(f), (std::vector<float>{1, 0}));
  Tensor i = Eval("Cast", {Make<int64_t>({0, 7})}, Attrs({{"to", int64_t{9}}}));
  EXPECT_EQ(Values<bool>(i), (std::vector<bool>{0, 1}));
}

TEST(Elementwise, Cast_round_trips_float16) {
  Tensor x = F({0.5f, -2, 65504, 1.0f / 3, 70000});
  Tensor h = Eval("Cast", {x}, Attrs({{"to", int64_t{10}}}));
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  Tensor back = Eval("Cast", {h}, Attrs({{"to", int64_t{1}}}));
  ExpectNear(back, {0.5f, -2, 65504, 0.33325195f, kInf});
  Tensor i = Eval("Cast", {Make<int64_t>({-3, 2048, 2049})}, Attrs({{"to", int64_t{10}}}));
  EXPECT_EQ(i.ToFloatVector(), (std::vector<float>{-3, 2048, 2048}));
  Tensor s = Eval("Cast", {Half16({-7.9f, 100})}, Attrs({{"to", int64_t{3}}}));
  EXPECT_EQ(Values<int8_t>(s), (std::vector<int8_t>{-7, 100}));
}

TEST(Elementwise, Cast_round_trips_bfloat16_and_double) {
  Tensor b = Eval("Cast", {F({1.5f, 3.0f, 1.00390625f})}, Attrs({{"to", int64_t{16}}}));
  EXPECT_EQ(b.dtype(), DType::kBFloat16);
  EXPECT_EQ(Eval("Cast", {b}, Attrs({{"to", int64_t{1}}})).ToFloatVector(),
            (std::vector<float>{1.5f, 3.0f, 1.0f}));
  Tensor d = Eval("Cast", {F({0.1f})}, Attrs({{"to", int64_t{11}}}));
  EXPECT_EQ(Values<double>(d), (std::vector<double>{static_cast<double>(0.1f)}));
  Tensor f = Eval("Cast", {d}, Attrs({{"to", int64_t{1}}}));
  EXPECT_EQ(Values<float>(f), (std::vector<float>{0.1f}));
  Tensor hb = Eval("Cast", {Half16({0.25f})}, Attrs({{"to", int64_t{16}}}));
  EXPECT_EQ(hb.ToFloatVector(), (std::vector<float>{0.25f}));
}

TEST(Elementwise, Cast_between_ints_wraps) {
  Tensor y = Eval("Cast", {Make<uint8_t>({200, 5})}, Attrs({{"to", int64_t{3}}}));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{-56, 5}));
  Tensor z = Eval("Cast", {Make<int32_t>({-1})}, Attrs({{"to", int64_t{13}}}));
  EXPECT_EQ(Values<uint64_t>(z), (std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()}));
  Tensor w = Eval("Cast", {Make<int64_t>({70000, -70000})}, Attrs({{"to", int64_t{5}}}));
  EXPECT_EQ(Values<int16_t>(w), (std::vector<int16_t>{4464, -4464}));
  Tensor u = Eval("Cast", {Make<uint32_t>({4000000000u})}, Attrs({{"to", int64_t{12}}}));
  EXPECT_EQ(Values<uint32_t>(u), (std::vector<uint32_t>{4000000000u}));
  Tensor same = Eval("Cast", {Make<uint16_t>({7})}, Attrs({{"to", int64_t{4}}}));
  EXPECT_EQ(Values<uint16_t>(same), (std::vector<uint16_t>{7}));
}

TEST(Elementwise, CastLike_takes_target_dtype) {
  Tensor y = Eval("CastLike", {F({2.9f, -2.9f}, {1, 2}), Make<int64_t>({0})});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{2, -2}));
  Tensor h = Eval("CastLike", {Make<int32_t>({3}), Half16({0})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(h.ToFloatVector(), (std::vector<float>{3}));
}

// --- Registry -------------------------------------------------------------------

TEST(Elementwise, Registers_every_op_with_its_class) {
  const OpRegistry& r = OpRegistry::Global();
  for (const char* op :
       {"Add", "Sub", "Mul",  "Div",   "Pow",  "Mod",     "PRelu",       "BitShift",       "Max",
        "Min", "Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
        "Or",  "Xor", "Where"}) {
    const OpSchema* s = r.Find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kBroadcast) << op;
    EXPECT_TRUE(s->foldable) << op;
  }
  for (const char* op : {"Not",
                         "Sqrt",
                         "Exp",
                         "Log",
                         "Abs",
                         "Neg",
                         "Reciprocal",
                         "Floor",
                         "Ceil",
                         "Round",
                         "Sign",
                         "Erf",
                         "Sin",
                         "Cos",
                         "Tan",
                         "Asin",
                         "Acos",
                         "Atan",
                         "Sinh",
                         "Cosh",
                         "Asinh",
                         "Acosh",
                         "Atanh",
                         "IsNaN",
                         "IsInf",
                         "Relu",
                         "LeakyRelu",
                         "Elu",
                         "Selu",
                         "Celu",
                         "Sigmoid",
                         "HardSigmoid",
                         "HardSwish",
                         "Tanh",
                         "Softplus",
                         "Softsign",
                         "ThresholdedRelu",
                         "Mish",
                         "Shrink",
                         "Clip",
                         "Cast",
                         "CastLike"}) {
    const OpSchema* s = r.Find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kElementwise) << op;
    EXPECT_TRUE(s->foldable) << op;
  }
}

TEST(Elementwise, Large_broadcast_matches_formula) {
  // Exercises the row loop of the broadcast walker on a realistic NCHW + C11 bias.
  const int64_t n = 2, c = 3, hw = 1000;
  std::vector<float> x(n * c * hw), bias = {1, 2, 3};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
  Tensor y = Eval("Add", {F(x, {n, c, 10, 100}), F(bias, {c, 1, 1})});
  ASSERT_EQ(y.shape(), (Shape{n, c, 10, 100}));
  const std::vector<float> got = Values<float>(y);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(got[i], x[i] + bias[(i / hw) % c]) << i;
  }
}

// --- Rejections -------------------------------------------------------------------

TEST(Elementwise, Add_rejects_shapes_that_do_not_broadcast) {
  Status s = RunStatus("Add", {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({1, 2, 3, 4})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Add 'node': shapes 2x3, 4 do not broadcast");
}

TEST(Elementwise, Where_rejects_shapes_that_do_not_broadcast) {
  Status s = RunStatus("Where", {Make<bool>({true, false}), F({1, 2, 3}), Scalar(0.0f)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Where 'node': shapes 2, 3, scalar do not broadcast");
}

TEST(Elementwise, Max_rejects_shapes_that_do_not_broadcast) {
  Status s = RunStatus("Max", {F({1, 2}), F({1, 2}, {2, 1}), F({1, 2, 3})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("shapes 2, 2x1, 3 do not broadcast"));
}

TEST(Elementwise, PRelu_rejects_slope_that_broadcasts_x) {
  Status s = RunStatus("PRelu", {F({1, 2, 3}), F({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "PRelu 'node': slope shape 2x3 does not broadcast to X shape 3");
}

TEST(Elementwise, Add_rejects_mixed_dtypes) {
  Status s = RunStatus("Add", {F({1}), Make<int32_t>({1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Add 'node': inputs 'in0' (float32) and 'in1' (int32) must have the same dtype");
}

TEST(Elementwise, Sqrt_rejects_int_input) {
  Status s = RunStatus("Sqrt", {Make<int32_t>({4})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "Sqrt 'node': input 'in0' has dtype int32; supported: float32, float64, float16, "
            "bfloat16");
}

TEST(Elementwise, Ops_reject_wrong_dtypes) {
  EXPECT_EQ(RunStatus("Add", {Make<bool>({true}), Make<bool>({true})}).code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("And", {F({1}), F({1})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Not", {Make<int32_t>({1})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Neg", {Make<uint32_t>({1})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Sum", {Make<int32_t>({1})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Less", {Make<bool>({true}), Make<bool>({true})}).code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("IsNaN", {Make<int64_t>({1})}).code(), StatusCode::kUnsupported);
  Status pow = RunStatus("Pow", {Make<uint8_t>({2}), Make<uint8_t>({2})});
  EXPECT_EQ(pow.code(), StatusCode::kUnsupported);
  EXPECT_THAT(pow.message(), HasSubstr("Pow 'node': input 'in0' has dtype uint8"));
}

TEST(Elementwise, BitShift_rejects_signed_and_bad_direction) {
  Status s = RunStatus("BitShift", {Make<int32_t>({1}), Make<int32_t>({1})},
                       Attrs({{"direction", std::string("LEFT")}}));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("has dtype int32"));
  Status d = RunStatus("BitShift", {Make<uint8_t>({1}), Make<uint8_t>({1})},
                       Attrs({{"direction", std::string("UP")}}));
  EXPECT_EQ(d.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.message(), "BitShift 'node': direction 'UP' must be LEFT or RIGHT");
  Status m = RunStatus("BitShift", {Make<uint8_t>({1}), Make<uint8_t>({1})});
  EXPECT_EQ(m.message(), "BitShift 'node': attribute 'direction' is required");
}

TEST(Elementwise, Mod_rejects_float_without_fmod_and_bad_fmod) {
  Status s = RunStatus("Mod", {F({1}), F({1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Mod 'node': fmod=0 is not defined for dtype float32; float inputs need fmod=1");
  Status f =
      RunStatus("Mod", {Make<int32_t>({1}), Make<int32_t>({1})}, Attrs({{"fmod", int64_t{2}}}));
  EXPECT_EQ(f.message(), "Mod 'node': fmod=2 must be 0 or 1");
}

TEST(Elementwise, Binary_rejects_missing_input) {
  Status s = RunStatus("Add", {F({1}), Tensor()});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Add 'node': has 1 inputs; expected 2");
  Status w = RunStatus("Where", {Tensor(), F({1}), F({1})});
  EXPECT_EQ(w.message(), "Where 'node': required input 0 is missing");
  Status v = RunStatus("Max", {F({1}), Tensor(), F({1})});
  EXPECT_EQ(v.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v.message(), "Max 'node': input 1 is missing");
}

TEST(Elementwise, Where_rejects_non_bool_condition) {
  Status s = RunStatus("Where", {F({1}), F({1}), F({1})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "Where 'node': input 'in0' has dtype float32; supported: bool");
  Status t = RunStatus("Where", {Make<bool>({true}), F({1}), Make<double>({1})});
  EXPECT_EQ(t.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(t.message(), HasSubstr("must have the same dtype"));
}

TEST(Elementwise, Clip_rejects_bad_bounds) {
  Status s = RunStatus("Clip", {F({1, 2}), F({0, 1})}, {}, 13);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Clip 'node': min 'in1' has shape 2; expected a scalar");
  Status t = RunStatus("Clip", {F({1}), Make<double>({0})}, {}, 13);
  EXPECT_EQ(t.code(), StatusCode::kInvalidArgument);
  Status old = RunStatus("Clip", {F({1}), Scalar(0.0f)}, {}, 6);
  EXPECT_EQ(old.message(), "Clip 'node': opset 6 takes min and max as attributes, not inputs");
  Status i = RunStatus("Clip", {Make<int32_t>({1})}, {}, 6);
  EXPECT_EQ(i.code(), StatusCode::kUnsupported);
}

TEST(Elementwise, Cast_rejects_unknown_target) {
  Status s = RunStatus("Cast", {F({1})}, Attrs({{"to", int64_t{99}}}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Cast 'node': to=99 is not an ONNX tensor data type");
  Status z = RunStatus("Cast", {F({1})}, Attrs({{"to", int64_t{0}}}));
  EXPECT_EQ(z.code(), StatusCode::kInvalidArgument);
  Status m = RunStatus("Cast", {F({1})});
  EXPECT_EQ(m.message(), "Cast 'node': attribute 'to' is required");
}

TEST(Elementwise, Cast_rejects_string_target) {
  Status s = RunStatus("Cast", {F({1})}, Attrs({{"to", int64_t{8}}}));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "Cast 'node': cast to STRING (to=8) is not supported");
  EXPECT_EQ(RunStatus("Cast", {F({1})}, Attrs({{"to", int64_t{14}}})).code(),
            StatusCode::kUnsupported);
}

// ---------------------------------------------------------------------------
// Opsets before 7

TEST(Elementwise, Add_opset6_broadcasts_b_from_axis) {
  const Tensor a = F({1, 2, 3, 10, 20, 30}, {2, 3});
  const AttributeMap bcast = Attrs({{"broadcast", int64_t{1}}});
  // Suffix matching by default: B lines up with A's last dims.
  EXPECT_EQ(Values<float>(Eval("Add", {a, F({1, 2, 3})}, bcast, 6)),
            (std::vector<float>{2, 4, 6, 11, 22, 33}));
  // axis=0: B of A's first dim, read as a column (numpy would reject 2 vs 3).
  EXPECT_EQ(Values<float>(Eval("Add", {a, F({100, 200})},
                               Attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{0}}}), 6)),
            (std::vector<float>{101, 102, 103, 210, 220, 230}));
  // Size-1 dims of B stretch, as PyTorch's exporter relied on.
  EXPECT_EQ(Values<float>(Eval("Sub", {a, F({1, 10}, {2, 1})},
                               Attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{0}}}), 6)),
            (std::vector<float>{0, 1, 2, 0, 10, 20}));
  EXPECT_EQ(Values<float>(Eval("Mul", {a, Scalar<float>(2)}, bcast, 1)),
            (std::vector<float>{2, 4, 6, 20, 40, 60}));
  Tensor eq = Eval("Equal", {Make<int32_t>({1, 2, 3, 1}, {2, 2}), Make<int32_t>({1, 2})}, bcast, 1);
  EXPECT_EQ(Values<bool>(eq), (std::vector<bool>{true, true, false, false}));
  Tensor p =
      Eval("Pow", {a, F({1, 2}, {2})}, Attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{0}}}), 6);
  EXPECT_EQ(Values<float>(p), (std::vector<float>{1, 2, 3, 100, 400, 900}));
}

TEST(Elementwise, Add_opset6_rejects_unequal_shapes_without_broadcast) {
  Status s = RunStatus("Add", {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({1, 2, 3})}, {}, 6);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Add 'node': input shapes 2x3 and 3 differ; before opset 7 (model opset 6) that "
            "needs attribute broadcast=1");
}

TEST(Elementwise, Add_opset6_rejects_b_that_does_not_fit_a) {
  const AttributeMap bcast = Attrs({{"broadcast", int64_t{1}}});
  Status s = RunStatus("Div", {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({1, 2})}, bcast, 6);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Div 'node': B shape 2 does not match A shape 2x3 from axis 1; before opset 7 "
            "(model opset 6) only B broadcasts, to A");
  // B may not be the larger one.
  Status big = RunStatus("Add", {F({1, 2}), F({1, 2, 3, 4}, {2, 2})}, bcast, 6);
  EXPECT_EQ(big.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(big.message(), HasSubstr("only B broadcasts, to A"));
  Status axis = RunStatus("Add", {F({1, 2, 3, 4}, {2, 2}), F({1, 2})},
                          Attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{2}}}), 6);
  EXPECT_EQ(axis.code(), StatusCode::kInvalidArgument);
}

TEST(Elementwise, PRelu_opset6_slope_applies_per_channel) {
  const Tensor x = F({-1, -2, -3, -4, -5, -6}, {1, 2, 3});
  // Opset 6: the 2-slope applies along channels (axis 1).
  ExpectNear(Eval("PRelu", {x, F({0.5f, 2})}, {}, 6), {-0.5f, -1, -1.5f, -8, -10, -12});
  ExpectNear(Eval("PRelu", {x, F({3}, {1, 1})}, {}, 6), {-3, -6, -9, -12, -15, -18});
  // Opset 7 broadcasts it like numpy, along the last dim, where 2 vs 3 fails.
  EXPECT_EQ(RunStatus("PRelu", {x, F({0.5f, 2})}, {}, 7).code(), StatusCode::kInvalidArgument);
}

TEST(Elementwise, Selu_opset1_has_rounder_defaults) {
  const float x = -1.0f;
  const double e = std::expm1(-1.0);
  ExpectNear(Eval("Selu", {F({x})}, {}, 1), {static_cast<float>(1.0507 * 1.6732 * e)});
  ExpectNear(Eval("Selu", {F({x})}, {}, 6),
             {static_cast<float>(1.0507010221481323 * 1.6732631921768188 * e)});
}

TEST(Elementwise, Cast_opset1_names_the_target_type) {
  Tensor y = Eval("Cast", {F({1.5f, -2.5f})}, Attrs({{"to", std::string("INT32")}}), 1);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{1, -2}));
  Status s = RunStatus("Cast", {F({1})}, Attrs({{"to", std::string("REAL")}}), 5);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Cast 'node': to='REAL' is not an ONNX tensor data type name (opset 5 names the "
            "type, e.g. 'FLOAT')");
  EXPECT_EQ(RunStatus("Cast", {F({1})}, Attrs({{"to", std::string("STRING")}}), 1).code(),
            StatusCode::kUnsupported);
}

}  // namespace
}  // namespace tessel::ops
