// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on small
// hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

AttributeMap Reduce(const char* reduction) {
  return Attrs({{"reduction", std::string(reduction)}});
}

// Log-probabilities of two samples over three classes; targets 2 and 0 pick
// -3 and -4.
Tensor LogP() { return F32({-1, -2, -3, -4, -5, -6}, {2, 3}); }
Tensor Target() { return I64({2, 0}, {2}); }

TEST(NegativeLogLikelihoodLoss, Reductions_without_weights) {
  Tensor none = Run1("NegativeLogLikelihoodLoss", Reduce("none"), {LogP(), Target()});
  EXPECT_EQ(none.shape(), (Shape{2}));
  EXPECT_THAT(Doubles(none), ElementsAre(3, 4));
  Tensor sum = Run1("NegativeLogLikelihoodLoss", Reduce("sum"), {LogP(), Target()});
  EXPECT_EQ(sum.shape(), Shape{});
  EXPECT_THAT(Doubles(sum), ElementsAre(7));
  // mean is the default.
  EXPECT_THAT(Doubles(Run1("NegativeLogLikelihoodLoss", {}, {LogP(), Target()})), ElementsAre(3.5));
}

TEST(NegativeLogLikelihoodLoss, Weights_scale_and_mean_divides_by_their_sum) {
  Tensor w = F32({1, 2, 3}, {3});
  EXPECT_THAT(Doubles(Run1("NegativeLogLikelihoodLoss", Reduce("none"), {LogP(), Target(), w})),
              ElementsAre(9, 4));
  EXPECT_THAT(Doubles(Run1("NegativeLogLikelihoodLoss", Reduce("sum"), {LogP(), Target(), w})),
              ElementsAre(13));
  // (3 * 3 + 1 * 4) / (3 + 1).
  EXPECT_THAT(Doubles(Run1("NegativeLogLikelihoodLoss", Reduce("mean"), {LogP(), Target(), w})),
              ElementsAre(3.25));
}

TEST(NegativeLogLikelihoodLoss, Ignore_index_drops_elements_from_loss_and_mean) {
  AttributeMap attrs = Attrs({{"reduction", std::string("none")}, {"ignore_index", int64_t{0}}});
  EXPECT_THAT(Doubles(Run1("NegativeLogLikelihoodLoss", attrs, {LogP(), Target()})),
              ElementsAre(3, 0));
  attrs.Set("reduction", std::string("mean"));
  EXPECT_THAT(Doubles(Run1("NegativeLogLikelihoodLoss", attrs, {LogP(), Target()})),
              ElementsAre(3));
  EXPECT_THAT(
      Doubles(Run1("NegativeLogLikelihoodLoss", attrs, {LogP(), Target(), F32({1, 2, 3}, {3})})),
      ElementsAre(3));
  // An ignore_index outside the classes is allowed; every element ignored
  // leaves the mean 0 / 0.
  attrs.Set("ignore_index", int64_t{-1});
  Tensor all = Run1("NegativeLogLikelihoodLoss", attrs, {LogP(), I32({-1, -1}, {2})});
  EXPECT_TRUE(std::isnan(all.GetAsDouble(0)));
}

TEST(NegativeLogLikelihoodLoss, Spatial_dimensions_follow_the_class_axis) {
  // N=1, C=2, d=2: class 0 holds -1, -2 and class 1 holds -3, -4.
  Tensor x = F64({-1, -2, -3, -4}, {1, 2, 2});
  Tensor out = Run1("NegativeLogLikelihoodLoss", Reduce("none"), {x, I64({1, 0}, {1, 2})});
  EXPECT_EQ(out.dtype(), DType::kFloat64);
  EXPECT_EQ(out.shape(), (Shape{1, 2}));
  EXPECT_THAT(Doubles(out), ElementsAre(3, 2));
}

