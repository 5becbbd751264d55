// Every snippet op, on every code path (AVX-512, AVX2, interpreter), against
// the reference kernels of src/ops: on shapes that exercise each broadcast
// pattern (row, column, outer product, channel, scalar tensor, 6D) and tail
// lengths around the vector widths, with special values in the data.
//
// Tolerance: exact (NaN matches NaN) for everything but the transcendentals
// and PowerStatic, which may differ from the reference by a few ulp (see
// x86_math.cc for the error against exact values). The interpreter is always
// exact.
#include "snippets/snippet_kernel.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "snippets/test_util.h"

namespace tessel::snippets {
namespace {

using testing::Attrs;
using testing::BodyBuilder;

// Tolerance of JIT results against the reference kernels, in ulp of the
// reference result (absolute 1e-37 below that: subnormal results).
constexpr double kTranscendentalUlps = 4;
constexpr double kPowerUlps = 3;
constexpr double kSubnormalAtol = 1e-37;

const std::vector<std::vector<Shape>> kUnaryShapes = {
    {{1}},  {{7}},  {{8}},       {{15}},   {{16}},
    {{17}}, {{33}}, {{3, 5, 7}}, {{2001}}, {{2, 1, 3, 1, 2, 9}}};

const std::vector<std::vector<Shape>> kBinaryShapes = {
    {{1}, {1}},
    {{7}, {7}},
    {{31}, {31}},
    {{33}, {33}},
    {{3, 17}, {17}},  // rows broadcast
    {{17}, {3, 17}},
    {{3, 17}, {3, 1}},  // innermost broadcast: BroadcastLoad
    {{3, 1}, {3, 17}},
    {{4, 1}, {1, 19}},          // outer product
    {{2, 3, 5, 7}, {3, 1, 1}},  // per channel
    {{}, {37}},                 // a scalar tensor
    {{37}, {}},
    {{2, 1, 3, 1, 2, 9}, {1, 2, 1, 4, 1, 1}},  // 6D
    {{2, 1500}, {1500}},                       // several inner blocks per row
    {{1500, 2}, {1500, 1}},                    // many short rows, grouped
};

const std::vector<std::vector<Shape>> kTernaryShapes = {
    {{5, 1}, {1, 7}, {5, 7}},
    {{3, 17}, {17}, {3, 1}},
    {{33}, {33}, {33}},
    {{2, 3, 4}, {}, {4}},
};

class SnippetOps : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaSupported(GetParam())) {
      GTEST_SKIP() << "skipped: this CPU does not support " << IsaName(GetParam());
    }
  }

  // Builds out = op(inputs...) for every shape list, runs both ways, compares.
  void Check(const std::string& op, const std::vector<std::vector<Shape>>& shape_lists,
             std::vector<DType> dtypes, AttributeMap attrs = {}, double ulps = 0, int opset = 17,
             float lo = -4, float hi = 4) {
    const bool exact = ulps == 0 || GetParam() == Isa::kInterpreter;
    std::mt19937 rng(1234);
    for (const auto& shapes : shape_lists) {
      BodyBuilder b(opset);
      std::vector<ir::Value*> ins;
      std::vector<Tensor> data;
      for (size_t i = 0; i < shapes.size(); ++i) {
        const DType dt = dtypes[std::min(i, dtypes.size() - 1)];
        ins.push_back(b.Input("in" + std::to_string(i), shapes[i], dt));
        data.push_back(testing::RandomTensor(dt, shapes[i], rng, lo, hi));
      }
      b.Output(b.Op(op, ins, attrs));
      const ir::Graph& body = b.graph();
      const std::string what = op + " on " + ShapeList(shapes) + " (" + IsaName(GetParam()) + ")";
      const auto want = testing::RunReference(body, data);
      const auto got = testing::RunSnippet(body, data, GetParam());
      ASSERT_EQ(got.size(), 1u) << what;
      testing::ExpectClose(got[0], want[0], exact ? 0 : ulps, exact ? 0 : kSubnormalAtol, what);
    }
  }

  // A unary op on a broadcast-loaded input, spread over the domain by a
  // product with ones: out = op(b) * x, b 19 wide or 5x1, x 5x19 of 1.0.
  void CheckOnBroadcast(const std::string& op, AttributeMap attrs = {}, double ulps = 0) {
    const bool exact = ulps == 0 || GetParam() == Isa::kInterpreter;
    std::mt19937 rng(99);
    for (const Shape& bshape : {Shape{19}, Shape{5, 1}}) {
      BodyBuilder b;
      ir::Value* x = b.Input("x", {5, 19});
      ir::Value* bias = b.Input("b", bshape);
      b.Output(b.Op("Mul", {b.Op(op, {bias}, attrs), x}));
      Tensor ones(DType::kFloat32, {5, 19});
      std::fill_n(ones.data<float>(), ones.num_elements(), 1.0f);
      const std::vector<Tensor> data = {ones, testing::RandomTensor(DType::kFloat32, bshape, rng)};
      const auto want = testing::RunReference(b.graph(), data);
      const auto got = testing::RunSnippet(b.graph(), data, GetParam());
      ASSERT_EQ(got.size(), 1u);
      testing::ExpectClose(got[0], want[0], exact ? 0 : ulps, exact ? 0 : kSubnormalAtol,
                           op + " on a broadcast " + ShapeToString(bshape));
    }
  }

  static std::string ShapeList(const std::vector<Shape>& shapes) {
    std::string s;
    for (const Shape& sh : shapes) s += (s.empty() ? "" : ", ") + ShapeToString(sh);
    return s;
  }
};

