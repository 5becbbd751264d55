// The transcendental approximations against exact values, over a dense sample
// of every float bit pattern (about one in 4093; bench/snippets/approx_error
// sweeps all 2^32 and docs/benchmarks.md records the figures). The bounds
// below are the documented maxima of x86_math.cc.
#include "snippets/approx_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "snippets/test_util.h"

namespace tessel::snippets {
namespace {

struct Bound {
  double ulp;      // against the exact result, normal results
  double rel_eps;  // relative, in FLT_EPSILON
};

// The maxima over all 2^32 inputs (docs/benchmarks.md), rounded up.
const std::map<std::string, Bound> kBounds = {
    {"exp", {1.02, 0.72}},  {"log", {0.84, 0.70}},     {"erf", {1.92, 1.06}},
    {"tanh", {1.34, 1.20}}, {"sigmoid", {2.42, 1.50}}, {"expm1", {0.87, 0.74}},
};
constexpr uint64_t kStride = 4093;

class ApproxErrorTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaSupported(GetParam())) {
      GTEST_SKIP() << "skipped: this CPU does not support " << IsaName(GetParam());
    }
  }
};

TEST_P(ApproxErrorTest, Every_function_stays_within_its_documented_bound) {
  for (const std::string& f : ApproxFunctions()) {
    const ApproxError e = MeasureApproxError(f, GetParam(), kStride, 12345);
    const Bound& b = kBounds.at(f);
    EXPECT_GT(e.inputs, 500000) << f;
    EXPECT_LE(e.max_ulp, b.ulp) << f << " at x = " << e.max_ulp_at;
    EXPECT_LE(e.max_rel_eps, b.rel_eps) << f;
    EXPECT_LE(e.max_abs_subnormal, 1e-44) << f;
    EXPECT_EQ(e.special_mismatches, 0) << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ApproxErrorTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

TEST(ApproxError, Avx2_and_avx512_compute_identical_bits) {
  if (!IsaSupported(Isa::kAvx512)) GTEST_SKIP() << "skipped: this CPU does not support avx512";
  std::mt19937 rng(3);
  for (const char* op : {"Exp", "Log", "Erf", "Tanh", "Sigmoid", "Elu", "Selu"}) {
    testing::BodyBuilder b;
    b.Output(b.Op(op, {b.Input("x", {4099})}));
    Tensor x(DType::kFloat32, {4099});
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const uint32_t bits = static_cast<uint32_t>(rng());
      std::memcpy(&x.data<float>()[i], &bits, 4);
    }
    const auto a = testing::RunSnippet(b.graph(), {x}, Isa::kAvx2);
    const auto z = testing::RunSnippet(b.graph(), {x}, Isa::kAvx512);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(z.size(), 1u);
    EXPECT_EQ(std::memcmp(a[0].raw_data(), z[0].raw_data(), a[0].size_bytes()), 0) << op;
  }
}

// GeLU as the transformer's exporters write it: its erf runs as interleaved
// copies (x86_math.cc) next to the other ops' copies, four on AVX-512 with
// one Horner chain, two on AVX2 with two chains; both must give the same
// bits, and on a row long enough for the unrolled loop, the single-vector
// loop and the scalar tail.
TEST(ApproxError, Gelu_chain_is_identical_on_avx2_and_avx512) {
  if (!IsaSupported(Isa::kAvx512)) GTEST_SKIP() << "skipped: this CPU does not support avx512";
  std::mt19937 rng(5);
  testing::BodyBuilder b;
  ir::Value* x = b.Input("x", {4099});
  ir::Value* erf = b.Op("Erf", {b.Op("Div", {x, b.Scalar(1.41421356f)})});
  b.Output(b.Op("Mul", {b.Op("Mul", {x, b.Op("Add", {erf, b.Scalar(1.0f)})}), b.Scalar(0.5f)}));
  const Tensor in = testing::RandomTensor(DType::kFloat32, {4099}, rng, -6, 6);
  const auto a = testing::RunSnippet(b.graph(), {in}, Isa::kAvx2, 4099);
  const auto z = testing::RunSnippet(b.graph(), {in}, Isa::kAvx512, 4099);
  const auto want = testing::RunReference(b.graph(), {in});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(std::memcmp(a[0].raw_data(), z[0].raw_data(), a[0].size_bytes()), 0);
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    const float w = want[0].data<float>()[i], g = z[0].data<float>()[i];
    if (std::isnan(w) || std::isinf(w)) {
      EXPECT_EQ(std::isnan(g), std::isnan(w)) << "x = " << in.data<float>()[i];
      EXPECT_EQ(std::isinf(g) ? g : 0.0f, std::isinf(w) ? w : 0.0f)
          << "x = " << in.data<float>()[i];
    } else {
      EXPECT_NEAR(g, w, 1e-6 * (1 + std::fabs(w))) << "x = " << in.data<float>()[i];
    }
  }
}

}  // namespace
}  // namespace tessel::snippets
