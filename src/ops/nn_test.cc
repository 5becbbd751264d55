#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;

Tensor F(const std::vector<float>& v, Shape shape) {
  return Tensor::FromVector<float>(v, std::move(shape));
}

// 0, 1, 2, ... shaped `shape`.
Tensor Iota(Shape shape, float start = 0) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return F(v, std::move(shape));
}

Tensor Ones(Shape shape) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)), 1.0f);
  return F(v, std::move(shape));
}

Tensor F16(const std::vector<float>& v, Shape shape) {
  Tensor t(DType::kFloat16, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<Half>()[i] = Half{FloatToHalf(v[i])};
  return t;
}

// Row-major values written one row per line.
std::vector<float> Rows(std::initializer_list<std::vector<float>> rows) {
  std::vector<float> v;
  for (const std::vector<float>& r : rows) v.insert(v.end(), r.begin(), r.end());
  return v;
}

// `plane` repeated `times` times: the ONNX ConvTranspose cases use two equal
// output channels.
std::vector<float> Repeat(const std::vector<float>& plane, int times) {
  std::vector<float> v;
  for (int i = 0; i < times; ++i) v.insert(v.end(), plane.begin(), plane.end());
  return v;
}

AttributeMap Attrs(std::initializer_list<std::pair<std::string, AttrValue>> kv) {
  AttributeMap m;
  for (const auto& [k, v] : kv) m.Set(k, v);
  return m;
}

// Runs the op and returns all its outputs; fails the test on error.
std::vector<Tensor> RunAll(const std::string& op, const AttributeMap& attrs,
                           const std::vector<Tensor>& inputs, int num_outputs = 1, int opset = 17) {
  StatusOr<std::vector<Tensor>> r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return std::vector<Tensor>(static_cast<size_t>(num_outputs));
  return std::move(r).value();
}

Tensor Eval(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& inputs,
            int opset = 17) {
  return RunAll(op, attrs, inputs, 1, opset)[0];
}

void ExpectTensor(const Tensor& t, const Shape& shape, const std::vector<float>& expected,
                  double tolerance = 1e-5) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(ShapeToString(t.shape()), ShapeToString(shape));
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    EXPECT_NEAR(t.GetAsDouble(i), expected[i], tolerance) << "at element " << i;
  }
}

// Expects the op to fail with `code` and a message containing every piece.
void ExpectError(const std::string& op, const AttributeMap& attrs,
                 const std::vector<Tensor>& inputs, StatusCode code,
                 const std::vector<std::string>& pieces, int num_outputs = 1, int opset = 17) {
  StatusOr<std::vector<Tensor>> r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  ASSERT_FALSE(r.ok()) << op << " unexpectedly succeeded";
  EXPECT_EQ(r.status().code(), code) << r.status().message();
  EXPECT_THAT(r.status().message(), HasSubstr(op + " 'node'"));
  for (const std::string& p : pieces) EXPECT_THAT(r.status().message(), HasSubstr(p));
}

// ---- Conv ------------------------------------------------------------------

TEST(ConvTest, Basic3x3NoPadding) {
  Tensor y = Eval("Conv", {}, {Iota({1, 1, 5, 5}), Ones({1, 1, 3, 3})});
  ExpectTensor(y, {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});
}

TEST(ConvTest, Padding1) {
  Tensor y = Eval("Conv", Attrs({{"pads", Ints{1, 1, 1, 1}}, {"kernel_shape", Ints{3, 3}}}),
                  {Iota({1, 1, 5, 5}), Ones({1, 1, 3, 3})});
  ExpectTensor(y, {1, 1, 5, 5},
               Rows({
                   {12, 21, 27, 33, 24},
                   {33, 54, 63, 72, 51},
                   {63, 99, 108, 117, 81},
                   {93, 144, 153, 162, 111},
                   {72, 111, 117, 123, 84},
               }));
}

TEST(ConvTest, Stride2WithPadding) {
  Tensor y = Eval("Conv", Attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}),
                  {Iota({1, 1, 7, 5}), Ones({1, 1, 3, 3})});
  ExpectTensor(y, {1, 1, 4, 3}, {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124});
}

TEST(ConvTest, Stride2NoPadding) {
  Tensor y =
      Eval("Conv", Attrs({{"strides", Ints{2, 2}}}), {Iota({1, 1, 7, 5}), Ones({1, 1, 3, 3})});
  ExpectTensor(y, {1, 1, 3, 2}, {54, 72, 144, 162, 234, 252});
}

TEST(ConvTest, Stride2AsymmetricPadding) {
  Tensor y = Eval("Conv", Attrs({{"pads", Ints{1, 0, 1, 0}}, {"strides", Ints{2, 2}}}),
                  {Iota({1, 1, 7, 5}), Ones({1, 1, 3, 3})});
  ExpectTensor(y, {1, 1, 4, 2}, {21, 33, 99, 117, 189, 207, 171, 183});
}

TEST(ConvTest, AsymmetricPadsBeginOnly) {
  // 1-D, x = [1 2 3], w = [1 10], pads begin 2 end 0: windows [0 0] [0 1] [1 2] [2 3].
  Tensor y =
      Eval("Conv", Attrs({{"pads", Ints{2, 0}}}), {F({1, 2, 3}, {1, 1, 3}), F({1, 10}, {1, 1, 2})});
  ExpectTensor(y, {1, 1, 4}, {0, 10, 21, 32});
}

// x = [1 2 3 4], w = [1 10]: the total SAME padding of 1 goes at the end for
// SAME_UPPER and at the beginning for SAME_LOWER.
TEST(ConvTest, AutoPadSameUpper) {
  Tensor y = Eval("Conv", Attrs({{"auto_pad", std::string("SAME_UPPER")}}),
                  {F({1, 2, 3, 4}, {1, 1, 4}), F({1, 10}, {1, 1, 2})});
  ExpectTensor(y, {1, 1, 4}, {21, 32, 43, 4});
}

TEST(ConvTest, AutoPadSameLower) {
  Tensor y = Eval("Conv", Attrs({{"auto_pad", std::string("SAME_LOWER")}}),
                  {F({1, 2, 3, 4}, {1, 1, 4}), F({1, 10}, {1, 1, 2})});
  ExpectTensor(y, {1, 1, 4}, {10, 21, 32, 43});
}

TEST(ConvTest, AutoPadValid) {
  Tensor y = Eval("Conv", Attrs({{"auto_pad", std::string("VALID")}}),
                  {F({1, 2, 3, 4}, {1, 1, 4}), F({1, 10}, {1, 1, 2})});
  ExpectTensor(y, {1, 1, 3}, {21, 32, 43});
}

TEST(ConvTest, AutoPadNotSetWithZeroPads) {
  Tensor y = Eval("Conv", Attrs({{"auto_pad", std::string("NOTSET")}}),
                  {F({1, 2, 3, 4}, {1, 1, 4}), F({1, 10}, {1, 1, 2})});
  ExpectTensor(y, {1, 1, 3}, {21, 32, 43});
}

