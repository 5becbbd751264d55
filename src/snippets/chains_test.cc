// Property test: random fused chains — random domains up to 6D, inputs
// broadcast along random dimensions, random ops over random operands
// (values, scalar immediates, shared subexpressions), one or two outputs —
// run on every code path against the reference kernels. Chains of exact ops
// must match bit for bit; chains with transcendentals within a tolerance
// that covers their documented error after a few arithmetic steps.
#include <gtest/gtest.h>

#include <random>

#include "snippets/test_util.h"

namespace tessel::snippets {
namespace {

using testing::Attrs;
using testing::BodyBuilder;

struct Chain {
  std::unique_ptr<ir::Graph> body;
  std::vector<Tensor> inputs;
};

Shape RandomDomain(std::mt19937& rng) {
  static const int64_t kDims[] = {1, 2, 3, 5, 7, 8, 9, 16, 17, 33};
  const int rank = rng() % 10 == 0 ? 6 : 1 + static_cast<int>(rng() % 4);
  Shape s;
  for (int i = 0; i < rank; ++i) {
    s.push_back(kDims[rng() % std::size(kDims)]);
    if (NumElements(s) > 3000) s.back() = 1;
  }
  return s;
}

// The domain with random dimensions broadcast (1) and leading ones dropped.
Shape BroadcastOf(const Shape& domain, std::mt19937& rng) {
  Shape s = domain;
  for (int64_t& d : s) {
    if (rng() % 3 == 0) d = 1;
  }
  while (!s.empty() && s.front() == 1 && rng() % 2) s.erase(s.begin());
  return s;
}

Chain RandomChain(uint32_t seed, bool transcendentals) {
  std::mt19937 rng(seed);
  BodyBuilder b;
  const Shape domain = RandomDomain(rng);
  Chain c;
  std::vector<ir::Value*> pool;
  const int num_inputs = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < num_inputs; ++i) {
    const Shape s = i == 0 ? domain : BroadcastOf(domain, rng);
    pool.push_back(b.Input("in" + std::to_string(i), s));
    c.inputs.push_back(testing::RandomTensor(DType::kFloat32, s, rng, -3, 3, !transcendentals));
  }
  auto pick = [&] { return pool[rng() % pool.size()]; };
  auto operand = [&] {
    return rng() % 4 == 0 ? b.Scalar(static_cast<float>(rng() % 9) - 4.5f) : pick();
  };
  static const char* kBinary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  static const char* kUnary[] = {"Relu", "Abs", "Neg", "Floor", "HardSwish", "Softsign"};
  static const char* kSmooth[] = {"Exp", "Tanh", "Sigmoid", "Erf"};
  const int num_ops = 3 + static_cast<int>(rng() % 10);
  for (int k = 0; k < num_ops; ++k) {
    ir::Value* v = nullptr;
    switch (rng() % 7) {
      case 0:
      case 1:
      case 2:
        // Division by values near zero would amplify ulp differences in
        // the transcendental chains.
        v = b.Op(kBinary[rng() % (transcendentals ? 3 : 6)], {pick(), operand()});
        break;
      case 3:
        v = transcendentals ? b.Op(kSmooth[rng() % 4], {pick()})
                            : b.Op(kUnary[rng() % std::size(kUnary)], {pick()});
        break;
      case 4:
        v = b.Op("Clip", {pick(), b.Scalar(-1.5f), b.Scalar(2.0f)});
        break;
      case 5:
        v = b.Op("LeakyRelu", {pick()}, Attrs({{"alpha", 0.25f}}));
        break;
      default:
        v = b.Op("Where", {b.Op("Greater", {pick(), operand()}), pick(), operand()});
        break;
    }
    pool.push_back(v);
  }
  // Outputs span the domain: the last value plus the full-shape input, and
  // sometimes another value that happens to span it.
  b.Output(b.Op("Add", {pool.back(), pool.front()}));
  for (ir::Value* v : pool) {
    if (v->shape == domain && v != pool.front() && rng() % 3 == 0) {
      b.Output(v);
      break;
    }
  }
  c.body = b.Take();
  return c;
}

class RandomChains : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaSupported(GetParam())) {
      GTEST_SKIP() << "skipped: this CPU does not support " << IsaName(GetParam());
    }
  }
};

TEST_P(RandomChains, Exact_ops_match_the_reference_bit_for_bit) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    const Chain c = RandomChain(seed, false);
    const auto want = testing::RunReference(*c.body, c.inputs);
    const auto got = testing::RunSnippet(*c.body, c.inputs, GetParam(), 64 + seed % 7 * 64);
    ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
    for (size_t i = 0; i < got.size(); ++i) {
      testing::ExpectClose(got[i], want[i], 0, 0, "seed " + std::to_string(seed));
    }
    if (HasFailure()) return;
  }
}

TEST_P(RandomChains, Chains_with_transcendentals_match_within_tolerance) {
  const bool exact = GetParam() == Isa::kInterpreter;
  for (uint32_t seed = 1000; seed < 1150; ++seed) {
    const Chain c = RandomChain(seed, true);
    const auto want = testing::RunReference(*c.body, c.inputs);
    const auto got = testing::RunSnippet(*c.body, c.inputs, GetParam());
    ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape());
      const float* g = got[i].data<float>();
      const float* w = want[i].data<float>();
      for (int64_t k = 0; k < got[i].num_elements(); ++k) {
        if (exact) {
          ASSERT_TRUE(testing::Close(g[k], w[k], 0, 0)) << "seed " << seed << " element " << k;
        } else {
          ASSERT_NEAR(g[k], w[k], 2e-5 * (1 + std::fabs(w[k])))
              << "seed " << seed << " element " << k;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, RandomChains,
                         ::testing::Values(Isa::kInterpreter, Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace tessel::snippets
