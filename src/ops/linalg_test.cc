// Det on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

TEST(Det, Two_by_two_and_batches) {
  EXPECT_THAT(Doubles(Run1("Det", {}, {F32({1, 2, 3, 4}, {2, 2})})),
              Pointwise(DoubleNear(1e-9), std::vector<double>{-2}));
  Tensor y = Run1("Det", {}, {F32({3, -4}, {2, 1, 1})});
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_THAT(Doubles(y), ElementsAre(3, -4));
}

TEST(Det, Pivoting_row_swaps_and_singular_matrices) {
  // A zero first pivot needs a row swap, which flips the sign: -(1 * 1 * 2).
  Tensor swap = F64({0, 1, 0, 1, 0, 0, 0, 0, 2}, {3, 3});
  EXPECT_THAT(Doubles(Run1("Det", {}, {swap})), Pointwise(DoubleNear(1e-12), {-2.0}));
  EXPECT_THAT(Doubles(Run1("Det", {}, {F32({1, 2, 2, 4}, {2, 2})})), ElementsAre(0));
  EXPECT_THAT(Doubles(Run1("Det", {}, {F32({2, 0, 1, 1, 3, 2, 1, 1, 2}, {3, 3})})),
              Pointwise(DoubleNear(1e-9), std::vector<double>{6}));
}

TEST(Det, Det_rejects_non_square_input) {
  Status s = RunError("Det", {}, {F32({1, 2}, {1, 2})});
  EXPECT_EQ(s.message(), "Det 'node': input shape 1x2 must end in a square matrix (... x M x M)");
  s = RunError("Det", {}, {I64({1}, {1, 1})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace tessel::ops