TEST(NegativeLogLikelihoodLoss, NegativeLogLikelihoodLoss_rejects_bad_shapes_and_targets) {
  Status s = RunError("NegativeLogLikelihoodLoss", {}, {LogP(), I64({0, 0, 0}, {3})});
  EXPECT_EQ(s.message(),
            "NegativeLogLikelihoodLoss 'node': target 'in1' has shape 3; expected 2 for input "
            "shape 2x3");
  s = RunError("NegativeLogLikelihoodLoss", {}, {LogP(), Target(), F32({1, 2}, {2})});
  EXPECT_EQ(s.message(),
            "NegativeLogLikelihoodLoss 'node': weight 'in2' has shape 2; expected 3 (one per "
            "class)");
  s = RunError("NegativeLogLikelihoodLoss", Reduce("max"), {LogP(), Target()});
  EXPECT_EQ(s.message(),
            "NegativeLogLikelihoodLoss 'node': reduction 'max' is not one of none, sum, mean");
  s = RunError("NegativeLogLikelihoodLoss", {}, {F32({1, 2}, {2}), I64({0}, {1})});
  EXPECT_EQ(s.message(),
            "NegativeLogLikelihoodLoss 'node': input 'in0' has shape 2; expected rank >= 2 (N x C "
            "x d1 ... dk)");
  s = RunError("NegativeLogLikelihoodLoss", {}, {LogP(), I64({3, 0}, {2})});
  EXPECT_EQ(s.message(),
            "NegativeLogLikelihoodLoss 'node': target class 3 at element 0 is out of range [0, 3)");
}

TEST(SoftmaxCrossEntropyLoss, Loss_and_log_prob) {
  // Row 0: four equal scores, log-probability -ln 4 each. Row 1: exp sums to
  // 3 + 5 = 8, so class 3 has log-probability ln 5 - ln 8.
  Tensor scores = F32({1, 1, 1, 1, 0, 0, 0, std::log(5.0f)}, {2, 4});
  std::vector<Tensor> out =
      RunAll("SoftmaxCrossEntropyLoss", Reduce("none"), {scores, I64({2, 3}, {2})}, 2);
  EXPECT_THAT(Doubles(out[0]),
              Pointwise(DoubleNear(1e-6), std::vector<double>{std::log(4.0), std::log(1.6)}));
  const double q = -std::log(4.0), e = -std::log(8.0);
  EXPECT_EQ(out[1].shape(), (Shape{2, 4}));
  EXPECT_THAT(Doubles(out[1]), Pointwise(DoubleNear(1e-6), std::vector<double>{q, q, q, q, e, e, e,
                                                                               std::log(0.625)}));
  Tensor mean = Run1("SoftmaxCrossEntropyLoss", {}, {scores, I64({2, 3}, {2})});
  EXPECT_NEAR(mean.GetAsDouble(0), std::log(6.4) / 2, 1e-6);
}

TEST(SoftmaxCrossEntropyLoss, Large_scores_do_not_overflow) {
  Tensor out =
      Run1("SoftmaxCrossEntropyLoss", Reduce("sum"), {F32({1000, 0}, {1, 2}), I32({1}, {1})});
  EXPECT_NEAR(out.GetAsDouble(0), 1000, 1e-3);
}

TEST(SoftmaxCrossEntropyLoss, Weights_and_ignore_index_as_in_the_likelihood_loss) {
  // Equal scores: every loss is ln 3 before weighting.
  Tensor scores = F32({0, 0, 0, 0, 0, 0, 0, 0, 0}, {3, 3});
  AttributeMap attrs = Attrs({{"ignore_index", int64_t{1}}});
  Tensor out =
      Run1("SoftmaxCrossEntropyLoss", attrs, {scores, I64({0, 1, 2}, {3}), F32({1, 5, 3}, {3})});
  EXPECT_NEAR(out.GetAsDouble(0), std::log(3.0), 1e-6);
  attrs.Set("reduction", std::string("sum"));
  out = Run1("SoftmaxCrossEntropyLoss", attrs, {scores, I64({0, 1, 2}, {3}), F32({1, 5, 3}, {3})});
  EXPECT_NEAR(out.GetAsDouble(0), 4 * std::log(3.0), 1e-6);
}

TEST(SoftmaxCrossEntropyLoss, SoftmaxCrossEntropyLoss_rejects_integer_scores) {
  Status s = RunError("SoftmaxCrossEntropyLoss", {}, {I64({1, 2}, {1, 2}), I64({0}, {1})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "SoftmaxCrossEntropyLoss 'node': input 'in0' has dtype int64; supported: float32, "
            "float16, bfloat16, float64");
}

}  // namespace
}  // namespace tessel::ops