TEST(ConvTest, AutoPadSameStride2) {
  // ONNX conv_with_autopad_same: out = ceil(5 / 2) = 3, total pad 2 split 1+1.
  Tensor y = Eval("Conv", Attrs({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2, 2}}}),
                  {Iota({1, 1, 5, 5}), Ones({1, 1, 3, 3})});
  ExpectTensor(y, {1, 1, 3, 3}, {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

TEST(ConvTest, Groups) {
  // 4 input channels in 2 groups; each output channel mixes its group's two.
  Tensor x = F({1, 2, 3, 4,      // c0
                10, 20, 30, 40,  // c1
                5, 5, 5, 5,      // c2
                1, 0, 1, 0},     // c3
               {1, 4, 2, 2});
  Tensor w = F({1, 2,    // m0 <- c0, c1
                3, -1},  // m1 <- c2, c3
               {2, 2, 1, 1});
  Tensor y = Eval("Conv", Attrs({{"group", int64_t{2}}}), {x, w});
  ExpectTensor(y, {1, 2, 2, 2}, {21, 42, 63, 84, 14, 15, 14, 15});
}

TEST(ConvTest, Depthwise3x3WithBias) {
  Tensor x = F({1, 2, 3, 4, 5, 6, 7, 8, 9,   // c0
                9, 8, 7, 6, 5, 4, 3, 2, 1},  // c1
               {1, 2, 3, 3});
  Tensor w = F({1, 0, 0, 1,    // c0: main diagonal
                0, 1, -1, 0},  // c1: anti-diagonal difference
               {2, 1, 2, 2});
  Tensor b = F({1, -1}, {2});
  Tensor y = Eval("Conv", Attrs({{"group", int64_t{2}}}), {x, w, b});
  // c0: x[i][j] + x[i+1][j+1] + 1; c1: x[i][j+1] - x[i+1][j] - 1.
  ExpectTensor(y, {1, 2, 2, 2}, {7, 9, 13, 15, 1, 1, 1, 1});
}

TEST(ConvTest, Dilation2) {
  Tensor y =
      Eval("Conv", Attrs({{"dilations", Ints{2, 2}}}), {Iota({1, 1, 4, 4}), Ones({1, 1, 2, 2})});
  ExpectTensor(y, {1, 1, 2, 2}, {20, 24, 36, 40});
}

TEST(ConvTest, Pointwise1x1WithBias) {
  Tensor x = F({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 2, 2});
  Tensor w = F({1, 1, 2, 0, 0, -1}, {3, 2, 1, 1});
  Tensor b = F({0, 1, 2}, {3});
  Tensor y = Eval("Conv", {}, {x, w, b});
  ExpectTensor(y, {1, 3, 2, 2}, {11, 22, 33, 44, 3, 5, 7, 9, -8, -18, -28, -38});
}

TEST(ConvTest, BatchOfTwoAndTwoOutputChannels) {
  Tensor x = F({1, 2, 3, 4, -1, -2, -3, -4}, {2, 1, 2, 2});
  Tensor w = F({1, 1, 1, 1, 1, 0, 0, 0}, {2, 1, 2, 2});
  Tensor y = Eval("Conv", {}, {x, w});
  ExpectTensor(y, {2, 2, 1, 1}, {10, 1, -10, -1});
}

TEST(ConvTest, ThreeD) {
  Tensor y = Eval("Conv", Attrs({{"pads", Ints{0, 0, 0, 0, 0, 1}}}),
                  {Iota({1, 1, 2, 2, 2}), Ones({1, 1, 2, 2, 2})});
  // Sum of 0..7 = 28; the window shifted one step along the last axis into
  // its end padding sees only x[..][..][1] = 1 + 3 + 5 + 7.
  ExpectTensor(y, {1, 1, 1, 1, 2}, {28, 16});
}

TEST(ConvTest, Float64) {
  Tensor x = Tensor::FromVector<double>({1, 2, 3, 4}, {1, 1, 4});
  Tensor w = Tensor::FromVector<double>({0.5, 0.25}, {1, 1, 2});
  Tensor y = Eval("Conv", {}, {x, w});
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  ExpectTensor(y, {1, 1, 3}, {1, 1.75, 2.5});
}

TEST(ConvTest, Float16) {
  Tensor y = Eval("Conv", {}, {F16({1, 2, 3, 4}, {1, 1, 4}), F16({0.5, 0.25}, {1, 1, 2})});
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  ExpectTensor(y, {1, 1, 3}, {1, 1.75, 2.5});
}

TEST(ConvTest, OneDEqualsTwoDWithUnitHeight) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> xv(2 * 3 * 9), wv(4 * 3 * 3);
  for (float& v : xv) v = dist(rng);
  for (float& v : wv) v = dist(rng);
  const AttributeMap a1 =
      Attrs({{"strides", Ints{2}}, {"pads", Ints{1, 2}}, {"dilations", Ints{2}}});
  const AttributeMap a2 =
      Attrs({{"strides", Ints{1, 2}}, {"pads", Ints{0, 1, 0, 2}}, {"dilations", Ints{1, 2}}});
  Tensor y1 = Eval("Conv", a1, {F(xv, {2, 3, 9}), F(wv, {4, 3, 3})});
  Tensor y2 = Eval("Conv", a2, {F(xv, {2, 3, 1, 9}), F(wv, {4, 3, 1, 3})});
  ASSERT_EQ(y1.num_elements(), y2.num_elements());
  ExpectTensor(y2, {2, 4, 1, 4}, y1.ToFloatVector());
}

// ---- Conv against the definition -------------------------------------------

struct Conv2dCase {
  int64_t n, group, cg, mg, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

// Out-of-range sizes are the test's concern, not this function's.
std::vector<float> NaiveConv2d(const Conv2dCase& c, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& b, int64_t oh,
                               int64_t ow) {
  const int64_t ci = c.group * c.cg, m = c.group * c.mg;
  std::vector<float> y(static_cast<size_t>(c.n * m * oh * ow), 0.0f);
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t o = 0; o < m; ++o) {
      const int64_t g = o / c.mg;
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = b[o];
          for (int64_t k = 0; k < c.cg; ++k) {
            for (int64_t ky = 0; ky < c.kh; ++ky) {
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t iy = oy * c.sh + ky * c.dh - c.pt;
                const int64_t ix = ox * c.sw + kx * c.dw - c.pl;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                acc += static_cast<double>(x[((n * ci + g * c.cg + k) * c.h + iy) * c.w + ix]) *
                       w[((o * c.cg + k) * c.kh + ky) * c.kw + kx];
              }
            }
          }
          y[((n * m + o) * oh + oy) * ow + ox] = static_cast<float>(acc);
        }
      }
    }
  }
  return y;
}

// The scatter definition of ConvTranspose, pads given per side.
std::vector<float> NaiveConvTranspose2d(const Conv2dCase& c, const std::vector<float>& x,
                                        const std::vector<float>& w, const std::vector<float>& b,
                                        int64_t oh, int64_t ow) {
  const int64_t ci = c.group * c.cg, m = c.group * c.mg;
  std::vector<double> acc(static_cast<size_t>(c.n * m * oh * ow), 0.0);
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t i = 0; i < oh * ow; ++i) acc[(n * m + o) * oh * ow + i] = b[o];
    }
    for (int64_t k = 0; k < ci; ++k) {
      const int64_t g = k / c.cg;
      for (int64_t iy = 0; iy < c.h; ++iy) {
        for (int64_t ix = 0; ix < c.w; ++ix) {
          for (int64_t om = 0; om < c.mg; ++om) {
            for (int64_t ky = 0; ky < c.kh; ++ky) {
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t oy = iy * c.sh + ky * c.dh - c.pt;
                const int64_t ox = ix * c.sw + kx * c.dw - c.pl;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                acc[((n * m + g * c.mg + om) * oh + oy) * ow + ox] +=
                    static_cast<double>(x[((n * ci + k) * c.h + iy) * c.w + ix]) *
                    w[((k * c.mg + om) * c.kh + ky) * c.kw + kx];
              }
            }
          }
        }
      }
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