const DType kF32 = DType::kFloat32;
const DType kBool = DType::kBool;

TEST_P(SnippetOps, Arithmetic) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    Check(op, kBinaryShapes, {kF32});
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) Check(op, kTernaryShapes, {kF32});
  Check("Sum", kUnaryShapes, {kF32});
}

TEST_P(SnippetOps, Comparisons_and_logic) {
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    Check(op, kBinaryShapes, {kF32});
  }
  for (const char* op : {"And", "Or", "Xor", "Equal"}) Check(op, kBinaryShapes, {kBool});
  Check("Not", kUnaryShapes, {kBool});
  Check("IsNaN", kUnaryShapes, {kF32});
  Check("Where", kTernaryShapes, {kBool, kF32});
}

TEST_P(SnippetOps, Activations) {
  for (const char* op : {"Relu", "Abs", "Neg", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round",
                         "Softsign", "HardSwish"}) {
    Check(op, kUnaryShapes, {kF32});
    CheckOnBroadcast(op);
  }
  Check("LeakyRelu", kUnaryShapes, {kF32}, Attrs({{"alpha", 0.1f}}));
  Check("HardSigmoid", kUnaryShapes, {kF32}, Attrs({{"alpha", 0.3f}, {"beta", 0.4f}}));
  Check("HardSigmoid", kUnaryShapes, {kF32});
  Check("ThresholdedRelu", kUnaryShapes, {kF32}, Attrs({{"alpha", 0.5f}}));
  // PRelu's slope broadcasts to X only.
  std::vector<std::vector<Shape>> prelu;
  for (const auto& s : kBinaryShapes) {
    bool to_x = s[1].size() <= s[0].size();
    for (size_t i = 1; i <= s[1].size() && to_x; ++i) {
      const int64_t d = s[1][s[1].size() - i];
      to_x = d == 1 || d == s[0][s[0].size() - i];
    }
    if (to_x) prelu.push_back(s);
  }
  Check("PRelu", prelu, {kF32});
}

TEST_P(SnippetOps, Clip_in_every_opset_form) {
  std::mt19937 rng(5);
  for (int variant = 0; variant < 4; ++variant) {
    BodyBuilder b(variant == 3 ? 6 : 13);
    ir::Value* x = b.Input("x", {37});
    std::vector<ir::Value*> ins = {x};
    AttributeMap attrs;
    if (variant == 0) ins = {x, b.Scalar(-0.5f), b.Scalar(1.5f)};
    if (variant == 1) ins = {x, nullptr, b.Scalar(0.25f)};
    if (variant == 2) ins = {x, b.Scalar(6.0f, {1})};
    if (variant == 3) attrs = Attrs({{"min", -1.0f}});  // max defaults to FLT_MAX
    b.Output(b.Op("Clip", ins, attrs));
    const std::vector<Tensor> data = {testing::RandomTensor(kF32, {37}, rng)};
    const auto got = testing::RunSnippet(b.graph(), data, GetParam());
    ASSERT_EQ(got.size(), 1u);
    testing::ExpectClose(got[0], testing::RunReference(b.graph(), data)[0], 0, 0,
                         "Clip variant " + std::to_string(variant));
  }
}

TEST_P(SnippetOps, Pow_with_a_constant_integer_exponent_is_PowerStatic) {
  std::mt19937 rng(6);
  for (float p : {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, -1.0f, -2.0f, -3.0f, -4.0f}) {
    BodyBuilder b;
    ir::Value* x = b.Input("x", {53});
    b.Output(b.Op("Pow", {x, b.Scalar(p)}));
    const std::vector<Tensor> data = {testing::RandomTensor(kF32, {53}, rng)};
    const bool exact = GetParam() == Isa::kInterpreter;
    testing::ExpectClose(testing::RunSnippet(b.graph(), data, GetParam())[0],
                         testing::RunReference(b.graph(), data)[0], exact ? 0 : kPowerUlps,
                         exact ? 0 : kSubnormalAtol, "Pow " + std::to_string(p));
  }
}