Conv2dCase RandomCase(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Conv2dCase c;
  c.n = pick(1, 2);
  c.group = pick(1, 3);
  c.cg = pick(1, 3);
  c.mg = pick(1, 3);
  c.h = pick(1, 9);
  c.w = pick(1, 11);
  c.kh = pick(1, 4);
  c.kw = pick(1, 4);
  c.sh = pick(1, 3);
  c.sw = pick(1, 3);
  c.dh = pick(1, 2);
  c.dw = pick(1, 3);
  c.pt = pick(0, 2);
  c.pl = pick(0, 2);
  c.pb = pick(0, 2);
  c.pr = pick(0, 2);
  return c;
}

std::vector<float> RandomValues(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

AttributeMap CaseAttrs(const Conv2dCase& c) {
  return Attrs({{"group", c.group},
                {"strides", Ints{c.sh, c.sw}},
                {"dilations", Ints{c.dh, c.dw}},
                {"pads", Ints{c.pt, c.pl, c.pb, c.pr}}});
}

TEST(ConvTest, MatchesNaiveDefinitionOnRandomShapes) {
  std::mt19937 rng(2024);
  int checked = 0, rejected = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const Conv2dCase c = RandomCase(rng);
    const int64_t ci = c.group * c.cg, m = c.group * c.mg;
    const int64_t span_h = c.h + c.pt + c.pb - (c.dh * (c.kh - 1) + 1);
    const int64_t span_w = c.w + c.pl + c.pr - (c.dw * (c.kw - 1) + 1);
    const std::vector<float> x = RandomValues(rng, c.n * ci * c.h * c.w);
    const std::vector<float> w = RandomValues(rng, m * c.cg * c.kh * c.kw);
    const std::vector<float> b = RandomValues(rng, m);
    const std::vector<Tensor> inputs = {F(x, {c.n, ci, c.h, c.w}), F(w, {m, c.cg, c.kh, c.kw}),
                                        F(b, {m})};
    SCOPED_TRACE("case " + std::to_string(iter));
    if (span_h < 0 || span_w < 0) {
      ExpectError("Conv", CaseAttrs(c), inputs, StatusCode::kInvalidArgument,
                  {"does not fit input size"});
      ++rejected;
      continue;
    }
    const int64_t oh = span_h / c.sh + 1, ow = span_w / c.sw + 1;
    Tensor y = Eval("Conv", CaseAttrs(c), inputs);
    ExpectTensor(y, {c.n, m, oh, ow}, NaiveConv2d(c, x, w, b, oh, ow), 1e-4);
    ++checked;
  }
  EXPECT_GT(checked, 150);
  EXPECT_GT(rejected, 0);
}

TEST(ConvTransposeTest, MatchesNaiveDefinitionOnRandomShapes) {
  std::mt19937 rng(77);
  int checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const Conv2dCase c = RandomCase(rng);
    const int64_t ci = c.group * c.cg, m = c.group * c.mg;
    const int64_t oph = std::uniform_int_distribution<int64_t>(0, c.sh - 1)(rng);
    const int64_t opw = std::uniform_int_distribution<int64_t>(0, c.sw - 1)(rng);
    const int64_t oh = c.sh * (c.h - 1) + oph + c.dh * (c.kh - 1) + 1 - c.pt - c.pb;
    const int64_t ow = c.sw * (c.w - 1) + opw + c.dw * (c.kw - 1) + 1 - c.pl - c.pr;
    const std::vector<float> x = RandomValues(rng, c.n * ci * c.h * c.w);
    const std::vector<float> w = RandomValues(rng, ci * c.mg * c.kh * c.kw);
    const std::vector<float> b = RandomValues(rng, m);
    AttributeMap attrs = CaseAttrs(c);
    attrs.Set("output_padding", Ints{oph, opw});
    const std::vector<Tensor> inputs = {F(x, {c.n, ci, c.h, c.w}), F(w, {ci, c.mg, c.kh, c.kw}),
                                        F(b, {m})};
    SCOPED_TRACE("case " + std::to_string(iter));
    if (oh < 1 || ow < 1) {
      ExpectError("ConvTranspose", attrs, inputs, StatusCode::kInvalidArgument,
                  {"output size along axis"});
      continue;
    }
    Tensor y = Eval("ConvTranspose", attrs, inputs);
    ExpectTensor(y, {c.n, m, oh, ow}, NaiveConvTranspose2d(c, x, w, b, oh, ow), 1e-4);
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

// ---- Conv errors -----------------------------------------------------------

TEST(ConvTest, Conv_rejects_channel_mismatch) {
  ExpectError("Conv", {}, {Ones({1, 16, 5, 5}), Ones({4, 8, 3, 3})}, StatusCode::kInvalidArgument,
              {"input 'in0' has 16 channels but W 'in1' (4x8x3x3) expects 8 x group 1"});
}

TEST(ConvTest, Conv_rejects_group_not_dividing_output_channels) {
  ExpectError("Conv", Attrs({{"group", int64_t{2}}}), {Ones({1, 4, 5, 5}), Ones({3, 2, 1, 1})},
              StatusCode::kInvalidArgument, {"3 output channels, not divisible by group 2"});
}

TEST(ConvTest, Conv_rejects_zero_group) {
  ExpectError("Conv", Attrs({{"group", int64_t{0}}}), {Ones({1, 4, 5, 5}), Ones({4, 4, 1, 1})},
              StatusCode::kInvalidArgument, {"group 0 must be >= 1"});
}

TEST(ConvTest, Conv_rejects_negative_pad) {
  ExpectError("Conv", Attrs({{"pads", Ints{0, -1, 0, 0}}}),
              {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"pads [0,-1,0,0] must all be >= 0"});
}

TEST(ConvTest, Conv_rejects_kernel_too_large) {
  ExpectError("Conv", {}, {Ones({1, 1, 5, 2}), Ones({1, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"kernel 3 (dilation 1) does not fit input size 2 along axis 3 padded by 0+0"});
}

TEST(ConvTest, Conv_rejects_kernel_too_large_after_dilation) {
  ExpectError("Conv", Attrs({{"dilations", Ints{3, 1}}}), {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})},
              StatusCode::kInvalidArgument,
              {"kernel 3 (dilation 3) does not fit input size 5 along axis 2"});
}

TEST(ConvTest, Conv_rejects_wrong_rank_of_x) {
  ExpectError("Conv", {}, {Ones({4, 5}), Ones({1, 4, 3})}, StatusCode::kInvalidArgument,
              {"input 'in0' has shape 4x5; expected rank >= 3"});
}

TEST(ConvTest, Conv_rejects_wrong_rank_of_w) {
  ExpectError("Conv", {}, {Ones({1, 1, 5, 5}), Ones({1, 1, 3})}, StatusCode::kInvalidArgument,
              {"W 'in1' has shape 1x1x3; expected rank 4"});
}

TEST(ConvTest, Conv_rejects_strides_of_wrong_length) {
  ExpectError("Conv", Attrs({{"strides", Ints{1, 1, 1}}}), {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})},
              StatusCode::kInvalidArgument, {"strides [1,1,1] has 3 values; expected 2"});
}

TEST(ConvTest, Conv_rejects_zero_stride) {
  ExpectError("Conv", Attrs({{"strides", Ints{1, 0}}}), {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})},
              StatusCode::kInvalidArgument, {"strides [1,0] must all be >= 1"});
}

TEST(ConvTest, Conv_rejects_zero_dilation) {
  ExpectError("Conv", Attrs({{"dilations", Ints{0, 1}}}), {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})},
              StatusCode::kInvalidArgument, {"dilations [0,1] must all be >= 1"});
}

TEST(ConvTest, Conv_rejects_unknown_auto_pad) {
  ExpectError("Conv", Attrs({{"auto_pad", std::string("SAME")}}),
              {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"auto_pad 'SAME' is not one of"});
}

TEST(ConvTest, Conv_rejects_pads_with_auto_pad) {
  ExpectError("Conv", Attrs({{"auto_pad", std::string("SAME_UPPER")}, {"pads", Ints{1, 1, 1, 1}}}),
              {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"pads [1,1,1,1] cannot be combined with auto_pad SAME_UPPER"});
}

TEST(ConvTest, Conv_rejects_kernel_shape_mismatch) {
  ExpectError("Conv", Attrs({{"kernel_shape", Ints{3, 2}}}),
              {Ones({1, 1, 5, 5}), Ones({1, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"kernel_shape [3,2] does not match W 'in1' of shape 1x1x3x3"});
}

TEST(ConvTest, Conv_rejects_bias_of_wrong_size) {
  ExpectError("Conv", {}, {Ones({1, 1, 5, 5}), Ones({2, 1, 3, 3}), Ones({3})},
              StatusCode::kInvalidArgument, {"bias 'in2' has shape 3; expected 2"});
}

TEST(ConvTest, Conv_rejects_integer_input) {
  ExpectError("Conv", {},
              {Tensor(DType::kInt32, {1, 1, 3, 3}), Tensor(DType::kInt32, {1, 1, 1, 1})},
              StatusCode::kUnsupported, {"dtype int32"});
}

TEST(ConvTest, Conv_rejects_mixed_dtypes) {
  ExpectError("Conv", {}, {Ones({1, 1, 3, 3}), Tensor(DType::kFloat64, {1, 1, 1, 1})},
              StatusCode::kInvalidArgument, {"must have the same dtype"});
}

// ---- ConvTranspose -----------------------------------------------------------

TEST(ConvTransposeTest, Basic) {
  Tensor y = Eval("ConvTranspose", {}, {Iota({1, 1, 3, 3}), Ones({1, 2, 3, 3})});
  const std::vector<float> plane = Rows({
      {0, 1, 3, 3, 2},
      {3, 8, 15, 12, 7},
      {9, 21, 36, 27, 15},
      {9, 20, 33, 24, 13},
      {6, 13, 21, 15, 8},
  });
  ExpectTensor(y, {1, 2, 5, 5}, Repeat(plane, 2));
}

TEST(ConvTransposeTest, OneDWithStride) {
  // x = [1 2], w = [1 10 100], stride 2: [1 10 100] and [2 20 200] two apart.
  Tensor y = Eval("ConvTranspose", Attrs({{"strides", Ints{2}}}),
                  {F({1, 2}, {1, 1, 2}), F({1, 10, 100}, {1, 1, 3})});
  ExpectTensor(y, {1, 1, 5}, {1, 10, 102, 20, 200});
}

TEST(ConvTransposeTest, PadsAndStrides) {
  Tensor y = Eval("ConvTranspose", Attrs({{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}}),
                  {Iota({1, 1, 3, 3}), Ones({1, 2, 3, 3})});
  const std::vector<float> plane = Rows({
      {1, 1, 3},
      {1, 1, 3},
      {7, 4, 9},
      {7, 4, 9},
      {7, 4, 9},
      {13, 7, 15},
      {13, 7, 15},
  });
  ExpectTensor(y, {1, 2, 7, 3}, Repeat(plane, 2));
}

// ONNX's convtranspose_output_shape / _pad / _kernel_shape cases agree on one
// 10x8 result: the natural 9x7 output plus a zero row and column at the end.
std::vector<float> ConvTransposeOutputShapeExpected() {
  return Repeat(Rows({
                    {0, 0, 1, 1, 3, 2, 2, 0},
                    {0, 0, 1, 1, 3, 2, 2, 0},
                    {0, 0, 1, 1, 3, 2, 2, 0},
                    {3, 3, 7, 4, 9, 5, 5, 0},
                    {3, 3, 7, 4, 9, 5, 5, 0},
                    {3, 3, 7, 4, 9, 5, 5, 0},
                    {6, 6, 13, 7, 15, 8, 8, 0},
                    {6, 6, 13, 7, 15, 8, 8, 0},
                    {6, 6, 13, 7, 15, 8, 8, 0},
                    {0, 0, 0, 0, 0, 0, 0, 0},
                }),
                2);
}

TEST(ConvTransposeTest, OutputShape) {
  Tensor y = Eval("ConvTranspose", Attrs({{"strides", Ints{3, 2}}, {"output_shape", Ints{10, 8}}}),
                  {Iota({1, 1, 3, 3}), Ones({1, 2, 3, 3})});
  ExpectTensor(y, {1, 2, 10, 8}, ConvTransposeOutputShapeExpected());
}

TEST(ConvTransposeTest, OutputPadding) {
  Tensor y = Eval("ConvTranspose", Attrs({{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}}),
                  {Iota({1, 1, 3, 3}), Ones({1, 2, 3, 3})});
  ExpectTensor(y, {1, 2, 10, 8}, ConvTransposeOutputShapeExpected());
}

TEST(ConvTransposeTest, OutputShapeWithOutputPaddingAndKernelShape) {
  Tensor y = Eval("ConvTranspose",
                  Attrs({{"strides", Ints{3, 2}},
                         {"output_shape", Ints{10, 8}},
                         {"kernel_shape", Ints{3, 3}},
                         {"output_padding", Ints{1, 1}}}),
                  {Iota({1, 1, 3, 3}), Ones({1, 2, 3, 3})});
  ExpectTensor(y, {1, 2, 10, 8}, ConvTransposeOutputShapeExpected());
}

TEST(ConvTransposeTest, OutputShapeCropsFromPads) {
  // Full output of x = [1 2 3] with w = [1 1 1] is [1 3 6 5 3]; asking for 4
  // crops 1, which the default split takes from the beginning.
  Tensor y = Eval("ConvTranspose", Attrs({{"output_shape", Ints{4}}}),
                  {F({1, 2, 3}, {1, 1, 3}), F({1, 1, 1}, {1, 1, 3})});
  ExpectTensor(y, {1, 1, 4}, {3, 6, 5, 3});
}

TEST(ConvTransposeTest, AutoPadSameUpper) {
  Tensor y = Eval("ConvTranspose",
                  Attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}),
                  {Iota({1, 1, 3, 3}), Ones({1, 2, 3, 3})});
  const std::vector<float> plane = Rows({
      {0, 0, 1, 1, 3, 2},
      {0, 0, 1, 1, 3, 2},
      {3, 3, 8, 5, 12, 7},
      {3, 3, 7, 4, 9, 5},
      {9, 9, 20, 11, 24, 13},
      {6, 6, 13, 7, 15, 8},
  });
  ExpectTensor(y, {1, 2, 6, 6}, Repeat(plane, 2));
}