TEST_P(SnippetOps, Transcendentals) {
  for (const char* op : {"Exp", "Log", "Erf", "Tanh", "Sigmoid"}) {
    Check(op, kUnaryShapes, {kF32}, {}, kTranscendentalUlps);
    Check(op, {{{1000}}}, {kF32}, {}, kTranscendentalUlps, 17, -100, 100);
    CheckOnBroadcast(op, {}, kTranscendentalUlps);
  }
  Check("Log", {{{1000}}}, {kF32}, {}, kTranscendentalUlps, 17, 0, 1e-37f);
  Check("Elu", kUnaryShapes, {kF32}, Attrs({{"alpha", 0.7f}}), kTranscendentalUlps);
  Check("Elu", {{{1000}}}, {kF32}, {}, kTranscendentalUlps, 17, -1e-3f, 1e-3f);
  Check("Selu", kUnaryShapes, {kF32}, {}, kTranscendentalUlps);
  Check("Selu", kUnaryShapes, {kF32}, Attrs({{"alpha", 2.0f}, {"gamma", 0.5f}}),
        kTranscendentalUlps);
}

TEST_P(SnippetOps, Large_domains_stream_with_nontemporal_stores) {
  // A 2^18-element output passes a lowered threshold: the streaming variant
  // runs when rows are 64-byte aligned (the first two bodies) and the plain
  // one otherwise (the odd row length).
  std::mt19937 rng(7);
  for (const Shape& shape : {Shape{1 << 18}, Shape{64, 4096}, Shape{255, 1025}}) {
    BodyBuilder b;
    ir::Value* x = b.Input("x", shape);
    ir::Value* y = b.Input("y", {shape.back()});
    b.Output(b.Op("Relu", {b.Op("Add", {x, y})}));
    const std::vector<Tensor> data = {testing::RandomTensor(kF32, shape, rng),
                                      testing::RandomTensor(kF32, {shape.back()}, rng)};
    SnippetOptions options;
    options.isa = GetParam();
    options.nontemporal_threshold_bytes = 1 << 18;
    auto kernel = SnippetKernel::Compile(b.graph(), options);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    Tensor out(kF32, shape);
    const bool aligned_rows = shape.back() % 16 == 0;
    EXPECT_EQ((*kernel)->Streams({out.raw_data()}), aligned_rows && GetParam() != Isa::kInterpreter)
        << ShapeToString(shape);
    (*kernel)->Run({data[0].raw_data(), data[1].raw_data()}, {out.raw_data()},
                   testing::ReverseParallelFor);
    testing::ExpectClose(out, testing::RunReference(b.graph(), data)[0], 0, 0,
                         "Add+Relu on " + ShapeToString(shape));
  }
}

TEST_P(SnippetOps, Any_nonzero_bool_byte_is_true) {
  // Tensors from outside may hold bytes other than 0 and 1 for true.
  BodyBuilder b;
  ir::Value* c = b.Input("c", {37}, kBool);
  ir::Value* x = b.Input("x", {37});
  b.Output(b.Op("Where", {c, x, b.Scalar(-1.0f)}));
  b.Output(b.Op("And", {c, c}));
  Tensor cond(kBool, {37});
  Tensor xs(kF32, {37});
  auto* bytes = static_cast<uint8_t*>(cond.raw_data());
  for (int i = 0; i < 37; ++i) {
    bytes[i] = static_cast<uint8_t>(i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : 2 + 50 * (i % 5));
    xs.data<float>()[i] = static_cast<float>(i);
  }
  const auto got = testing::RunSnippet(b.graph(), {cond, xs}, GetParam());
  ASSERT_EQ(got.size(), 2u);
  for (int i = 0; i < 37; ++i) {
    EXPECT_EQ(got[0].data<float>()[i], i % 3 == 0 ? -1.0f : static_cast<float>(i)) << i;
    EXPECT_EQ(static_cast<const uint8_t*>(got[1].raw_data())[i], i % 3 == 0 ? 0 : 1) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, SnippetOps,
                         ::testing::Values(Isa::kInterpreter, Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

TEST(SnippetKernel, Compile_rejects_a_body_whose_output_does_not_span_the_domain) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {4, 8});
  ir::Value* y = b.Input("y", {8});
  b.Output(b.Op("Add", {x, y}));
  b.Output(b.Op("Relu", {y}));
  auto kernel = SnippetKernel::Compile(b.graph());
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("every output must span"), std::string::npos)
      << kernel.status().message();
}

}  // namespace
}  // namespace tessel::snippets