TEST(ConvTransposeTest, AutoPadSameOddTotal) {
  // The full output [1 3 5 3] (x = [1 2 3], w = [1 1]) is cropped to
  // in * stride = 3: SAME_UPPER drops the odd element at the end, SAME_LOWER
  // at the beginning.
  const std::vector<Tensor> inputs = {F({1, 2, 3}, {1, 1, 3}), F({1, 1}, {1, 1, 2})};
  ExpectTensor(Eval("ConvTranspose", Attrs({{"auto_pad", std::string("SAME_UPPER")}}), inputs),
               {1, 1, 3}, {1, 3, 5});
  ExpectTensor(Eval("ConvTranspose", Attrs({{"auto_pad", std::string("SAME_LOWER")}}), inputs),
               {1, 1, 3}, {3, 5, 3});
}

TEST(ConvTransposeTest, Dilations) {
  Tensor y = Eval("ConvTranspose", Attrs({{"dilations", Ints{2, 2}}}),
                  {F({3, 8, 1, 9, 5, 7, 3, 2, 6}, {1, 1, 3, 3}), F({7, 2, 1, 9}, {1, 1, 2, 2})});
  ExpectTensor(y, {1, 1, 5, 5},
               Rows({
                   {21, 56, 13, 16, 2},
                   {63, 35, 67, 10, 14},
                   {24, 22, 76, 76, 21},
                   {9, 5, 88, 45, 63},
                   {3, 2, 33, 18, 54},
               }));
}

TEST(ConvTransposeTest, GroupsAndBias) {
  // 2 groups, 1 input and 1 output channel each, 1x1 kernels: y_g = w_g * x_g + b_g.
  Tensor y = Eval("ConvTranspose", Attrs({{"group", int64_t{2}}}),
                  {F({1, 2, 3, 4}, {1, 2, 2}), F({2, -1}, {2, 1, 1}), F({10, 20}, {2})});
  ExpectTensor(y, {1, 2, 2}, {12, 14, 17, 16});
}

TEST(ConvTransposeTest, ConvTranspose_rejects_channel_mismatch) {
  ExpectError("ConvTranspose", {}, {Ones({1, 3, 2, 2}), Ones({2, 1, 3, 3})},
              StatusCode::kInvalidArgument,
              {"input 'in0' has 3 channels but W 'in1' (2x1x3x3) expects 2"});
}

TEST(ConvTransposeTest, ConvTranspose_rejects_group_not_dividing_channels) {
  ExpectError("ConvTranspose", Attrs({{"group", int64_t{2}}}),
              {Ones({1, 3, 2, 2}), Ones({3, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"3 channels, not divisible by group 2"});
}

TEST(ConvTransposeTest, ConvTranspose_rejects_large_output_padding) {
  ExpectError("ConvTranspose", Attrs({{"strides", Ints{2}}, {"output_padding", Ints{2}}}),
              {Ones({1, 1, 3}), Ones({1, 1, 3})}, StatusCode::kInvalidArgument,
              {"output_padding [2] must be smaller than the stride"});
}

TEST(ConvTransposeTest, ConvTranspose_rejects_output_shape_of_wrong_length) {
  ExpectError("ConvTranspose", Attrs({{"output_shape", Ints{4, 4, 4}}}),
              {Ones({1, 1, 3, 3}), Ones({1, 1, 3, 3})}, StatusCode::kInvalidArgument,
              {"output_shape [4,4,4] has 3 values; expected 2"});
}

TEST(ConvTransposeTest, ConvTranspose_rejects_pads_consuming_output) {
  ExpectError("ConvTranspose", Attrs({{"pads", Ints{2, 2}}}), {Ones({1, 1, 1}), Ones({1, 1, 3})},
              StatusCode::kInvalidArgument, {"output size along axis 2 would be -1"});
}

// ---- Pools -----------------------------------------------------------------

TEST(MaxPoolTest, Basic2x2Stride2) {
  Tensor y = Eval("MaxPool", Attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
                  {Iota({1, 1, 4, 4}, 1)});
  ExpectTensor(y, {1, 1, 2, 2}, {6, 8, 14, 16});
}

TEST(MaxPoolTest, CeilMode) {
  const AttributeMap floor_attrs = Attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  ExpectTensor(Eval("MaxPool", floor_attrs, {Iota({1, 1, 4, 4}, 1)}), {1, 1, 1, 1}, {11});
  AttributeMap ceil_attrs = floor_attrs;
  ceil_attrs.Set("ceil_mode", int64_t{1});
  ExpectTensor(Eval("MaxPool", ceil_attrs, {Iota({1, 1, 4, 4}, 1)}), {1, 1, 2, 2},
               {11, 12, 15, 16});
}

TEST(MaxPoolTest, CeilModeDropsWindowStartingInPadding) {
  // k 2, s 2, pads 1+1: windows start at -1, 1, 3. For in 5, ceil((5 + 2 - 2)
  // / 2) + 1 = 4, but the fourth window would start at 5, inside the end
  // padding, and is dropped.
  Tensor y = Eval("MaxPool",
                  Attrs({{"kernel_shape", Ints{2}},
                         {"strides", Ints{2}},
                         {"pads", Ints{1, 1}},
                         {"ceil_mode", int64_t{1}}}),
                  {F({1, 5, 2, 7}, {1, 1, 4})});
  ExpectTensor(y, {1, 1, 3}, {1, 5, 7});
  Tensor z = Eval("MaxPool",
                  Attrs({{"kernel_shape", Ints{2}},
                         {"strides", Ints{2}},
                         {"pads", Ints{1, 1}},
                         {"ceil_mode", int64_t{1}}}),
                  {F({1, 5, 2, 7, 3}, {1, 1, 5})});
  ExpectTensor(z, {1, 1, 3}, {1, 5, 7});
}

TEST(MaxPoolTest, Pads) {
  Tensor y = Eval("MaxPool", Attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}),
                  {Iota({1, 1, 3, 3}, 1)});
  ExpectTensor(y, {1, 1, 3, 3}, {5, 6, 6, 8, 9, 9, 8, 9, 9});
}

TEST(MaxPoolTest, PaddingNeverWinsOverNegativeValues) {
  Tensor y = Eval("MaxPool", Attrs({{"kernel_shape", Ints{2}}, {"pads", Ints{1, 1}}}),
                  {F({-3, -1}, {1, 1, 2})});
  ExpectTensor(y, {1, 1, 3}, {-3, -1, -1});
}

TEST(MaxPoolTest, Dilations) {
  Tensor y = Eval("MaxPool", Attrs({{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}),
                  {Iota({1, 1, 4, 4}, 1)});
  ExpectTensor(y, {1, 1, 2, 2}, {11, 12, 15, 16});
}

TEST(MaxPoolTest, AutoPadSameUpperAndLower) {
  const Tensor x = F({1, 3, 2}, {1, 1, 3});
  ExpectTensor(
      Eval("MaxPool", Attrs({{"kernel_shape", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}}),
           {x}),
      {1, 1, 3}, {3, 3, 2});
  ExpectTensor(
      Eval("MaxPool", Attrs({{"kernel_shape", Ints{2}}, {"auto_pad", std::string("SAME_LOWER")}}),
           {x}),
      {1, 1, 3}, {1, 3, 3});
  ExpectTensor(
      Eval("MaxPool", Attrs({{"kernel_shape", Ints{2}}, {"auto_pad", std::string("VALID")}}), {x}),
      {1, 1, 2}, {3, 3});
}

TEST(MaxPoolTest, IndicesRowAndColumnMajor) {
  // Two planes of 2x3; windows 2x2, stride 1.
  const Tensor x = F({1, 5, 2, 4, 3, 6,   // plane 0
                      9, 0, 0, 0, 0, 8},  // plane 1
                     {1, 2, 2, 3});
  const AttributeMap attrs = Attrs({{"kernel_shape", Ints{2, 2}}});
  std::vector<Tensor> r = RunAll("MaxPool", attrs, {x}, 2);
  ExpectTensor(r[0], {1, 2, 1, 2}, {5, 6, 9, 8});
  ASSERT_EQ(r[1].dtype(), DType::kInt64);
  EXPECT_EQ(r[1].ToInt64Vector(), (Ints{1, 5, 6, 11}));
  AttributeMap col = attrs;
  col.Set("storage_order", int64_t{1});
  // Column-major within a plane: h + w * H.
  r = RunAll("MaxPool", col, {x}, 2);
  EXPECT_EQ(r[1].ToInt64Vector(), (Ints{2, 5, 6, 11}));
}

TEST(MaxPoolTest, Float16WithIndices) {
  std::vector<Tensor> r =
      RunAll("MaxPool", Attrs({{"kernel_shape", Ints{2}}}), {F16({1, 4, 2, 3}, {1, 1, 4})}, 2);
  ASSERT_EQ(r[0].dtype(), DType::kFloat16);
  ExpectTensor(r[0], {1, 1, 3}, {4, 4, 3});
  EXPECT_EQ(r[1].ToInt64Vector(), (Ints{1, 1, 3}));
}

TEST(MaxPoolTest, ThreeD) {
  Tensor y = Eval("MaxPool", Attrs({{"kernel_shape", Ints{2, 2, 2}}}), {Iota({1, 1, 2, 2, 3})});
  ExpectTensor(y, {1, 1, 1, 1, 2}, {10, 11});
}

TEST(MaxPoolTest, MaxPool_rejects_missing_kernel_shape) {
  ExpectError("MaxPool", {}, {Ones({1, 1, 4, 4})}, StatusCode::kInvalidArgument,
              {"attribute kernel_shape is required"});
}

TEST(MaxPoolTest, MaxPool_rejects_pad_not_smaller_than_kernel) {
  ExpectError("MaxPool", Attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}}),
              {Ones({1, 1, 4, 4})}, StatusCode::kInvalidArgument,
              {"pads [2,0,0,0] must be smaller than kernel_shape [2,2]"});
}

TEST(MaxPoolTest, MaxPool_rejects_kernel_too_large) {
  ExpectError("MaxPool", Attrs({{"kernel_shape", Ints{5, 1}}}), {Ones({1, 1, 4, 4})},
              StatusCode::kInvalidArgument, {"kernel 5 (dilation 1) does not fit input size 4"});
}

TEST(MaxPoolTest, MaxPool_rejects_wrong_rank) {
  ExpectError("MaxPool", Attrs({{"kernel_shape", Ints{2}}}), {Ones({4, 4})},
              StatusCode::kInvalidArgument, {"expected rank >= 3"});
}

TEST(MaxPoolTest, MaxPool_rejects_bad_storage_order) {
  ExpectError("MaxPool", Attrs({{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t{2}}}),
              {Ones({1, 1, 4, 4})}, StatusCode::kInvalidArgument,
              {"storage_order 2 must be 0 or 1"});
}

TEST(AveragePoolTest, CeilMode) {
  Tensor y = Eval(
      "AveragePool",
      Attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}),
      {Iota({1, 1, 4, 4}, 1)});
  ExpectTensor(y, {1, 1, 2, 2}, {6, 7.5, 12, 13.5});
}

TEST(AveragePoolTest, PadsExcludedFromCountByDefault) {
  Tensor y = Eval("AveragePool", Attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}),
                  {Iota({1, 1, 3, 3}, 1)});
  ExpectTensor(y, {1, 1, 3, 3}, {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
}

TEST(AveragePoolTest, CountIncludePad) {
  Tensor y = Eval("AveragePool",
                  Attrs({{"kernel_shape", Ints{3, 3}},
                         {"pads", Ints{1, 1, 1, 1}},
                         {"count_include_pad", int64_t{1}}}),
                  {Iota({1, 1, 3, 3}, 1)});
  ExpectTensor(
      y, {1, 1, 3, 3},
      {12 / 9.0f, 21 / 9.0f, 16 / 9.0f, 27 / 9.0f, 5, 33 / 9.0f, 24 / 9.0f, 39 / 9.0f, 28 / 9.0f});
}

TEST(AveragePoolTest, CeilModeCountIncludePadClipsToPaddedInput) {
  // Windows start at -1, 1, 3; the last covers x[3], one pad and one element
  // beyond the padding, which is not counted.
  const AttributeMap attrs = Attrs({{"kernel_shape", Ints{3}},
                                    {"strides", Ints{2}},
                                    {"pads", Ints{1, 1}},
                                    {"ceil_mode", int64_t{1}},
                                    {"count_include_pad", int64_t{1}}});
  ExpectTensor(Eval("AveragePool", attrs, {F({1, 2, 3, 4}, {1, 1, 4})}), {1, 1, 3}, {1, 3, 2});
  AttributeMap exclude = attrs;
  exclude.Set("count_include_pad", int64_t{0});
  ExpectTensor(Eval("AveragePool", exclude, {F({1, 2, 3, 4}, {1, 1, 4})}), {1, 1, 3}, {1.5, 3, 4});
}

TEST(AveragePoolTest, AveragePool_rejects_bad_count_include_pad) {
  ExpectError("AveragePool", Attrs({{"kernel_shape", Ints{2}}, {"count_include_pad", int64_t{3}}}),
              {Ones({1, 1, 4})}, StatusCode::kInvalidArgument, {"count_include_pad 3"});
}

TEST(LpPoolTest, P1AndP2) {
  const Tensor x = F({3, -4, 0, 0}, {1, 1, 2, 2});
  ExpectTensor(Eval("LpPool", Attrs({{"kernel_shape", Ints{2, 2}}}), {x}), {1, 1, 1, 1}, {5});
  ExpectTensor(Eval("LpPool", Attrs({{"kernel_shape", Ints{2, 2}}, {"p", int64_t{1}}}), {x}),
               {1, 1, 1, 1}, {7});
  ExpectTensor(Eval("LpPool", Attrs({{"kernel_shape", Ints{2, 2}}, {"p", int64_t{3}}}), {x}),
               {1, 1, 1, 1}, {static_cast<float>(std::cbrt(91.0))});
}

TEST(LpPoolTest, StridesAndPads) {
  Tensor y =
      Eval("LpPool", Attrs({{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}}),
           {F({3, 6, 8, 8}, {1, 1, 4})});
  ExpectTensor(y, {1, 1, 3}, {3, 10, 8});
}

TEST(LpPoolTest, LpPool_rejects_zero_p) {
  ExpectError("LpPool", Attrs({{"kernel_shape", Ints{2}}, {"p", int64_t{0}}}), {Ones({1, 1, 4})},
              StatusCode::kInvalidArgument, {"p 0 must be >= 1"});
}

TEST(LpPoolTest, Opset1_takes_a_float_p) {
  const Tensor x = F({3, 4, -6, 8}, {1, 1, 4});
  ExpectTensor(
      Eval("LpPool", Attrs({{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"p", 2.0f}}), {x}, 1),
      {1, 1, 2}, {5, 10});
  ExpectTensor(Eval("GlobalLpPool", Attrs({{"p", 1.0f}}), {x}, 1), {1, 1, 1}, {21});
  ExpectTensor(Eval("GlobalLpPool", Attrs({{"p", 1.5f}}), {F({1, 4}, {1, 1, 2})}, 1), {1, 1, 1},
               {static_cast<float>(std::pow(9.0, 1 / 1.5))});
  ExpectError("GlobalLpPool", Attrs({{"p", 0.5f}}), {x}, StatusCode::kInvalidArgument,
              {"p 0.5 must be >= 1"}, 1, 1);
  ExpectError("LpPool", {}, {x}, StatusCode::kUnsupported,
              {"attribute kernel_shape is missing; before opset 2"}, 1, 1);
}

TEST(GlobalPoolTest, AverageMaxAndLp) {
  const Tensor x = F({1, 2, 3, 6, -3, 0, 4, -1}, {1, 2, 2, 2});
  ExpectTensor(Eval("GlobalAveragePool", {}, {x}), {1, 2, 1, 1}, {3, 0});
  ExpectTensor(Eval("GlobalMaxPool", {}, {x}), {1, 2, 1, 1}, {6, 4});
  ExpectTensor(Eval("GlobalLpPool", {}, {x}), {1, 2, 1, 1},
               {static_cast<float>(std::sqrt(50.0)), static_cast<float>(std::sqrt(26.0))});
  ExpectTensor(Eval("GlobalLpPool", Attrs({{"p", int64_t{1}}}), {x}), {1, 2, 1, 1}, {12, 8});
}

TEST(GlobalPoolTest, ThreeDAndBatch) {
  ExpectTensor(Eval("GlobalAveragePool", {}, {Iota({2, 1, 2, 1, 2})}), {2, 1, 1, 1, 1}, {1.5, 5.5});
  ExpectTensor(Eval("GlobalMaxPool", {}, {Iota({2, 1, 3})}), {2, 1, 1}, {2, 5});
}

TEST(GlobalPoolTest, GlobalMaxPool_propagates_nan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor y = Eval("GlobalMaxPool", {}, {F({1, nan, 3, 2, 5, 4}, {2, 1, 3})});
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
  EXPECT_EQ(y.data<float>()[1], 5);
}

TEST(GlobalPoolTest, GlobalAveragePool_rejects_rank_2) {
  ExpectError("GlobalAveragePool", {}, {Ones({2, 3})}, StatusCode::kInvalidArgument,
              {"input 'in0' has shape 2x3; expected rank >= 3"});
}

// ---- Normalization -------------------------------------------------------------

TEST(BatchNormTest, KnownMeanAndVariance) {
  const Tensor x = F({1, 2, 3, 4, 5, 7, 3, 1}, {2, 2, 1, 2});
  Tensor y = Eval("BatchNormalization", Attrs({{"epsilon", 0.0f}}),
                  {x, F({1, 2}, {2}), F({0, 1}, {2}), F({1, 3}, {2}), F({4, 0.25}, {2})});
  // c0: (x - 1) / 2; c1: (x - 3) / 0.5 * 2 + 1.
  ExpectTensor(y, {2, 2, 1, 2}, {0, 0.5, 1, 5, 2, 3, 1, -7});
}

TEST(BatchNormTest, Rank2AndDefaultEpsilon) {
  Tensor y =
      Eval("BatchNormalization", {},
           {F({2, 4}, {1, 2}), F({1, 1}, {2}), F({0, 0}, {2}), F({0, 0}, {2}), F({1, 3}, {2})});
  ExpectTensor(
      y, {1, 2},
      {static_cast<float>(2 / std::sqrt(1 + 1e-5)), static_cast<float>(4 / std::sqrt(3 + 1e-5))});
}

TEST(BatchNormTest, Opset7PerActivation) {
  Tensor y = Eval("BatchNormalization", Attrs({{"spatial", int64_t{0}}, {"epsilon", 0.0f}}),
                  {F({1, 2, 3, 4}, {2, 1, 2}), F({1, 2}, {1, 2}), F({0, 1}, {1, 2}),
                   F({1, 2}, {1, 2}), F({1, 4}, {1, 2})},
                  7);
  ExpectTensor(y, {2, 1, 2}, {0, 1, 2, 3});
}

TEST(BatchNormTest, Float64) {
  auto d = [](std::vector<double> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return Tensor::FromVector<double>(v, {n});
  };
  Tensor y = Eval("BatchNormalization", Attrs({{"epsilon", 0.0f}}),
                  {Tensor::FromVector<double>({3, 5}, {1, 1, 2}), d({2}), d({1}), d({1}), d({4})});
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  ExpectTensor(y, {1, 1, 2}, {3, 5});
}

TEST(BatchNormTest, BatchNormalization_rejects_training_mode) {
  ExpectError("BatchNormalization", Attrs({{"training_mode", int64_t{1}}}),
              {Ones({1, 2, 2}), Ones({2}), Ones({2}), Ones({2}), Ones({2})},
              StatusCode::kUnsupported, {"training_mode=1 is not supported"});
}

TEST(BatchNormTest, Opset6_is_test_selects_inference) {
  const std::vector<Tensor> in = {F({1, 2, 3, 4}, {1, 2, 2}), F({1, 2}, {2}), F({0, 1}, {2}),
                                  F({1, 3}, {2}), F({4, 1}, {2})};
  Tensor y = Eval(
      "BatchNormalization",
      Attrs({{"is_test", int64_t{1}}, {"epsilon", 0.0f}, {"consumed_inputs", Ints{0, 0, 0, 1, 1}}}),
      in, 1);
  ExpectTensor(y, {1, 2, 2}, {0, 0.5, 1, 3});
  // is_test defaults to 0 (training) before opset 7.
  ExpectError("BatchNormalization", {}, in, StatusCode::kUnsupported,
              {"is_test=0 (training mode, the default before opset 7) is not supported"}, 1, 6);
}

TEST(BatchNormTest, BatchNormalization_rejects_training_outputs) {
  ExpectError("BatchNormalization", {},
              {Ones({1, 2, 2}), Ones({2}), Ones({2}), Ones({2}), Ones({2})},
              StatusCode::kUnsupported, {"output 1 ('out1') is a training statistic"}, 3);
}

TEST(BatchNormTest, BatchNormalization_rejects_parameter_shape) {
  ExpectError(
      "BatchNormalization", {}, {Ones({1, 2, 2}), Ones({2}), Ones({3}), Ones({2}), Ones({2})},
      StatusCode::kInvalidArgument, {"B 'in2' has shape 3; expected 2 (one per channel of X)"});
}

TEST(InstanceNormTest, KnownStatistics) {
  // c0 [1 3]: mean 2, var 1; c1 [0 4]: mean 2, var 4.
  Tensor y = Eval("InstanceNormalization", Attrs({{"epsilon", 0.0f}}),
                  {F({1, 3, 0, 4}, {1, 2, 2}), F({2, 1}, {2}), F({1, 0}, {2})});
  ExpectTensor(y, {1, 2, 2}, {-1, 3, -1, 1});
}

TEST(InstanceNormTest, InstanceNormalization_rejects_scale_shape) {
  ExpectError("InstanceNormalization", {}, {Ones({1, 2, 2}), Ones({3}), Ones({2})},
              StatusCode::kInvalidArgument, {"scale 'in1' has shape 3; expected 2"});
}

TEST(LayerNormTest, LastAxisWithMeanAndInvStdDev) {
  const Tensor x = F({0, 0, 2, 2, 1, 3, 1, 3}, {2, 4});
  std::vector<Tensor> r = RunAll("LayerNormalization", Attrs({{"epsilon", 0.0f}}),
                                 {x, F({1, 2, 3, 4}, {4}), F({0, 0, 0, 1}, {4})}, 3);
  ExpectTensor(r[0], {2, 4}, {-1, -2, 3, 5, -1, 2, -3, 5});
  ASSERT_EQ(r[1].dtype(), DType::kFloat32);
  ExpectTensor(r[1], {2, 1}, {1, 2});
  ExpectTensor(r[2], {2, 1}, {1, 1});
}

TEST(LayerNormTest, AxisOneWithBroadcastScaleAndNoBias) {
  // Normalizes each 2x2 block; the scale [1 2] broadcasts over its rows.
  const Tensor x = F({0, 2, 0, 2, 1, 1, 3, 3}, {2, 2, 2});
  std::vector<Tensor> r =
      RunAll("LayerNormalization", Attrs({{"axis", int64_t{1}}, {"epsilon", 0.0f}}),
             {x, F({1, 2}, {2})}, 3);
  ExpectTensor(r[0], {2, 2, 2}, {-1, 2, -1, 2, -1, -2, 1, 2});
  ExpectTensor(r[1], {2, 1, 1}, {1, 2});
  ExpectTensor(r[2], {2, 1, 1}, {1, 1});
}

TEST(LayerNormTest, Float16KeepsFloat32Statistics) {
  std::vector<Tensor> r = RunAll("LayerNormalization", Attrs({{"epsilon", 0.0f}}),
                                 {F16({1, 3}, {1, 2}), F16({2, 2}, {2}), F16({0, 1}, {2})}, 3);
  ASSERT_EQ(r[0].dtype(), DType::kFloat16);
  ExpectTensor(r[0], {1, 2}, {-2, 3});
  ASSERT_EQ(r[1].dtype(), DType::kFloat32);
  ExpectTensor(r[1], {1, 1}, {2});
  ExpectTensor(r[2], {1, 1}, {1});
}

TEST(LayerNormTest, DefaultEpsilon) {
  Tensor y = Eval("LayerNormalization", {}, {F({1, 3}, {1, 2}), F({1, 1}, {2})});
  const float v = static_cast<float>(1 / std::sqrt(1 + 1e-5));
  ExpectTensor(y, {1, 2}, {-v, v});
}

TEST(LayerNormTest, LayerNormalization_rejects_bad_axis) {
  ExpectError("LayerNormalization", Attrs({{"axis", int64_t{2}}}), {Ones({2, 4}), Ones({4})},
              StatusCode::kInvalidArgument, {"axis 2 is out of range [-2, 1]"});
}

TEST(LayerNormTest, LayerNormalization_rejects_scale_shape) {
  ExpectError("LayerNormalization", {}, {Ones({2, 4}), Ones({3})}, StatusCode::kInvalidArgument,
              {"Scale 'in1' has shape 3, which does not broadcast to the normalized shape 4"});
}

TEST(LpNormTest, P2AndP1) {
  const Tensor x = F({3, 4, 1, 3}, {2, 2});
  ExpectTensor(Eval("LpNormalization", {}, {x}), {2, 2},
               {0.6f, 0.8f, static_cast<float>(1 / std::sqrt(10.0)),
                static_cast<float>(3 / std::sqrt(10.0))});
  ExpectTensor(Eval("LpNormalization", Attrs({{"p", int64_t{1}}, {"axis", int64_t{0}}}), {x}),
               {2, 2}, {0.75, 4 / 7.0f, 0.25, 3 / 7.0f});
}

TEST(LpNormTest, ZeroSliceStaysZero) {
  ExpectTensor(Eval("LpNormalization", {}, {F({0, 0, 0, 5}, {2, 2})}), {2, 2}, {0, 0, 0, 1});
}

TEST(LpNormTest, LpNormalization_rejects_p3) {
  ExpectError("LpNormalization", Attrs({{"p", int64_t{3}}}), {Ones({2, 2})},
              StatusCode::kInvalidArgument, {"p 3 must be 1 or 2"});
}

TEST(MvnTest, DefaultAxes) {
  // Per channel over N, H, W: c0 = {1, 3, 5, 7} (mean 4, std sqrt(5)),
  // c1 = {2, 2, 2, 2} (zero deviation stays zero).
  const Tensor x = F({1, 3, 2, 2, 5, 7, 2, 2}, {2, 2, 1, 2});
  const float s = static_cast<float>(std::sqrt(5.0));
  ExpectTensor(Eval("MeanVarianceNormalization", {}, {x}), {2, 2, 1, 2},
               {-3 / s, -1 / s, 0, 0, 1 / s, 3 / s, 0, 0});
}

TEST(MvnTest, CustomAxes) {
  const Tensor x = F({1, 3, 10, 30}, {2, 2});
  ExpectTensor(Eval("MeanVarianceNormalization", Attrs({{"axes", Ints{1}}}), {x}), {2, 2},
               {-1, 1, -1, 1});
}

TEST(MvnTest, MeanVarianceNormalization_rejects_duplicate_axes) {
  ExpectError("MeanVarianceNormalization", Attrs({{"axes", Ints{1, -1}}}), {Ones({2, 2})},
              StatusCode::kInvalidArgument, {"axes [1,-1] names axis 1 twice"});
}

TEST(MvnTest, MeanVarianceNormalization_rejects_default_axes_on_rank_2) {
  ExpectError("MeanVarianceNormalization", {}, {Ones({2, 2})}, StatusCode::kInvalidArgument,
              {"axes entry 2 is out of range"});
}

TEST(LrnTest, OddSize) {
  // size 3, alpha / size = 1, beta 1, bias 1: y_c = x_c / (1 + sum of squares
  // of channels c-1..c+1).
  Tensor y =
      Eval("LRN", Attrs({{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}}),
           {F({1, 2, 3}, {1, 3, 1, 1})});
  ExpectTensor(y, {1, 3, 1, 1}, {1 / 6.0f, 2 / 15.0f, 3 / 14.0f});
}

TEST(LrnTest, EvenSizeLeansUp) {
  // size 2: channels c..c+1.
  Tensor y =
      Eval("LRN", Attrs({{"size", int64_t{2}}, {"alpha", 2.0f}, {"beta", 1.0f}, {"bias", 1.0f}}),
           {F({1, 2, 3}, {1, 3, 1})});
  ExpectTensor(y, {1, 3, 1}, {1 / 6.0f, 2 / 14.0f, 3 / 10.0f});
}

TEST(LrnTest, DefaultAlphaBeta) {
  Tensor y = Eval("LRN", Attrs({{"size", int64_t{1}}}), {F({2}, {1, 1, 1})});
  ExpectTensor(y, {1, 1, 1}, {static_cast<float>(2 / std::pow(1 + 1e-4 * 4, 0.75))});
}

TEST(LrnTest, LRN_rejects_missing_size) {
  ExpectError("LRN", {}, {Ones({1, 3, 2})}, StatusCode::kInvalidArgument,
              {"attribute size is required"});
}

// ---- Registry ----------------------------------------------------------------

TEST(NnRegistryTest, AllOpsAreOpaque) {
  for (const char* op :
       {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool",
        "GlobalMaxPool", "GlobalLpPool", "BatchNormalization", "InstanceNormalization",
        "LayerNormalization", "LpNormalization", "MeanVarianceNormalization", "LRN"}) {
    const OpSchema* s = OpRegistry::Global().Find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kOpaque) << op;
  }
}

}  // namespace
}  // namespace tessel::ops
